//! The SQLite backend: the same schema and indexes on a B-tree that updates in place.
//!
//! One database file per table (`<db>/purchases_index_<t>.sqlite`: with a table per client,
//! clients do not serialize on one file lock, as they would not in a server with per-table
//! locks; with `--shared_table` they all write one file), WAL mode, `synchronous=NORMAL`
//! (`FULL` with `--sync`), `transactionid INTEGER PRIMARY KEY` (the rowid), every write one
//! `BEGIN IMMEDIATE` transaction. Each [`Session`] is its own connection; the page cache
//! (`--cache_size` bytes) is divided among the connections open at once, since SQLite's cache is
//! per connection. Queries use `INDEXED BY` and read only the index's columns (covering). The
//! size is the main files and their WALs ([`sqlite_size`]).

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};
use talus::fs::throttle::IoLimits;

use super::backend::{sqlite_size, BResult, Checksum, IbenchBackend, Session};
use super::check::{index_columns, Hasher};
use super::schema::{table_name, IndexSpec, Purchase, COLUMNS, INDEXES};

/// SQLite with one file per table.
pub struct SqliteBackend {
    dir: PathBuf,
    cache_size: u64,
    sync: bool,
    io_limits: IoLimits,
}

fn err(what: &str, e: rusqlite::Error) -> String {
    format!("sqlite: {what}: {e}")
}

impl SqliteBackend {
    /// A backend on directory `dir` (created if missing when `create`, i.e. the steps start
    /// with `l.i0`).
    /// `io_limits` caps its device (`--io_limit_*`; [`super::sqlite_vfs`]).
    pub fn open(
        dir: &Path,
        cache_size: u64,
        sync: bool,
        create: bool,
        io_limits: IoLimits,
    ) -> BResult<SqliteBackend> {
        if create {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("sqlite: create {}: {e}", dir.display()))?;
        }
        Ok(SqliteBackend { dir: dir.to_path_buf(), cache_size, sync, io_limits })
    }

    fn file(&self, table: usize) -> PathBuf {
        self.dir.join(format!("{}.sqlite", table_name(table)))
    }

    fn connect(&self, table: usize, create: bool, cache_bytes: u64) -> BResult<Connection> {
        open_connection(&self.file(table), create, cache_bytes, self.sync, self.io_limits)
    }
}

/// Opens one connection on `path` as every benchmark uses SQLite: WAL mode, `synchronous`
/// `NORMAL` (`FULL` with `sync`), a page cache of `cache_bytes`, no mmap, and a long busy
/// timeout (writers wait for the lock instead of failing); with a cap in `io_limits`, through
/// the throttled VFS of those caps ([`super::sqlite_vfs`]). Shared with `talus sysbench/tpcc`.
pub fn open_connection(
    path: &Path,
    create: bool,
    cache_bytes: u64,
    sync: bool,
    io_limits: IoLimits,
) -> BResult<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let opened = if io_limits.is_unlimited() {
        Connection::open_with_flags(path, flags)
    } else {
        let (vfs, _) = super::sqlite_vfs::vfs_for(io_limits)?;
        Connection::open_with_flags_and_vfs(path, flags, vfs.as_str())
    };
    let c = opened.map_err(|e| err(&format!("open {}", path.display()), e))?;
    let kib = (cache_bytes / 1024).max(64);
    let sync = if sync { "FULL" } else { "NORMAL" };
    c.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous={sync}; PRAGMA cache_size=-{kib}; \
         PRAGMA mmap_size=0; PRAGMA busy_timeout=600000;"
    ))
    .map_err(|e| err("pragmas", e))?;
    Ok(c)
}

impl IbenchBackend for SqliteBackend {
    fn create_table(&self, table: usize) -> BResult<()> {
        if self.file(table).exists() {
            return Err(format!("sqlite: {} exists", self.file(table).display()));
        }
        let c = self.connect(table, true, self.cache_size)?;
        c.execute_batch(&format!(
            "CREATE TABLE {} (transactionid INTEGER PRIMARY KEY, dateandtime INTEGER NOT NULL, \
             cashregisterid INTEGER NOT NULL, customerid INTEGER NOT NULL, \
             productid INTEGER NOT NULL, price INTEGER NOT NULL, data TEXT NOT NULL)",
            table_name(table)
        ))
        .map_err(|e| err("create table", e))
    }

    fn secondary_indexes(&self, table: usize) -> BResult<Option<usize>> {
        if !self.file(table).is_file() {
            return Ok(None);
        }
        let c = self.connect(table, false, self.cache_size)?;
        let count = |kind: &str| -> BResult<i64> {
            c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = ?1 AND tbl_name = ?2 \
                 AND name NOT LIKE 'sqlite_%'",
                params![kind, table_name(table)],
                |r| r.get(0),
            )
            .map_err(|e| err("read the schema", e))
        };
        if count("table")? == 0 {
            return Ok(None);
        }
        Ok(Some(usize::try_from(count("index")?).unwrap_or(0)))
    }

    fn create_indexes(&self, table: usize, indexes: &[IndexSpec]) -> BResult<()> {
        let c = self.connect(table, false, self.cache_size)?;
        let t = table_name(table);
        for ix in indexes {
            let unique = if ix.unique { "UNIQUE " } else { "" };
            c.execute_batch(&format!(
                "CREATE {unique}INDEX {} ON {t} ({})",
                ix.name,
                ix.columns.join(", ")
            ))
            .map_err(|e| err(&format!("create index {}", ix.name), e))?;
        }
        Ok(())
    }

    fn session(&self, table: usize, concurrent: usize) -> BResult<Box<dyn Session>> {
        let share = self.cache_size / concurrent.max(1) as u64;
        let conn = self.connect(table, false, share)?;
        let t = table_name(table);
        let queries = INDEXES.map(|(name, cols)| {
            let cols_s = cols.join(", ");
            format!(
                "SELECT {cols_s} FROM {t} INDEXED BY {name} WHERE {} >= ?1 ORDER BY {cols_s} \
                 LIMIT ?2",
                cols[0]
            )
        });
        Ok(Box::new(SqliteSession { conn, table: t, queries }))
    }

    fn point_reads(&self) -> Option<u64> {
        None
    }

    fn disk_size(&self) -> u64 {
        sqlite_size(&self.dir)
    }

    fn checksum(&self, table: usize, indexes: &[IndexSpec]) -> BResult<Vec<Checksum>> {
        let c = self.connect(table, false, self.cache_size)?;
        let t = table_name(table);
        let mut out = Vec::new();
        let cols = COLUMNS.join(", ");
        let sql = format!("SELECT {cols} FROM {t} ORDER BY transactionid");
        out.push(hash_query(&c, &sql, COLUMNS.len(), t.clone())?);
        for ix in indexes {
            let cols = index_columns(ix).join(", ");
            let sql = format!("SELECT {cols} FROM {t} INDEXED BY {} ORDER BY {cols}", ix.name);
            let n = index_columns(ix).len();
            out.push(hash_query(&c, &sql, n, format!("{t}.{}", ix.name))?);
        }
        Ok(out)
    }

    fn close(&self) -> BResult<()> {
        Ok(())
    }
}

/// The checksum of the `n` columns of every row `sql` returns, in order (integers and text, as
/// the other engines' values hash: [`Hasher`]).
fn hash_query(c: &Connection, sql: &str, n: usize, what: String) -> BResult<Checksum> {
    let mut st = c.prepare(sql).map_err(|e| err("prepare check", e))?;
    let mut rows = st.query([]).map_err(|e| err("check", e))?;
    let mut h = Hasher::default();
    while let Some(r) = rows.next().map_err(|e| err("check step", e))? {
        for i in 0..n {
            match r.get_ref(i).map_err(|e| err("check column", e))? {
                rusqlite::types::ValueRef::Integer(x) => h.int(x),
                rusqlite::types::ValueRef::Text(b) => h.text(b),
                other => return Err(format!("sqlite: check: column {i} is {other:?}")),
            }
        }
        h.end_entry();
    }
    Ok(h.finish(what))
}

struct SqliteSession {
    conn: Connection,
    table: String,
    /// The query on each of [`INDEXES`], built once (prepared statements are cached by text).
    queries: [String; 3],
}

impl Session for SqliteSession {
    fn pk_bounds(&mut self) -> BResult<Option<(i64, i64)>> {
        // Two queries: SQLite answers a lone MIN() or MAX() from the B-tree's edge, but both in
        // one SELECT scan the table.
        let bound = |f: &str| -> BResult<Option<i64>> {
            let sql = format!("SELECT {f}(transactionid) FROM {}", self.table);
            self.conn.query_row(&sql, [], |r| r.get(0)).map_err(|e| err("pk bounds", e))
        };
        let lo = bound("MIN")?;
        let hi = bound("MAX")?;
        Ok(lo.zip(hi))
    }

    fn write(&mut self, rows: &[Purchase], delete: std::ops::Range<i64>) -> BResult<()> {
        let t = &self.table;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| err("begin", e))?;
        {
            let mut ins = tx
                .prepare_cached(&format!(
                    "INSERT INTO {t} (transactionid, dateandtime, cashregisterid, customerid, \
                     productid, price, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                ))
                .map_err(|e| err("prepare insert", e))?;
            for r in rows {
                ins.execute(params![
                    r.transactionid,
                    r.dateandtime,
                    r.cashregisterid,
                    r.customerid,
                    r.productid,
                    r.price,
                    r.data
                ])
                .map_err(|e| err("insert", e))?;
            }
            if !delete.is_empty() {
                let mut del = tx
                    .prepare_cached(&format!(
                        "DELETE FROM {t} WHERE transactionid >= ?1 AND transactionid < ?2"
                    ))
                    .map_err(|e| err("prepare delete", e))?;
                del.execute(params![delete.start, delete.end]).map_err(|e| err("delete", e))?;
            }
        }
        tx.commit().map_err(|e| err("commit", e))
    }

    fn query(&mut self, index: usize, start: i32, limit: usize) -> BResult<usize> {
        let Some(sql) = self.queries.get(index) else {
            return Err(format!("sqlite: no index #{index}"));
        };
        let mut st = self.conn.prepare_cached(sql).map_err(|e| err("prepare query", e))?;
        let mut rows = st.query(params![start, limit as i64]).map_err(|e| err("query", e))?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(|e| err("query step", e))? {
            let _: i64 = r.get(0).map_err(|e| err("query column", e))?;
            n += 1;
        }
        Ok(n)
    }
}
