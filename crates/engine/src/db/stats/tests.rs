//! The stats table against the files on disk.

use crate::{Db, Options};

fn sst_files(dir: &std::path::Path) -> (usize, u64) {
    files(dir, ".sst")
}

fn files(dir: &std::path::Path, ext: &str) -> (usize, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().ends_with(ext) {
            n += 1;
            bytes += e.metadata().unwrap().len();
        }
    }
    (n, bytes)
}

fn row<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let line = text.lines().find(|l| l.trim_start().starts_with(name)).unwrap();
    line.split_whitespace().collect()
}

#[test]
fn table_sums_match_the_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        disable_auto_compactions: true,
        target_file_size_base: 64 << 10,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let value = vec![b'v'; 100];
    let mut distinct = std::collections::HashSet::new();
    for round in 0..5u32 {
        for i in 0..500u32 {
            let k = (i * 7919 + round) % 2000;
            distinct.insert(k);
            db.put(format!("key{k:06}"), &value).unwrap();
        }
        db.flush().unwrap();
    }
    let inner = db.inner();
    // Only flushes so far: L0 wrote exactly the bytes on disk.
    let (n0, bytes0) = sst_files(dir.path());
    let levels = inner.stats.level_snaps();
    assert_eq!(levels[0].written, bytes0);
    assert_eq!(inner.stats.flush.snap().written, bytes0);
    assert_eq!(levels[0].count as usize, n0);

    db.compact_range(None, None).unwrap();
    let (n1, bytes1) = sst_files(dir.path());
    let levels = inner.stats.level_snaps();
    // The manual compaction (into the last level: dynamic level bytes) read every L0 file and
    // wrote every file now on disk.
    assert_eq!(levels[6].rn, bytes0);
    assert_eq!(levels[6].rnp1, 0);
    assert_eq!(levels[6].written, bytes1);
    assert_eq!(levels[6].count, 1);
    assert_eq!(levels[6].keys_in, 2500);
    assert_eq!(levels[6].keys_dropped, 2500 - distinct.len() as u64);

    let text = db.property("talus.stats").unwrap();
    let sum = row(&text, "Sum");
    assert_eq!(sum[1], format!("{n1}/0"), "{text}");
    assert_eq!(format!("{} {}", sum[2], sum[3]), crate::human::human_bytes(bytes1));
    // W-Amp = (flush + compaction bytes written) / bytes flushed.
    let wamp: f64 = sum[11].parse().unwrap();
    let expect = (bytes0 + bytes1) as f64 / bytes0 as f64;
    assert!((wamp - expect).abs() <= 0.051, "W-Amp {wamp} vs {expect}\n{text}");
    let l6 = row(&text, "L6");
    assert_eq!(l6[1], format!("{n1}/0"));
    assert_eq!(l6[16], "1", "Comp(cnt) of L6\n{text}");
    assert!(text.contains("Cumulative writes: 2500 writes, 2500 keys, "), "{text}");
    assert!(text.contains("\nFlush(GB): cumulative 0.000, interval 0.000\n"), "{text}");
    // The interval row starts over after a dump.
    let again = db.property("talus.stats").unwrap();
    assert_eq!(row(&again, "Int")[16], "0", "{again}");
    assert!(again.contains("Interval writes: 0 writes, 0 keys, 0 commit groups"), "{again}");
}

#[test]
fn a_recovery_flush_is_counted_as_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options {
        create_if_missing: true,
        disable_auto_compactions: true,
        ..Default::default()
    };
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        for i in 0..1000u32 {
            db.put(format!("key{i:06}"), [b'v'; 100]).unwrap();
        }
        // Closed with the data in the WAL only.
    }
    assert_eq!(sst_files(dir.path()).0, 0);
    let db = Db::open(dir.path(), opts()).unwrap();
    let (n, bytes) = sst_files(dir.path());
    assert_eq!(n, 1, "the reopen flushed the replayed WAL to L0");
    let inner = db.inner();
    assert_eq!(inner.stats.flush.snap().written, bytes);
    assert_eq!(inner.stats.level_snaps()[0].written, bytes);
    assert_eq!(inner.stats.level_snaps()[0].count, 1);
    assert_eq!(inner.stats.level_snaps()[0].keys_in, 1000, "L0's KeyIn: the memtable's entries");
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("[flush] recovered memtable flushed to "), "{log}");
}

/// Fills 400 keys with 2000-byte values, overwrites half of them, each round flushed, then
/// compacts everything; returns the database and its stats text.
fn blob_workload(dir: &std::path::Path, blobs: bool) -> (Db, String) {
    let opts = Options {
        create_if_missing: true,
        disable_auto_compactions: true,
        enable_blob_files: blobs,
        min_blob_size: 1000,
        enable_blob_garbage_collection: blobs,
        blob_garbage_collection_age_cutoff: 1.0,
        ..Default::default()
    };
    let db = Db::open(dir, opts).unwrap();
    for round in 0..2u32 {
        for i in (0..400u32).filter(|i| round == 0 || i % 2 == 0) {
            db.put(format!("key{i:06}"), vec![b'a' + round as u8; 2000]).unwrap();
        }
        db.flush().unwrap();
    }
    if blobs {
        // Before the compaction: L0's Wblob is every blob file's bytes.
        let (_, blob_bytes) = files(dir, ".blob");
        assert_eq!(db.inner().stats.level_snaps()[0].blob_written, blob_bytes);
        assert_eq!(db.inner().stats.flush.snap().blob_written, blob_bytes);
    }
    db.compact_range(None, None).unwrap();
    let text = db.property("talus.stats").unwrap();
    (db, text)
}

#[test]
fn blob_columns_count_blob_file_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (db, text) = blob_workload(dir.path(), true);
    assert!(text.contains(" KeyIn KeyDrop Rblob(GB) Wblob(GB)\n"), "{text}");
    let levels = db.inner().stats.level_snaps();
    // Garbage collection (age cutoff 1.0) read the 200 live values of the first round's files
    // back and wrote them into new blob files at the compaction's output level.
    let out = &levels[6];
    assert!(out.blob_read >= 200 * 2000, "{out:?}");
    assert!(out.blob_written >= 200 * 2000, "{out:?}");
    assert_eq!(levels[0].blob_read, 0);
    // The table bytes leave the blob bytes out: the SSTs hold only keys and blob indexes.
    let (_, sst_bytes) = sst_files(dir.path());
    assert_eq!(out.written, sst_bytes);
    assert!(out.written < out.blob_written / 10, "{out:?}");
    let sum = row(&text, "Sum");
    let (rblob, wblob): (f64, f64) = (sum[20].parse().unwrap(), sum[21].parse().unwrap());
    let gb = |b: u64| (b as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0;
    assert_eq!(rblob, gb(out.blob_read), "{text}");
    assert_eq!(wblob, gb(out.blob_written + levels[0].blob_written), "{text}");
    // W-Amp counts blob writes: (flushed + compacted, tables and blobs) / flushed.
    let flushed = levels[0].written + levels[0].blob_written;
    let all = flushed + out.written + out.blob_written;
    let wamp: f64 = sum[11].parse().unwrap();
    assert!((wamp - all as f64 / flushed as f64).abs() <= 0.051, "{wamp}\n{text}");
}

#[test]
fn blob_columns_are_zero_without_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let (db, text) = blob_workload(dir.path(), false);
    for (l, s) in db.inner().stats.level_snaps().iter().enumerate() {
        assert_eq!((s.blob_read, s.blob_written), (0, 0), "L{l}");
    }
    let sum = row(&text, "Sum");
    assert_eq!((sum[20], sum[21]), ("0.0", "0.0"), "{text}");
    assert_eq!(files(dir.path(), ".blob").0, 0);
}
