//! [`ColumnFamily`]: a handle naming one column family of a database (RocksDB's
//! `ColumnFamilyHandle`): its id, which write batches and MANIFEST edits carry, and its name.
//!
//! What exists in this build (see `docs/rocksdb-differences.md`): the formats that carry a
//! family id (WAL batch records, `docs/format/wal.md` version 4; MANIFEST family records,
//! `docs/format/manifest.md`), the handle of the `default` family (id 0, where every existing
//! API writes), `Db::list_column_families`, and an open that refuses a database whose MANIFEST
//! holds other families. Creating and dropping families (per-family memtables, versions and
//! flushes) is not built yet: no handle of a family other than `default` can be obtained.
//!
//! A handle is cheap to clone (one `Arc`) and `Send + Sync`.

use std::sync::Arc;

/// The id of the `default` family: every write without a family goes there.
pub const DEFAULT_COLUMN_FAMILY_ID: u32 = 0;

/// The name of the family every database has (RocksDB's `kDefaultColumnFamilyName`).
pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

/// A handle naming one column family (see the module doc).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let opts = talus::Options { create_if_missing: true, ..Default::default() };
/// let db = talus::Db::open(dir.path(), opts).unwrap();
/// let cf = db.cf_handle("default").unwrap();
/// assert_eq!((cf.name(), cf.id()), ("default", 0));
/// let mut batch = talus::WriteBatch::new();
/// batch.put_cf(&cf, b"k", b"v");
/// db.write(batch, &talus::WriteOptions::default()).unwrap();
/// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
/// assert!(db.cf_handle("missing").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnFamily {
    inner: Arc<Named>,
}

#[derive(Debug, PartialEq, Eq)]
struct Named {
    id: u32,
    name: String,
}

impl ColumnFamily {
    /// A handle of family `id` named `name` (the database hands these out).
    pub(crate) fn new(id: u32, name: impl Into<String>) -> ColumnFamily {
        ColumnFamily { inner: Arc::new(Named { id, name: name.into() }) }
    }

    /// The `default` family's handle.
    pub(crate) fn default_family() -> ColumnFamily {
        ColumnFamily::new(DEFAULT_COLUMN_FAMILY_ID, DEFAULT_COLUMN_FAMILY_NAME)
    }

    /// The family's id (RocksDB's `GetID`): what WAL records and MANIFEST edits carry.
    pub fn id(&self) -> u32 {
        self.inner.id
    }

    /// The family's name (RocksDB's `GetName`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_cheap_send_sync_clones() {
        fn send_sync<T: Send + Sync + Clone>() {}
        send_sync::<ColumnFamily>();
        let a = ColumnFamily::new(3, "three");
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        assert_eq!((b.id(), b.name()), (3, "three"));
        assert_eq!(ColumnFamily::default_family().id(), DEFAULT_COLUMN_FAMILY_ID);
    }
}
