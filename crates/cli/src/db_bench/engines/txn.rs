//! What randomtransaction needs from an engine opened with `--transaction_db` or
//! `--optimistic_transaction_db`: a transaction ([`EngineTxn`]) and its errors sorted the way
//! RocksDB's `RandomTransactionInserter` sorts statuses ([`TxnError`]).

use std::fmt;

/// The transactions an engine was opened for (RocksDB's db_bench: `--optimistic_transaction_db`
/// wins if both flags are given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnKind {
    /// A plain database: randomtransaction writes batches.
    None,
    /// `--optimistic_transaction_db`.
    Optimistic,
    /// `--transaction_db`.
    Pessimistic,
}

impl TxnKind {
    /// The kind the flags ask for.
    pub fn from_flags(f: &super::super::flags::Flags) -> TxnKind {
        if f.optimistic_transaction_db {
            TxnKind::Optimistic
        } else if f.transaction_db {
            TxnKind::Pessimistic
        } else {
            TxnKind::None
        }
    }
}

/// A failed transaction operation, by RocksDB's status code.
#[derive(Debug)]
pub enum TxnError {
    /// A write conflict (`Busy`, also a deadlock).
    Busy(String),
    /// A lock wait past its timeout.
    TimedOut(String),
    /// The transaction expired.
    Expired(String),
    /// Anything else: unexpected in randomtransaction.
    Other(String),
}

impl TxnError {
    /// Busy or TimedOut: the ones randomtransaction counts as aborts (with RocksDB's
    /// `TryAgain`, which Talus's conflict check never returns).
    pub fn is_conflict(&self) -> bool {
        matches!(self, TxnError::Busy(_) | TxnError::TimedOut(_))
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnError::Busy(s) => write!(f, "Resource busy: {s}"),
            TxnError::TimedOut(s) => write!(f, "Operation timed out: {s}"),
            TxnError::Expired(s) => write!(f, "Operation expired: {s}"),
            TxnError::Other(s) => f.write_str(s),
        }
    }
}

/// One transaction.
pub trait EngineTxn {
    /// True if the transaction has a snapshot.
    fn has_snapshot(&self) -> bool;
    /// Takes a (new) snapshot; reads then see it.
    fn set_snapshot(&mut self);
    /// Reads `key` (with its own writes; `for_update`: RocksDB's `GetForUpdate`).
    fn get(&mut self, key: &[u8], for_update: bool) -> Result<Option<Vec<u8>>, TxnError>;
    /// Deletes `key`.
    fn delete(&mut self, key: &[u8]) -> Result<(), TxnError>;
    /// Sets `key` to `value`.
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TxnError>;
    /// Commits.
    fn commit(self: Box<Self>) -> Result<(), TxnError>;
    /// Rolls back.
    fn rollback(self: Box<Self>);
}
