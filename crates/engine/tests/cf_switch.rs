//! Which column families a memtable switch cuts: with `atomic_flush` off (RocksDB's default)
//! only the full family, or the one `flush_cf` names, and `max_total_wal_size` makes the
//! families that hold the oldest WAL switch so that WALs do not pile up; with `atomic_flush`
//! on, every family that holds writes. Files are counted in the database's directory.

use talus::{ColumnFamilyDescriptor, Db, Options, ReadOptions};

fn opts(atomic: bool, max_wal: u64) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        disable_auto_compactions: true,
        atomic_flush: atomic,
        max_total_wal_size: max_wal,
        ..Default::default()
    }
}

fn count(dir: &std::path::Path, ext: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == ext))
        .count()
}

/// Waits until no memtable waits for a flush and no flush runs, so that the WALs counted are
/// the ones the families still need (plus the active one and the one made ahead), not those of
/// flushes the background thread has not finished yet (a count that depends on the machine's
/// load).
fn settle(db: &Db) {
    let start = std::time::Instant::now();
    while db.property_int("rocksdb.num-immutable-mem-table") != Some(0)
        || db.property_int("rocksdb.num-running-flushes") != Some(0)
    {
        assert!(start.elapsed().as_secs() < 30, "flushes did not finish in 30 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Opens a database with family `b`, puts one key in `b`, then `n` 100-byte values into
/// `default` (10,000: about 16 full memtables); returns the most WAL files seen while writing,
/// and the tables.
fn one_key_in_b_then_fill_default(dir: &std::path::Path, o: &Options, n: u32) -> (usize, usize) {
    let db = Db::open(dir, o.clone()).unwrap();
    let b = db.create_column_family("b", o).unwrap();
    db.put_cf(&b, b"kb", b"vb").unwrap();
    let mut most_wals = 0;
    for i in 0..n {
        db.put(format!("k{i:06}"), [7u8; 100]).unwrap();
        if i % 500 == 0 {
            settle(&db);
            most_wals = most_wals.max(count(dir, "log"));
        }
    }
    db.flush().unwrap();
    assert_eq!(db.get_cf(&b, b"kb").unwrap().as_deref(), Some(&b"vb"[..]));
    (most_wals, count(dir, "sst"))
}

#[test]
fn a_full_family_switches_alone_and_the_others_span_wals() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(false, 1 << 30);
    let (wals, _) = one_key_in_b_then_fill_default(dir.path(), &o, 10_000);
    eprintln!("no limit: {wals} WALs");
    // `b`'s one write pins the first WAL, and every WAL after it, until `b` flushes.
    assert!(wals >= 10, "{wals} WALs: `b` was switched with `default`");
    // Its write is replayed from those WALs.
    let db = Db::open_cf(dir.path(), o.clone(), [ColumnFamilyDescriptor::new("b", o.clone())]);
    let db = db.unwrap();
    let b = db.cf_handle("b").unwrap();
    assert_eq!(db.get_cf(&b, b"kb").unwrap().as_deref(), Some(&b"vb"[..]));
}

#[test]
fn atomic_flush_cuts_every_family_with_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (wals, _) = one_key_in_b_then_fill_default(dir.path(), &opts(true, 0), 10_000);
    // The active WAL, the one made ahead, and those of memtables still being flushed.
    assert!(wals <= 4, "{wals} WALs with atomic_flush");
}

#[test]
fn max_total_wal_size_switches_the_family_holding_the_oldest_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (wals, _) = one_key_in_b_then_fill_default(dir.path(), &opts(false, 200 << 10), 10_000);
    eprintln!("max_total_wal_size=200K: {wals} WALs");
    // 200 KiB of old WALs is about three 64 KiB memtables' worth: then `b` is switched and
    // flushed, and the WALs go.
    assert!(wals <= 7, "{wals} WALs with max_total_wal_size=200K");
    // The default limit (four times the families' buffers: 1 MiB here) holds them too: 3.3 MB
    // written is about 52 memtables.
    let dir = tempfile::tempdir().unwrap();
    let (wals, _) = one_key_in_b_then_fill_default(dir.path(), &opts(false, 0), 30_000);
    eprintln!("max_total_wal_size=0: {wals} WALs");
    assert!(wals <= 22, "{wals} WALs with the default max_total_wal_size");
}

#[test]
fn flush_cf_flushes_only_the_family_it_names() {
    for atomic in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(atomic, 0);
        let db = Db::open(dir.path(), o.clone()).unwrap();
        let a = db.create_column_family("a", &o).unwrap();
        let b = db.create_column_family("b", &o).unwrap();
        db.put_cf(&a, b"ka", b"va").unwrap();
        db.put_cf(&b, b"kb", b"vb").unwrap();
        db.flush_cf(&a).unwrap();
        let want = if atomic { 2 } else { 1 };
        assert_eq!(count(dir.path(), "sst"), want, "atomic_flush={atomic}");
        db.flush_cf(&b).unwrap();
        assert_eq!(count(dir.path(), "sst"), 2, "atomic_flush={atomic}");
        let read = |cf| db.iter_cf(cf, &ReadOptions::default()).unwrap().count();
        assert_eq!((read(&a), read(&b)), (1, 1));
    }
}
