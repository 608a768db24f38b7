//! Model test: random inserts, updates, deletes, transactions, index builds and drops, scans
//! (limited, and bounded `scan_range` on the primary key and an index, covered or not),
//! `get_many` and reopens against a `BTreeMap` oracle of rows. After every step each secondary index must hold exactly
//! the entries derived from the primary rows (`common::check_consistent`), the rows must equal
//! the oracle's, and duplicate-key errors must match the oracle's.

mod common;

use std::collections::BTreeMap;

use common::*;
use proptest::prelude::*;
use talus_table::*;

#[derive(Clone, Debug)]
enum RowOp {
    Insert(i64, Option<i32>, u8, i64),
    Update(i64, Option<i32>, u8, i64),
    Delete(i64),
}

#[derive(Clone, Debug)]
enum Step {
    Row(RowOp),
    Txn(Vec<RowOp>, bool),
    CreateIndex(u8),
    DropIndex(u8),
    Scan(Option<Option<i32>>, usize, bool),
    /// `scan_range` on the primary key: ids from..=to (None: unbounded), reverse.
    RangePk(Option<i64>, Option<i64>, bool),
    /// `scan_range` on `by_a`: a from..=to (None: unbounded; Some(None): NULL), reverse,
    /// covered (only `id` and `a`).
    RangeA(Option<Option<i32>>, Option<Option<i32>>, bool, bool, usize),
    GetMany(Vec<i64>),
    Flush,
    Compact,
    Reopen,
}

type Oracle = BTreeMap<i64, (Option<i32>, u8, i64)>;

fn row_op() -> impl Strategy<Value = RowOp> {
    let a = proptest::option::weighted(0.8, 0..5i32);
    prop_oneof![
        3 => (0..30i64, a.clone(), 0..4u8, 0..40i64).prop_map(|(i, a, b, c)| RowOp::Insert(i, a, b, c)),
        2 => (0..30i64, a, 0..4u8, 0..40i64).prop_map(|(i, a, b, c)| RowOp::Update(i, a, b, c)),
        1 => (0..30i64).prop_map(RowOp::Delete),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => row_op().prop_map(Step::Row),
        2 => (proptest::collection::vec(row_op(), 1..6), proptest::bool::weighted(0.8)).prop_map(|(o, c)| Step::Txn(o, c)),
        2 => (0..3u8).prop_map(Step::CreateIndex),
        1 => (0..3u8).prop_map(Step::DropIndex),
        2 => (proptest::option::of(proptest::option::weighted(0.8, 0..6i32)), 1..8usize, any::<bool>()).prop_map(|(f, l, r)| Step::Scan(f, l, r)),
        2 => (proptest::option::of(0..32i64), proptest::option::of(0..32i64), any::<bool>()).prop_map(|(f, t, r)| Step::RangePk(f, t, r)),
        2 => (proptest::option::of(proptest::option::weighted(0.8, 0..6i32)), proptest::option::of(proptest::option::weighted(0.8, 0..6i32)), any::<bool>(), any::<bool>(), prop_oneof![1..8usize, Just(usize::MAX)]).prop_map(|(f, t, r, c, l)| Step::RangeA(f, t, r, c, l)),
        1 => proptest::collection::vec(0..32i64, 0..6).prop_map(Step::GetMany),
        1 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
    ]
}

const INDEXES: [(&str, &[&str], bool); 3] =
    [("by_ba", &["b", "a"], false), ("u_c", &["c"], true), ("by_c_desc", &["c DESC", "b"], false)];

fn b_str(b: u8) -> String {
    // Prefixes of each other, and one with an embedded zero, to exercise the escaping.
    ["", "x", "x\0", "xy"][b as usize % 4].to_string()
}

fn mk(id: i64, a: Option<i32>, b: u8, c: i64) -> Row {
    row(id, a, &b_str(b), c)
}

/// The oracle's verdict on one op (mutating `m` on success).
fn expect(m: &mut Oracle, unique_c: bool, op: &RowOp) -> std::result::Result<bool, &'static str> {
    let c_taken =
        |m: &Oracle, id: i64, c: i64| unique_c && m.iter().any(|(k, v)| *k != id && v.2 == c);
    match *op {
        RowOp::Insert(id, a, b, c) => {
            if m.contains_key(&id) {
                return Err("PRIMARY");
            }
            if c_taken(m, id, c) {
                return Err("u_c");
            }
            m.insert(id, (a, b, c));
            Ok(true)
        }
        RowOp::Update(id, a, b, c) => {
            if !m.contains_key(&id) {
                return Ok(false);
            }
            if c_taken(m, id, c) {
                return Err("u_c");
            }
            m.insert(id, (a, b, c));
            Ok(true)
        }
        RowOp::Delete(id) => Ok(m.remove(&id).is_some()),
    }
}

fn verdict(r: Result<bool>) -> std::result::Result<bool, String> {
    match r {
        Ok(b) => Ok(b),
        Err(TableError::DuplicateKey { index, .. }) => Err(index),
        Err(e) => panic!("unexpected error {e}"),
    }
}

fn apply_table(t: &Table<E>, op: &RowOp) -> Result<bool> {
    match *op {
        RowOp::Insert(id, a, b, c) => t.insert(&mk(id, a, b, c)).map(|_| true),
        RowOp::Update(id, a, b, c) => t.update(&mk(id, a, b, c)),
        RowOp::Delete(id) => t.delete(&[Value::I64(id)]),
    }
}

fn apply_txn(tx: &mut Transaction<E>, t: &Table<E>, op: &RowOp) -> Result<bool> {
    match *op {
        RowOp::Insert(id, a, b, c) => tx.insert(t, &mk(id, a, b, c)).map(|_| true),
        RowOp::Update(id, a, b, c) => tx.update(t, &mk(id, a, b, c)),
        RowOp::Delete(id) => tx.delete(t, &[Value::I64(id)]),
    }
}

fn open(dir: &std::path::Path) -> Catalog<E> {
    open_catalog(dir, Options { write_buffer_size: 16 << 10, ..Default::default() })
}

fn run(steps: Vec<Step>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cat = open(dir.path());
    let mut t = cat.create_table(table_def("t")).unwrap();
    let mut m = Oracle::new();
    let mut created = [false; 3];
    for (i, s) in steps.iter().enumerate() {
        let unique_c = created[1];
        match s {
            Step::Row(op) => {
                let want = expect(&mut m, unique_c, op).map_err(String::from);
                assert_eq!(verdict(apply_table(&t, op)), want, "step {i}: {op:?}");
            }
            Step::Txn(ops, commit) => {
                let mut tm = m.clone();
                let mut tx = cat.begin();
                for op in ops {
                    let want = expect(&mut tm, unique_c, op).map_err(String::from);
                    assert_eq!(verdict(apply_txn(&mut tx, &t, op)), want, "step {i}: txn {op:?}");
                }
                for (id, v) in &tm {
                    let got = tx.get(&t, &[Value::I64(*id)]).unwrap().unwrap();
                    assert_eq!(got, mk(*id, v.0, v.1, v.2), "txn sees its own writes");
                }
                if *commit {
                    tx.commit().unwrap();
                    m = tm;
                } else {
                    tx.rollback();
                }
            }
            Step::CreateIndex(k) => {
                let (name, cols, unique) = INDEXES[*k as usize];
                let r = cat.create_index(
                    "t",
                    idx(name, cols, unique),
                    &CreateIndexOptions { sort_memory_bytes: 512, temp_dir: None },
                );
                let dup_c = {
                    let mut cs: Vec<i64> = m.values().map(|v| v.2).collect();
                    cs.sort();
                    cs.windows(2).any(|w| w[0] == w[1])
                };
                match r {
                    Ok(()) => {
                        assert!(!created[*k as usize], "step {i}: created twice");
                        assert!(!(unique && dup_c), "step {i}: unique index over duplicates");
                        created[*k as usize] = true;
                    }
                    Err(TableError::IndexExists(_)) => assert!(created[*k as usize]),
                    Err(TableError::DuplicateKey { .. }) => {
                        assert!(unique && dup_c && !created[*k as usize])
                    }
                    Err(e) => panic!("step {i}: {e}"),
                }
                t = cat.table("t").unwrap();
            }
            Step::DropIndex(k) => {
                let name = INDEXES[*k as usize].0;
                match cat.drop_index("t", name) {
                    Ok(()) => assert!(created[*k as usize], "step {i}: dropped a missing index"),
                    Err(TableError::NoSuchIndex(_)) => assert!(!created[*k as usize]),
                    Err(e) => panic!("step {i}: {e}"),
                }
                created[*k as usize] = false;
                t = cat.table("t").unwrap();
            }
            Step::Scan(from, limit, reverse) => {
                let from_v: Vec<Value> =
                    from.iter().map(|a| a.map_or(Value::Null, Value::I32)).collect();
                let dir_ = if *reverse { Direction::Reverse } else { Direction::Forward };
                let got = t.scan("by_a", &from_v, *limit, dir_).unwrap();
                let key = |a: Option<i32>| a.map_or(i64::MIN, i64::from);
                let mut all: Vec<(i64, i64)> = m.iter().map(|(id, v)| (key(v.0), *id)).collect();
                all.sort();
                let want: Vec<Row> = {
                    let f = from.map(key);
                    let sel: Vec<&(i64, i64)> = if *reverse {
                        all.iter()
                            .rev()
                            .filter(|(a, _)| f.is_none_or(|f| *a <= f))
                            .take(*limit)
                            .collect()
                    } else {
                        all.iter().filter(|(a, _)| f.is_none_or(|f| *a >= f)).take(*limit).collect()
                    };
                    sel.iter()
                        .map(|(_, id)| {
                            let v = m[id];
                            mk(*id, v.0, v.1, v.2)
                        })
                        .collect()
                };
                assert_eq!(
                    got, want,
                    "step {i}: scan by_a from {from:?} limit {limit} reverse {reverse}"
                );
            }
            Step::RangePk(from, to, reverse) => {
                let (f, tv) = (from.map(Value::I64), to.map(Value::I64));
                let s = Scan {
                    from: f.as_slice(),
                    to: tv.as_slice(),
                    dir: if *reverse { Direction::Reverse } else { Direction::Forward },
                    ..Scan::index("PRIMARY")
                };
                let mut got = Vec::new();
                t.scan_range(&s, |r| {
                    got.push(r);
                    true
                })
                .unwrap();
                let in_range =
                    |id: &i64| from.is_none_or(|f| *id >= f) && to.is_none_or(|x| *id <= x);
                let mut want: Vec<Row> = m
                    .iter()
                    .filter(|(id, _)| in_range(id))
                    .map(|(id, v)| mk(*id, v.0, v.1, v.2))
                    .collect();
                if *reverse {
                    want.reverse();
                }
                assert_eq!(got, want, "step {i}: {s:?}");
            }
            Step::RangeA(from, to, reverse, covered, limit) => {
                let val = |a: &Option<i32>| a.map_or(Value::Null, Value::I32);
                let (f, tv) = (from.as_ref().map(val), to.as_ref().map(val));
                let s = Scan {
                    index: "by_a",
                    from: f.as_slice(),
                    to: tv.as_slice(),
                    dir: if *reverse { Direction::Reverse } else { Direction::Forward },
                    columns: if *covered { Some(&["id", "a"]) } else { None },
                    limit: *limit,
                };
                let mut got = Vec::new();
                t.scan_range(&s, |r| {
                    got.push(r);
                    true
                })
                .unwrap();
                let key = |a: Option<i32>| a.map_or(i64::MIN, i64::from);
                let (fk, tk) = (from.map(key), to.map(key));
                let mut all: Vec<(i64, i64)> = m
                    .iter()
                    .map(|(id, v)| (key(v.0), *id))
                    .filter(|(a, _)| fk.is_none_or(|f| *a >= f) && tk.is_none_or(|x| *a <= x))
                    .collect();
                all.sort();
                if *reverse {
                    all.reverse();
                }
                let want: Vec<Row> = all
                    .iter()
                    .take(*limit)
                    .map(|(_, id)| {
                        let v = m[id];
                        if *covered {
                            vec![Value::I64(*id), v.0.map_or(Value::Null, Value::I32)]
                        } else {
                            mk(*id, v.0, v.1, v.2)
                        }
                    })
                    .collect();
                assert_eq!(got, want, "step {i}: {s:?}");
            }
            Step::GetMany(ids) => {
                let pks: Vec<Vec<Value>> = ids.iter().map(|id| vec![Value::I64(*id)]).collect();
                let got = t.get_many(&pks).unwrap();
                let want: Vec<Option<Row>> =
                    ids.iter().map(|id| m.get(id).map(|v| mk(*id, v.0, v.1, v.2))).collect();
                assert_eq!(got, want, "step {i}: get_many {ids:?}");
            }
            Step::Flush => cat.db().flush_all().unwrap(),
            Step::Compact => cat.db().compact_all().unwrap(),
            Step::Reopen => {
                drop(t);
                drop(cat);
                cat = open(dir.path());
                t = cat.table("t").unwrap();
            }
        }
        let rows = check_consistent(&t, &cat);
        let want: Vec<Row> = m.iter().map(|(id, v)| mk(*id, v.0, v.1, v.2)).collect();
        assert_eq!(rows, want, "step {i}: rows vs oracle after {s:?}");
    }
}

/// Cases: `PROPTEST_CASES` (default 48) capped at 200: every case opens, reopens, flushes and
/// compacts real databases, so CI's 2000 would take many minutes for little extra coverage.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48).min(200)
}

#[test]
fn table_matches_the_oracle() {
    let config = proptest::test_runner::Config { cases: cases(), ..Default::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let r = runner.run(&proptest::collection::vec(step(), 1..40), |steps| {
        run(steps);
        Ok(())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// Regression: a unique index created, then rows updated to take each other's freed value
/// inside one transaction.
#[test]
fn unique_value_moves_between_rows_in_one_txn() {
    run(vec![
        Step::Row(RowOp::Insert(1, None, 0, 5)),
        Step::Row(RowOp::Insert(2, None, 0, 6)),
        Step::CreateIndex(1),
        Step::Txn(
            vec![
                RowOp::Update(1, None, 0, 7),
                RowOp::Update(2, None, 0, 5),
                RowOp::Insert(3, Some(1), 1, 6),
            ],
            true,
        ),
        Step::Reopen,
        Step::Row(RowOp::Insert(4, None, 2, 7)),
    ]);
}
