//! The public iterators: [`RawIter`] (a RocksDB-style cursor), [`Iter`] (`(Vec<u8>, Vec<u8>)`
//! pairs, both ends) and [`RangeIter`] (what `Db::range` and `Db::prefix` return: [`KeyValue`]
//! items, one allocation each, both ends).
//!
//! Who calls: `Db::raw_iter`, `Db::iter`, `Db::range`, `Db::prefix`. Each holds the
//! SuperVersion it reads (its memtables and files stay alive), the snapshot it was given, and
//! the database. Locks: none.
//!
//! Both ends of a double-ended iterator share one cursor: each end remembers the last key it
//! returned (in a buffer reused from item to item), and moving to the other end re-seeks
//! there; the ends stop where they meet.

use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use super::core::{DbInner, SuperVersion};
use super::snapshot::Snapshot;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIterator;

/// A cursor over the database, RocksDB-style: position with `seek*`, move with `next`/`prev`,
/// read `key`/`value` while `valid()`, check `status()` when it turns invalid.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// let mut it = db.raw_iter(&talus::ReadOptions::default());
/// it.seek(b"b");
/// assert!(it.valid());
/// assert_eq!((it.key(), it.value()), (&b"b"[..], &b"2"[..]));
/// it.prev();
/// assert_eq!(it.key(), b"a");
/// it.status().unwrap();
/// ```
pub struct RawIter {
    it: DbIterator,
    _sv: Arc<SuperVersion>,
    _snapshot: Option<Snapshot>,
    _db: Arc<DbInner>,
    /// Why the iterator was refused (a snapshot of another database): it never positions and
    /// `status()` returns this as [`Error::InvalidArgument`].
    refused: Option<String>,
}

impl RawIter {
    pub(crate) fn new(
        it: DbIterator,
        sv: Arc<SuperVersion>,
        snapshot: Option<Snapshot>,
        db: Arc<DbInner>,
        refused: Option<String>,
    ) -> RawIter {
        RawIter { it, _sv: sv, _snapshot: snapshot, _db: db, refused }
    }

    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        self.it.valid()
    }
    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        if self.refused.is_some() {
            return;
        }
        self.it.seek_to_first()
    }
    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        if self.refused.is_some() {
            return;
        }
        self.it.seek_to_last()
    }
    /// Positions at the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        if self.refused.is_some() {
            return;
        }
        self.it.seek(key)
    }
    /// Positions at the last key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        if self.refused.is_some() {
            return;
        }
        self.it.seek_for_prev(key)
    }
    /// Moves forward.
    pub fn next(&mut self) {
        self.it.next()
    }
    /// Moves backward.
    pub fn prev(&mut self) {
        self.it.prev()
    }
    /// The current key.
    pub fn key(&self) -> &[u8] {
        self.it.key()
    }
    /// The current value.
    pub fn value(&self) -> &[u8] {
        self.it.value()
    }
    /// The current entry's encoded blob index (decode it with
    /// [`crate::blob::format::BlobIndex::decode`]) when its value lives in a blob file, without
    /// reading the value; `None` for a value stored in the table or memtable.
    pub fn blob_index(&self) -> Option<&[u8]> {
        self.it.blob_index()
    }
    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        if let Some(why) = &self.refused {
            return Err(Error::InvalidArgument(why.clone()));
        }
        self.it.status()
    }
}

/// Which end the cursor was last moved for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

/// The double-ended walk over a [`RawIter`]: positions the cursor on the next entry of either
/// end, or reports the end (or an error).
struct Walk {
    raw: RawIter,
    at: Option<End>,
    done: bool,
    /// The last key returned at each end (buffers reused across items).
    front: Vec<u8>,
    back: Vec<u8>,
    front_set: bool,
    back_set: bool,
}

impl Walk {
    fn new(raw: RawIter) -> Walk {
        Walk {
            raw,
            at: None,
            done: false,
            front: Vec::new(),
            back: Vec::new(),
            front_set: false,
            back_set: false,
        }
    }

    /// Moves to the next entry of `end`: `Some(Ok(()))` with the cursor on it, `Some(Err)`,
    /// or `None` at the end (or where the two ends met).
    fn step(&mut self, end: End) -> Option<Result<()>> {
        if self.done {
            return None;
        }
        let (mine, mine_set) = match end {
            End::Front => (&self.front, self.front_set),
            End::Back => (&self.back, self.back_set),
        };
        if self.at == Some(end) {
            match end {
                End::Front => self.raw.next(),
                End::Back => self.raw.prev(),
            }
        } else if !mine_set {
            match end {
                End::Front => self.raw.seek_to_first(),
                End::Back => self.raw.seek_to_last(),
            }
        } else {
            // The cursor was moved for the other end: back to just past our last key.
            match end {
                End::Front => self.raw.seek(mine),
                End::Back => self.raw.seek_for_prev(mine),
            }
            if self.raw.valid() && self.raw.key() == mine.as_slice() {
                match end {
                    End::Front => self.raw.next(),
                    End::Back => self.raw.prev(),
                }
            }
        }
        self.at = Some(end);
        if !self.raw.valid() {
            self.done = true;
            return self.raw.status().err().map(Err);
        }
        let k = self.raw.key();
        let crossed = match end {
            End::Front => self.back_set && k >= self.back.as_slice(),
            End::Back => self.front_set && k <= self.front.as_slice(),
        };
        if crossed {
            self.done = true;
            return None;
        }
        let (buf, set) = match end {
            End::Front => (&mut self.front, &mut self.front_set),
            End::Back => (&mut self.back, &mut self.back_set),
        };
        buf.clear();
        buf.extend_from_slice(k);
        *set = true;
        Some(Ok(()))
    }

    /// After a value was read: a value that could not be read (from a blob file) ends the walk
    /// with the error, never an empty value.
    fn value_read(&mut self) -> Result<()> {
        let r = self.raw.status();
        if r.is_err() {
            self.done = true;
        }
        r
    }
}

/// An owning iterator over `(key, value)` pairs: `next` walks forward from the first key,
/// `next_back` backward from the last; the two ends never cross.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// let mut it = db.iter(&talus::ReadOptions::default());
/// assert_eq!(it.next().unwrap().unwrap(), (b"a".to_vec(), b"1".to_vec()));
/// assert_eq!(it.next_back().unwrap().unwrap(), (b"b".to_vec(), b"2".to_vec()));
/// assert!(it.next().is_none());
/// ```
pub struct Iter {
    walk: Walk,
}

impl Iter {
    pub(crate) fn new(raw: RawIter) -> Iter {
        Iter { walk: Walk::new(raw) }
    }

    fn item(&mut self, end: End) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        match self.walk.step(end)? {
            Ok(()) => {
                let kv = (self.walk.raw.key().to_vec(), self.walk.raw.value().to_vec());
                Some(self.walk.value_read().map(|()| kv))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

impl Iterator for Iter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.item(End::Front)
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.item(End::Back)
    }
}

/// A key and its value in one allocation: an item of [`RangeIter`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyValue {
    buf: Box<[u8]>,
    key_len: usize,
}

impl KeyValue {
    fn new(key: &[u8], value: &[u8]) -> KeyValue {
        let mut buf = Vec::with_capacity(key.len() + value.len());
        buf.extend_from_slice(key);
        buf.extend_from_slice(value);
        KeyValue { buf: buf.into_boxed_slice(), key_len: key.len() }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        self.buf.get(..self.key_len).unwrap_or(&[])
    }

    /// The value.
    pub fn value(&self) -> &[u8] {
        self.buf.get(self.key_len..).unwrap_or(&[])
    }
}

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("KeyValue").field(&self.key()).field(&self.value()).finish()
    }
}

/// The entries of a key range ([`crate::Db::range`]) or a prefix ([`crate::Db::prefix`]), in
/// key order from the front and in reverse from the back; each item is one allocation.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
/// for k in [&b"a"[..], b"b", b"c"] {
///     db.put(k, b"v").unwrap();
/// }
/// let mut r = db.range(&b"a"[..]..=&b"b"[..]);
/// assert_eq!(r.next_back().unwrap().unwrap().key(), b"b");
/// assert_eq!(r.next().unwrap().unwrap().key(), b"a");
/// assert!(r.next().is_none());
/// ```
pub struct RangeIter {
    walk: Walk,
}

impl RangeIter {
    pub(crate) fn new(raw: RawIter) -> RangeIter {
        RangeIter { walk: Walk::new(raw) }
    }

    fn item(&mut self, end: End) -> Option<Result<KeyValue>> {
        match self.walk.step(end)? {
            Ok(()) => {
                let kv = KeyValue::new(self.walk.raw.key(), self.walk.raw.value());
                Some(self.walk.value_read().map(|()| kv))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

impl Iterator for RangeIter {
    type Item = Result<KeyValue>;
    fn next(&mut self) -> Option<Self::Item> {
        self.item(End::Front)
    }
}

impl DoubleEndedIterator for RangeIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.item(End::Back)
    }
}

/// The iterator bounds (`[lower, upper)`, RocksDB's `iterate_lower_bound`/`_upper_bound`) of
/// a range of byte-string keys: an excluded start or an included end becomes the next key up
/// (`key ++ [0]`, the smallest key after it).
pub(crate) fn bounds_of(
    start: Bound<&[u8]>,
    end: Bound<&[u8]>,
) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let after = |k: &[u8]| {
        let mut v = Vec::with_capacity(k.len() + 1);
        v.extend_from_slice(k);
        v.push(0);
        v
    };
    let lower = match start {
        Bound::Included(k) => Some(k.to_vec()),
        Bound::Excluded(k) => Some(after(k)),
        Bound::Unbounded => None,
    };
    let upper = match end {
        Bound::Included(k) => Some(after(k)),
        Bound::Excluded(k) => Some(k.to_vec()),
        Bound::Unbounded => None,
    };
    (lower, upper)
}

/// The smallest key greater than every key starting with `prefix` (`None`: there is none,
/// the prefix is all `0xff` bytes or empty).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut end = prefix.get(..=keep)?.to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn range_bounds() {
        use Bound::*;
        assert_eq!(
            bounds_of(Included(b"a"), Excluded(b"c")),
            (Some(b"a".to_vec()), Some(b"c".to_vec()))
        );
        assert_eq!(
            bounds_of(Excluded(b"a"), Included(b"c")),
            (Some(b"a\0".to_vec()), Some(b"c\0".to_vec()))
        );
        assert_eq!(bounds_of(Unbounded, Unbounded), (None, None));
    }
}
