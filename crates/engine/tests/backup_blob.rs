//! Backups of a database with blob files: blob files are shared between backups like tables
//! (an incremental backup copies only the new ones), restore and verify handle them, purge
//! deletes a shared blob file only when no kept backup lists it; checkpoints hard-link them.

use std::collections::BTreeSet;
use std::path::Path;

use talus::{BackupEngine, Db, Options};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        enable_blob_files: true,
        min_blob_size: 100,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: 1.0,
        disable_auto_compactions: true,
        ..Default::default()
    }
}

fn all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(&Default::default()).map(|kv| kv.unwrap()).collect()
}

/// Names in `dir` ending in `ext`.
fn names(dir: &Path, ext: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(ext))
        .collect()
}

/// The blob file numbers of the shared names (`NNNNNN_CRC_SIZE.blob`).
fn shared_blob_numbers(shared: &Path) -> BTreeSet<u64> {
    names(shared, ".blob").iter().map(|n| n.split('_').next().unwrap().parse().unwrap()).collect()
}

fn db_blob_numbers(db: &Path) -> BTreeSet<u64> {
    names(db, ".blob").iter().map(|n| n.trim_end_matches(".blob").parse().unwrap()).collect()
}

fn fill(db: &Db, round: u8, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(format!("k{i:05}"), vec![b'a' + round; 500 + i as usize % 7]).unwrap();
    }
    db.flush().unwrap();
}

#[test]
fn blob_files_are_shared_between_backups_and_purged_when_unused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, opts()).unwrap();
    fill(&db, 0, 0..200);
    let be = BackupEngine::open(dir.path().join("backups")).unwrap();
    let shared = dir.path().join("backups/shared_checksum");
    assert_eq!(be.create_new_backup(&db).unwrap(), 1);
    let first = all(&db);
    let blobs1 = db_blob_numbers(&path);
    assert!(!blobs1.is_empty());
    assert_eq!(shared_blob_numbers(&shared), blobs1, "backup 1's blob files are shared");
    assert!(names(&dir.path().join("backups/private/1"), ".blob").is_empty());
    let mtimes = |s: &Path| -> Vec<std::time::SystemTime> {
        names(s, ".blob")
            .iter()
            .map(|n| s.join(n).metadata().unwrap().modified().unwrap())
            .collect()
    };
    let before = mtimes(&shared);

    // More writes: backup 2 copies only the new blob file.
    fill(&db, 1, 200..300);
    let blobs2 = db_blob_numbers(&path);
    assert!(blobs2.len() > blobs1.len());
    assert_eq!(be.create_new_backup(&db).unwrap(), 2);
    let second = all(&db);
    assert_eq!(shared_blob_numbers(&shared), blobs2);
    let now: Vec<_> = names(&shared, ".blob")
        .iter()
        .filter(|n| blobs1.contains(&n.split('_').next().unwrap().parse().unwrap()))
        .map(|n| shared.join(n).metadata().unwrap().modified().unwrap())
        .collect();
    assert_eq!(now, before, "backup 1's blob files were not copied again");

    // Garbage collection rewrites every value into new blob files: backup 3 shares none of
    // the old ones.
    fill(&db, 2, 0..100);
    db.compact_range(None, None).unwrap();
    let blobs3 = db_blob_numbers(&path);
    assert!(blobs3.is_disjoint(&blobs2), "{blobs3:?} {blobs2:?}");
    assert_eq!(be.create_new_backup(&db).unwrap(), 3);
    let third = all(&db);
    for id in 1..=3 {
        be.verify_backup(id).unwrap();
    }

    // Purge keeping 2 and 3: backup 1's blob files are all in backup 2, so none goes.
    be.purge_old_backups(2).unwrap();
    let all_shared: BTreeSet<u64> = blobs2.union(&blobs3).copied().collect();
    assert_eq!(shared_blob_numbers(&shared), all_shared);
    // Keeping only 3: backup 2's blob files go.
    be.purge_old_backups(1).unwrap();
    assert_eq!(shared_blob_numbers(&shared), blobs3);
    be.verify_backup(3).unwrap();

    be.restore_db_from_backup(3, dir.path().join("r3")).unwrap();
    assert_eq!(db_blob_numbers(&dir.path().join("r3")), blobs3);
    let r3 = Db::open(dir.path().join("r3"), Options::default()).unwrap();
    assert_eq!(all(&r3), third);
    assert_ne!(third, second);
    assert_ne!(second, first);

    // A damaged shared blob file: verify and restore name it.
    let victim = shared.join(names(&shared, ".blob").into_iter().next().unwrap());
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[40] ^= 1;
    std::fs::write(&victim, &bytes).unwrap();
    let e = be.verify_backup(3).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains(".blob"), "{e}");
    assert!(be.restore_db_from_backup(3, dir.path().join("r4")).unwrap_err().is_corruption());
    assert!(!dir.path().join("r4").exists());
}

#[test]
fn restored_backups_read_every_blob_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, opts()).unwrap();
    fill(&db, 0, 0..150);
    let be = BackupEngine::open(dir.path().join("backups")).unwrap();
    be.create_new_backup(&db).unwrap();
    fill(&db, 1, 100..250);
    be.create_new_backup(&db).unwrap();
    let want = all(&db);
    drop(be);
    // Reopened: the shared blob files are kept (listed), nothing is collected.
    let be = BackupEngine::open(dir.path().join("backups")).unwrap();
    be.restore_db_from_latest_backup(dir.path().join("r")).unwrap();
    let r = Db::open(dir.path().join("r"), opts()).unwrap();
    assert_eq!(all(&r), want);
    for (k, v) in &want {
        assert_eq!(r.get(k).unwrap().as_ref(), Some(v));
    }
}

#[test]
fn checkpoints_hard_link_blob_files() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, opts()).unwrap();
    fill(&db, 0, 0..100);
    db.create_checkpoint(dir.path().join("cp")).unwrap();
    let blobs = names(&path, ".blob");
    assert!(!blobs.is_empty());
    assert_eq!(names(&dir.path().join("cp"), ".blob"), blobs);
    for n in &blobs {
        let (a, b) =
            (path.join(n).metadata().unwrap(), dir.path().join("cp").join(n).metadata().unwrap());
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "{n} is a hard link");
    }
    let want = all(&db);
    drop(db);
    assert_eq!(all(&Db::open(dir.path().join("cp"), Options::default()).unwrap()), want);
}
