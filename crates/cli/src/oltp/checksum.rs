//! Content checksums of tables and indexes, one canonical function of the contents whatever
//! engine holds them, so the same seeded work on Talus, RocksDB and SQLite gives equal lines
//! (`talus ibench`'s `check` step, `talus sysbench check`, `talus tpcc check`).
//!
//! A table's checksum is xxh3-64 over its rows in primary-key order, every column in schema
//! order; an index's over its entries in index order, each the index's columns then the primary
//! key's columns it lacks. Each value is hashed in one encoding whatever type carried it
//! ([`Hasher::value`]): an integer as 8 bytes little-endian (SQLite's INTEGER and Talus's
//! `I32`/`I64`/`DateTime` alike), text as its length (u32 LE) and bytes, a double by its bits,
//! NULL as one 0xFF byte. [`table_checksums`] computes them through the OLTP handler interface.

use std::fmt::Write as _;

use talus_table::{Scan, TableDef, Value};
use xxhash_rust::xxh3::Xxh3;

use super::engine::{Engine, OResult, Session};

/// The checksum of one table or index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    /// `table` or `table.index`.
    pub what: String,
    /// Rows or entries.
    pub entries: u64,
    /// xxh3-64 of their values in order.
    pub xxh3: u64,
}

/// The checksum of one table or index being computed.
pub struct Hasher {
    h: Xxh3,
    entries: u64,
}

impl Default for Hasher {
    fn default() -> Self {
        Hasher { h: Xxh3::new(), entries: 0 }
    }
}

impl Hasher {
    /// Adds one value in the canonical encoding (`None`: SQL NULL, which the schema has not).
    pub fn value(&mut self, v: &Value) {
        match v {
            Value::I32(x) => self.int(i64::from(*x)),
            Value::I64(x) | Value::DateTime(x) => self.int(*x),
            Value::U64(x) => self.int(*x as i64),
            Value::Varchar(s) => self.text(s.as_bytes()),
            Value::Bytes(b) => self.text(b),
            Value::F64(f) => self.int(f.to_bits() as i64),
            Value::Null => self.h.update(&[0xFF]),
        }
    }

    /// Adds an integer.
    pub fn int(&mut self, x: i64) {
        self.h.update(&x.to_le_bytes());
    }

    /// Adds text.
    pub fn text(&mut self, b: &[u8]) {
        self.h.update(&(b.len() as u32).to_le_bytes());
        self.h.update(b);
    }

    /// Ends one row or entry.
    pub fn end_entry(&mut self) {
        self.entries += 1;
    }

    /// The result, named `what`.
    pub fn finish(self, what: String) -> Checksum {
        Checksum { what, entries: self.entries, xxh3: self.h.digest() }
    }
}

/// The lines printed for `sums` (`check <what> entries=N xxh3=H`).
pub fn lines(sums: &[Checksum]) -> String {
    let mut s = String::new();
    for c in sums {
        let _ = writeln!(s, "check {} entries={} xxh3={:016x}", c.what, c.entries, c.xxh3);
    }
    s
}

/// `check.csv` for `sums`.
pub fn csv(sums: &[Checksum]) -> String {
    let mut s = String::from("what,entries,xxh3\n");
    for c in sums {
        let _ = writeln!(s, "{},{},{:016x}", c.what, c.entries, c.xxh3);
    }
    s
}

/// The columns of index `ix` of `def` in entry order: its own (without ` DESC`), then the
/// primary key's it lacks.
pub fn entry_columns<'a>(def: &'a TableDef, ix: &'a talus_table::IndexDef) -> Vec<&'a str> {
    let mut cols: Vec<&str> =
        ix.columns.iter().map(|c| c.strip_suffix(" DESC").unwrap_or(c)).collect();
    for p in &def.primary_key {
        if !cols.contains(&p.as_str()) {
            cols.push(p);
        }
    }
    cols
}

/// The checksums of every table of `defs` (by position, as the engine was opened) and of each
/// of its secondary indexes, through one session of `engine`.
pub fn table_checksums<E: Engine>(engine: &E, defs: &[TableDef]) -> OResult<Vec<Checksum>> {
    let mut s = engine.session()?;
    let mut out = Vec::new();
    for (t, def) in defs.iter().enumerate() {
        let mut h = Hasher::default();
        s.scan(t, &Scan::index("PRIMARY"), |row| {
            row.iter().for_each(|v| h.value(v));
            h.end_entry();
        })?;
        out.push(h.finish(def.name.clone()));
        for ix in &def.indexes {
            let cols = entry_columns(def, ix);
            let mut h = Hasher::default();
            let scan = Scan { columns: Some(&cols), ..Scan::index(&ix.name) };
            s.scan(t, &scan, |row| {
                row.iter().for_each(|v| h.value(v));
                h.end_entry();
            })?;
            out.push(h.finish(format!("{}.{}", def.name, ix.name)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_types_hash_alike_and_order_matters() {
        let mut a = Hasher::default();
        a.value(&Value::I32(7));
        a.value(&Value::Varchar("ab".into()));
        a.end_entry();
        let mut b = Hasher::default();
        b.int(7);
        b.text(b"ab");
        b.end_entry();
        let (a, b) = (a.finish("t".into()), b.finish("t".into()));
        assert_eq!(a, b);
        let mut c = Hasher::default();
        c.text(b"ab");
        c.int(7);
        assert_ne!(c.finish("t".into()).xxh3, a.xxh3);
        assert!(lines(&[a]).starts_with("check t entries=1 xxh3="));
    }
}
