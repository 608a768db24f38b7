//! [`Transaction`]: one optimistic or pessimistic transaction (RocksDB's `Transaction`): reads
//! that see its own writes, writes buffered in a [`WriteBatchWithIndex`], keys tracked for
//! conflict checks (optimistic) or locked (pessimistic), savepoints, and a commit that writes
//! the whole batch as one write (one WAL record: after a crash, all of it or none).
//!
//! Who calls: users, from [`crate::OptimisticTransactionDb::begin_transaction`] and
//! [`crate::TransactionDb::begin_transaction`]. A transaction is used by one thread at a time
//! (`&mut self` to write); it may be sent between threads. Dropping it rolls it back.
//!
//! Optimistic transactions hold a snapshot (the guard) from the first key they track: the
//! commit's conflict check may read the files, and compaction keeps every version newer than
//! a snapshot (see `db/conflict.rs`).

use std::sync::Arc;
use std::time::Duration;

use super::iter::TransactionIter;
use super::lock_manager::{LockManager, LockRequest, TxnState};
use super::occ_commit::OccShared;
use super::tracker::Tracker;
use super::write_batch_with_index::{IndexedWrite, WriteBatchWithIndex};
use crate::db::{Db, Snapshot};
use crate::error::{Error, Result};
use crate::key::{EscapedBytes, SequenceNumber};
use crate::options::{ReadOptions, WriteOptions};

/// A pessimistic transaction's locking state.
pub(crate) struct PessimisticMode {
    pub locks: Arc<LockManager>,
    pub state: Arc<TxnState>,
    pub lock_timeout: Duration,
    pub deadlock_depth: Option<usize>,
}

/// How a transaction controls concurrency.
pub(crate) enum Mode {
    Optimistic(Arc<OccShared>),
    Pessimistic(PessimisticMode),
}

/// A transaction; see the [module documentation](crate::txn) for its isolation.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = talus::TransactionDb::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
/// db.db().put(b"a", b"1").unwrap();
/// let mut t = db.begin();
/// t.put(b"b", b"2").unwrap();
/// assert_eq!(t.get(b"b").unwrap().as_deref(), Some(&b"2"[..])); // its own write
/// assert_eq!(db.db().get(b"b").unwrap(), None); // nobody else's yet
/// t.set_savepoint();
/// t.delete(b"a").unwrap();
/// t.rollback_to_savepoint().unwrap();
/// t.commit().unwrap();
/// assert_eq!(db.db().get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
/// assert_eq!(db.db().get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
/// ```
pub struct Transaction {
    db: Db,
    id: u64,
    mode: Mode,
    write_options: WriteOptions,
    wb: WriteBatchWithIndex,
    tracker: Tracker,
    /// Read options carrying the snapshot, if set.
    ro: ReadOptions,
    /// Optimistic: a snapshot at or below every tracked key's sequence number.
    guard: Option<Snapshot>,
    /// The snapshot current at each savepoint.
    savepoints: Vec<Option<Snapshot>>,
    finished: bool,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.mode {
            Mode::Optimistic(_) => "optimistic",
            Mode::Pessimistic(_) => "pessimistic",
        };
        write!(f, "Transaction({} {kind}, {} keys written)", self.id, self.wb.num_keys())
    }
}

impl Transaction {
    pub(crate) fn new(db: Db, mode: Mode, write_options: WriteOptions) -> Transaction {
        Self::with_id(db, mode, write_options, super::next_txn_id())
    }

    pub(crate) fn with_id(db: Db, mode: Mode, write_options: WriteOptions, id: u64) -> Self {
        Transaction {
            db,
            id,
            mode,
            write_options,
            wb: WriteBatchWithIndex::new(),
            tracker: Tracker::default(),
            ro: ReadOptions::default(),
            guard: None,
            savepoints: Vec::new(),
            finished: false,
        }
    }

    /// This transaction's id, unique in the process (the ids in deadlock reports).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Takes a snapshot now (RocksDB's `SetSnapshot`): reads through [`Transaction::get`] and
    /// the other methods without explicit read options see it, and keys tracked from now on
    /// conflict with any write after it.
    pub fn set_snapshot(&mut self) {
        let s = self.db.snapshot();
        if self.guard.is_none() && matches!(self.mode, Mode::Optimistic(_)) {
            self.guard = Some(s.clone());
        }
        self.ro.snapshot = Some(s);
    }

    /// The snapshot set, if any.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.ro.snapshot.as_ref()
    }

    /// The read options the methods without them use: the transaction's snapshot, if set.
    pub fn read_options(&self) -> &ReadOptions {
        &self.ro
    }

    /// The value of `key`: this transaction's own last write of it, else the database's at the
    /// transaction's snapshot (the latest state without one). Tracks nothing.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &self.ro)
    }

    /// [`Transaction::get`] reading the database under `ro`.
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        match self.wb.get(key) {
            Some(IndexedWrite::Put(v)) => Ok(Some(v.to_vec())),
            Some(IndexedWrite::Deleted) => Ok(None),
            None => self.db.get_opt(key, ro),
        }
    }

    /// Reads `key` as [`Transaction::get`] does and tracks it exclusively (RocksDB's
    /// `GetForUpdate`): a pessimistic transaction locks it first (waiting up to its lock
    /// timeout: [`Error::TimedOut`], [`Error::Deadlock`]; with a snapshot, [`Error::Busy`] if it
    /// was written after the snapshot); an optimistic one's commit fails with [`Error::Busy`]
    /// if it is written from now on.
    pub fn get_for_update(&mut self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.track(key, true)?;
        self.get_opt(key, &self.ro)
    }

    /// [`Transaction::get_for_update`] reading under `ro`; `exclusive: false` takes a shared
    /// lock (pessimistic; an optimistic transaction tracks the key either way).
    pub fn get_for_update_opt(
        &mut self,
        key: impl AsRef<[u8]>,
        ro: &ReadOptions,
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.track(key, exclusive)?;
        self.get_opt(key, ro)
    }

    /// Sets `key` to `value` in this transaction (tracked and, if pessimistic, locked first).
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (key, value) = (key.as_ref(), value.as_ref());
        crate::batch::check_entry_size(key.len(), value.len())?;
        self.track(key, true)?;
        self.wb.put(key, value)
    }

    /// Deletes `key` in this transaction (tracked and, if pessimistic, locked first).
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        crate::batch::check_entry_size(key.len(), 0)?;
        self.track(key, true)?;
        self.wb.delete(key)
    }

    /// A cursor over the database under the transaction's read options with this transaction's
    /// writes applied (RocksDB's `GetIterator`). It borrows the transaction: no write while it
    /// lives.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::OptimisticTransactionDb::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.db().put(b"a", b"1").unwrap();
    /// db.db().put(b"b", b"2").unwrap();
    /// let mut t = db.begin();
    /// t.delete(b"a").unwrap();
    /// t.put(b"c", b"3").unwrap();
    /// let mut it = t.iter();
    /// it.seek_to_first();
    /// let mut seen = Vec::new();
    /// while it.valid() {
    ///     seen.push((it.key().to_vec(), it.value().to_vec()));
    ///     it.next();
    /// }
    /// assert_eq!(seen, [(b"b".to_vec(), b"2".to_vec()), (b"c".to_vec(), b"3".to_vec())]);
    /// ```
    pub fn iter(&self) -> TransactionIter<'_> {
        self.iter_opt(&self.ro)
    }

    /// [`Transaction::iter`] under `ro` (its snapshot and bounds).
    pub fn iter_opt(&self, ro: &ReadOptions) -> TransactionIter<'_> {
        TransactionIter::new(self.db.raw_iter(ro), &self.wb, ro)
    }

    /// Marks a savepoint: writes, tracked keys (and pessimistic locks) and the snapshot from
    /// now on can be rolled back with [`Transaction::rollback_to_savepoint`].
    pub fn set_savepoint(&mut self) {
        self.wb.set_savepoint();
        self.tracker.set_savepoint();
        self.savepoints.push(self.ro.snapshot.clone());
    }

    /// Undoes everything since the last savepoint and removes it: the writes, the keys tracked
    /// (a pessimistic transaction unlocks them), the snapshot. [`Error::NotFound`] if no
    /// savepoint is set.
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        let snapshot = self.savepoints.pop().ok_or_else(no_savepoint)?;
        self.wb.rollback_to_savepoint()?;
        let gone = self.tracker.rollback_to_savepoint();
        if let Mode::Pessimistic(p) = &self.mode {
            p.locks.unlock(self.id, gone.iter().map(Vec::as_slice));
        }
        self.ro.snapshot = snapshot;
        Ok(())
    }

    /// Forgets the last savepoint, keeping what came after it. [`Error::NotFound`] if none.
    pub fn pop_savepoint(&mut self) -> Result<()> {
        self.savepoints.pop().ok_or_else(no_savepoint)?;
        self.wb.pop_savepoint()?;
        self.tracker.pop_savepoint();
        Ok(())
    }

    /// The writes buffered so far.
    pub fn write_batch(&self) -> &WriteBatchWithIndex {
        &self.wb
    }

    /// Number of keys tracked (read for update or written).
    pub fn num_tracked_keys(&self) -> usize {
        self.tracker.len()
    }

    /// Commits: writes the buffered writes as one atomic write (one WAL record). An optimistic
    /// transaction first checks its tracked keys: [`Error::Busy`] if one was written since it
    /// was tracked. A pessimistic transaction that expired fails with [`Error::Expired`]. On
    /// any error nothing was written (a failed write makes the database read-only, as any
    /// write's failure does). The locks are released either way.
    pub fn commit(mut self) -> Result<()> {
        let batch = self.wb.take_batch();
        let r = match &self.mode {
            Mode::Optimistic(occ) => {
                occ.commit(&self.db, self.id, &self.tracker, batch, &self.write_options)
            }
            Mode::Pessimistic(p) => p.state.begin_commit().and_then(|()| {
                if batch.is_empty() {
                    Ok(())
                } else {
                    self.db.write(batch, &self.write_options)
                }
            }),
        };
        self.finish();
        r
    }

    /// Discards the buffered writes and releases the locks (dropping the transaction does the
    /// same).
    pub fn rollback(mut self) {
        self.finish();
    }

    /// Tracks `key` (locking it, if pessimistic) before a read for update or a write.
    fn track(&mut self, key: &[u8], exclusive: bool) -> Result<()> {
        match &self.mode {
            Mode::Optimistic(_) => {
                if self.guard.is_none() {
                    self.guard = Some(self.db.snapshot());
                }
                let seq = self.tracking_seq();
                self.tracker.track(key, seq, exclusive);
                Ok(())
            }
            Mode::Pessimistic(p) => {
                let before = self.tracker.get(key);
                if before.is_none_or(|t| exclusive && !t.exclusive) {
                    let req = LockRequest {
                        txn: &p.state,
                        key,
                        exclusive,
                        timeout: p.lock_timeout,
                        deadlock_depth: p.deadlock_depth,
                    };
                    p.locks.lock(&req)?;
                }
                let seq = self.tracking_seq();
                if let Some(snap) = &self.ro.snapshot {
                    // Validated at or below the snapshot already: nothing to check again.
                    let validated = before.is_some_and(|t| t.seq <= snap.sequence());
                    if !validated {
                        if let Err(e) = self.check_unwritten_since(key, snap.sequence()) {
                            if before.is_none() {
                                p.locks.unlock(self.id, [key]);
                            }
                            return Err(e);
                        }
                    }
                }
                self.tracker.track(key, seq, exclusive);
                Ok(())
            }
        }
    }

    /// The sequence number conflicts of a key tracked now are counted from.
    fn tracking_seq(&self) -> SequenceNumber {
        match &self.ro.snapshot {
            Some(s) => s.sequence(),
            None => self.db.latest_sequence(),
        }
    }

    /// [`Error::Busy`] if `key` was written after `seq` (a pessimistic lock under a snapshot:
    /// the snapshot is held, as `db/conflict.rs` requires).
    fn check_unwritten_since(&self, key: &[u8], seq: SequenceNumber) -> Result<()> {
        match self.db.first_written_after([(key, seq)])? {
            None => Ok(()),
            Some(k) => Err(Error::Busy(format!(
                "write conflict: {:?} was written after the snapshot of transaction {}",
                EscapedBytes(k),
                self.id
            ))),
        }
    }

    /// Ends the transaction: releases its locks, drops its snapshots and writes.
    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        if let Mode::Pessimistic(p) = &self.mode {
            p.locks.unlock(self.id, self.tracker.iter().map(|(k, _)| k));
        }
        self.tracker.clear();
        self.wb.take_batch();
        self.guard = None;
        self.ro.snapshot = None;
        self.savepoints.clear();
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.finish();
    }
}

fn no_savepoint() -> Error {
    Error::NotFound("no savepoint is set".into())
}
