//! [`TableBuilder`]: writes one SST file front to back (flush and compaction jobs call it, one
//! builder per output file, no locking). Blocks are compressed, trailed and appended as they fill;
//! `finish` writes the meta blocks and the footer and syncs. An error leaves the builder unusable
//! (every later call returns an error) and the file partial: the caller deletes it.

use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::iter::range_del::RangeTombstone;
use crate::key::{self, compare_internal, ValueKind, MAX_SEQUENCE};
use crate::options::CompressionType;

use super::block_builder::BlockBuilder;
use super::filter_builder::FilterBuilder;
use super::format::{format_version_for, put_trailer, BlockHandle, Footer, BLOCK_TRAILER_LEN};
use super::index_builder::IndexBuilder;
use super::{compression, properties, TableBuilderOptions, TableProperties};

/// Meta-index names.
pub(crate) const META_PROPERTIES: &[u8] = b"properties";
pub(crate) const META_RANGEDEL: &[u8] = b"rangedel";

/// Largest `key.len() + value.len()` of one entry (larger entries are refused).
pub const MAX_ENTRY_LEN: usize = 1 << 30;

/// Writes one SST file. Keys must be added in strictly increasing internal-key order.
pub struct TableBuilder {
    opts: TableBuilderOptions,
    file: Box<dyn WritableFile>,
    file_name: String,
    offset: u64,
    data_block: BlockBuilder,
    index: IndexBuilder,
    filter: Option<FilterBuilder>,
    last_key: Vec<u8>,
    pending_handle: Option<BlockHandle>,
    range_dels: Vec<RangeTombstone>,
    props: TableProperties,
    scratch: Vec<u8>,
    /// The compressed-block buffer and the Snappy and zstd state, kept across blocks.
    compressor: compression::BlockCompressor,
    failed: bool,
    /// `block_size` less `block_size_deviation` percent (rounded up): a data block past it is
    /// closed before an entry that would take it past `block_size`. `None`: deviation 0.
    deviation_limit: Option<usize>,
}

impl TableBuilder {
    /// Starts a table written to `file`; `file_name` is used in errors.
    /// `block_size` is clamped to 1 GiB so that every block's offsets fit the format's fixed32.
    pub fn new(
        mut opts: TableBuilderOptions,
        file: Box<dyn WritableFile>,
        file_name: String,
    ) -> Self {
        opts.block_size = opts.block_size.min(1 << 30);
        let deviation = opts.block_size_deviation.min(100) as usize;
        let deviation_limit =
            (deviation > 0).then(|| (opts.block_size * (100 - deviation)).div_ceil(100));
        let restart = opts.block_restart_interval;
        let compressor = compression::BlockCompressor::new(opts.compression_level);
        let offset = file.size();
        let filter = (opts.bloom_bits_per_key > 0).then(|| {
            let part = opts.partition_filters.then_some(opts.metadata_block_size);
            FilterBuilder::new(opts.bloom_bits_per_key, part)
        });
        TableBuilder {
            opts,
            file,
            file_name,
            offset,
            data_block: BlockBuilder::new(restart),
            index: IndexBuilder::new(),
            filter,
            last_key: Vec::new(),
            pending_handle: None,
            range_dels: Vec::new(),
            props: TableProperties { smallest_seq: u64::MAX, ..Default::default() },
            scratch: Vec::new(),
            compressor,
            failed: false,
            deviation_limit,
        }
    }

    fn check_ok(&self) -> Result<()> {
        if self.failed {
            return Err(Error::InvalidArgument(format!(
                "table builder for {} already failed",
                self.file_name
            )));
        }
        Ok(())
    }

    fn note_seq(&mut self, seq: u64) {
        self.props.smallest_seq = self.props.smallest_seq.min(seq);
        self.props.largest_seq = self.props.largest_seq.max(seq);
    }

    /// Adds a point entry.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.check_ok()?;
        let Some(parsed) = key::parse_internal_key(ikey) else {
            return Err(Error::InvalidArgument(format!(
                "{}: malformed internal key",
                self.file_name
            )));
        };
        if ikey.len().saturating_add(value.len()) > MAX_ENTRY_LEN {
            return Err(Error::InvalidArgument(format!(
                "{}: entry of {} bytes exceeds the 1 GiB limit",
                self.file_name,
                ikey.len().saturating_add(value.len())
            )));
        }
        if self.props.num_entries > 0
            && compare_internal(&self.last_key, ikey) != std::cmp::Ordering::Less
        {
            return Err(Error::InvalidArgument(format!(
                "{}: keys added out of order",
                self.file_name
            )));
        }
        if self.block_almost_full(ikey, value) {
            self.flush_data_block()?;
        }
        let first = self.props.num_entries == 0;
        let new_user_key = first || key::user_key(&self.last_key) != parsed.user_key;
        if let Some(handle) = self.pending_handle.take() {
            let sep = shortest_separator(&self.last_key, ikey);
            self.index.add(sep, handle, !new_user_key);
        }
        if let Some(f) = &mut self.filter {
            if new_user_key {
                let prev = (!first).then(|| key::user_key(&self.last_key));
                f.add(parsed.user_key, prev);
            }
        }
        if self.props.num_entries == 0 {
            self.props.smallest_point_key = ikey.to_vec();
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        self.props.num_entries += 1;
        if matches!(parsed.kind, ValueKind::Delete | ValueKind::SingleDelete) {
            self.props.num_deletions += 1;
        }
        self.props.raw_key_size += ikey.len() as u64;
        self.props.raw_value_size += value.len() as u64;
        self.note_seq(parsed.seq);
        self.data_block.add(ikey, value);
        if self.data_block.size_estimate() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Adds a range tombstone (any order; stored in the range-deletion block).
    pub fn add_range_tombstone(&mut self, t: &RangeTombstone) -> Result<()> {
        self.check_ok()?;
        if t.seq > MAX_SEQUENCE {
            return Err(Error::InvalidArgument(format!("{}: sequence too large", self.file_name)));
        }
        self.note_seq(t.seq);
        self.props.num_range_deletions += 1;
        self.range_dels.push(t.clone());
        Ok(())
    }

    /// Point entries added.
    pub fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    /// Estimated size of the file if finished now.
    pub fn file_size_estimate(&self) -> u64 {
        self.offset + self.data_block.size_estimate() as u64
    }

    /// True if the data block should be closed before `ikey`/`value` join it: it is within
    /// `block_size_deviation` percent of `block_size` and the entry would take it past
    /// `block_size` (RocksDB's `FlushBlockBySizePolicy::BlockAlmostFull`; a block that reached
    /// `block_size` was closed after its last entry).
    fn block_almost_full(&self, ikey: &[u8], value: &[u8]) -> bool {
        let Some(limit) = self.deviation_limit else { return false };
        !self.data_block.is_empty()
            && self.data_block.size_estimate() > limit
            && self.data_block.size_estimate_after(ikey, value) > self.opts.block_size
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let mut block = std::mem::replace(&mut self.data_block, BlockBuilder::new(1));
        let r = self.write_block(block.finish(), self.opts.compression);
        block.reset();
        self.data_block = block;
        let handle = r?;
        self.props.num_data_blocks += 1;
        self.props.data_size += handle.size + BLOCK_TRAILER_LEN as u64;
        self.pending_handle = Some(handle);
        Ok(())
    }

    /// Compresses (if worthwhile), appends the block and its trailer, returns its handle.
    fn write_block(&mut self, raw: &[u8], ctype: CompressionType) -> Result<BlockHandle> {
        let (body, ctype) = match self.compressor.compress(ctype, raw) {
            Some(c) => (c, ctype),
            None => (raw, CompressionType::None),
        };
        let handle = BlockHandle { offset: self.offset, size: body.len() as u64 };
        self.scratch.clear();
        put_trailer(&mut self.scratch, body, ctype, handle.offset, self.opts.checksum);
        let r = self.file.append(body).and_then(|()| self.file.append(&self.scratch));
        if let Err(e) = r {
            self.failed = true;
            return Err(e);
        }
        self.offset += body.len() as u64 + BLOCK_TRAILER_LEN as u64;
        Ok(handle)
    }

    /// Writes the filter, range-deletion, index, properties and meta-index blocks and the
    /// footer, then syncs the file.
    pub fn finish(mut self) -> Result<TableProperties> {
        self.check_ok()?;
        self.flush_data_block()?;
        if let Some(handle) = self.pending_handle.take() {
            self.index.add(shortest_successor(&self.last_key), handle, false);
        }
        let mut meta: Vec<(&[u8], BlockHandle)> = Vec::new();
        let write_meta = |b: &mut Self, block: &[u8]| b.write_block(block, CompressionType::None);

        if let Some(f) = self.filter.take() {
            let last = (self.props.num_entries > 0).then(|| self.last_key.clone());
            let last = last.as_deref().map(key::user_key);
            let w = f.finish(last, &mut |block| write_meta(&mut self, block))?;
            self.props.filter_size = w.size;
            self.props.filter_partitions = w.partitions;
            meta.push((w.meta_name, w.handle));
        }

        if !self.range_dels.is_empty() {
            let mut ts = std::mem::take(&mut self.range_dels);
            let mut keyed: Vec<(Vec<u8>, Vec<u8>)> = ts
                .drain(..)
                .map(|t| (key::make_internal_key(&t.start, t.seq, ValueKind::RangeDelete), t.end))
                .collect();
            keyed.sort_by(|a, b| compare_internal(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
            let mut b = BlockBuilder::new(self.opts.block_restart_interval);
            for (k, v) in &keyed {
                b.add(k, v);
            }
            let h = self.write_block(b.finish(), CompressionType::None)?;
            meta.push((META_RANGEDEL, h));
        }

        let index = std::mem::take(&mut self.index);
        let partition = self.opts.partitioned_index.then_some(self.opts.metadata_block_size);
        let w = index.finish(partition, &mut |block| write_meta(&mut self, block))?;
        let index_handle = w.handle;
        self.props.index_size = w.size;
        self.props.index_key_is_user_key = w.user_keys;
        self.props.partitioned_index = self.opts.partitioned_index;
        self.props.index_partitions = w.partitions;
        self.props.top_level_index_size = w.top_level_size;

        if self.props.num_entries == 0 && self.props.num_range_deletions == 0 {
            self.props.smallest_seq = 0;
        }
        self.props.compression = Some(self.opts.compression);
        self.props.largest_point_key =
            if self.props.num_entries > 0 { self.last_key.clone() } else { Vec::new() };
        let encoded_props = properties::encode(&self.props);
        let h = self.write_block(&encoded_props, CompressionType::None)?;
        meta.push((META_PROPERTIES, h));

        meta.sort_by(|a, b| a.0.cmp(b.0));
        let mut mb = BlockBuilder::new(1);
        for (name, h) in &meta {
            mb.add(name, &h.encoded());
        }
        let metaindex_handle = self.write_block(mb.finish(), CompressionType::None)?;

        // Version 4 for XXH3 checksums; with crc32c, version 3 only where its blocks are used, so
        // version-2 readers refuse exactly the files they would misread.
        let partitioned = self.opts.partitioned_index
            || self.props.filter_partitions > 0
            || meta.iter().any(|m| m.0 == super::filter_builder::META_PARTITIONED_FILTER);
        let version = format_version_for(self.opts.checksum, partitioned);
        let footer = Footer { metaindex: metaindex_handle, index: index_handle, version }.encode();
        self.file.append(&footer)?;
        self.offset += footer.len() as u64;
        self.file.sync()?;
        self.props.file_size = self.offset;
        Ok(self.props)
    }
}

/// A key `k` with `last <= k < next` (both internal keys, `last < next`), short if possible:
/// when the user keys differ, the shortest user key `s` with `user(last) < s < user(next)`,
/// with the largest trailer (so `k` sorts before every entry of `s`). As RocksDB's bytewise
/// `FindShortestSeparator`: increment the first differing byte of `last` if that stays below
/// `next`; else keep it and increment the first later byte of `last` that is not 0xff.
pub fn shortest_separator(last: &[u8], next: &[u8]) -> Vec<u8> {
    let (a, b) = (key::user_key(last), key::user_key(next));
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if common >= a.len().min(b.len()) {
        // One user key is a prefix of the other (or they are equal): nothing shorter fits.
        return last.to_vec();
    }
    let (Some(&x), Some(&y)) = (a.get(common), b.get(common)) else {
        return last.to_vec();
    };
    if x < 0xff && x + 1 < y {
        let mut sep = a[..=common].to_vec();
        sep[common] += 1;
        return key::make_internal_key(&sep, MAX_SEQUENCE, key::KIND_FOR_SEEK);
    }
    // `a[..=common]` is below `b` (its last byte is smaller); any key extending it is too. The
    // first later byte of `a` that can grow gives the shortest key above `a` with that prefix.
    for i in common + 1..a.len() {
        if a[i] < 0xff {
            let mut sep = a[..=i].to_vec();
            sep[i] += 1;
            return key::make_internal_key(&sep, MAX_SEQUENCE, key::KIND_FOR_SEEK);
        }
    }
    last.to_vec()
}

/// A short key `k >= last` for the index entry of the last block.
pub fn shortest_successor(last: &[u8]) -> Vec<u8> {
    let a = key::user_key(last);
    for (i, &x) in a.iter().enumerate() {
        if x != 0xff {
            let mut s = a.get(..=i).unwrap_or(a).to_vec();
            if let Some(l) = s.last_mut() {
                *l += 1;
            }
            return key::make_internal_key(&s, MAX_SEQUENCE, key::KIND_FOR_SEEK);
        }
    }
    last.to_vec()
}
