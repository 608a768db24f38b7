//! [`TransactionIter`]: a cursor over the database with a transaction's own writes applied
//! (RocksDB's `BaseDeltaIterator`): the database's cursor (the base) and the transaction's
//! index of writes (the delta) are walked together; where both have a key the delta's write
//! wins, and a key the delta deletes is skipped.
//!
//! Both directions: each side is positioned on its entry at or beyond the current key; turning
//! around re-seeks both sides next to the current key. The bounds of the read options apply to
//! both sides. Locks: none (it borrows the transaction's index; the base holds its
//! SuperVersion).

use std::cmp::Ordering;
use std::ops::Bound;

use super::write_batch_with_index::{IndexedWrite, WriteBatchWithIndex};
use crate::db::RawIter;
use crate::error::Result;
use crate::options::ReadOptions;

/// Which side the current entry comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Current {
    None,
    Base,
    Delta,
    /// Both have the key; the delta's write is shown.
    Both,
}

/// A cursor over a transaction's view: position with `seek*`, move with `next`/`prev`, read
/// `key`/`value` while `valid()`, check `status()` when it turns invalid (as
/// [`crate::RawIter`]).
pub struct TransactionIter<'a> {
    base: RawIter,
    wb: &'a WriteBatchWithIndex,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    delta: Option<(&'a [u8], IndexedWrite<'a>)>,
    current: Current,
    forward: bool,
}

impl<'a> TransactionIter<'a> {
    pub(crate) fn new(base: RawIter, wb: &'a WriteBatchWithIndex, ro: &ReadOptions) -> Self {
        TransactionIter {
            base,
            wb,
            lower: ro.iterate_lower_bound.clone(),
            upper: ro.iterate_upper_bound.clone(),
            delta: None,
            current: Current::None,
            forward: true,
        }
    }

    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        self.current != Current::None
    }

    /// The current key (empty when not valid).
    pub fn key(&self) -> &[u8] {
        match (self.current, self.delta) {
            (Current::Delta | Current::Both, Some((k, _))) => k,
            (Current::Base, _) => self.base.key(),
            _ => &[],
        }
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        match (self.current, self.delta) {
            (Current::Delta | Current::Both, Some((_, IndexedWrite::Put(v)))) => v,
            (Current::Base, _) => self.base.value(),
            _ => &[],
        }
    }

    /// The base cursor's first error, if any.
    pub fn status(&self) -> Result<()> {
        self.base.status()
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.base.seek_to_first();
        self.delta = self.delta_range(Bound::Unbounded, Bound::Unbounded, true);
        self.settle(true);
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.base.seek_to_last();
        self.delta = self.delta_range(Bound::Unbounded, Bound::Unbounded, false);
        self.settle(false);
    }

    /// Positions at the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.base.seek(key);
        self.delta = self.delta_range(Bound::Included(key), Bound::Unbounded, true);
        self.settle(true);
    }

    /// Positions at the last key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        self.base.seek_for_prev(key);
        self.delta = self.delta_range(Bound::Unbounded, Bound::Included(key), false);
        self.settle(false);
    }

    /// Moves forward (only while valid).
    pub fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if !self.forward {
            let k = self.key().to_vec();
            self.base.seek(&k);
            if self.base.valid() && self.base.key() == k.as_slice() {
                self.base.next();
            }
            self.delta = self.delta_range(Bound::Excluded(&k), Bound::Unbounded, true);
        } else {
            if matches!(self.current, Current::Base | Current::Both) {
                self.base.next();
            }
            if let (Current::Delta | Current::Both, Some((k, _))) = (self.current, self.delta) {
                self.delta = self.delta_range(Bound::Excluded(k), Bound::Unbounded, true);
            }
        }
        self.settle(true);
    }

    /// Moves backward (only while valid).
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.forward {
            let k = self.key().to_vec();
            self.base.seek_for_prev(&k);
            if self.base.valid() && self.base.key() == k.as_slice() {
                self.base.prev();
            }
            self.delta = self.delta_range(Bound::Unbounded, Bound::Excluded(&k), false);
        } else {
            if matches!(self.current, Current::Base | Current::Both) {
                self.base.prev();
            }
            if let (Current::Delta | Current::Both, Some((k, _))) = (self.current, self.delta) {
                self.delta = self.delta_range(Bound::Unbounded, Bound::Excluded(k), false);
            }
        }
        self.settle(false);
    }

    /// The delta's first (`first`) or last entry within `(lo, hi)` and the read bounds.
    fn delta_range(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        first: bool,
    ) -> Option<(&'a [u8], IndexedWrite<'a>)> {
        let wb: &'a WriteBatchWithIndex = self.wb;
        let lo = tighter(lo, self.lower.as_deref().map(Bound::Included), true);
        let hi = tighter(hi, self.upper.as_deref().map(Bound::Excluded), false);
        if is_empty(lo, hi) {
            return None;
        }
        let mut r = wb.range(lo, hi);
        if first {
            r.next()
        } else {
            r.next_back()
        }
    }

    /// Makes the current entry the nearest of the two sides in the direction of travel,
    /// skipping what the delta deletes.
    fn settle(&mut self, forward: bool) {
        self.forward = forward;
        loop {
            let Some((dk, dw)) = self.delta else {
                self.current = if self.base.valid() { Current::Base } else { Current::None };
                return;
            };
            let order = self.base.valid().then(|| dk.cmp(self.base.key()));
            let delta_first = match order {
                None => true,
                Some(o) => o == Ordering::Equal || (o == Ordering::Less) == forward,
            };
            if !delta_first {
                self.current = Current::Base;
                return;
            }
            let both = order == Some(Ordering::Equal);
            if dw == IndexedWrite::Deleted {
                if both {
                    if forward {
                        self.base.next();
                    } else {
                        self.base.prev();
                    }
                }
                self.delta = if forward {
                    self.delta_range(Bound::Excluded(dk), Bound::Unbounded, true)
                } else {
                    self.delta_range(Bound::Unbounded, Bound::Excluded(dk), false)
                };
                continue;
            }
            self.current = if both { Current::Both } else { Current::Delta };
            return;
        }
    }
}

/// The tighter of two lower (`lower`) or upper bounds.
fn tighter<'b>(a: Bound<&'b [u8]>, b: Option<Bound<&'b [u8]>>, lower: bool) -> Bound<&'b [u8]> {
    let Some(b) = b else { return a };
    let key = |x: &Bound<&'b [u8]>| match x {
        Bound::Included(k) | Bound::Excluded(k) => Some(*k),
        Bound::Unbounded => None,
    };
    match (key(&a), key(&b)) {
        (None, _) => b,
        (_, None) => a,
        (Some(ka), Some(kb)) => match ka.cmp(kb) {
            Ordering::Equal => {
                if matches!(a, Bound::Excluded(_)) {
                    a
                } else {
                    b
                }
            }
            Ordering::Less => {
                if lower {
                    b
                } else {
                    a
                }
            }
            Ordering::Greater => {
                if lower {
                    a
                } else {
                    b
                }
            }
        },
    }
}

/// True if no key lies within `(lo, hi)` (a `BTreeMap::range` over it would panic).
fn is_empty(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a), Bound::Excluded(b)) | (Bound::Excluded(a), Bound::Included(b)) => {
            a >= b
        }
        (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}
