//! The table layer's behaviour through its public API: refusals, counters, scans, updates,
//! transactions, catalog persistence, create_index (also with concurrent writers).

mod common;

use std::sync::Arc;

use common::*;
use talus_table::*;

fn open(dir: &std::path::Path) -> Catalog {
    let db = Db::open(dir, Options { create_if_missing: true, ..Default::default() }).unwrap();
    Catalog::open(db).unwrap()
}

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
fn transactions_commit_roll_back_and_detect_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let u = cat.create_table(table_def("u")).unwrap();
    t.insert(&row(1, Some(1), "one", 1)).unwrap();
    let mut tx = cat.begin();
    tx.insert(&t, &row(2, Some(2), "two", 2)).unwrap();
    tx.insert(&u, &row(2, Some(2), "two", 2)).unwrap();
    assert!(matches!(
        tx.insert(&t, &row(2, None, "again", 2)),
        Err(TableError::DuplicateKey { .. })
    ));
    assert!(tx.update(&t, &row(1, Some(9), "nine", 1)).unwrap());
    assert_eq!(tx.get(&t, &[Value::I64(1)]).unwrap().unwrap()[2], Value::Varchar("nine".into()));
    assert_eq!(
        t.get(&[Value::I64(1)]).unwrap().unwrap()[2],
        Value::Varchar("one".into()),
        "not before commit"
    );
    assert!(tx.delete(&t, &[Value::I64(2)]).unwrap());
    assert_eq!(tx.get(&t, &[Value::I64(2)]).unwrap(), None);
    tx.commit().unwrap();
    assert_eq!(t.get(&[Value::I64(1)]).unwrap().unwrap()[1], Value::I32(9));
    assert_eq!(t.get(&[Value::I64(2)]).unwrap(), None);
    assert!(u.get(&[Value::I64(2)]).unwrap().is_some());

    let mut tx = cat.begin();
    tx.insert(&t, &row(7, None, "seven", 7)).unwrap();
    tx.rollback();
    assert_eq!(t.get(&[Value::I64(7)]).unwrap(), None);

    // Write-write conflict on a PK: the second committer fails and writes nothing.
    let mut a = cat.begin();
    let mut b = cat.begin();
    assert!(a.update(&t, &row(1, Some(10), "a", 1)).unwrap());
    assert!(b.update(&t, &row(1, Some(20), "b", 1)).unwrap());
    b.insert(&u, &row(50, None, "b-only", 50)).unwrap();
    a.commit().unwrap();
    assert!(matches!(b.commit(), Err(TableError::Conflict { table }) if table == "t"));
    assert_eq!(t.get(&[Value::I64(1)]).unwrap().unwrap()[1], Value::I32(10));
    assert_eq!(u.get(&[Value::I64(50)]).unwrap(), None);
    // A plain write also conflicts with a transaction that began before it.
    let mut c = cat.begin();
    c.delete(&t, &[Value::I64(1)]).unwrap();
    t.update(&row(1, Some(11), "plain", 1)).unwrap();
    assert!(matches!(c.commit(), Err(TableError::Conflict { .. })));
    // Disjoint keys do not conflict.
    let mut d = cat.begin();
    let mut e = cat.begin();
    d.insert(&t, &row(100, None, "d", 100)).unwrap();
    e.insert(&t, &row(101, None, "e", 101)).unwrap();
    d.commit().unwrap();
    e.commit().unwrap();
    check_consistent(&t, &cat);
    check_consistent(&u, &cat);
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
fn create_index_builds_with_a_small_sort_budget_and_refuses_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> = (0..3000)
        .map(|i| {
            row(
                i,
                if i % 10 == 0 { None } else { Some((i * 7919 % 1000) as i32) },
                &format!("b{}", i % 97),
                i % 1500,
            )
        })
        .collect();
    for chunk in rows.chunks(500) {
        t.insert_many(chunk).unwrap();
    }
    let small = CreateIndexOptions { sort_memory_bytes: 8 << 10, temp_dir: None };
    cat.create_index("t", idx("by_ba", &["b", "a"], false), &small).unwrap();
    // c repeats: a unique index on it is refused and leaves nothing behind.
    match cat.create_index("t", idx("u_c", &["c"], true), &small) {
        Err(TableError::DuplicateKey { index, .. }) => assert_eq!(index, "u_c"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(t.scan("u_c", &[], 1, Direction::Forward), Err(TableError::NoSuchIndex(_))));
    // ... and the name can be used again.
    cat.create_index("t", idx("u_c", &["id", "c"], true), &small).unwrap();
    let t = cat.table("t").unwrap();
    assert_eq!(t.def().indexes.len(), 3);
    assert_eq!(check_consistent(&t, &cat).len(), 3000);
    let tmp = dir.path().join("tmp");
    assert_eq!(std::fs::read_dir(tmp).map(|d| d.count()).unwrap_or(0), 0, "temp files removed");
}

#[test]
fn create_index_while_writers_run() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> = (0..5000).map(|i| row(i, Some((i % 100) as i32), "init", i)).collect();
    t.insert_many(&rows).unwrap();
    cat.db().flush().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let t = t.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0i64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || i < 3000 {
                let id = (i * 7) % 6000;
                match i % 3 {
                    0 => {
                        let _ = t.delete(&[Value::I64(id)]);
                    }
                    1 => {
                        let _ = t.update(&row(id, None, &format!("u{i}"), i));
                    }
                    _ => {
                        let _ = t.insert(&row(id, Some(7), "ins", i));
                    }
                }
                i += 1;
            }
        })
    };
    let small = CreateIndexOptions { sort_memory_bytes: 32 << 10, temp_dir: None };
    cat.create_index("t", idx("by_b", &["b"], false), &small).unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let t = cat.table("t").unwrap();
    check_consistent(&t, &cat);
    // Still consistent after compaction (ingested-behind entries vs newer deletes).
    cat.db().compact_range(None, None).unwrap();
    check_consistent(&t, &cat);
}

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
    cat.db().put(&stray, b"").unwrap();
    assert!(matches!(t.verify_indexes(), Err(TableError::Corruption { .. })));
    cat.db().delete(&stray).unwrap();
    assert_eq!(t.verify_indexes().unwrap(), 10);
    cat.db().delete_range(by_a.to_vec()..258u32.to_be_bytes().to_vec()).unwrap();
    assert!(matches!(t.verify_indexes(), Err(TableError::Corruption { .. })));
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
        cat.db().put(&k, [4, 0, 0xFF]).unwrap();
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
        cat.db().put(&bad, b"").unwrap();
        assert!(matches!(t.first_pk(), Err(TableError::Corruption { .. })));
        // A catalog record cut short.
        let mut rec = b"\0\0\0\0t".to_vec();
        rec.extend_from_slice(b"broken");
        cat.db().put(&rec, [1, 0, 0]).unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(matches!(Catalog::open(db), Err(TableError::Corruption { .. })));
}

/// Writes that run during a build and reach the bottommost level before the ingestion make
/// `ingest_behind` refuse: the build then ingests as newest and replays those writes.
#[test]
fn create_index_falls_back_when_the_bottom_level_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> =
        (0..2000).map(|i| row(i, Some((i % 10) as i32), &format!("b{}", i % 30), i)).collect();
    t.insert_many(&rows).unwrap();
    let (t2, cat2) = (t.clone(), cat.clone());
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fired2 = fired.clone();
    let refused = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refused2 = refused.clone();
    cat.set_build_hook(Some(Arc::new(move |point: &str| {
        if point == "ingest_behind_refused" {
            refused2.store(true, std::sync::atomic::Ordering::SeqCst);
            return;
        }
        assert_eq!(point, "before_ingest");
        fired2.store(true, std::sync::atomic::Ordering::SeqCst);
        // Change rows the snapshot saw: deletes, updates (entry moves) and inserts, then push
        // everything, the new index's entries included, down to the bottommost level.
        for i in 0..200 {
            t2.delete(&[Value::I64(i * 10)]).unwrap();
            t2.update(&row(i * 10 + 1, None, "moved", -i)).unwrap();
            t2.insert(&row(5000 + i, Some(1), "new", i)).unwrap();
        }
        cat2.db().compact_range(None, None).unwrap();
    })));
    cat.create_index("t", idx("by_b", &["b"], false), &Default::default()).unwrap();
    assert!(fired.load(std::sync::atomic::Ordering::SeqCst));
    assert!(refused.load(std::sync::atomic::Ordering::SeqCst), "the fallback path ran");
    cat.set_build_hook(None);
    let t = cat.table("t").unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 2000);
    let moved =
        t.scan("by_b", &[Value::Varchar("moved".into())], 1000, Direction::Forward).unwrap();
    assert_eq!(moved.iter().filter(|r| r[2] == Value::Varchar("moved".into())).count(), 200);
    assert_eq!(moved.len(), 400, "then the 200 'new' rows");
    cat.db().compact_range(None, None).unwrap();
    check_consistent(&t, &cat);
}

/// Writes during a build that stay above the bottommost level: `ingest_behind` places the
/// snapshot's entries under them, so the newer writes (deletes included) win.
#[test]
fn create_index_ingests_behind_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> =
        (0..2000).map(|i| row(i, Some((i % 10) as i32), &format!("b{}", i % 30), i)).collect();
    t.insert_many(&rows).unwrap();
    cat.db().flush().unwrap();
    let t2 = t.clone();
    let points = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let points2 = points.clone();
    cat.set_build_hook(Some(Arc::new(move |point: &str| {
        points2.lock().push(point.to_string());
        if point == "before_ingest" {
            for i in 0..300 {
                t2.delete(&[Value::I64(i * 5)]).unwrap();
                t2.update(&row(i * 5 + 2, None, "moved", -i)).unwrap();
            }
        }
    })));
    cat.create_index("t", idx("by_b", &["b"], false), &Default::default()).unwrap();
    cat.set_build_hook(None);
    assert_eq!(*points.lock(), vec!["before_ingest".to_string()], "no fallback");
    let t = cat.table("t").unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 1700);
    cat.db().compact_range(None, None).unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 1700);
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
    let old: Vec<_> = cat
        .db()
        .iter(&talus::ReadOptions {
            iterate_lower_bound: Some(257u32.to_be_bytes().to_vec()),
            iterate_upper_bound: Some(258u32.to_be_bytes().to_vec()),
            ..Default::default()
        })
        .collect();
    assert!(old.is_empty());
}

/// Read-modify-write increments in concurrent transactions: conflicts are reported (and
/// retried), never merged, so no increment is lost.
#[test]
fn concurrent_transactions_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    for k in 0..2 {
        t.insert(&row(k, Some(0), "counter", 0)).unwrap();
    }
    let conflicts = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for th in 0..4i64 {
            let (cat, t, conflicts) = (&cat, &t, &conflicts);
            s.spawn(move || {
                for n in 0..50i64 {
                    let k = (th + n) % 2;
                    loop {
                        let mut tx = cat.begin();
                        let cur = tx.get(t, &[Value::I64(k)]).unwrap().unwrap();
                        let Value::I64(c) = cur[3] else { panic!("{cur:?}") };
                        // Widen the read-to-commit window so transactions overlap.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        tx.update(t, &row(k, Some((c % 7) as i32), "counter", c + 1)).unwrap();
                        match tx.commit() {
                            Ok(()) => break,
                            Err(TableError::Conflict { .. }) => {
                                conflicts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });
    let total: i64 = (0..2)
        .map(|k| match t.get(&[Value::I64(k)]).unwrap().unwrap()[3] {
            Value::I64(c) => c,
            _ => unreachable!(),
        })
        .sum();
    assert_eq!(
        total,
        200,
        "every committed increment counted ({} conflicts retried)",
        conflicts.into_inner()
    );
    check_consistent(&t, &cat);
}

#[test]
fn transaction_scans_read_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    for i in 0..10 {
        t.insert(&row(i, Some((i % 3) as i32), "x", i)).unwrap();
    }
    let mut tx = cat.begin();
    // Committed after the transaction began: invisible to its scans.
    t.insert(&row(100, Some(1), "late", 0)).unwrap();
    t.delete(&[Value::I64(4)]).unwrap();
    // The transaction's own write: not seen by its scans either (documented).
    tx.insert(&t, &row(50, Some(1), "own", 0)).unwrap();
    let collect = |s: &Scan<'_>, in_txn: bool| {
        let mut ids = Vec::new();
        let visit = |r: Row| {
            ids.push(r[0].clone());
            true
        };
        if in_txn {
            tx.scan_range(&t, s, visit).unwrap();
        } else {
            t.scan_range(s, visit).unwrap();
        }
        ids
    };
    let by_a1 =
        Scan { index: "by_a", from: &[Value::I32(1)], to: &[Value::I32(1)], ..Scan::index("") };
    let ids = |v: &[i64]| v.iter().map(|i| Value::I64(*i)).collect::<Vec<_>>();
    assert_eq!(collect(&by_a1, true), ids(&[1, 4, 7]));
    assert_eq!(collect(&by_a1, false), ids(&[1, 7, 100]));
    let pk_rev = Scan { from: &[Value::I64(3)], dir: Direction::Reverse, ..Scan::index("PRIMARY") };
    assert_eq!(collect(&pk_rev, true), ids(&[9, 8, 7, 6, 5, 4, 3]));
    assert_eq!(collect(&pk_rev, false), ids(&[100, 9, 8, 7, 6, 5, 3]));
    // An empty range (from > to) and an early stop.
    let empty = Scan { from: &[Value::I64(5)], to: &[Value::I64(4)], ..Scan::index("PRIMARY") };
    assert!(collect(&empty, false).is_empty());
    let mut n = 0;
    t.scan_range(&Scan::index("PRIMARY"), |_| {
        n += 1;
        n < 3
    })
    .unwrap();
    assert_eq!(n, 3);
    tx.commit().unwrap();
    assert!(t.get(&[Value::I64(50)]).unwrap().is_some());
    // Bad bounds are refused naming the column.
    let bad = Scan { to: &[Value::Varchar("x".into())], ..Scan::index("by_a") };
    assert!(matches!(t.scan_range(&bad, |_| true), Err(TableError::Schema { .. })));
}

/// A transaction reads each row once: the update of a row it read and the commit (which
/// writes the staged batch as is) read nothing more.
#[test]
fn transaction_update_reads_the_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    t.insert(&row(1, Some(1), "one", 1)).unwrap();
    let before = cat.stats().point_reads;
    let mut tx = cat.begin();
    let r = tx.get(&t, &[Value::I64(1)]).unwrap().unwrap();
    let mut r2 = r.clone();
    r2[1] = Value::I32(5);
    assert!(tx.update(&t, &r2).unwrap());
    assert_eq!(tx.get(&t, &[Value::I64(1)]).unwrap().unwrap(), r2, "own write");
    tx.commit().unwrap();
    assert_eq!(cat.stats().point_reads - before, 1, "one read: the get");
    assert_eq!(t.get(&[Value::I64(1)]).unwrap().unwrap(), r2);
    check_consistent(&t, &cat);
}

/// An index created between a transaction's ops and its commit is maintained: the commit
/// re-applies the ops instead of writing the batch staged without the new index.
#[test]
fn commit_after_an_index_was_created_maintains_it() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    for i in 0..20 {
        t.insert(&row(i, Some(i as i32), "x", i)).unwrap();
    }
    let mut tx = cat.begin();
    assert!(tx.update(&t, &row(3, Some(3), "x", 333)).unwrap());
    tx.insert(&t, &row(50, None, "y", 50)).unwrap();
    assert!(tx.delete(&t, &[Value::I64(4)]).unwrap());
    cat.create_index("t", idx("by_c", &["c"], false), &CreateIndexOptions::default()).unwrap();
    tx.commit().unwrap();
    let t = cat.table("t").unwrap();
    check_consistent(&t, &cat);
    let by_c = t.scan_columns("by_c", &[Value::I64(333)], 1, Direction::Forward, &["id"]).unwrap();
    assert_eq!(by_c, vec![vec![Value::I64(3)]]);
}

/// With a unique index the commit re-checks uniqueness at the latest state: a value taken by
/// another commit after `begin` is refused.
#[test]
fn unique_values_taken_after_begin_are_refused_at_commit() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let mut d = table_def("t");
    d.indexes.push(idx("u_c", &["c"], true));
    let t = cat.create_table(d).unwrap();
    t.insert(&row(1, None, "a", 1)).unwrap();
    t.insert(&row(2, None, "b", 2)).unwrap();
    let mut tx = cat.begin();
    assert!(tx.update(&t, &row(1, None, "a", 7)).unwrap());
    t.update(&row(2, None, "b", 7)).unwrap();
    assert!(matches!(tx.commit(), Err(TableError::DuplicateKey { index, .. }) if index == "u_c"));
    check_consistent(&t, &cat);
}
