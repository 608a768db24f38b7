//! Shared by the table tests: the engine they run on ([`E`]: Talus, or RocksDB when built with
//! the `rocksdb` feature: `cargo test -p talus-table --release --features rocksdb`), a small
//! schema and the index consistency check.
#![allow(dead_code)]

use std::cmp::Ordering;

use talus_table::storage::Batch;
use talus_table::*;

/// The engine under the tests.
#[cfg(not(feature = "rocksdb"))]
pub type E = Db;
/// The engine under the tests.
#[cfg(feature = "rocksdb")]
pub type E = talus_table::storage::rocksdb::RocksDb;

/// Opens the test engine's database at `dir` with `o`.
#[cfg(not(feature = "rocksdb"))]
pub fn open_engine(dir: &std::path::Path, o: Options) -> Result<E> {
    Ok(Db::open(dir, o)?)
}

/// Opens the test engine's database at `dir` with `o`.
#[cfg(feature = "rocksdb")]
pub fn open_engine(dir: &std::path::Path, o: Options) -> Result<E> {
    E::open(dir, &o, &[])
}

/// A catalog over a new (or the existing) database at `dir`, with Talus's default options.
pub fn open_catalog(dir: &std::path::Path, o: Options) -> Catalog<E> {
    Catalog::open(open_engine(dir, Options { create_if_missing: true, ..o }).unwrap()).unwrap()
}

/// Writes raw `key -> value` (`None`: deletes it; `Some(end)` in `range`: deletes `key..end`)
/// below the table layer.
pub fn raw_write(cat: &Catalog<E>, key: &[u8], value: Option<&[u8]>, range_end: Option<&[u8]>) {
    let mut b = <E as Storage>::Batch::default();
    match (value, range_end) {
        (_, Some(end)) => Batch::delete_range(&mut b, key, end),
        (Some(v), None) => Batch::put(&mut b, key, v),
        (None, None) => Batch::delete(&mut b, key),
    }
    cat.db().write_batch(b, &Default::default()).unwrap();
}

pub fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
    ColumnDef { name: name.into(), ty, nullable }
}

pub fn idx(name: &str, cols: &[&str], unique: bool) -> IndexDef {
    IndexDef { name: name.into(), columns: cols.iter().map(|c| c.to_string()).collect(), unique }
}

/// `t(id I64 PK, a I32 NULL, b VARCHAR, c I64)` with index `by_a(a)`.
pub fn table_def(name: &str) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            col("id", ColumnType::I64, false),
            col("a", ColumnType::I32, true),
            col("b", ColumnType::Varchar, false),
            col("c", ColumnType::I64, false),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![idx("by_a", &["a"], false)],
    }
}

pub fn row(id: i64, a: Option<i32>, b: &str, c: i64) -> Row {
    vec![Value::I64(id), a.map_or(Value::Null, Value::I32), Value::Varchar(b.into()), Value::I64(c)]
}

/// Value order as the key encoding promises (same-typed values; NULL first).
pub fn cmp_value(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::I64(x), Value::I64(y)) | (Value::DateTime(x), Value::DateTime(y)) => x.cmp(y),
        (Value::I32(x), Value::I32(y)) => x.cmp(y),
        (Value::U64(x), Value::U64(y)) => x.cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        (Value::Varchar(x), Value::Varchar(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => panic!("mixed types {a:?} {b:?}"),
    }
}

pub fn cmp_row(a: &[Value], b: &[Value]) -> Ordering {
    a.iter().zip(b).map(|(x, y)| cmp_value(x, y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

/// Checks every ready secondary index of `t` against its primary rows: the covering scan of
/// (index columns + PK) is in index order and holds exactly one entry per row; the fetching
/// scan returns the rows themselves, forward and reverse. Returns the rows in PK order.
pub fn check_consistent<S: Storage>(t: &Table<S>, cat: &Catalog<S>) -> Vec<Row> {
    let def = cat.table(&t.def().name).unwrap().def().clone();
    let rows = t.scan("PRIMARY", &[], usize::MAX, Direction::Forward).unwrap();
    assert_eq!(t.verify_indexes().unwrap(), rows.len() as u64);
    for w in rows.windows(2) {
        assert_eq!(cmp_row(&w[0][..1], &w[1][..1]), Ordering::Less, "PK order");
    }
    let mut rev = t.scan("PRIMARY", &[], usize::MAX, Direction::Reverse).unwrap();
    rev.reverse();
    assert_eq!(rev, rows);
    for ix in &def.indexes {
        let mut names: Vec<&str> =
            ix.columns.iter().map(|c| c.strip_suffix(" DESC").unwrap_or(c)).collect();
        let mut desc: Vec<bool> = ix.columns.iter().map(|c| c.ends_with(" DESC")).collect();
        for pk in &def.primary_key {
            if !names.contains(&pk.as_str()) {
                names.push(pk);
                desc.push(false);
            }
        }
        let order = |a: &Row, b: &Row| {
            a.iter()
                .zip(b)
                .zip(&desc)
                .map(|((x, y), d)| if *d { cmp_value(y, x) } else { cmp_value(x, y) })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        let pos: Vec<usize> =
            names.iter().map(|n| def.columns.iter().position(|c| &c.name == n).unwrap()).collect();
        let got = t.scan_columns(&ix.name, &[], usize::MAX, Direction::Forward, &names).unwrap();
        for w in got.windows(2) {
            assert_ne!(
                order(&w[0], &w[1]),
                Ordering::Greater,
                "index {} out of order: {w:?}",
                ix.name
            );
        }
        let mut want: Vec<Row> =
            rows.iter().map(|r| pos.iter().map(|&p| r[p].clone()).collect()).collect();
        want.sort_by(order);
        assert_eq!(got, want, "index {} entries vs rows", ix.name);
        let full = t.scan(&ix.name, &[], usize::MAX, Direction::Forward).unwrap();
        let mut sorted_full = full.clone();
        sorted_full.sort_by(|a, b| cmp_row(&a[..1], &b[..1]));
        assert_eq!(sorted_full, rows, "index {} fetched rows", ix.name);
        let mut back = t.scan(&ix.name, &[], usize::MAX, Direction::Reverse).unwrap();
        back.reverse();
        assert_eq!(back, full, "index {} reverse", ix.name);
    }
    rows
}
