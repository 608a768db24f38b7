//! Talus: a write-optimized LSM storage engine in pure Rust.
//!
//! ```
//! use talus::{Db, Options};
//! let dir = tempfile::tempdir().unwrap();
//! let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
//! db.put(b"hello", b"world").unwrap();
//! assert_eq!(db.get(b"hello").unwrap().as_deref(), Some(&b"world"[..]));
//! ```
//!
//! The public API is this file: [`Db`] (with [`Db::open_read_only`] and the
//! [`RecoveryReport`] of what WAL recovery dropped), [`destroy_db`], [`Options`] (and the
//! enums it takes), [`ReadOptions`], [`WriteOptions`], [`WriteBatch`], [`Snapshot`], the
//! reads without a copy ([`PinnedSlice`]) and the iterators ([`Iter`], [`RangeIter`] of
//! [`KeyValue`], [`RawIter`]), [`Error`], the perf context ([`perf`]), the caches' public types
//! ([`cache`]), the file-system boundary ([`fs`]: bring your own, or inject faults), and for
//! bulk loading [`SstFileWriter`] with [`Db::ingest_external_file`] ([`IngestOptions`]);
//! transactions ([`txn`]: [`OptimisticTransactionDb`] and [`TransactionDb`] make
//! [`Transaction`]s).
//!
//! The other modules are the engine's internals. They are public only so that the tools
//! (`talus ldb`, `talus sst_dump`), the fuzz targets and the tests can reach the formats
//! (log reader, table reader, version edits, internal keys); they are hidden from the
//! documentation (`#[doc(hidden)]`, as fjall's lsm-tree does) and carry no stability promise.
#![deny(missing_docs)]

pub mod backup;
pub mod batch;
pub mod cache;
#[doc(hidden)]
pub mod coding;
#[doc(hidden)]
pub mod compaction;
mod db;
pub mod error;
#[doc(hidden)]
pub mod filename;
pub mod fs;
mod human;
#[doc(hidden)]
pub mod iter;
#[doc(hidden)]
pub mod key;
#[doc(hidden)]
pub mod kill_point;
#[doc(hidden)]
pub mod memtable;
pub mod options;
pub mod options_file;
pub mod perf;
mod prefetch;
#[doc(hidden)]
pub mod sst;
mod statistics;
mod sync;
pub mod txn;
#[doc(hidden)]
pub mod version;
#[doc(hidden)]
pub mod wal;

pub use backup::{BackupEngine, BackupInfo};
pub use batch::WriteBatch;
pub use db::{
    destroy_db, Db, IngestOptions, Iter, KeyRange, KeyValue, PinnedSlice, RangeIter, RawIter,
    RecoveryReport, Snapshot, WalLoss, WalLossKind,
};
pub use error::{Error, Result};
pub use options::{
    CacheType, ChecksumType, CompactionStyle, CompressionType, IndexType, Options, ReadOptions,
    WalRecoveryMode, WriteOptions,
};
pub use perf::{perf_context, set_perf_level, PerfContext, PerfLevel};
pub use sst::{ExternalSstFileInfo, SstFileWriter};
pub use txn::{
    OptimisticTransactionDb, OptimisticTransactionDbOptions, OptimisticTransactionOptions,
    Transaction, TransactionDb, TransactionDbOptions, TransactionIter, TransactionOptions,
};
