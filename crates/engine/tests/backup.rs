//! `BackupEngine` (RocksDB's `BackupEngine`): backups restore to the data of their moment,
//! are incremental (shared tables copied once), verify catches damage by file, purge keeps the
//! newest, foreign directories are refused untouched, and a backup failed or cut by a crash at
//! any IO leaves every listed backup whole and no garbage after the next open.

use std::path::Path;
use std::sync::Arc;

use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::Fs;
use talus::{BackupEngine, Db, Error, Options};

fn opts() -> Options {
    Options { create_if_missing: true, ..Default::default() }
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

fn all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(&Default::default()).map(|kv| kv.unwrap()).collect()
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum()
}

#[test]
fn backups_restore_their_moment_incrementally_and_purge_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), opts()).unwrap();
    for i in 0..20_000 {
        db.put(key(i), vec![(i % 251) as u8; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..100 {
        db.put(key(i * 7), b"memtable").unwrap();
    }
    let first = all(&db);
    let be = BackupEngine::open(dir.path().join("backups")).unwrap();
    assert_eq!(be.create_new_backup(&db).unwrap(), 1);
    let shared = dir.path().join("backups/shared_checksum");
    let after_first = dir_bytes(&shared);
    // 1% of the keys change.
    for i in 0..200 {
        db.put(key(i * 100), b"changed").unwrap();
    }
    let second = all(&db);
    assert_eq!(be.create_new_backup(&db).unwrap(), 2);
    let copied = dir_bytes(&shared) - after_first;
    assert!(copied * 20 < after_first, "an incremental backup copied {copied} of {after_first}");
    let info = be.get_backup_info().unwrap();
    assert_eq!(info.iter().map(|b| b.backup_id).collect::<Vec<_>>(), [1, 2]);
    assert!(info[1].sequence > info[0].sequence && info[0].size > after_first / 2);
    be.verify_backup(1).unwrap();
    be.verify_backup(2).unwrap();

    be.restore_db_from_backup(1, dir.path().join("r1")).unwrap();
    be.restore_db_from_latest_backup(dir.path().join("r2")).unwrap();
    assert_eq!(all(&Db::open(dir.path().join("r1"), Options::default()).unwrap()), first);
    let r2 = Db::open(dir.path().join("r2"), Options::default()).unwrap();
    assert_eq!(all(&r2), second);
    r2.put(b"only here", b"1").unwrap();
    assert_eq!(db.get(b"only here").unwrap(), None);
    let e = be.restore_db_from_backup(1, dir.path().join("r1")).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");

    be.purge_old_backups(1).unwrap();
    assert_eq!(be.get_backup_info().unwrap().len(), 1);
    assert!(matches!(be.verify_backup(1), Err(Error::NotFound(_))));
    be.verify_backup(2).unwrap();
    assert!(!dir.path().join("backups/private/1").exists());
    be.restore_db_from_backup(2, dir.path().join("r3")).unwrap();
    assert_eq!(all(&Db::open(dir.path().join("r3"), Options::default()).unwrap()), second);
}

#[test]
fn damage_is_found_by_verify_and_restore_and_restore_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), opts()).unwrap();
    for i in 0..5000 {
        db.put(key(i), b"value").unwrap();
    }
    let be = BackupEngine::open(dir.path().join("backups")).unwrap();
    be.create_new_backup(&db).unwrap();
    let shared = dir.path().join("backups/shared_checksum");
    let sst = std::fs::read_dir(&shared).unwrap().next().unwrap().unwrap().path();
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[100] ^= 0x10;
    std::fs::write(&sst, &bytes).unwrap();
    let e = be.verify_backup(1).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains("shared_checksum"), "{e}");
    let e = be.restore_db_from_backup(1, dir.path().join("r")).unwrap_err();
    assert!(e.is_corruption(), "{e}");
    assert!(!dir.path().join("r").exists() && !dir.path().join("r.tmp").exists());
    // A damaged meta file is corruption too, naming it.
    let meta = dir.path().join("backups/meta/1");
    let mut m = std::fs::read(&meta).unwrap();
    m[20] ^= 1;
    std::fs::write(&meta, &m).unwrap();
    let e = be.get_backup_info().unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains("meta/1"), "{e}");
}

#[test]
fn a_directory_of_other_files_is_refused_untouched_and_one_engine_holds_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"mine").unwrap();
    let e = BackupEngine::open(&other).err().unwrap();
    assert!(matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("TALUS-BACKUP"));
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
    let be = BackupEngine::open(dir.path().join("b")).unwrap();
    assert!(matches!(BackupEngine::open(dir.path().join("b")).err().unwrap(), Error::Locked(_)));
    drop(be);
    BackupEngine::open(dir.path().join("b")).unwrap();
}

#[test]
fn a_backup_failed_or_cut_at_any_io_leaves_whole_backups_and_no_garbage() {
    let mut n = 1;
    loop {
        let fs = SimFs::new();
        let afs = fs.clone() as Arc<dyn Fs>;
        let db = Db::open("/db", Options { fs: afs.clone(), ..opts() }).unwrap();
        for i in 0..300 {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        let first = all(&db);
        let be = BackupEngine::open_with_fs("/b", afs.clone()).unwrap();
        be.create_new_backup(&db).unwrap();
        for i in 300..400 {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        let second = all(&db);
        fs.reset_op_counts();
        fs.fail_after(OpFilter::ALL, n, std::io::ErrorKind::Other, true);
        let r = be.create_new_backup(&db);
        let injected = fs.faults_injected() > 0;
        fs.clear_faults();
        drop(be);
        drop(db);
        for (m, mode) in
            [CrashMode::KeepUnsynced, CrashMode::DropAllUnsynced].into_iter().enumerate()
        {
            let after = fs.crash(mode) as Arc<dyn Fs>;
            let be = BackupEngine::open_with_fs("/b", after.clone()).unwrap();
            let ids: Vec<u32> = be.get_backup_info().unwrap().iter().map(|b| b.backup_id).collect();
            if r.is_ok() {
                assert_eq!(ids, [1, 2], "n={n} {mode:?}: an acknowledged backup is durable");
            } else {
                assert!(ids == [1] || ids == [1, 2], "n={n} {mode:?}: {ids:?}");
            }
            for &id in &ids {
                be.verify_backup(id).unwrap();
                let to = format!("/r{id}-{m}");
                be.restore_db_from_backup(id, &to).unwrap();
                let o = Options { fs: after.clone(), ..Options::default() };
                let got = all(&Db::open(&to, o).unwrap());
                assert_eq!(got, if id == 1 { first.clone() } else { second.clone() }, "n={n}");
            }
            let names: Vec<String> = after
                .list_dir(Path::new("/b/shared_checksum"))
                .unwrap()
                .into_iter()
                .chain(after.list_dir(Path::new("/b/private")).unwrap())
                .chain(after.list_dir(Path::new("/b/meta")).unwrap())
                .collect();
            assert!(!names.iter().any(|n| n.ends_with("tmp")), "n={n} {mode:?}: {names:?}");
        }
        if !injected {
            break;
        }
        n += 1;
        assert!(n < 500, "too many IO operations");
    }
    assert!(n > 10, "the loop covered the backup's IO ({n} operations)");
}
