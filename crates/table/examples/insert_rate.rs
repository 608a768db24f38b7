//! Insert rate with and without secondary indexes, reads per insert, and create_index time:
//! a quick look at the blind-write claim (the full benchmark is `talus ibench`).
//!
//! `cargo run --release -p talus-table --example insert_rate -- ROWS [DIR]`

use std::time::Instant;

use talus_table::*;

fn schema(name: &str, with_indexes: bool) -> TableDef {
    let col = |n: &str, ty| ColumnDef { name: n.into(), ty, nullable: false };
    let idx = |n: &str, c: &[&str]| IndexDef {
        name: n.into(),
        columns: c.iter().map(|s| s.to_string()).collect(),
        unique: false,
    };
    TableDef {
        name: name.into(),
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
        indexes: if with_indexes {
            indexes().into_iter().map(|(n, c)| idx(n, c)).collect()
        } else {
            vec![]
        },
    }
}

fn indexes() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("marketsegment", &["productid", "customerid", "price"]),
        ("registersegment", &["cashregisterid", "customerid", "price"]),
        ("pdc", &["price", "dateandtime", "customerid"]),
    ]
}

fn rows(from: i64, n: i64, seed: &mut u64) -> Vec<Row> {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    (from..from + n)
        .map(|i| {
            vec![
                Value::I64(i),
                Value::DateTime(1_700_000_000_000_000 + i * 1000),
                Value::I32((next() % 1000) as i32),
                Value::I32((next() % 100_000) as i32),
                Value::I32((next() % 10_000) as i32),
                Value::I32((next() % 500) as i32),
                Value::Varchar(format!("{:0>10}{:x}", i, next())),
            ]
        })
        .collect()
}

fn load(cat: &Catalog, t: &Table, n: i64) -> f64 {
    let s0 = cat.stats();
    let start = Instant::now();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut i = 0;
    while i < n {
        let b = 1000.min(n - i);
        t.insert_many(&rows(i, b, &mut seed)).unwrap();
        i += b;
    }
    let secs = start.elapsed().as_secs_f64();
    let s = cat.stats();
    println!(
        "  {} rows in {secs:.2}s = {:.0} rows/s; point reads/insert {:.2}, index entries/insert {:.2}, blind {:.2}",
        n,
        n as f64 / secs,
        (s.point_reads - s0.point_reads) as f64 / n as f64,
        (s.index_entries_written - s0.index_entries_written) as f64 / n as f64,
        (s.blind_index_writes - s0.blind_index_writes) as f64 / n as f64,
    );
    n as f64 / secs
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: i64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = args.get(2).map_or_else(|| tmp.path().to_path_buf(), std::path::PathBuf::from);
    let db = Db::open(&dir, Options { create_if_missing: true, ..Default::default() }).unwrap();
    let cat = Catalog::open(db).unwrap();
    println!("no secondary indexes:");
    let plain = load(&cat, &cat.create_table(schema("plain", false)).unwrap(), n);
    println!("3 secondary indexes (marketsegment, registersegment, pdc):");
    let indexed = load(&cat, &cat.create_table(schema("indexed", true)).unwrap(), n);
    println!("  rate with 3 indexes / rate with none = {:.2}", indexed / plain);
    if let Some(stats) = cat.db().property("talus.stats") {
        for l in stats.lines().filter(|l| l.contains("Stall") || l.starts_with("Cumulative writes"))
        {
            println!("  {l}");
        }
    }
    println!("create_index x3 on the populated 'plain' table:");
    for (name, cols) in indexes() {
        let start = Instant::now();
        let def = IndexDef {
            name: name.into(),
            columns: cols.iter().map(|s| s.to_string()).collect(),
            unique: false,
        };
        cat.create_index("plain", def, &CreateIndexOptions::default()).unwrap();
        println!("  {name}: {:.2}s", start.elapsed().as_secs_f64());
    }
    let t = cat.table("plain").unwrap();
    let start = Instant::now();
    assert_eq!(t.verify_indexes().unwrap(), n as u64);
    println!("verify_indexes: consistent ({:.2}s)", start.elapsed().as_secs_f64());
}
