//! Data and index blocks: prefix-compressed entries with restart points (decoded form).
//!
//! A [`Block`] is the uncompressed, checksum-verified bytes of one block (see
//! `docs/format/sst.md`):
//!
//! ```text
//! entry*  restart: fixed32 * n  num_restarts: fixed32
//! entry = shared: varint32 | non_shared: varint32 | value_len: varint32 | key_delta | value
//! ```
//!
//! Blocks are immutable and shared (`CacheHandle<Block>`: a block cache entry, or an `Arc` for
//! an uncached block) between the block cache and iterators, so a
//! [`BlockIter`] hands out zero-copy value slices. Keys are ordered by
//! [`crate::key::compare_internal`] (used by `seek`); meta blocks whose keys are plain names are
//! only scanned, never sought.
//!
//! The bytes are untrusted: [`Block::new`] validates the restart array, and the iterator checks
//! every offset and length while decoding. A bad entry makes the iterator invalid with a
//! `Corruption` status naming the file and the block's offset; nothing here panics.

use std::sync::Arc;

use crate::coding::{decode_fixed32, get_varint32};
use crate::error::{Error, Result};

pub use crate::perf::BlockRole;

mod iter;
mod prefixes;
pub use iter::{BlockIter, BlockRef, BlockSlice};
use prefixes::RestartPrefixes;

/// A decoded (uncompressed) block, shared through the block cache.
pub struct Block {
    data: Vec<u8>,
    restarts_offset: usize,
    num_restarts: usize,
    file: Arc<str>,
    offset: u64,
    role: BlockRole,
    /// The search array of the restart keys, for a held index block (see `prefixes.rs`).
    prefixes: Option<Box<RestartPrefixes>>,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("file", &self.file)
            .field("offset", &self.offset)
            .field("len", &self.data.len())
            .field("num_restarts", &self.num_restarts)
            .field("role", &self.role)
            .finish()
    }
}

impl Drop for Block {
    /// The bytes go back to this thread's read-buffer pool (`fs::buf_pool`), for the next block
    /// read: a block evicted from the cache is the buffer of the next miss.
    fn drop(&mut self) {
        crate::fs::buf_pool::give(std::mem::take(&mut self.data));
    }
}

impl Block {
    /// Wraps uncompressed block bytes read from `file` at `offset` (both used in errors),
    /// validating the restart array.
    pub fn new(data: Vec<u8>, file: Arc<str>, offset: u64) -> Result<Block> {
        Block::with_role(data, file, offset, BlockRole::Data)
    }

    /// As [`Block::new`], tagged with `role` (which must not be [`BlockRole::Filter`]: use
    /// [`Block::new_filter`]).
    pub fn with_role(data: Vec<u8>, file: Arc<str>, offset: u64, role: BlockRole) -> Result<Block> {
        if role == BlockRole::Filter {
            return Block::new_filter(data, file, offset);
        }
        let len = data.len();
        let bad = |d: &str| Error::corruption(&file, offset, format!("block: {d}"));
        let num_restarts = match len.checked_sub(4).and_then(|p| data.get(p..)) {
            Some(tail) => decode_fixed32(tail).ok_or_else(|| bad("short"))? as usize,
            None => return Err(bad("shorter than 4 bytes")),
        };
        if num_restarts == 0 {
            return Err(bad("zero restart points"));
        }
        let restarts_len = num_restarts
            .checked_mul(4)
            .and_then(|n| n.checked_add(4))
            .ok_or_else(|| bad("restart count overflows"))?;
        let restarts_offset =
            len.checked_sub(restarts_len).ok_or_else(|| bad("restart array exceeds block"))?;
        let block =
            Block { data, restarts_offset, num_restarts, file, offset, role, prefixes: None };
        for i in 0..num_restarts {
            match block.stored_restart_point(i) {
                Some(0) => {}
                Some(_) if i == 0 => {
                    return Err(block.corruption("the first restart point is not at offset 0"))
                }
                Some(p) if p <= restarts_offset => {}
                _ => return Err(block.corruption("restart point out of range")),
            }
        }
        Ok(block)
    }

    /// Wraps a bloom filter block (validated by [`super::filter::validate`]); it has no
    /// entries: an iterator over it reports `Corruption`. Probe it with [`Block::may_contain`].
    pub fn new_filter(data: Vec<u8>, file: Arc<str>, offset: u64) -> Result<Block> {
        super::filter::validate(&data, &file, offset)?;
        Ok(Block {
            data,
            restarts_offset: 0,
            num_restarts: 0,
            file,
            offset,
            role: BlockRole::Filter,
            prefixes: None,
        })
    }

    /// What the block is for.
    pub fn role(&self) -> BlockRole {
        self.role
    }

    /// For a filter block: false only if the key with filter hash `h` was certainly not added.
    /// Any other block answers true (it proves nothing).
    #[inline]
    pub fn may_contain(&self, h: u64) -> bool {
        self.role != BlockRole::Filter || super::filter::may_contain_in(&self.data, h)
    }

    /// Bytes charged to the cache for this block.
    pub fn charge(&self) -> usize {
        self.data.capacity()
            + std::mem::size_of::<Block>()
            + self.prefixes.as_ref().map_or(0, |p| p.memory())
    }

    /// Builds the search array that makes bytewise seeks of the restart keys cheaper
    /// (`prefixes.rs`): for an index block the table reader holds, keyed by user keys. Leaves
    /// the block as it was if a restart entry is malformed or the keys are out of order (the
    /// seeks then search as before and report what they find).
    pub fn build_search_prefixes(&mut self) {
        if self.role == BlockRole::Filter || self.num_restarts < 2 {
            return;
        }
        let keys: Option<Vec<&[u8]>> =
            (0..self.num_restarts).map(|i| self.restart_entry(i).map(|e| e.0)).collect();
        let built = keys.and_then(|k| RestartPrefixes::build(&k));
        self.prefixes = built.map(Box::new);
    }

    /// The first restart point whose key is `>= target` bytewise (`num_restarts` if none), by
    /// the search array where there is one, else by binary search of the restart entries.
    #[inline]
    fn restart_lower_bound_bytewise(&self, target: &[u8]) -> Result<usize> {
        if self.restarts_offset == 0 {
            // No entries: the one restart point names none.
            return Ok(self.num_restarts);
        }
        let entry = |i| self.restart_entry(i).ok_or_else(|| self.corruption("bad restart entry"));
        let (mut lo, mut hi) = match &self.prefixes {
            Some(p) => p.narrow(target),
            None => (0, self.num_restarts),
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if entry(mid)?.0 < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The block's uncompressed bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Offset of the block in its file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The entry at restart point `i` (which holds its whole key: `shared = 0`):
    /// `(key, value, end offset)`; `None` if it is malformed.
    fn restart_entry(&self, i: usize) -> Option<(&[u8], &[u8], usize)> {
        let p = self.restart_point(i)?;
        let data = self.data.get(p..self.restarts_offset)?;
        let (shared, non_shared, value_len, hdr) = decode_entry(data)?;
        if shared != 0 {
            return None;
        }
        let key_end = hdr.checked_add(non_shared)?;
        let val_end = key_end.checked_add(value_len)?;
        Some((data.get(hdr..key_end)?, data.get(key_end..val_end)?, p + val_end))
    }

    /// The first entry whose key is `>= target` bytewise, found by binary search over the
    /// restart points alone, without an iterator (no allocation, no handle clone). This answers
    /// for blocks with a restart interval of 1 (index blocks, the top levels of partitioned
    /// indexes and filters); where the restart found is not directly preceded by the previous
    /// restart's entry (a longer interval), it answers [`RestartSeek::Scan`] and the caller seeks
    /// with an iterator. Malformed restart entries are `Corruption`.
    pub fn seek_restarts_bytewise(&self, target: &[u8]) -> Result<RestartSeek<'_>> {
        if self.restarts_offset == 0 {
            return Ok(RestartSeek::PastEnd);
        }
        let entry = |i| self.restart_entry(i).ok_or_else(|| self.corruption("bad restart entry"));
        let lo = self.restart_lower_bound_bytewise(target)?;
        // Every restart before `lo` is < target; only entries between restart lo-1 and lo
        // (none with interval 1) could be the answer instead.
        if lo > 0 {
            let next = if lo == self.num_restarts {
                self.restarts_offset
            } else {
                self.restart_point(lo).ok_or_else(|| self.corruption("bad restart point"))?
            };
            if entry(lo - 1)?.2 != next {
                return Ok(RestartSeek::Scan);
            }
        }
        if lo == self.num_restarts {
            return Ok(RestartSeek::PastEnd);
        }
        Ok(RestartSeek::Value(entry(lo)?.1))
    }

    /// Offset of restart point `i`. The first is at 0 in every block (checked by
    /// [`Block::with_role`]) and is not read again: a seek in a block with one restart point
    /// (large values) then touches only the entries, not the restart array at the block's end,
    /// one memory miss less when the block is cold in the CPU caches.
    #[inline]
    fn restart_point(&self, i: usize) -> Option<usize> {
        if i == 0 && self.num_restarts > 0 {
            return Some(0);
        }
        self.stored_restart_point(i)
    }

    /// Restart point `i` as stored in the restart array.
    fn stored_restart_point(&self, i: usize) -> Option<usize> {
        let at = self.restarts_offset.checked_add(i.checked_mul(4)?)?;
        decode_fixed32(self.data.get(at..)?).map(|v| v as usize)
    }

    fn corruption(&self, detail: &str) -> Error {
        Error::corruption(&self.file, self.offset, format!("block: {detail}"))
    }
}

/// What [`Block::seek_restarts_bytewise`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum RestartSeek<'a> {
    /// The value of the first entry with a key `>= target`.
    Value(&'a [u8]),
    /// Every key is smaller than the target.
    PastEnd,
    /// The block has entries between restart points: seek with an iterator.
    Scan,
}

/// A decoded entry header: `(shared, non_shared, value_len, header_len)`.
#[inline(always)]
fn decode_entry(src: &[u8]) -> Option<(usize, usize, usize, usize)> {
    // Fast path: all three lengths fit in one byte each (LevelDB's DecodeEntry).
    if let Some(&[s, n, v]) = src.get(..3).and_then(|h| <&[u8; 3]>::try_from(h).ok()) {
        if (s | n | v) < 0x80 {
            return Some((s as usize, n as usize, v as usize, 3));
        }
    }
    let (shared, a) = get_varint32(src)?;
    let (non_shared, b) = get_varint32(src.get(a..)?)?;
    let (value_len, c) = get_varint32(src.get(a + b..)?)?;
    Some((shared as usize, non_shared as usize, value_len as usize, a + b + c))
}

#[cfg(test)]
mod tests;
