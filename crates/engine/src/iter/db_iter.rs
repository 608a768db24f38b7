//! The user-facing cursor: from a merged stream of internal entries to the user keys visible at a
//! sequence number, with point and range tombstones applied and bounds honoured, both directions.
//!
//! STUB: interface fixed by the skeleton.

use std::sync::Arc;

use super::range_del::FragmentedTombstones;
use super::InternalIterator;
use crate::error::Result;
use crate::key::SequenceNumber;

/// A cursor over user keys.
pub struct DbIterator {}

impl DbIterator {
    /// Wraps `inner` (all sources merged), reading as of `read_seq`; `tombstones` holds every
    /// range tombstone of every source; `lower`/`upper` bound the user keys (upper exclusive).
    pub fn new(
        inner: Box<dyn InternalIterator>,
        read_seq: SequenceNumber,
        tombstones: Arc<FragmentedTombstones>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        let _ = (inner, read_seq, tombstones, lower, upper);
        todo!()
    }

    /// True if positioned at a visible entry.
    pub fn valid(&self) -> bool {
        todo!()
    }
    /// Positions at the first visible key (at or after the lower bound).
    pub fn seek_to_first(&mut self) {
        todo!()
    }
    /// Positions at the last visible key (before the upper bound).
    pub fn seek_to_last(&mut self) {
        todo!()
    }
    /// Positions at the first visible key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        let _ = key;
        todo!()
    }
    /// Positions at the last visible key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        let _ = key;
        todo!()
    }
    /// Moves to the next visible key.
    pub fn next(&mut self) {
        todo!()
    }
    /// Moves to the previous visible key.
    pub fn prev(&mut self) {
        todo!()
    }
    /// The current user key.
    pub fn key(&self) -> &[u8] {
        todo!()
    }
    /// The current value.
    pub fn value(&self) -> &[u8] {
        todo!()
    }
    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        todo!()
    }
}
