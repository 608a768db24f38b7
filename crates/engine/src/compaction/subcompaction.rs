//! Subcompactions: one compaction split into key ranges that run on their own threads, each
//! writing its own output files; the job still commits as one VersionEdit (`db/compact.rs`).
//!
//! Boundaries ([`boundaries`]) come from the input files' index blocks: every data block's
//! separator is an anchor weighted by the block's size, and the anchors are cut into
//! `max_subcompactions` runs of about equal weight (RocksDB's `GenSubcompactionBoundaries`).
//! Boundaries are user keys: range `i` holds the user keys in `[b[i-1], b[i])`, so every version
//! of a key lands in the same subcompaction and the outputs of different ranges never overlap.
//! [`Bounded`] restricts a merged input to one range; [`clip`] does the same for range
//! tombstones.
//!
//! Who calls: `DbInner::merge` with no lock held. Pure CPU here; reading the index blocks is
//! done by the caller through the table cache.

use crate::error::Result;
use crate::iter::range_del::RangeTombstone;
use crate::iter::InternalIterator;
use crate::key::{user_key, InternalKey, ValueKind, MAX_SEQUENCE};

use super::Compaction;

/// True if `c` may be split: L0 into a deeper level, or a manual compaction, never a move.
pub fn should_split(c: &Compaction, max_subcompactions: usize) -> bool {
    max_subcompactions > 1
        && !c.trivial_move
        && ((c.level == 0 && c.output_level > 0) || c.reason == "ManualCompaction")
}

/// Up to `n - 1` ascending user-key boundaries splitting `anchors` (user key, bytes up to that
/// key) into `n` runs of about equal weight. Fewer if the anchors cannot be split that finely.
pub fn boundaries(mut anchors: Vec<(Vec<u8>, u64)>, n: usize) -> Vec<Vec<u8>> {
    if n < 2 || anchors.len() < 2 {
        return Vec::new();
    }
    anchors.sort();
    let total: u64 = anchors.iter().map(|a| a.1).sum();
    let per = (total / n as u64).max(1);
    let first = anchors.first().map(|a| a.0.clone()).unwrap_or_default();
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut acc = 0u64;
    for (key, w) in anchors {
        if out.len() + 1 >= n {
            break;
        }
        if acc >= per * (out.len() as u64 + 1) && key > first && out.last().is_none_or(|l| key > *l)
        {
            out.push(key);
        }
        acc += w;
    }
    out
}

/// A user-key range `[lo, hi)`; `None` is unbounded.
pub type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The ranges the boundaries cut the key space into.
pub fn ranges(bounds: &[Vec<u8>]) -> Vec<KeyRange> {
    let mut out = Vec::with_capacity(bounds.len() + 1);
    let mut lo = None;
    for b in bounds {
        out.push((lo.take(), Some(b.clone())));
        lo = Some(b.clone());
    }
    out.push((lo, None));
    out
}

/// The parts of `tombstones` inside `[lo, hi)`.
pub fn clip(
    tombstones: &[RangeTombstone],
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Vec<RangeTombstone> {
    tombstones
        .iter()
        .filter_map(|t| {
            let start = match lo {
                Some(l) if l > t.start.as_slice() => l.to_vec(),
                _ => t.start.clone(),
            };
            let end = match hi {
                Some(h) if h < t.end.as_slice() => h.to_vec(),
                _ => t.end.clone(),
            };
            (start < end).then_some(RangeTombstone { start, end, seq: t.seq })
        })
        .collect()
}

/// An iterator restricted to the user keys `[lo, hi)` of its inner iterator.
pub struct Bounded {
    inner: Box<dyn InternalIterator>,
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

fn lookup(user: &[u8]) -> InternalKey {
    // Sorts before every real entry of `user`.
    InternalKey::new(user, MAX_SEQUENCE, ValueKind::RangeDelete)
}

impl Bounded {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn InternalIterator>, lo: Option<Vec<u8>>, hi: Option<Vec<u8>>) -> Self {
        Bounded { inner, lo, hi }
    }
}

impl InternalIterator for Bounded {
    fn valid(&self) -> bool {
        if !self.inner.valid() {
            return false;
        }
        let k = user_key(self.inner.key());
        self.hi.as_deref().is_none_or(|h| k < h) && self.lo.as_deref().is_none_or(|l| k >= l)
    }
    fn seek_to_first(&mut self) {
        match &self.lo {
            Some(l) => self.inner.seek(lookup(l).encoded()),
            None => self.inner.seek_to_first(),
        }
    }
    fn seek_to_last(&mut self) {
        match &self.hi {
            Some(h) => self.inner.seek_for_prev(lookup(h).encoded()),
            None => self.inner.seek_to_last(),
        }
    }
    fn seek(&mut self, target: &[u8]) {
        match &self.lo {
            Some(l) if user_key(target) < l.as_slice() => self.inner.seek(lookup(l).encoded()),
            _ => self.inner.seek(target),
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        match &self.hi {
            Some(h) if user_key(target) >= h.as_slice() => {
                self.inner.seek_for_prev(lookup(h).encoded())
            }
            _ => self.inner.seek_for_prev(target),
        }
    }
    fn next(&mut self) {
        self.inner.next()
    }
    fn prev(&mut self) {
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(k: &str, w: u64) -> (Vec<u8>, u64) {
        (k.as_bytes().to_vec(), w)
    }

    #[test]
    fn boundaries_split_by_weight() {
        let anchors = vec![a("a", 10), a("b", 10), a("c", 10), a("d", 10), a("e", 10), a("f", 10)];
        let b = boundaries(anchors.clone(), 3);
        assert_eq!(b, vec![b"c".to_vec(), b"e".to_vec()]);
        assert!(boundaries(anchors.clone(), 1).is_empty());
        // Never more ranges than anchors allow, never a duplicate boundary.
        let b = boundaries(vec![a("a", 1), a("a", 1), a("b", 1)], 8);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert!(b.iter().all(|k| k.as_slice() > b"a".as_slice()));
        // A heavy anchor takes a range of its own.
        let b = boundaries(vec![a("a", 100), a("m", 1), a("z", 1)], 2);
        assert_eq!(b, vec![b"m".to_vec()]);
    }

    #[test]
    fn ranges_and_clipping() {
        let r = ranges(&[b"g".to_vec(), b"p".to_vec()]);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], (None, Some(b"g".to_vec())));
        assert_eq!(r[2], (Some(b"p".to_vec()), None));
        let t = vec![RangeTombstone { start: b"c".to_vec(), end: b"k".to_vec(), seq: 5 }];
        let c = clip(&t, Some(b"g"), Some(b"p"));
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].start.as_slice(), c[0].end.as_slice()), (&b"g"[..], &b"k"[..]));
        assert!(clip(&t, Some(b"k"), None).is_empty());
    }

    #[test]
    fn manual_compaction_splits_and_keeps_every_key() {
        use std::collections::BTreeMap;
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            disable_auto_compactions: true,
            max_subcompactions: 4,
            ..Default::default()
        };
        let db = crate::Db::open(dir.path(), opts).unwrap();
        let mut model = BTreeMap::new();
        for round in 0..4u32 {
            for i in 0..1500u32 {
                let k = format!("key{:06}", (i * 7919 + round * 13) % 4000);
                let v = format!("v{round}-{i}");
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            db.flush().unwrap();
        }
        db.delete_range("key001000".."key001500").unwrap();
        model.retain(|k, _| !("key001000".."key001500").contains(&k.as_str()));
        db.compact_range(None, None).unwrap();
        let files = |l: usize| -> usize {
            db.property(&format!("talus.num-files-at-level{l}")).unwrap().parse().unwrap()
        };
        // One job with a 64 MiB target would write one file: the split wrote several.
        assert!((2..=4).contains(&files(6)), "{} files", files(6));
        assert_eq!((0..6).map(files).sum::<usize>(), 0);
        let got: Vec<(String, String)> = db
            .iter(&crate::ReadOptions::default())
            .map(|r| {
                let (k, v) = r.unwrap();
                (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())
            })
            .collect();
        assert_eq!(got, model.into_iter().collect::<Vec<_>>());
    }
}
