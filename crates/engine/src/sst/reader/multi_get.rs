//! Batched point lookups in one table ([`TableReader::multi_get`]), called by the DB's
//! MultiGet once per file with the keys that fall in the file's range, sorted.
//!
//! One pass over the keys probes the filter (a full filter fetched once for the batch; a
//! partitioned one probes each key's partition), one index cursor seeks forward key by key, and the distinct data blocks the keys need (keys in the same block
//! share it) are fetched together: cache hits first, then the misses, adjacent ones coalesced
//! into one read of up to [`MAX_COALESCED_READ`] bytes. No locks beyond the block cache's.

use std::sync::Arc;

use crate::cache::CacheHandle;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use crate::perf;
use crate::sst::block::{Block, BlockRole};
use crate::sst::format::{decode_block, BlockHandle, BLOCK_TRAILER_LEN};
use crate::sst::index_iter::IndexIter;

use super::TableReader;
use crate::cache::Priority;

/// Largest single read that merges adjacent missing blocks.
pub const MAX_COALESCED_READ: u64 = 256 << 10;

/// One key of a batched lookup in one table.
#[derive(Debug)]
pub struct MultiGetKey<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// Its filter hash ([`crate::sst::filter::filter_hash`]), computed once per batch.
    pub hash: u64,
    /// Set by [`TableReader::multi_get`]: the newest entry at or below the read sequence.
    pub found: Option<(ValueKind, SequenceNumber, Vec<u8>)>,
    /// Set by [`TableReader::multi_get`] if the key's data block could not be read or decoded
    /// (the other keys of the batch are still answered, as a `get` per key would be).
    pub error: Option<Error>,
}

impl TableReader {
    /// Looks every key of `keys` (sorted by user key, ascending) up at sequence `seq`, setting
    /// `found` for those the table holds; the same answers as [`TableReader::get`] per key. An
    /// error reading the filter or index fails the whole batch; an error reading a data block
    /// sets `error` on the keys in that block only.
    pub fn multi_get(
        &self,
        keys: &mut [MultiGetKey<'_>],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<()> {
        let full_filter = match &self.filter {
            Some(f) if !self.partitioned_filter => Some(self.meta_block(f)?),
            _ => None,
        };
        let seq = seq.min(key::MAX_SEQUENCE);
        let mut it = IndexIter::new(self, fill_cache);
        // (key position, block handle), in key order, so handles never decrease.
        let mut wants: Vec<(usize, BlockHandle)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            perf::table_get();
            let may = match &full_filter {
                Some(f) => Some(f.may_contain(k.hash)),
                None => self.filter_check(k.user_key, k.hash, fill_cache)?,
            };
            if let Some(may) = may {
                perf::bloom_checked(may);
                if !may {
                    continue;
                }
            }
            it.seek(self, &key::seek_key(k.user_key, seq));
            if !it.valid() {
                it.status()?;
                continue;
            }
            wants.push((i, self.decode_handle(it.value(), it.block_offset())?));
        }
        let mut handles: Vec<BlockHandle> = wants.iter().map(|w| w.1).collect();
        handles.dedup_by_key(|h| h.offset);
        let mut blocks = self.fetch_blocks(&handles, fill_cache);

        let mut b = 0;
        for (i, handle) in wants {
            while handles.get(b).is_some_and(|h| h.offset != handle.offset) {
                b += 1;
            }
            let Some(k) = keys.get_mut(i) else { continue };
            let got = match blocks.get_mut(b) {
                Some(Ok(block)) => self.find_in_block(block, handle, k.user_key, seq, fill_cache),
                Some(Err(e)) => Err(e.duplicate()),
                None => {
                    Err(Error::corruption(&self.file_name, handle.offset, "multiget: lost block"))
                }
            };
            match got {
                Ok(found) => k.found = found,
                Err(e) => k.error = Some(e),
            }
        }
        blocks.clear();
        Ok(())
    }

    /// The newest entry of `user_key` at or below `seq` in `block` (the block the index chose).
    fn find_in_block(
        &self,
        block: &CacheHandle<Block>,
        handle: BlockHandle,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, Vec<u8>)>> {
        let mut bit = block.iter();
        bit.seek(&key::seek_key(user_key, seq));
        if !bit.valid() {
            bit.status()?;
            // The entry may start the next block (separator past the block's last key): rare,
            // so take the one-key path.
            return self.get(user_key, seq, fill_cache);
        }
        let p = key::parse_internal_key(bit.key()).ok_or_else(|| {
            Error::corruption(&self.file_name, handle.offset, "malformed internal key")
        })?;
        Ok((p.user_key == user_key).then(|| (p.kind, p.seq, bit.value().to_vec())))
    }

    /// The data blocks at `handles` (increasing offsets), each from the cache or read (adjacent
    /// misses coalesced into one read), or its own error.
    fn fetch_blocks(
        &self,
        handles: &[BlockHandle],
        fill_cache: bool,
    ) -> Vec<Result<CacheHandle<Block>>> {
        let mut out: Vec<Option<Result<CacheHandle<Block>>>> = Vec::with_capacity(handles.len());
        let mut misses: Vec<usize> = Vec::new();
        for (i, h) in handles.iter().enumerate() {
            let hit =
                self.block_cache.as_ref().and_then(|c| c.lookup((self.file_number, h.offset)));
            match hit {
                Some(b) => {
                    perf::cache_hit(BlockRole::Data);
                    out.push(Some(Ok(b)));
                }
                None => {
                    if self.block_cache.is_some() {
                        perf::cache_miss(BlockRole::Data);
                    }
                    out.push(None);
                    misses.push(i);
                }
            }
        }
        let mut m = 0;
        while let Some(&first_i) = misses.get(m) {
            // A run of misses, each starting where the previous one's trailer ends.
            let Some(&first) = handles.get(first_i) else { break };
            let mut end = first.end_with_trailer().unwrap_or(u64::MAX);
            let mut n = m + 1;
            while let Some(h) = misses.get(n).and_then(|&j| handles.get(j)) {
                let next_end = h.end_with_trailer().unwrap_or(u64::MAX);
                if h.offset != end || next_end - first.offset > MAX_COALESCED_READ {
                    break;
                }
                end = next_end;
                n += 1;
            }
            let run = misses.get(m..n).unwrap_or(&[]);
            let shared = (n - m > 1 && end <= self.file.size())
                .then(|| self.file.read_vec_at(first.offset, (end - first.offset) as usize).ok())
                .flatten();
            if let Some(buf) = &shared {
                self.io.file_read(buf.len() as u64);
            }
            for &j in run {
                let Some(&h) = handles.get(j) else { continue };
                let got = if let Some(buf) = &shared {
                    let from = (h.offset - first.offset) as usize;
                    let len = h.size as usize + BLOCK_TRAILER_LEN;
                    // The block's own buffer from the thread's pool (`fs::buf_pool`), as a
                    // single block read takes one; the block gives it back when dropped.
                    let raw = buf.get(from..from + len).map_or_else(Vec::new, |b| {
                        let mut raw = crate::fs::buf_pool::take(b.len());
                        raw.extend_from_slice(b);
                        raw
                    });
                    decode_block(raw, &self.file_name, h, self.checksum).and_then(|data| {
                        self.io.block_read(BlockRole::Data, len as u64);
                        Block::new(data, Arc::clone(&self.file_name), h.offset)
                    })
                } else {
                    // One block, or the shared read failed: each block reports its own error.
                    self.load(h, BlockRole::Data)
                };
                let got = got.map(|b| {
                    if fill_cache {
                        self.insert_block(b, h, Priority::Low)
                    } else {
                        CacheHandle::new(b)
                    }
                });
                if let Some(slot) = out.get_mut(j) {
                    *slot = Some(got);
                }
            }
            if let Some(buf) = shared {
                crate::fs::buf_pool::give(buf);
            }
            m = n;
        }
        out.into_iter()
            .zip(handles)
            .map(|(b, h)| {
                b.unwrap_or_else(|| {
                    Err(Error::corruption(&self.file_name, h.offset, "multiget: block not read"))
                })
            })
            .collect()
    }
}
