//! The bloom filter of a table being built: one filter block over every user key, or,
//! partitioned (RocksDB's `partition_filters`), filter blocks of about `metadata_block_size`
//! bytes each over a run of consecutive user keys, under a top-level filter index.
//!
//! A partition is cut only between two user keys, once it holds enough keys for
//! `metadata_block_size` bytes of filter. The top-level filter index has one entry per
//! partition: key = the partition's last user key, value = its handle. A lookup of user key
//! `u` probes the first partition whose key is `>= u` (bytewise); if there is none, `u` is
//! past every key of the table. Layout: `docs/format/sst.md`. Used by [`super::TableBuilder`]
//! only; no locks.

use crate::error::Result;

use super::block_builder::BlockBuilder;
use super::filter;
use super::format::{BlockHandle, BLOCK_TRAILER_LEN};

/// Meta-index name of a full filter block.
pub const META_FILTER: &[u8] = b"filter";
/// Meta-index name of a partitioned filter's top-level index.
pub const META_PARTITIONED_FILTER: &[u8] = b"partitionedfilter";

/// What the written filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenFilter {
    /// The meta-index name ([`META_FILTER`] or [`META_PARTITIONED_FILTER`]).
    pub meta_name: &'static [u8],
    /// The filter block, or the top-level filter index.
    pub handle: BlockHandle,
    /// Bytes of every filter block written, trailers included.
    pub size: u64,
    /// Partitions (0 if not partitioned).
    pub partitions: u64,
}

/// The filter of a table being built.
#[derive(Debug)]
pub struct FilterBuilder {
    bits_per_key: u32,
    /// Keys per partition (`None`: one filter block).
    keys_per_partition: Option<usize>,
    hashes: Vec<u64>,
    /// Closed partitions: (end index in `hashes`, last user key).
    cuts: Vec<(usize, Vec<u8>)>,
}

impl FilterBuilder {
    /// A filter of `bits_per_key`, partitioned into blocks of about `partition_bytes` if set.
    pub fn new(bits_per_key: u32, partition_bytes: Option<usize>) -> FilterBuilder {
        let keys_per_partition =
            partition_bytes.map(|b| (b.saturating_mul(8) / bits_per_key.max(1) as usize).max(1));
        FilterBuilder { bits_per_key, keys_per_partition, hashes: Vec::new(), cuts: Vec::new() }
    }

    /// Adds a new distinct user key (keys come in increasing order); `prev` is the previous
    /// one, where a partition may end.
    pub fn add(&mut self, user_key: &[u8], prev: Option<&[u8]>) {
        if let (Some(per), Some(prev)) = (self.keys_per_partition, prev) {
            let start = self.cuts.last().map_or(0, |c| c.0);
            if self.hashes.len() - start >= per {
                self.cuts.push((self.hashes.len(), prev.to_vec()));
            }
        }
        self.hashes.push(filter::filter_hash(user_key));
    }

    /// Writes the filter with `write` (which appends one uncompressed block and returns its
    /// handle); `last` is the table's last user key (ends the last partition).
    pub fn finish(
        mut self,
        last: Option<&[u8]>,
        write: &mut dyn FnMut(&[u8]) -> Result<BlockHandle>,
    ) -> Result<WrittenFilter> {
        let with_trailer = |h: BlockHandle| h.size + BLOCK_TRAILER_LEN as u64;
        if self.keys_per_partition.is_none() {
            let handle = write(&filter::build_filter(&self.hashes, self.bits_per_key))?;
            let size = with_trailer(handle);
            return Ok(WrittenFilter { meta_name: META_FILTER, handle, size, partitions: 0 });
        }
        if let Some(last) = last {
            if self.cuts.last().map_or(0, |c| c.0) < self.hashes.len() {
                self.cuts.push((self.hashes.len(), last.to_vec()));
            }
        }
        let mut top = BlockBuilder::new(1);
        let (mut start, mut size) = (0, 0);
        for (end, key) in &self.cuts {
            let part = self.hashes.get(start..*end).unwrap_or(&[]);
            let h = write(&filter::build_filter(part, self.bits_per_key))?;
            size += with_trailer(h);
            top.add(key, &h.encoded());
            start = *end;
        }
        let handle = write(top.finish())?;
        Ok(WrittenFilter {
            meta_name: META_PARTITIONED_FILTER,
            handle,
            size: size + with_trailer(handle),
            partitions: self.cuts.len() as u64,
        })
    }
}
