//! [`TableEngine`]: the OLTP handler interface on talus-table, over storage `S` (Talus, or
//! RocksDB with the `rocksdb` feature): the same table layer above both, MyRocks's design.
//!
//! One storage engine with a [`Catalog`]; each benchmark table is a talus-table table (rows
//! under `table id + primary key`, non-unique secondary entries written blind). A session's
//! transaction is a [`talus_table::Transaction`]: reads see the snapshot taken at `begin` plus
//! its own writes (point reads; scans see the snapshot only), writes are buffered and applied
//! as one batch at commit, which fails with [`OltpError::Conflict`] if another transaction
//! committed a written primary key after `begin` (first committer wins). Outside a
//! transaction, reads see the latest state and each write is one atomic batch (an update of
//! `old` to `new` is then a plain row replace: the caller gets no conflict check, as an
//! autocommit `UPDATE` in MySQL gets none either).
//!
//! Table writes use the engine's default `WriteOptions` (WAL on, not synced per commit), which
//! survives a process crash, as SQLite's `synchronous=NORMAL` in WAL mode does. Sizes are the
//! live files as written ([`talus_table::Storage::live_size`]).

use std::path::Path;

use talus_table::storage::options_diff::OptionsReport;
use talus_table::{Catalog, IndexDef, Row, Scan, Table, TableDef, TableError, Transaction, Value};

use super::engine::{failed, Engine, OResult, OltpError, OpenMode, Session};
use super::engine_opts::EngineOpts;
use crate::table_engines::OpenStorage;

/// A storage engine through talus-table.
pub struct TableEngine<S: OpenStorage> {
    catalog: Catalog<S>,
    names: Vec<String>,
    options: Option<OptionsReport>,
}

/// Talus through talus-table.
pub type TalusEngine = TableEngine<talus::Db>;
/// RocksDB through talus-table.
#[cfg(feature = "rocksdb")]
pub type RocksEngine = TableEngine<talus_table::storage::rocksdb::RocksDb>;

fn table_err(what: &str, e: TableError) -> OltpError {
    match e {
        TableError::Conflict { table } => OltpError::Conflict(format!("{what}: table {table}")),
        TableError::DuplicateKey { table, index } => {
            OltpError::Duplicate(format!("{what}: table {table} index {index}"))
        }
        e => failed(what, e),
    }
}

impl<S: OpenStorage> TableEngine<S> {
    /// A handle on table `t`.
    pub fn table(&self, t: usize) -> OResult<Table<S>> {
        let name = self.names.get(t).ok_or_else(|| failed(S::NAME, format!("no table #{t}")))?;
        self.catalog.table(name).map_err(|e| table_err("open table", e))
    }
}

fn dir_is_empty(dir: &Path) -> OResult<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut rd) => Ok(rd.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(failed(&format!("{}", dir.display()), e)),
    }
}

impl<S: OpenStorage> Engine for TableEngine<S> {
    type Session = TableSession<S>;
    const NAME: &'static str = S::NAME;

    fn open(
        dir: &Path,
        opts: &EngineOpts,
        tables: &[TableDef],
        mode: OpenMode,
        _sessions: usize,
    ) -> OResult<Self> {
        if mode == OpenMode::Create && !dir_is_empty(dir)? {
            return Err(OltpError::Failed(format!(
                "--db={} is not empty; prepare needs a new database (remove it first)",
                dir.display()
            )));
        }
        let o =
            talus::Options { create_if_missing: mode == OpenMode::Create, ..opts.talus.clone() };
        let (db, options) =
            S::open_for(dir, &o, &opts.accept_option_diff).map_err(OltpError::Failed)?;
        let catalog = Catalog::open(db).map_err(|e| table_err("open catalog", e))?;
        for def in tables {
            match mode {
                OpenMode::Create => {
                    catalog.create_table(def.clone()).map_err(|e| table_err("create table", e))?;
                }
                OpenMode::Existing => {
                    catalog.table(&def.name).map_err(|e| table_err("open table", e))?;
                }
            }
        }
        Ok(TableEngine { catalog, names: tables.iter().map(|d| d.name.clone()).collect(), options })
    }

    fn options_report(&self) -> Option<&OptionsReport> {
        self.options.as_ref()
    }

    fn create_index(&self, table: usize, idx: &IndexDef) -> OResult<()> {
        let name = self.names.get(table).ok_or_else(|| failed(S::NAME, "no such table"))?;
        self.catalog
            .create_index(name, idx.clone(), &talus_table::CreateIndexOptions::default())
            .map_err(|e| table_err("create index", e))
    }

    fn session(&self) -> OResult<TableSession<S>> {
        let tables = (0..self.names.len()).map(|t| self.table(t)).collect::<OResult<_>>()?;
        Ok(TableSession { catalog: self.catalog.clone(), tables, txn: None })
    }

    fn disk_size(&self) -> u64 {
        self.catalog.db().live_size().total()
    }

    fn stats_text(&self) -> Option<String> {
        self.catalog.db().property("rocksdb.stats")
    }

    fn property(&self, name: &str) -> Option<String> {
        self.catalog.db().property(name)
    }

    fn verify(&self) -> OResult<String> {
        let mut rows = 0;
        for t in 0..self.names.len() {
            rows += self.table(t)?.verify_indexes().map_err(|e| table_err("verify", e))?;
        }
        Ok(format!(
            "talus-table verify_indexes: {} tables, {rows} rows, every index exact",
            self.names.len()
        ))
    }

    fn flush(&self) -> OResult<()> {
        self.catalog.db().flush_all().map_err(|e| failed(&format!("{}: flush", S::NAME), e))
    }

    fn compact(&self) -> OResult<()> {
        self.flush()?;
        self.catalog.db().compact_all().map_err(|e| failed(&format!("{}: compact", S::NAME), e))
    }
}

/// One thread's tables and its open transaction.
pub struct TableSession<S: OpenStorage> {
    catalog: Catalog<S>,
    tables: Vec<Table<S>>,
    txn: Option<Transaction<S>>,
}

impl<S: OpenStorage> TableSession<S> {
    fn t(&self, t: usize) -> OResult<&Table<S>> {
        self.tables.get(t).ok_or_else(|| failed(S::NAME, format!("no table #{t}")))
    }
}

impl<S: OpenStorage> Session for TableSession<S> {
    fn begin(&mut self, _read_only: bool) -> OResult<()> {
        if self.txn.is_some() {
            return Err(failed(S::NAME, "begin inside a transaction"));
        }
        self.txn = Some(self.catalog.begin());
        Ok(())
    }

    fn commit(&mut self) -> OResult<()> {
        match self.txn.take() {
            Some(tx) => tx.commit().map_err(|e| table_err("commit", e)),
            None => Err(failed(S::NAME, "commit without a transaction")),
        }
    }

    fn rollback(&mut self) -> OResult<()> {
        if let Some(tx) = self.txn.take() {
            tx.rollback();
        }
        Ok(())
    }

    fn get(&mut self, t: usize, pk: &[Value]) -> OResult<Option<Row>> {
        let table = self.t(t)?;
        match &self.txn {
            Some(tx) => tx.get(table, pk),
            None => table.get(pk),
        }
        .map_err(|e| table_err("get", e))
    }

    fn get_many(&mut self, t: usize, pks: &[Vec<Value>]) -> OResult<Vec<Option<Row>>> {
        let table = self.t(t)?;
        match &self.txn {
            Some(tx) => pks.iter().map(|pk| tx.get(table, pk)).collect(),
            None => table.get_many(pks),
        }
        .map_err(|e| table_err("get_many", e))
    }

    fn scan(&mut self, t: usize, s: &Scan<'_>, mut visit: impl FnMut(Row)) -> OResult<usize> {
        let table = self.t(t)?;
        let mut n = 0;
        let f = |r: Row| {
            visit(r);
            n += 1;
            true
        };
        match &self.txn {
            Some(tx) => tx.scan_range(table, s, f),
            None => table.scan_range(s, f),
        }
        .map_err(|e| table_err("scan", e))?;
        Ok(n)
    }

    fn insert(&mut self, t: usize, row: &Row) -> OResult<()> {
        let table = self.tables.get(t).ok_or_else(|| failed(S::NAME, "no such table"))?;
        match &mut self.txn {
            Some(tx) => tx.insert(table, row),
            None => table.insert(row),
        }
        .map_err(|e| table_err("insert", e))
    }

    fn insert_many(&mut self, t: usize, rows: &[Row]) -> OResult<()> {
        self.t(t)?.insert_many(rows).map_err(|e| table_err("insert", e))
    }

    fn update(&mut self, t: usize, _old: &Row, new: &Row) -> OResult<bool> {
        let table = self.tables.get(t).ok_or_else(|| failed(S::NAME, "no such table"))?;
        match &mut self.txn {
            Some(tx) => tx.update(table, new),
            None => table.update(new),
        }
        .map_err(|e| table_err("update", e))
    }

    fn delete(&mut self, t: usize, pk: &[Value]) -> OResult<bool> {
        let table = self.tables.get(t).ok_or_else(|| failed(S::NAME, "no such table"))?;
        match &mut self.txn {
            Some(tx) => tx.delete(table, pk),
            None => table.delete(pk),
        }
        .map_err(|e| table_err("delete", e))
    }
}
