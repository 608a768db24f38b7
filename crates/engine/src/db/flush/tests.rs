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
