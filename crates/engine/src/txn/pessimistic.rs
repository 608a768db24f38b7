//! [`TransactionDb`]: pessimistic transactions (RocksDB's `TransactionDB` with its default
//! `WRITE_COMMITTED` policy). A transaction locks each key it reads for update or writes as it
//! does so (`lock_manager.rs`: shared or exclusive row locks, a timeout, deadlock detection),
//! holds the locks until it commits or rolls back, and commits its batch through the write
//! path (one WAL record) before unlocking. With a snapshot, locking a key that was written after
//! the snapshot fails with [`Error::Busy`] (`db/conflict.rs`), so a commit never overwrites a
//! write its snapshot did not see.
//!
//! Writes outside transactions through [`TransactionDb::put`], [`TransactionDb::delete`] and
//! [`TransactionDb::write`] lock their keys too (sorted, with `default_lock_timeout`); writes
//! made on [`TransactionDb::db`] directly take no lock.
//!
//! Who calls: users; [`crate::Transaction`] calls the lock manager. Locks: see
//! `lock_manager.rs`.

use std::sync::Arc;

use super::deadlock::DeadlockPath;
use super::lock_manager::{LockManager, LockRequest, TxnState};
use super::options::{TransactionDbOptions, TransactionOptions};
use super::transaction::{Mode, PessimisticMode, Transaction};
use crate::batch::{BatchOp, WriteBatch};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::options::{Options, WriteOptions};

/// What the transactions of one [`TransactionDb`] share.
pub(crate) struct PessimisticShared {
    pub locks: Arc<LockManager>,
    pub opts: TransactionDbOptions,
}

/// A database whose transactions lock what they touch (RocksDB's `TransactionDB`). Cheap to
/// clone; [`TransactionDb::db`] is the database itself, for reads.
///
/// ```
/// use std::time::Duration;
/// use talus::{Error, Options, TransactionDb, TransactionOptions, WriteOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let opts = Options { create_if_missing: true, ..Default::default() };
/// let db = TransactionDb::open(dir.path(), opts).unwrap();
/// let mut t1 = db.begin();
/// t1.put(b"k", b"1").unwrap(); // locks k
/// let quick = TransactionOptions { lock_timeout: Some(Duration::from_millis(10)), ..Default::default() };
/// let mut t2 = db.begin_transaction(&WriteOptions::default(), &quick);
/// assert!(matches!(t2.get_for_update(b"k"), Err(Error::TimedOut(_))));
/// t1.commit().unwrap(); // unlocks k
/// assert_eq!(t2.get_for_update(b"k").unwrap().as_deref(), Some(&b"1"[..]));
/// ```
#[derive(Clone)]
pub struct TransactionDb {
    db: Db,
    shared: Arc<PessimisticShared>,
}

impl std::fmt::Debug for TransactionDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TransactionDb({:?})", self.db)
    }
}

impl TransactionDb {
    /// Opens the database in `path` (as [`Db::open`]) for pessimistic transactions.
    pub fn open(path: impl AsRef<std::path::Path>, options: Options) -> Result<Self> {
        Self::open_with(path, options, TransactionDbOptions::default())
    }

    /// [`TransactionDb::open`] with `txn_db` options.
    pub fn open_with(
        path: impl AsRef<std::path::Path>,
        options: Options,
        txn_db: TransactionDbOptions,
    ) -> Result<Self> {
        txn_db.validate()?;
        Self::from_db(Db::open(path, options)?, txn_db)
    }

    /// Makes pessimistic transactions over an open database (one lock table: make one
    /// `TransactionDb` and clone it).
    pub fn from_db(db: Db, txn_db: TransactionDbOptions) -> Result<Self> {
        txn_db.validate()?;
        let locks = Arc::new(LockManager::new(
            txn_db.num_stripes,
            txn_db.max_num_locks,
            txn_db.max_num_deadlocks,
        ));
        Ok(TransactionDb { db, shared: Arc::new(PessimisticShared { locks, opts: txn_db }) })
    }

    /// The database: reads (writes made on it directly take no lock).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Starts a transaction with default options.
    pub fn begin(&self) -> Transaction {
        self.begin_transaction(&WriteOptions::default(), &TransactionOptions::default())
    }

    /// Starts a transaction whose commit writes with `wo`, under `opts`.
    pub fn begin_transaction(&self, wo: &WriteOptions, opts: &TransactionOptions) -> Transaction {
        let id = super::next_txn_id();
        let mode = PessimisticMode {
            locks: Arc::clone(&self.shared.locks),
            state: Arc::new(TxnState::new(id, opts.expiration)),
            lock_timeout: opts.lock_timeout.unwrap_or(self.shared.opts.transaction_lock_timeout),
            deadlock_depth: opts.deadlock_detect.then_some(opts.deadlock_detect_depth),
        };
        let mut t = Transaction::with_id(self.db.clone(), Mode::Pessimistic(mode), *wo, id);
        if opts.set_snapshot {
            t.set_snapshot();
        }
        t
    }

    /// Sets `key` to `value` outside a transaction, under its lock.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes `key` outside a transaction, under its lock.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b, &WriteOptions::default())
    }

    /// Applies `batch` atomically outside a transaction, holding the locks of its keys (taken
    /// in key order, each waiting up to `default_lock_timeout`) while it is written. Range
    /// deletions cannot be locked: a batch with one is [`Error::NotSupported`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::TransactionDb::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let mut b = talus::WriteBatch::new();
    /// b.put(b"a", b"1");
    /// b.delete(b"b");
    /// db.write(b, &talus::WriteOptions::default()).unwrap();
    /// assert_eq!(db.db().get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    /// ```
    pub fn write(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        batch.status()?;
        let mut keys: Vec<&[u8]> = Vec::with_capacity(batch.count() as usize);
        for op in batch.iter() {
            match op {
                // A merge writes its key as a put does: it takes the same exclusive lock.
                BatchOp::Put(k, _) | BatchOp::Delete(k) | BatchOp::Merge(k, _) => keys.push(k),
                BatchOp::DeleteRange(..) => {
                    return Err(Error::NotSupported(
                        "TransactionDb::write: a range deletion cannot be locked".into(),
                    ))
                }
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let txn = Arc::new(TxnState::new(super::next_txn_id(), None));
        let locks = &self.shared.locks;
        let mut held = 0;
        let mut result = Ok(());
        for k in &keys {
            let r = LockRequest {
                txn: &txn,
                key: k,
                exclusive: true,
                timeout: self.shared.opts.default_lock_timeout,
                deadlock_depth: None,
            };
            if let Err(e) = locks.lock(&r) {
                result = Err(e);
                break;
            }
            held += 1;
        }
        if result.is_ok() {
            result = self.db.write(batch.clone(), wo);
        }
        locks.unlock(txn.id, keys.iter().take(held).copied());
        result
    }

    /// The deadlocks broken lately (at most `max_num_deadlocks`), oldest first (RocksDB's
    /// `GetDeadlockInfoBuffer`).
    pub fn deadlock_info(&self) -> Vec<DeadlockPath> {
        self.shared.locks.deadlocks.history()
    }

    #[cfg(test)]
    pub(crate) fn lock_manager(&self) -> &LockManager {
        &self.shared.locks
    }

    /// Keys locked now, over all transactions.
    pub fn num_locks(&self) -> usize {
        self.shared.locks.num_locks()
    }
}
