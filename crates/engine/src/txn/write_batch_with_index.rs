//! [`WriteBatchWithIndex`]: a [`WriteBatch`] plus an ordered index of its keys, so its writer
//! can read its own writes (RocksDB's `WriteBatchWithIndex` with `overwrite_key`).
//!
//! The batch keeps every operation in order (it is what a commit writes, one WAL record); the
//! index keeps the last operation of each key: its value, or that it was deleted. Savepoints
//! mark where the batch ended; rolling back truncates the batch and rebuilds the index from it.
//! Range deletions are not offered (as in RocksDB's transactions).
//!
//! Owned by one [`crate::Transaction`] (or a caller using it alone); no locks.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::batch::{check_entry_size, BatchOp, WriteBatch};
use crate::error::{Error, Result};

/// What the index says about a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexedWrite<'a> {
    /// The batch puts this value last.
    Put(&'a [u8]),
    /// The batch deletes the key last.
    Deleted,
}

/// A write batch that can be read back by key, in key order, and rolled back to savepoints.
///
/// ```
/// use talus::txn::{IndexedWrite, WriteBatchWithIndex};
/// let mut wb = WriteBatchWithIndex::new();
/// wb.put(b"a", b"1").unwrap();
/// wb.set_savepoint();
/// wb.delete(b"a").unwrap();
/// assert_eq!(wb.get(b"a"), Some(IndexedWrite::Deleted));
/// wb.rollback_to_savepoint().unwrap();
/// assert_eq!(wb.get(b"a"), Some(IndexedWrite::Put(b"1")));
/// assert_eq!(wb.batch().count(), 1);
/// ```
#[derive(Default, Debug, Clone)]
pub struct WriteBatchWithIndex {
    batch: WriteBatch,
    /// The last write of each key: `Some(value)` a put, `None` a delete.
    index: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    savepoints: Vec<(usize, u32)>,
}

impl WriteBatchWithIndex {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put of `key`; a key or value too large for the format is refused
    /// ([`Error::InvalidArgument`]) and nothing is added.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        check_entry_size(key.len(), value.len())?;
        self.batch.put(key, value);
        self.batch.status()?;
        match self.index.get_mut(key) {
            Some(slot) => match slot {
                Some(v) => {
                    v.clear();
                    v.extend_from_slice(value);
                }
                None => *slot = Some(value.to_vec()),
            },
            None => {
                self.index.insert(key.to_vec(), Some(value.to_vec()));
            }
        }
        Ok(())
    }

    /// Adds a delete of `key` (refused as [`WriteBatchWithIndex::put`] refuses).
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        check_entry_size(key.len(), 0)?;
        self.batch.delete(key);
        self.batch.status()?;
        match self.index.get_mut(key) {
            Some(slot) => *slot = None,
            None => {
                self.index.insert(key.to_vec(), None);
            }
        }
        Ok(())
    }

    /// The batch's last write of `key`, if it has one.
    pub fn get(&self, key: &[u8]) -> Option<IndexedWrite<'_>> {
        self.index.get(key).map(|w| match w {
            Some(v) => IndexedWrite::Put(v),
            None => IndexedWrite::Deleted,
        })
    }

    /// The keys written, each with its last write, in key order within `(lower, upper)`.
    /// Panics as `BTreeMap::range` does if `lower` is after `upper` (or both exclude the same
    /// key).
    pub fn range<'a>(
        &'a self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = (&'a [u8], IndexedWrite<'a>)> + 'a {
        self.index.range::<[u8], _>((lower, upper)).map(|(k, w)| {
            let w = match w {
                Some(v) => IndexedWrite::Put(v),
                None => IndexedWrite::Deleted,
            };
            (k.as_slice(), w)
        })
    }

    /// The batch (every operation, in order).
    pub fn batch(&self) -> &WriteBatch {
        &self.batch
    }

    /// Takes the batch out, leaving this one empty (savepoints dropped).
    pub fn take_batch(&mut self) -> WriteBatch {
        self.index.clear();
        self.savepoints.clear();
        std::mem::take(&mut self.batch)
    }

    /// Number of keys written.
    pub fn num_keys(&self) -> usize {
        self.index.len()
    }

    /// True if nothing was written.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Marks the current end of the batch.
    pub fn set_savepoint(&mut self) {
        self.savepoints.push(self.batch.mark());
    }

    /// Drops every write after the last savepoint, and that savepoint; [`Error::NotFound`] if
    /// there is none.
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        let mark = self.savepoints.pop().ok_or_else(no_savepoint)?;
        self.batch.truncate_to(mark);
        self.index.clear();
        for op in self.batch.iter() {
            match op {
                BatchOp::Put(k, v) => {
                    self.index.insert(k.to_vec(), Some(v.to_vec()));
                }
                BatchOp::Delete(k) => {
                    self.index.insert(k.to_vec(), None);
                }
                // A transaction's batch holds puts and deletes only (a `Transaction` has no
                // merge or range deletion; docs/rocksdb-differences.md).
                BatchOp::DeleteRange(..) | BatchOp::Merge(..) => {}
            }
        }
        Ok(())
    }

    /// Forgets the last savepoint, keeping the writes; [`Error::NotFound`] if there is none.
    pub fn pop_savepoint(&mut self) -> Result<()> {
        self.savepoints.pop().map(|_| ()).ok_or_else(no_savepoint)
    }
}

fn no_savepoint() -> Error {
    Error::NotFound("no savepoint is set".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_write_wins_and_batch_keeps_all() {
        let mut wb = WriteBatchWithIndex::new();
        wb.put(b"k", b"1").unwrap();
        wb.delete(b"k").unwrap();
        wb.put(b"k", b"2").unwrap();
        wb.delete(b"j").unwrap();
        assert_eq!(wb.get(b"k"), Some(IndexedWrite::Put(b"2")));
        assert_eq!(wb.get(b"j"), Some(IndexedWrite::Deleted));
        assert_eq!(wb.get(b"x"), None);
        assert_eq!(wb.batch().count(), 4);
        assert_eq!(wb.num_keys(), 2);
        let keys: Vec<_> = wb.range(Bound::Unbounded, Bound::Unbounded).map(|(k, _)| k).collect();
        assert_eq!(keys, [&b"j"[..], b"k"]);
        let rev: Vec<_> =
            wb.range(Bound::Excluded(b"j"), Bound::Unbounded).rev().map(|(k, _)| k).collect();
        assert_eq!(rev, [&b"k"[..]]);
    }

    #[test]
    fn nested_savepoints() {
        let mut wb = WriteBatchWithIndex::new();
        assert!(matches!(wb.rollback_to_savepoint(), Err(Error::NotFound(_))));
        wb.put(b"a", b"1").unwrap();
        wb.set_savepoint();
        wb.put(b"a", b"2").unwrap();
        wb.set_savepoint();
        wb.delete(b"b").unwrap();
        wb.rollback_to_savepoint().unwrap();
        assert_eq!(wb.get(b"b"), None);
        assert_eq!(wb.get(b"a"), Some(IndexedWrite::Put(b"2")));
        wb.rollback_to_savepoint().unwrap();
        assert_eq!(wb.get(b"a"), Some(IndexedWrite::Put(b"1")));
        assert_eq!(wb.batch().count(), 1);
        wb.set_savepoint();
        wb.pop_savepoint().unwrap();
        assert!(wb.pop_savepoint().is_err());
        // A savepoint set on an empty batch rolls back to empty.
        let mut e = WriteBatchWithIndex::new();
        e.set_savepoint();
        e.put(b"x", b"y").unwrap();
        e.rollback_to_savepoint().unwrap();
        assert!(e.is_empty());
        assert_eq!(e.get(b"x"), None);
    }

    #[test]
    fn take_batch_empties() {
        let mut wb = WriteBatchWithIndex::new();
        wb.put(b"a", b"1").unwrap();
        let b = wb.take_batch();
        assert_eq!(b.count(), 1);
        assert!(wb.is_empty());
        assert_eq!(wb.get(b"a"), None);
    }
}
