//! The index of a table being built: one entry per data block (separator key → block handle),
//! written at `finish` as one index block or, partitioned, as index blocks of about
//! `metadata_block_size` bytes under a top-level index (RocksDB's `kTwoLevelIndexSearch`).
//!
//! Entries are kept with internal-key separators until the end, when the key form is chosen:
//! user keys if no user key's entries span two data blocks (format version 2's rule), else
//! internal keys; partitions and the top-level index use the same form. A top-level entry's key
//! is the last separator of its partition, its value the partition's handle, so a seek of the
//! top level finds the partition holding the first separator `>=` the target. Layout:
//! `docs/format/sst.md`. Used by [`super::TableBuilder`] only; no locks.

use crate::error::Result;
use crate::key;

use super::block_builder::BlockBuilder;
use super::format::{BlockHandle, BLOCK_TRAILER_LEN};

/// What the written index is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WrittenIndex {
    /// The block the footer points at: the index, or the top-level index.
    pub handle: BlockHandle,
    /// Bytes of every index block written, trailers included.
    pub size: u64,
    /// Partitions (0 if not partitioned).
    pub partitions: u64,
    /// Bytes of the top-level index with its trailer (0 if not partitioned).
    pub top_level_size: u64,
    /// The keys are user keys.
    pub user_keys: bool,
}

/// The index entries of a table being built.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    /// (internal-key separator, handle), in order.
    entries: Vec<(Vec<u8>, BlockHandle)>,
    /// No user key spans two data blocks so far.
    user_keys_ok: bool,
}

impl IndexBuilder {
    /// An empty index.
    pub fn new() -> IndexBuilder {
        IndexBuilder { entries: Vec::new(), user_keys_ok: true }
    }

    /// Adds the entry of a finished data block: `sep` (an internal key at or after the block's
    /// last key and before the next block's first); `spans` if the block's last user key goes on
    /// in the next block.
    pub fn add(&mut self, sep: Vec<u8>, handle: BlockHandle, spans: bool) {
        if spans {
            self.user_keys_ok = false;
        }
        self.entries.push((sep, handle));
    }

    /// Writes the index with `write` (which appends one uncompressed block and returns its
    /// handle): one block, or partitions of about `partition_size` bytes then the top-level
    /// index if `partition_size` is set.
    pub fn finish(
        self,
        partition_size: Option<usize>,
        write: &mut dyn FnMut(&[u8]) -> Result<BlockHandle>,
    ) -> Result<WrittenIndex> {
        let user_keys = self.user_keys_ok;
        let form = |sep: &[u8]| -> Vec<u8> {
            if user_keys {
                key::user_key(sep).to_vec()
            } else {
                sep.to_vec()
            }
        };
        let with_trailer = |h: BlockHandle| h.size + BLOCK_TRAILER_LEN as u64;
        let Some(limit) = partition_size else {
            let mut b = BlockBuilder::new(1);
            for (sep, h) in &self.entries {
                b.add(&form(sep), &h.encoded());
            }
            let handle = write(b.finish())?;
            let size = with_trailer(handle);
            return Ok(WrittenIndex { handle, size, user_keys, ..Default::default() });
        };
        let mut top = BlockBuilder::new(1);
        let mut part = BlockBuilder::new(1);
        let (mut size, mut partitions) = (0, 0);
        let n = self.entries.len();
        for (i, (sep, h)) in self.entries.iter().enumerate() {
            let k = form(sep);
            part.add(&k, &h.encoded());
            if part.size_estimate() >= limit.max(1) || i + 1 == n {
                let ph = write(part.finish())?;
                part.reset();
                size += with_trailer(ph);
                partitions += 1;
                top.add(&k, &ph.encoded());
            }
        }
        let handle = write(top.finish())?;
        let top_level_size = with_trailer(handle);
        Ok(WrittenIndex {
            handle,
            size: size + top_level_size,
            partitions,
            top_level_size,
            user_keys,
        })
    }
}
