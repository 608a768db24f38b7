//! `talus::destroy_db` (RocksDB's `DestroyDB`): locks first, deletes only this engine's files,
//! removes the directory only when that empties it, refuses what is not its own.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use common::corrupt::{dir_snapshot, snapshot_diff};
use common::{tiny_options, ROCKSDB_MANIFEST, SIM_DB};
use talus::fs::fault::SimFs;
use talus::fs::{Fs, StdFs};
use talus::{destroy_db, Db, Error, Options};

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// A database with SSTs, a WAL, an OPTIONS file, LOG and LOG.old, plus a kept damaged WAL and
/// a leftover temp file, in `dir`.
fn make_db(dir: &Path) -> Options {
    let opts = tiny_options(Arc::new(StdFs), 4096);
    for round in 0..2 {
        let db = Db::open(dir, opts.clone()).unwrap();
        for i in 0..200 {
            db.put(format!("k{i}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
        db.put(b"unflushed", b"x").unwrap();
    }
    std::fs::write(dir.join("000999.log.corrupt"), b"kept damaged WAL").unwrap();
    std::fs::write(dir.join("CURRENT.dbtmp"), b"MANIFEST-0").unwrap();
    opts
}

#[test]
fn destroys_only_its_own_files_then_the_empty_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let opts = make_db(&db);
    let ours = names(&db);
    for n in ["CURRENT", "LOCK", "LOG", "000999.log.corrupt", "CURRENT.dbtmp"] {
        assert!(ours.contains(n), "{n} missing from the fixture: {ours:?}");
    }
    assert!(ours.iter().any(|n| n.starts_with("LOG.old.")), "no rotated LOG: {ours:?}");
    assert!(
        ours.iter().any(|n| n.ends_with(".sst")) && ours.iter().any(|n| n.starts_with("MANIFEST-"))
    );
    assert!(
        ours.iter().any(|n| n.starts_with("OPTIONS-")) && ours.iter().any(|n| n.ends_with(".log"))
    );
    // Things that are not the database's, including ones a careless "*.log, *.sst" match takes.
    let foreign =
        ["server.log", "backup.sst", "notes.txt", "IDENTITY.txt", "LOGS", "12a.sst", "+5.log"];
    for n in foreign {
        std::fs::write(db.join(n), n).unwrap();
    }
    std::fs::create_dir(db.join("backup")).unwrap();
    std::fs::write(db.join("backup").join("000001.sst"), b"keep").unwrap();
    let kept: Vec<_> = dir_snapshot(&db).into_iter().filter(|(n, _)| !ours.contains(n)).collect();

    destroy_db(&db, &opts).unwrap();
    let left: Vec<_> = dir_snapshot(&db).into_iter().collect();
    assert_eq!(left, kept, "destroy_db must delete exactly the database's files");
    assert_eq!(std::fs::read(db.join("backup").join("000001.sst")).unwrap(), b"keep");

    // Once only our files are there, the directory goes too.
    for n in foreign {
        std::fs::remove_file(db.join(n)).unwrap();
    }
    std::fs::remove_dir_all(db.join("backup")).unwrap();
    make_db(&db);
    destroy_db(&db, &opts).unwrap();
    assert!(!db.exists(), "the emptied directory is removed");
    destroy_db(&db, &opts).expect("a missing database is nothing to do");
}

/// Regression (the db_bench and stress destroy steps): deleting a database another handle has
/// open. `destroy_db` takes the LOCK first and fails with `Locked`, touching nothing.
#[test]
fn an_open_database_is_not_destroyed() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let opts = make_db(&path);
    // No background compaction: its output would race with the before/after listing.
    let quiet = Options { disable_auto_compactions: true, ..opts.clone() };
    let db = Db::open(&path, quiet).unwrap();
    db.put(b"live", b"data").unwrap();
    let before = dir_snapshot(&path);
    match destroy_db(&path, &opts) {
        Err(Error::Locked(m)) => assert!(m.contains(&path.display().to_string()), "{m}"),
        other => panic!("destroy of an open database: {other:?}"),
    }
    let changed = snapshot_diff(&before, &dir_snapshot(&path));
    assert!(changed.is_empty(), "destroy_db of a locked database changed it:\n{changed}");
    assert_eq!(db.get(b"live").unwrap().as_deref(), Some(&b"data"[..]));
    drop(db);
    destroy_db(&path, &opts).unwrap();
    assert!(!path.exists());
}

/// A directory with no database in it (another program's LOG, LOCK and files) is nothing to
/// destroy: not one file is deleted, not even the ones named like ours.
#[test]
fn a_directory_without_a_database_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for n in ["LOG", "LOG.old", "LOCK", "server.log", "backup.sst", "notes.txt"] {
        std::fs::write(d.join(n), format!("{n} of another program")).unwrap();
    }
    std::fs::create_dir(d.join("sub")).unwrap();
    let before = dir_snapshot(d);
    destroy_db(d, &Options::default()).unwrap();
    assert!(snapshot_diff(&before, &dir_snapshot(d)).is_empty());
}

#[test]
fn refuses_a_file_and_a_rocksdb_database() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let opts = Options::default();
    assert!(
        matches!(destroy_db(&file, &opts), Err(Error::InvalidArgument(m)) if m.contains("not a directory"))
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    let rocks = tmp.path().join("rocks");
    std::fs::create_dir(&rocks).unwrap();
    for n in ["CURRENT", "MANIFEST-000005", "000004.log", "LOG", "IDENTITY", "OPTIONS-000007"] {
        std::fs::write(rocks.join(n), n).unwrap();
    }
    let before = dir_snapshot(&rocks);
    assert!(
        matches!(destroy_db(&rocks, &opts), Err(Error::InvalidArgument(m)) if m.contains("RocksDB"))
    );
    assert!(snapshot_diff(&before, &dir_snapshot(&rocks)).is_empty());
    // Without IDENTITY and OPTIONS files, the MANIFEST still tells.
    for n in ["IDENTITY", "OPTIONS-000007"] {
        std::fs::remove_file(rocks.join(n)).unwrap();
    }
    std::fs::write(rocks.join("CURRENT"), b"MANIFEST-000005\n").unwrap();
    std::fs::write(rocks.join("MANIFEST-000005"), ROCKSDB_MANIFEST).unwrap();
    let before = dir_snapshot(&rocks);
    match destroy_db(&rocks, &opts) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("RocksDB"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(snapshot_diff(&before, &dir_snapshot(&rocks)).is_empty());
}

#[test]
fn works_through_the_fault_injecting_fs() {
    let fs = SimFs::new();
    let opts = tiny_options(fs.clone(), 4096);
    let db = Db::open(SIM_DB, opts.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    assert!(matches!(destroy_db(SIM_DB, &opts), Err(Error::Locked(_))));
    drop(db);
    drop(fs.create(&Path::new(SIM_DB).join("mine.txt")).unwrap());
    destroy_db(SIM_DB, &opts).unwrap();
    assert_eq!(fs.list_dir(Path::new(SIM_DB)).unwrap(), ["mine.txt"]);
    fs.remove_file(&Path::new(SIM_DB).join("mine.txt")).unwrap();
    let db = Db::open(SIM_DB, opts.clone()).unwrap();
    drop(db);
    destroy_db(SIM_DB, &opts).unwrap();
    assert!(!fs.exists(Path::new(SIM_DB)));
}

/// Issue 34's first repro: engine-named files without `CURRENT` are no database. They used to
/// be deleted (the `LOG` with them) because one name parsed as the engine's.
#[test]
fn engine_named_files_without_a_database_are_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("000001.log"), b"app\n").unwrap();
    std::fs::write(d.join("LOG"), b"mine\n").unwrap();
    std::fs::write(d.join("notes.txt"), b"n\n").unwrap();
    let before = dir_snapshot(d);
    match destroy_db(d, &Options::default()) {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("000001.log") && m.contains("nothing was deleted"), "{m}");
            assert!(m.contains("remove them by hand"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    assert!(snapshot_diff(&before, &dir_snapshot(d)).is_empty());
    // Nor is a database created over them.
    let create = Options { create_if_missing: true, ..Default::default() };
    assert!(
        matches!(Db::open(d, create), Err(Error::InvalidArgument(m)) if m.contains("000001.log"))
    );
    assert!(snapshot_diff(&before, &dir_snapshot(d)).is_empty());
}

/// Issue 34's second repro: a damaged database (no `CURRENT`; a `CURRENT` naming a missing
/// MANIFEST; a MANIFEST damaged in the middle), which `ldb` refuses as Corruption, was wiped
/// whole. Now it is refused, every byte kept.
#[test]
fn a_damaged_database_is_refused_not_wiped() {
    type Damage = fn(&Path);
    let cases: [(&str, Damage); 3] = [
        ("no CURRENT", |d| std::fs::remove_file(d.join("CURRENT")).unwrap()),
        ("CURRENT names a missing MANIFEST", |d| {
            std::fs::write(d.join("CURRENT"), b"MANIFEST-000777\n").unwrap()
        }),
        ("a damaged MANIFEST", |d| {
            let current = std::fs::read_to_string(d.join("CURRENT")).unwrap();
            let m = d.join(current.trim_end());
            let mut bytes = std::fs::read(&m).unwrap();
            bytes[10] ^= 0x55;
            std::fs::write(&m, bytes).unwrap();
        }),
    ];
    for (what, damage) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let opts = make_db(&db);
        damage(&db);
        let before = dir_snapshot(&db);
        match destroy_db(&db, &opts) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("not a database"), "{what}: {m}"),
            other => panic!("{what}: {other:?}"),
        }
        let changed = snapshot_diff(&before, &dir_snapshot(&db));
        assert!(changed.is_empty(), "{what}: destroy_db changed a damaged database:\n{changed}");
    }
}

/// A destroy cut short by a failing deletion (each in turn) leaves a directory that still
/// reads back as a database, so a second destroy finishes it.
#[test]
fn a_destroy_cut_short_is_finished_by_the_next() {
    let probe = SimFs::new();
    let opts = tiny_options(probe.clone(), 4096);
    Db::open(SIM_DB, opts.clone()).unwrap().put(b"k", b"v").unwrap();
    probe.reset_op_counts();
    destroy_db(SIM_DB, &opts).unwrap();
    let removes = probe.op_counts().get(talus::fs::fault::OpKind::Remove);
    assert!(removes >= 5, "{removes} removals");
    for n in 1..=removes {
        let fs = SimFs::new();
        let opts = tiny_options(fs.clone(), 4096);
        Db::open(SIM_DB, opts.clone()).unwrap().put(b"k", b"v").unwrap();
        fs.fail_after(talus::fs::fault::OpKind::Remove, n, std::io::ErrorKind::Other, true);
        assert!(destroy_db(SIM_DB, &opts).is_err(), "removal {n} of {removes} failing");
        destroy_db(SIM_DB, &opts).unwrap_or_else(|e| panic!("removal {n}: second destroy: {e}"));
        // (When the LOCK's own removal failed, the LOCK stays: alone, it may be anyone's; when
        // the directory's removal failed, the directory stays, empty.)
        let left = fs.files();
        assert!(left.is_empty() || left == [Path::new(SIM_DB).join("LOCK")], "{n}: {left:?}");
    }
}

/// Issue 34: the table layer's `tmp/` goes with the database when it holds only that layer's
/// index-build files; anything else in it keeps it.
#[test]
fn the_table_layers_tmp_directory_goes_if_it_is_all_the_layers() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let opts = make_db(&db);
    std::fs::create_dir(db.join("tmp")).unwrap();
    std::fs::write(db.join("tmp").join("talus-index-7-run-0"), b"run").unwrap();
    destroy_db(&db, &opts).unwrap();
    assert!(!db.exists(), "left: {:?}", names(tmp.path()));
    let opts = make_db(&db);
    std::fs::create_dir(db.join("tmp")).unwrap();
    std::fs::write(db.join("tmp").join("talus-index-7-run-0"), b"run").unwrap();
    std::fs::write(db.join("tmp").join("mine"), b"keep").unwrap();
    destroy_db(&db, &opts).unwrap();
    assert_eq!(names(&db.join("tmp")), ["mine".to_string(), "talus-index-7-run-0".into()].into());
}
