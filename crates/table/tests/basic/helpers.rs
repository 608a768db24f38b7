//! Helpers of the table tests: a catalog over a fresh database of the test engine.

use talus_table::*;

use crate::common::{open_catalog, E};

pub(crate) fn open(dir: &std::path::Path) -> Catalog<E> {
    open_catalog(dir, Options::default())
}
