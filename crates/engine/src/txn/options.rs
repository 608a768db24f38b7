//! The options of transactions and of the databases that make them, by RocksDB's names
//! (`TransactionOptions`, `TransactionDBOptions`, `OptimisticTransactionOptions`,
//! `OptimisticTransactionDBOptions`). Lock timeouts are [`Duration`]s: `Duration::ZERO` never
//! waits, `Duration::MAX` waits forever (RocksDB's negative timeout).

use std::time::Duration;

use crate::error::{Error, Result};

/// Options of one pessimistic transaction ([`crate::TransactionDb::begin`]).
#[derive(Clone, Debug)]
pub struct TransactionOptions {
    /// Take a snapshot at begin (as [`crate::Transaction::set_snapshot`]): reads through the
    /// transaction's read options see it, and locking a key written after it fails with
    /// [`Error::Busy`] (RocksDB's write-conflict check at lock time). Default false.
    pub set_snapshot: bool,
    /// Look for a cycle of waiting transactions before each lock wait, and refuse a wait that
    /// would close one with [`Error::Deadlock`] (default false: a deadlock lasts until a lock
    /// timeout ends it).
    pub deadlock_detect: bool,
    /// How many waiting transactions the deadlock search follows (50); a longer chain is taken
    /// for a deadlock, as in RocksDB.
    pub deadlock_detect_depth: usize,
    /// How long to wait for a row lock before [`Error::TimedOut`]; `None`: the database's
    /// [`TransactionDbOptions::transaction_lock_timeout`].
    pub lock_timeout: Option<Duration>,
    /// After this long, another transaction waiting for one of this transaction's locks may
    /// take it, and this transaction's commit fails with [`Error::Expired`] (RocksDB's
    /// `expiration`); `None`: never.
    pub expiration: Option<Duration>,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            set_snapshot: false,
            deadlock_detect: false,
            deadlock_detect_depth: 50,
            lock_timeout: None,
            expiration: None,
        }
    }
}

/// Options of a [`crate::TransactionDb`].
#[derive(Clone, Debug)]
pub struct TransactionDbOptions {
    /// How long a transaction waits for a row lock by default (1 s; RocksDB's
    /// `transaction_lock_timeout`).
    pub transaction_lock_timeout: Duration,
    /// How long a write outside a transaction ([`crate::TransactionDb::put`], ...) waits for
    /// its row locks (1 s; RocksDB's `default_lock_timeout`).
    pub default_lock_timeout: Duration,
    /// Lock-table partitions, each with its own mutex (16).
    pub num_stripes: usize,
    /// Most keys locked at once over all transactions; a lock past it fails with
    /// [`Error::Busy`] (`None`: no limit).
    pub max_num_locks: Option<usize>,
    /// Deadlocks remembered for [`crate::TransactionDb::deadlock_info`] (5).
    pub max_num_deadlocks: usize,
}

impl Default for TransactionDbOptions {
    fn default() -> Self {
        TransactionDbOptions {
            transaction_lock_timeout: Duration::from_secs(1),
            default_lock_timeout: Duration::from_secs(1),
            num_stripes: 16,
            max_num_locks: None,
            max_num_deadlocks: 5,
        }
    }
}

impl TransactionDbOptions {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.num_stripes == 0 {
            return Err(Error::InvalidArgument("num_stripes must be at least 1".into()));
        }
        Ok(())
    }
}

/// Options of one optimistic transaction ([`crate::OptimisticTransactionDb::begin`]).
#[derive(Clone, Debug, Default)]
pub struct OptimisticTransactionOptions {
    /// Take a snapshot at begin: reads through the transaction's read options see it, and the
    /// commit checks every key read for update or written against it (snapshot isolation).
    /// Default false: each key is checked against the moment it was first read for update or
    /// written.
    pub set_snapshot: bool,
}

/// Options of an [`crate::OptimisticTransactionDb`].
#[derive(Clone, Debug)]
pub struct OptimisticTransactionDbOptions {
    /// Commit locks: a commit locks the buckets of its keys (in bucket order) while it checks
    /// for conflicts and writes (RocksDB's `kValidateParallel` with `occ_lock_buckets`,
    /// 2^20; one byte each).
    pub occ_lock_buckets: usize,
}

impl Default for OptimisticTransactionDbOptions {
    fn default() -> Self {
        OptimisticTransactionDbOptions { occ_lock_buckets: 1 << 20 }
    }
}

impl OptimisticTransactionDbOptions {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.occ_lock_buckets == 0 {
            return Err(Error::InvalidArgument("occ_lock_buckets must be at least 1".into()));
        }
        Ok(())
    }
}
