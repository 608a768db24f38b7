//! Key-value separation (blob files): values at or above `min_blob_size` go to blob files at
//! flush and are read back through every read path; a damaged or missing blob file is a
//! `Corruption` naming it; a crash between a blob file and its MANIFEST edit loses nothing
//! acknowledged and leaves no unreferenced blob file after recovery.

mod common;

use std::sync::Arc;

use common::{string_append, tiny_options, SIM_DB};
use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::Fs;
use talus::{Db, Options, ReadOptions, WriteOptions};

fn blob_options(fs: Arc<SimFs>) -> Options {
    Options {
        enable_blob_files: true,
        min_blob_size: 100,
        blob_file_size: 8 << 10,
        ..tiny_options(fs, 64 << 10)
    }
}

fn value(i: u32, len: usize) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    while v.len() < len {
        v.extend_from_slice(format!("{i:08}").as_bytes());
    }
    v.truncate(len);
    v
}

fn blob_files(fs: &SimFs) -> Vec<String> {
    let mut v: Vec<String> = fs
        .files()
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".blob"))
        .collect();
    v.sort();
    v
}

/// Small values stay inline; large ones (every 3rd) go to blob files.
fn expected(i: u32) -> Vec<u8> {
    value(i, if i.is_multiple_of(3) { 3000 + i as usize } else { 20 })
}

fn fill(db: &Db, n: u32) {
    for i in 0..n {
        db.put(format!("k{i:05}"), expected(i)).unwrap();
    }
    db.flush().unwrap();
}

fn check_all(db: &Db, n: u32) {
    for i in 0..n {
        let k = format!("k{i:05}");
        assert_eq!(db.get(&k).unwrap(), Some(expected(i)), "get {k}");
        assert_eq!(db.get_pinned(&k).unwrap().as_deref(), Some(&expected(i)[..]), "pinned {k}");
    }
    let keys: Vec<String> = (0..n).map(|i| format!("k{i:05}")).collect();
    for (i, r) in db.multi_get(&keys, &ReadOptions::default()).into_iter().enumerate() {
        assert_eq!(r.unwrap(), Some(expected(i as u32)), "multi_get {i}");
    }
    let mut it = db.raw_iter(&ReadOptions::default());
    it.seek_to_first();
    let mut i = 0;
    while it.valid() {
        assert_eq!(it.key(), format!("k{i:05}").as_bytes());
        assert_eq!(it.value(), &expected(i)[..], "forward {i}");
        i += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(i, n);
    it.seek_to_last();
    while it.valid() {
        i -= 1;
        assert_eq!(it.key(), format!("k{i:05}").as_bytes());
        assert_eq!(it.value(), &expected(i)[..], "backward {i}");
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(i, 0);
    let pairs: Vec<(Vec<u8>, Vec<u8>)> =
        db.iter(&ReadOptions::default()).map(|kv| kv.unwrap()).collect();
    assert_eq!(pairs.len(), n as usize);
    for (i, (_, v)) in pairs.iter().enumerate() {
        assert_eq!(v, &expected(i as u32));
    }
}

#[test]
fn values_round_trip_through_blob_files_on_every_read_path() {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
    fill(&db, 300);
    assert!(!blob_files(&fs).is_empty(), "large values went to blob files");
    check_all(&db, 300);
    // A snapshot keeps the old blob value after an overwrite.
    let snap = db.snapshot();
    db.put("k00003", value(1, 5000)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("k00003").unwrap(), Some(value(1, 5000)));
    let at = ReadOptions { snapshot: Some(snap), ..Default::default() };
    assert_eq!(db.get_opt("k00003", &at).unwrap(), Some(expected(3)));
    db.put("k00003", expected(3)).unwrap();
    drop(db);
    let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
    check_all(&db, 300);
    drop(db);
    // Read-only, and with blob files disabled: the old blob files are still read.
    let ro = Db::open_read_only(SIM_DB, blob_options(fs.clone())).unwrap();
    check_all(&ro, 300);
    drop(ro);
    let off = Options { enable_blob_files: false, ..blob_options(fs.clone()) };
    let db = Db::open(SIM_DB, off).unwrap();
    check_all(&db, 300);
}

#[test]
fn a_key_scan_reads_no_blob() {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
    fill(&db, 60);
    // Remove the blob files: keys are still listed, a value read reports corruption.
    for name in blob_files(&fs) {
        fs.truncate(format!("{SIM_DB}/{name}"), 0).unwrap();
    }
    let mut it = db.raw_iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 60);
    it.seek(b"k00003");
    assert!(it.valid());
    assert!(it.value().is_empty());
    let e = it.status().unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains(".blob"), "{e}");
    // The pair iterator reports the error instead of an empty value.
    let r: Result<Vec<_>, _> = db.iter(&ReadOptions::default()).collect();
    assert!(r.unwrap_err().is_corruption());
}

#[test]
fn merge_operands_over_a_blob_value() {
    let fs = SimFs::new();
    let o = Options { merge_operator: Some(string_append(false)), ..blob_options(fs.clone()) };
    let db = Db::open(SIM_DB, o).unwrap();
    let base = value(7, 500);
    db.put("m", &base).unwrap();
    db.flush().unwrap();
    db.merge("m", "x").unwrap();
    db.merge("m", "y").unwrap();
    let mut want = base.clone();
    want.extend_from_slice(b",x,y");
    assert_eq!(db.get("m").unwrap(), Some(want.clone()));
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("m").unwrap(), Some(want.clone()));
    let mut it = db.raw_iter(&ReadOptions::default());
    it.seek_to_first();
    assert_eq!(it.value(), &want[..]);
    it.seek_to_last();
    assert_eq!(it.value(), &want[..]);
}

#[test]
fn damaged_blob_files_are_corruption_naming_the_file() {
    for damage in ["deleted", "emptied", "truncated", "flipped"] {
        let fs = SimFs::new();
        let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
        fill(&db, 30);
        let files = blob_files(&fs);
        let path = format!("{SIM_DB}/{}", files[0]);
        let len = fs.contents(&path).unwrap().len() as u64;
        drop(db);
        match damage {
            "deleted" => fs.remove_file(std::path::Path::new(&path)).unwrap(),
            "emptied" => fs.truncate(&path, 0).unwrap(),
            "truncated" => fs.truncate(&path, len / 2).unwrap(),
            _ => fs.flip_bit(&path, 8 * 200).unwrap(),
        }
        if damage != "flipped" {
            // A missing or resized blob file is found at open, before anything is changed.
            let before = snapshot(&fs);
            let e = Db::open(SIM_DB, blob_options(fs.clone())).expect_err("open must fail");
            assert!(e.is_corruption(), "{damage}: {e}");
            assert!(e.to_string().contains(&files[0]), "{damage}: {e}");
            assert_eq!(snapshot(&fs), before, "{damage}: the failed open changed nothing");
            continue;
        }
        let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
        let mut errors = 0;
        for i in (0..30).step_by(3) {
            match db.get(format!("k{i:05}")) {
                Ok(v) => assert_eq!(v, Some(expected(i)), "{damage}: never a wrong value"),
                Err(e) => {
                    assert!(e.is_corruption(), "{damage}: {e}");
                    assert!(e.to_string().contains(&files[0]), "{damage}: {e}");
                    errors += 1;
                }
            }
        }
        assert!(errors > 0, "{damage}: the damage was found");
    }
}

/// Every file's name and contents.
fn snapshot(fs: &SimFs) -> Vec<(std::path::PathBuf, Option<Vec<u8>>)> {
    let mut v: Vec<_> = fs.files().into_iter().map(|p| (p.clone(), fs.contents(&p))).collect();
    v.sort();
    v
}

#[test]
fn a_crash_between_blob_file_and_manifest_loses_nothing_and_leaks_nothing() {
    for mode in [CrashMode::DropAllUnsynced, CrashMode::KeepUnsynced] {
        for fail_at in 1..40u64 {
            let fs = SimFs::new();
            let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
            let sync = WriteOptions { sync: true, ..Default::default() };
            for i in 0..20 {
                db.put_opt(format!("k{i:05}"), expected(i), &sync).unwrap();
            }
            // Fail the flush's file operations after `fail_at` of them, then crash.
            fs.fail_after(OpFilter::ALL, fail_at, std::io::ErrorKind::Other, false);
            let _ = db.flush();
            let crashed = fs.crash(mode);
            drop(db);
            crashed.clear_faults();
            let db = Db::open(SIM_DB, blob_options(crashed.clone())).unwrap();
            for i in 0..20 {
                assert_eq!(
                    db.get(format!("k{i:05}")).unwrap(),
                    Some(expected(i)),
                    "{mode:?} {fail_at}"
                );
            }
            db.flush().unwrap();
            db.compact_range(None, None).unwrap();
            check_all(&db, 20);
            // Every blob file left is one the database lists.
            let live = db.property("talus.blob-files").unwrap_or_default();
            assert!(!blob_files(&crashed).is_empty() && !live.is_empty(), "{mode:?} {fail_at}");
            for name in blob_files(&crashed) {
                assert!(live.contains(&name), "{mode:?} {fail_at}: {name} leaked ({live})");
            }
        }
    }
}

fn total_blob_bytes(db: &Db) -> u64 {
    db.property("rocksdb.total-blob-file-size").unwrap().parse().unwrap()
}

#[test]
fn overwrites_make_garbage_and_compaction_deletes_dead_blob_files() {
    let fs = SimFs::new();
    // No automatic compaction: the four rounds are all in blob files before compact_range.
    let o = Options { disable_auto_compactions: true, ..blob_options(fs.clone()) };
    let db = Db::open(SIM_DB, o).unwrap();
    for round in 0..4u32 {
        for i in 0..100u32 {
            db.put(format!("k{i:05}"), value(i + round, 2000)).unwrap();
        }
        db.flush().unwrap();
    }
    let before = total_blob_bytes(&db);
    let files_before = blob_files(&fs);
    db.compact_range(None, None).unwrap();
    let after = total_blob_bytes(&db);
    // Only the last round is referenced: the older rounds' files were all garbage. A round is
    // 100 records of 16 + 6 + 2000 bytes, plus a 40-byte header and footer per file.
    let round = 100 * 2022;
    assert!(before >= 4 * round && after < round + round / 10, "before {before}, after {after}");
    let files_after = blob_files(&fs);
    assert!(files_after.len() < files_before.len(), "{files_before:?} -> {files_after:?}");
    assert_eq!(db.property("talus.blob-files").unwrap(), files_after.join(" "));
    for i in 0..100u32 {
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(value(i + 3, 2000)));
    }
    drop(db);
    let db = Db::open(SIM_DB, blob_options(fs.clone())).unwrap();
    assert_eq!(total_blob_bytes(&db), after);
    for i in 0..100u32 {
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(value(i + 3, 2000)));
    }
}

#[test]
fn garbage_collection_relocates_live_values_out_of_old_files() {
    let fs = SimFs::new();
    let o = Options {
        disable_auto_compactions: true,
        enable_blob_garbage_collection: true,
        // Of the two flushes' blob files (one file each: 8 KiB files hold 4 values, so more:
        // the cutoff takes the older half of the files, all from the first flush), the first.
        blob_garbage_collection_age_cutoff: 0.5,
        blob_file_size: 1 << 20,
        write_buffer_size: 1 << 20,
        ..blob_options(fs.clone())
    };
    let db = Db::open(SIM_DB, o.clone()).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:05}"), value(i, 2000)).unwrap();
    }
    db.flush().unwrap();
    let old = blob_files(&fs);
    assert_eq!(old.len(), 1);
    // Overwrite half: the old files are half garbage, which plain compaction cannot free.
    for i in (0..100u32).step_by(2) {
        db.put(format!("k{i:05}"), value(i + 1000, 2000)).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(blob_files(&fs).len(), 2);
    db.compact_range(None, None).unwrap();
    let now = blob_files(&fs);
    for name in &old {
        assert!(!now.contains(name), "{name} was relocated and deleted: {now:?}");
    }
    for i in 0..100u32 {
        let want = if i.is_multiple_of(2) { value(i + 1000, 2000) } else { value(i, 2000) };
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(want));
    }
    let stats = db.property("rocksdb.options-statistics").unwrap();
    // The 50 values of the first file still live; the second file's 50 stay where they are.
    assert!(stats.contains("rocksdb.blobdb.gc.num.keys.relocated COUNT : 50\n"), "{stats}");
    assert_eq!(blob_files(&fs).len(), 2, "the second flush's file and the relocation's");
    // Blob files off: new values stay inline, the old blob files are still read.
    drop(db);
    let files = blob_files(&fs);
    let db = Db::open(SIM_DB, Options { enable_blob_files: false, ..o }).unwrap();
    db.put("new", value(5, 3000)).unwrap();
    db.flush().unwrap();
    assert_eq!(blob_files(&fs), files);
    assert_eq!(db.get("new").unwrap(), Some(value(5, 3000)));
    for i in 0..100u32 {
        let want = if i.is_multiple_of(2) { value(i + 1000, 2000) } else { value(i, 2000) };
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(want));
    }
}

fn ticker(db: &Db, name: &str) -> u64 {
    let stats = db.property("rocksdb.options-statistics").unwrap();
    let prefix = format!("{name} COUNT : ");
    let line = stats.lines().find_map(|l| l.strip_prefix(&prefix));
    line.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{name} in {stats}"))
}

const FILE_READ: &str = "rocksdb.blobdb.blob.file.bytes.read";

#[test]
fn the_blob_cache_serves_a_second_read_without_reading_the_file() {
    use talus::blob::cache::PrepopulateBlobCache;
    use talus::cache::LruCache;
    for (cached, prepopulate) in [(false, false), (true, false), (true, true)] {
        let fs = SimFs::new();
        let o = Options {
            blob_cache: cached.then(|| Arc::new(LruCache::new(1 << 20, 0, false)) as _),
            prepopulate_blob_cache: if prepopulate {
                PrepopulateBlobCache::FlushOnly
            } else {
                PrepopulateBlobCache::Disable
            },
            ..blob_options(fs.clone())
        };
        let db = Db::open(SIM_DB, o).unwrap();
        fill(&db, 30);
        let case = format!("cached {cached}, prepopulate {prepopulate}");
        assert_eq!(ticker(&db, FILE_READ), 0, "{case}");
        let k = "k00003";
        assert_eq!(db.get(k).unwrap(), Some(expected(3)), "{case}");
        let first = ticker(&db, FILE_READ);
        assert_eq!(first == 0, prepopulate, "{case}: a prepopulated value is not read: {first}");
        for _ in 0..3 {
            assert_eq!(db.get(k).unwrap(), Some(expected(3)), "{case}");
            assert_eq!(db.get_pinned(k).unwrap().as_deref(), Some(&expected(3)[..]), "{case}");
        }
        let later = ticker(&db, FILE_READ);
        if cached {
            assert_eq!(later, first, "{case}: later reads come from the cache");
            let hits = ticker(&db, "rocksdb.blobdb.cache.hit");
            assert_eq!(hits, if prepopulate { 7 } else { 6 }, "{case}");
            assert_eq!(ticker(&db, "rocksdb.blobdb.cache.miss"), u64::from(!prepopulate));
            // Every value reads right through the cache, the iterators too.
            check_all(&db, 30);
            assert_eq!(ticker(&db, FILE_READ) > later, !prepopulate, "{case}");
        } else {
            assert_eq!(later, 7 * first, "{case}: each read reads the file");
            assert_eq!(ticker(&db, "rocksdb.blobdb.cache.miss"), 0, "{case}: no cache, no count");
        }
    }
}

/// Drops values that start with "drop", rewrites those that start with "change".
struct ByPrefix;

impl talus::CompactionFilter for ByPrefix {
    fn name(&self) -> &str {
        "ByPrefix"
    }
    fn filter(
        &self,
        _level: usize,
        _key: &[u8],
        _t: talus::FilterValueType,
        value: &[u8],
    ) -> talus::FilterDecision {
        if value.starts_with(b"drop") {
            talus::FilterDecision::Remove
        } else if value.starts_with(b"change") {
            talus::FilterDecision::ChangeValue(b"changed".to_vec())
        } else {
            talus::FilterDecision::Keep
        }
    }
}

#[test]
fn the_compaction_filter_sees_values_in_blob_files() {
    let fs = SimFs::new();
    let o = Options { compaction_filter: Some(Arc::new(ByPrefix)), ..blob_options(fs.clone()) };
    let db = Db::open(SIM_DB, o).unwrap();
    let big = |head: &str| {
        let mut v = head.as_bytes().to_vec();
        v.resize(3000, b'.');
        v
    };
    for i in 0..30u32 {
        let head = ["drop", "change", "keep"][i as usize % 3];
        db.put(format!("k{i:05}"), big(head)).unwrap();
    }
    db.flush().unwrap();
    assert!(!blob_files(&fs).is_empty(), "the values are in blob files");
    db.compact_range(None, None).unwrap();
    for i in 0..30u32 {
        let got = db.get(format!("k{i:05}")).unwrap();
        let want = match i % 3 {
            0 => None,
            1 => Some(b"changed".to_vec()),
            _ => Some(big("keep")),
        };
        assert_eq!(got, want, "k{i:05}");
    }
    // The dropped and changed values are garbage: their records are counted as such.
    let garbage: u64 = db.property("rocksdb.live-blob-file-garbage-size").unwrap().parse().unwrap();
    assert!(garbage > 0);
}
