use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::fs::{read_all, write_file_atomic};

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// A file system with `/db` created (directories are durable at once).
fn setup() -> Arc<SimFs> {
    let fs = SimFs::new();
    fs.create_dir_all(p("/db")).unwrap();
    fs
}

fn write(fs: &SimFs, path: &str, data: &[u8], sync: bool) -> Box<dyn WritableFile> {
    let mut f = fs.create(p(path)).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync().unwrap();
    }
    f
}

fn io_kind(e: &Error) -> Option<ErrorKind> {
    match e {
        Error::Io { source, .. } => Some(source.kind()),
        _ => None,
    }
}

#[test]
fn reads_see_unsynced_data_and_sizes_match() {
    let fs = setup();
    let mut f = write(&fs, "/db/a", b"hello ", false);
    f.append(b"world").unwrap();
    assert_eq!(f.size(), 11);
    assert_eq!(read_all(&*fs, p("/db/a")).unwrap(), b"hello world");
    assert_eq!(fs.file_size(p("/db/a")).unwrap(), 11);
    let r = fs.open_random(p("/db/a")).unwrap();
    let mut buf = [0u8; 5];
    r.read_exact_at(6, &mut buf).unwrap();
    assert_eq!(&buf, b"world");
    let e = r.read_exact_at(7, &mut buf).unwrap_err();
    assert_eq!(io_kind(&e), Some(ErrorKind::UnexpectedEof));
    let e = fs.open_random(p("/db/missing")).err().unwrap();
    assert_eq!(io_kind(&e), Some(ErrorKind::NotFound));
    assert!(fs.create(p("/nodir/x")).is_err(), "creating in a missing directory must fail");
    let mut names = fs.list_dir(p("/db")).unwrap();
    names.sort();
    assert_eq!(names, vec!["a".to_string()]);
    assert_eq!(fs.list_dir(p("/")).unwrap(), vec!["db".to_string()]);
}

#[test]
fn unsynced_data_dropped_synced_kept() {
    let fs = setup();
    let mut f = write(&fs, "/db/a", b"durable", true);
    fs.sync_dir(p("/db")).unwrap();
    f.append(b"-lost").unwrap();
    f.flush().unwrap();
    assert_eq!(fs.unsynced_len("/db/a"), Some(5));
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/a").unwrap(), b"durable");
    assert_eq!(fs.unsynced_len("/db/a"), Some(0));
    // The old handle is dead: it can neither write nor sync into the new state.
    assert!(f.append(b"x").is_err());
    assert!(f.sync().is_err());
    assert_eq!(fs.contents("/db/a").unwrap(), b"durable");
}

#[test]
fn process_crash_keeps_everything_but_a_later_power_loss_still_drops_it() {
    let fs = setup();
    let f = write(&fs, "/db/a", b"abc", false);
    let fs = fs.crash(CrashMode::KeepUnsynced);
    drop(f);
    assert_eq!(fs.contents("/db/a").unwrap(), b"abc");
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert!(!fs.exists(p("/db/a")), "creation was never made durable");
}

#[test]
fn random_crash_keeps_a_prefix_of_unsynced_bytes() {
    let mut outcomes = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let fs = setup();
        let mut f = write(&fs, "/db/a", b"0123", true);
        fs.sync_dir(p("/db")).unwrap();
        f.append(b"456789").unwrap();
        let fs = fs.crash(CrashMode::DropRandomUnsynced { seed });
        let got = fs.contents("/db/a").unwrap();
        assert!(got.len() >= 4 && b"0123456789".starts_with(&got), "seed {seed}: {got:?}");
        outcomes.insert(got.len());
        // The same seed on the same history gives the same result.
        let again = setup();
        let mut f = write(&again, "/db/a", b"0123", true);
        again.sync_dir(p("/db")).unwrap();
        f.append(b"456789").unwrap();
        let again = again.crash(CrashMode::DropRandomUnsynced { seed });
        assert_eq!(again.contents("/db/a").unwrap(), got);
    }
    assert!(outcomes.len() > 3, "random crashes should keep different prefixes: {outcomes:?}");
}

#[test]
fn random_crash_keeps_or_undoes_directory_entries() {
    let (mut kept, mut undone) = (0, 0);
    for seed in 0..64 {
        let fs = setup();
        drop(write(&fs, "/db/new", b"x", true));
        let fs = fs.crash(CrashMode::DropRandomUnsynced { seed });
        let survived = fs.exists(p("/db/new"));
        if survived {
            assert_eq!(fs.contents("/db/new").unwrap(), b"x");
            kept += 1;
        } else {
            undone += 1;
        }
        // Whatever a crash left is durable.
        let fs = fs.crash(CrashMode::DropAllUnsynced);
        assert_eq!(fs.exists(p("/db/new")), survived);
    }
    assert!(kept > 0 && undone > 0, "kept {kept}, undone {undone}");
}

#[test]
fn unsynced_creation_vanishes_and_synced_creation_survives() {
    let fs = setup();
    drop(write(&fs, "/db/synced-entry", b"a", true));
    fs.sync_dir(p("/db")).unwrap();
    drop(write(&fs, "/db/unsynced-entry", b"b", true));
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert!(fs.exists(p("/db/synced-entry")));
    assert!(!fs.exists(p("/db/unsynced-entry")));
    assert_eq!(fs.list_dir(p("/db")).unwrap(), vec!["synced-entry".to_string()]);
    // Synced entry but unsynced data: the file exists and is empty.
    drop(write(&fs, "/db/entry-only", b"data", false));
    fs.sync_dir(p("/db")).unwrap();
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/entry-only").unwrap(), b"");
}

#[test]
fn rename_and_delete_are_durable_only_after_dir_sync() {
    let fs = setup();
    drop(write(&fs, "/db/CURRENT", b"old", true));
    drop(write(&fs, "/db/victim", b"v", true));
    fs.sync_dir(p("/db")).unwrap();
    drop(write(&fs, "/db/CURRENT.dbtmp", b"new", true));
    fs.rename(p("/db/CURRENT.dbtmp"), p("/db/CURRENT")).unwrap();
    fs.remove_file(p("/db/victim")).unwrap();
    assert_eq!(fs.contents("/db/CURRENT").unwrap(), b"new");
    assert!(!fs.exists(p("/db/victim")));
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/CURRENT").unwrap(), b"old", "rename must revert");
    assert!(!fs.exists(p("/db/CURRENT.dbtmp")));
    assert_eq!(fs.contents("/db/victim").unwrap(), b"v", "deletion must come back");

    write_file_atomic(&*fs, p("/db"), "CURRENT", b"new").unwrap();
    fs.remove_file(p("/db/victim")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/CURRENT").unwrap(), b"new");
    assert!(!fs.exists(p("/db/victim")));
    assert!(!fs.exists(p("/db/CURRENT.dbtmp")));
    assert!(fs.rename(p("/db/nope"), p("/db/x")).is_err());
    assert!(fs.remove_file(p("/db/nope")).is_err());
}

#[test]
fn truncating_create_reverts_to_synced_content() {
    let fs = setup();
    drop(write(&fs, "/db/LOG", b"old log", true));
    fs.sync_dir(p("/db")).unwrap();
    drop(write(&fs, "/db/LOG", b"new", false));
    assert_eq!(fs.contents("/db/LOG").unwrap(), b"new");
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/LOG").unwrap(), b"old log");
    drop(write(&fs, "/db/LOG", b"newer", true));
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs.contents("/db/LOG").unwrap(), b"newer");
}

#[test]
fn unlinked_file_stays_readable_while_open() {
    let fs = setup();
    drop(write(&fs, "/db/a", b"abc", true));
    let r = fs.open_random(p("/db/a")).unwrap();
    fs.remove_file(p("/db/a")).unwrap();
    let mut buf = [0u8; 3];
    r.read_exact_at(0, &mut buf).unwrap();
    assert_eq!(&buf, b"abc");
}

#[test]
fn fail_nth_one_shot_and_persistent() {
    let fs = setup();
    let mut f = fs.create(p("/db/a")).unwrap();
    fs.fail_after(OpKind::Write, 3, ErrorKind::Other, true);
    f.append(b"1").unwrap();
    f.sync().unwrap(); // not a Write: does not count toward the fault
    f.append(b"2").unwrap();
    let e = f.append(b"3").unwrap_err();
    assert_eq!(io_kind(&e), Some(ErrorKind::Other));
    assert!(e.to_string().contains("/db/a"), "{e}");
    f.append(b"4").unwrap();
    assert_eq!(fs.contents("/db/a").unwrap(), b"124", "a failed append writes nothing");
    assert_eq!(fs.faults_injected(), 1);

    fs.fail_after(
        OpFilter::only(OpKind::Sync).with(OpKind::DirSync),
        2,
        ErrorKind::StorageFull,
        false,
    );
    f.sync().unwrap();
    for _ in 0..3 {
        let e = fs.sync_dir(p("/db")).unwrap_err();
        assert_eq!(io_kind(&e), Some(ErrorKind::StorageFull));
        assert!(f.sync().is_err());
    }
    fs.clear_faults();
    f.sync().unwrap();
    fs.sync_dir(p("/db")).unwrap();
}

#[test]
fn counters_drive_a_fail_every_nth_op_loop() {
    let workload = |fs: &SimFs| -> Result<()> {
        fs.create_dir_all(p("/db"))?;
        let mut f = fs.create(p("/db/a.tmp"))?;
        f.append(b"abc")?;
        f.sync()?;
        drop(f);
        fs.rename(p("/db/a.tmp"), p("/db/a"))?;
        fs.sync_dir(p("/db"))?;
        let data = read_all(fs, p("/db/a"))?;
        assert_eq!(data, b"abc");
        fs.remove_file(p("/db/a"))?;
        Ok(())
    };
    let fs = SimFs::new();
    workload(&fs).unwrap();
    let counts = fs.op_counts();
    for k in OpKind::ALL {
        assert!(counts.get(k) >= 1, "{k:?} not exercised");
    }
    assert_eq!(counts.matching(OpFilter::ALL), counts.total());
    let total = counts.total();
    for n in 1..=total {
        let fs = SimFs::new();
        fs.fail_after(OpFilter::ALL, n, ErrorKind::Other, true);
        assert!(workload(&fs).is_err(), "op {n} of {total} did not fail");
        assert_eq!(fs.faults_injected(), 1);
        assert_eq!(fs.op_counts().total(), n, "the workload stops at the failing op");
    }
    let fs = SimFs::new();
    fs.fail_after(OpFilter::ALL, total + 1, ErrorKind::Other, true);
    workload(&fs).unwrap();
    fs.reset_op_counts();
    assert_eq!(fs.op_counts().total(), 0);
}

#[test]
fn capacity_limits_appends_and_deletes_free_space() {
    let fs = setup();
    fs.set_capacity(10);
    let mut f = fs.create(p("/db/a")).unwrap();
    f.append(&[0; 8]).unwrap();
    let e = f.append(&[0; 3]).unwrap_err();
    assert_eq!(io_kind(&e), Some(ErrorKind::StorageFull));
    f.append(&[0; 2]).unwrap();
    assert_eq!(fs.used_bytes(), 10);
    drop(f);
    let mut g = fs.create(p("/db/b")).unwrap();
    assert!(g.append(b"x").is_err());
    fs.remove_file(p("/db/a")).unwrap();
    g.append(b"x").unwrap();
    fs.clear_capacity();
    g.append(&[0; 100]).unwrap();
}

#[test]
fn lock_refuses_second_holder_until_released() {
    let fs = setup();
    let l = fs.lock(p("/db/LOCK")).unwrap();
    assert!(fs.exists(p("/db/LOCK")));
    assert!(matches!(fs.lock(p("/db/LOCK")), Err(Error::Locked(_))));
    let other = fs.lock(p("/db/OTHER")).unwrap();
    drop(l);
    let l2 = fs.lock(p("/db/LOCK")).unwrap();
    // A crash releases every lock, and the dead guard's drop does not release the new one.
    let fs2 = fs.crash(CrashMode::KeepUnsynced);
    assert!(fs.lock(p("/db/LOCK")).is_err(), "dead view");
    let l3 = fs2.lock(p("/db/LOCK")).unwrap();
    drop(l2);
    drop(other);
    assert!(matches!(fs2.lock(p("/db/LOCK")), Err(Error::Locked(_))));
    drop(l3);
    fs2.lock(p("/db/LOCK")).unwrap();
}

#[test]
fn dead_view_fails_everything() {
    let fs = setup();
    drop(write(&fs, "/db/a", b"abc", true));
    fs.sync_dir(p("/db")).unwrap();
    let r = fs.open_random(p("/db/a")).unwrap();
    let mut s = fs.open_sequential(p("/db/a")).unwrap();
    let new = fs.crash(CrashMode::DropAllUnsynced);
    assert!(!fs.is_alive() && new.is_alive());
    assert!(!fs.exists(p("/db/a")));
    assert!(fs.create(p("/db/b")).is_err());
    assert!(fs.remove_file(p("/db/a")).is_err());
    assert!(fs.rename(p("/db/a"), p("/db/c")).is_err());
    assert!(fs.list_dir(p("/db")).is_err());
    assert!(fs.sync_dir(p("/db")).is_err());
    assert!(r.read_exact_at(0, &mut [0u8; 1]).is_err());
    assert!(s.read(&mut [0u8; 1]).is_err());
    assert_eq!(new.files(), vec![std::path::PathBuf::from("/db/a")]);
    assert_eq!(read_all(&*new, p("/db/a")).unwrap(), b"abc");
}

#[test]
fn flip_bit_and_truncate_edit_contents() {
    let fs = setup();
    drop(write(&fs, "/db/a", b"\x00\x00", true));
    fs.flip_bit("/db/a", 9).unwrap();
    assert_eq!(fs.contents("/db/a").unwrap(), b"\x00\x02");
    assert!(fs.flip_bit("/db/a", 16).is_err());
    fs.truncate("/db/a", 1).unwrap();
    assert_eq!(fs.contents("/db/a").unwrap(), b"\x00");
    assert!(fs.truncate("/db/missing", 0).is_err());
}

#[test]
fn a_directory_rename_moves_its_files_and_their_durable_state() {
    let fs = setup();
    fs.create_dir_all(p("/db/sub")).unwrap();
    drop(write(&fs, "/db/a", b"synced", true));
    drop(write(&fs, "/db/sub/b", b"unsynced", false));
    fs.sync_dir(p("/db")).unwrap();
    fs.sync_dir(p("/db/sub")).unwrap();
    fs.create_dir_all(p("/other")).unwrap();
    let e = fs.rename(p("/db"), p("/other")).unwrap_err();
    assert_eq!(io_kind(&e), Some(ErrorKind::AlreadyExists));
    let e = fs.rename(p("/db"), p("/db/sub/in")).unwrap_err();
    assert_eq!(io_kind(&e), Some(ErrorKind::InvalidInput));
    fs.rename(p("/db"), p("/moved")).unwrap();
    assert!(!fs.exists(p("/db")) && !fs.exists(p("/db/a")));
    assert_eq!(read_all(&*fs, p("/moved/a")).unwrap(), b"synced");
    assert_eq!(fs.list_dir(p("/moved")).unwrap().len(), 2);
    let after = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(read_all(&*after, p("/moved/a")).unwrap(), b"synced");
    assert_eq!(read_all(&*after, p("/moved/sub/b")).unwrap(), b"", "unsynced bytes dropped");
}
