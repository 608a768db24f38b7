//! The table-layer backend: the schema as talus-table tables on one storage engine `S` (Talus,
//! or RocksDB with the `rocksdb` feature), the same code above both: MyRocks's design.
//!
//! Rows live under `index_id + transactionid`, secondary entries under `index_id + index
//! columns + transactionid` (MyRocks's layout, built by talus-table), so inserting into a table
//! with non-unique secondary indexes writes them blind. `l.x` uses [`Catalog::create_index`]
//! (scan, external sort, sorted-file ingest). A write with deletes is one
//! [`talus_table::Transaction`]; a write of inserts only is one `insert_many` batch. The engine
//! options come from the flags by their RocksDB names ([`crate::table_engines`]).

use talus_table::storage::options_diff::OptionsReport;
use talus_table::{
    Catalog, ColumnDef, ColumnType, CreateIndexOptions, Direction, IndexDef, Scan, Table, TableDef,
    Value,
};

use super::backend::{BResult, Checksum, IbenchBackend, Session};
use super::check::{index_columns, Hasher};
use super::config::Config;
use super::schema::{table_name, IndexSpec, Purchase, COLUMNS, INDEXES};
use crate::table_engines::OpenStorage;

/// The benchmark's tables through talus-table on storage `S`.
pub struct TableBackend<S: OpenStorage> {
    catalog: Catalog<S>,
    sort_memory_bytes: usize,
    direct_reads: bool,
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

/// The engine options for `cfg` (no IO).
pub fn options(cfg: &Config) -> talus::Options {
    // Every step saves the statistics text beside its results (`<step>.stats.txt`).
    talus::Options { statistics: true, ..cfg.db_options.clone() }
}

fn table_def(table: usize) -> TableDef {
    let ty = |c: &str| match c {
        "transactionid" => ColumnType::I64,
        "dateandtime" => ColumnType::DateTime,
        "data" => ColumnType::Varchar,
        _ => ColumnType::I32,
    };
    TableDef {
        name: table_name(table),
        columns: COLUMNS
            .iter()
            .map(|c| ColumnDef { name: c.to_string(), ty: ty(c), nullable: false })
            .collect(),
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
        other => Err(format!("primary key is {other:?}, not an i64")),
    }
}

/// The sum of the `COUNT : n` of RocksDB's `rocksdb.file.read.*.micros` histograms in a
/// statistics text: the table-file reads it issued (each one a device read with direct reads).
fn rocksdb_file_reads(statistics: &str) -> Option<u64> {
    let mut total = None;
    for line in statistics.lines().filter(|l| l.starts_with("rocksdb.file.read.")) {
        let count = line.split("COUNT : ").nth(1).and_then(|r| r.split_whitespace().next());
        if let Some(n) = count.and_then(|c| c.parse::<u64>().ok()) {
            *total.get_or_insert(0) += n;
        }
    }
    total
}

impl<S: OpenStorage> TableBackend<S> {
    /// Opens the database in `cfg.db` (creating it if missing only when the steps start with
    /// `l.i0`: `cfg.db_options.create_if_missing`); the options comparison too, for an engine
    /// that makes one.
    pub fn open(cfg: &Config) -> BResult<(TableBackend<S>, Option<OptionsReport>)> {
        let (db, report) = S::open_for(&cfg.db, &options(cfg), &cfg.accept_option_diff)?;
        let catalog = Catalog::open_with(
            db,
            talus::WriteOptions { sync: cfg.sync, disable_wal: cfg.disable_wal },
        )
        .map_err(|e| err("open catalog", e))?;
        let backend = TableBackend {
            catalog,
            sort_memory_bytes: cfg.sort_memory_bytes as usize,
            direct_reads: cfg.db_options.use_direct_reads,
        };
        Ok((backend, report))
    }

    fn table(&self, t: usize) -> BResult<Table<S>> {
        self.catalog.table(&table_name(t)).map_err(|e| err("open table", e))
    }
}

impl<S: OpenStorage> IbenchBackend for TableBackend<S> {
    fn create_table(&self, table: usize) -> BResult<()> {
        self.catalog.create_table(table_def(table)).map(|_| ()).map_err(|e| err("create table", e))
    }

    fn secondary_indexes(&self, table: usize) -> BResult<Option<usize>> {
        match self.catalog.table(&table_name(table)) {
            Ok(t) => Ok(Some(t.def().indexes.len())),
            Err(talus_table::TableError::NoSuchTable(_)) => Ok(None),
            Err(e) => Err(err("open table", e)),
        }
    }

    fn create_indexes(&self, table: usize, indexes: &[IndexSpec]) -> BResult<()> {
        let opts = CreateIndexOptions {
            sort_memory_bytes: self.sort_memory_bytes,
            ..CreateIndexOptions::default()
        };
        for ix in indexes {
            let def = IndexDef {
                name: ix.name.to_string(),
                columns: ix.columns.iter().map(|c| c.to_string()).collect(),
                unique: ix.unique,
            };
            self.catalog
                .create_index(&table_name(table), def, &opts)
                .map_err(|e| err(&format!("create index {}", ix.name), e))?;
        }
        Ok(())
    }

    fn session(&self, table: usize, _concurrent: usize) -> BResult<Box<dyn Session>> {
        let table = self.table(table)?;
        Ok(Box::new(TableSession { catalog: self.catalog.clone(), table }))
    }

    fn point_reads(&self) -> Option<u64> {
        Some(self.catalog.stats().point_reads)
    }

    fn device_reads(&self) -> Option<u64> {
        if !self.direct_reads {
            return None;
        }
        let db = self.catalog.db();
        match db.property("talus.read-io") {
            Some(text) => talus::perf::ReadIoSnapshot::parse(&text).map(|s| s.file_reads),
            None => rocksdb_file_reads(&db.property("rocksdb.options-statistics")?),
        }
    }

    fn property(&self, name: &str) -> Option<String> {
        self.catalog.db().property(name)
    }

    fn stats_text(&self) -> Option<String> {
        let db = self.catalog.db();
        let stats = db.property("rocksdb.stats")?;
        let statistics = db.property("rocksdb.options-statistics").unwrap_or_default();
        Some(format!("{stats}\nSTATISTICS:\n{statistics}"))
    }

    fn disk_size(&self) -> u64 {
        self.catalog.db().live_size().total()
    }

    fn checksum(&self, table: usize, indexes: &[IndexSpec]) -> BResult<Vec<Checksum>> {
        let t = self.table(table)?;
        let name = table_name(table);
        let mut out = Vec::new();
        let mut h = Hasher::default();
        t.scan_range(&Scan::index("PRIMARY"), |row| {
            row.iter().for_each(|v| h.value(v));
            h.end_entry();
            true
        })
        .map_err(|e| err("check", e))?;
        out.push(h.finish(name.clone()));
        for ix in indexes {
            let cols = index_columns(ix);
            let mut h = Hasher::default();
            let s = Scan { columns: Some(&cols), ..Scan::index(ix.name) };
            t.scan_range(&s, |row| {
                row.iter().for_each(|v| h.value(v));
                h.end_entry();
                true
            })
            .map_err(|e| err("check", e))?;
            out.push(h.finish(format!("{name}.{}", ix.name)));
        }
        Ok(out)
    }

    fn close(&self) -> BResult<()> {
        self.catalog.db().flush_all().map_err(|e| err("flush", e))
    }
}

struct TableSession<S: OpenStorage> {
    catalog: Catalog<S>,
    table: Table<S>,
}

impl<S: OpenStorage> Session for TableSession<S> {
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
            return Err(format!("no index #{index}"));
        };
        let rows = self
            .table
            .scan_columns(name, &[Value::I32(start)], limit, Direction::Forward, cols)
            .map_err(|e| err("query", e))?;
        Ok(rows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_file_reads_sum_the_read_histograms() {
        let text = "rocksdb.block.cache.miss COUNT : 9\n\
            rocksdb.file.read.get.micros P50 : 1.0 P95 : 2.0 P99 : 3.0 P100 : 4.0 COUNT : 12 SUM : 40\n\
            rocksdb.file.read.compaction.micros P50 : 1.0 COUNT : 30 SUM : 90\n";
        assert_eq!(rocksdb_file_reads(text), Some(42));
        assert_eq!(rocksdb_file_reads("rocksdb.block.cache.miss COUNT : 9\n"), None);
    }
}
