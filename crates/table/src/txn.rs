//! [`Transaction`]: snapshot-isolation transactions with optimistic primary-key conflict
//! detection (first committer wins).
//!
//! # Isolation
//!
//! **Snapshot isolation**, not read committed: every read (`get`, `scan_range`, and the checks
//! of `insert`/`update`/`delete`) sees the snapshot taken at `begin`, plus (except for
//! `scan_range`) the transaction's own earlier writes; a commit fails with
//! [`TableError::Conflict`] if another commit wrote one of the rows it writes (same primary key)
//! after `begin`, and re-checks unique indexes against the latest state. Rows only read are not
//! checked, so two transactions that each read what the other writes may both commit (write
//! skew), as under snapshot isolation in PostgreSQL's `REPEATABLE READ`.
//!
//! `begin` records the catalog's commit clock, then takes an engine snapshot (so every commit
//! numbered at or below the clock is in the snapshot). Each op is checked at call time against
//! the snapshot plus the transaction's own earlier ops (that is what its return value and
//! errors report) and staged: its row and index entries go into the transaction's batch.
//! Values read at the snapshot are remembered (the snapshot never changes), so updating a row
//! the transaction read costs no second read. `commit` hands the ops and the staged batch to
//! `write::commit_ops`, which under the tables' write locks refuses with
//! [`TableError::Conflict`] if another commit wrote one of the primary keys after `begin`,
//! then writes the staged batch as is when the tables' metadata is unchanged and they have no
//! unique or building index (every row the ops read is then unchanged since the snapshot), and
//! otherwise re-runs the ops against the latest state (re-checking unique indexes). Dropping
//! an uncommitted transaction rolls it back.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use talus::Db;

use crate::error::{Result, TableError};
use crate::meta::TableMeta;
use crate::schema::{Row, Value};
use crate::shared::{CatalogInner, TableShared};
use crate::storage::Storage;
use crate::table::Table;
use crate::write::{commit_ops, pk_key, Ctx, Op, ReadCache, Staged, StagedCommit};

enum OwnedOp {
    Insert(Row),
    Update(Row),
    Delete(Vec<Value>),
}

/// A snapshot-isolation transaction on storage `S` (see the [module documentation](self));
/// made by [`crate::Catalog::begin`].
pub struct Transaction<S: Storage = Db> {
    cat: Arc<CatalogInner<S>>,
    /// The snapshot taken at begin, and the read view on it.
    snapshot: S::Snapshot,
    ro: S::ReadOptions,
    begin: u64,
    tables: Vec<Arc<TableShared>>,
    /// Per table position, the metadata its ops were staged against (`None` once it changed
    /// between two ops: the staged batch is then not reused).
    metas: Vec<Option<Arc<TableMeta>>>,
    ops: Vec<(usize, OwnedOp)>,
    staged: Staged<S>,
    reads: ReadCache,
    registered: bool,
}

impl<S: Storage> std::fmt::Debug for Transaction<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transaction(begin {}, {} ops)", self.begin, self.ops.len())
    }
}

impl<S: Storage> Transaction<S> {
    pub(crate) fn begin(cat: Arc<CatalogInner<S>>) -> Transaction<S> {
        let begin = {
            let mut a = cat.active.lock();
            let b = cat.clock.load(Ordering::Acquire);
            *a.entry(b).or_insert(0) += 1;
            b
        };
        let snapshot = cat.db.take_snapshot();
        let ro = cat.db.read_options(Some(&snapshot));
        Transaction {
            cat,
            snapshot,
            ro,
            begin,
            tables: Vec::new(),
            metas: Vec::new(),
            ops: Vec::new(),
            staged: Staged::default(),
            reads: ReadCache::default(),
            registered: true,
        }
    }

    fn table_pos(&mut self, t: &Table<S>) -> usize {
        match self.tables.iter().position(|s| Arc::ptr_eq(s, &t.shared)) {
            Some(i) => i,
            None => {
                self.tables.push(t.shared.clone());
                self.metas.push(Some(t.shared.meta()));
                self.tables.len() - 1
            }
        }
    }

    /// Checks `op` against the snapshot and earlier ops; on success stages it.
    fn stage(&mut self, t: &Table<S>, op: Op<'_>, owned: impl FnOnce() -> OwnedOp) -> Result<bool> {
        if t.shared.dropped.load(Ordering::Acquire) {
            return Err(TableError::NoSuchTable(t.def().name.clone()));
        }
        let pos = self.table_pos(t);
        let m = t.shared.meta();
        if !self.metas[pos].as_ref().is_some_and(|s| Arc::ptr_eq(s, &m)) {
            self.metas[pos] = None;
        }
        let st = std::mem::take(&mut self.staged);
        let mut ctx = Ctx::resume(&self.cat.db, &self.ro, &self.cat.stats, st, Some(&self.reads));
        let r = ctx.apply(pos, &m, op);
        self.staged = ctx.suspend();
        let r = r?;
        if r {
            self.ops.push((pos, owned()));
        }
        Ok(r)
    }

    /// Inserts `row` (refused now with [`TableError::DuplicateKey`] if the key exists in the
    /// snapshot or was inserted by this transaction).
    pub fn insert(&mut self, table: &Table<S>, row: &Row) -> Result<()> {
        self.stage(table, Op::Insert(row), || OwnedOp::Insert(row.clone())).map(|_| ())
    }

    /// Updates the row with `row`'s primary key; false if absent (in this transaction's view).
    pub fn update(&mut self, table: &Table<S>, row: &Row) -> Result<bool> {
        self.stage(table, Op::Update(row), || OwnedOp::Update(row.clone()))
    }

    /// Deletes the row with primary key `pk`; false if absent (in this transaction's view).
    pub fn delete(&mut self, table: &Table<S>, pk: &[Value]) -> Result<bool> {
        self.stage(table, Op::Delete(pk), || OwnedOp::Delete(pk.to_vec()))
    }

    /// The row with primary key `pk`: this transaction's own write if any, else the snapshot's.
    pub fn get(&self, table: &Table<S>, pk: &[Value]) -> Result<Option<Row>> {
        let m = table.shared.meta();
        let key = pk_key(&m, pk)?;
        if let Some(v) = self.staged.overlay(&key) {
            return match v {
                None => Ok(None),
                Some(b) => crate::rowcodec::decode_row(b, &m.types).map(Some),
            };
        }
        Ctx::resume(&self.cat.db, &self.ro, &self.cat.stats, Staged::default(), Some(&self.reads))
            .read_row(&m, &key)
    }

    /// Range scan `s` of `table` (see [`crate::Scan`]) at this transaction's snapshot: the
    /// rows committed before `begin`, **not** this transaction's own uncommitted writes. Calls
    /// `visit` with each row until it returns false or the range ends.
    pub fn scan_range(
        &self,
        table: &Table<S>,
        s: &crate::Scan<'_>,
        visit: impl FnMut(Row) -> bool,
    ) -> Result<()> {
        crate::scan::scan_range(table, s, Some(&self.snapshot), visit)
    }

    /// Applies every buffered op as one batch; [`TableError::Conflict`] (and nothing written) if
    /// another commit wrote one of these primary keys since `begin`.
    pub fn commit(mut self) -> Result<()> {
        let ops: Vec<(usize, Op<'_>)> = self
            .ops
            .iter()
            .map(|(t, o)| {
                (
                    *t,
                    match o {
                        OwnedOp::Insert(r) => Op::Insert(r),
                        OwnedOp::Update(r) => Op::Update(r),
                        OwnedOp::Delete(k) => Op::Delete(k),
                    },
                )
            })
            .collect();
        let staged = StagedCommit { metas: &self.metas, staged: std::mem::take(&mut self.staged) };
        let r =
            commit_ops(&self.cat, &self.tables, &ops, Some(self.begin), Some(staged)).map(|_| ());
        drop(ops);
        self.unregister();
        r
    }

    /// Discards the buffered ops.
    pub fn rollback(mut self) {
        self.unregister();
    }

    fn unregister(&mut self) {
        if !self.registered {
            return;
        }
        self.registered = false;
        let mut a = self.cat.active.lock();
        if let Some(c) = a.get_mut(&self.begin) {
            *c -= 1;
            if *c == 0 {
                a.remove(&self.begin);
            }
        }
    }
}

impl<S: Storage> Drop for Transaction<S> {
    fn drop(&mut self) {
        self.unregister();
    }
}
