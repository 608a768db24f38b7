//! Transactions: commit and rollback, write-write conflicts, no lost update under concurrency,
//! snapshot scans, single reads per row, and commits that meet an index or a unique value that
//! appeared after `begin`.

use talus_table::*;

use crate::common::*;
use crate::helpers::open;

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

/// The isolation level the documentation names, pinned: snapshot isolation. A transaction's
/// reads do not see a commit made after its `begin` (it is not read committed), a row it only
/// read is not checked at commit (write skew commits: it is not serializable), and a row it
/// writes that another commit wrote after `begin` fails the commit (first committer wins).
#[test]
fn isolation_is_snapshot_isolation() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    t.insert(&row(1, Some(1), "x", 1)).unwrap();
    t.insert(&row(2, Some(1), "y", 2)).unwrap();
    let k = |n: i64| [Value::I64(n)];
    let a = cat.begin();
    let b = cat.begin();
    t.update(&row(1, Some(5), "x", 1)).unwrap();
    // Not read committed: the later commit is invisible to a and b.
    assert_eq!(a.get(&t, &k(1)).unwrap().unwrap()[1], Value::I32(1));
    assert_eq!(b.get(&t, &k(1)).unwrap().unwrap()[1], Value::I32(1));
    let mut seen = Vec::new();
    a.scan_range(&t, &Scan::index("PRIMARY"), |r| {
        seen.push(r[1].clone());
        true
    })
    .unwrap();
    assert_eq!(seen, [Value::I32(1), Value::I32(1)]);
    drop((a, b));
    // Write skew: each reads both rows and writes one; both commit.
    let mut a = cat.begin();
    let mut b = cat.begin();
    for tx in [&a, &b] {
        tx.get(&t, &k(1)).unwrap();
        tx.get(&t, &k(2)).unwrap();
    }
    assert!(a.update(&t, &row(1, Some(0), "x", 1)).unwrap());
    assert!(b.update(&t, &row(2, Some(0), "y", 2)).unwrap());
    a.commit().unwrap();
    b.commit().unwrap();
    // First committer wins on a row both write.
    let mut a = cat.begin();
    let mut b = cat.begin();
    assert!(a.update(&t, &row(2, Some(7), "a", 2)).unwrap());
    assert!(b.update(&t, &row(2, Some(8), "b", 2)).unwrap());
    b.commit().unwrap();
    assert!(matches!(a.commit(), Err(TableError::Conflict { .. })));
    assert_eq!(t.get(&k(2)).unwrap().unwrap()[1], Value::I32(8));
}
