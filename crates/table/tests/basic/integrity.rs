//! Damage at the table layer: `verify_indexes` finds missing and stray index entries; garbage
//! rows and catalog records are `Corruption`, never panics.

use talus_table::*;

use crate::common::*;
use crate::helpers::open;

#[test]
fn verify_indexes_finds_missing_and_stray_entries() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    for i in 0..10 {
        t.insert(&row(i, Some(1), "v", i)).unwrap();
    }
    assert_eq!(t.verify_indexes().unwrap(), 10);
    // The first table gets id 256, its first index 257 (docs/format/table-keys.md).
    let by_a: [u8; 4] = 257u32.to_be_bytes();
    let mut stray = by_a.to_vec();
    stray.extend_from_slice(&[0x01, 0x80, 0, 0, 9, 0x80, 0, 0, 0, 0, 0, 0, 99]);
    raw_write(&cat, &stray, Some(b""), None);
    assert!(matches!(t.verify_indexes(), Err(TableError::Corruption { .. })));
    raw_write(&cat, &stray, None, None);
    assert_eq!(t.verify_indexes().unwrap(), 10);
    raw_write(&cat, &by_a, None, Some(&258u32.to_be_bytes()));
    assert!(matches!(t.verify_indexes(), Err(TableError::Corruption { .. })));
}

#[test]
fn garbage_rows_and_catalog_records_are_corruption_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    {
        let cat = open(dir.path());
        let t = cat.create_table(table_def("t")).unwrap();
        t.insert(&row(1, Some(1), "x", 1)).unwrap();
        // Overwrite row 1's value (table id 256) with garbage.
        let mut k = 256u32.to_be_bytes().to_vec();
        k.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 0, 1]);
        raw_write(&cat, &k, Some(&[4, 0, 0xFF]), None);
        assert!(matches!(t.get(&[Value::I64(1)]), Err(TableError::Corruption { .. })));
        assert!(matches!(
            t.scan("PRIMARY", &[], 10, Direction::Forward),
            Err(TableError::Corruption { .. })
        ));
        assert!(matches!(
            t.scan("by_a", &[], 10, Direction::Forward),
            Err(TableError::Corruption { .. })
        ));
        assert!(matches!(t.update(&row(1, None, "y", 2)), Err(TableError::Corruption { .. })));
        // A key of the table that is not a valid primary key encoding.
        let mut bad = 256u32.to_be_bytes().to_vec();
        bad.push(0x80);
        raw_write(&cat, &bad, Some(b""), None);
        assert!(matches!(t.first_pk(), Err(TableError::Corruption { .. })));
        // A catalog record cut short.
        let mut rec = b"\0\0\0\0t".to_vec();
        rec.extend_from_slice(b"broken");
        raw_write(&cat, &rec, Some(&[1, 0, 0]), None);
    }
    let db = open_engine(dir.path(), Options::default()).unwrap();
    assert!(matches!(Catalog::open(db), Err(TableError::Corruption { .. })));
}
