//! The engine interface the driver runs the benchmark through.
//!
//! An [`IbenchBackend`] is shared by all driver threads (`Send + Sync`); each thread opens its
//! own [`Session`] (a SQLite connection, or a talus-table handle) and uses it alone. Errors are
//! strings that name the engine operation that failed; the driver stops the step on the first.

use super::schema::Purchase;

/// Result of a backend call.
pub type BResult<T> = Result<T, String>;

/// One engine holding one table per client.
pub trait IbenchBackend: Send + Sync {
    /// Creates client `client`'s table (no secondary indexes); fails if it exists.
    fn create_table(&self, client: usize) -> BResult<()>;
    /// How many secondary indexes client `client`'s table has; `None` if there is no table.
    /// Reads only (creates no table or file).
    fn secondary_indexes(&self, client: usize) -> BResult<Option<usize>>;
    /// Creates the first `count` of the secondary indexes ([`super::schema::INDEXES`]) on
    /// client `client`'s populated table.
    fn create_indexes(&self, client: usize, count: usize) -> BResult<()>;
    /// Opens a session on client `client`'s table; `concurrent` sessions are open at once (SQLite
    /// divides its page cache among them).
    fn session(&self, client: usize, concurrent: usize) -> BResult<Box<dyn Session>>;
    /// Point reads the table layer issued so far (talus only: PK and unique checks, row fetches).
    fn point_reads(&self) -> Option<u64>;
    /// Reads the engine issued to its files so far, when each one is a device read (talus with
    /// direct reads: every table-file read, compaction readahead included); `None` otherwise
    /// (then the driver estimates device reads as `read_bytes / 4096`).
    fn device_reads(&self) -> Option<u64> {
        None
    }
    /// Bytes the database takes on disk.
    fn disk_size(&self) -> u64;
    /// The engine's stats text (RocksDB's `rocksdb.stats` and `STATISTICS:`), if it has one.
    fn stats_text(&self) -> Option<String> {
        None
    }
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

/// Sum of the sizes of the files under `dir` (recursively); 0 for what cannot be read.
pub fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let mut total = 0;
    for e in rd.flatten() {
        match e.metadata() {
            Ok(m) if m.is_dir() => total += dir_size(&e.path()),
            Ok(m) => total += m.len(),
            Err(_) => {}
        }
    }
    total
}
