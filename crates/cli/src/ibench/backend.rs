//! The engine interface the driver runs the benchmark through.
//!
//! An [`IbenchBackend`] is shared by all driver threads (`Send + Sync`); each thread opens its
//! own [`Session`] (a SQLite connection, or a talus-table handle) and uses it alone. Tables are
//! numbered (one per client, or one shared: [`super::config::Config::tables`]). Errors are
//! strings that name the engine operation that failed; the driver stops the step on the first.
//! One dynamic call per commit or query, none per row.

use super::schema::{IndexSpec, Purchase};

/// Result of a backend call.
pub type BResult<T> = Result<T, String>;

pub use crate::oltp::checksum::Checksum;

/// One engine holding the benchmark's tables.
pub trait IbenchBackend: Send + Sync {
    /// Creates table `table` (no secondary indexes); fails if it exists.
    fn create_table(&self, table: usize) -> BResult<()>;
    /// How many secondary indexes table `table` has; `None` if there is no such table.
    /// Reads only (creates no table or file).
    fn secondary_indexes(&self, table: usize) -> BResult<Option<usize>>;
    /// Creates `indexes` on the populated table `table`.
    fn create_indexes(&self, table: usize, indexes: &[IndexSpec]) -> BResult<()>;
    /// Opens a session on table `table`; `concurrent` sessions are open at once (SQLite divides
    /// its page cache among them).
    fn session(&self, table: usize, concurrent: usize) -> BResult<Box<dyn Session>>;
    /// Point reads the table layer issued so far (talus, rocksdb: PK and unique checks, row
    /// fetches).
    fn point_reads(&self) -> Option<u64>;
    /// Reads the engine issued to its files so far, when each one is a device read (direct
    /// reads: every table-file read, compaction readahead included); `None` otherwise (then the
    /// driver estimates device reads as `read_bytes / 4096`).
    fn device_reads(&self) -> Option<u64> {
        None
    }
    /// Bytes of the database's live files as written (never a preallocated length).
    fn disk_size(&self) -> u64;
    /// The engine's property `name` (RocksDB's names), if it has one: the interval columns of
    /// [`crate::engine_state`] read them.
    fn property(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }
    /// The engine's stats text (RocksDB's `rocksdb.stats` and `STATISTICS:`), if it has one.
    fn stats_text(&self) -> Option<String> {
        None
    }
    /// The checksums of table `table` (rows in primary-key order) and of each of `indexes`
    /// (entries in index order: the index columns and the primary key).
    fn checksum(&self, table: usize, indexes: &[IndexSpec]) -> BResult<Vec<Checksum>>;
    /// Flushes what the engine buffers and closes it.
    fn close(&self) -> BResult<()>;
}

/// One thread's handle on one table.
pub trait Session: Send {
    /// The smallest and largest primary key in the table (None if empty).
    fn pk_bounds(&mut self) -> BResult<Option<(i64, i64)>>;
    /// Inserts `rows` and deletes the rows with primary keys in `delete` in one commit.
    fn write(&mut self, rows: &[Purchase], delete: std::ops::Range<i64>) -> BResult<()>;
    /// Reads up to `limit` rows of secondary index `index` (into [`super::schema::INDEXES`]) in
    /// index order from the first entry whose first column is >= `start`, reading only the
    /// index's columns; returns how many rows came back.
    fn query(&mut self, index: usize, start: i32, limit: usize) -> BResult<usize>;
}

/// The bytes of the SQLite databases under `dir`: main files and their WALs (the `-shm` index
/// of a WAL is shared memory, not data).
pub fn sqlite_size(dir: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with("-shm"))
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
