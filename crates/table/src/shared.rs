//! What the handles of one catalog share: [`CatalogInner`] (the storage engine, the registry of open
//! tables, the DDL lock, the commit clock and open transactions, the counters), each table's
//! [`TableShared`] (its metadata and write lock), and the catalog's key layout
//! ([`table_key`], [`index_range`]). Every other module of the crate imports this one and none
//! of it imports them: `catalog` does DDL, `table`/`txn` the handles, `write` the writes,
//! `scan`/`verify` the reads, `build` the index builds (no circle between them).
//!
//! Locks: see `catalog` (DDL, registry) and `write` (the per-table write lock).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use talus::WriteOptions;

use crate::keycodec::{prefix_successor, put_index_id};
use crate::meta::TableMeta;
use crate::stats::Counters;
use crate::storage::Storage;

/// Catalog keys start with index id 0; table records with `'t'` after it.
pub(crate) const TABLE_PREFIX: [u8; 5] = [0, 0, 0, 0, b't'];

/// The catalog record key of table `name`.
pub(crate) fn table_key(name: &str) -> Vec<u8> {
    let mut k = TABLE_PREFIX.to_vec();
    k.extend_from_slice(name.as_bytes());
    k
}

/// `[id prefix, successor)`: every key of index `id`.
pub(crate) fn index_range(id: u32) -> (Vec<u8>, Vec<u8>) {
    let mut lo = Vec::with_capacity(4);
    put_index_id(&mut lo, id);
    let hi = prefix_successor(&lo).unwrap_or_else(|| vec![0xFF; 5]);
    (lo, hi)
}

/// State shared by every handle of one catalog, on storage `S`.
pub(crate) struct CatalogInner<S: Storage> {
    pub db: S,
    pub tables: RwLock<HashMap<String, Arc<TableShared>>>,
    /// Serializes DDL and guards the next free index id.
    pub ddl: Mutex<u32>,
    pub stats: Counters,
    /// `WriteOptions` of table writes (DDL is always synced).
    pub write_options: WriteOptions,
    /// Commit clock: incremented after each table write lands (conflict detection).
    pub clock: AtomicU64,
    /// Begin clocks of open transactions (a multiset), to prune conflict history.
    pub active: Mutex<BTreeMap<u64, usize>>,
    /// Test hook: called by `create_index` at named points (see [`Catalog::set_build_hook`]).
    pub build_hook: Mutex<Option<BuildHook>>,
    /// This catalog's entry in the one-catalog-per-database registry.
    pub _registration: crate::open_catalogs::Registration,
}

/// A test hook for `create_index`; see [`Catalog::set_build_hook`].
pub type BuildHook = Arc<dyn Fn(&str) + Send + Sync>;

/// One table's shared state: its current metadata and its write lock.
pub(crate) struct TableShared {
    meta: RwLock<Arc<TableMeta>>,
    /// Serializes writers of this table (check + write), and DDL on it.
    pub lock: Mutex<WriteState>,
    pub dropped: AtomicBool,
}

/// What the write lock guards.
#[derive(Default)]
pub(crate) struct WriteState {
    /// Primary key -> commit clock of its last write, for conflict detection.
    pub recent: HashMap<Vec<u8>, u64>,
    /// While an index build runs: the last write (value, or `None` for a delete) of every key
    /// of a building index written meanwhile, replayed by the build's catch-up step.
    pub building_touched: Option<HashMap<Vec<u8>, Option<Vec<u8>>>>,
}

impl TableShared {
    pub(crate) fn new(meta: TableMeta) -> TableShared {
        TableShared {
            meta: RwLock::new(Arc::new(meta)),
            lock: Mutex::new(WriteState::default()),
            dropped: AtomicBool::new(false),
        }
    }
    /// The current metadata.
    pub(crate) fn meta(&self) -> Arc<TableMeta> {
        self.meta.read().clone()
    }
    /// Replaces the metadata (the caller holds the write lock).
    pub(crate) fn set_meta(&self, m: TableMeta) {
        *self.meta.write() = Arc::new(m);
    }
}
