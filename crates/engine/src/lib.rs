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
//! merge operators ([`MergeOperator`], [`merge`]: the built-ins), compaction filters
//! ([`CompactionFilter`]) and values that expire ([`DbWithTtl`]);
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
#[doc(hidden)]
pub mod blob;
pub mod cache;
#[doc(hidden)]
pub mod coding;
pub mod column_family;
#[doc(hidden)]
pub mod compaction;
pub mod compaction_filter;
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
pub mod merge;
pub mod options;
pub mod options_file;
pub mod perf;
mod prefetch;
#[doc(hidden)]
pub mod sst;
mod statistics;
mod sync;
pub mod ttl;
pub mod txn;
#[doc(hidden)]
pub mod version;
#[doc(hidden)]
pub mod wal;

pub use backup::{BackupEngine, BackupInfo};
pub use batch::WriteBatch;
pub use column_family::{ColumnFamily, ColumnFamilyDescriptor};
pub use compaction_filter::{CompactionFilter, FilterDecision, FilterValueType};
pub use db::{
    destroy_db, Db, IngestOptions, Iter, KeyRange, KeyValue, PinnedSlice, RangeIter, RawIter,
    RecoveryReport, Snapshot, WalLoss, WalLossKind,
};
pub use error::{Error, Result};
pub use merge::{AssociativeMergeOperator, MergeError, MergeFailureScope, MergeOperator};
pub use options::{
    check_compression_level, CacheType, ChecksumType, CompactionStyle, CompressionType, IndexType,
    Options, ReadOptions, WalRecoveryMode, WriteOptions, DEFAULT_COMPRESSION_LEVEL,
};
pub use perf::{perf_context, set_perf_level, PerfContext, PerfLevel};
pub use sst::{ExternalSstFileInfo, SstFileWriter};
pub use ttl::DbWithTtl;
pub use txn::{
    OptimisticTransactionDb, OptimisticTransactionDbOptions, OptimisticTransactionOptions,
    Transaction, TransactionDb, TransactionDbOptions, TransactionIter, TransactionOptions,
};
