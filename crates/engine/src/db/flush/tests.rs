//! Flush drops what no reader can see (shadowed versions in one snapshot stripe, versions under a
//! range tombstone of their stripe) and keeps what a live snapshot reads.

use crate::{Db, Options, ReadOptions};

fn l0_entries(db: &Db) -> u64 {
    let st = db.inner().state.lock();
    st.default_cf().current.level_files(0).iter().map(|f| f.num_entries).sum()
}

fn open(dir: &std::path::Path) -> Db {
    let opts =
        Options { create_if_missing: true, disable_auto_compactions: true, ..Default::default() };
    Db::open(dir, opts).unwrap()
}

#[test]
fn flush_keeps_the_newest_version_per_stripe() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    for round in 0..5u8 {
        for k in 0..100u32 {
            db.put(k.to_be_bytes(), [round]).unwrap();
        }
    }
    db.flush().unwrap();
    // 500 writes of 100 keys, no snapshot: one version each.
    assert_eq!(l0_entries(&db), 100);
    for k in 0..100u32 {
        assert_eq!(db.get(k.to_be_bytes()).unwrap().as_deref(), Some(&[4u8][..]));
    }
}

#[test]
fn flush_keeps_what_a_snapshot_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    db.put(b"a", b"1").unwrap();
    db.put(b"a", b"2").unwrap();
    let snap = db.snapshot();
    db.put(b"a", b"3").unwrap();
    db.put(b"a", b"4").unwrap();
    db.delete(b"b").unwrap();
    db.flush().unwrap();
    // "a": 2 (read by the snapshot) and 4 (newest); "b": the tombstone (older data may lie below).
    assert_eq!(l0_entries(&db), 3);
    let at = ReadOptions { snapshot: Some(snap), ..Default::default() };
    assert_eq!(db.get_opt(b"a", &at).unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"4"[..]));
}

#[test]
fn flush_drops_versions_under_a_range_tombstone_of_their_stripe() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    for k in 0..10u8 {
        db.put([k], b"old").unwrap();
    }
    let snap = db.snapshot();
    db.put([20u8], b"x").unwrap();
    db.delete_range([0u8]..[5u8]).unwrap();
    for k in 5..10u8 {
        db.put([k], b"new").unwrap();
    }
    db.flush().unwrap();
    // Keys 0..5 are covered, but their versions are in the snapshot's stripe: kept. Keys 5..10
    // have two versions in different stripes: both kept. Plus key 20.
    assert_eq!(l0_entries(&db), 10 + 5 + 1);
    drop(snap);
    db.put([30u8], b"y").unwrap();
    db.delete_range([30u8]..[31u8]).unwrap();
    db.flush().unwrap();
    // Key 30 is under a tombstone of its own stripe (no snapshot): not written.
    let second = {
        let st = db.inner().state.lock();
        st.default_cf().current.level_files(0).iter().map(|f| f.num_entries).min().unwrap()
    };
    assert_eq!(second, 0);
    assert_eq!(db.get([30u8]).unwrap(), None);
    assert_eq!(db.get([3u8]).unwrap(), None);
    assert_eq!(db.get([7u8]).unwrap().as_deref(), Some(&b"new"[..]));
}

/// Issue 34's lost SST: a flush whose MANIFEST roll renamed CURRENT but then failed to sync the
/// directory used to delete its table, which the new CURRENT names. Each crash mode must then
/// reopen with every acknowledged write: after a process crash from the MANIFEST the failed
/// flush wrote (its table kept), after a power loss from the WAL (the rename undone).
#[test]
fn a_flush_whose_manifest_roll_fails_after_the_rename_keeps_its_table() {
    use crate::fs::fault::{CrashMode, OpKind, SimFs};
    use std::io::ErrorKind;
    for mode in [CrashMode::KeepUnsynced, CrashMode::DropAllUnsynced] {
        let sim = SimFs::new();
        let opts = |fs: &std::sync::Arc<SimFs>| Options {
            create_if_missing: true,
            disable_auto_compactions: true,
            fs: fs.clone(),
            ..Default::default()
        };
        let db = Db::open("/db", opts(&sim)).unwrap();
        let sync = crate::WriteOptions { sync: true, ..Default::default() };
        db.put_opt(b"a", b"1", &sync).unwrap();
        db.flush().unwrap();
        db.put_opt(b"b", b"2", &sync).unwrap();
        // The flush's MANIFEST append fails: the next edit rolls to a new MANIFEST.
        sim.fail_after_on(OpKind::Write, "MANIFEST", 1, ErrorKind::Other, true);
        assert!(db.flush().is_err());
        // As if the error had gone away (RocksDB resumes after such errors): the retried flush
        // rolls the MANIFEST, and the directory sync after CURRENT's rename fails (the first
        // directory sync of the flush is the one before its MANIFEST write).
        db.inner().state.lock().bg_error = None;
        sim.fail_after(OpKind::DirSync, 2, ErrorKind::Other, true);
        db.inner().bg_cv.notify_all();
        assert!(db.flush().is_err(), "the roll's directory sync should have failed");
        let tables: Vec<_> =
            sim.files().into_iter().filter(|p| p.to_string_lossy().ends_with(".sst")).collect();
        // The first flush's table, and each failed flush's: both MANIFEST writes may have
        // committed (an append that fails may have left its record in the page cache).
        assert_eq!(tables.len(), 3, "{mode:?}: the failed flushes' tables must stay: {tables:?}");
        let after = sim.crash(mode);
        drop(db);
        let db = Db::open("/db", opts(&after))
            .unwrap_or_else(|e| panic!("{mode:?}: reopen after the failed roll: {e}"));
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]), "{mode:?}");
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]), "{mode:?}");
    }
}

/// Options of the blob tests here: values of 100 bytes or more in blob files of about 1000
/// bytes (a 2000-byte value to a file of its own), no automatic compactions, on `fs`.
fn blob_opts(fs: &std::sync::Arc<crate::fs::fault::SimFs>) -> Options {
    Options {
        create_if_missing: true,
        disable_auto_compactions: true,
        enable_blob_files: true,
        min_blob_size: 100,
        blob_file_size: 1000,
        fs: fs.clone(),
        ..Default::default()
    }
}

/// A database on `sim` whose flushes write blob files of one 2000-byte value each, with four
/// values in its memtable (so a flush writes four blob files).
fn blob_db_with_four_values(sim: &std::sync::Arc<crate::fs::fault::SimFs>) -> Db {
    let db = Db::open("/db", blob_opts(sim)).unwrap();
    for k in 0..4u8 {
        db.put([k], [k; 2000]).unwrap();
    }
    db.flush().unwrap();
    for k in 0..4u8 {
        db.put([k], [k + 10; 2000]).unwrap();
    }
    db
}

fn files_ending(sim: &crate::fs::fault::SimFs, ext: &str) -> Vec<std::path::PathBuf> {
    sim.files().into_iter().filter(|p| p.to_string_lossy().ends_with(ext)).collect()
}

/// A flush that fails partway removes the blob files it wrote, as it removes its table (and
/// as a compaction abandons its blob files): whether the failure is in its blob files (the
/// third one's sync), after them in its table (the table's sync), or after the table (the
/// directory sync before the MANIFEST edit). Before, they stayed until the next open.
#[test]
fn a_failed_flush_removes_its_blob_files() {
    use crate::fs::fault::{OpKind, SimFs};
    use std::io::ErrorKind;
    // (what fails, the n-th such operation on files named "0000..": blob files and SSTs).
    let cases: [(OpKind, Option<&str>, u64); 3] = [
        (OpKind::Sync, Some("0000"), 3),
        (OpKind::Sync, Some("0000"), 5),
        (OpKind::DirSync, None, 1),
    ];
    for (kind, prefix, n) in cases {
        let sim = SimFs::new();
        let db = blob_db_with_four_values(&sim);
        let before_blobs = files_ending(&sim, ".blob");
        let before_tables = files_ending(&sim, ".sst");
        assert_eq!(before_blobs.len(), 4);
        match prefix {
            Some(p) => sim.fail_after_on(kind, p, n, ErrorKind::Other, true),
            None => sim.fail_after(kind, n, ErrorKind::Other, true),
        }
        assert!(db.flush().is_err(), "{kind:?} {n}: the flush should have failed");
        assert_eq!(sim.faults_injected(), 1, "{kind:?} {n}");
        assert_eq!(files_ending(&sim, ".sst"), before_tables, "{kind:?} {n}: tables");
        assert_eq!(files_ending(&sim, ".blob"), before_blobs, "{kind:?} {n}: blob files");
        // The first flush's values still read.
        assert_eq!(db.get([3u8]).unwrap().as_deref(), Some(&[13u8; 2000][..]));
    }
}

/// A flush whose MANIFEST write fails keeps its blob files, as its table: the edit may have
/// committed, and a process crash then reopens from it.
#[test]
fn a_flush_whose_manifest_write_fails_keeps_its_blob_files() {
    use crate::fs::fault::{CrashMode, OpKind, SimFs};
    use std::io::ErrorKind;
    let sim = SimFs::new();
    let db = blob_db_with_four_values(&sim);
    sim.fail_after_on(OpKind::Write, "MANIFEST", 1, ErrorKind::Other, true);
    assert!(db.flush().is_err());
    assert_eq!(files_ending(&sim, ".blob").len(), 8);
    let after = sim.crash(CrashMode::KeepUnsynced);
    drop(db);
    let opts = Options { enable_blob_files: true, fs: after.clone(), ..Default::default() };
    let db = Db::open("/db", opts).unwrap();
    for k in 0..4u8 {
        assert_eq!(db.get([k]).unwrap().as_deref(), Some(&[k + 10; 2000][..]));
    }
}

/// An open whose recovery flush fails after writing blob files removes them with its table:
/// the MANIFEST write that would have added them fails (a new MANIFEST's first append), and
/// nothing of the failed open is left on disk.
#[test]
fn a_failed_recovery_flush_removes_its_blob_files() {
    use crate::fs::fault::{CrashMode, OpKind, SimFs};
    use std::io::ErrorKind;
    let sim = SimFs::new();
    let opts = blob_opts;
    let db = Db::open("/db", opts(&sim)).unwrap();
    let sync = crate::WriteOptions { sync: true, ..Default::default() };
    for k in 0..4u8 {
        db.put_opt([k], [k; 2000], &sync).unwrap();
    }
    // The values are in the WAL only: the next open flushes them to L0 (and blob files).
    let after = sim.crash(CrashMode::KeepUnsynced);
    drop(db);
    assert!(files_ending(&after, ".blob").is_empty());
    after.fail_after_on(OpKind::Write, "MANIFEST", 1, ErrorKind::Other, true);
    assert!(Db::open("/db", opts(&after)).is_err(), "the open should have failed");
    assert_eq!(after.faults_injected(), 1);
    assert_eq!(files_ending(&after, ".blob"), Vec::<std::path::PathBuf>::new());
    assert_eq!(files_ending(&after, ".sst"), Vec::<std::path::PathBuf>::new());
    // And the next open recovers every value.
    let db = Db::open("/db", opts(&after)).unwrap();
    for k in 0..4u8 {
        assert_eq!(db.get([k]).unwrap().as_deref(), Some(&[k; 2000][..]));
    }
}

/// A flush whose own MANIFEST edit commits but whose next edit (an idle family's log number)
/// fails returns an error with its table and blob files in the version: they must stay, or
/// the MANIFEST names files that are gone (and the WAL holding their writes is past its log
/// number). A process crash then reopens with every value.
#[test]
fn a_flush_failing_after_its_manifest_edit_keeps_its_files() {
    use crate::fs::fault::{CrashMode, OpKind, SimFs};
    use std::io::ErrorKind;
    let sim = SimFs::new();
    let opts = |fs: &std::sync::Arc<SimFs>| Options {
        blob_file_size: Options::default().blob_file_size,
        ..blob_opts(fs)
    };
    let db = Db::open("/db", opts(&sim)).unwrap();
    let other = db.create_column_family("other", &opts(&sim)).unwrap();
    db.put_cf(&other, b"o", b"1").unwrap();
    db.flush_cf(&other).unwrap();
    let sync = crate::WriteOptions { sync: true, ..Default::default() };
    db.put_opt(b"a", [7u8; 500], &sync).unwrap();
    // A MANIFEST edit is two appends here: the flush's edit the first two, the idle family's
    // the next two (its first fails).
    sim.fail_after_on(OpKind::Write, "MANIFEST", 3, ErrorKind::Other, true);
    assert!(db.flush().is_err(), "the idle family's edit should have failed");
    assert_eq!(sim.faults_injected(), 1);
    assert_eq!(files_ending(&sim, ".blob").len(), 1, "the flush's blob file must stay");
    assert_eq!(files_ending(&sim, ".sst").len(), 2, "the flush's table must stay");
    let after = sim.crash(CrashMode::KeepUnsynced);
    drop(other);
    drop(db);
    let other = crate::ColumnFamilyDescriptor::new("other", opts(&after));
    let db = Db::open_cf("/db", opts(&after), [other])
        .unwrap_or_else(|e| panic!("reopen after the failed flush: {e}"));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&[7u8; 500][..]));
}
