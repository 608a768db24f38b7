//! RocksDB under the device caps (`io_limit_*`, docs/design/throttle.md): every file RocksDB
//! opens waits on a Talus throttle, counted as Talus's own files are. Only with the `rocksdb`
//! feature (not in CI):
//! `LINK_TOOLS_LIB=1 bench/build_rocksdb_adapter.sh $PWD/target/rdb /work/rocksdb-tools -- test
//! --release -p talus-table --features rocksdb --test basic rocksdb_throttle`.
#![cfg(feature = "rocksdb")]

use std::path::Path;
use std::time::Instant;

use talus::fs::throttle::IoLimits;
use talus_table::storage::rocksdb::RocksDb;
use talus_table::*;

use crate::common::*;

fn options(limits: IoLimits) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 1 << 20,
        compression: talus::CompressionType::None,
        no_block_cache: true,
        io_limits: limits,
        ..Options::default()
    }
}

/// A 2 KiB row `i`.
fn big_row(i: i64) -> Row {
    row(i, Some(i as i32), &"v".repeat(2048), i)
}

/// The bytes of the files in `dir` (the info LOG's included) and whether there is a LOG.
fn dir_bytes(dir: &Path) -> (u64, bool) {
    let files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
    let log = files.iter().any(|e| e.file_name() == "LOG" && e.metadata().unwrap().len() > 0);
    (files.iter().map(|e| e.metadata().unwrap().len()).sum(), log)
}

/// Inserts rows `0..n` in batches of 16.
fn insert(t: &Table<RocksDb>, n: i64) {
    for b in (0..n).step_by(16) {
        let rows: Vec<Row> = (b..(b + 16).min(n)).map(big_row).collect();
        t.insert_many(&rows).unwrap();
    }
}

#[test]
fn a_table_writer_stays_within_the_write_byte_cap() {
    let cap = 2u64 << 20;
    let dir = tempfile::tempdir().unwrap();
    let limits = IoLimits { write_bytes_per_sec: cap, ..IoLimits::default() };
    let db = RocksDb::open(dir.path(), &options(limits), &[]).unwrap();
    let throttle = db.throttle().expect("a cap makes a throttle").clone();
    let cat = Catalog::open(db).unwrap();
    let t = cat.create_table(table_def("t")).unwrap();
    let before = throttle.stats();
    let t0 = Instant::now();
    // About 4 MiB of rows: their WAL, the flushes of 1 MiB memtables and a compaction, about
    // 11 MiB written, 5 s at the cap.
    insert(&t, 2000);
    // Closing RocksDB ends every write: each byte counted by then was granted.
    drop(t);
    drop(cat);
    let secs = t0.elapsed().as_secs_f64();
    let after = throttle.stats();
    let bytes = after.write_bytes - before.write_bytes;
    let rate = bytes as f64 / secs;
    assert!(secs > 3.0, "{bytes} bytes in {secs:.2} s: the run is too short to judge the cap");
    assert!((rate / cap as f64 - 1.0).abs() < 0.05, "{rate:.0} B/s against a cap of {cap}");
    assert!(after.waits > 0 && after.write_ios > 0, "{after}");
    // Every byte in the directory, the info LOG's included, went through the throttle.
    let (on_disk, log) = dir_bytes(dir.path());
    assert!(log, "RocksDB wrote no info LOG");
    assert!(on_disk <= after.write_bytes, "{on_disk} bytes on disk, {} charged", after.write_bytes);
}

#[test]
fn point_reads_that_miss_stay_within_the_read_iops_cap() {
    let cap = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = RocksDb::open(dir.path(), &options(IoLimits::default()), &[]).unwrap();
    let cat = Catalog::open(db).unwrap();
    insert(&cat.create_table(table_def("t")).unwrap(), 1000);
    cat.db().flush_all().unwrap();
    drop(cat);
    let limits = IoLimits { read_iops: cap, ..IoLimits::default() };
    let o = Options { create_if_missing: false, ..options(limits) };
    let db = RocksDb::open(dir.path(), &o, &[]).unwrap();
    let throttle = db.throttle().unwrap().clone();
    let cat = Catalog::open(db).unwrap();
    let t = cat.table("t").unwrap();
    let before = throttle.stats();
    let t0 = Instant::now();
    // No block cache: every get reads its data block from the file.
    for i in (0..1000).step_by(2) {
        let r = t.get(&[Value::I64(i)]).unwrap().expect("row written above");
        assert_eq!(r, big_row(i));
    }
    let secs = t0.elapsed().as_secs_f64();
    let after = throttle.stats();
    let ios = after.read_ios - before.read_ios;
    let rate = ios as f64 / secs;
    assert!(ios >= 500 && secs > 2.0, "{ios} read IOs in {secs:.2} s");
    assert!((rate / cap as f64 - 1.0).abs() < 0.05, "{rate:.1} IOPS against a cap of {cap}");
}

#[test]
fn without_caps_nothing_waits() {
    let dir = tempfile::tempdir().unwrap();
    let db = RocksDb::open(dir.path(), &options(IoLimits::default()), &[]).unwrap();
    assert!(db.throttle().is_none() && db.io_throttle().is_none());
    drop(db);
    // Caps far above what the test does: everything is counted, nothing waits.
    let dir = tempfile::tempdir().unwrap();
    let huge = 1u64 << 40;
    let limits = IoLimits { iops: huge, bytes_per_sec: huge, ..IoLimits::default() };
    let db = RocksDb::open(dir.path(), &options(limits), &[]).unwrap();
    let throttle = db.throttle().unwrap().clone();
    let cat = Catalog::open(db).unwrap();
    let t = cat.create_table(table_def("t")).unwrap();
    insert(&t, 1000);
    cat.db().flush_all().unwrap();
    assert_eq!(t.get(&[Value::I64(7)]).unwrap(), Some(big_row(7)));
    let s = throttle.stats();
    assert!(s.write_bytes > 2_000_000 && s.write_ios > 0 && s.read_ios > 0, "{s}");
    assert_eq!((s.waits, s.wait_micros), (0, 0), "{s}");
    let stats = cat.db().property("rocksdb.options-statistics");
    assert!(stats.is_none_or(|t| t.contains("talus.io.throttle.wait.micros COUNT : 0")));
}

#[test]
fn opening_and_closing_charges_every_byte_written_the_info_log_included() {
    // Nothing is deleted here, so every file's bytes must have been charged; the info LOG (the
    // options dump, tens of KiB) is most of them.
    let dir = tempfile::tempdir().unwrap();
    let limits = IoLimits { write_iops: 1 << 20, ..IoLimits::default() };
    let db = RocksDb::open(dir.path(), &options(limits), &[]).unwrap();
    let throttle = db.throttle().unwrap().clone();
    drop(db);
    let (on_disk, log) = dir_bytes(dir.path());
    let log_bytes = std::fs::metadata(dir.path().join("LOG")).unwrap().len();
    assert!(log && log_bytes * 2 > on_disk, "LOG {log_bytes} of {on_disk} bytes");
    let s = throttle.stats();
    assert!(on_disk <= s.write_bytes, "{on_disk} bytes on disk, {s}");
}
