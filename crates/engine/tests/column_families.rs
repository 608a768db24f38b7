//! Column families as far as this build has them (`talus::column_family`): the `default`
//! family's handle, family-tagged WAL records (format version 4) refused on write and skipped
//! on replay with their sequence numbers, and a database whose MANIFEST holds another family
//! listed by `Db::list_column_families` and refused by every open, naming the family, as
//! RocksDB refuses a family that is not named.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{tiny_options, SIM_DB};
use talus::fs::fault::{CrashMode, SimFs};
use talus::fs::{Fs, StdFs};
use talus::version::cf_edit::CfEdit;
use talus::version::VersionEdit;
use talus::wal::LogWriter;
use talus::{Db, Error, Options, WriteBatch, WriteOptions};

fn get_all(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter(&Default::default()).collect::<talus::Result<_>>().expect("scan")
}

/// A batch at `seq`: put k3=v3 in `default` between two records of family 1, then delete k0.
fn cross_family_batch(seq: u64) -> Vec<u8> {
    let mut d = seq.to_le_bytes().to_vec();
    d.extend_from_slice(&4u32.to_le_bytes());
    d.extend_from_slice(&[0x05, 0x01, 0x01, b'x', 0x01, b'1']);
    d.extend_from_slice(&[0x01, 0x02, b'k', b'3', 0x02, b'v', b'3']);
    d.extend_from_slice(&[0x04, 0x01, 0x01, b'y']);
    d.extend_from_slice(&[0x00, 0x02, b'k', b'0']);
    d
}

#[test]
fn the_default_handle_writes_where_plain_calls_do() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Default::default() };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let cf = db.cf_handle("default").expect("default exists");
    assert_eq!(cf, db.default_column_family());
    assert!(db.cf_handle("users").is_none());
    let mut b = WriteBatch::new();
    b.put_cf(&cf, b"a", b"1");
    b.put(b"b", b"2");
    b.delete_range_cf(&cf, b"b", b"c");
    b.put_cf(&cf, b"c", b"3");
    assert_eq!(b.max_column_family_id(), 0);
    db.write(b, &WriteOptions::default()).unwrap();
    let want: BTreeMap<Vec<u8>, Vec<u8>> =
        [(b"a".to_vec(), b"1".to_vec()), (b"c".to_vec(), b"3".to_vec())].into();
    assert_eq!(get_all(&db), want);
    assert_eq!(Db::list_column_families(dir.path(), &opts).unwrap(), ["default"]);
    db.close().unwrap();
    let e = Db::list_column_families(dir.path().join("missing"), &opts).unwrap_err();
    assert!(matches!(e, Error::NotFound(_)), "{e}");
}

#[test]
fn a_batch_for_a_missing_family_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Default::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    db.put(b"k0", b"v0").unwrap();
    let b = WriteBatch::from_data(cross_family_batch(0), "test", 0).unwrap();
    assert_eq!(b.max_column_family_id(), 1);
    match db.write(b, &WriteOptions::default()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("id 1 does not exist"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Nothing of it was applied: k3 absent, k0 still there.
    assert_eq!(get_all(&db).len(), 1);
    assert_eq!(db.get(b"k0").unwrap().as_deref(), Some(&b"v0"[..]));
}

/// A WAL written by a build with families: replay applies the `default` records at their
/// own sequence numbers and skips the others (RocksDB skips a family that is gone).
#[test]
fn replay_skips_other_families_and_keeps_their_sequence_numbers() {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, tiny_options(fs.clone(), 64 << 20)).expect("open");
    for i in 0..3 {
        db.put(format!("k{i}"), format!("v{i}")).unwrap();
    }
    let fs = fs.crash(CrashMode::KeepUnsynced);
    drop(db);
    let wal: PathBuf = fs
        .files()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".log"))
        .find(|p| fs.contents(p).is_some_and(|c| !c.is_empty()))
        .expect("a WAL");
    let n: u64 =
        wal.file_name().unwrap().to_string_lossy().trim_end_matches(".log").parse().unwrap();
    let path = talus::filename::wal_path(Path::new(SIM_DB), n + 1);
    let mut w = LogWriter::new(fs.create(&path).unwrap());
    w.add_record(&cross_family_batch(4)).unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new(SIM_DB)).unwrap();

    let db = Db::open(SIM_DB, tiny_options(fs.clone(), 64 << 20)).expect("reopen");
    let want: BTreeMap<Vec<u8>, Vec<u8>> = [
        (b"k1".to_vec(), b"v1".to_vec()),
        (b"k2".to_vec(), b"v2".to_vec()),
        (b"k3".to_vec(), b"v3".to_vec()),
    ]
    .into();
    assert_eq!(get_all(&db), want);
    // The batch used sequences 4..=7, the skipped records' included.
    assert_eq!(db.snapshot().sequence(), 7);
    db.put(b"k4", b"v4").unwrap();
    assert_eq!(db.snapshot().sequence(), 8);
    db.flush().unwrap();
    drop(db);
    let db = Db::open(SIM_DB, tiny_options(fs.clone(), 64 << 20)).expect("reopen again");
    assert_eq!(get_all(&db).len(), 4);
}

/// Appends a MANIFEST record holding `edit` to `w`.
fn add_edit(w: &mut LogWriter, edit: &VersionEdit) {
    let mut r = Vec::new();
    edit.encode(&mut r);
    w.add_record(&r).unwrap();
}

/// A database whose MANIFEST (written as a build with families would) holds family `users`.
fn database_with_a_family(dir: &Path) {
    let fs = StdFs;
    let mut w = LogWriter::new(fs.create(&talus::filename::manifest_path(dir, 1)).unwrap());
    let base = VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(0),
        next_file_number: Some(3),
        last_sequence: Some(0),
        ..Default::default()
    };
    add_edit(&mut w, &base);
    let cf = CfEdit { family: 1, add: Some("users".into()), ..Default::default() };
    add_edit(&mut w, &VersionEdit { cf, ..Default::default() });
    w.sync().unwrap();
    std::fs::write(dir.join("CURRENT"), "MANIFEST-000001\n").unwrap();
}

#[test]
fn a_database_with_an_unopened_family_is_listed_and_refused_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    database_with_a_family(dir.path());
    let before: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    let opts = Options { create_if_missing: true, ..Default::default() };
    assert_eq!(Db::list_column_families(dir.path(), &opts).unwrap(), ["default", "users"]);
    match Db::open(dir.path(), opts.clone()) {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("column families not opened: users"), "{m}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // Read-only, a subset may be opened (RocksDB's rule): `default` alone here.
    let ro = Db::open_read_only(dir.path(), opts.clone()).unwrap();
    assert!(ro.cf_handle("users").is_none());
    drop(ro);
    let mut after: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    after.retain(|p| !p.ends_with("LOCK") && !p.to_string_lossy().contains("LOG"));
    assert_eq!(after.len(), before.len(), "{after:?}");
}
