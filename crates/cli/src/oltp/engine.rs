//! The storage interface `talus sysbench` and `talus tpcc` run their statements through: a
//! handler API in the manner of MySQL's storage engines (read a row by primary key, read a
//! range of an index, write a row, update a row given its old and new image, delete a row),
//! inside explicit transactions or one statement at a time.
//!
//! Implementations: talus-table over Talus or RocksDB ([`super::table_engine`]) and SQLite
//! through SQL generated from the same [`TableDef`]s ([`super::sqlite_engine`]), so every engine
//! holds the same schema and receives the same row operations in the same order; the benchmark
//! logic (what a transaction reads and writes) is written once, above this interface.
//!
//! Tables are named by their position in the `tables` list given to [`Engine::open`]. An
//! [`Engine`] is shared by the driver threads; each thread opens its own [`Session`] and uses
//! it alone. Everything is generic (no trait objects), so a statement costs no dynamic call.
//!
//! Transactions: [`Session::begin`] starts one; reads inside it see one consistent view (Talus:
//! the snapshot taken at begin, plus the transaction's own writes for point reads; SQLite: its
//! read transaction), writes become visible at [`Session::commit`]. A write-write conflict is
//! reported as [`OltpError::Conflict`] (Talus at commit: another transaction committed a row
//! this one writes; SQLite: a busy database), after which the transaction is gone and the
//! caller retries it. Outside a transaction every call is its own atomic statement.

use std::path::Path;

use talus_table::storage::options_diff::OptionsReport;
use talus_table::{IndexDef, Row, Scan, TableDef, Value};

use super::engine_opts::EngineOpts;

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OltpError {
    /// A write-write conflict or a busy database: the transaction was rolled back; retry it.
    Conflict(String),
    /// A primary key that exists was inserted (the statement, not the transaction, failed).
    Duplicate(String),
    /// Anything else: the run stops with this message.
    Failed(String),
}

impl std::fmt::Display for OltpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OltpError::Conflict(m) => write!(f, "conflict: {m}"),
            OltpError::Duplicate(m) => write!(f, "duplicate key: {m}"),
            OltpError::Failed(m) => f.write_str(m),
        }
    }
}

/// Result of an engine call.
pub type OResult<T> = Result<T, OltpError>;

/// Shorthand for a [`OltpError::Failed`] naming what failed.
pub fn failed(what: &str, e: impl std::fmt::Display) -> OltpError {
    OltpError::Failed(format!("{what}: {e}"))
}

/// Whether [`Engine::open`] creates the tables or expects them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// The directory must be missing or empty; every table is created with its indexes.
    Create,
    /// Every table must exist.
    Existing,
}

/// One database holding the benchmark's tables.
pub trait Engine: Send + Sync + Sized {
    /// A thread's handle.
    type Session: Session;
    /// The engine's name in output and results (`talus`, `rocksdb`, `sqlite`).
    const NAME: &'static str;

    /// Opens the database in `dir` with `tables` (see [`OpenMode`]); `sessions` is how many
    /// sessions will be open at once (SQLite divides its page cache among them).
    fn open(
        dir: &Path,
        opts: &EngineOpts,
        tables: &[TableDef],
        mode: OpenMode,
        sessions: usize,
    ) -> OResult<Self>;
    /// Builds secondary index `idx` on the populated table `table`.
    fn create_index(&self, table: usize, idx: &IndexDef) -> OResult<()>;
    /// Opens a session for one thread.
    fn session(&self) -> OResult<Self::Session>;
    /// Bytes of the database's live files as written (never a preallocated length).
    fn disk_size(&self) -> u64;
    /// The options comparison made at open, for an engine that makes one (RocksDB against
    /// Talus's OPTIONS file).
    fn options_report(&self) -> Option<&OptionsReport> {
        None
    }
    /// The engine's own statistics text, if it has one (`rocksdb.stats`).
    fn stats_text(&self) -> Option<String>;
    /// The engine's property `name` (RocksDB's names), if it has one: the interval columns of
    /// [`crate::engine_state`] read them.
    fn property(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }
    /// The engine's own consistency check of every table (Talus: every secondary index
    /// against the rows; SQLite: `PRAGMA integrity_check`); a summary line, or
    /// [`OltpError::Failed`] naming the first problem.
    fn verify(&self) -> OResult<String>;
    /// Makes everything written durable in the engine's files (Talus: flush the memtable;
    /// SQLite: checkpoint the WAL).
    fn flush(&self) -> OResult<()>;
    /// [`Engine::flush`], then compacts everything (Talus and RocksDB: every level, waiting for
    /// it), so the next process starts with no background work pending; SQLite: the flush.
    fn compact(&self) -> OResult<()> {
        self.flush()
    }
}

/// One thread's handle; see the module doc for transactions.
pub trait Session: Send {
    /// Starts a transaction. `read_only` promises no writes (SQLite: `BEGIN`, else
    /// `BEGIN IMMEDIATE`, which takes the write lock up front).
    fn begin(&mut self, read_only: bool) -> OResult<()>;
    /// Commits the open transaction ([`OltpError::Conflict`]: it was rolled back instead).
    fn commit(&mut self) -> OResult<()>;
    /// Rolls back the open transaction (no-op without one).
    fn rollback(&mut self) -> OResult<()>;
    /// The row of `table` with primary key `pk`.
    fn get(&mut self, table: usize, pk: &[Value]) -> OResult<Option<Row>>;
    /// The rows with primary keys `pks`, in that order (an `IN` list).
    fn get_many(&mut self, table: usize, pks: &[Vec<Value>]) -> OResult<Vec<Option<Row>>>;
    /// Range scan `s` of `table` (see [`Scan`], its `limit` included), calling `visit` with
    /// each row in index order; returns how many rows were visited.
    fn scan(&mut self, table: usize, s: &Scan<'_>, visit: impl FnMut(Row)) -> OResult<usize>;
    /// Inserts `row` ([`OltpError::Duplicate`] if its primary key exists).
    fn insert(&mut self, table: usize, row: &Row) -> OResult<()>;
    /// Inserts `rows` atomically (bulk loading; outside a transaction).
    fn insert_many(&mut self, table: usize, rows: &[Row]) -> OResult<()>;
    /// Replaces row `old` (as read) by `new` (same primary key); false if the row is gone.
    fn update(&mut self, table: usize, old: &Row, new: &Row) -> OResult<bool>;
    /// Deletes the row with primary key `pk`; false if there is none.
    fn delete(&mut self, table: usize, pk: &[Value]) -> OResult<bool>;
}

/// The bytes of the SQLite databases under `dir`: main files and their WALs.
pub fn sqlite_size(dir: &Path) -> u64 {
    crate::ibench::sqlite_size(dir)
}

/// `Value` accessors for the benchmark code: a column of an expected type, or a
/// [`OltpError::Failed`] naming it (rows come from the engine: never trust their shape).
pub trait RowExt {
    /// Column `i` as an integer (`I32`, `I64`, `DateTime`).
    fn int(&self, i: usize) -> OResult<i64>;
    /// Column `i` as text.
    fn text(&self, i: usize) -> OResult<&str>;
}

impl RowExt for [Value] {
    fn int(&self, i: usize) -> OResult<i64> {
        match self.get(i) {
            Some(Value::I32(v)) => Ok(i64::from(*v)),
            Some(Value::I64(v)) | Some(Value::DateTime(v)) => Ok(*v),
            other => {
                Err(OltpError::Failed(format!("column {i}: expected an integer, got {other:?}")))
            }
        }
    }

    fn text(&self, i: usize) -> OResult<&str> {
        match self.get(i) {
            Some(Value::Varchar(s)) => Ok(s),
            other => Err(OltpError::Failed(format!("column {i}: expected text, got {other:?}"))),
        }
    }
}

/// Sessions kept from one run to the next, a slot per thread, so that each thread's caches
/// (SQLite's page cache is per connection) stay warm across the tests of one command.
pub struct SessionPool<S> {
    slots: Vec<parking_lot::Mutex<Option<S>>>,
}

impl<S: Session> SessionPool<S> {
    /// A pool of `n` empty slots.
    pub fn new(n: usize) -> SessionPool<S> {
        SessionPool { slots: (0..n).map(|_| parking_lot::Mutex::new(None)).collect() }
    }

    /// Slot `i`'s session (opened from `engine` if the slot is empty), returned to the slot
    /// when the lease is dropped.
    pub fn lease<E: Engine<Session = S>>(&self, engine: &E, i: usize) -> OResult<Lease<'_, S>> {
        let slot =
            self.slots.get(i).ok_or_else(|| failed("session pool", format!("no slot {i}")))?;
        let s = match slot.lock().take() {
            Some(s) => s,
            None => engine.session()?,
        };
        Ok(Lease { s: Some(s), slot })
    }
}

/// A session borrowed from a [`SessionPool`].
pub struct Lease<'a, S> {
    s: Option<S>,
    slot: &'a parking_lot::Mutex<Option<S>>,
}

impl<S> std::ops::Deref for Lease<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        self.s.as_ref().expect("a lease holds its session until dropped")
    }
}

impl<S> std::ops::DerefMut for Lease<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        self.s.as_mut().expect("a lease holds its session until dropped")
    }
}

impl<S> Drop for Lease<'_, S> {
    fn drop(&mut self) {
        if let Some(s) = self.s.take() {
            *self.slot.lock() = Some(s);
        }
    }
}
