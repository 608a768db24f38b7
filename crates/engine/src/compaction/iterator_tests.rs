//! The compaction iterator's rules, entry by entry: a small input in, the exact output out.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{CompactionIter, CompactionPolicy};
use crate::compaction_filter::{CompactionFilter, FilterDecision, FilterValueType};
use crate::error::Result;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::{InternalIterator, VecIterator};
use crate::key::{make_internal_key, parse_internal_key, ValueKind};
use crate::merge::StringAppendTestOperator;
use crate::merge::{MergeError, MergeFailureScope, MergeOperator, StringAppendOperator};

use ValueKind::{Delete as D, Merge as M, Put as P};

type Out = Vec<(String, u64, ValueKind, String)>;

fn input(entries: &[(&str, u64, ValueKind, &str)]) -> VecIterator {
    VecIterator::new(
        entries
            .iter()
            .map(|(k, s, kind, v)| {
                (make_internal_key(k.as_bytes(), *s, *kind), v.as_bytes().to_vec())
            })
            .collect(),
    )
}

#[derive(Default)]
struct Setup<'a> {
    snapshots: &'a [u64],
    tombstones: Option<&'a FragmentedTombstones>,
    bottommost: bool,
    merge: Option<&'a dyn MergeOperator>,
    filter: Option<&'a dyn CompactionFilter>,
}

fn run_with(s: Setup<'_>, entries: &[(&str, u64, ValueKind, &str)]) -> Result<Out> {
    let mut it = input(entries);
    it.seek_to_first();
    let policy = CompactionPolicy {
        snapshots: s.snapshots,
        tombstones: s.tombstones,
        bottommost: s.bottommost,
        zero_seqs: false,
        merge: s.merge,
        filter: s.filter.map(|f| (f, 1)),
        blobs: None,
        shutting_down: None,
    };
    let mut c = CompactionIter::new(&mut it, policy);
    let mut out = Vec::new();
    while let Some((k, v, _)) = c.next()? {
        let p = parse_internal_key(k).unwrap();
        out.push((
            String::from_utf8_lossy(p.user_key).into_owned(),
            p.seq,
            p.kind,
            String::from_utf8_lossy(v).into_owned(),
        ));
    }
    assert_eq!(c.keys_in, entries.len() as u64, "every input entry is counted once");
    assert_eq!(c.keys_dropped(), c.keys_in - out.len() as u64);
    Ok(out)
}

fn out(entries: &[(&str, u64, ValueKind, &str)]) -> Out {
    entries.iter().map(|(k, s, kind, v)| (k.to_string(), *s, *kind, v.to_string())).collect()
}

fn append() -> StringAppendOperator {
    StringAppendOperator::new(",")
}

#[test]
fn a_chain_with_its_base_becomes_one_put() {
    let op = append();
    let s = Setup { merge: Some(&op), ..Default::default() };
    let got = run_with(
        s,
        &[("a", 9, M, "c"), ("a", 8, M, "b"), ("a", 7, P, "a"), ("a", 6, P, "x"), ("b", 5, M, "y")],
    );
    // `b`'s lone operand is above the bottom: kept as it is.
    assert_eq!(got.unwrap(), out(&[("a", 9, P, "a,b,c"), ("b", 5, M, "y")]));
    // A deletion base: no value under the operands.
    let s = Setup { merge: Some(&op), ..Default::default() };
    let got = run_with(s, &[("a", 9, M, "c"), ("a", 8, M, "b"), ("a", 7, D, "")]);
    assert_eq!(got.unwrap(), out(&[("a", 9, P, "b,c")]));
}

#[test]
fn without_the_base_operands_merge_partially_or_stay() {
    let op = append();
    let s = Setup { merge: Some(&op), ..Default::default() };
    assert_eq!(
        run_with(s, &[("a", 9, M, "c"), ("a", 8, M, "b")]).unwrap(),
        out(&[("a", 9, M, "b,c")])
    );
    // No partial merge: every operand stays.
    let test_op = StringAppendTestOperator(append());
    let s = Setup { merge: Some(&test_op), ..Default::default() };
    assert_eq!(
        run_with(s, &[("a", 9, M, "c"), ("a", 8, M, "b")]).unwrap(),
        out(&[("a", 9, M, "c"), ("a", 8, M, "b")])
    );
    // At the bottom the end of the key is the base.
    let s = Setup { merge: Some(&test_op), bottommost: true, ..Default::default() };
    assert_eq!(
        run_with(s, &[("a", 9, M, "c"), ("a", 8, M, "b")]).unwrap(),
        out(&[("a", 9, P, "b,c")])
    );
}

#[test]
fn snapshots_cut_chains() {
    let op = append();
    // Snapshot 7 reads (a@7 put "a" + a@6? no: a@7 is the base) = "a"; snapshot 8 reads "a,b".
    let s = Setup { snapshots: &[7, 8], merge: Some(&op), bottommost: true, ..Default::default() };
    let got = run_with(
        s,
        &[
            ("a", 10, M, "d"),
            ("a", 9, M, "c"),
            ("a", 8, M, "b"),
            ("a", 7, P, "a"),
            ("a", 5, P, "z"),
        ],
    );
    assert_eq!(got.unwrap(), out(&[("a", 10, M, "c,d"), ("a", 8, M, "b"), ("a", 7, P, "a")]));
}

#[test]
fn a_range_tombstone_under_the_operands_is_their_base() {
    let op = append();
    let t = FragmentedTombstones::new([RangeTombstone {
        start: b"a".to_vec(),
        end: b"b".to_vec(),
        seq: 8,
    }]);
    let s = Setup { tombstones: Some(&t), merge: Some(&op), ..Default::default() };
    let got =
        run_with(s, &[("a", 10, M, "d"), ("a", 9, M, "c"), ("a", 7, M, "b"), ("a", 6, P, "a")]);
    assert_eq!(got.unwrap(), out(&[("a", 10, P, "c,d")]));
}

struct Fails(MergeFailureScope);

impl MergeOperator for Fails {
    fn name(&self) -> &str {
        "Fails"
    }
    fn full_merge(&self, _: &[u8], _: Option<&[u8]>, _: &[&[u8]]) -> Result<Vec<u8>, MergeError> {
        Err(MergeError { message: "refused".into(), scope: self.0 })
    }
}

#[test]
fn an_unmergeable_chain_keeps_operands_and_base() {
    let input = [("a", 9, M, "c"), ("a", 8, M, "b"), ("a", 7, P, "a"), ("a", 6, P, "old")];
    let kept = out(&[("a", 9, M, "c"), ("a", 8, M, "b"), ("a", 7, P, "a")]);
    assert_eq!(run_with(Setup::default(), &input).unwrap(), kept);
    let must = Fails(MergeFailureScope::MustMerge);
    let s = Setup { merge: Some(&must), ..Default::default() };
    assert_eq!(run_with(s, &input).unwrap(), kept);
    let try_ = Fails(MergeFailureScope::TryMerge);
    let s = Setup { merge: Some(&try_), ..Default::default() };
    let e = run_with(s, &input).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains("refused"), "{e}");
}

/// Removes values starting with `r`, upper-cases those starting with `c`, counts calls.
struct TestFilter(AtomicUsize);

impl CompactionFilter for TestFilter {
    fn name(&self) -> &str {
        "TestFilter"
    }
    fn filter(&self, level: usize, _key: &[u8], t: FilterValueType, v: &[u8]) -> FilterDecision {
        assert_eq!(level, 1);
        self.0.fetch_add(1, Ordering::Relaxed);
        match v.first() {
            Some(b'r') => FilterDecision::Remove,
            Some(b'c') if t == FilterValueType::Value => {
                FilterDecision::ChangeValue(v.to_ascii_uppercase())
            }
            Some(b'c') => FilterDecision::ChangeValue(b"C".to_vec()),
            _ => FilterDecision::Keep,
        }
    }
}

#[test]
fn the_filter_sees_each_keys_newest_value_whatever_the_snapshots() {
    let f = TestFilter(AtomicUsize::new(0));
    let s = Setup { snapshots: &[5], filter: Some(&f), ..Default::default() };
    let got = run_with(
        s,
        &[
            ("a", 9, P, "rm"),
            ("a", 4, P, "old"),
            ("b", 3, P, "cat"),
            ("c", 8, P, "keep"),
            ("c", 2, P, "rm"),
        ],
    );
    // a@9 becomes a deletion (a@4 stays hidden from the latest reads; snapshot 5 reads it);
    // b@3 (read by snapshot 5) changes anyway; c's older value is not offered.
    assert_eq!(
        got.unwrap(),
        out(&[
            ("a", 9, D, ""),
            ("a", 4, P, "old"),
            ("b", 3, P, "CAT"),
            ("c", 8, P, "keep"),
            ("c", 2, P, "rm")
        ])
    );
    assert_eq!(f.0.load(Ordering::Relaxed), 3);
    // At the bottom a removed value of the oldest stripe leaves nothing.
    let s = Setup { bottommost: true, filter: Some(&f), ..Default::default() };
    assert_eq!(run_with(s, &[("a", 9, P, "rm"), ("a", 4, P, "old")]).unwrap(), out(&[]));
}

#[test]
fn the_filter_sees_operands_no_snapshot_reads() {
    let f = TestFilter(AtomicUsize::new(0));
    let op = append();
    let s = Setup { snapshots: &[7], merge: Some(&op), filter: Some(&f), ..Default::default() };
    let got = run_with(
        s,
        &[
            ("a", 10, M, "x"),
            ("a", 9, M, "rm"),
            ("a", 8, M, "cc"),
            ("a", 7, M, "rm"),
            ("a", 6, P, "base"),
        ],
    );
    // Above the snapshot: "rm" dropped, "cc" changed to "C"; below it nothing is offered.
    assert_eq!(got.unwrap(), out(&[("a", 10, M, "C,x"), ("a", 7, P, "base,rm")]));
    assert_eq!(f.0.load(Ordering::Relaxed), 3);
}

struct Panics;

impl CompactionFilter for Panics {
    fn name(&self) -> &str {
        "Panics"
    }
    fn filter(&self, _: usize, _: &[u8], _: FilterValueType, _: &[u8]) -> FilterDecision {
        panic!("filter bug")
    }
}

#[test]
fn a_panicking_filter_is_the_jobs_error() {
    let s = Setup { filter: Some(&Panics), ..Default::default() };
    let e = run_with(s, &[("a", 9, P, "v")]).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains("filter bug"), "{e}");
}
