//! The keys a transaction tracks: read for update or written. For each, the sequence number
//! its conflict check starts from (an optimistic commit, a pessimistic lock under a snapshot),
//! whether it is held exclusively (pessimistic locks), and the savepoint depth at which it was
//! first tracked, so that rolling back a savepoint untracks (and unlocks) what came after.
//!
//! Owned by one [`crate::Transaction`]; no locks.

use std::collections::HashMap;

use crate::key::SequenceNumber;

/// One tracked key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrackedKey {
    /// Writes of the key after this sequence number conflict with the transaction.
    pub seq: SequenceNumber,
    /// Held exclusively (a write, or a `get_for_update` asking for it).
    pub exclusive: bool,
    /// Savepoints set when the key was first tracked.
    depth: usize,
}

/// The tracked keys of one transaction.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    keys: HashMap<Vec<u8>, TrackedKey>,
    depth: usize,
}

impl Tracker {
    /// What is tracked of `key`.
    pub fn get(&self, key: &[u8]) -> Option<TrackedKey> {
        self.keys.get(key).copied()
    }

    /// Tracks `key` from `seq` (an earlier sequence number already tracked is kept), exclusively
    /// if `exclusive` (an exclusive key stays exclusive).
    pub fn track(&mut self, key: &[u8], seq: SequenceNumber, exclusive: bool) {
        match self.keys.get_mut(key) {
            Some(t) => {
                t.seq = t.seq.min(seq);
                t.exclusive |= exclusive;
            }
            None => {
                self.keys.insert(key.to_vec(), TrackedKey { seq, exclusive, depth: self.depth });
            }
        }
    }

    /// Every tracked key with its state.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &TrackedKey)> {
        self.keys.iter().map(|(k, t)| (k.as_slice(), t))
    }

    /// Number of tracked keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// A savepoint is set.
    pub fn set_savepoint(&mut self) {
        self.depth += 1;
    }

    /// The last savepoint (there must be one) is rolled back: untracks the keys first tracked
    /// after it and returns them (a pessimistic transaction unlocks them).
    pub fn rollback_to_savepoint(&mut self) -> Vec<Vec<u8>> {
        let depth = self.depth;
        self.depth = depth.saturating_sub(1);
        let gone: Vec<Vec<u8>> =
            self.keys.iter().filter(|(_, t)| t.depth >= depth).map(|(k, _)| k.clone()).collect();
        for k in &gone {
            self.keys.remove(k);
        }
        gone
    }

    /// The last savepoint is forgotten: what was tracked after it now belongs to the one
    /// before.
    pub fn pop_savepoint(&mut self) {
        let depth = self.depth;
        self.depth = depth.saturating_sub(1);
        for t in self.keys.values_mut() {
            if t.depth >= depth {
                t.depth = self.depth;
            }
        }
    }

    /// Untracks everything.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.depth = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_earliest_sequence_and_exclusivity() {
        let mut t = Tracker::default();
        t.track(b"k", 10, false);
        t.track(b"k", 7, false);
        t.track(b"k", 12, true);
        assert_eq!(t.get(b"k").map(|k| (k.seq, k.exclusive)), Some((7, true)));
        t.track(b"k", 20, false);
        assert_eq!(t.get(b"k").map(|k| k.exclusive), Some(true));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn savepoints_untrack_what_came_after() {
        let mut t = Tracker::default();
        t.track(b"a", 1, true);
        t.set_savepoint();
        t.track(b"b", 2, true);
        t.track(b"a", 3, true);
        t.set_savepoint();
        t.track(b"c", 4, false);
        t.pop_savepoint();
        let mut gone = t.rollback_to_savepoint();
        gone.sort();
        assert_eq!(gone, [b"b".to_vec(), b"c".to_vec()]);
        assert!(t.get(b"a").is_some());
        assert_eq!(t.len(), 1);
        t.clear();
        assert_eq!(t.len(), 0);
    }
}
