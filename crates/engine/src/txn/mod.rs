//! Transactions on the engine (RocksDB's `OptimisticTransactionDB` and `TransactionDB`).
//!
//! Two databases make [`Transaction`]s over an open [`crate::Db`]:
//!
//! - [`OptimisticTransactionDb`] (`optimistic.rs`, `occ_commit.rs`): no lock until commit; the commit checks
//!   that no key the transaction read with `get_for_update` or wrote was written since it
//!   first did (since its snapshot, with one), and fails with [`crate::Error::Busy`] if one was.
//! - [`TransactionDb`] (`pessimistic.rs`, `lock_manager.rs`, `deadlock.rs`): row locks taken by
//!   `get_for_update` and writes, held to the end; a wait past the lock timeout is
//!   [`crate::Error::TimedOut`], a wait that would close a cycle (with `deadlock_detect`) is
//!   [`crate::Error::Deadlock`] and is recorded ([`TransactionDb::deadlock_info`]).
//!
//! A transaction reads its own writes ([`WriteBatchWithIndex`], [`TransactionIter`]) and
//! commits them as one write: one write-group member, one WAL record, so a crash keeps all of
//! a committed transaction or none of it.
//!
//! # Isolation, stated exactly
//!
//! - Keys read with `get_for_update` and keys written: **serializable**. No transaction
//!   commits a write of such a key between this transaction's read or write of it and its
//!   commit (optimistic: the commit fails; pessimistic: the lock waits). A transaction that
//!   reads only through `get_for_update` commits at a point where all its reads still hold.
//! - Plain `get` and the iterator: **read committed** without a snapshot (each read sees the
//!   latest committed state), a consistent **snapshot** with one (`set_snapshot`). Nothing
//!   checks them at commit: two transactions that each read (plainly) what the other writes
//!   can both commit (write skew), as under snapshot isolation.
//! - With `set_snapshot`, the conflict checks count from the snapshot, so a transaction that
//!   writes a key written after its snapshot fails (optimistic: at commit; pessimistic: when it
//!   locks the key): **snapshot isolation** for its writes.
//! - Writes outside transactions (on [`crate::Db`], or [`OptimisticTransactionDb::db`]) take no
//!   lock: a transaction sees them as conflicts when they come before its check (optimistic
//!   commit; pessimistic lock under a snapshot) and not otherwise. [`TransactionDb::put`] and
//!   friends do lock.
//!
//! Design notes (why the commit never returns `TryAgain`, why the optimistic transaction holds
//! a snapshot): `docs/design/transactions.md`.

mod deadlock;
mod iter;
mod lock_manager;
mod occ_commit;
mod optimistic;
mod options;
mod pessimistic;
mod tracker;
mod transaction;
mod write_batch_with_index;

use std::sync::atomic::{AtomicU64, Ordering};

pub use deadlock::{DeadlockInfo, DeadlockPath};
pub use iter::TransactionIter;
pub use optimistic::OptimisticTransactionDb;
pub use options::{
    OptimisticTransactionDbOptions, OptimisticTransactionOptions, TransactionDbOptions,
    TransactionOptions,
};
pub use pessimistic::TransactionDb;
pub use transaction::Transaction;
pub use write_batch_with_index::{IndexedWrite, WriteBatchWithIndex};

/// A new transaction id, unique in the process.
fn next_txn_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests;
