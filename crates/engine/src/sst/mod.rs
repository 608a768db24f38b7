//! Block-based SST files: the builder that writes them and the reader that serves point lookups
//! and iterators from them. Byte layout: `docs/format/sst.md`.
//!
//! Module map: [`block`] (decoded block + iterator), [`block_builder`],
//! [`format`](mod@format) (handles, trailer, footer), [`checksum`] (block checksums by the
//! footer's version: crc32c or XXH3), [`compression`], [`filter`]
//! (bloom), [`properties`], [`builder`] ([`TableBuilder`]) with [`index_builder`] and
//! [`filter_builder`] (one block, or partitions under a top-level block), [`reader`]
//! ([`TableReader`]) with [`index_iter`] (one index block or a two-level index, walked as one),
//! [`prefetch`] (readahead for iterators and compaction), [`table_iter`] (two-level iterator).
//! Builders are single-threaded; readers are immutable and shared between threads.
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use talus::fs::{Fs, StdFs};
//! use talus::key::{make_internal_key, ValueKind};
//! use talus::sst::{TableBuilder, TableBuilderOptions, TableReader};
//! use talus::CompressionType;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("000001.sst");
//! let opts = TableBuilderOptions {
//!     block_size: 4096,
//!     bloom_bits_per_key: 10,
//!     compression: CompressionType::Lz4,
//!     ..Default::default()
//! };
//! let mut b = TableBuilder::new(opts, StdFs.create(&path).unwrap(), "000001.sst".into());
//! b.add(&make_internal_key(b"apple", 7, ValueKind::Put), b"red").unwrap();
//! b.add(&make_internal_key(b"apple", 3, ValueKind::Put), b"green").unwrap();
//! let props = b.finish().unwrap();
//! assert_eq!(props.num_entries, 2);
//!
//! let r = TableReader::open(StdFs.open_random(&path).unwrap(), 1, "000001.sst".into(), None)
//!     .unwrap();
//! assert_eq!(r.get(b"apple", 5, true).unwrap(), Some((ValueKind::Put, 3, b"green".to_vec())));
//! assert_eq!(r.get(b"apple", 2, true).unwrap(), None);
//! let r = Arc::new(r);
//! let mut it = r.iter(true);
//! it.seek_to_first();
//! assert_eq!(it.value(), b"red");
//! ```

use crate::key::SequenceNumber;
use crate::options::{ChecksumType, CompressionType};

pub mod block;
pub mod block_builder;
pub mod block_cache_ref;
pub mod builder;
pub mod cache_stats;
pub mod checksum;
pub mod compression;
pub mod file_writer;
pub mod filter;
pub mod filter_builder;
pub mod format;
pub mod index_builder;
pub mod index_iter;
pub mod prefetch;
pub mod properties;
pub mod reader;
pub mod table_iter;
mod table_meta;

#[cfg(test)]
mod tests;

pub use block::{Block, BlockIter, BlockRef, BlockRole, BlockSlice};
pub use block_cache_ref::SharedBlockCache;
pub use builder::TableBuilder;
pub use cache_stats::BlockCacheStats;
pub use file_writer::{ExternalSstFileInfo, SstFileWriter};
pub use reader::TableReader;

/// What the builder needs to know.
#[derive(Debug, Clone)]
pub struct TableBuilderOptions {
    /// Target uncompressed size of a data block.
    pub block_size: usize,
    /// Keys between restart points.
    pub block_restart_interval: usize,
    /// Close a data block early, before the entry that would take it past `block_size`, once
    /// it is within this many percent of `block_size` (RocksDB's `block_size_deviation`; 0:
    /// blocks are cut only on reaching `block_size`).
    pub block_size_deviation: u32,
    /// Bloom bits per key (0: no filter).
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks.
    pub compression: CompressionType,
    /// The compressor's level ([`crate::DEFAULT_COMPRESSION_LEVEL`]: the library's default).
    pub compression_level: i32,
    /// Block checksum, and with it the format version: 4 for `Xxh3`; for `Crc32c`, 3 with a
    /// partitioned index or filter, else 2.
    pub checksum: ChecksumType,
    /// Write the index as partitions of about `metadata_block_size` bytes under a top-level
    /// index (RocksDB's `kTwoLevelIndexSearch`; format version 3 or later).
    pub partitioned_index: bool,
    /// Write the bloom filter as partitions of about `metadata_block_size` bytes under a
    /// top-level filter index (RocksDB's `partition_filters`; format version 3 or later).
    pub partition_filters: bool,
    /// Target size of an index or filter partition (RocksDB's `metadata_block_size`).
    pub metadata_block_size: usize,
}

impl Default for TableBuilderOptions {
    /// The engine's defaults: 4 KiB blocks closed early within 10% of that, restarts every 16
    /// keys, 10 bloom bits per key, no compression, XXH3 block checksums (format version 4),
    /// one index block and one filter block.
    fn default() -> Self {
        TableBuilderOptions {
            block_size: 4096,
            block_restart_interval: 16,
            block_size_deviation: 10,
            bloom_bits_per_key: 10,
            compression: CompressionType::None,
            compression_level: crate::options::DEFAULT_COMPRESSION_LEVEL,
            checksum: ChecksumType::Xxh3,
            partitioned_index: false,
            partition_filters: false,
            metadata_block_size: 4096,
        }
    }
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
    /// Bytes of the index on disk: the index block, or every partition and the top-level index
    /// (with trailers).
    pub index_size: u64,
    /// Bytes of the filter on disk: the filter block, or every partition and the top-level
    /// filter index (with trailers).
    pub filter_size: u64,
    /// The index is partitioned under a top-level index (`talus.index.type` = 2, RocksDB's
    /// `kTwoLevelIndexSearch`).
    pub partitioned_index: bool,
    /// Index partitions (0 unless partitioned).
    pub index_partitions: u64,
    /// Bytes of the top-level index block with its trailer (0 unless partitioned).
    pub top_level_index_size: u64,
    /// Filter partitions (0 unless the filter is partitioned).
    pub filter_partitions: u64,
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
    /// The index block's keys are user keys (format version 2; no user key's entries span two
    /// data blocks), not internal keys.
    pub index_key_is_user_key: bool,
}
