//! Iterators over internal keys, and the user-facing database iterator built from them.
//!
//! Every source of entries (memtable, SST file, level of files) implements
//! [`InternalIterator`]; [`merging::MergingIterator`] merges them in internal-key order;
//! [`db_iter::DbIterator`] turns the merged stream into user keys visible at a sequence number,
//! honouring point and range tombstones and the read bounds.

use crate::error::Result;

pub mod db_iter;
pub mod merging;
pub mod range_del;

/// A cursor over entries ordered by internal key (see [`crate::key::compare_internal`]).
///
/// Positioning calls never fail directly: an IO or corruption error makes the iterator invalid,
/// and [`InternalIterator::status`] reports it. `key` and `value` may only be called while
/// `valid()`; the slices stay good until the next positioning call.
pub trait InternalIterator: Send {
    /// True if positioned at an entry.
    fn valid(&self) -> bool;
    /// Positions at the first entry.
    fn seek_to_first(&mut self);
    /// Positions at the last entry.
    fn seek_to_last(&mut self);
    /// Positions at the first entry with internal key `>= target`.
    fn seek(&mut self, target: &[u8]);
    /// Positions at the last entry with internal key `<= target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry.
    fn next(&mut self);
    /// Moves to the previous entry.
    fn prev(&mut self);
    /// The current internal key.
    fn key(&self) -> &[u8];
    /// The current value.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// Reads the values of `BlobIndex` entries (implemented by `blob::reader::BlobSource`; a trait
/// here so that the iterators need not know the blob files).
pub trait BlobValues: Send + Sync {
    /// The value the encoded blob index `index` of user key `key` points to.
    fn blob_value(&self, key: &[u8], index: &[u8]) -> Result<Vec<u8>>;
}

/// An iterator over nothing (or over an error).
#[derive(Default)]
pub struct EmptyIterator {
    err: Option<crate::error::Error>,
}

impl EmptyIterator {
    /// An empty iterator whose status is `err`.
    pub fn with_error(err: crate::error::Error) -> Self {
        EmptyIterator { err: Some(err) }
    }
}

impl InternalIterator for EmptyIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn seek_for_prev(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}

/// A sorted in-memory vector of `(internal key, value)` entries as an [`InternalIterator`]:
/// the reference implementation the other iterators are tested against.
pub struct VecIterator {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: usize,
}

impl VecIterator {
    /// Sorts `entries` by internal key and iterates them.
    pub fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        entries.sort_by(|a, b| crate::key::compare_internal(&a.0, &b.0));
        let pos = entries.len();
        VecIterator { entries, pos }
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.pos = 0;
    }
    fn seek_to_last(&mut self) {
        self.pos = if self.entries.is_empty() { 0 } else { self.entries.len() - 1 };
    }
    fn seek(&mut self, target: &[u8]) {
        self.pos = self.entries.partition_point(|e| {
            crate::key::compare_internal(&e.0, target) == std::cmp::Ordering::Less
        });
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let n = self.entries.partition_point(|e| {
            crate::key::compare_internal(&e.0, target) != std::cmp::Ordering::Greater
        });
        self.pos = if n == 0 { self.entries.len() } else { n - 1 };
    }
    fn next(&mut self) {
        if self.valid() {
            self.pos += 1;
        }
    }
    fn prev(&mut self) {
        if self.pos == 0 {
            self.pos = self.entries.len();
        } else if self.valid() {
            self.pos -= 1;
        }
    }
    fn key(&self) -> &[u8] {
        self.entries.get(self.pos).map_or(&[], |e| &e.0)
    }
    fn value(&self) -> &[u8] {
        self.entries.get(self.pos).map_or(&[], |e| &e.1)
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// A test child that fails for good (turns invalid, with a corruption status) on its move after
/// `ok_moves` successful ones (seeks count as moves): the one failing-iterator helper of the
/// iterator tests.
#[cfg(test)]
pub(crate) struct FailAfter {
    inner: VecIterator,
    ok_moves: usize,
    failed: bool,
}

#[cfg(test)]
impl FailAfter {
    /// Wraps `inner`; the first `ok_moves` moves succeed.
    pub(crate) fn new(inner: VecIterator, ok_moves: usize) -> FailAfter {
        FailAfter { inner, ok_moves, failed: false }
    }

    fn step(&mut self) {
        match self.ok_moves.checked_sub(1) {
            Some(left) => self.ok_moves = left,
            None => self.failed = true,
        }
    }
}

#[cfg(test)]
impl InternalIterator for FailAfter {
    fn valid(&self) -> bool {
        !self.failed && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.step();
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.step();
        self.inner.seek_to_last()
    }
    fn seek(&mut self, t: &[u8]) {
        self.step();
        self.inner.seek(t)
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        self.step();
        self.inner.seek_for_prev(t)
    }
    fn next(&mut self) {
        self.step();
        self.inner.next()
    }
    fn prev(&mut self) {
        self.step();
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        if self.failed {
            Err(crate::error::Error::corruption("000007.sst", 42, "bad block"))
        } else {
            Ok(())
        }
    }
}
