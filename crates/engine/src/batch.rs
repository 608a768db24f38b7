//! [`WriteBatch`]: an atomic group of writes, and its encoding (the WAL record payload).
//!
//! Layout (see `docs/format/wal.md`): `seq: fixed64 | count: fixed32 | record*` where a record is
//! `kind: u8 | key: varstring [| value: varstring]` (Put, Merge and RangeDelete carry a second
//! string: the value, the merge operand, or the exclusive end key). The header's sequence number is filled in by the write
//! path; record `i` gets sequence `seq + i`.
//!
//! Sizes: the format stores lengths in 32 bits (varint32 here, in SST blocks and in the
//! memtable's entry header), so a key, a value, or a key and value together that would not fit
//! are refused as RocksDB refuses them ("key is too large"): [`check_entry_size`]. `put`,
//! `delete` and `delete_range` keep their infallible signatures; a refused operation is not
//! added, the batch remembers the first refusal, and [`WriteBatch::status`] (checked by
//! `Db::write` before anything is written) returns it as `InvalidArgument`.

mod cf;

use crate::coding::{put_length_prefixed, put_varint32, varint_len, Decoder};
use crate::column_family::{ColumnFamily, DEFAULT_COLUMN_FAMILY_ID};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueKind};

/// Bytes of the batch header (sequence + count).
pub const HEADER_LEN: usize = 12;

/// The encoding of an empty batch.
static EMPTY_BATCH: [u8; HEADER_LEN] = [0; HEADER_LEN];

/// Largest key and value together (and so the largest key, and the largest value): the
/// memtable entry (two length varints of up to 5 bytes, the key, its 8-byte trailer, the value)
/// has a 32-bit length, as have keys and values in WAL records and SST blocks. 4 GiB - 19.
pub const MAX_ENTRY_LEN: usize = u32::MAX as usize - 18;

/// Refuses a key or value the format cannot store: `InvalidArgument` saying which is too large
/// and the limit. Every write (a batch operation, an [`crate::SstFileWriter`] entry) passes
/// here before a byte is copied, so a length is never truncated to 32 bits.
pub fn check_entry_size(key_len: usize, value_len: usize) -> Result<()> {
    match entry_size_problem(key_len, value_len) {
        Some(why) => Err(Error::InvalidArgument(why)),
        None => Ok(()),
    }
}

/// What is too large about an entry with these lengths, if anything.
fn entry_size_problem(key_len: usize, value_len: usize) -> Option<String> {
    if key_len > MAX_ENTRY_LEN {
        Some(format!("key is too large: {key_len} bytes (at most {MAX_ENTRY_LEN})"))
    } else if value_len > MAX_ENTRY_LEN {
        Some(format!("value is too large: {value_len} bytes (at most {MAX_ENTRY_LEN})"))
    } else if key_len.saturating_add(value_len) > MAX_ENTRY_LEN {
        Some(format!(
            "key and value are too large together: {key_len} + {value_len} bytes (at most \
             {MAX_ENTRY_LEN})"
        ))
    } else {
        None
    }
}

/// An ordered group of writes applied atomically.
#[derive(Clone)]
pub struct WriteBatch {
    /// Empty (no header yet) or `header ++ records`.
    rep: Vec<u8>,
    /// Why the first refused operation was refused (it was not added); `Db::write` returns it.
    /// Boxed so that a batch stays small to move (the write path moves it a few times).
    refused: Option<Box<Refusal>>,
    /// A merge operand was added (`Db::write` refuses it without a merge operator).
    has_merge: bool,
    /// The largest column family id of an operation (0: all in `default`).
    max_cf: u32,
    /// The database the family handles of the operations came from (`batch/cf.rs`).
    owner: cf::HandleOwner,
}

/// Why an operation was not added to a batch (boxed in the batch: one pointer when absent).
#[derive(Clone, Debug)]
struct Refusal(String);

impl PartialEq for WriteBatch {
    fn eq(&self, other: &Self) -> bool {
        self.data() == other.data()
    }
}

impl Eq for WriteBatch {}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WriteBatch({} ops, {} bytes)", self.count(), self.rep.len())
    }
}

/// One decoded operation of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put(&'a [u8], &'a [u8]),
    /// Delete `key`.
    Delete(&'a [u8]),
    /// Delete every key in `[begin, end)`.
    DeleteRange(&'a [u8], &'a [u8]),
    /// Merge the operand `value` into `key` (see [`crate::MergeOperator`]).
    Merge(&'a [u8], &'a [u8]),
}

impl WriteBatch {
    /// An empty batch (allocates nothing until the first operation).
    pub fn new() -> Self {
        WriteBatch {
            rep: Vec::new(),
            refused: None,
            has_merge: false,
            max_cf: 0,
            owner: cf::HandleOwner::NONE,
        }
    }

    /// An empty batch with room for `bytes` bytes of encoded operations.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER_LEN + bytes);
        rep.resize(HEADER_LEN, 0);
        WriteBatch { rep, refused: None, has_merge: false, max_cf: 0, owner: cf::HandleOwner::NONE }
    }

    /// `Ok` unless an operation was refused as too large (see [`check_entry_size`]); then
    /// `InvalidArgument` naming the first one. `Db::write` refuses such a batch whole.
    pub fn status(&self) -> Result<()> {
        match &self.refused {
            None => Ok(()),
            Some(r) => Err(Error::InvalidArgument(r.0.clone())),
        }
    }

    /// Appends a record of `kind` with strings `a` and `b` (one allocation at most), unless it
    /// is too large (then the refusal is remembered and nothing is added).
    fn begin_record(&mut self, kind: ValueKind, a: &[u8], b: Option<&[u8]>) {
        self.begin_cf_record(DEFAULT_COLUMN_FAMILY_ID, kind, a, b);
    }

    /// [`WriteBatch::begin_record`] in family `cf`: a family-tagged record unless `cf` is the
    /// default family (`batch/cf.rs`).
    fn begin_cf_record(&mut self, cf: u32, kind: ValueKind, a: &[u8], b: Option<&[u8]>) {
        let b_len = b.map_or(0, <[u8]>::len);
        let count = self.count();
        if a.len().saturating_add(b_len) > MAX_ENTRY_LEN || count == u32::MAX {
            self.refuse(a.len(), b_len);
            return;
        }
        let need = 1
            + if cf == DEFAULT_COLUMN_FAMILY_ID { 0 } else { varint_len(u64::from(cf)) }
            + varint_len(a.len() as u64)
            + a.len()
            + b.map_or(0, |b| varint_len(b.len() as u64) + b.len());
        if self.rep.len() < HEADER_LEN {
            self.rep.reserve_exact(HEADER_LEN + need);
            self.rep.resize(HEADER_LEN, 0);
        } else {
            self.rep.reserve(need);
        }
        if cf == DEFAULT_COLUMN_FAMILY_ID {
            self.rep.push(kind as u8);
        } else {
            self.rep.push(cf::cf_tag(kind));
            put_varint32(&mut self.rep, cf);
            self.max_cf = self.max_cf.max(cf);
        }
        put_length_prefixed(&mut self.rep, a);
        if let Some(b) = b {
            put_length_prefixed(&mut self.rep, b);
        }
        self.rep[8..12].copy_from_slice(&(count + 1).to_le_bytes());
    }

    /// Remembers why an operation with these lengths is not added (the first reason only).
    #[cold]
    fn refuse(&mut self, key_len: usize, value_len: usize) {
        if self.refused.is_some() {
            return;
        }
        let why = entry_size_problem(key_len, value_len)
            .unwrap_or_else(|| "a write batch holds at most 2^32 - 1 operations".into());
        self.refused = Some(Box::new(Refusal(why)));
    }

    /// Adds a put.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.begin_record(ValueKind::Put, key.as_ref(), Some(value.as_ref()));
    }

    /// Adds a merge operand for `key` (see [`crate::Db::merge`]; the database must have a
    /// merge operator).
    ///
    /// ```
    /// let mut b = talus::WriteBatch::new();
    /// b.merge(b"counter", 1u64.to_le_bytes());
    /// assert_eq!(b.count(), 1);
    /// ```
    pub fn merge(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.begin_record(ValueKind::Merge, key.as_ref(), Some(value.as_ref()));
        self.has_merge = true;
    }

    /// True if the batch holds a merge operand.
    pub fn has_merge(&self) -> bool {
        self.has_merge
    }

    /// Adds a point delete.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        self.begin_record(ValueKind::Delete, key.as_ref(), None);
    }

    /// Adds a range delete of `[begin, end)`; an empty range (`begin >= end`) is a no-op but
    /// still counts as an operation.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) {
        self.begin_record(ValueKind::RangeDelete, begin.as_ref(), Some(end.as_ref()));
    }

    /// Adds a put in family `cf` (RocksDB's `WriteBatch::Put(cf, ..)`); the batch stays atomic
    /// across families. `Db::write` refuses a batch holding a handle of another database
    /// (`InvalidArgument`), and one naming a dropped family.
    pub fn put_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.note_handle(cf);
        self.begin_cf_record(cf.id(), ValueKind::Put, key.as_ref(), Some(value.as_ref()));
    }

    /// Adds a point delete in family `cf`.
    pub fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) {
        self.note_handle(cf);
        self.begin_cf_record(cf.id(), ValueKind::Delete, key.as_ref(), None);
    }

    /// Adds a merge operand in family `cf` (the database must have a merge operator).
    pub fn merge_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.note_handle(cf);
        self.begin_cf_record(cf.id(), ValueKind::Merge, key.as_ref(), Some(value.as_ref()));
        self.has_merge = true;
    }

    /// Adds a range delete of `[begin, end)` in family `cf`.
    pub fn delete_range_cf(
        &mut self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) {
        self.note_handle(cf);
        self.begin_cf_record(cf.id(), ValueKind::RangeDelete, begin.as_ref(), Some(end.as_ref()));
    }

    /// The largest column family id among the operations (0 when every one is in `default`).
    pub fn max_column_family_id(&self) -> u32 {
        self.max_cf
    }

    /// Removes every operation (and a remembered refusal).
    pub fn clear(&mut self) {
        self.rep.clear();
        self.refused = None;
        self.has_merge = false;
        self.max_cf = 0;
        self.owner = cf::HandleOwner::NONE;
    }

    /// Where the batch ends now: pass it to [`WriteBatch::truncate_to`] to drop what is added
    /// after (a transaction's savepoint).
    pub(crate) fn mark(&self) -> (usize, u32) {
        (self.rep.len(), self.count())
    }

    /// Drops every operation added after `mark` was taken (from [`WriteBatch::mark`] of this
    /// batch, with nothing removed since).
    pub(crate) fn truncate_to(&mut self, mark: (usize, u32)) {
        let (len, count) = mark;
        if len < HEADER_LEN {
            self.rep.clear();
            return;
        }
        self.rep.truncate(len);
        self.rep[8..12].copy_from_slice(&count.to_le_bytes());
    }

    fn ensure_header(&mut self) {
        if self.rep.len() < HEADER_LEN {
            self.rep.resize(HEADER_LEN, 0);
        }
    }

    /// Number of operations.
    pub fn count(&self) -> u32 {
        crate::coding::decode_fixed32(self.rep.get(8..).unwrap_or(&[])).unwrap_or(0)
    }

    /// True if the batch holds no operations.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Encoded size in bytes (what the WAL record carries).
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len().max(HEADER_LEN)
    }

    /// The sequence number of the first operation (set by the write path).
    pub fn sequence(&self) -> SequenceNumber {
        crate::coding::decode_fixed64(&self.rep).unwrap_or(0)
    }

    /// Sets the sequence number of the first operation. The write path's (RocksDB keeps it in
    /// `WriteBatchInternal`): hidden from the docs, public only for tests that write WAL files
    /// by hand; a sequence set here is replaced when the batch is written.
    #[doc(hidden)]
    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.ensure_header();
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
    }

    /// The encoded bytes (RocksDB's `WriteBatch::Data`; format: `docs/format/wal.md`).
    pub fn data(&self) -> &[u8] {
        if self.rep.len() < HEADER_LEN {
            return &EMPTY_BATCH;
        }
        &self.rep
    }

    /// Appends `other`'s operations to this batch (and its refusal, if this batch has none).
    pub fn append(&mut self, other: &WriteBatch) {
        if self.refused.is_none() {
            self.refused.clone_from(&other.refused);
        }
        self.has_merge |= other.has_merge;
        self.max_cf = self.max_cf.max(other.max_cf);
        self.owner = self.owner.and(other.owner);
        self.ensure_header();
        let c = self.count().saturating_add(other.count());
        self.rep.extend_from_slice(other.rep.get(HEADER_LEN..).unwrap_or(&[]));
        self.rep[8..12].copy_from_slice(&c.to_le_bytes());
    }

    /// Rebuilds a batch from encoded bytes (RocksDB's `WriteBatch(rep)`), validating every
    /// record. `file`/`offset` name where
    /// the bytes came from, for the error.
    pub fn from_data(data: Vec<u8>, file: &str, offset: u64) -> Result<WriteBatch> {
        let mut b = WriteBatch {
            rep: data,
            refused: None,
            has_merge: false,
            max_cf: 0,
            owner: cf::HandleOwner::NONE,
        };
        let mut n = 0u32;
        let mut has_merge = false;
        let mut max_cf = 0;
        for item in b.iter_checked(file, offset)? {
            let (cf, op) = item?;
            has_merge |= matches!(op, BatchOp::Merge(..));
            max_cf = max_cf.max(cf);
            n += 1;
        }
        b.has_merge = has_merge;
        b.max_cf = max_cf;
        if n != b.count() {
            return Err(Error::corruption(
                file,
                offset,
                format!("write batch count {} but {} records", b.count(), n),
            ));
        }
        Ok(b)
    }

    /// Iterates the operations, assuming the batch is well formed (built by this type or
    /// validated by [`WriteBatch::from_data`]). Every family's operations, without their family:
    /// for a batch whose [`WriteBatch::max_column_family_id`] is 0, else see
    /// [`WriteBatch::iter_cf`].
    pub fn iter(&self) -> impl Iterator<Item = BatchOp<'_>> {
        self.iter_cf().map(|(_, op)| op)
    }

    /// Iterates the operations with their column family ids, assuming the batch is well formed.
    pub fn iter_cf(&self) -> impl Iterator<Item = (u32, BatchOp<'_>)> {
        BatchIter {
            d: Decoder::new(self.rep.get(HEADER_LEN..).unwrap_or(&[])),
            file: "",
            offset: 0,
        }
        .map_while(|r| r.ok())
    }

    fn iter_checked<'a>(
        &'a self,
        file: &'a str,
        offset: u64,
    ) -> Result<impl Iterator<Item = Result<(u32, BatchOp<'a>)>> + 'a> {
        if self.rep.len() < HEADER_LEN {
            return Err(Error::corruption(file, offset, "write batch shorter than its header"));
        }
        Ok(BatchIter { d: Decoder::new(&self.rep[HEADER_LEN..]), file, offset })
    }
}

struct BatchIter<'a> {
    d: Decoder<'a>,
    file: &'a str,
    offset: u64,
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<(u32, BatchOp<'a>)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.d.is_empty() {
            return None;
        }
        let bad = |what: &str| {
            Some(Err(Error::corruption(self.file, self.offset, format!("bad write batch: {what}"))))
        };
        let Some(tag) = self.d.u8() else { return bad("missing kind") };
        let (family, kind) = match cf::kind_of_cf_tag(tag) {
            Some(kind) => match self.d.varint32() {
                Some(id) => (id, Some(kind)),
                None => return bad("truncated column family id"),
            },
            None => (DEFAULT_COLUMN_FAMILY_ID, ValueKind::from_u8(tag)),
        };
        let Some(key) = self.d.length_prefixed() else { return bad("truncated key") };
        let op = match kind {
            Some(ValueKind::Put) => match self.d.length_prefixed() {
                Some(v) => BatchOp::Put(key, v),
                None => return bad("truncated value"),
            },
            Some(ValueKind::Delete) => BatchOp::Delete(key),
            Some(ValueKind::Merge) => match self.d.length_prefixed() {
                Some(v) => BatchOp::Merge(key, v),
                None => return bad("truncated merge operand"),
            },
            Some(ValueKind::RangeDelete) => match self.d.length_prefixed() {
                Some(end) => BatchOp::DeleteRange(key, end),
                None => return bad("truncated range end"),
            },
            _ => {
                self.d = Decoder::new(&[]);
                return bad("unknown record kind");
            }
        };
        Some(Ok((family, op)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = WriteBatch::new();
        b.put(b"k1", b"v1");
        b.delete(b"k2");
        b.delete_range(b"a", b"c");
        b.merge(b"m", b"+1");
        b.set_sequence(42);
        let c = WriteBatch::from_data(b.data().to_vec(), "x", 0).unwrap();
        assert_eq!(c.sequence(), 42);
        assert_eq!(c.count(), 4);
        let ops: Vec<_> = c.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put(b"k1", b"v1"),
                BatchOp::Delete(b"k2"),
                BatchOp::DeleteRange(b"a", b"c"),
                BatchOp::Merge(b"m", b"+1"),
            ]
        );
    }

    /// The merge record's bytes, as `docs/format/wal.md` shows them (RocksDB's tag 2,
    /// `kTypeMerge`, then the key and the operand as in a put).
    #[test]
    fn merge_record_golden_bytes() {
        let mut b = WriteBatch::new();
        b.merge(b"k", b"v");
        b.set_sequence(1);
        assert_eq!(
            b.data(),
            &[1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x02, 0x01, b'k', 0x01, b'v'][..]
        );
        // A merge record cut after its key is corruption, as a put's is.
        let cut = &b.data()[..b.data().len() - 2];
        assert!(WriteBatch::from_data(cut.to_vec(), "f", 0).unwrap_err().is_corruption());
    }

    /// Lengths at and just past each limit, without allocating them: the check refuses what
    /// `as u32` would have truncated (a 4 GiB key encoded as length 0) or the memtable would
    /// have panicked on.
    #[test]
    fn entry_size_limits() {
        let gib4 = 1usize << 32;
        assert!(check_entry_size(0, 0).is_ok());
        assert!(check_entry_size(MAX_ENTRY_LEN, 0).is_ok());
        assert!(check_entry_size(0, MAX_ENTRY_LEN).is_ok());
        assert!(check_entry_size(1 << 31, (1 << 31) - 100).is_ok());
        for (k, v, what) in [
            (gib4, 0, "key is too large"),
            (MAX_ENTRY_LEN + 1, 0, "key is too large"),
            (usize::MAX, usize::MAX, "key is too large"),
            (0, gib4, "value is too large"),
            (3, gib4 + 5, "value is too large"),
            (1 << 31, 1 << 31, "too large together"),
            (0, MAX_ENTRY_LEN + 1, "value is too large"),
            (MAX_ENTRY_LEN, 1, "too large together"),
        ] {
            match check_entry_size(k, v) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains(what), "{k} {v}: {m}"),
                other => panic!("{k} {v}: {other:?}"),
            }
        }
    }

    #[test]
    fn truncated_or_miscounted_batches_are_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value");
        let data = b.data().to_vec();
        for cut in 0..data.len() {
            let r = WriteBatch::from_data(data[..cut].to_vec(), "f", 7);
            assert!(r.is_err(), "cut at {cut} accepted");
        }
        let mut bad = data.clone();
        bad[8] = 5;
        assert!(WriteBatch::from_data(bad, "f", 7).unwrap_err().is_corruption());
    }
}
