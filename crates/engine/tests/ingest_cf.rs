//! `Db::ingest_external_file_cf`: ingestion into a family other than `default` with the same
//! rules as `default`'s (`tests/ingest.rs`): placement by that family's levels, a flush when
//! that family's memtable overlaps, sequence numbers, snapshots, reopen, and power loss around
//! the MANIFEST write (all or nothing, no stray files).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::fault::{CrashMode, SimFs};
use talus::{
    ColumnFamily, ColumnFamilyDescriptor, Db, Error, IngestOptions, Options, SstFileWriter,
};

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
    w.finish().unwrap();
    path.to_path_buf()
}

fn val(db: &Db, cf: &ColumnFamily, i: u32) -> Option<String> {
    db.get_cf(cf, key(i)).unwrap().map(|v| String::from_utf8(v).unwrap())
}

fn files_at(db: &Db, cf: &ColumnFamily, level: usize) -> u64 {
    db.property_int_cf(cf, &format!("talus.num-files-at-level{level}")).unwrap()
}

fn families(o: &Options) -> Vec<ColumnFamilyDescriptor> {
    vec![ColumnFamilyDescriptor::new("bulk", o.clone())]
}

#[test]
fn ingested_keys_land_in_the_family_and_survive_reopen_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let ext = tempfile::tempdir().unwrap();
    let o = opts();
    let a = write_sst(&ext.path().join("a.sst"), &o, 0..500, "a");
    let b = write_sst(&ext.path().join("b.sst"), &o, 500..1000, "b");
    {
        let db = Db::open(dir.path(), o.clone()).unwrap();
        let cf = db.create_column_family("bulk", &o).unwrap();
        // `default` holds the same keys in its memtable and files: they do not matter.
        for i in (0..1000).step_by(10) {
            db.put(key(i), "default").unwrap();
        }
        db.flush().unwrap();
        db.put(key(5), "default-mem").unwrap();
        let no_flush = IngestOptions { allow_blocking_flush: false, ..Default::default() };
        db.ingest_external_file_cf(&cf, &[&b, &a], &no_flush).unwrap();
        assert_eq!(val(&db, &cf, 0).as_deref(), Some("a0"));
        assert_eq!(val(&db, &cf, 999).as_deref(), Some("b999"));
        assert_eq!(db.get(key(1)).unwrap(), None, "nothing in default");
        assert_eq!(db.get(key(10)).unwrap().as_deref(), Some(&b"default"[..]));
        // The family is empty: both files go to its bottommost level, sequence 0.
        assert_eq!(files_at(&db, &cf, 6), 2);
        assert_eq!(files_at(&db, &db.default_column_family(), 6), 0);
        assert_eq!(db.iter_cf(&cf, &Default::default()).unwrap().count(), 1000);
    }
    let db = Db::open_cf(dir.path(), o.clone(), families(&o)).unwrap();
    let cf = db.cf_handle("bulk").unwrap();
    assert_eq!(val(&db, &cf, 500).as_deref(), Some("b500"));
    db.put_cf(&cf, key(3), "new").unwrap();
    db.compact_range_cf(&cf, None, None).unwrap();
    assert_eq!(val(&db, &cf, 3).as_deref(), Some("new"));
    assert_eq!(val(&db, &cf, 4).as_deref(), Some("a4"));
    assert_eq!(db.get(key(10)).unwrap().as_deref(), Some(&b"default"[..]));
}

#[test]
fn the_familys_memtable_and_levels_decide_flush_placement_and_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let cf = db.create_column_family("bulk", &o).unwrap();
    for i in 0..100 {
        db.put_cf(&cf, key(i), format!("old{i}")).unwrap();
    }
    db.flush_cf(&cf).unwrap();
    db.put_cf(&cf, key(50), "mem").unwrap();
    // Overlapping the family's memtable, refused without a blocking flush.
    let f = write_sst(&dir.path().join("f.ext"), &o, 45..55, "f");
    let no_flush = IngestOptions { allow_blocking_flush: false, ..Default::default() };
    let r = db.ingest_external_file_cf(&cf, &[&f], &no_flush);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    assert_eq!(val(&db, &cf, 46).as_deref(), Some("old46"), "nothing of a refused ingest");
    // With it: the memtable is flushed, the file overlaps L0 and goes above it with a new
    // sequence number, which a snapshot taken before does not see.
    let mut w = SstFileWriter::open(dir.path().join("x.ext"), &o).unwrap();
    w.delete(key(10)).unwrap();
    w.put(key(50), "ingested").unwrap();
    w.put(key(200), "ingested").unwrap();
    w.finish().unwrap();
    let snap = db.snapshot();
    let l0_before = files_at(&db, &cf, 0);
    db.ingest_external_file_cf(&cf, &[dir.path().join("x.ext")], &Default::default()).unwrap();
    assert_eq!(files_at(&db, &cf, 0), l0_before + 2, "the flushed memtable and the file");
    assert_eq!(val(&db, &cf, 10), None, "the file's delete hides the older value");
    assert_eq!(val(&db, &cf, 50).as_deref(), Some("ingested"));
    assert_eq!(val(&db, &cf, 11).as_deref(), Some("old11"));
    let ro = talus::ReadOptions { snapshot: Some(snap), ..Default::default() };
    assert_eq!(db.get_cf_opt(&cf, key(50), &ro).unwrap().as_deref(), Some(&b"mem"[..]));
    assert_eq!(db.get_cf_opt(&cf, key(200), &ro).unwrap(), None);
    db.put_cf(&cf, key(50), "later").unwrap();
    assert_eq!(val(&db, &cf, 50).as_deref(), Some("later"));
    // A write after the ingest wins over it through reopen and compaction too.
    drop(db);
    let db = Db::open_cf(dir.path(), o.clone(), families(&o)).unwrap();
    let cf = db.cf_handle("bulk").unwrap();
    db.compact_range_cf(&cf, None, None).unwrap();
    assert_eq!(val(&db, &cf, 50).as_deref(), Some("later"));
    assert_eq!(val(&db, &cf, 200).as_deref(), Some("ingested"));
    assert_eq!(val(&db, &cf, 10), None);
    // `ingest_behind` checks the family's bottommost level.
    let g = write_sst(&dir.path().join("g.ext"), &o, 0..5, "g");
    let behind = IngestOptions { ingest_behind: true, ..Default::default() };
    let r = db.ingest_external_file_cf(&cf, &[&g], &behind);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let other = db.create_column_family("other", &o).unwrap();
    db.ingest_external_file_cf(&other, &[&g], &behind).unwrap();
    assert_eq!(val(&db, &other, 1).as_deref(), Some("g1"));
}

#[test]
fn a_dropped_family_or_another_databases_handle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let other = Db::open(other_dir.path(), o.clone()).unwrap();
    let foreign = other.create_column_family("bulk", &o).unwrap();
    let cf = db.create_column_family("bulk", &o).unwrap();
    let f = write_sst(&dir.path().join("f.ext"), &o, 0..10, "f");
    let r = db.ingest_external_file_cf(&foreign, &[&f], &Default::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    db.drop_column_family(&cf).unwrap();
    let r = db.ingest_external_file_cf(&cf, &[&f], &Default::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    // Nothing of the refused ingestions stays in the directory.
    let tables = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
        .count();
    assert_eq!(tables, 0);
    assert!(f.exists(), "the source is kept");
}

#[test]
fn power_loss_during_ingest_into_a_family_is_all_or_nothing() {
    const DB: &str = "/db";
    let mut n = 1;
    loop {
        let fs = SimFs::new();
        let o = Options {
            create_if_missing: true,
            create_missing_column_families: true,
            fs: fs.clone() as Arc<dyn talus::fs::Fs>,
            ..Default::default()
        };
        let db = Db::open_cf(DB, o.clone(), families(&o)).unwrap();
        let cf = db.cf_handle("bulk").unwrap();
        db.put(b"base", b"1").unwrap();
        db.put_cf(&cf, key(7), b"old").unwrap();
        db.flush().unwrap();
        let mut w = SstFileWriter::open("/ext.sst", &o).unwrap();
        for i in 0..20 {
            w.put(key(i), b"v").unwrap();
        }
        w.finish().unwrap();
        fs.reset_op_counts();
        fs.fail_after(talus::fs::fault::OpFilter::ALL, n, std::io::ErrorKind::Other, true);
        let r = db.ingest_external_file_cf(&cf, &["/ext.sst"], &IngestOptions::default());
        let injected = fs.faults_injected() > 0;
        fs.clear_faults();
        let want7 = if r.is_ok() { &b"v"[..] } else { &b"old"[..] };
        assert_eq!(db.get_cf(&cf, key(7)).unwrap().as_deref(), Some(want7), "n={n}");
        drop((cf, db));
        let fs2 = fs.crash(CrashMode::DropAllUnsynced);
        let o2 = Options { fs: fs2.clone() as Arc<dyn talus::fs::Fs>, ..o };
        let db = Db::open_cf(DB, o2.clone(), families(&o2)).unwrap();
        let cf = db.cf_handle("bulk").unwrap();
        let present = (0..20).filter(|&i| db.get_cf(&cf, key(i)).unwrap().is_some()).count();
        assert_eq!(db.get(b"base").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get(key(7)).unwrap(), None, "n={n}: default has none of it");
        match &r {
            Ok(()) => {
                assert_eq!(present, 20, "n={n}: an acknowledged ingest survives power loss")
            }
            Err(_) => {
                assert_eq!(present, 1, "n={n}: a failed ingest leaves no trace ({r:?})");
                assert_eq!(db.get_cf(&cf, key(7)).unwrap().as_deref(), Some(&b"old"[..]));
            }
        }
        // No stray table files: every .sst in the directory is live in one of the families.
        let live: u64 = [db.default_column_family(), cf.clone()]
            .iter()
            .map(|c| (0..7).map(|l| files_at(&db, c, l)).sum::<u64>())
            .sum();
        let on_disk = fs2
            .files()
            .iter()
            .filter(|p| p.starts_with(DB) && p.extension().is_some_and(|e| e == "sst"))
            .count();
        assert_eq!(on_disk as u64, live, "n={n}: stray table files");
        drop((cf, db));
        if !injected {
            break;
        }
        n += 1;
        assert!(n < 200, "too many IO ops");
    }
    assert!(n > 5, "the loop covered the ingest's IO ({n} ops)");
}
