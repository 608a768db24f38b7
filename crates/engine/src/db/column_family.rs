//! `Db`'s column family calls (`crate::column_family` has the handle and what this build
//! supports): the `default` family's handle and the static listing of a database's families.
//! Takes no lock: the family set of an open database is fixed (`default` only).

use std::path::Path;

use super::Db;
use crate::column_family::{ColumnFamily, DEFAULT_COLUMN_FAMILY_NAME};
use crate::error::Result;
use crate::options::Options;

impl Db {
    /// The handle of the family named `name` (RocksDB's `GetColumnFamilyHandle`), `None` if the
    /// database has none of that name. Only `default` exists in this build.
    pub fn cf_handle(&self, name: &str) -> Option<ColumnFamily> {
        (name == DEFAULT_COLUMN_FAMILY_NAME).then(ColumnFamily::default_family)
    }

    /// The handle of the `default` family (RocksDB's `DefaultColumnFamily`).
    pub fn default_column_family(&self) -> ColumnFamily {
        ColumnFamily::default_family()
    }

    /// The names of the live column families of the database in `path`, `default` first
    /// (RocksDB's `DB::ListColumnFamilies`), read from its MANIFEST through `options.fs`;
    /// writes nothing and takes no LOCK, so it works beside an open handle. `NotFound` if there
    /// is no database there.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options { create_if_missing: true, ..Default::default() };
    /// talus::Db::open(dir.path(), opts.clone()).unwrap().close().unwrap();
    /// assert_eq!(talus::Db::list_column_families(dir.path(), &opts).unwrap(), ["default"]);
    /// ```
    pub fn list_column_families(path: impl AsRef<Path>, options: &Options) -> Result<Vec<String>> {
        crate::version::cf_edit::list_column_families(&*options.fs, path.as_ref())
    }
}
