//! MergingIterator tests against `VecIterator` over the union of the children.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::iter::{EmptyIterator, FailAfter, VecIterator};
use crate::key::{make_internal_key, ValueKind};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn random_entries(rng: &mut StdRng, child: usize, n: usize) -> Entries {
    (0..n)
        .map(|i| {
            let k = rng.gen_range(0u8..40);
            // Small seq space: equal internal keys across children happen often.
            let seq = rng.gen_range(0..6);
            let kind = if rng.gen_bool(0.5) { ValueKind::Put } else { ValueKind::Delete };
            (make_internal_key(&[b'k', k], seq, kind), format!("c{child}-{i}").into_bytes())
        })
        .collect()
}

fn dedup_within_child(mut e: Entries) -> Entries {
    e.sort_by(|a, b| compare_internal(&a.0, &b.0));
    e.dedup_by(|a, b| a.0 == b.0);
    e
}

fn check_same(m: &MergingIterator, r: &VecIterator, ctx: &str) {
    assert_eq!(m.valid(), r.valid(), "{ctx}");
    if r.valid() {
        assert_eq!(m.key(), r.key(), "{ctx}");
        assert_eq!(m.value(), r.value(), "{ctx}");
    }
}

#[test]
fn random_ops_match_union() {
    let mut rng = StdRng::seed_from_u64(11);
    for round in 0..300 {
        let nchildren = rng.gen_range(0..7);
        let mut union = Vec::new();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for c in 0..nchildren {
            let n = rng.gen_range(0..30);
            let e = dedup_within_child(random_entries(&mut rng, c, n));
            union.extend(e.iter().cloned());
            children.push(Box::new(VecIterator::new(e)));
        }
        // A stable sort of the concatenation puts equal keys in child order.
        let mut r = VecIterator::new(union);
        let mut m = MergingIterator::new(children);
        for step in 0..200 {
            let target = make_internal_key(
                &[b'k', rng.gen_range(0u8..42)],
                rng.gen_range(0..7),
                ValueKind::Put,
            );
            let op = rng.gen_range(0..8);
            match op {
                0 => {
                    m.seek(&target);
                    r.seek(&target);
                }
                1 => {
                    m.seek_for_prev(&target);
                    r.seek_for_prev(&target);
                }
                2 => {
                    m.seek_to_first();
                    r.seek_to_first();
                }
                3 => {
                    m.seek_to_last();
                    r.seek_to_last();
                }
                4 | 5 if r.valid() => {
                    m.next();
                    r.next();
                }
                _ if r.valid() => {
                    m.prev();
                    r.prev();
                }
                _ => {}
            }
            check_same(&m, &r, &format!("round {round} step {step} op {op}"));
        }
        assert!(m.status().is_ok());
    }
}

#[test]
fn full_scans_both_ways_with_ties() {
    let k = |s: &[u8], seq| make_internal_key(s, seq, ValueKind::Put);
    let a = vec![(k(b"a", 2), b"a0".to_vec()), (k(b"b", 1), b"b0".to_vec())];
    let b = vec![(k(b"a", 2), b"a1".to_vec()), (k(b"a", 1), b"x1".to_vec())];
    let c = vec![(k(b"a", 2), b"a2".to_vec()), (k(b"c", 9), b"c2".to_vec())];
    let mut m = MergingIterator::new(vec![
        Box::new(VecIterator::new(a)),
        Box::new(EmptyIterator::default()),
        Box::new(VecIterator::new(b)),
        Box::new(VecIterator::new(c)),
    ]);
    let mut fwd = Vec::new();
    m.seek_to_first();
    while m.valid() {
        fwd.push(m.value().to_vec());
        m.next();
    }
    let want: Vec<&[u8]> = vec![b"a0", b"a1", b"a2", b"x1", b"b0", b"c2"];
    assert_eq!(fwd, want);
    let mut back = Vec::new();
    m.seek_to_last();
    while m.valid() {
        back.push(m.value().to_vec());
        m.prev();
    }
    back.reverse();
    assert_eq!(back, want);
    // Zig-zag across the tie group.
    m.seek_to_first();
    m.next(); // a1
    m.prev(); // a0
    assert_eq!(m.value(), b"a0");
    m.next();
    m.next(); // a2
    assert_eq!(m.value(), b"a2");
    m.prev();
    assert_eq!(m.value(), b"a1");
    m.next();
    assert_eq!(m.value(), b"a2");
}

#[test]
fn child_error_stops_the_merge() {
    let mut rng = StdRng::seed_from_u64(5);
    let e0 = dedup_within_child(random_entries(&mut rng, 0, 30));
    let e1 = dedup_within_child(random_entries(&mut rng, 1, 30));
    let mut m = MergingIterator::new(vec![
        Box::new(VecIterator::new(e0)),
        Box::new(FailAfter::new(VecIterator::new(e1), 5)),
    ]);
    m.seek_to_first();
    let mut steps = 0;
    while m.valid() {
        m.next();
        steps += 1;
    }
    assert!(steps < 60);
    let err = m.status().expect_err("the child's error is reported");
    assert!(err.is_corruption());
    m.seek_to_first();
    assert!(!m.valid(), "errors are sticky");
}
