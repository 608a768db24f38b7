//! Batched point lookups in one table ([`TableReader::multi_get`]), called by the DB's
//! MultiGet once per file with the keys that fall in the file's range, sorted.
//!
//! One pass over the keys probes the filter (fetched once for the batch), one index cursor
//! seeks forward key by key, and the distinct data blocks the keys need (keys in the same block
//! share it) are fetched together: cache hits first, then the misses, adjacent ones coalesced
//! into one read of up to [`MAX_COALESCED_READ`] bytes. No locks beyond the block cache's.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use crate::perf;
use crate::sst::block::{Block, BlockRole};
use crate::sst::format::{decode_block, BlockHandle, BLOCK_TRAILER_LEN};

use super::{load_block, TableReader};
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
}

impl TableReader {
    /// Looks every key of `keys` (sorted by user key, ascending) up at sequence `seq`, setting
    /// `found` for those the table holds; the same answers as [`TableReader::get`] per key.
    pub fn multi_get(
        &self,
        keys: &mut [MultiGetKey<'_>],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<()> {
        let filter = self.filter_block()?;
        let seq = seq.min(key::MAX_SEQUENCE);
        let index = self.index_block()?;
        let mut it = index.iter();
        // (key position, block handle), in key order, so handles never decrease.
        let mut wants: Vec<(usize, BlockHandle)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            perf::table_get();
            if let Some(f) = &filter {
                let may = f.may_contain(k.hash);
                perf::bloom_checked(may);
                if !may {
                    continue;
                }
            }
            it.seek(&key::seek_key(k.user_key, seq));
            if !it.valid() {
                it.status()?;
                continue;
            }
            wants.push((i, self.decode_handle(it.value())?));
        }
        let mut handles: Vec<BlockHandle> = wants.iter().map(|w| w.1).collect();
        handles.dedup_by_key(|h| h.offset);
        let blocks = self.fetch_blocks(&handles, fill_cache)?;

        let mut b = 0;
        for (i, handle) in wants {
            while handles.get(b).is_some_and(|h| h.offset != handle.offset) {
                b += 1;
            }
            let (Some(block), Some(k)) = (blocks.get(b), keys.get_mut(i)) else {
                return Err(Error::corruption(
                    &self.file_name,
                    handle.offset,
                    "multiget: lost block",
                ));
            };
            let target = key::seek_key(k.user_key, seq);
            let mut bit = block.iter();
            bit.seek(&target);
            if !bit.valid() {
                bit.status()?;
                // The entry may start the next block (separator past the block's last key):
                // rare, so take the one-key path.
                k.found = self.get(k.user_key, seq, fill_cache)?;
                continue;
            }
            let p = key::parse_internal_key(bit.key()).ok_or_else(|| {
                Error::corruption(&self.file_name, handle.offset, "malformed internal key")
            })?;
            if p.user_key == k.user_key {
                k.found = Some((p.kind, p.seq, bit.value().to_vec()));
            }
        }
        Ok(())
    }

    /// The data blocks at `handles` (increasing offsets), from the cache or read with adjacent
    /// misses coalesced.
    fn fetch_blocks(&self, handles: &[BlockHandle], fill_cache: bool) -> Result<Vec<Arc<Block>>> {
        let mut out: Vec<Option<Arc<Block>>> = Vec::with_capacity(handles.len());
        let mut misses: Vec<usize> = Vec::new();
        for (i, h) in handles.iter().enumerate() {
            let hit =
                self.block_cache.as_ref().and_then(|c| c.lookup((self.file_number, h.offset)));
            match hit {
                Some(b) => {
                    perf::cache_hit(BlockRole::Data);
                    out.push(Some(b));
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
        while m < misses.len() {
            // A run of misses, each starting where the previous one's trailer ends.
            let first = handles[misses[m]];
            let mut end = first.end_with_trailer().unwrap_or(u64::MAX);
            let mut n = m + 1;
            while let Some(&j) = misses.get(n) {
                let h = handles[j];
                let next_end = h.end_with_trailer().unwrap_or(u64::MAX);
                if h.offset != end || next_end - first.offset > MAX_COALESCED_READ {
                    break;
                }
                end = next_end;
                n += 1;
            }
            if n - m == 1 || end > self.file.size() {
                for &j in &misses[m..n] {
                    let b = load_block(
                        self.file.as_ref(),
                        &self.file_name,
                        handles[j],
                        BlockRole::Data,
                    )?;
                    if fill_cache {
                        self.insert_block(&b, handles[j], Priority::Low);
                    }
                    out[j] = Some(b);
                }
            } else {
                let mut buf = vec![0u8; (end - first.offset) as usize];
                self.file.read_exact_at(first.offset, &mut buf)?;
                for &j in &misses[m..n] {
                    let h = handles[j];
                    let from = (h.offset - first.offset) as usize;
                    let len = h.size as usize + BLOCK_TRAILER_LEN;
                    let raw = buf.get(from..from + len).map(<[u8]>::to_vec).unwrap_or_default();
                    let data = decode_block(raw, &self.file_name, h)?;
                    perf::block_read(BlockRole::Data, len as u64);
                    let b = Arc::new(Block::new(data, Arc::clone(&self.file_name), h.offset)?);
                    if fill_cache {
                        self.insert_block(&b, h, Priority::Low);
                    }
                    out[j] = Some(b);
                }
            }
            m = n;
        }
        out.into_iter()
            .zip(handles)
            .map(|(b, h)| {
                b.ok_or_else(|| {
                    Error::corruption(&self.file_name, h.offset, "multiget: block not read")
                })
            })
            .collect()
    }
}
