//! Block-based SST files: the builder that writes them and the reader that serves point lookups
//! and iterators from them. Byte layout: `docs/format/sst.md`.
//!
//! Module map: [`block`] (decoded block + iterator), [`block_builder`],
//! [`format`](mod@format) (handles, trailer, footer, checksums), [`compression`], [`filter`]
//! (bloom), [`properties`], [`builder`] ([`TableBuilder`]), [`reader`] ([`TableReader`]),
//! [`table_iter`] (two-level iterator). Builders are single-threaded; readers are immutable and shared between threads.
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
//!     block_restart_interval: 16,
//!     bloom_bits_per_key: 10,
//!     compression: CompressionType::Lz4,
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
use crate::options::CompressionType;

pub mod block;
pub mod block_builder;
pub mod builder;
pub mod compression;
pub mod file_writer;
pub mod filter;
pub mod format;
pub mod properties;
pub mod reader;
pub mod table_iter;
mod table_meta;

#[cfg(test)]
mod tests;

pub use block::{Block, BlockIter, BlockRole, BlockSlice};
pub use builder::TableBuilder;
pub use file_writer::{ExternalSstFileInfo, SstFileWriter};
pub use reader::TableReader;

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
    /// The index block's keys are user keys (format version 2; no user key's entries span two
    /// data blocks), not internal keys.
    pub index_key_is_user_key: bool,
}
