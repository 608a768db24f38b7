//! Row writes through tables: typed refusals that write nothing, index maintenance by inserts,
//! updates and deletes, concurrent inserts of one primary key, unique indexes over NULLs.

use talus_table::*;

use crate::common::*;
use crate::helpers::open;

#[test]
fn refusals_are_typed_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let mut d = table_def("t");
    d.indexes.push(idx("u_c", &["c"], true));
    let t = cat.create_table(d.clone()).unwrap();
    assert!(matches!(cat.create_table(d), Err(TableError::TableExists(n)) if n == "t"));
    t.insert(&row(1, Some(1), "x", 10)).unwrap();
    let before = cat.stats();
    match t.insert(&row(1, Some(2), "y", 11)) {
        Err(TableError::DuplicateKey { table, index }) => {
            assert_eq!((table.as_str(), index.as_str()), ("t", "PRIMARY"))
        }
        other => panic!("{other:?}"),
    }
    match t.insert(&row(2, Some(2), "y", 10)) {
        Err(TableError::DuplicateKey { index, .. }) => assert_eq!(index, "u_c"),
        other => panic!("{other:?}"),
    }
    // All or nothing: the second row collides with the first of the same batch.
    assert!(matches!(
        t.insert_many(&[row(3, None, "z", 30), row(4, None, "w", 30)]),
        Err(TableError::DuplicateKey { .. })
    ));
    assert_eq!(t.get(&[Value::I64(3)]).unwrap(), None);
    let after = cat.stats();
    assert_eq!(after.rows_inserted, before.rows_inserted);
    assert_eq!(after.index_entries_written, before.index_entries_written);
    match t.insert(&vec![Value::I64(5), Value::Null, Value::I64(1), Value::I64(1)]) {
        Err(TableError::Schema { column, .. }) => assert_eq!(column, "b"),
        other => panic!("{other:?}"),
    }
    match t.insert(&vec![Value::Null, Value::Null, Value::Varchar("".into()), Value::I64(1)]) {
        Err(TableError::Schema { column, .. }) => assert_eq!(column, "id"),
        other => panic!("{other:?}"),
    }
    match cat.create_index("t", idx("bad", &["nope"], false), &CreateIndexOptions::default()) {
        Err(TableError::Schema { column, .. }) => assert_eq!(column, "nope"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        cat.create_index("t", idx("by_a", &["b"], false), &Default::default()),
        Err(TableError::IndexExists(_))
    ));
    assert!(matches!(cat.table("nope"), Err(TableError::NoSuchTable(_))));
    assert!(matches!(t.scan("nope", &[], 1, Direction::Forward), Err(TableError::NoSuchIndex(_))));
    check_consistent(&t, &cat);
}

#[test]
fn non_unique_index_writes_are_blind() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let mut d = table_def("t");
    d.indexes.push(idx("by_bc", &["b", "c"], false));
    let t = cat.create_table(d).unwrap();
    let s0 = cat.stats();
    let rows: Vec<Row> =
        (0..100).map(|i| row(i, Some((i % 7) as i32), &format!("s{}", i % 5), i)).collect();
    t.insert_many(&rows[..50]).unwrap();
    for r in &rows[50..] {
        t.insert(r).unwrap();
    }
    let s = cat.stats();
    assert_eq!(s.rows_inserted - s0.rows_inserted, 100);
    assert_eq!(s.point_reads - s0.point_reads, 100, "one read per insert: the PK check");
    assert_eq!(s.blind_index_writes - s0.blind_index_writes, 200);
    assert_eq!(s.index_entries_written - s0.index_entries_written, 200);
    // A covering scan needs no point reads; a fetching one needs one per row.
    let p0 = cat.stats().point_reads;
    let got = t
        .scan_columns("by_bc", &[Value::Varchar("s2".into())], 3, Direction::Forward, &["c", "id"])
        .unwrap();
    assert_eq!(
        got,
        vec![
            vec![Value::I64(2), Value::I64(2)],
            vec![Value::I64(7), Value::I64(7)],
            vec![Value::I64(12), Value::I64(12)]
        ]
    );
    assert_eq!(cat.stats().point_reads, p0);
    let got = t.scan("by_bc", &[Value::Varchar("s2".into())], 2, Direction::Reverse).unwrap();
    assert_eq!(got, vec![rows[97].clone(), rows[92].clone()]);
    assert_eq!(cat.stats().point_reads, p0 + 2);
    assert_eq!(cat.stats().rows_read_by_scans - s0.rows_read_by_scans, 5);
    // Reverse from the middle of a prefix, and from past the end.
    let got = t.scan("PRIMARY", &[Value::I64(10)], 2, Direction::Reverse).unwrap();
    assert_eq!(got, vec![rows[10].clone(), rows[9].clone()]);
    let got = t.scan("by_a", &[Value::I32(100)], 1, Direction::Reverse).unwrap();
    assert_eq!(got[0][1], Value::I32(6));
    assert_eq!(t.first_pk().unwrap(), Some(vec![Value::I64(0)]));
    check_consistent(&t, &cat);
}

#[test]
fn update_and_delete_fix_index_entries() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let mut d = table_def("t");
    d.indexes.push(idx("u_c", &["c"], true));
    let t = cat.create_table(d).unwrap();
    for i in 0..20 {
        t.insert(&row(i, Some(i as i32), "b", i * 10)).unwrap();
    }
    assert!(t.update(&row(3, None, "bb", 35)).unwrap());
    assert!(!t.update(&row(300, None, "bb", 1)).unwrap());
    assert!(matches!(t.update(&row(4, None, "bb", 35)), Err(TableError::DuplicateKey { .. })));
    assert!(t.update(&row(4, None, "bb", 40)).unwrap(), "same unique value, same row");
    assert!(t.delete(&[Value::I64(5)]).unwrap());
    assert!(!t.delete(&[Value::I64(5)]).unwrap());
    t.insert(&row(21, Some(0), "b", 50)).unwrap(); // c=50 was freed by the delete
    assert!(matches!(t.delete(&[Value::Varchar("x".into())]), Err(TableError::Schema { .. })));
    let rows = check_consistent(&t, &cat);
    assert_eq!(rows.len(), 20);
    assert_eq!(
        t.scan("u_c", &[Value::I64(35)], 1, Direction::Forward).unwrap()[0][0],
        Value::I64(3)
    );
}

#[test]
fn concurrent_inserts_of_one_pk_admit_exactly_one() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    for round in 0..20i64 {
        let ok: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|i| {
                    let t = t.clone();
                    s.spawn(move || t.insert(&row(round, Some(i), "x", i as i64)).is_ok() as usize)
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(ok, 1, "round {round}");
    }
    check_consistent(&t, &cat);
}

#[test]
fn unique_index_on_a_nullable_column_admits_many_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let mut d = table_def("t");
    d.indexes = vec![idx("u_a", &["a"], true), idx("u_a_desc", &["a DESC", "b"], true)];
    let t = cat.create_table(d).unwrap();
    t.insert(&row(1, None, "x", 1)).unwrap();
    t.insert(&row(2, None, "x", 2)).unwrap();
    t.insert(&row(3, Some(5), "x", 3)).unwrap();
    assert!(
        matches!(t.insert(&row(4, Some(5), "y", 4)), Err(TableError::DuplicateKey { index, .. }) if index == "u_a")
    );
    assert!(t.update(&row(2, Some(6), "x", 2)).unwrap());
    assert!(t.update(&row(1, Some(7), "x", 1)).unwrap());
    assert!(t.update(&row(1, None, "x", 1)).unwrap());
    t.insert(&row(4, Some(7), "y", 4)).unwrap();
    let got = t.scan_columns("u_a", &[], 10, Direction::Forward, &["a", "id"]).unwrap();
    assert_eq!(
        got,
        vec![
            vec![Value::Null, Value::I64(1)],
            vec![Value::I32(5), Value::I64(3)],
            vec![Value::I32(6), Value::I64(2)],
            vec![Value::I32(7), Value::I64(4)],
        ]
    );
    let got = t.scan("u_a_desc", &[Value::I32(6)], 2, Direction::Forward).unwrap();
    assert_eq!((got[0][0].clone(), got[1][0].clone()), (Value::I64(2), Value::I64(3)));
    check_consistent(&t, &cat);
    // Building a unique index over a column with NULLs and distinct values works too.
    cat.create_index("t", idx("u_ac", &["a", "c"], true), &Default::default()).unwrap();
    check_consistent(&cat.table("t").unwrap(), &cat);
}
