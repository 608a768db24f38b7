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
//! [`RecoveryReport`] of what WAL recovery dropped), [`destroy_db`], [`Options`],
//! [`ReadOptions`], [`WriteOptions`], [`WriteBatch`], [`Snapshot`], [`Iter`], [`RawIter`],
//! [`Error`], and for bulk loading
//! [`SstFileWriter`] with [`Db::ingest_external_file`] ([`IngestOptions`]). Everything else is internal
//! and public only so that the tools (`talus sst_dump`, `ldb manifest_dump`) and the tests can
//! reach it; it carries no stability promise.
#![warn(missing_docs)]

pub mod batch;
pub mod cache;
pub mod coding;
pub mod compaction;
mod db;
pub mod error;
pub mod filename;
pub mod fs;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod options;
pub mod options_file;
pub mod perf;
pub mod sst;
mod statistics;
mod sync;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{
    destroy_db, Db, IngestOptions, Iter, RawIter, RecoveryReport, Snapshot, WalLoss, WalLossKind,
};
pub use error::{Error, Result};
pub use options::{
    CompactionStyle, CompressionType, IndexType, Options, ReadOptions, WalRecoveryMode,
    WriteOptions,
};
pub use perf::{perf_context, set_perf_level, PerfContext, PerfLevel};
pub use sst::{ExternalSstFileInfo, SstFileWriter};
