//! Forced blob garbage collection (`blob_garbage_collection_force_threshold`): once the oldest
//! blob files are garbage past the threshold, the SSTs that still reference the oldest one are
//! compacted without a manual compaction, and the old files go; with the threshold at 1 (the
//! default) they stay. Also: the SSTs' oldest blob file (MANIFEST tag 402) survives a reopen.

mod common;

use std::time::{Duration, Instant};

use common::{tiny_options, SIM_DB};
use talus::fs::fault::SimFs;
use talus::{Db, Options};

const KEYS: u32 = 2000;

fn key(i: u32) -> String {
    format!("k{i:05}")
}

fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-{round}-").into_bytes();
    v.resize(200, b'0' + (i % 10) as u8);
    v
}

fn blob_numbers(db: &Db) -> Vec<u64> {
    let names = db.property("talus.blob-files").unwrap();
    names.split_whitespace().filter_map(|n| n.strip_suffix(".blob")?.parse().ok()).collect()
}

fn total_blob_bytes(db: &Db) -> u64 {
    db.property("rocksdb.total-blob-file-size").unwrap().parse().unwrap()
}

/// Waits until no flush or compaction has run for a while (at most 60 s).
fn settle(db: &Db) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut quiet = 0;
    while quiet < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        let busy = db.property("rocksdb.num-running-compactions").unwrap() != "0"
            || db.property("rocksdb.num-running-flushes").unwrap() != "0";
        quiet = if busy { 0 } else { quiet + 1 };
    }
}

fn options(fs: std::sync::Arc<SimFs>, age_cutoff: f64, force_threshold: f64) -> Options {
    Options {
        enable_blob_files: true,
        min_blob_size: 100,
        blob_file_size: 64 << 10,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: age_cutoff,
        blob_garbage_collection_force_threshold: force_threshold,
        // Small SSTs: about 130 keys each, so that the upper keys' SSTs meet no compaction.
        target_file_size_base: 4 << 10,
        ..tiny_options(fs, 64 << 10)
    }
}

struct Outcome {
    /// Blob files of the first load still live after the overwrites.
    first_load_left: usize,
    first_load_files: usize,
    /// Total blob bytes after the load, and after the overwrites settled.
    bytes: (u64, u64),
    /// Forced garbage collection compactions (the info log's).
    forced: usize,
    /// The oldest blob file of the first load is still live.
    oldest_left: bool,
}

/// Loads every key in a stride order (so each of the first blob files holds keys of the whole
/// range) and compacts it to the last level; overwrites the lower 70% of the keys twice and
/// compacts that range only (no automatic compaction so far: the same shape every run). The
/// first blob files are then mostly garbage, kept alive by the upper keys' SSTs. Reopened with
/// automatic compactions on, nothing is due by level size: only forced garbage collection may
/// compact those SSTs.
fn overwrite_lower_keys(age_cutoff: f64, force_threshold: f64) -> Outcome {
    let fs = SimFs::new();
    let o = options(fs.clone(), age_cutoff, force_threshold);
    let db = Db::open(SIM_DB, Options { disable_auto_compactions: true, ..o.clone() }).unwrap();
    for j in 0..KEYS {
        let i = (j * 7919) % KEYS;
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let first = blob_numbers(&db);
    let loaded = total_blob_bytes(&db);
    let lower = KEYS * 7 / 10;
    for round in 1..=2 {
        for i in 0..lower {
            db.put(key(i), value(i, round)).unwrap();
        }
    }
    db.flush().unwrap();
    let (lo, hi) = (key(0), key(lower - 1));
    db.compact_range(Some(lo.as_bytes()), Some(hi.as_bytes())).unwrap();
    drop(db);
    let db = Db::open(SIM_DB, o.clone()).unwrap();
    settle(&db);
    let now = blob_numbers(&db);
    let log = String::from_utf8_lossy(&fs.contents("/db/LOG").unwrap_or_default()).into_owned();
    let forced = log.lines().filter(|l| l.contains("[compaction] ForcedBlobGC")).count();
    let first_load_left = first.iter().filter(|n| now.contains(n)).count();
    let check = |db: &Db| {
        for i in 0..KEYS {
            let want = value(i, if i < lower { 2 } else { 0 });
            assert_eq!(db.get(key(i)).unwrap(), Some(want), "{}", key(i));
        }
    };
    check(&db);
    let bytes = (loaded, total_blob_bytes(&db));
    // The blob files and the SSTs' links to them survive a reopen.
    drop(db);
    let db = Db::open(SIM_DB, o).unwrap();
    settle(&db);
    assert_eq!(blob_numbers(&db), now);
    check(&db);
    let oldest_left = now.contains(&first[0]);
    Outcome { first_load_left, first_load_files: first.len(), bytes, forced, oldest_left }
}

#[test]
fn garbage_past_the_threshold_forces_the_oldest_files_out() {
    // Threshold 1 (the default): no forced compaction; the upper keys' SSTs keep first-load
    // blob files alive, mostly garbage.
    let unforced = overwrite_lower_keys(0.5, 1.0);
    assert_eq!(unforced.forced, 0);
    assert!(unforced.first_load_files > 2, "{}", unforced.first_load_files);
    assert!(unforced.oldest_left, "the oldest file stays unforced");
    assert!(unforced.first_load_left > 0);

    let o = overwrite_lower_keys(0.5, 0.5);
    assert!(o.forced > 0, "no forced compaction");
    assert!(!o.oldest_left, "the oldest file was forced out");
    assert_eq!(o.first_load_left, 0, "first load's files left");
    assert_eq!(o.bytes.0, unforced.bytes.0, "the same load");
    assert!(
        o.bytes.1 < unforced.bytes.1,
        "blob bytes {:?}, unforced {:?}",
        o.bytes,
        unforced.bytes
    );
}

#[test]
fn a_batch_running_past_the_age_cutoff_is_not_forced() {
    // Here the oldest batch (the oldest file and the unlinked files after it) is longer than a
    // quarter of the blob files: RocksDB forces nothing then, as not all of it is eligible.
    let o = overwrite_lower_keys(0.25, 0.5);
    assert_eq!(o.forced, 0);
    assert!(o.oldest_left);
}
