//! The memtable: an in-memory sorted map of internal keys, written by one thread at a time (the
//! write-group leader) and read concurrently by any number of readers without locks.
//!
//! STUB: interface fixed by the skeleton; the implementation (arena + skiplist) lands separately.

use std::sync::Arc;

use crate::iter::range_del::RangeTombstone;
use crate::iter::InternalIterator;
use crate::key::{SequenceNumber, ValueKind};

/// A memtable.
pub struct MemTable {}

impl Default for MemTable {
    fn default() -> Self {
        Self::new()
    }
}

impl MemTable {
    /// An empty memtable.
    pub fn new() -> Self {
        todo!()
    }

    /// Inserts an entry. Callers serialize `add` (one writer at a time); readers may run
    /// concurrently. For `RangeDelete`, `key` is the start and `value` the exclusive end.
    pub fn add(&self, seq: SequenceNumber, kind: ValueKind, key: &[u8], value: &[u8]) {
        let _ = (seq, kind, key, value);
        todo!()
    }

    /// The newest point entry of `user_key` with sequence `<= seq`: `(kind, seq, value)`.
    /// Range tombstones are not consulted here (see [`MemTable::range_tombstones`]).
    pub fn get(&self, user_key: &[u8], seq: SequenceNumber) -> Option<(ValueKind, SequenceNumber, &[u8])> {
        let _ = (user_key, seq);
        todo!()
    }

    /// An iterator over the point entries (puts and deletes), holding the memtable alive.
    pub fn iter(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        todo!()
    }

    /// Every range tombstone added, in insertion order.
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        todo!()
    }

    /// True if any range tombstone was added (cheap: one atomic load).
    pub fn has_range_tombstones(&self) -> bool {
        todo!()
    }

    /// Bytes used, including the arena and index overhead.
    pub fn approximate_memory_usage(&self) -> usize {
        todo!()
    }

    /// Entries added (all kinds).
    pub fn num_entries(&self) -> u64 {
        todo!()
    }

    /// Point and range deletions added.
    pub fn num_deletes(&self) -> u64 {
        todo!()
    }

    /// True if nothing was added.
    pub fn is_empty(&self) -> bool {
        self.num_entries() == 0
    }
}
