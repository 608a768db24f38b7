//! [`SqliteEngine`]: the OLTP handler interface on SQLite (bundled), one database file
//! `<dir>/oltp.sqlite` in WAL mode with `synchronous=NORMAL` (survives a process crash, as
//! Talus's unsynced WAL does), the schema generated from the same [`TableDef`]s by
//! [`super::sqlite_sql`].
//!
//! Each [`Session`] is its own connection (SQLite's page cache is per connection, so
//! `--cache_size` is divided among the sessions open at once). Transactions: `BEGIN` for a
//! read-only one (a WAL read snapshot, never blocked), `BEGIN IMMEDIATE` otherwise: writers
//! take the database's single write lock at begin and wait for it (busy timeout), so SQLite
//! serializes write transactions where Talus runs them optimistically. A busy or locked
//! database that still surfaces is an [`OltpError::Conflict`] (the transaction is rolled
//! back). Statements are prepared once per connection and cached by text. `--io_limit_*` caps
//! its device: every connection opens through the throttled VFS of those caps
//! ([`crate::ibench::open_connection`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, ErrorCode};
use talus_table::{ColumnType, IndexDef, Row, Scan, TableDef, Value};

use super::engine::{failed, sqlite_size, Engine, OResult, OltpError, OpenMode, Session};
use super::engine_opts::EngineOpts;
use super::sqlite_sql::{create_index, create_table, TableSql};
use crate::ibench::open_connection;

/// The database file inside `--db`.
pub const FILE: &str = "oltp.sqlite";

/// SQLite with every table in one file.
pub struct SqliteEngine {
    dir: PathBuf,
    /// The tables' statements; replaced whole when an index is added.
    tables: RwLock<Arc<Vec<TableSql>>>,
    cache_per_session: u64,
    /// The device caps (`--io_limit_*`): every connection opens through the throttled VFS.
    io_limits: talus::fs::throttle::IoLimits,
}

fn sql_err(what: &str, e: rusqlite::Error) -> OltpError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return OltpError::Conflict(format!("sqlite: {what}: {e}"))
            }
            // SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE.
            ErrorCode::ConstraintViolation if matches!(f.extended_code, 1555 | 2067) => {
                return OltpError::Duplicate(format!("sqlite: {what}: {e}"))
            }
            _ => {}
        }
    }
    failed(&format!("sqlite: {what}"), e)
}

/// A borrowed [`Value`] as an SQL parameter.
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Null => ValueRef::Null,
            Value::I64(v) | Value::DateTime(v) => ValueRef::Integer(*v),
            Value::I32(v) => ValueRef::Integer(i64::from(*v)),
            Value::U64(v) => ValueRef::Integer(*v as i64),
            Value::F64(v) => ValueRef::Real(*v),
            Value::Varchar(s) => ValueRef::Text(s.as_bytes()),
            Value::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

/// Column `i` of a result row as a value of type `ty`.
fn column(r: &rusqlite::Row<'_>, i: usize, ty: ColumnType) -> rusqlite::Result<Value> {
    let bad =
        || rusqlite::Error::InvalidColumnType(i, String::new(), r.get_ref_unwrap(i).data_type());
    Ok(match (r.get_ref(i)?, ty) {
        (ValueRef::Null, _) => Value::Null,
        (ValueRef::Integer(v), ColumnType::I64) => Value::I64(v),
        (ValueRef::Integer(v), ColumnType::DateTime) => Value::DateTime(v),
        (ValueRef::Integer(v), ColumnType::U64) => Value::U64(v as u64),
        (ValueRef::Integer(v), ColumnType::I32) => Value::I32(i32::try_from(v).map_err(|_| bad())?),
        (ValueRef::Real(v), ColumnType::F64) => Value::F64(v),
        (ValueRef::Integer(v), ColumnType::F64) => Value::F64(v as f64),
        (ValueRef::Text(t), ColumnType::Varchar) => {
            Value::Varchar(String::from_utf8(t.to_vec()).map_err(|_| bad())?)
        }
        (ValueRef::Blob(b), ColumnType::Bytes) => Value::Bytes(b.to_vec()),
        _ => return Err(bad()),
    })
}

fn read_row(r: &rusqlite::Row<'_>, types: &[ColumnType], cols: &[usize]) -> rusqlite::Result<Row> {
    cols.iter().enumerate().map(|(i, &c)| column(r, i, types[c])).collect()
}

impl SqliteEngine {
    fn tables(&self) -> Arc<Vec<TableSql>> {
        self.tables.read().clone()
    }

    fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn connect(&self, cache_bytes: u64) -> OResult<Connection> {
        let c = open_connection(&self.path(), false, cache_bytes, false, self.io_limits)
            .map_err(OltpError::Failed)?;
        c.set_prepared_statement_cache_capacity(64);
        Ok(c)
    }
}

impl Engine for SqliteEngine {
    type Session = SqliteSession;
    const NAME: &'static str = "sqlite";

    fn open(
        dir: &Path,
        opts: &EngineOpts,
        tables: &[TableDef],
        mode: OpenMode,
        sessions: usize,
    ) -> OResult<Self> {
        let path = dir.join(FILE);
        match mode {
            OpenMode::Create => {
                if std::fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_some()) {
                    return Err(OltpError::Failed(format!(
                        "--db={} is not empty; prepare needs a new database (remove it first)",
                        dir.display()
                    )));
                }
                std::fs::create_dir_all(dir).map_err(|e| failed(&dir.display().to_string(), e))?;
                let c = open_connection(&path, true, opts.cache_size, false, opts.talus.io_limits)
                    .map_err(OltpError::Failed)?;
                let mut ddl = String::from("BEGIN;");
                for d in tables {
                    ddl.push_str(&create_table(d));
                    ddl.push(';');
                    for i in &d.indexes {
                        ddl.push_str(&create_index(&d.name, i));
                        ddl.push(';');
                    }
                }
                ddl.push_str("COMMIT;");
                c.execute_batch(&ddl).map_err(|e| sql_err("create tables", e))?;
            }
            OpenMode::Existing => {
                if !path.is_file() {
                    return Err(OltpError::Failed(format!("{} does not exist", path.display())));
                }
            }
        }
        let e = SqliteEngine {
            dir: dir.to_path_buf(),
            tables: RwLock::new(Arc::new(tables.iter().map(TableSql::new).collect())),
            cache_per_session: opts.cache_size / sessions.max(1) as u64,
            io_limits: opts.talus.io_limits,
        };
        if mode == OpenMode::Existing {
            let c = e.connect(1 << 20)?;
            for t in e.tables().iter() {
                let n: i64 = c
                    .query_row(
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                        [&t.def.name],
                        |r| r.get(0),
                    )
                    .map_err(|er| sql_err("open", er))?;
                if n != 1 {
                    return Err(OltpError::Failed(format!("sqlite: no table {}", t.def.name)));
                }
            }
        }
        Ok(e)
    }

    fn create_index(&self, table: usize, idx: &IndexDef) -> OResult<()> {
        let t = self.tables().get(table).ok_or_else(|| failed("sqlite", "no such table"))?.clone();
        let c = self.connect(self.cache_per_session.max(64 << 20))?;
        c.execute_batch(&create_index(&t.def.name, idx)).map_err(|e| sql_err("create index", e))?;
        // Sessions opened from now on know the index (their scans name it).
        let mut def = t.def.clone();
        def.indexes.push(idx.clone());
        let mut tables = (*self.tables()).clone();
        tables[table] = TableSql::new(&def);
        *self.tables.write() = Arc::new(tables);
        Ok(())
    }

    fn session(&self) -> OResult<SqliteSession> {
        Ok(SqliteSession {
            conn: self.connect(self.cache_per_session)?,
            tables: self.tables(),
            in_txn: false,
            update_sql: HashMap::new(),
        })
    }

    fn disk_size(&self) -> u64 {
        sqlite_size(&self.dir)
    }

    fn stats_text(&self) -> Option<String> {
        None
    }

    fn verify(&self) -> OResult<String> {
        let c = self.connect(64 << 20)?;
        let r: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| sql_err("integrity_check", e))?;
        if r != "ok" {
            return Err(OltpError::Failed(format!("sqlite: integrity_check: {r}")));
        }
        Ok("sqlite PRAGMA integrity_check: ok".into())
    }

    fn flush(&self) -> OResult<()> {
        let c = self.connect(1 << 20)?;
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").map_err(|e| sql_err("checkpoint", e))
    }
}

/// One connection and its transaction state.
pub struct SqliteSession {
    conn: Connection,
    tables: Arc<Vec<TableSql>>,
    in_txn: bool,
    /// `UPDATE` text by (table, changed-column mask).
    update_sql: HashMap<(usize, u64), String>,
}

impl SqliteSession {
    /// Maps an error; a conflict inside a transaction rolls it back (the contract of
    /// [`OltpError::Conflict`]).
    fn fail(&mut self, what: &str, e: rusqlite::Error) -> OltpError {
        let e = sql_err(what, e);
        if matches!(e, OltpError::Conflict(_)) && self.in_txn {
            let _ = self.rollback();
        }
        e
    }

    fn exec(
        &mut self,
        sql_of: impl Fn(&TableSql) -> &str,
        t: usize,
        params: &[&Value],
    ) -> OResult<usize> {
        let tables = self.tables.clone();
        let sql = sql_of(tables.get(t).ok_or_else(|| failed("sqlite", "no such table"))?);
        let r = self
            .conn
            .prepare_cached(sql)
            .and_then(|mut st| st.execute(params_from_iter(params.iter().map(|v| Param(v)))));
        r.map_err(|e| self.fail("execute", e))
    }
}

impl Session for SqliteSession {
    fn begin(&mut self, read_only: bool) -> OResult<()> {
        if self.in_txn {
            return Err(failed("sqlite", "begin inside a transaction"));
        }
        let sql = if read_only { "BEGIN" } else { "BEGIN IMMEDIATE" };
        self.conn.execute_batch(sql).map_err(|e| sql_err("begin", e))?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> OResult<()> {
        if !self.in_txn {
            return Err(failed("sqlite", "commit without a transaction"));
        }
        let r = self.conn.execute_batch("COMMIT");
        match r {
            Ok(()) => {
                self.in_txn = false;
                Ok(())
            }
            Err(e) => Err(self.fail("commit", e)),
        }
    }

    fn rollback(&mut self) -> OResult<()> {
        if self.in_txn {
            self.in_txn = false;
            self.conn.execute_batch("ROLLBACK").map_err(|e| sql_err("rollback", e))?;
        }
        Ok(())
    }

    fn get(&mut self, t: usize, pk: &[Value]) -> OResult<Option<Row>> {
        let tables = self.tables.clone();
        let ts = tables.get(t).ok_or_else(|| failed("sqlite", "no such table"))?;
        let all: Vec<usize> = (0..ts.types.len()).collect();
        let r = self.conn.prepare_cached(&ts.select).and_then(|mut st| {
            let mut rows = st.query(params_from_iter(pk.iter().map(Param)))?;
            match rows.next()? {
                Some(r) => read_row(r, &ts.types, &all).map(Some),
                None => Ok(None),
            }
        });
        r.map_err(|e| self.fail("get", e))
    }

    fn get_many(&mut self, t: usize, pks: &[Vec<Value>]) -> OResult<Vec<Option<Row>>> {
        let tables = self.tables.clone();
        let ts = tables.get(t).ok_or_else(|| failed("sqlite", "no such table"))?;
        let Some(sql) = ts.select_in(pks.len()).filter(|_| !pks.is_empty()) else {
            return pks.iter().map(|pk| self.get(t, pk)).collect();
        };
        let all: Vec<usize> = (0..ts.types.len()).collect();
        let pkc = ts.pk[0];
        let r = self.conn.prepare_cached(&sql).and_then(|mut st| {
            let mut rows = st.query(params_from_iter(pks.iter().map(|k| Param(&k[0]))))?;
            let mut out: Vec<Option<Row>> = vec![None; pks.len()];
            while let Some(r) = rows.next()? {
                let row = read_row(r, &ts.types, &all)?;
                for (i, k) in pks.iter().enumerate() {
                    if out[i].is_none() && row.get(pkc) == k.first() {
                        out[i] = Some(row.clone());
                    }
                }
            }
            Ok(out)
        });
        r.map_err(|e| self.fail("get_many", e))
    }

    fn scan(&mut self, t: usize, s: &Scan<'_>, mut visit: impl FnMut(Row)) -> OResult<usize> {
        let tables = self.tables.clone();
        let ts = tables.get(t).ok_or_else(|| failed("sqlite", "no such table"))?;
        let (sql, params) = ts.scan(s).map_err(OltpError::Failed)?;
        let cols = ts.projection(s.columns).map_err(OltpError::Failed)?;
        let lim = Value::I64(s.limit.min(i64::MAX as usize) as i64);
        let r = self.conn.prepare_cached(&sql).and_then(|mut st| {
            let all = params.iter().copied().chain(std::iter::once(&lim)).map(Param);
            let mut rows = st.query(params_from_iter(all))?;
            let mut n = 0;
            while let Some(r) = rows.next()? {
                visit(read_row(r, &ts.types, &cols)?);
                n += 1;
            }
            Ok(n)
        });
        r.map_err(|e| self.fail("scan", e))
    }

    fn insert(&mut self, t: usize, row: &Row) -> OResult<()> {
        let params: Vec<&Value> = row.iter().collect();
        self.exec(|ts| &ts.insert, t, &params).map(|_| ())
    }

    fn insert_many(&mut self, t: usize, rows: &[Row]) -> OResult<()> {
        self.begin(false)?;
        for r in rows {
            if let Err(e) = self.insert(t, r) {
                let _ = self.rollback();
                return Err(e);
            }
        }
        self.commit()
    }

    fn update(&mut self, t: usize, old: &Row, new: &Row) -> OResult<bool> {
        let tables = self.tables.clone();
        let ts = tables.get(t).ok_or_else(|| failed("sqlite", "no such table"))?;
        if old.len() != ts.types.len() || new.len() != ts.types.len() || ts.types.len() > 64 {
            return Err(failed("sqlite: update", "row does not fit the table"));
        }
        if ts.pk.iter().any(|&p| old[p] != new[p]) {
            return Err(failed("sqlite: update", "the primary key may not change"));
        }
        let mut mask = 0u64;
        for (i, (a, b)) in old.iter().zip(new).enumerate() {
            if a != b {
                mask |= 1 << i;
            }
        }
        if mask == 0 {
            // Nothing changes; the row must still exist.
            let pk: Vec<Value> = ts.pk.iter().map(|&p| new[p].clone()).collect();
            return Ok(self.get(t, &pk)?.is_some());
        }
        let sql = self.update_sql.entry((t, mask)).or_insert_with(|| ts.update(mask)).clone();
        let params = new
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, v)| v)
            .chain(ts.pk.iter().map(|&p| &new[p]));
        let r = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut st| st.execute(params_from_iter(params.map(Param))));
        r.map(|n| n > 0).map_err(|e| self.fail("update", e))
    }

    fn delete(&mut self, t: usize, pk: &[Value]) -> OResult<bool> {
        let params: Vec<&Value> = pk.iter().collect();
        self.exec(|ts| &ts.delete, t, &params).map(|n| n > 0)
    }
}
