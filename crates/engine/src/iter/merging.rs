//! Merges child iterators into one stream in internal-key order, in both directions.
//!
//! STUB: interface fixed by the skeleton.

use super::InternalIterator;
use crate::error::Result;

/// A k-way merge of [`InternalIterator`]s. When two children hold equal keys, the child with the
/// lower index comes first (children are passed newest first).
pub struct MergingIterator {}

impl MergingIterator {
    /// Merges `children` (newest source first).
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        let _ = children;
        todo!()
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        todo!()
    }
    fn seek_to_first(&mut self) {
        todo!()
    }
    fn seek_to_last(&mut self) {
        todo!()
    }
    fn seek(&mut self, _target: &[u8]) {
        todo!()
    }
    fn seek_for_prev(&mut self, _target: &[u8]) {
        todo!()
    }
    fn next(&mut self) {
        todo!()
    }
    fn prev(&mut self) {
        todo!()
    }
    fn key(&self) -> &[u8] {
        todo!()
    }
    fn value(&self) -> &[u8] {
        todo!()
    }
    fn status(&self) -> Result<()> {
        todo!()
    }
}
