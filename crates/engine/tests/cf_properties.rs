//! `Db::property_cf`: each family answers RocksDB's per-family properties from its own
//! memtables, files and compaction counters; `Db::property` is `default`'s; database-wide
//! names answer the same for every family.

use talus::{ColumnFamily, Db, Options};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        disable_auto_compactions: true,
        level0_file_num_compaction_trigger: 2,
        ..Default::default()
    }
}

fn int(db: &Db, cf: &ColumnFamily, name: &str) -> u64 {
    db.property_int_cf(cf, name).unwrap_or_else(|| panic!("{name} of {}", cf.name()))
}

/// Writes `n` keys `k00000..` with `tag` in their values to `cf` and flushes them to one L0
/// file.
fn fill(db: &Db, cf: &ColumnFamily, n: u32, tag: &str) {
    for i in 0..n {
        db.put_cf(cf, format!("k{i:05}"), format!("{tag}-{i}").repeat(8)).unwrap();
    }
    db.flush_cf(cf).unwrap();
}

fn sst_bytes_on_disk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

#[test]
fn each_family_answers_for_its_own_memtables_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let a = db.create_column_family("a", &opts()).unwrap();
    let d = db.default_column_family();
    for round in 0..3 {
        fill(&db, &a, 500, &format!("r{round}"));
    }
    // Unflushed writes in `default` only.
    for i in 0..10u32 {
        db.put(format!("d{i}"), b"v").unwrap();
    }
    assert_eq!(int(&db, &a, "rocksdb.num-files-at-level0"), 3);
    assert_eq!(int(&db, &d, "rocksdb.num-files-at-level0"), 0);
    assert_eq!(db.property_int("rocksdb.num-files-at-level0"), Some(0), "default's");
    // Three rounds over the same 500 keys: RocksDB's estimate counts every entry.
    assert_eq!(int(&db, &a, "rocksdb.estimate-num-keys"), 1500);
    assert_eq!(int(&db, &d, "rocksdb.estimate-num-keys"), 10);
    assert_eq!(int(&db, &a, "rocksdb.num-entries-active-mem-table"), 0);
    assert_eq!(int(&db, &d, "rocksdb.num-entries-active-mem-table"), 10);
    assert!(
        int(&db, &d, "rocksdb.cur-size-active-mem-table")
            > int(&db, &a, "rocksdb.cur-size-active-mem-table")
    );
    assert_eq!(int(&db, &a, "rocksdb.num-immutable-mem-table"), 0);
    // Every table on disk is `a`'s.
    let total = int(&db, &a, "rocksdb.total-sst-files-size");
    assert_eq!(total, sst_bytes_on_disk(dir.path()));
    assert_eq!(int(&db, &a, "rocksdb.live-sst-files-size"), total);
    assert_eq!(int(&db, &d, "rocksdb.total-sst-files-size"), 0);
    // Three overlapping L0 files: the live estimate counts one of them.
    let live = int(&db, &a, "rocksdb.estimate-live-data-size");
    assert!(live > 0 && live < total / 2, "live {live} of {total}");
    assert_eq!(int(&db, &d, "rocksdb.estimate-live-data-size"), 0);
    // Three L0 files over a trigger of 2: `a` has compaction work pending, `default` none.
    assert!(int(&db, &a, "rocksdb.estimate-pending-compaction-bytes") > 0);
    assert_eq!(int(&db, &d, "rocksdb.estimate-pending-compaction-bytes"), 0);
    assert_eq!(int(&db, &a, "rocksdb.compaction-pending"), 0, "auto compactions are off");
    let levels = db.property_cf(&a, "rocksdb.levelstats").unwrap();
    assert!(levels.lines().nth(2).unwrap().split_whitespace().eq(["0", "3", "0"]), "{levels}");

    // After a full compaction the one sorted run is all live.
    db.compact_range_cf(&a, None, None).unwrap();
    assert_eq!(int(&db, &a, "rocksdb.num-files-at-level0"), 0);
    let total = int(&db, &a, "rocksdb.total-sst-files-size");
    assert_eq!(int(&db, &a, "rocksdb.estimate-live-data-size"), total);
    assert_eq!(int(&db, &a, "rocksdb.estimate-pending-compaction-bytes"), 0);

    // Database-wide names answer the same for each family; text ones are no integers.
    let snap = db.snapshot();
    assert_eq!(int(&db, &a, "rocksdb.num-snapshots"), 1);
    assert_eq!(int(&db, &d, "rocksdb.num-snapshots"), 1);
    drop(snap);
    assert_eq!(db.property_int_cf(&a, "rocksdb.stats"), None);
    assert_eq!(db.property_cf(&a, "rocksdb.no-such-property"), None);
}

#[test]
fn compaction_stats_are_kept_per_family() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let a = db.create_column_family("a", &opts()).unwrap();
    let b = db.create_column_family("b", &opts()).unwrap();
    fill(&db, &a, 2000, "a");
    fill(&db, &a, 2000, "a2");
    db.compact_range_cf(&a, None, None).unwrap();

    let text = db.property_cf(&a, "rocksdb.cfstats").unwrap();
    assert!(text.contains("** Compaction Stats [a] **"), "{text}");
    assert!(!text.contains("** DB Stats **"), "cfstats is the family's part only");
    // Two flushes and one compaction, all `a`'s.
    let l0: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("L0"))
        .map_or_else(|| panic!("no L0 row: {text}"), |l| l.split_whitespace().collect());
    assert_eq!(l0[l0.len() - 6], "2", "Comp(cnt) of L0: {text}");
    assert_eq!(comp_count(&text, "Sum"), "3", "{text}");

    let text = db.property_cf(&b, "rocksdb.stats").unwrap();
    assert!(text.contains("** Compaction Stats [b] **"), "{text}");
    assert!(text.contains("** DB Stats **"), "stats is the family's and the DB's: {text}");
    assert_eq!(comp_count(&text, "Sum"), "0", "{text}");
    assert!(text.lines().all(|l| !l.trim_start().starts_with("L0")), "{text}");
    let text = db.property("rocksdb.stats").unwrap();
    assert!(text.contains("** Compaction Stats [default] **"), "{text}");
    assert_eq!(comp_count(&text, "Sum"), "0", "{text}");
    let dbstats = db.property_cf(&b, "rocksdb.dbstats").unwrap();
    assert!(dbstats.contains("** DB Stats **") && !dbstats.contains("Compaction Stats"));

    // The interval restarts at each dump of that family only.
    let again = db.property_cf(&a, "rocksdb.cfstats").unwrap();
    assert_eq!(comp_count(&again, "Sum"), "3", "{again}");
    assert_eq!(comp_count(&again, "Int"), "0", "no job since the last dump: {again}");
    fill(&db, &a, 10, "a3");
    let third = db.property_cf(&a, "rocksdb.cfstats").unwrap();
    assert_eq!(comp_count(&third, "Int"), "1", "one flush since the last dump: {third}");
}

/// The `Comp(cnt)` column of the compaction stats row `row`.
fn comp_count<'a>(text: &'a str, row: &str) -> &'a str {
    let cols: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with(row))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_else(|| panic!("no {row} row: {text}"));
    cols[cols.len() - 6]
}

#[test]
fn a_handle_of_another_database_has_no_properties() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open(d2.path(), opts()).unwrap();
    let other = db2.create_column_family("x", &opts()).unwrap();
    assert_eq!(db1.property_cf(&other, "rocksdb.estimate-num-keys"), None);
    let mine = db1.create_column_family("x", &opts()).unwrap();
    assert_eq!(db1.property_int_cf(&mine, "rocksdb.estimate-num-keys"), Some(0));
}
