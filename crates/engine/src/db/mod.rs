//! The database: open and recovery, the write path, the read path, background jobs.
//!
//! STUB: public surface fixed by the skeleton.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::error::Result;
use crate::key::SequenceNumber;
use crate::options::{Options, ReadOptions, WriteOptions};

/// A database handle. Cheap to clone; the database closes when the last handle is dropped.
#[derive(Clone)]
pub struct Db {
    _inner: Arc<()>,
}

/// A consistent read view; released when the last clone is dropped.
#[derive(Clone)]
pub struct Snapshot {
    seq: SequenceNumber,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.seq
    }
}

/// An owning iterator over `(key, value)` pairs, forward or (with `next_back`) backward.
pub struct Iter {}

impl Iterator for Iter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        todo!()
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        todo!()
    }
}

/// A cursor over the database, RocksDB-style: position with `seek*`, move with `next`/`prev`.
pub struct RawIter {}

impl RawIter {
    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        todo!()
    }
    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        todo!()
    }
    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        todo!()
    }
    /// Positions at the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        let _ = key;
        todo!()
    }
    /// Positions at the last key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        let _ = key;
        todo!()
    }
    /// Moves forward.
    pub fn next(&mut self) {
        todo!()
    }
    /// Moves backward.
    pub fn prev(&mut self) {
        todo!()
    }
    /// The current key.
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

impl Db {
    /// Opens (or with `create_if_missing`, creates) the database in `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let _ = (path, options);
        todo!()
    }
    /// Sets `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b, &WriteOptions::default())
    }
    /// Deletes `key`.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b, &WriteOptions::default())
    }
    /// Deletes every key in `range` (`begin..end`, end exclusive).
    pub fn delete_range<K: AsRef<[u8]>>(&self, range: Range<K>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(range.start, range.end);
        self.write(b, &WriteOptions::default())
    }
    /// Applies a batch atomically.
    pub fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        let _ = (batch, opts);
        todo!()
    }
    /// The value of `key`, if any.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }
    /// The value of `key` under `opts` (snapshot, cache policy).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, opts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let _ = (key, opts);
        todo!()
    }
    /// The values of several keys, read from one consistent view.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let _ = (keys, opts);
        todo!()
    }
    /// A snapshot of the current state.
    pub fn snapshot(&self) -> Snapshot {
        todo!()
    }
    /// An owning iterator.
    pub fn iter(&self, opts: &ReadOptions) -> Iter {
        let _ = opts;
        todo!()
    }
    /// A raw cursor (not positioned: call a `seek*` first).
    pub fn raw_iter(&self, opts: &ReadOptions) -> RawIter {
        let _ = opts;
        todo!()
    }
    /// Flushes the memtable to an SST file and waits for it.
    pub fn flush(&self) -> Result<()> {
        todo!()
    }
    /// Compacts every file overlapping `[begin, end]` (`None`: unbounded) to the last level.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let _ = (begin, end);
        todo!()
    }
    /// A named property (`talus.stats`, `talus.num-files-at-level<N>`, …).
    pub fn property(&self, name: &str) -> Option<String> {
        let _ = name;
        todo!()
    }
}
