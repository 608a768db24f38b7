//! Cursors over a [`Block`]: [`BlockIter`] (both directions, zero-copy values), the block
//! holders it reads through ([`CacheHandle<Block>`], or a [`BlockRef`] that may borrow its
//! owner's handle), and [`BlockSlice`], a value that keeps its block pinned. Every offset and
//! length is checked while decoding; a bad entry turns the cursor invalid with a `Corruption`
//! status (see the parent module). Single-threaded values; no locks.

use std::cmp::Ordering;
use std::ops::Deref;
use std::sync::Arc;

use super::{decode_entry, Block, BlockRole};
use crate::cache::CacheHandle;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::compare_internal;

/// Bytes of a restart interval a seek asks the CPU to prefetch (a whole 4 KiB block): a seek
/// scans its interval entry by entry, and each entry's place is known only once the one before
/// it is decoded, so in a block cold in the CPU caches the scan is one memory miss after
/// another unless its lines were hinted up front.
const PREFETCH_MAX: usize = 4096;

/// Key bytes a [`BlockIter`] holds without allocating (RocksDB's `IterKey` keeps 39).
const INLINE_KEY: usize = 64;

/// A block cursor's current key: inline up to [`INLINE_KEY`] bytes, on the heap beyond, so
/// a cursor (two per point read) allocates nothing for the usual key. Built for the entries'
/// prefix compression: each step keeps `shared` bytes and appends the entry's delta.
struct KeyBuf {
    len: usize,
    inline: [u8; INLINE_KEY],
    /// Holds the key when `len > INLINE_KEY` (then `heap.len() == len`).
    heap: Vec<u8>,
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf { len: 0, inline: [0; INLINE_KEY], heap: Vec::new() }
    }
}

impl KeyBuf {
    #[inline]
    fn as_slice(&self) -> &[u8] {
        if self.len <= INLINE_KEY {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the first `shared` bytes (`shared <= len`) and appends `delta`.
    #[inline(always)]
    fn replace_suffix(&mut self, shared: usize, delta: &[u8]) {
        let new_len = shared + delta.len();
        if new_len <= INLINE_KEY {
            if self.len > INLINE_KEY {
                self.inline[..shared].copy_from_slice(&self.heap[..shared]);
            }
            self.inline[shared..new_len].copy_from_slice(delta);
        } else {
            if self.len <= INLINE_KEY {
                self.heap.clear();
                self.heap.extend_from_slice(&self.inline[..shared]);
            } else {
                self.heap.truncate(shared);
            }
            self.heap.extend_from_slice(delta);
        }
        self.len = new_len;
    }
}

impl CacheHandle<Block> {
    /// An iterator over the block's entries (holding the block).
    pub fn iter(&self) -> BlockIter {
        BlockIter::new(self.clone())
    }
}

/// A block a cursor reads without owning a reference: borrowed from the handle its owner keeps
/// (a table reader's held index or filter block), or a handle of its own (a block looked up in
/// the cache). Borrowing touches no reference count: a point read on a table whose reader
/// holds its index and filter pays no atomic on them, which on several threads reading one
/// table would be a shared, contended cache line per read (RocksDB's table reader hands out its
/// owned index and filter the same way, without a reference).
#[derive(Clone)]
pub enum BlockRef<'a> {
    /// The owner's handle, borrowed.
    Borrowed(&'a CacheHandle<Block>),
    /// A handle of its own.
    Held(CacheHandle<Block>),
}

impl std::ops::Deref for BlockRef<'_> {
    type Target = Block;

    #[inline]
    fn deref(&self) -> &Block {
        match self {
            BlockRef::Borrowed(h) => h,
            BlockRef::Held(h) => h,
        }
    }
}

impl From<CacheHandle<Block>> for BlockRef<'_> {
    fn from(h: CacheHandle<Block>) -> Self {
        BlockRef::Held(h)
    }
}

impl<'a> BlockRef<'a> {
    /// The same block with a handle of its own (one reference taken if it was borrowed).
    pub fn into_owned(self) -> BlockRef<'static> {
        match self {
            BlockRef::Borrowed(h) => BlockRef::Held(h.clone()),
            BlockRef::Held(h) => BlockRef::Held(h),
        }
    }

    /// An iterator over the block's entries, borrowing the block as this reference does.
    pub fn iter(&self) -> BlockIter<BlockRef<'a>> {
        BlockIter::new(self.clone())
    }
}

/// A value inside a block, pinned by a handle on the block (a cache entry stays pinned while
/// this lives): the zero-copy result of a point lookup.
pub struct BlockSlice {
    block: CacheHandle<Block>,
    start: usize,
    len: usize,
}

impl std::ops::Deref for BlockSlice {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.block.data.get(self.start..self.start + self.len).unwrap_or(&[])
    }
}

/// A cursor over one block's entries, in both directions. Holds the block alive through `B`: a
/// [`CacheHandle`] (the default), or a [`BlockRef`] that may borrow it.
pub struct BlockIter<B: Deref<Target = Block> = CacheHandle<Block>> {
    block: B,
    /// Offset of the current entry; `restarts_offset` when invalid.
    current: usize,
    /// Offset just past the current entry.
    next_offset: usize,
    /// Index of the restart block holding `current`.
    restart_index: usize,
    /// The current key; inline up to [`INLINE_KEY`] bytes, so a block cursor (two per point
    /// read) allocates nothing for the usual key.
    key: KeyBuf,
    value_start: usize,
    value_len: usize,
    err: Option<Error>,
}

impl BlockIter {
    /// The current value, keeping the block pinned: consumes the cursor (its handle on the
    /// block moves into the result; no copy, no extra reference).
    pub fn into_value(self) -> BlockSlice {
        BlockSlice { block: self.block, start: self.value_start, len: self.value_len }
    }
}

impl<B: Deref<Target = Block>> BlockIter<B> {
    /// A new iterator (not positioned).
    pub fn new(block: B) -> BlockIter<B> {
        let end = block.restarts_offset;
        let err = (block.num_restarts == 0).then(|| block.corruption("not a key/value block"));
        BlockIter {
            block,
            current: end,
            next_offset: end,
            restart_index: 0,
            key: KeyBuf::default(),
            value_start: 0,
            value_len: 0,
            err,
        }
    }

    /// An iterator that is invalid with status `err` (for a block that could not be loaded).
    pub fn failed(err: Error) -> BlockIter<B>
    where
        B: From<CacheHandle<Block>>,
    {
        // One restart point at 0 and no entries: a well-formed empty block.
        let empty = Block {
            data: vec![0, 0, 0, 0, 1, 0, 0, 0],
            restarts_offset: 0,
            num_restarts: 1,
            file: Arc::from(""),
            offset: 0,
            role: BlockRole::Other,
            prefixes: None,
        };
        let mut it = BlockIter::new(B::from(CacheHandle::new(empty)));
        it.err = Some(err);
        it
    }

    fn mark_invalid(&mut self) {
        self.current = self.block.restarts_offset;
        self.next_offset = self.block.restarts_offset;
        self.restart_index = self.block.num_restarts;
    }

    fn fail(&mut self, detail: &str) {
        if self.err.is_none() {
            self.err = Some(self.block.corruption(detail));
        }
        self.mark_invalid();
    }

    fn seek_to_restart(&mut self, index: usize) -> bool {
        self.key.clear();
        self.restart_index = index;
        match self.block.restart_point(index) {
            Some(p) if p <= self.block.restarts_offset => {
                self.next_offset = p;
                true
            }
            _ => {
                self.fail("restart point out of range");
                false
            }
        }
    }

    /// Decodes the entry at `next_offset`; false at the end of the block or on corruption.
    fn parse_next(&mut self) -> bool {
        self.current = self.next_offset;
        let end = self.block.restarts_offset;
        if self.current >= end {
            self.mark_invalid();
            return false;
        }
        let data = match self.block.data.get(self.current..end) {
            Some(d) => d,
            None => {
                self.fail("entry offset out of range");
                return false;
            }
        };
        let Some((shared, non_shared, value_len, hdr)) = decode_entry(data) else {
            self.fail("bad entry header");
            return false;
        };
        if shared > self.key.len() {
            self.fail("shared prefix longer than previous key");
            return false;
        }
        let key_end = hdr.checked_add(non_shared);
        let val_end = key_end.and_then(|k| k.checked_add(value_len));
        let (Some(key_end), Some(val_end)) = (key_end, val_end) else {
            self.fail("entry length overflows");
            return false;
        };
        let Some(delta) = data.get(hdr..key_end) else {
            self.fail("entry key exceeds block");
            return false;
        };
        if val_end > data.len() {
            self.fail("entry value exceeds block");
            return false;
        }
        self.key.replace_suffix(shared, delta);
        self.value_start = self.current + key_end;
        self.value_len = value_len;
        self.next_offset = self.current + val_end;
        true
    }

    /// The full key stored at restart point `i` (whose `shared` must be 0).
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let p = self.block.restart_point(i)?;
        let data = self.block.data.get(p..self.block.restarts_offset)?;
        let (shared, non_shared, _, hdr) = decode_entry(data)?;
        if shared != 0 {
            return None;
        }
        data.get(hdr..hdr.checked_add(non_shared)?)
    }

    fn seek_impl(&mut self, target: &[u8], cmp: impl Fn(&[u8], &[u8]) -> Ordering) {
        // Binary search for the last restart point whose key is < target.
        let mut left = 0usize;
        let mut right = self.block.num_restarts.saturating_sub(1);
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let Some(k) = self.restart_key(mid) else {
                self.fail("bad restart entry");
                return;
            };
            if cmp(k, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        self.scan_from_restart(left, target, cmp);
    }

    /// Positions at the first entry `>= target` at or after restart point `left`, scanning up
    /// to the next restart point (the caller found every earlier restart key `< target`).
    fn scan_from_restart(
        &mut self,
        left: usize,
        target: &[u8],
        cmp: impl Fn(&[u8], &[u8]) -> Ordering,
    ) {
        if !self.seek_to_restart(left) {
            return;
        }
        // The entries to scan: up to the next restart point (the block's end for the last).
        let end = if left + 1 < self.block.num_restarts {
            self.block.restart_point(left + 1).unwrap_or(self.block.restarts_offset)
        } else {
            self.block.restarts_offset
        };
        let from = self.next_offset;
        crate::prefetch::prefetch_range(&self.block.data, from, end.min(from + PREFETCH_MAX));
        while self.parse_next() {
            if cmp(self.key.as_slice(), target) != Ordering::Less {
                return;
            }
        }
    }

    /// Positions at the first entry whose key is `>= target` bytewise (for meta blocks).
    pub fn seek_bytewise(&mut self, target: &[u8]) {
        // The last restart point whose key is < target: the one before the first >= target
        // (found through the block's search array where it has one).
        match self.block.restart_lower_bound_bytewise(target) {
            Ok(lb) => {
                self.scan_from_restart(lb.saturating_sub(1), target, crate::key::compare_user_keys)
            }
            Err(e) => {
                self.err.get_or_insert(e);
                self.mark_invalid();
            }
        }
    }
}

impl<B: Deref<Target = Block> + Send> InternalIterator for BlockIter<B> {
    fn valid(&self) -> bool {
        self.err.is_none() && self.current < self.block.restarts_offset
    }

    fn seek_to_first(&mut self) {
        if self.seek_to_restart(0) {
            self.parse_next();
        }
    }

    fn seek_to_last(&mut self) {
        if !self.seek_to_restart(self.block.num_restarts.saturating_sub(1)) {
            return;
        }
        while self.parse_next() && self.next_offset < self.block.restarts_offset {}
    }

    fn seek(&mut self, target: &[u8]) {
        self.seek_impl(target, compare_internal);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.valid() {
            if self.err.is_some() {
                return;
            }
            self.seek_to_last();
        }
        while self.valid() && compare_internal(self.key.as_slice(), target) == Ordering::Greater {
            self.prev();
        }
    }

    fn next(&mut self) {
        if self.valid() {
            self.parse_next();
        }
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        // Find the last restart point before the current entry (binary search; forward steps
        // do not track the restart index).
        let (mut lo, mut hi) = (0usize, self.block.num_restarts);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.block.restart_point(mid) {
                Some(p) if p < original => lo = mid + 1,
                Some(_) => hi = mid,
                None => {
                    self.fail("restart point out of range");
                    return;
                }
            }
        }
        if lo == 0 {
            self.mark_invalid();
            return;
        }
        self.restart_index = lo - 1;
        if !self.seek_to_restart(self.restart_index) {
            return;
        }
        // Scan forward to the entry just before `original`.
        loop {
            if !self.parse_next() {
                if self.err.is_none() {
                    self.fail("entries do not reach the previous entry");
                }
                return;
            }
            if self.next_offset >= original {
                if self.next_offset != original {
                    self.fail("entries overlap");
                }
                return;
            }
        }
    }

    fn key(&self) -> &[u8] {
        self.key.as_slice()
    }

    fn value(&self) -> &[u8] {
        self.block.data.get(self.value_start..self.value_start + self.value_len).unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}
