//! DbIterator tests: a randomized oracle over puts, deletes and range deletes, plus errors.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::iter::merging::MergingIterator;
use crate::iter::range_del::RangeTombstone;
use crate::iter::{EmptyIterator, VecIterator};
use crate::key::make_internal_key;
use crate::memtable::MemTable;

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    RangeDelete(Vec<u8>, Vec<u8>),
}

fn key(n: u8) -> Vec<u8> {
    // One- and two-byte keys so that prefixes ("b" < "b\x01" < "c") are covered.
    match n % 3 {
        0 => vec![b'a' + n / 3, 1],
        _ => vec![b'a' + n / 3],
    }
}

/// The user keys visible at `read_seq` within bounds, sorted: the brute-force oracle.
fn oracle(
    ops: &[Op],
    read_seq: u64,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut newest: BTreeMap<Vec<u8>, (u64, Option<Vec<u8>>)> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        let seq = i as u64 + 1;
        if seq > read_seq {
            break;
        }
        match op {
            Op::Put(k, v) => {
                newest.insert(k.clone(), (seq, Some(v.clone())));
            }
            Op::Delete(k) => {
                newest.insert(k.clone(), (seq, None));
            }
            Op::RangeDelete(..) => {}
        }
    }
    let covered = |k: &[u8], entry_seq: u64| {
        ops.iter().enumerate().any(|(i, op)| {
            let tseq = i as u64 + 1;
            matches!(op, Op::RangeDelete(s, e) if s.as_slice() <= k && k < e.as_slice()
                && tseq <= read_seq && tseq > entry_seq)
        })
    };
    newest
        .into_iter()
        .filter(|(k, _)| lower.is_none_or(|l| k.as_slice() >= l))
        .filter(|(k, _)| upper.is_none_or(|u| k.as_slice() < u))
        .filter_map(|(k, (seq, v))| {
            let v = v?;
            (!covered(&k, seq)).then_some((k, v))
        })
        .collect()
}

/// Builds a DbIterator over `ops`, spreading the point entries over `nchildren` merged sources.
fn build(
    ops: &[Op],
    rng: &mut StdRng,
    read_seq: u64,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> DbIterator {
    let nchildren = rng.gen_range(1..4);
    let mut children: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); nchildren];
    let mut tombstones = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let seq = i as u64 + 1;
        let c = rng.gen_range(0..nchildren);
        match op {
            Op::Put(k, v) => {
                children[c].push((make_internal_key(k, seq, ValueKind::Put), v.clone()))
            }
            Op::Delete(k) => {
                children[c].push((make_internal_key(k, seq, ValueKind::Delete), vec![]))
            }
            Op::RangeDelete(s, e) => {
                tombstones.push(RangeTombstone { start: s.clone(), end: e.clone(), seq })
            }
        }
    }
    // Each source is either a sorted vector or a real memtable.
    let mut sources: Vec<Box<dyn InternalIterator>> = children
        .into_iter()
        .map(|c| {
            if rng.gen_bool(0.5) {
                return Box::new(VecIterator::new(c)) as Box<dyn InternalIterator>;
            }
            let mem = Arc::new(MemTable::new());
            for (ikey, value) in &c {
                let p = parse_internal_key(ikey).expect("test keys parse");
                mem.add(p.seq, p.kind, p.user_key, value);
            }
            mem.iter()
        })
        .collect();
    let inner: Box<dyn InternalIterator> = match sources.len() {
        1 => sources.pop().unwrap_or_else(|| Box::new(EmptyIterator::default())),
        _ => Box::new(MergingIterator::new(sources)),
    };
    DbIterator::new(
        inner,
        read_seq,
        Some(Arc::new(FragmentedTombstones::new(tombstones))),
        lower,
        upper,
    )
}

fn random_ops(rng: &mut StdRng, n: usize) -> Vec<Op> {
    (0..n)
        .map(|i| match rng.gen_range(0..10) {
            0..=5 => Op::Put(key(rng.gen_range(0..24)), format!("v{i}").into_bytes()),
            6..=8 => Op::Delete(key(rng.gen_range(0..24))),
            _ => {
                let a = key(rng.gen_range(0..24));
                let b = key(rng.gen_range(0..24));
                if a <= b {
                    Op::RangeDelete(a, b)
                } else {
                    Op::RangeDelete(b, a)
                }
            }
        })
        .collect()
}

#[test]
fn random_ops_match_oracle() {
    let mut rng = StdRng::seed_from_u64(42);
    for round in 0..400 {
        let n = rng.gen_range(0..60);
        let ops = random_ops(&mut rng, n);
        let read_seq = rng.gen_range(0..=ops.len() as u64 + 1);
        let lower = rng.gen_bool(0.3).then(|| key(rng.gen_range(0..26)));
        let upper = rng.gen_bool(0.3).then(|| key(rng.gen_range(0..26)));
        let want = oracle(&ops, read_seq, lower.as_deref(), upper.as_deref());
        let mut it = build(&ops, &mut rng, read_seq, lower.clone(), upper.clone());

        // Full scans both ways.
        let mut got = Vec::new();
        it.seek_to_first();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert_eq!(got, want, "round {round}: forward scan");
        got.clear();
        it.seek_to_last();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        got.reverse();
        assert_eq!(got, want, "round {round}: backward scan");

        // Random walks: the model cursor is an index into `want`.
        let mut pos: Option<usize> = None;
        for step in 0..60 {
            let target = key(rng.gen_range(0..26));
            let op = rng.gen_range(0..8);
            match op {
                0 => {
                    it.seek(&target);
                    pos = want.iter().position(|(k, _)| *k >= target);
                }
                1 => {
                    it.seek_for_prev(&target);
                    pos = want.iter().rposition(|(k, _)| *k <= target);
                }
                2 => {
                    it.seek_to_first();
                    pos = (!want.is_empty()).then_some(0);
                }
                3 => {
                    it.seek_to_last();
                    pos = want.len().checked_sub(1);
                }
                4 | 5 => {
                    it.next();
                    pos = pos.and_then(|p| (p + 1 < want.len()).then_some(p + 1));
                }
                _ => {
                    it.prev();
                    pos = pos.and_then(|p| p.checked_sub(1));
                }
            }
            let ctx = format!("round {round} step {step} op {op} target {target:?}");
            assert_eq!(it.valid(), pos.is_some(), "{ctx}");
            if let Some(p) = pos {
                assert_eq!(it.key(), want[p].0.as_slice(), "{ctx}");
                assert_eq!(it.value(), want[p].1.as_slice(), "{ctx}");
            }
        }
        assert!(it.status().is_ok());
    }
}

#[test]
fn newest_version_wins_and_invisible_versions_are_skipped() {
    let ops = vec![
        Op::Put(b"a".to_vec(), b"1".to_vec()),
        Op::Put(b"a".to_vec(), b"2".to_vec()),
        Op::Delete(b"b".to_vec()),
        Op::Put(b"b".to_vec(), b"3".to_vec()),
        Op::RangeDelete(b"a".to_vec(), b"b".to_vec()),
        Op::Put(b"a".to_vec(), b"6".to_vec()),
    ];
    let mut rng = StdRng::seed_from_u64(1);
    for (read_seq, want) in [
        (0, vec![]),
        (1, vec![("a", "1")]),
        (2, vec![("a", "2")]),
        (3, vec![("a", "2")]),
        (4, vec![("a", "2"), ("b", "3")]),
        (5, vec![("b", "3")]),
        (6, vec![("a", "6"), ("b", "3")]),
    ] {
        let mut it = build(&ops, &mut rng, read_seq, None, None);
        let mut got = Vec::new();
        it.seek_to_last();
        while it.valid() {
            got.push((
                String::from_utf8(it.key().to_vec()).unwrap_or_default(),
                String::from_utf8(it.value().to_vec()).unwrap_or_default(),
            ));
            it.prev();
        }
        got.reverse();
        let want: Vec<(String, String)> =
            want.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(got, want, "read_seq {read_seq}");
    }
}

#[test]
fn inner_error_invalidates_and_is_reported() {
    let err = Error::corruption("000009.sst", 4096, "checksum mismatch");
    let mut it = DbIterator::new(Box::new(EmptyIterator::with_error(err)), 10, None, None, None);
    it.seek_to_first();
    assert!(!it.valid());
    assert!(it.status().expect_err("error").is_corruption());
}

#[test]
fn undecodable_key_is_corruption() {
    let mut bad = make_internal_key(b"b", 1, ValueKind::Put);
    let n = bad.len();
    bad[n - 8] = 99; // unknown kind
    let entries =
        vec![(make_internal_key(b"a", 1, ValueKind::Put), b"x".to_vec()), (bad, b"y".to_vec())];
    for backward in [false, true] {
        let mut it =
            DbIterator::new(Box::new(VecIterator::new(entries.clone())), 10, None, None, None);
        if backward {
            it.seek_to_last();
        } else {
            it.seek_to_first();
            assert!(it.valid());
            assert_eq!(it.key(), b"a");
            it.next();
        }
        assert!(!it.valid());
        assert!(it.status().expect_err("corruption").is_corruption());
    }
}

#[test]
fn key_shorter_than_a_trailer_is_corruption() {
    for backward in [false, true] {
        let entries = vec![(b"tiny".to_vec(), b"z".to_vec())];
        let mut it = DbIterator::new(Box::new(VecIterator::new(entries)), 10, None, None, None);
        if backward {
            it.seek_for_prev(b"zzz");
        } else {
            it.seek(b"");
        }
        assert!(!it.valid());
        assert!(it.status().expect_err("corruption").is_corruption());
    }
}

/// An inner iterator that fails for good (invalid, corruption status) after `budget` moves.
struct FailAfter {
    inner: VecIterator,
    budget: usize,
}

impl FailAfter {
    fn step(&mut self) {
        self.budget = self.budget.saturating_sub(1);
    }
    fn failed(&self) -> bool {
        self.budget == 0
    }
}

impl InternalIterator for FailAfter {
    fn valid(&self) -> bool {
        !self.failed() && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.step();
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.step();
        self.inner.seek_to_last()
    }
    fn seek(&mut self, t: &[u8]) {
        self.step();
        self.inner.seek(t)
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        self.step();
        self.inner.seek_for_prev(t)
    }
    fn next(&mut self) {
        self.step();
        self.inner.next()
    }
    fn prev(&mut self) {
        self.step();
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        match self.failed() {
            true => Err(Error::corruption("000003.sst", 7, "bad block")),
            false => Ok(()),
        }
    }
}

#[test]
fn inner_failure_mid_scan_never_yields_wrong_keys() {
    let mut rng = StdRng::seed_from_u64(9);
    for round in 0..200 {
        let n = rng.gen_range(1..40);
        let ops = random_ops(&mut rng, n);
        let read_seq = rng.gen_range(0..=n as u64);
        let want = oracle(&ops, read_seq, None, None);
        let entries: Vec<_> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::Put(k, v) => {
                    Some((make_internal_key(k, i as u64 + 1, ValueKind::Put), v.clone()))
                }
                Op::Delete(k) => {
                    Some((make_internal_key(k, i as u64 + 1, ValueKind::Delete), vec![]))
                }
                Op::RangeDelete(..) => None,
            })
            .collect();
        let tombstones: Vec<_> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::RangeDelete(s, e) => {
                    Some(RangeTombstone { start: s.clone(), end: e.clone(), seq: i as u64 + 1 })
                }
                _ => None,
            })
            .collect();
        let budget = rng.gen_range(1..2 * n + 2);
        let inner = FailAfter { inner: VecIterator::new(entries), budget };
        let mut it = DbIterator::new(
            Box::new(inner),
            read_seq,
            Some(Arc::new(FragmentedTombstones::new(tombstones))),
            None,
            None,
        );
        let backward = rng.gen_bool(0.5);
        let mut got = Vec::new();
        if backward {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            if backward {
                it.prev()
            } else {
                it.next()
            }
        }
        if backward {
            got.reverse();
        }
        if it.status().is_ok() {
            assert_eq!(got, want, "round {round}");
        } else {
            // What was yielded before the failure is a correct run of the answer.
            let ok = if backward { want.ends_with(&got) } else { want.starts_with(&got) };
            assert!(ok, "round {round}: yielded {got:?}, want a part of {want:?}");
        }
    }
}
