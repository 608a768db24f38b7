//! The Talus backend: the schema as talus-table tables on one [`talus::Db`].
//!
//! Rows live under `index_id + transactionid`, secondary entries under `index_id + index
//! columns + transactionid` (MyRocks's layout, built by talus-table), so inserting into a table
//! with non-unique secondary indexes writes them blind. `l.x` uses [`Catalog::create_index`]
//! (scan, external sort, SST ingest). A write with deletes is one [`talus_table::Transaction`];
//! a write of inserts only is one `insert_many` batch. The engine options come from the flags by
//! their RocksDB names.

use talus::{Db, Options};
use talus_table::{
    Catalog, ColumnDef, ColumnType, CreateIndexOptions, Direction, IndexDef, Table, TableDef, Value,
};

use super::backend::{dir_size, BResult, IbenchBackend, Session};
use super::config::Config;
use super::schema::{table_name, Purchase, INDEXES};

/// Talus through talus-table.
pub struct TalusBackend {
    catalog: Catalog,
    sort_memory_bytes: usize,
    direct_reads: bool,
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("talus: {what}: {e}")
}

/// The engine options for `cfg` (no IO).
pub fn options(cfg: &Config) -> Options {
    // Every step saves the statistics text beside its results (`<step>.stats.txt`).
    Options { statistics: true, ..cfg.db_options.clone() }
}

fn table_def(client: usize) -> TableDef {
    let col = |name: &str, ty| ColumnDef { name: name.into(), ty, nullable: false };
    TableDef {
        name: table_name(client),
        columns: vec![
            col("transactionid", ColumnType::I64),
            col("dateandtime", ColumnType::DateTime),
            col("cashregisterid", ColumnType::I32),
            col("customerid", ColumnType::I32),
            col("productid", ColumnType::I32),
            col("price", ColumnType::I32),
            col("data", ColumnType::Varchar),
        ],
        primary_key: vec!["transactionid".into()],
        indexes: Vec::new(),
    }
}

fn to_row(p: &Purchase) -> Vec<Value> {
    vec![
        Value::I64(p.transactionid),
        Value::DateTime(p.dateandtime),
        Value::I32(p.cashregisterid),
        Value::I32(p.customerid),
        Value::I32(p.productid),
        Value::I32(p.price),
        Value::Varchar(p.data.clone()),
    ]
}

fn pk_of(v: Option<&Value>) -> BResult<i64> {
    match v {
        Some(Value::I64(x)) => Ok(*x),
        other => Err(format!("talus: primary key is {other:?}, not an i64")),
    }
}

impl TalusBackend {
    /// Opens the database in `cfg.db` (creating it if missing only when the steps start with
    /// `l.i0`: `cfg.db_options.create_if_missing`).
    pub fn open(cfg: &Config) -> BResult<TalusBackend> {
        let db = Db::open(&cfg.db, options(cfg)).map_err(|e| err("open", e))?;
        let catalog = Catalog::open_with(
            db,
            talus::WriteOptions { sync: cfg.sync, disable_wal: cfg.disable_wal },
        )
        .map_err(|e| err("open catalog", e))?;
        Ok(TalusBackend {
            catalog,
            sort_memory_bytes: cfg.sort_memory_bytes as usize,
            direct_reads: cfg.db_options.use_direct_reads,
        })
    }
}

impl IbenchBackend for TalusBackend {
    fn create_table(&self, client: usize) -> BResult<()> {
        self.catalog.create_table(table_def(client)).map(|_| ()).map_err(|e| err("create table", e))
    }

    fn secondary_indexes(&self, client: usize) -> BResult<Option<usize>> {
        match self.catalog.table(&table_name(client)) {
            Ok(t) => Ok(Some(t.def().indexes.len())),
            Err(talus_table::TableError::NoSuchTable(_)) => Ok(None),
            Err(e) => Err(err("open table", e)),
        }
    }

    fn create_indexes(&self, client: usize, count: usize) -> BResult<()> {
        let opts = CreateIndexOptions {
            sort_memory_bytes: self.sort_memory_bytes,
            ..CreateIndexOptions::default()
        };
        for (name, cols) in INDEXES.iter().take(count) {
            let def = IndexDef {
                name: name.to_string(),
                columns: cols.iter().map(|c| c.to_string()).collect(),
                unique: false,
            };
            self.catalog
                .create_index(&table_name(client), def, &opts)
                .map_err(|e| err(&format!("create index {name}"), e))?;
        }
        Ok(())
    }

    fn session(&self, client: usize, _concurrent: usize) -> BResult<Box<dyn Session>> {
        let table = self.catalog.table(&table_name(client)).map_err(|e| err("open table", e))?;
        Ok(Box::new(TalusSession { catalog: self.catalog.clone(), table }))
    }

    fn point_reads(&self) -> Option<u64> {
        Some(self.catalog.stats().point_reads)
    }

    fn device_reads(&self) -> Option<u64> {
        if !self.direct_reads {
            return None;
        }
        let text = self.catalog.db().property("talus.read-io")?;
        talus::perf::ReadIoSnapshot::parse(&text).map(|s| s.file_reads)
    }

    fn stats_text(&self) -> Option<String> {
        let db = self.catalog.db();
        let stats = db.property("rocksdb.stats")?;
        let statistics = db.property("rocksdb.options-statistics").unwrap_or_default();
        Some(format!("{stats}\nSTATISTICS:\n{statistics}"))
    }

    fn disk_size(&self) -> u64 {
        dir_size(self.catalog.db().path())
    }

    fn close(&self) -> BResult<()> {
        self.catalog.db().flush().map_err(|e| err("flush", e))
    }
}

struct TalusSession {
    catalog: Catalog,
    table: Table,
}

impl Session for TalusSession {
    fn pk_bounds(&mut self) -> BResult<Option<(i64, i64)>> {
        let Some(first) = self.table.first_pk().map_err(|e| err("first pk", e))? else {
            return Ok(None);
        };
        let last = self
            .table
            .scan_columns("PRIMARY", &[], 1, Direction::Reverse, &["transactionid"])
            .map_err(|e| err("last pk", e))?;
        let hi = pk_of(last.first().and_then(|r| r.first()))?;
        Ok(Some((pk_of(first.first())?, hi)))
    }

    fn write(&mut self, rows: &[Purchase], delete: std::ops::Range<i64>) -> BResult<()> {
        if delete.is_empty() {
            let rows: Vec<Vec<Value>> = rows.iter().map(to_row).collect();
            return self.table.insert_many(&rows).map_err(|e| err("insert", e));
        }
        let mut txn = self.catalog.begin();
        for r in rows {
            txn.insert(&self.table, &to_row(r)).map_err(|e| err("insert", e))?;
        }
        for id in delete {
            txn.delete(&self.table, &[Value::I64(id)]).map_err(|e| err("delete", e))?;
        }
        txn.commit().map_err(|e| err("commit", e))
    }

    fn query(&mut self, index: usize, start: i32, limit: usize) -> BResult<usize> {
        let Some((name, cols)) = INDEXES.get(index) else {
            return Err(format!("talus: no index #{index}"));
        };
        let rows = self
            .table
            .scan_columns(name, &[Value::I32(start)], limit, Direction::Forward, cols)
            .map_err(|e| err("query", e))?;
        Ok(rows.len())
    }
}
