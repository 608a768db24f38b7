//! The SQLite backend: the same schema and indexes on a B-tree that updates in place.
//!
//! One database file per client table (`<db>/purchases_index_<c>.sqlite`, so clients do not
//! serialize on one file lock, as they would not in a server with per-table locks), WAL mode,
//! `synchronous=NORMAL` (`FULL` with `--sync`), `transactionid INTEGER PRIMARY KEY` (the rowid),
//! every write one transaction. Each [`Session`] is its own connection; the page cache
//! (`--cache_size` bytes) is divided among the connections open at once, since SQLite's cache is
//! per connection. Queries use `INDEXED BY` and read only the index's columns (covering).

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use super::backend::{dir_size, BResult, IbenchBackend, Session};
use super::schema::{table_name, Purchase, INDEXES};

/// SQLite with one file per client table.
pub struct SqliteBackend {
    dir: PathBuf,
    cache_size: u64,
    sync: bool,
}

fn err(what: &str, e: rusqlite::Error) -> String {
    format!("sqlite: {what}: {e}")
}

impl SqliteBackend {
    /// A backend on directory `dir` (created if missing when `create`, i.e. the steps start
    /// with `l.i0`).
    pub fn open(dir: &Path, cache_size: u64, sync: bool, create: bool) -> BResult<SqliteBackend> {
        if create {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("sqlite: create {}: {e}", dir.display()))?;
        }
        Ok(SqliteBackend { dir: dir.to_path_buf(), cache_size, sync })
    }

    fn file(&self, client: usize) -> PathBuf {
        self.dir.join(format!("{}.sqlite", table_name(client)))
    }

    fn connect(&self, client: usize, create: bool, cache_bytes: u64) -> BResult<Connection> {
        open_connection(&self.file(client), create, cache_bytes, self.sync)
    }
}

/// Opens one connection on `path` as every benchmark uses SQLite: WAL mode, `synchronous`
/// `NORMAL` (`FULL` with `sync`), a page cache of `cache_bytes`, no mmap, and a long busy
/// timeout (writers wait for the lock instead of failing). Shared with `talus sysbench/tpcc`.
pub fn open_connection(
    path: &Path,
    create: bool,
    cache_bytes: u64,
    sync: bool,
) -> BResult<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let c = Connection::open_with_flags(path, flags)
        .map_err(|e| err(&format!("open {}", path.display()), e))?;
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
    fn create_table(&self, client: usize) -> BResult<()> {
        if self.file(client).exists() {
            return Err(format!("sqlite: {} exists", self.file(client).display()));
        }
        let c = self.connect(client, true, self.cache_size)?;
        c.execute_batch(&format!(
            "CREATE TABLE {} (transactionid INTEGER PRIMARY KEY, dateandtime INTEGER NOT NULL, \
             cashregisterid INTEGER NOT NULL, customerid INTEGER NOT NULL, \
             productid INTEGER NOT NULL, price INTEGER NOT NULL, data TEXT NOT NULL)",
            table_name(client)
        ))
        .map_err(|e| err("create table", e))
    }

    fn secondary_indexes(&self, client: usize) -> BResult<Option<usize>> {
        if !self.file(client).is_file() {
            return Ok(None);
        }
        let c = self.connect(client, false, self.cache_size)?;
        let count = |kind: &str| -> BResult<i64> {
            c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = ?1 AND tbl_name = ?2 \
                 AND name NOT LIKE 'sqlite_%'",
                params![kind, table_name(client)],
                |r| r.get(0),
            )
            .map_err(|e| err("read the schema", e))
        };
        if count("table")? == 0 {
            return Ok(None);
        }
        Ok(Some(usize::try_from(count("index")?).unwrap_or(0)))
    }

    fn create_indexes(&self, client: usize, count: usize) -> BResult<()> {
        let c = self.connect(client, false, self.cache_size)?;
        let t = table_name(client);
        for (name, cols) in INDEXES.iter().take(count) {
            c.execute_batch(&format!("CREATE INDEX {name} ON {t} ({})", cols.join(", ")))
                .map_err(|e| err(&format!("create index {name}"), e))?;
        }
        Ok(())
    }

    fn session(&self, client: usize, concurrent: usize) -> BResult<Box<dyn Session>> {
        let share = self.cache_size / concurrent.max(1) as u64;
        let conn = self.connect(client, false, share)?;
        let t = table_name(client);
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
        dir_size(&self.dir)
    }

    fn close(&self) -> BResult<()> {
        Ok(())
    }
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
        let tx = self.conn.transaction().map_err(|e| err("begin", e))?;
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
