//! An open either succeeds or changes nothing; what an open refuses and how it says so; what a
//! handle reports when it closes or stops.
//!
//! - a failed recovery on a full disk leaves every file as it was and uses no space, and the
//!   open succeeds once there is room;
//! - a regular file given as the path is "not a directory";
//! - a RocksDB database (by its IDENTITY file, and by its MANIFEST alone) is refused before
//!   anything is touched, saying so;
//! - `Error::BackgroundError` keeps the IO kind of the error that stopped the database;
//! - `Db::close` reports a failed WAL flush.

mod common;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::corrupt::{dir_snapshot, snapshot_diff};
use common::{tiny_options, ROCKSDB_MANIFEST, SIM_DB};
use talus::fs::fault::{CrashMode, OpFilter, OpKind, SimFs};
use talus::fs::StdFs;
use talus::{Db, Error, Options};

/// Every file of a `SimFs` with its size and crc32c (of the content, synced or not).
fn sim_files(fs: &SimFs) -> BTreeMap<PathBuf, (usize, u32)> {
    fs.files()
        .into_iter()
        .map(|p| {
            let c = fs.contents(&p).unwrap_or_default();
            (p, (c.len(), crc32c::crc32c(&c)))
        })
        .collect()
}

fn sim_options(fs: &Arc<SimFs>) -> Options {
    Options { max_background_jobs: 1, ..tiny_options(fs.clone(), 64 << 10) }
}

/// Write buffer sizes to reopen with: one the fixture's WAL fits in (recovery keeps the data
/// from its first replay) and one it does not (the commit replays again, flushing as it goes).
const REOPEN_BUFFERS: [usize; 2] = [64 << 10, 8 << 10];

fn reopen_options(fs: &Arc<SimFs>, write_buffer_size: usize) -> Options {
    Options { write_buffer_size, ..sim_options(fs) }
}

/// A value of `len` pseudo-random (incompressible) bytes.
fn noise(seed: u32, len: usize) -> Vec<u8> {
    let mut x = u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A database whose WAL holds about 40 KiB of unflushed writes (recovery must write an SST).
fn db_with_unflushed_wal(fs: &Arc<SimFs>) -> Arc<SimFs> {
    let db = Db::open(SIM_DB, sim_options(fs)).expect("open");
    for i in 0..200u32 {
        db.put(format!("key{i:05}"), noise(i, 200)).expect("put");
    }
    let fs = fs.crash(CrashMode::KeepUnsynced);
    drop(db);
    fs
}

/// Regression: on a full disk the recovery flush failed half-way and left a partial SST that
/// used up the space freed, and the new MANIFEST and CURRENT were already written; the next
/// open failed again. Now the failed open leaves every file byte-identical and no byte used.
#[test]
fn failed_recovery_on_a_full_disk_changes_nothing_and_uses_no_space() {
    for wbs in REOPEN_BUFFERS {
        let fs = db_with_unflushed_wal(&SimFs::new());
        let before = sim_files(&fs);
        let used = fs.used_bytes();
        // Room for a little, not for the recovered SSTs.
        for extra in [0u64, 100, 2000, 8000] {
            fs.set_capacity(used + extra);
            match Db::open(SIM_DB, reopen_options(&fs, wbs)) {
                Err(e) => assert_eq!(e.io_kind(), Some(ErrorKind::StorageFull), "{extra}: {e}"),
                Ok(_) => panic!("{wbs} {extra}: open succeeded on a full disk"),
            }
            let ctx = format!("write buffer {wbs}, {extra} bytes free");
            assert_eq!(sim_files(&fs), before, "{ctx}: the failed open changed files");
            assert_eq!(fs.used_bytes(), used, "{ctx}: the failed open used space");
        }
        fs.clear_capacity();
        // No automatic compaction on this open: it could move the recovered L0 files down
        // before they are counted (seen under load).
        let opts = Options { disable_auto_compactions: true, ..reopen_options(&fs, wbs) };
        let db = Db::open(SIM_DB, opts).expect("open with room");
        assert_eq!(db.get("key00199").expect("get").map(|v| v.len()), Some(200));
        let l0: usize = db.property("talus.num-files-at-level0").unwrap().parse().unwrap();
        assert!(wbs > 40 << 10 || l0 > 2, "{wbs}: recovery wrote {l0} L0 files");
    }
}

/// Every IO of a recovering open failing in turn (the N-th, once): each failed open leaves the
/// files exactly as they were -- except when only the directory sync after CURRENT's rename
/// failed: then the open has committed (CURRENT names the new MANIFEST), reports the error,
/// and the next open finds the recovered state.
#[test]
fn any_failing_io_during_recovery_changes_nothing() {
    for wbs in REOPEN_BUFFERS {
        let fs = db_with_unflushed_wal(&SimFs::new());
        let current = Path::new(SIM_DB).join("CURRENT");
        fs.reset_op_counts();
        drop(Db::open(SIM_DB, reopen_options(&fs, wbs)).expect("clean open"));
        let total = fs.op_counts().total();
        let (mut failed_opens, mut committed) = (0, 0);
        for n in 1..=total {
            let fs = db_with_unflushed_wal(&SimFs::new());
            let before = sim_files(&fs);
            fs.fail_after(OpFilter::ALL, n, ErrorKind::Other, true);
            let Err(e) = Db::open(SIM_DB, reopen_options(&fs, wbs)) else { continue };
            failed_opens += 1;
            fs.clear_faults();
            let after = sim_files(&fs);
            if after != before {
                let ctx = format!("write buffer {wbs}, IO {n} of {total}: changed files ({e})");
                assert_ne!(after.get(&current), before.get(&current), "{ctx}");
                committed += 1;
                let db = Db::open(SIM_DB, reopen_options(&fs, wbs)).expect("reopen");
                assert_eq!(db.get("key00199").expect("get"), Some(noise(199, 200)), "{ctx}");
            }
        }
        assert!(failed_opens > 10, "{wbs}: only {failed_opens} of {total} opens failed");
        assert!(committed <= 1, "{wbs}: {committed} failed opens had committed");
    }
}

/// Regression: a regular file given as the database path was reported as "does not exist".
#[test]
fn a_file_as_the_path_is_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"not a database").unwrap();
    for create in [false, true] {
        let opts = Options { create_if_missing: create, ..Options::default() };
        match Db::open(&file, opts.clone()) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("not a directory"), "{m}"),
            other => panic!("create_if_missing={create}: {other:?}"),
        }
        assert!(matches!(Db::open_read_only(&file, opts), Err(Error::InvalidArgument(_))));
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a database");
    let sim = SimFs::new();
    use talus::fs::Fs;
    sim.create_dir_all(Path::new("/d")).unwrap();
    drop(sim.create(Path::new("/d/f")).unwrap());
    match Db::open("/d/f", sim_options(&sim)) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("not a directory"), "{m}"),
        other => panic!("SimFs: {other:?}"),
    }
}

/// Regression: a RocksDB database was reported as "Corruption ... unknown tag 9" and its LOG
/// was overwritten. Now it is refused before anything is touched, saying it is RocksDB's,
/// whether the IDENTITY file says so or only the MANIFEST does.
#[test]
fn a_rocksdb_database_is_refused_untouched() {
    for with_identity in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("CURRENT"), b"MANIFEST-000005\n").unwrap();
        std::fs::write(d.join("MANIFEST-000005"), ROCKSDB_MANIFEST).unwrap();
        std::fs::write(d.join("LOG"), b"RocksDB's info log\n").unwrap();
        std::fs::write(d.join("LOCK"), b"").unwrap();
        if with_identity {
            std::fs::write(d.join("IDENTITY"), b"b35046a2-9019-4e67-9c18-bc57006642cf\n").unwrap();
        }
        let before = dir_snapshot(d);
        for read_only in [false, true] {
            let opts = Options { create_if_missing: true, ..Options::default() };
            let r = if read_only { Db::open_read_only(d, opts) } else { Db::open(d, opts) };
            match r {
                Err(Error::InvalidArgument(m)) => assert!(m.contains("RocksDB"), "{m}"),
                other => panic!("identity={with_identity} read_only={read_only}: {other:?}"),
            }
            let changed = snapshot_diff(&before, &dir_snapshot(d));
            assert!(changed.is_empty(), "identity={with_identity}: changed\n{changed}");
        }
    }
}

/// Regression: `Error::BackgroundError(String)` lost the kind of the IO error behind it, so a
/// caller could not tell a full disk (ENOSPC) from a failing one (EIO). The error chain now
/// reaches the original `io::Error`.
#[test]
fn background_error_keeps_the_io_kind() {
    for kind in [ErrorKind::StorageFull, ErrorKind::Other] {
        let fs = SimFs::new();
        let db = Db::open(SIM_DB, sim_options(&fs)).expect("open");
        db.put(b"a", b"1").expect("put");
        fs.fail_after(OpKind::Write, 1, kind, false);
        assert!(db.put(b"b", vec![0u8; 100]).is_err(), "{kind:?}: the failing write");
        let e = db.put(b"c", b"3").expect_err("writes stop after a WAL error");
        assert!(matches!(e, Error::BackgroundError(_)), "{kind:?}: {e}");
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        let mut found = None;
        while let Some(s) = source {
            if let Some(io) = s.downcast_ref::<std::io::Error>() {
                found = Some(io.kind());
            }
            source = s.source();
        }
        assert_eq!(found, Some(kind), "the chain of {e} does not reach the {kind:?} error");
        assert_eq!(e.io_kind(), Some(kind));
        assert_eq!(db.get(b"a").expect("reads go on").as_deref(), Some(&b"1"[..]));
    }
}

/// A directory holding another program's `LOG` (and no database) gets no database: creating
/// one would rotate that LOG away.
#[test]
fn no_database_is_created_over_another_programs_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("LOG"), b"another program's log\n").unwrap();
    std::fs::write(d.join("notes.txt"), b"mine").unwrap();
    let before = dir_snapshot(d);
    match Db::open(d, Options { create_if_missing: true, ..Options::default() }) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("LOG"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(snapshot_diff(&before, &dir_snapshot(d)).is_empty());
    // Without the LOG, a database is created beside the other files, which stay as they were.
    std::fs::remove_file(d.join("LOG")).unwrap();
    Db::open(d, Options { create_if_missing: true, ..Options::default() })
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(std::fs::read(d.join("notes.txt")).unwrap(), b"mine");
}

/// `Db::close` returns what dropping a handle could only swallow: a WAL that cannot be flushed.
#[test]
fn close_reports_a_failed_wal_flush() {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, sim_options(&fs)).expect("open");
    db.put(b"k", b"v").expect("put");
    // Only the last handle closes (issue 39): with a clone alive, close is Busy and closes
    // nothing; the clone writes on and closes cleanly.
    let clone = db.clone();
    assert!(matches!(db.close(), Err(Error::Busy(_))), "close while a clone lives");
    clone.put(b"k2", b"v").expect("the clone still writes");
    clone.close().expect("a clean close");
    let db = Db::open(SIM_DB, sim_options(&fs)).expect("reopen");
    assert_eq!(db.get(b"k2").expect("read").as_deref(), Some(&b"v"[..]));
    db.put(b"k3", b"v").expect("put");
    // The machine dies under the handle: its WAL can no longer be flushed.
    let _after = fs.crash(CrashMode::KeepUnsynced);
    let e = db.close().expect_err("close must report the failed flush");
    assert!(e.to_string().contains(".log"), "{e}");
}

/// The LOCK keeps a second handle out until the first is closed, through every open path.
#[test]
fn close_releases_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let opts = tiny_options(Arc::new(StdFs), 4096);
    let db = Db::open(&path, opts.clone()).unwrap();
    assert!(matches!(Db::open(&path, opts.clone()), Err(Error::Locked(_))));
    db.close().unwrap();
    Db::open(&path, opts).unwrap().close().unwrap();
}

/// Issue 34: a creation that fails (each IO in turn) leaves no directory and no LOCK behind.
#[test]
fn a_failed_creation_leaves_nothing() {
    let probe = SimFs::new();
    drop(Db::open(SIM_DB, sim_options(&probe)).unwrap());
    let total = probe.op_counts().total();
    for n in 1..=total {
        for existing_dir in [false, true] {
            let fs = SimFs::new();
            if existing_dir {
                talus::fs::Fs::create_dir_all(fs.as_ref(), Path::new(SIM_DB)).unwrap();
            }
            // One failure (the undo itself needs working IO).
            fs.fail_after(OpFilter::ALL, n, ErrorKind::Other, true);
            if Db::open(SIM_DB, sim_options(&fs)).is_ok() {
                continue;
            }
            fs.clear_faults();
            assert!(fs.files().is_empty(), "IO {n} failing: left {:?}", fs.files());
            let dir_there = talus::fs::Fs::exists(fs.as_ref(), Path::new(SIM_DB));
            assert_eq!(dir_there, existing_dir, "IO {n} failing: the directory");
        }
    }
}

/// Issue 34: the LOG of an existing database is rotated to `LOG.old.<micros>`, as RocksDB does,
/// never truncated or overwritten.
#[test]
fn the_log_is_rotated_never_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Default::default() };
    let mut logs = Vec::new();
    for _ in 0..3 {
        drop(Db::open(tmp.path(), opts.clone()).unwrap());
        logs.push(std::fs::read(tmp.path().join("LOG")).unwrap());
    }
    let mut old: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("LOG.old."))
        .collect();
    old.sort();
    assert_eq!(old.len(), 2, "{old:?}");
    for (name, content) in old.iter().zip(&logs) {
        assert!(name["LOG.old.".len()..].parse::<u64>().is_ok(), "{name}");
        assert_eq!(&std::fs::read(tmp.path().join(name)).unwrap(), content, "{name}");
    }
}
