//! Snapshots: registered sequence numbers that compaction must keep readable.
//!
//! A [`Snapshot`] registers its sequence number in the database's [`SnapshotList`] and
//! unregisters it when its last clone is dropped. Compaction asks the list for the live
//! sequence numbers before it decides which old versions it may drop. The list has its own small
//! mutex, never held across IO.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::key::SequenceNumber;

/// The live snapshots, as a multiset of sequence numbers.
#[derive(Default)]
pub(crate) struct SnapshotList {
    seqs: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotList {
    /// Registers a snapshot at the sequence `current()` returns, read under the list's lock:
    /// a compaction that read the list before this registration only holds entries at or below
    /// that sequence, so it cannot drop a version this snapshot needs.
    pub(crate) fn register_current(
        self: &Arc<Self>,
        current: impl FnOnce() -> SequenceNumber,
    ) -> Snapshot {
        let mut m = self.seqs.lock();
        let seq = current();
        *m.entry(seq).or_insert(0) += 1;
        drop(m);
        Snapshot { inner: Arc::new(SnapshotInner { seq, list: Arc::downgrade(self) }) }
    }

    #[cfg(test)]
    fn register(self: &Arc<Self>, seq: SequenceNumber) -> Snapshot {
        self.register_current(|| seq)
    }

    fn release(&self, seq: SequenceNumber) {
        let mut m = self.seqs.lock();
        if let Some(c) = m.get_mut(&seq) {
            *c -= 1;
            if *c == 0 {
                m.remove(&seq);
            }
        }
    }

    /// Live snapshot sequence numbers, ascending, without duplicates.
    pub(crate) fn sequences(&self) -> Vec<SequenceNumber> {
        self.seqs.lock().keys().copied().collect()
    }

    /// True if `snap` was taken from this list's database (a snapshot of another database
    /// reads at a sequence number that means nothing here).
    pub(crate) fn owns(&self, snap: &Snapshot) -> bool {
        std::ptr::eq(snap.inner.list.as_ptr(), self)
    }

    /// Number of live snapshots.
    pub(crate) fn count(&self) -> usize {
        self.seqs.lock().values().sum()
    }
}

struct SnapshotInner {
    seq: SequenceNumber,
    list: Weak<SnapshotList>,
}

impl Drop for SnapshotInner {
    fn drop(&mut self) {
        if let Some(list) = self.list.upgrade() {
            list.release(self.seq);
        }
    }
}

/// A consistent read view of the database; released when the last clone is dropped.
///
/// Pass it in [`crate::ReadOptions::snapshot`] to read the state as of the moment it was taken.
#[derive(Clone)]
pub struct Snapshot {
    inner: Arc<SnapshotInner>,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.inner.seq
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({})", self.inner.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_owns_its_own_snapshots_only() {
        let (a, b) = (Arc::new(SnapshotList::default()), Arc::new(SnapshotList::default()));
        let s = a.register(7);
        assert!(a.owns(&s));
        assert!(!b.owns(&s));
    }

    #[test]
    fn register_and_release() {
        let list = Arc::new(SnapshotList::default());
        let a = list.register(5);
        let b = a.clone();
        let c = list.register(3);
        assert_eq!(list.sequences(), vec![3, 5]);
        drop(a);
        assert_eq!(list.sequences(), vec![3, 5]);
        drop(b);
        assert_eq!(list.sequences(), vec![3]);
        drop(c);
        assert_eq!(list.count(), 0);
    }
}
