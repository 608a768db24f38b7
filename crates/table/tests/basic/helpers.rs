//! Helpers of the table tests: a catalog over a fresh database.

use talus_table::*;

pub(crate) fn open(dir: &std::path::Path) -> Catalog {
    let db = Db::open(dir, Options { create_if_missing: true, ..Default::default() }).unwrap();
    Catalog::open(db).unwrap()
}
