//! External SST ingestion: `SstFileWriter` + `Db::ingest_external_file` (RocksDB semantics):
//! visibility, durability across reopen and compaction, level placement and sequence numbers,
//! overlap rules, `ingest_behind`, snapshots, and power loss around the MANIFEST write.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::fault::{CrashMode, SimFs};
use talus::{Db, Error, IngestOptions, Options, SstFileWriter};

fn opts() -> Options {
    Options { create_if_missing: true, ..Default::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// Writes keys `range` with values `"{tag}{i}"` to `path`.
fn write_sst(path: &Path, o: &Options, range: std::ops::Range<u32>, tag: &str) -> PathBuf {
    let mut w = SstFileWriter::open(path, o).unwrap();
    for i in range {
        w.put(key(i), format!("{tag}{i}")).unwrap();
    }
    let info = w.finish().unwrap();
    assert_eq!(info.path, path);
    path.to_path_buf()
}

fn val(db: &Db, i: u32) -> Option<String> {
    db.get(key(i)).unwrap().map(|v| String::from_utf8(v).unwrap())
}

fn files_at(db: &Db, level: usize) -> u64 {
    db.property(&format!("talus.num-files-at-level{level}")).unwrap().parse().unwrap()
}

#[test]
fn ingested_keys_are_visible_and_survive_reopen_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let ext = tempfile::tempdir().unwrap();
    let o = opts();
    let a = write_sst(&ext.path().join("a.sst"), &o, 0..500, "a");
    let b = write_sst(&ext.path().join("b.sst"), &o, 500..1000, "b");
    {
        let db = Db::open(dir.path(), o.clone()).unwrap();
        db.ingest_external_file(&[&b, &a], &IngestOptions::default()).unwrap();
        assert_eq!(val(&db, 0).as_deref(), Some("a0"));
        assert_eq!(val(&db, 999).as_deref(), Some("b999"));
        // An empty database: both files go to the bottommost level, sequence 0.
        assert_eq!(files_at(&db, 6), 2);
        assert!(a.exists() && b.exists(), "copied, not moved");
        let n = db.iter(&Default::default()).count();
        assert_eq!(n, 1000);
    }
    let db = Db::open(dir.path(), o.clone()).unwrap();
    assert_eq!(val(&db, 500).as_deref(), Some("b500"));
    db.put(key(3), "new").unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(val(&db, 3).as_deref(), Some("new"));
    assert_eq!(val(&db, 4).as_deref(), Some("a4"));
    assert_eq!(db.iter(&Default::default()).count(), 1000);
}

#[test]
fn move_files_renames_into_the_db() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let a = write_sst(&dir.path().join("ext-a.tmpsst"), &o, 0..10, "a");
    db.ingest_external_file(&[&a], &IngestOptions { move_files: true, ..Default::default() })
        .unwrap();
    assert!(!a.exists());
    assert_eq!(val(&db, 9).as_deref(), Some("a9"));
}

#[test]
fn overlapping_ingest_gets_a_newer_sequence_and_wins() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    for i in 0..100 {
        db.put(key(i), format!("old{i}")).unwrap();
    }
    db.flush().unwrap();
    db.put(key(50), "mem").unwrap();
    // Overlaps the memtable (flushed first) and L0: placed above them with a new sequence.
    let mut w = SstFileWriter::open(dir.path().join("x.ext"), &o).unwrap();
    w.delete(key(10)).unwrap();
    w.put(key(50), "ingested").unwrap();
    w.put(key(200), "ingested").unwrap();
    w.finish().unwrap();
    let snap = db.snapshot();
    db.ingest_external_file(&[dir.path().join("x.ext")], &IngestOptions::default()).unwrap();
    assert_eq!(val(&db, 10), None, "the file's delete hides the older value");
    assert_eq!(val(&db, 50).as_deref(), Some("ingested"));
    assert_eq!(val(&db, 11).as_deref(), Some("old11"));
    let ro = talus::ReadOptions { snapshot: Some(snap), ..Default::default() };
    assert_eq!(
        db.get_opt(key(50), &ro).unwrap().as_deref(),
        Some(&b"mem"[..]),
        "snapshot consistency"
    );
    assert_eq!(db.get_opt(key(200), &ro).unwrap(), None);
    db.put(key(50), "later").unwrap();
    assert_eq!(val(&db, 50).as_deref(), Some("later"));
    db.compact_range(None, None).unwrap();
    assert_eq!(val(&db, 50).as_deref(), Some("later"));
    assert_eq!(val(&db, 10), None);
    drop(db);
    let db = Db::open(dir.path(), o).unwrap();
    assert_eq!(val(&db, 50).as_deref(), Some("later"));
    assert_eq!(val(&db, 200).as_deref(), Some("ingested"));
    assert_eq!(val(&db, 10), None);
}

#[test]
fn blocking_flush_can_be_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    db.put(key(5), "mem").unwrap();
    let f = write_sst(&dir.path().join("f.ext"), &o, 0..10, "f");
    let no_flush = IngestOptions { allow_blocking_flush: false, ..Default::default() };
    assert!(matches!(db.ingest_external_file(&[&f], &no_flush), Err(Error::InvalidArgument(_))));
    assert_eq!(val(&db, 5).as_deref(), Some("mem"));
    assert_eq!(val(&db, 6), None, "nothing of a refused ingest is visible");
    // Not overlapping the memtable: fine without a flush.
    let g = write_sst(&dir.path().join("g.ext"), &o, 100..110, "g");
    db.ingest_external_file(&[&g], &no_flush).unwrap();
    assert_eq!(val(&db, 105).as_deref(), Some("g105"));
}

#[test]
fn overlapping_files_and_bad_input_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let a = write_sst(&dir.path().join("a.ext"), &o, 0..10, "a");
    let b = write_sst(&dir.path().join("b.ext"), &o, 9..20, "b");
    assert!(matches!(
        db.ingest_external_file(&[&a, &b], &IngestOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(val(&db, 0), None);
    // Unsorted input is refused by the writer.
    let mut w = SstFileWriter::open(dir.path().join("c.ext"), &o).unwrap();
    w.put(b"b", b"1").unwrap();
    assert!(matches!(w.put(b"a", b"1"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.put(b"b", b"2"), Err(Error::InvalidArgument(_))));
    // A file that is not an SST, and a missing file.
    std::fs::write(
        dir.path().join("junk.ext"),
        b"not an sst at all, just some bytes here............",
    )
    .unwrap();
    assert!(db
        .ingest_external_file(&[dir.path().join("junk.ext")], &IngestOptions::default())
        .is_err());
    assert!(db
        .ingest_external_file(&[dir.path().join("missing.ext")], &IngestOptions::default())
        .is_err());
    // A table of the database itself has real sequence numbers: refused.
    db.put(b"zz", b"1").unwrap();
    db.flush().unwrap();
    let own = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let copy = dir.path().join("own.ext");
    std::fs::copy(&own, &copy).unwrap();
    assert!(matches!(
        db.ingest_external_file(&[&copy], &IngestOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn ingest_behind_loses_to_every_existing_and_later_write() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    for i in 0..50 {
        db.put(key(i), format!("old{i}")).unwrap();
    }
    db.flush().unwrap(); // L0
    db.put(key(60), "mem").unwrap();
    db.delete(key(70)).unwrap();
    let f = write_sst(&dir.path().join("behind.ext"), &o, 0..100, "behind");
    let behind = IngestOptions { ingest_behind: true, ..Default::default() };
    db.ingest_external_file(&[&f], &behind).unwrap();
    assert_eq!(files_at(&db, 6), 1);
    assert_eq!(val(&db, 10).as_deref(), Some("old10"));
    assert_eq!(val(&db, 60).as_deref(), Some("mem"));
    assert_eq!(val(&db, 70), None, "a delete before the ingest still wins");
    assert_eq!(val(&db, 80).as_deref(), Some("behind80"));
    db.put(key(80), "later").unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(val(&db, 10).as_deref(), Some("old10"));
    assert_eq!(val(&db, 70), None);
    assert_eq!(val(&db, 80).as_deref(), Some("later"));
    assert_eq!(val(&db, 90).as_deref(), Some("behind90"));
    // The bottom level now overlaps: refused.
    let g = write_sst(&dir.path().join("g.ext"), &o, 95..99, "g");
    assert!(matches!(db.ingest_external_file(&[&g], &behind), Err(Error::InvalidArgument(_))));
    drop(db);
    let db = Db::open(dir.path(), o).unwrap();
    assert_eq!(val(&db, 60).as_deref(), Some("mem"));
    assert_eq!(val(&db, 90).as_deref(), Some("behind90"));
}

/// Fail the n-th IO of an ingest for every n, then lose power: the keys are all there if the
/// call succeeded and none are there if it failed (nothing survives without the synced MANIFEST
/// edit, and no partial state is visible).
#[test]
fn power_loss_during_ingest_is_all_or_nothing() {
    const DB: &str = "/db";
    let mut n = 1;
    loop {
        let fs = SimFs::new();
        let o = Options {
            create_if_missing: true,
            fs: fs.clone() as Arc<dyn talus::fs::Fs>,
            ..Default::default()
        };
        let db = Db::open(DB, o.clone()).unwrap();
        db.put(b"base", b"1").unwrap();
        db.flush().unwrap();
        let mut w = SstFileWriter::open("/ext.sst", &o).unwrap();
        for i in 0..20 {
            w.put(key(i), b"v").unwrap();
        }
        w.finish().unwrap();
        fs.reset_op_counts();
        fs.fail_after(talus::fs::fault::OpFilter::ALL, n, std::io::ErrorKind::Other, true);
        let r = db.ingest_external_file(&["/ext.sst"], &IngestOptions::default());
        let injected = fs.faults_injected() > 0;
        fs.clear_faults();
        if r.is_ok() {
            assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&b"v"[..]), "n={n}");
        } else {
            assert_eq!(db.get(key(7)).unwrap(), None, "n={n}: a failed ingest is invisible");
        }
        drop(db);
        let fs2 = fs.crash(CrashMode::DropAllUnsynced);
        let o2 = Options { fs: fs2.clone() as Arc<dyn talus::fs::Fs>, ..o };
        let db = Db::open(DB, o2).unwrap();
        let got: Vec<_> = (0..20).map(|i| db.get(key(i)).unwrap()).collect();
        let present = got.iter().filter(|v| v.is_some()).count();
        assert_eq!(db.get(b"base").unwrap().as_deref(), Some(&b"1"[..]));
        match &r {
            Ok(()) => assert_eq!(present, 20, "n={n}: an acknowledged ingest survives power loss"),
            Err(_) => assert_eq!(present, 0, "n={n}: a failed ingest leaves no trace ({r:?})"),
        }
        // No stray table files: every .sst in the directory is live after reopen's cleanup.
        let live: u64 = (0..7).map(|l| files_at(&db, l)).sum();
        let on_disk = fs2
            .files()
            .iter()
            .filter(|p| p.starts_with(DB) && p.extension().is_some_and(|e| e == "sst"))
            .count();
        assert_eq!(on_disk as u64, live, "n={n}: stray table files");
        drop(db);
        if !injected {
            break;
        }
        n += 1;
        assert!(n < 200, "too many IO ops");
    }
    assert!(n > 5, "the loop covered the ingest's IO ({n} ops)");
}
