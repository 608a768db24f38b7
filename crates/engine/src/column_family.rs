//! [`ColumnFamily`]: a handle naming one column family of a database (RocksDB's
//! `ColumnFamilyHandle`): its id, which write batches and MANIFEST edits carry, and its name.
//!
//! Families are created with `Db::create_column_family` (or at open, `Db::open_cf` with
//! `create_missing_column_families`), dropped with `Db::drop_column_family`, and found with
//! `Db::cf_handle`; each has its own memtables, versions, flushes and compactions, and its own
//! family-level options, over one WAL and one MANIFEST (see `db/cf_data.rs`). A handle keeps
//! its family's state: reads through it still work after the family is dropped (RocksDB's
//! rule); writes are refused. A handle of another database is refused by every call.
//!
//! A handle is cheap to clone (one `Arc`) and `Send + Sync`.

use std::any::Any;
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
#[derive(Clone)]
pub struct ColumnFamily {
    inner: Arc<Named>,
}

struct Named {
    id: u32,
    name: String,
    /// The database that handed the handle out and the family's state there (the database's
    /// own type, which only it reads); `None`: a handle made without a database (tests).
    state: Option<(u64, Arc<dyn Any + Send + Sync>)>,
}

impl std::fmt::Debug for ColumnFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnFamily")
            .field("id", &self.inner.id)
            .field("name", &self.inner.name)
            .finish()
    }
}

/// Two handles are equal when they name the same family of the same database.
impl PartialEq for ColumnFamily {
    fn eq(&self, other: &ColumnFamily) -> bool {
        let db = |c: &ColumnFamily| c.inner.state.as_ref().map(|s| s.0);
        self.inner.id == other.inner.id && self.inner.name == other.inner.name && {
            let (a, b) = (db(self), db(other));
            a.is_none() || b.is_none() || a == b
        }
    }
}

impl Eq for ColumnFamily {}

impl ColumnFamily {
    /// A handle of family `id` named `name` with no database (tests).
    #[cfg(test)]
    pub(crate) fn new(id: u32, name: impl Into<String>) -> ColumnFamily {
        ColumnFamily { inner: Arc::new(Named { id, name: name.into(), state: None }) }
    }

    /// The handle of family `id` named `name` of database `db_instance`, whose state there is
    /// `state`.
    pub(crate) fn with_state(
        id: u32,
        name: impl Into<String>,
        db_instance: u64,
        state: Arc<dyn Any + Send + Sync>,
    ) -> ColumnFamily {
        let named = Named { id, name: name.into(), state: Some((db_instance, state)) };
        ColumnFamily { inner: Arc::new(named) }
    }

    /// The database the handle came from and the family's state there, if any.
    pub(crate) fn state(&self) -> Option<(u64, &Arc<dyn Any + Send + Sync>)> {
        self.inner.state.as_ref().map(|(db, s)| (*db, s))
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

/// A column family to open, by name, with its options (RocksDB's `ColumnFamilyDescriptor`):
/// what [`crate::Db::open_cf`] takes. The family-level options are used (memtable size,
/// compaction, compression, blob files, merge operator, compaction filter, `num_levels`, and
/// a `block_cache` object of its own, RocksDB's rules); the database-wide ones (WAL, table
/// cache, background jobs, file system) come from the database's options.
#[derive(Clone, Debug)]
pub struct ColumnFamilyDescriptor {
    /// The family's name.
    pub name: String,
    /// Its options.
    pub options: crate::Options,
}

impl ColumnFamilyDescriptor {
    /// The family `name` with `options`.
    pub fn new(name: impl Into<String>, options: crate::Options) -> ColumnFamilyDescriptor {
        ColumnFamilyDescriptor { name: name.into(), options }
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
    }
}
