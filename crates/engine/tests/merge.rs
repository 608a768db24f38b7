//! Merge operators and compaction filters end to end (issue 40): every read path over operands
//! in every place they live (memtables, L0, deeper levels, WALs replayed read-only, ingested
//! files), the bottommost full merge, snapshots and range deletions, and every way a user's
//! operator or filter can fail (an error, a panic, no operator at all): never a wrong value,
//! the failed job's inputs stay live.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use talus::{
    CompactionFilter, Db, Error, FilterDecision, FilterValueType, MergeError, MergeOperator,
    Options, ReadOptions, SstFileWriter, WriteBatch,
};

fn opts(op: Option<Arc<dyn MergeOperator>>) -> Options {
    Options {
        create_if_missing: true,
        merge_operator: op,
        write_buffer_size: 64 << 10,
        disable_auto_compactions: true,
        ..Default::default()
    }
}

fn add() -> Option<Arc<dyn MergeOperator>> {
    talus::merge::builtin_by_name("uint64add")
}

fn append() -> Option<Arc<dyn MergeOperator>> {
    talus::merge::builtin_by_name("stringappend")
}

fn n(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

/// Every read path agrees on every key of `want` (key, value).
fn check_all(db: &Db, want: &[(Vec<u8>, Option<Vec<u8>>)], ro: &ReadOptions) {
    let keys: Vec<&[u8]> = want.iter().map(|(k, _)| k.as_slice()).collect();
    let multi = db.multi_get(&keys, ro);
    for ((k, v), m) in want.iter().zip(multi) {
        assert_eq!(&db.get_opt(k, ro).unwrap(), v, "get {k:?}");
        assert_eq!(db.get_pinned_opt(k, ro).unwrap().as_deref(), v.as_deref(), "pinned {k:?}");
        assert_eq!(&m.unwrap(), v, "multi_get {k:?}");
    }
    let live: Vec<(Vec<u8>, Vec<u8>)> =
        want.iter().filter_map(|(k, v)| Some((k.clone(), v.clone()?))).collect();
    let fwd: Vec<_> = db.iter(ro).map(|r| r.unwrap()).collect();
    assert_eq!(fwd, live, "forward");
    let mut back: Vec<_> = db.iter(ro).rev().map(|r| r.unwrap()).collect();
    back.reverse();
    assert_eq!(back, live, "backward");
    // Direction changes at every key.
    let mut it = db.raw_iter(ro);
    it.seek_to_first();
    for (i, (k, v)) in live.iter().enumerate() {
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        if i > 0 {
            it.prev();
            assert_eq!(it.key(), &live[i - 1].0[..], "prev after next");
            it.next();
        }
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn counters_merge_in_every_place_operands_live() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(add())).unwrap();
    let keys: Vec<Vec<u8>> = (0..20u8).map(|i| vec![b'k', i]).collect();
    let mut want = vec![0u64; keys.len()];
    let check = |db: &Db, want: &[u64], what: &str| {
        let w: Vec<_> = keys.iter().zip(want).map(|(k, &v)| (k.clone(), Some(n(v)))).collect();
        eprintln!("{what}");
        check_all(db, &w, &ReadOptions::default());
    };
    for round in 0..4u64 {
        for (i, k) in keys.iter().enumerate() {
            db.merge(k, n(round + i as u64)).unwrap();
            want[i] += round + i as u64;
        }
        // A put in the middle of the history of some keys: later operands apply to it.
        if round == 1 {
            db.put(&keys[3], n(100)).unwrap();
            want[3] = 100;
        }
        check(&db, &want, "memtable");
        db.flush().unwrap();
        check(&db, &want, "flushed");
    }
    db.compact_range(None, None).unwrap();
    check(&db, &want, "compacted");
    drop(db);
    // Bottommost, no snapshot: every chain became a put, readable without an operator.
    let plain = Db::open(dir.path(), opts(None)).unwrap();
    check(&plain, &want, "reopened without an operator");
}

#[test]
fn snapshots_keep_what_they_read_and_range_deletions_cut_chains() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(append())).unwrap();
    db.put(b"a", b"1").unwrap();
    db.merge(b"a", b"2").unwrap();
    let s1 = ReadOptions { snapshot: Some(db.snapshot()), ..Default::default() };
    db.merge(b"a", b"3").unwrap();
    db.merge(b"b", b"x").unwrap();
    db.delete_range(&b"a"[..]..&b"b"[..]).unwrap();
    db.merge(b"a", b"4").unwrap();
    let s2 = ReadOptions { snapshot: Some(db.snapshot()), ..Default::default() };
    db.merge(b"a", b"5").unwrap();
    let check = |db: &Db| {
        let v = |s: &str| Some(s.as_bytes().to_vec());
        check_all(db, &[(b"a".to_vec(), v("1,2")), (b"b".to_vec(), None)], &s1);
        check_all(db, &[(b"a".to_vec(), v("4")), (b"b".to_vec(), v("x"))], &s2);
        let now = ReadOptions::default();
        check_all(db, &[(b"a".to_vec(), v("4,5")), (b"b".to_vec(), v("x"))], &now);
    };
    check(&db);
    db.flush().unwrap();
    check(&db);
    db.compact_range(None, None).unwrap();
    check(&db);
}

#[test]
fn read_only_opens_and_ingested_operands_merge() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), opts(append())).unwrap();
        db.put(b"a", b"base").unwrap();
        db.compact_range(None, None).unwrap();
        // Left in the WAL.
        db.merge(b"a", b"wal").unwrap();
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("m.sst");
        let mut w = SstFileWriter::open(&path, db.options()).unwrap();
        w.merge(b"b", b"ingested").unwrap();
        w.finish().unwrap();
        db.ingest_external_file(&[&path], &Default::default()).unwrap();
        let mut b = WriteBatch::new();
        b.merge(b"b", b"more");
        db.write(b, &Default::default()).unwrap();
    }
    let ro = Db::open_read_only(dir.path(), opts(append())).unwrap();
    let v = |s: &str| Some(s.as_bytes().to_vec());
    check_all(
        &ro,
        &[(b"a".to_vec(), v("base,wal")), (b"b".to_vec(), v("ingested,more"))],
        &ReadOptions::default(),
    );
}

#[test]
fn without_an_operator_merges_are_refused_and_operands_survive() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(None)).unwrap();
    assert!(matches!(db.merge(b"k", b"x"), Err(Error::NotSupported(_))));
    let mut b = WriteBatch::new();
    b.put(b"p", b"1");
    b.merge(b"k", b"x");
    assert!(matches!(db.write(b, &Default::default()), Err(Error::NotSupported(_))));
    assert_eq!(db.get(b"p").unwrap(), None, "a refused batch writes nothing");
    drop(db);
    let db = Db::open(dir.path(), opts(append())).unwrap();
    db.put(b"k", b"a").unwrap();
    db.merge(b"k", b"b").unwrap();
    drop(db);
    // Operands met without an operator: reads fail, flushes and compactions keep them.
    let db = Db::open(dir.path(), opts(None)).unwrap();
    assert!(matches!(db.get(b"k"), Err(Error::InvalidArgument(_))));
    let mut it = db.raw_iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::InvalidArgument(_))));
    db.compact_range(None, None).unwrap();
    drop(it);
    drop(db);
    let db = Db::open(dir.path(), opts(append())).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"a,b"[..]));
}

/// Fails (an error or a panic) on operands equal to "bad", once armed.
struct Picky {
    armed: AtomicBool,
    panic: bool,
    must_merge: bool,
}

impl MergeOperator for Picky {
    fn name(&self) -> &str {
        "Picky"
    }
    fn full_merge(
        &self,
        _k: &[u8],
        base: Option<&[u8]>,
        ops: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        if self.armed.load(Ordering::Relaxed) && ops.contains(&&b"bad"[..]) {
            if self.panic {
                panic!("picky operator");
            }
            return Err(if self.must_merge {
                MergeError::must_merge("bad operand")
            } else {
                MergeError::new("bad operand")
            });
        }
        Ok([base.unwrap_or_default(), &ops.concat()].concat())
    }
}

fn picky(panic: bool, must_merge: bool) -> Arc<Picky> {
    Arc::new(Picky { armed: AtomicBool::new(true), panic, must_merge })
}

#[test]
fn a_failing_operator_is_corruption_never_a_value() {
    for (panic, must_merge) in [(false, false), (true, false), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let op = picky(panic, must_merge);
        let db = Db::open(dir.path(), opts(Some(op.clone()))).unwrap();
        db.put(b"k", b"a").unwrap();
        // The base in one file, the operand in the next: the flush cannot merge them.
        db.flush().unwrap();
        db.merge(b"k", b"bad").unwrap();
        db.merge(b"ok", b"fine").unwrap();
        let e = db.get(b"k").unwrap_err();
        assert!(e.is_corruption() && e.to_string().contains("Picky"), "{e}");
        assert!(db.get_pinned(b"k").unwrap_err().is_corruption());
        assert!(db.multi_get(&[b"k"], &ReadOptions::default())[0]
            .as_ref()
            .unwrap_err()
            .is_corruption());
        assert_eq!(db.get(b"ok").unwrap().as_deref(), Some(&b"fine"[..]));
        for backward in [false, true] {
            let mut it = db.raw_iter(&ReadOptions::default());
            if backward {
                it.seek_to_last();
                assert_eq!(it.key(), b"ok");
                it.prev();
            } else {
                it.seek_to_first();
            }
            assert!(!it.valid());
            assert!(it.status().unwrap_err().is_corruption());
        }
        db.flush().unwrap();
        let r = db.compact_range(None, None);
        if must_merge {
            // The compaction keeps the operands; reads still fail.
            r.unwrap();
            assert!(db.get(b"k").unwrap_err().is_corruption());
            db.put(b"after", b"1").unwrap();
        } else {
            // The compaction stops; the database refuses writes; the inputs stay live.
            assert!(r.unwrap_err().is_corruption(), "panic {panic}");
            assert!(matches!(db.put(b"x", b"1"), Err(Error::BackgroundError(_))));
        }
        drop(db);
        op.armed.store(false, Ordering::Relaxed);
        let db = Db::open(dir.path(), opts(Some(op.clone()))).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abad"[..]));
        db.compact_range(None, None).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abad"[..]));
        assert_eq!(db.get(b"ok").unwrap().as_deref(), Some(&b"fine"[..]));
    }
}

/// Panics on the value "boom"; upper-cases values starting with "up".
struct Filter;

impl CompactionFilter for Filter {
    fn name(&self) -> &str {
        "Filter"
    }
    fn filter(&self, _: usize, _: &[u8], t: FilterValueType, v: &[u8]) -> FilterDecision {
        assert_eq!(t, FilterValueType::Value);
        if v == b"boom" {
            panic!("filter bug");
        }
        if v.starts_with(b"up") {
            return FilterDecision::ChangeValue(v.to_ascii_uppercase());
        }
        if v.starts_with(b"rm") {
            return FilterDecision::Remove;
        }
        FilterDecision::Keep
    }
}

#[test]
fn a_flush_that_must_merge_fails_like_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let op = picky(true, false);
    let db = Db::open(dir.path(), opts(Some(op.clone()))).unwrap();
    db.put(b"k", b"a").unwrap();
    db.merge(b"k", b"bad").unwrap();
    match db.flush() {
        Err(Error::BackgroundError(e)) => assert!(e.is_corruption(), "{e}"),
        other => panic!("{other:?}"),
    }
    drop(db);
    op.armed.store(false, Ordering::Relaxed);
    // Nothing was lost: the WAL still holds both.
    let db = Db::open(dir.path(), opts(Some(op))).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abad"[..]));
}

#[test]
fn a_compaction_filter_changes_removes_and_its_panic_stops_the_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options { compaction_filter: Some(Arc::new(Filter)), ..opts(None) };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    db.put(b"a", b"up").unwrap();
    db.put(b"b", b"old").unwrap();
    db.compact_range(None, None).unwrap();
    db.put(b"b", b"rm").unwrap();
    db.put(b"c", b"keep").unwrap();
    // The last level is rewritten too (RocksDB's kIfHaveCompactionFilter): "b" is filtered
    // though its new value lands on a file of its own.
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"UP"[..]));
    assert_eq!(db.get(b"b").unwrap(), None, "removed: the old value stays hidden");
    db.put(b"d", b"boom").unwrap();
    let files_before = db.property("talus.num-files-at-level6");
    let e = db.compact_range(None, None).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains("filter bug"), "{e}");
    assert_eq!(db.property("talus.num-files-at-level6"), files_before);
    drop(db);
    let db = Db::open(dir.path(), Options { compaction_filter: None, ..o }).unwrap();
    assert_eq!(db.get(b"d").unwrap().as_deref(), Some(&b"boom"[..]), "the input stayed live");
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"keep"[..]));
}
