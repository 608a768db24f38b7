//! Power loss in the middle of `create_index` (SimFs): after reopen the index is either absent
//! or complete and consistent with the rows, and the rows are intact. Talus only (its simulated
//! file system).
#![cfg(not(feature = "rocksdb"))]

mod common;

use std::sync::Arc;

use common::*;
use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus_table::*;

const DB: &str = "/db";
const ROWS: i64 = 1500;

fn opts(fs: &Arc<SimFs>) -> Options {
    Options {
        create_if_missing: true,
        fs: fs.clone() as Arc<dyn talus::fs::Fs>,
        write_buffer_size: 64 << 10,
        ..Default::default()
    }
}

/// A database with `ROWS` durable rows; returns the catalog.
fn populated(fs: &Arc<SimFs>) -> Catalog {
    let cat = Catalog::open(Db::open(DB, opts(fs)).unwrap()).unwrap();
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> =
        (0..ROWS).map(|i| row(i, Some((i % 13) as i32), &format!("b{}", i % 17), i)).collect();
    t.insert_many(&rows).unwrap();
    cat.db().flush().unwrap();
    cat
}

fn build(cat: &Catalog) -> Result<()> {
    let o = CreateIndexOptions { sort_memory_bytes: 16 << 10, temp_dir: None };
    cat.create_index("t", idx("by_bc", &["b", "c"], false), &o)
}

#[test]
fn power_loss_during_create_index_leaves_no_index_or_a_complete_one() {
    // Count the build's IO operations once, then lose power at evenly spread points of it.
    let fs = SimFs::new();
    let cat = populated(&fs);
    fs.reset_op_counts();
    build(&cat).unwrap();
    let total = fs.op_counts().total();
    drop(cat);
    assert!(total > 20, "the build does IO ({total} ops)");
    // Up to `total + 1`: the last point injects no fault at all.
    let points: Vec<u64> =
        (1..=40).map(|k| k * total / 40).chain([1, 2, 3, total - 1, total + 1]).collect();
    let (mut absent, mut complete) = (0, 0);
    for (round, n) in points.into_iter().enumerate() {
        let fs = SimFs::new();
        let cat = populated(&fs);
        fs.reset_op_counts();
        fs.fail_after(OpFilter::ALL, n, std::io::ErrorKind::Other, false);
        let r = build(&cat);
        fs.clear_faults();
        drop(cat);
        let mode = if round % 2 == 0 {
            CrashMode::DropAllUnsynced
        } else {
            CrashMode::DropRandomUnsynced { seed: n }
        };
        let fs2 = fs.crash(mode);
        let cat = Catalog::open(Db::open(DB, opts(&fs2)).unwrap()).unwrap();
        let leftovers: Vec<_> = fs2
            .files()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("talus-index-"))
            .collect();
        assert!(leftovers.is_empty(), "n={n}: build files left behind: {leftovers:?}");
        let t = cat.table("t").unwrap();
        let has = t.def().indexes.iter().any(|i| i.name == "by_bc");
        if r.is_ok() {
            assert!(has, "n={n}: an acknowledged build survives");
        }
        if has {
            complete += 1;
        } else {
            absent += 1;
            assert!(matches!(
                t.scan("by_bc", &[], 1, Direction::Forward),
                Err(TableError::NoSuchIndex(_))
            ));
        }
        let rows = check_consistent(&t, &cat);
        assert_eq!(rows.len() as i64, ROWS, "n={n}: rows intact");
        // The leftover range of a dropped build is gone: building the index again works.
        if !has {
            build(&cat).unwrap();
            let t = cat.table("t").unwrap();
            check_consistent(&t, &cat);
        }
    }
    assert!(
        absent > 0 && complete > 0,
        "both outcomes covered: {absent} absent, {complete} complete"
    );
}
