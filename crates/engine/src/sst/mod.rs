//! Block-based SST files: the builder that writes them and the reader that serves point lookups
//! and iterators from them. Byte layout: `docs/format/sst.md`.
//!
//! STUB: interface fixed by the skeleton; the implementation lands separately.

use std::sync::Arc;

use crate::cache::Cache;
use crate::error::Result;
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{SequenceNumber, ValueKind};
use crate::options::CompressionType;

pub mod block;

pub use block::Block;

/// What the builder needs to know.
#[derive(Debug, Clone)]
pub struct TableBuilderOptions {
    /// Target uncompressed size of a data block.
    pub block_size: usize,
    /// Keys between restart points.
    pub block_restart_interval: usize,
    /// Bloom bits per key (0: no filter).
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks.
    pub compression: CompressionType,
}

/// Statistics of a finished table, stored in its properties block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableProperties {
    /// Point entries (puts and deletes).
    pub num_entries: u64,
    /// Point deletions.
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// Sum of internal key lengths.
    pub raw_key_size: u64,
    /// Sum of value lengths.
    pub raw_value_size: u64,
    /// Bytes of data blocks on disk (with trailers).
    pub data_size: u64,
    /// Bytes of the index block on disk.
    pub index_size: u64,
    /// Bytes of the filter block on disk.
    pub filter_size: u64,
    /// Number of data blocks.
    pub num_data_blocks: u64,
    /// Smallest sequence number of any entry (point or range).
    pub smallest_seq: SequenceNumber,
    /// Largest sequence number of any entry (point or range).
    pub largest_seq: SequenceNumber,
    /// Compression of the data blocks.
    pub compression: Option<CompressionType>,
    /// Total file size.
    pub file_size: u64,
    /// Smallest internal key of any point entry (empty if none).
    pub smallest_point_key: Vec<u8>,
    /// Largest internal key of any point entry (empty if none).
    pub largest_point_key: Vec<u8>,
}

/// Writes one SST file. Keys must be added in strictly increasing internal-key order.
pub struct TableBuilder {}

impl TableBuilder {
    /// Starts a table written to `file`; `file_name` is used in errors.
    pub fn new(opts: TableBuilderOptions, file: Box<dyn WritableFile>, file_name: String) -> Self {
        let _ = (opts, file, file_name);
        todo!()
    }
    /// Adds a point entry.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let _ = (ikey, value);
        todo!()
    }
    /// Adds a range tombstone (any order; stored in the range-deletion block).
    pub fn add_range_tombstone(&mut self, t: &RangeTombstone) -> Result<()> {
        let _ = t;
        todo!()
    }
    /// Point entries added.
    pub fn num_entries(&self) -> u64 {
        todo!()
    }
    /// Estimated size of the file if finished now.
    pub fn file_size_estimate(&self) -> u64 {
        todo!()
    }
    /// Writes the filter, range-deletion, index, properties and meta-index blocks and the footer,
    /// then syncs the file.
    pub fn finish(self) -> Result<TableProperties> {
        todo!()
    }
}

/// An open SST file.
pub struct TableReader {}

impl TableReader {
    /// Opens and validates the footer, index, filter, range-deletion and properties blocks.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_number: u64,
        file_name: String,
        block_cache: Option<Arc<dyn Cache<Block>>>,
    ) -> Result<TableReader> {
        let _ = (file, file_number, file_name, block_cache);
        todo!()
    }
    /// The newest point entry of `user_key` with sequence `<= seq`, checking the bloom filter
    /// first: `(kind, seq, value)`.
    pub fn get(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, Vec<u8>)>> {
        let _ = (user_key, seq, fill_cache);
        todo!()
    }
    /// False only if the bloom filter proves `user_key` absent.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let _ = user_key;
        todo!()
    }
    /// An iterator over the point entries, holding the reader alive.
    pub fn iter(self: &Arc<Self>, fill_cache: bool) -> Box<dyn InternalIterator> {
        let _ = fill_cache;
        todo!()
    }
    /// The file's range tombstones, fragmented.
    pub fn range_tombstones(&self) -> &FragmentedTombstones {
        todo!()
    }
    /// The properties block.
    pub fn properties(&self) -> &TableProperties {
        todo!()
    }
    /// The file number.
    pub fn file_number(&self) -> u64 {
        todo!()
    }
    /// Approximate byte offset in the file of the data block holding `ikey`.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let _ = ikey;
        todo!()
    }
    /// Reads every block and checks its checksum.
    pub fn verify_checksums(&self) -> Result<()> {
        todo!()
    }
}
