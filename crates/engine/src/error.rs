//! The engine's error type.
//!
//! Every fallible public call returns [`Result`]. Errors carry enough context for a person to act:
//! corruption names the file and the byte offset, invalid options name the option.

use std::fmt;

/// A `Result` with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system IO error, with what the engine was doing.
    #[error("IO error while {context}: {source}")]
    Io {
        /// What the engine was doing (e.g. "writing 000012.log").
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Bytes on disk failed a checksum or could not be decoded.
    #[error("Corruption in {file} at offset {offset}: {detail}")]
    Corruption {
        /// The file (path or name) holding the bad bytes.
        file: String,
        /// Byte offset in the file of the unit that failed.
        offset: u64,
        /// What was wrong.
        detail: String,
    },
    /// A caller passed something the engine cannot accept (an option out of range, a bad range).
    #[error("Invalid argument: {0}")]
    InvalidArgument(String),
    /// The database directory is locked by another handle or process.
    #[error("Database locked: {0}")]
    Locked(String),
    /// A file or database does not exist (never used for a missing key).
    #[error("Not found: {0}")]
    NotFound(String),
    /// A background job (flush or compaction) or a WAL write failed; the database refuses
    /// writes until it is reopened. Carries the original error, so its IO kind (ENOSPC as
    /// [`std::io::ErrorKind::StorageFull`], EIO as `Other`, ...) stays visible: see
    /// [`Error::io_kind`].
    #[error("Background error, database is read-only: {0}")]
    BackgroundError(#[source] Box<Error>),
    /// The operation is not possible right now (e.g. the database is shutting down), or a
    /// transaction conflicts with a write made since it read or wrote a key (RocksDB's `Busy`):
    /// an optimistic transaction's commit, or a pessimistic one's lock on a key written after
    /// its snapshot. A conflicting transaction wrote nothing; retry it from the start.
    #[error("Busy: {0}")]
    Busy(String),
    /// The operation is not supported by this handle (RocksDB's `NotSupported`): a write to a
    /// database opened with [`crate::Db::open_read_only`].
    #[error("Not supported: {0}")]
    NotSupported(String),
    /// A transaction waited for a row lock longer than its lock timeout (RocksDB's
    /// `TimedOut`); the operation did nothing and the transaction may go on or roll back.
    #[error("Operation timed out: {0}")]
    TimedOut(String),
    /// A transaction's lock wait would have closed a cycle of waiting transactions (RocksDB's
    /// `Busy` with the `Deadlock` subcode): the wait was refused, the operation did nothing and
    /// the cycle is broken; the message names the cycle.
    #[error("Deadlock: {0}")]
    Deadlock(String),
    /// A transaction ran past its expiration and another transaction took one of its locks
    /// (RocksDB's `Expired`): its commit wrote nothing.
    #[error("Operation expired: {0}")]
    Expired(String),
}

impl Error {
    /// Builds an [`Error::Corruption`].
    pub fn corruption(file: impl fmt::Display, offset: u64, detail: impl Into<String>) -> Error {
        Error::Corruption { file: file.to_string(), offset, detail: detail.into() }
    }

    /// Builds an [`Error::Io`] with a context string.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: context.into(), source }
    }

    /// True for [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// The kind of the operating-system error behind this one, if there is one: for
    /// [`Error::Io`] its source's kind, for [`Error::BackgroundError`] the kind of the error
    /// that stopped the database (so a caller can tell a full disk from a failing one).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Error::Io { source, .. } => Some(source.kind()),
            Error::BackgroundError(e) => e.io_kind(),
            _ => None,
        }
    }

    /// A copy of this error, for handing one failure to many waiters (the `io::Error` source is
    /// rebuilt from its kind and message).
    pub fn duplicate(&self) -> Error {
        match self {
            Error::Io { context, source } => Error::Io {
                context: context.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corruption { file, offset, detail } => {
                Error::Corruption { file: file.clone(), offset: *offset, detail: detail.clone() }
            }
            Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
            Error::Locked(s) => Error::Locked(s.clone()),
            Error::NotFound(s) => Error::NotFound(s.clone()),
            Error::BackgroundError(e) => Error::BackgroundError(Box::new(e.duplicate())),
            Error::Busy(s) => Error::Busy(s.clone()),
            Error::NotSupported(s) => Error::NotSupported(s.clone()),
            Error::TimedOut(s) => Error::TimedOut(s.clone()),
            Error::Deadlock(s) => Error::Deadlock(s.clone()),
            Error::Expired(s) => Error::Expired(s.clone()),
        }
    }
}
