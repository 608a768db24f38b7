//! Which engine wrote a directory: Talus's opener refuses a RocksDB directory, and with the
//! `rocksdb` feature RocksDB's refuses a Talus one, by name and with nothing written.

use std::collections::BTreeMap;
use std::path::Path;

use talus_table::*;

/// Every file's name and bytes under `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn open_talus_refuses_a_rocksdb_directory_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000005\n").unwrap();
    std::fs::write(dir.path().join("MANIFEST-000005"), b"\x00\x01rocksdb").unwrap();
    std::fs::write(
        dir.path().join("OPTIONS-000007"),
        "# This is a RocksDB option file.\n[Version]\n  rocksdb_version=10.4.2\n",
    )
    .unwrap();
    let before = snapshot(dir.path());
    let o = Options { create_if_missing: true, ..Options::default() };
    match open_talus(dir.path(), o) {
        Err(TableError::OtherEngine { found, wanted, detail, .. }) => {
            assert_eq!((found, wanted), ("rocksdb", "talus"));
            assert!(detail.contains("OPTIONS-000007") && detail.contains("10.4.2"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_refuses_a_talus_directory_with_nothing_written() {
    use talus_table::storage::rocksdb::RocksDb;
    let dir = tempfile::tempdir().unwrap();
    let o = Options { create_if_missing: true, ..Options::default() };
    drop(open_talus(dir.path(), o.clone()).unwrap());
    let before = snapshot(dir.path());
    match RocksDb::open(dir.path(), &o, &[]) {
        Err(e @ TableError::OtherEngine { .. }) => {
            let t = e.to_string();
            assert!(t.contains("is a talus database") && t.contains("--engine=talus"), "{t}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(snapshot(dir.path()), before);
    // And Talus's refuses the RocksDB database RocksDB makes.
    let rdir = tempfile::tempdir().unwrap();
    let r = RocksDb::open(rdir.path(), &o, &[]).unwrap();
    assert!(r.options_report().comparison.compared > 40, "{:?}", r.options_report().comparison);
    drop(r);
    let before = snapshot(rdir.path());
    assert!(matches!(open_talus(rdir.path(), o), Err(TableError::OtherEngine { .. })));
    assert_eq!(snapshot(rdir.path()), before);
}
