//! [`Catalog`]: the table definitions stored in the engine, the registry of open tables, and
//! DDL (create/drop table, drop index; create index is in `build`). The state the handles
//! share (`CatalogInner`, `TableShared`) and the key layout are in `shared`.
//!
//! Storage (docs/format/table-keys.md, "Catalog"): key `00 00 00 00 'n'` holds the next free
//! index id (u32 BE); key `00 00 00 00 't' + name` holds a table's record. Every DDL change is
//! one engine WriteBatch. Locks: `ddl` serializes DDL; `tables` (RwLock) guards the registry;
//! each table's write lock (see `write`) is taken after `ddl` when DDL changes a live table.
//! At open, an index still marked building (a crash interrupted `create_index`) is removed:
//! its key range deleted and its catalog entry dropped, in one batch; leftover build files in
//! `<db>/tmp` are deleted.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use talus::{Db, WriteOptions};

use crate::error::{Result, TableError};
use crate::keycodec::prefix_successor;
use crate::meta::{IndexState, TableMeta, FIRST_USER_ID};
use crate::shared::{index_range, table_key, BuildHook, CatalogInner, TableShared, TABLE_PREFIX};
use crate::stats::{Counters, TableStats};
use crate::storage::{Batch, Cursor, Range, Storage, Walk};
use crate::table::Table;
use crate::txn::Transaction;
use crate::{IndexDef, TableDef};

const NEXT_ID_KEY: [u8; 5] = [0, 0, 0, 0, b'n'];

/// Removes the run and SST files an interrupted `create_index` left in `<db>/tmp` (best effort).
fn remove_build_leftovers<S: Storage>(db: &S) {
    let fs = db.scratch_fs();
    let dir = db.dir().join("tmp");
    if let Ok(names) = fs.list_dir(&dir) {
        for n in names.iter().filter(|n| n.starts_with("talus-index-")) {
            let _ = fs.remove_file(&dir.join(n));
        }
    }
}

/// A database of tables on one storage engine `S` ([`Db`], Talus, unless named; see
/// [`crate::storage`]). Cheap to clone; `Send + Sync`.
pub struct Catalog<S: Storage = Db> {
    pub(crate) inner: Arc<CatalogInner<S>>,
}

impl<S: Storage> Clone for Catalog<S> {
    fn clone(&self) -> Self {
        Catalog { inner: self.inner.clone() }
    }
}

impl<S: Storage> std::fmt::Debug for Catalog<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Catalog({} at {})", S::NAME, self.inner.db.dir().display())
    }
}

impl<S: Storage> Catalog<S> {
    /// Loads the catalog stored in `db` (an empty one if none), dropping any index a crash left
    /// half built. Open one `Catalog` per database and clone it: the write locks that make
    /// uniqueness checks atomic live in the catalog, so a second `open` on the same database
    /// (any clone of its handle) fails with [`talus::Error::Busy`] while the first catalog (or
    /// a clone of it) lives. Table writes use the engine's default
    /// `WriteOptions` (WAL on, not synced per write); DDL is synced.
    pub fn open(db: S) -> Result<Catalog<S>> {
        Catalog::open_with(db, WriteOptions::default())
    }

    /// [`Catalog::open`] whose table writes (inserts, updates, deletes, commits) use
    /// `write_options` (`sync`, `disable_wal`); DDL stays synced.
    pub fn open_with(db: S, write_options: WriteOptions) -> Result<Catalog<S>> {
        let registration = crate::open_catalogs::register(db.instance(), db.dir())?;
        let next = match db.get_at(&NEXT_ID_KEY, &db.read_options(None))? {
            None => FIRST_USER_ID,
            Some(v) => match <[u8; 4]>::try_from(v.as_slice()) {
                Ok(a) => u32::from_be_bytes(a),
                Err(_) => {
                    return Err(TableError::corrupt(format!("next-id record of {} bytes", v.len())))
                }
            },
        };
        let mut tables = HashMap::new();
        let range = Range {
            lower: TABLE_PREFIX.to_vec(),
            upper: prefix_successor(&TABLE_PREFIX).unwrap_or_else(|| vec![0xFF; 6]),
            snapshot: None,
            fill_cache: true,
        };
        let mut records = Vec::new();
        let mut it = db.cursor(range, Walk::Forward);
        while it.valid() {
            let name =
                String::from_utf8(it.key().get(TABLE_PREFIX.len()..).unwrap_or(&[]).to_vec())
                    .map_err(|_| TableError::corrupt("catalog: table name is not UTF-8"))?;
            records.push((name, it.value().to_vec()));
            it.advance();
        }
        it.status()?;
        drop(it);
        for (name, v) in records {
            let mut meta = TableMeta::decode(&name, &v)?;
            if meta.indexes.iter().any(|i| i.state == IndexState::Building) {
                let mut b = S::Batch::default();
                for i in meta.indexes.iter().filter(|i| i.state == IndexState::Building) {
                    let (lo, hi) = index_range(i.id);
                    b.delete_range(&lo, &hi);
                }
                let mut def = meta.def.clone();
                let kept: Vec<(IndexDef, (u32, IndexState))> = meta
                    .indexes
                    .iter()
                    .filter(|i| i.state == IndexState::Ready)
                    .map(|i| (i.def.clone(), (i.id, i.state)))
                    .collect();
                def.indexes = kept.iter().map(|k| k.0.clone()).collect();
                let ids: Vec<_> = kept.iter().map(|k| k.1).collect();
                meta = TableMeta::resolve(&def, meta.id, &ids)?;
                b.put(&table_key(&name), &meta.encode());
                db.write_batch(b, &WriteOptions { sync: true, ..Default::default() })?;
            }
            tables.insert(name, Arc::new(TableShared::new(meta)));
        }
        remove_build_leftovers(&db);
        Ok(Catalog {
            inner: Arc::new(CatalogInner {
                db,
                tables: RwLock::new(tables),
                ddl: Mutex::new(next),
                stats: Counters::default(),
                write_options,
                clock: AtomicU64::new(0),
                active: Mutex::new(BTreeMap::new()),
                build_hook: Mutex::new(None),
                _registration: registration,
            }),
        })
    }

    /// The engine underneath.
    pub fn db(&self) -> &S {
        &self.inner.db
    }

    /// Creates a table (and its secondary indexes, empty). Refuses a name that exists
    /// ([`TableError::TableExists`]) and a definition that does not resolve
    /// ([`TableError::Schema`] naming the column, [`TableError::IndexExists`]).
    pub fn create_table(&self, def: TableDef) -> Result<Table<S>> {
        let mut next = self.inner.ddl.lock();
        if self.inner.tables.read().contains_key(&def.name) {
            return Err(TableError::TableExists(def.name));
        }
        let n = def.indexes.len() as u32;
        let id = *next;
        let ids: Vec<_> = (1..=n).map(|i| (id + i, IndexState::Ready)).collect();
        let meta = TableMeta::resolve(&def, id, &ids)?;
        let new_next =
            id.checked_add(n + 1).ok_or_else(|| TableError::corrupt("index ids exhausted"))?;
        let mut b = S::Batch::default();
        b.put(&NEXT_ID_KEY, &new_next.to_be_bytes());
        b.put(&table_key(&def.name), &meta.encode());
        self.inner.db.write_batch(b, &WriteOptions { sync: true, ..Default::default() })?;
        *next = new_next;
        let shared = Arc::new(TableShared::new(meta));
        self.inner.tables.write().insert(def.name.clone(), shared.clone());
        Ok(Table::new(self.inner.clone(), shared))
    }

    /// A handle on table `name` ([`TableError::NoSuchTable`] if none).
    pub fn table(&self, name: &str) -> Result<Table<S>> {
        let shared = self.inner.tables.read().get(name).cloned();
        match shared {
            Some(s) => Ok(Table::new(self.inner.clone(), s)),
            None => Err(TableError::NoSuchTable(name.to_string())),
        }
    }

    /// Drops table `name` with its rows and indexes (one batch: the catalog entry and a range
    /// delete per index). Handles on it then fail with [`TableError::NoSuchTable`].
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let _ddl = self.inner.ddl.lock();
        let shared = self.inner.tables.read().get(name).cloned();
        let Some(shared) = shared else {
            return Err(TableError::NoSuchTable(name.to_string()));
        };
        let _w = shared.lock.lock();
        let meta = shared.meta();
        let mut b = S::Batch::default();
        b.delete(&table_key(name));
        for id in std::iter::once(meta.id).chain(meta.indexes.iter().map(|i| i.id)) {
            let (lo, hi) = index_range(id);
            b.delete_range(&lo, &hi);
        }
        self.inner.db.write_batch(b, &WriteOptions { sync: true, ..Default::default() })?;
        shared.dropped.store(true, Ordering::Release);
        self.inner.tables.write().remove(name);
        Ok(())
    }

    /// Drops the ready secondary index `index` of `table`: its catalog entry and its entries
    /// go in one batch. [`TableError::NoSuchIndex`] if there is none (or it is still being
    /// built).
    pub fn drop_index(&self, table: &str, index: &str) -> Result<()> {
        let _ddl = self.inner.ddl.lock();
        let shared = self.inner.tables.read().get(table).cloned();
        let Some(shared) = shared else {
            return Err(TableError::NoSuchTable(table.to_string()));
        };
        let _w = shared.lock.lock();
        if shared.dropped.load(Ordering::Acquire) {
            return Err(TableError::NoSuchTable(table.to_string()));
        }
        let meta = shared.meta();
        let id = match meta.index(index) {
            Some(ix) if ix.state == IndexState::Ready => ix.id,
            _ => return Err(TableError::NoSuchIndex(index.to_string())),
        };
        let kept: Vec<(IndexDef, (u32, IndexState))> = meta
            .indexes
            .iter()
            .filter(|i| i.id != id)
            .map(|i| (i.def.clone(), (i.id, i.state)))
            .collect();
        let mut def = meta.def.clone();
        def.indexes = kept.iter().map(|k| k.0.clone()).collect();
        let ids: Vec<_> = kept.iter().map(|k| k.1).collect();
        let m = TableMeta::resolve(&def, meta.id, &ids)?;
        let mut b = S::Batch::default();
        let (lo, hi) = index_range(id);
        b.delete_range(&lo, &hi);
        b.put(&table_key(table), &m.encode());
        self.inner.db.write_batch(b, &WriteOptions { sync: true, ..Default::default() })?;
        shared.set_meta(m);
        Ok(())
    }

    /// Starts a snapshot-isolation transaction (first committer wins on rows written; see
    /// [`Transaction`]): reads see its own writes, else the snapshot taken
    /// now; writes are buffered and applied as one batch by [`Transaction::commit`].
    pub fn begin(&self) -> Transaction<S> {
        Transaction::begin(self.inner.clone())
    }

    /// Test hook: `create_index` calls `hook("before_ingest")` after writing its SST files and
    /// before ingesting them, with no lock held (for non-unique indexes), so a test can run
    /// writes, flushes and compactions at that point; and `hook("ingest_behind_refused")` when
    /// it falls back to the catch-up ingestion.
    #[doc(hidden)]
    pub fn set_build_hook(&self, hook: Option<BuildHook>) {
        *self.inner.build_hook.lock() = hook;
    }

    /// The cumulative counters.
    pub fn stats(&self) -> TableStats {
        self.inner.stats.snapshot()
    }
}
