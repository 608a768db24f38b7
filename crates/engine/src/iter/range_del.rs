//! Range tombstones and their fragmented, queryable form.
//!
//! A [`RangeTombstone`] deletes every entry of a user key in `[start, end)` whose sequence number
//! is below the tombstone's. [`FragmentedTombstones`] cuts a set of possibly overlapping
//! tombstones at every boundary into non-overlapping fragments, each holding the sequence numbers
//! of the tombstones that cover it, so a lookup is a binary search. Built once per memtable or
//! SST file (and per read from those), then shared read-only.

use std::collections::BTreeMap;

use crate::key::SequenceNumber;

/// Deletes user keys in `[start, end)` written before `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RangeTombstone {
    /// First user key deleted.
    pub start: Vec<u8>,
    /// First user key not deleted (exclusive).
    pub end: Vec<u8>,
    /// The tombstone's sequence number.
    pub seq: SequenceNumber,
}

impl RangeTombstone {
    /// True if `user_key` lies in `[start, end)`.
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.start.as_slice() <= user_key && user_key < self.end.as_slice()
    }
}

#[derive(Debug, Clone)]
struct Fragment {
    start: Vec<u8>,
    end: Vec<u8>,
    /// Sequence numbers of covering tombstones, descending.
    seqs: Vec<SequenceNumber>,
}

/// Non-overlapping fragments of a set of range tombstones.
#[derive(Debug, Clone, Default)]
pub struct FragmentedTombstones {
    fragments: Vec<Fragment>,
    count: usize,
}

impl FragmentedTombstones {
    /// Fragments `tombstones` (empty ranges are ignored).
    pub fn new(tombstones: impl IntoIterator<Item = RangeTombstone>) -> Self {
        let mut ts: Vec<RangeTombstone> =
            tombstones.into_iter().filter(|t| t.start < t.end).collect();
        let count = ts.len();
        if ts.is_empty() {
            return Self::default();
        }
        ts.sort_by(|a, b| a.start.cmp(&b.start));
        let mut bounds: Vec<&[u8]> = Vec::with_capacity(ts.len() * 2);
        for t in &ts {
            bounds.push(&t.start);
            bounds.push(&t.end);
        }
        bounds.sort_unstable();
        bounds.dedup();
        // Sweep the boundaries with the multiset of active tombstones (by end key, seq).
        let mut active: BTreeMap<(Vec<u8>, SequenceNumber), usize> = BTreeMap::new();
        let mut next_start = 0;
        let mut fragments = Vec::new();
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            active.retain(|(end, _), _| end.as_slice() > lo);
            while next_start < ts.len() && ts[next_start].start.as_slice() <= lo {
                let t = &ts[next_start];
                *active.entry((t.end.clone(), t.seq)).or_insert(0) += 1;
                next_start += 1;
            }
            if active.is_empty() {
                continue;
            }
            let mut seqs: Vec<SequenceNumber> = active.keys().map(|(_, s)| *s).collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.dedup();
            fragments.push(Fragment { start: lo.to_vec(), end: hi.to_vec(), seqs });
        }
        FragmentedTombstones { fragments, count }
    }

    /// True if there are no tombstones.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Number of (non-empty) tombstones this was built from.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The highest sequence number `<= read_seq` of a tombstone covering `user_key`; 0 if none.
    pub fn max_covering_seq(&self, user_key: &[u8], read_seq: SequenceNumber) -> SequenceNumber {
        if self.fragments.is_empty() {
            return 0;
        }
        let i = self.fragments.partition_point(|f| f.end.as_slice() <= user_key);
        match self.fragments.get(i) {
            Some(f) if f.start.as_slice() <= user_key => {
                f.seqs.iter().copied().find(|&s| s <= read_seq).unwrap_or(0)
            }
            _ => 0,
        }
    }

    /// True if an entry of `user_key` at `seq` is deleted by a tombstone visible at `read_seq`.
    pub fn covers(&self, user_key: &[u8], seq: SequenceNumber, read_seq: SequenceNumber) -> bool {
        self.max_covering_seq(user_key, read_seq) > seq
    }

    /// The first fragment boundary strictly greater than `user_key` (where coverage can change),
    /// used by iterators to skip covered runs.
    pub fn next_boundary_after(&self, user_key: &[u8]) -> Option<&[u8]> {
        let i = self.fragments.partition_point(|f| f.end.as_slice() <= user_key);
        let f = self.fragments.get(i)?;
        if f.start.as_slice() > user_key {
            Some(&f.start)
        } else {
            Some(&f.end)
        }
    }

    /// The fragments as tombstones (one per fragment and sequence number), in start order.
    pub fn to_tombstones(&self) -> Vec<RangeTombstone> {
        let mut out = Vec::new();
        for f in &self.fragments {
            for &seq in &f.seqs {
                out.push(RangeTombstone { start: f.start.clone(), end: f.end.clone(), seq });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, e: &str, seq: u64) -> RangeTombstone {
        RangeTombstone { start: s.as_bytes().to_vec(), end: e.as_bytes().to_vec(), seq }
    }

    #[test]
    fn overlapping_tombstones_match_brute_force() {
        let ts = vec![t("b", "f", 5), t("d", "k", 9), t("a", "c", 3), t("e", "e", 100)];
        let f = FragmentedTombstones::new(ts.clone());
        for k in ["a", "b", "c", "d", "e", "f", "g", "j", "k", "z", ""] {
            for read in [0, 3, 4, 5, 8, 9, 100] {
                let want = ts
                    .iter()
                    .filter(|t| t.contains(k.as_bytes()) && t.seq <= read)
                    .map(|t| t.seq)
                    .max()
                    .unwrap_or(0);
                assert_eq!(f.max_covering_seq(k.as_bytes(), read), want, "key {k} read {read}");
            }
        }
        assert_eq!(f.len(), 3);
    }

    #[test]
    fn random_tombstones_match_brute_force() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200 {
            let n = rng.gen_range(0..8);
            let ts: Vec<_> = (0..n)
                .map(|_| {
                    let a = rng.gen_range(0u8..20);
                    let b = rng.gen_range(0u8..20);
                    RangeTombstone { start: vec![a], end: vec![b], seq: rng.gen_range(1..10) }
                })
                .collect();
            let f = FragmentedTombstones::new(ts.clone());
            for k in 0u8..21 {
                let read = rng.gen_range(0..11);
                let want = ts
                    .iter()
                    .filter(|t| t.contains(&[k]) && t.seq <= read)
                    .map(|t| t.seq)
                    .max()
                    .unwrap_or(0);
                assert_eq!(f.max_covering_seq(&[k], read), want);
            }
        }
    }
}
