//! [`Storage`]: what the table layer needs from a key-value engine, and nothing more: write
//! batches (put, delete, delete range), point and multi-point reads at the latest state or a
//! snapshot, bounded one-direction cursors, snapshots, sorted-file ingestion for index builds,
//! flush and compaction, and a size and stats report. MyRocks's design: the catalog, key
//! encoding, row codec, transactions and index maintenance above are the same whatever engine
//! is below.
//!
//! Implementations: [`talus::Db`] (`talus_db`, always) and RocksDB 10.4.2 (`rocksdb`, behind
//! the cargo feature `rocksdb`). Dispatch is static: [`crate::Catalog`], [`crate::Table`] and
//! [`crate::Transaction`] take the storage as a type parameter (default `talus::Db`), so a row
//! operation makes no dynamic call on either engine.
//!
//! Contract every implementation keeps (the table layer relies on each point):
//! - `write` applies a batch atomically (all or nothing), in the order of its operations;
//! - a read through `ReadOptions` made from a snapshot sees exactly the writes before the
//!   snapshot was taken; one made without sees the latest state at the call;
//! - a cursor reads at one sequence number (the snapshot's, or the state when it was made),
//!   keys strictly inside `[lower, upper)`, in the direction it was made for;
//! - `ingest_behind` either places the files under every existing key (they lose to any write,
//!   earlier or concurrent) and returns `Ok(true)`, or changes nothing and returns `Ok(false)`
//!   (the caller then ingests them as newest with `ingest` and replays newer writes);
//! - `ingest` moves the files in (they are gone from their path after `Ok`), newest;
//! - errors are [`talus::Error`]s (RocksDB's statuses are mapped onto the same kinds:
//!   `Corruption`, `Io`, `InvalidArgument`, `Busy`, `NotSupported`).
//!
//! Locks: none here; implementations are `Send + Sync` and take whatever their engine takes.
//!
//! Profiles: `get_at`, `multi_get_at` and `write_batch` are `#[inline(never)]` in both
//! implementations (one call per read or commit, a few instructions), so a callgrind profile
//! splits the table layer from the engine at these functions (`bench/ibench_profile.py`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::Fs;
use talus::WriteOptions;

mod identify;
pub mod options_diff;
mod size;
pub mod talus_db;

#[cfg(feature = "rocksdb")]
pub mod rocksdb;

pub use identify::{identify, refuse_other_engine, EngineFiles};
pub use size::{live_dir_size, LiveSize};

/// The engine's result type (errors are the engine's, passed up as [`crate::TableError::Engine`]).
pub type SResult<T> = talus::Result<T>;

/// The order a cursor walks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Ascending keys, from the first.
    Forward,
    /// Descending keys, from the last.
    Reverse,
}

/// What a cursor reads: keys in `[lower, upper)`, at `snapshot` (`None`: the state when the
/// cursor is made), inserting the blocks it reads into the block cache when `fill_cache`.
pub struct Range<'a, S: Storage> {
    /// Inclusive lower bound.
    pub lower: Vec<u8>,
    /// Exclusive upper bound.
    pub upper: Vec<u8>,
    /// The snapshot to read at.
    pub snapshot: Option<&'a S::Snapshot>,
    /// Whether read blocks go into the block cache (false for whole-table scans).
    pub fill_cache: bool,
}

/// A write batch of one engine.
pub trait Batch: Default + Send {
    /// Adds `key -> value`.
    fn put(&mut self, key: &[u8], value: &[u8]);
    /// Adds a delete of `key`.
    fn delete(&mut self, key: &[u8]);
    /// Adds a delete of every key in `[begin, end)`.
    fn delete_range(&mut self, begin: &[u8], end: &[u8]);
    /// Operations added.
    fn count(&self) -> u32;
    /// True if nothing was added.
    fn is_empty(&self) -> bool {
        self.count() == 0
    }
}

/// A cursor positioned at its first entry when made, moving in one direction.
pub trait Cursor {
    /// True while positioned at an entry; false at the end or after an error (see `status`).
    fn valid(&self) -> bool;
    /// The current key (only while valid).
    fn key(&self) -> &[u8];
    /// The current value (only while valid).
    fn value(&self) -> &[u8];
    /// Moves to the next entry in the cursor's direction.
    fn advance(&mut self);
    /// The first error met, if any (check when `valid` turns false).
    fn status(&self) -> SResult<()>;
}

/// Writes one sorted file for ingestion.
pub trait SstWriter: Sized {
    /// Adds `key -> value`; keys strictly increasing.
    fn put(&mut self, key: &[u8], value: &[u8]) -> SResult<()>;
    /// Approximate bytes written so far.
    fn file_size(&self) -> u64;
    /// Writes the file's index and footer and syncs it.
    fn finish(self) -> SResult<()>;
}

/// A key-value engine under the table layer; see the module doc for the contract.
pub trait Storage: Send + Sync + Sized + 'static {
    /// The engine's name (`talus`, `rocksdb`), as the tools spell it.
    const NAME: &'static str;
    /// A consistent view, released when the last clone is dropped.
    type Snapshot: Clone + Send + Sync;
    /// A read view (latest state or a snapshot), made once and used for many reads.
    type ReadOptions: Send + Sync;
    /// A write batch.
    type Batch: Batch;
    /// A cursor.
    type Cursor: Cursor;
    /// A sorted-file writer.
    type SstWriter: SstWriter;

    /// The read view at `snapshot` (`None`: the latest state at each read).
    fn read_options(&self, snapshot: Option<&Self::Snapshot>) -> Self::ReadOptions;
    /// The value of `key`.
    fn get_at(&self, key: &[u8], ro: &Self::ReadOptions) -> SResult<Option<Vec<u8>>>;
    /// The values of `keys`, from one consistent view, in the order given.
    fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        ro: &Self::ReadOptions,
    ) -> Vec<SResult<Option<Vec<u8>>>>;
    /// Applies `batch` atomically.
    fn write_batch(&self, batch: Self::Batch, wo: &WriteOptions) -> SResult<()>;
    /// A snapshot of the current state.
    fn take_snapshot(&self) -> Self::Snapshot;
    /// A cursor over `range`, positioned at its first entry in `walk` order.
    fn cursor(&self, range: Range<'_, Self>, walk: Walk) -> Self::Cursor;

    /// The database directory.
    fn dir(&self) -> &Path;
    /// An identity of this open database: the same for every clone of the handle, different
    /// from every other handle alive (one catalog per database is enforced on it).
    fn instance(&self) -> usize;
    /// The file system the table layer's scratch files (index-build sort runs) go through.
    fn scratch_fs(&self) -> Arc<dyn Fs>;
    /// A writer of a sorted file at `path` with the engine's table options (bottommost level).
    fn sst_writer(&self, path: &Path) -> SResult<Self::SstWriter>;
    /// Ingests `paths` below every existing key; `Ok(false)` if the engine refuses (nothing
    /// changed).
    fn ingest_behind(&self, paths: &[PathBuf]) -> SResult<bool>;
    /// Ingests `paths` as the newest data, moving them in.
    fn ingest(&self, paths: &[PathBuf]) -> SResult<()>;

    /// Writes the memtables to table files and waits.
    fn flush_all(&self) -> SResult<()>;
    /// Compacts every key down to the last level and waits.
    fn compact_all(&self) -> SResult<()>;
    /// The bytes of the database's live files: [`LiveSize`].
    fn live_size(&self) -> LiveSize;
    /// A named property, RocksDB's names (`rocksdb.stats`, `rocksdb.options-statistics`,
    /// `rocksdb.estimate-num-keys`, ...); `None` if the engine has no such property.
    fn property(&self, name: &str) -> Option<String>;
}
