//! `Db::create_checkpoint` (RocksDB's `Checkpoint::CreateCheckpoint`): the copy holds exactly
//! the writes before its moment, is a database of its own, shares table files by hard link,
//! refuses existing directories without touching them, holds a prefix of concurrent writes,
//! and a failed or power-cut checkpoint leaves either nothing or a complete copy.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::Fs;
use talus::{Db, Error, Options};

fn opts() -> Options {
    Options { create_if_missing: true, ..Default::default() }
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:010}").into_bytes()
}

fn all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(&Default::default()).map(|kv| kv.unwrap()).collect()
}

#[test]
fn a_checkpoint_holds_the_data_of_its_moment_and_is_a_database_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("db");
    let db = Db::open(&src, opts()).unwrap();
    for i in 0..2000 {
        db.put(key(i), format!("a{i}")).unwrap();
    }
    db.flush().unwrap();
    for i in (0..2000).step_by(3) {
        db.put(key(i), format!("b{i}")).unwrap();
    }
    db.delete_range(key(100)..key(200)).unwrap();
    db.delete(key(5)).unwrap();
    let expected = all(&db);
    let cp = dir.path().join("cp");
    db.create_checkpoint(&cp).unwrap();
    assert!(!dir.path().join("cp.tmp").exists());
    for i in 0..2000 {
        db.put(key(i), b"after").unwrap();
    }
    db.compact_range(None, None).unwrap();

    let copy = Db::open(&cp, Options::default()).unwrap();
    assert_eq!(all(&copy), expected);
    copy.put(key(1), b"in the copy").unwrap();
    copy.compact_range(None, None).unwrap();
    assert_eq!(db.get(key(1)).unwrap().as_deref(), Some(&b"after"[..]));
    drop(copy);
    let copy = Db::open(&cp, Options::default()).unwrap();
    assert_eq!(copy.get(key(1)).unwrap().as_deref(), Some(&b"in the copy"[..]));
    assert_eq!(copy.get(key(2)).unwrap().as_deref(), Some(&b"a2"[..]));
    assert_eq!(copy.get(key(150)).unwrap(), None);
    drop(copy);
    drop(db);
    let db = Db::open(&src, Options::default()).unwrap();
    assert!(all(&db).iter().all(|(_, v)| v == b"after"));
}

#[cfg(unix)]
#[test]
fn table_files_are_hard_links() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("db");
    let db = Db::open(&src, opts()).unwrap();
    for i in 0..500 {
        db.put(key(i), b"v").unwrap();
    }
    let cp = dir.path().join("cp");
    db.create_checkpoint(&cp).unwrap();
    let ssts: Vec<_> = std::fs::read_dir(&cp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    assert!(!ssts.is_empty(), "the memtable was flushed into a table");
    for p in &ssts {
        let there = std::fs::metadata(src.join(p.file_name().unwrap())).unwrap();
        assert_eq!(std::fs::metadata(p).unwrap().ino(), there.ino(), "{p:?} is a link");
    }
    let names: Vec<String> = std::fs::read_dir(&cp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().any(|n| n == "CURRENT"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("OPTIONS-")), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".log") || n == "LOCK"), "{names:?}");
}

#[test]
fn existing_directories_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), opts()).unwrap();
    db.put(b"k", b"v").unwrap();
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("mine.txt"), b"keep").unwrap();
    let e = db.create_checkpoint(&taken).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("exists"), "{e}");
    assert_eq!(std::fs::read(taken.join("mine.txt")).unwrap(), b"keep");
    assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 1);

    let left = dir.path().join("left.tmp");
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("x"), b"x").unwrap();
    let e = db.create_checkpoint(dir.path().join("left")).unwrap_err();
    assert!(e.to_string().contains("left.tmp"), "{e}");
    assert!(!dir.path().join("left").exists());
    assert_eq!(std::fs::read(left.join("x")).unwrap(), b"x");

    let e = db.create_checkpoint(dir.path().join("no/such/parent")).unwrap_err();
    assert!(e.to_string().contains("parent"), "{e}");
    assert!(!dir.path().join("no").exists());
}

#[test]
fn a_checkpoint_during_writes_holds_a_prefix_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options { write_buffer_size: 64 << 10, ..opts() };
    let db = Arc::new(Db::open(dir.path().join("db"), o).unwrap());
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, acked, stop) = (db.clone(), acked.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                db.put(key(i), vec![b'v'; 100]).unwrap();
                i += 1;
                acked.store(i, Ordering::Release);
            }
        })
    };
    for round in 0..4 {
        while acked.load(Ordering::Acquire) < 2000 * (round + 1) {
            std::thread::yield_now();
        }
        let before = acked.load(Ordering::Acquire);
        let cp = dir.path().join(format!("cp{round}"));
        db.create_checkpoint(&cp).unwrap();
        let after = acked.load(Ordering::Acquire);
        let copy = Db::open(&cp, Options::default()).unwrap();
        let keys: Vec<Vec<u8>> = all(&copy).into_iter().map(|(k, _)| k).collect();
        let n = keys.len() as u64;
        assert!(n >= before, "round {round}: {n} keys, {before} acknowledged before the call");
        assert!(n <= after + 1, "round {round}: {n} keys, {after} acknowledged after the call");
        let gap = keys.iter().enumerate().find(|(i, k)| **k != key(*i as u64));
        assert!(gap.is_none(), "round {round}: not a prefix of the writes, at {gap:?}");
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

#[test]
fn a_failed_or_power_cut_checkpoint_leaves_nothing_or_a_whole_copy() {
    let mut n = 1;
    loop {
        let fs = SimFs::new();
        let o = Options { fs: fs.clone() as Arc<dyn talus::fs::Fs>, ..opts() };
        let db = Db::open("/db", o.clone()).unwrap();
        for i in 0..300 {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        db.flush().unwrap();
        for i in 300..400 {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        let expected = all(&db);
        fs.reset_op_counts();
        fs.fail_after(OpFilter::ALL, n, std::io::ErrorKind::Other, true);
        let r = db.create_checkpoint("/cp");
        let injected = fs.faults_injected() > 0;
        fs.clear_faults();
        match &r {
            Ok(()) => assert!(fs.exists(Path::new("/cp/CURRENT")), "n={n}"),
            // Only the parent directory's sync comes after the rename: the copy is whole.
            Err(Error::Io { context, .. }) if context == "syncing directory /" => {
                assert!(fs.exists(Path::new("/cp/CURRENT")), "n={n}")
            }
            Err(_) => {
                assert!(
                    !fs.exists(Path::new("/cp")),
                    "n={n}: a failed checkpoint left /cp ({r:?})"
                );
                assert!(
                    fs.files().iter().all(|p| !p.starts_with("/cp.tmp")),
                    "n={n}: a failed checkpoint left files in /cp.tmp: {r:?} {:?}",
                    fs.files()
                );
            }
        }
        assert_eq!(all(&db), expected, "n={n}: the database itself is unchanged");
        drop(db);
        for mode in [CrashMode::KeepUnsynced, CrashMode::DropAllUnsynced] {
            let after = fs.crash(mode);
            if after.exists(Path::new("/cp/CURRENT")) {
                let o2 =
                    Options { fs: after.clone() as Arc<dyn talus::fs::Fs>, ..Options::default() };
                let copy = Db::open("/cp", o2).unwrap();
                assert_eq!(all(&copy), expected, "n={n} {mode:?}: the copy is whole");
            } else {
                assert!(r.is_err(), "n={n} {mode:?}: an acknowledged checkpoint is durable");
                // (A copy renamed but not made durable may vanish: SimFs keeps directories
                // durable at once, so here it never does.)
                assert!(
                    after.files().iter().all(|p| !p.starts_with(Path::new("/cp"))),
                    "n={n} {mode:?}: no half copy"
                );
            }
        }
        if !injected {
            break;
        }
        n += 1;
        assert!(n < 400, "too many IO operations");
    }
    assert!(n > 10, "the loop covered the checkpoint's IO ({n} operations)");
}
