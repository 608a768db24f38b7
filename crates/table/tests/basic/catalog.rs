//! Catalog persistence: tables, rows and indexes survive a reopen; dropped tables and indexes
//! stay dropped, their names reusable and their entries gone from the engine.

use talus_table::storage::Cursor;
use talus_table::*;

use crate::common::*;
use crate::helpers::open;

#[test]
fn catalog_and_rows_survive_reopen_and_drop_table() {
    let dir = tempfile::tempdir().unwrap();
    {
        let cat = open(dir.path());
        let t = cat.create_table(table_def("t")).unwrap();
        cat.create_table(table_def("gone")).unwrap().insert(&row(1, None, "g", 1)).unwrap();
        for i in 0..50 {
            t.insert(&row(i, Some((i % 3) as i32), "v", i)).unwrap();
        }
        cat.create_index("t", idx("by_c_desc", &["c DESC"], false), &Default::default()).unwrap();
        cat.drop_table("gone").unwrap();
        assert!(matches!(cat.table("gone"), Err(TableError::NoSuchTable(_))));
    }
    let cat = open(dir.path());
    assert!(matches!(cat.table("gone"), Err(TableError::NoSuchTable(_))));
    let again = cat.create_table(table_def("gone")).unwrap();
    assert_eq!(again.scan("PRIMARY", &[], 10, Direction::Forward).unwrap(), Vec::<Row>::new());
    let t = cat.table("t").unwrap();
    assert_eq!(t.def().indexes.len(), 2);
    let top = t.scan("by_c_desc", &[], 2, Direction::Forward).unwrap();
    assert_eq!((top[0][0].clone(), top[1][0].clone()), (Value::I64(49), Value::I64(48)));
    assert_eq!(check_consistent(&t, &cat).len(), 50);
}

#[test]
fn drop_index_removes_it_durably_and_the_name_can_be_reused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let cat = open(dir.path());
        let t = cat.create_table(table_def("t")).unwrap();
        for i in 0..100 {
            t.insert(&row(i, Some((i % 4) as i32), "v", i)).unwrap();
        }
        cat.drop_index("t", "by_a").unwrap();
        assert!(matches!(
            t.scan("by_a", &[], 1, Direction::Forward),
            Err(TableError::NoSuchIndex(_))
        ));
        assert!(matches!(cat.drop_index("t", "by_a"), Err(TableError::NoSuchIndex(_))));
        assert!(matches!(cat.drop_index("nope", "by_a"), Err(TableError::NoSuchTable(_))));
        // Writes after the drop maintain no entries for it.
        let s0 = cat.stats();
        t.insert(&row(100, Some(1), "v", 100)).unwrap();
        assert_eq!(cat.stats().index_entries_written, s0.index_entries_written);
    }
    let cat = open(dir.path());
    let t = cat.table("t").unwrap();
    assert!(t.def().indexes.is_empty());
    cat.create_index("t", idx("by_a", &["a", "c"], false), &Default::default()).unwrap();
    let t = cat.table("t").unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 101);
    // The old index's entries are gone from the engine, not only hidden: only the new
    // index's id range holds entries (ids 257 = old by_a, 258 = new).
    let range = storage::Range {
        lower: 257u32.to_be_bytes().to_vec(),
        upper: 258u32.to_be_bytes().to_vec(),
        snapshot: None,
        fill_cache: true,
    };
    let old = cat.db().cursor(range, storage::Walk::Forward);
    assert!(!old.valid());
    old.status().unwrap();
}
