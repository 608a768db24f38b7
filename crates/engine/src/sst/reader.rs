//! [`TableReader`]: an open SST file. `open` reads and verifies the footer, meta-index, index,
//! filter, properties and range-deletion blocks; data blocks are read on demand, through the
//! block cache when one is given. A reader is immutable after open and shared (`Arc`) between
//! any number of threads; it takes no locks of its own (the block cache locks its shards).
//!
//! # Index and filter blocks
//!
//! By default ([`TableReaderOptions::cache_index_and_filter_blocks`] false) the reader holds
//! its index and filter blocks itself, outside the block cache and uncharged (RocksDB's
//! default). With it true, `open` inserts them into the block cache with high priority
//! (charged to its capacity) and:
//! * with [`TableReaderOptions::pin_index_and_filter`] the reader keeps an `Arc` of each: the
//!   cache cannot evict them while the reader lives (pinned usage), and lookups never miss;
//! * without it the reader keeps only their handles and looks them up in the cache on every
//!   read (reading and re-inserting them after an eviction), so that they are evictable and
//!   memory stays within the capacity.
//!
//! # Partitioned index and filter (format version 3 and later)
//!
//! A partitioned index or filter has a top-level block (what the footer or the meta-index
//! points at) naming its partitions. Only the top level is placed as above (pinned in the
//! cache when [`TableReaderOptions::pin_top_level_index_and_filter`], RocksDB's default);
//! partitions always go through the block cache like data blocks (high priority, fetched on a
//! miss, inserted if the read fills the cache), so the index and filter of a table no longer
//! have to fit in memory. [`IndexIter`] walks either kind of index.
//!
//! Every block fetched is counted by role in the thread's [`crate::perf`] context and in the
//! database's [`ReadIoStats`] (every file read too).
//!
//! Every block is verified with the block checksum the footer's format version names (crc32c
//! for 1-3, XXH3 for 4; [`Footer::checksum_type`]), taken once at open: the options do not
//! matter, so a database may hold tables of both kinds.
//!
//! `open.rs` opens a table (and places its index and filter), `multi_get.rs` answers batched
//! lookups, `entries.rs` visits every entry of one key (merge reads), `layout.rs` walks a whole table for tools; this file holds the reader and its
//! per-read paths (`get`, the filter probe, the block cache lookups).

use std::sync::Arc;

use crate::cache::{Cache, CacheHandle, Priority};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::range_del::FragmentedTombstones;
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use crate::options::ChecksumType;
use crate::perf::{self, ReadIoStats};

use super::block::{Block, BlockRef, BlockRole, BlockSlice, RestartSeek};
use super::filter::filter_hash;
use super::format::{decode_block, read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN};
use super::index_iter::{IndexIter, IndexSource};
use super::prefetch::Prefetcher;
use super::TableProperties;

mod entries;
mod layout;
mod multi_get;
mod open;

pub use multi_get::MultiGetKey;

/// How a reader treats the block cache.
#[derive(Clone, Default)]
pub struct TableReaderOptions {
    /// The block cache for data blocks (and index/filter blocks if configured).
    pub block_cache: Option<Arc<dyn Cache<Block>>>,
    /// Keep index and filter blocks in the block cache, charged (RocksDB's option).
    pub cache_index_and_filter_blocks: bool,
    /// With `cache_index_and_filter_blocks`: hold them for the reader's lifetime (pinned).
    pub pin_index_and_filter: bool,
    /// With `cache_index_and_filter_blocks`: hold the top level of a partitioned index or
    /// filter for the reader's lifetime (RocksDB's `pin_top_level_index_and_filter`).
    pub pin_top_level_index_and_filter: bool,
    /// Where the reader counts the blocks and bytes it reads (a private counter if `None`).
    pub io_stats: Option<Arc<ReadIoStats>>,
}

/// An index or filter block: held by the reader, or in the block cache at a handle.
enum MetaBlock {
    Held(CacheHandle<Block>),
    Cached(BlockHandle, BlockRole),
}

/// An open SST file.
pub struct TableReader {
    file: Arc<dyn RandomAccessFile>,
    file_number: u64,
    file_name: Arc<str>,
    block_cache: Option<Arc<dyn Cache<Block>>>,
    /// The index block, or the top-level index of a partitioned index.
    index: MetaBlock,
    /// The filter block, or the top-level index of a partitioned filter.
    filter: Option<MetaBlock>,
    partitioned_filter: bool,
    props: TableProperties,
    tombstones: FragmentedTombstones,
    io: Arc<ReadIoStats>,
    /// The decoded footer (its handles, and the format version naming the block checksum).
    footer: Footer,
    /// `footer.checksum_type()`, kept beside the fields every block read uses.
    checksum: ChecksumType,
}

fn bad_handle(name: &str, at: u64, what: &str) -> Error {
    Error::corruption(name, at, format!("{what}: bad block handle"))
}

impl TableReader {
    /// The newest point entry of `user_key` with sequence `<= seq`, checking the bloom filter
    /// first: `(kind, seq, value)`. The value is copied; see [`TableReader::get_pinned`].
    pub fn get(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, Vec<u8>)>> {
        Ok(self.get_pinned(user_key, seq, fill_cache)?.map(|(k, s, v)| (k, s, v.to_vec())))
    }

    /// As [`TableReader::get`], with the value left in its data block, which stays pinned
    /// (in the block cache, if cached) while the returned [`BlockSlice`] lives.
    pub fn get_pinned(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, BlockSlice)>> {
        perf::table_get();
        if let Some(may) = self.filter_check(user_key, filter_hash(user_key), fill_cache)? {
            perf::bloom_checked(may);
            if !may {
                return Ok(None);
            }
        }
        key::with_seek_key(user_key, seq.min(key::MAX_SEQUENCE), |target| {
            self.get_at(user_key, target, fill_cache)
        })
    }

    /// [`TableReader::get_pinned`] past the filter: the entry at or after seek key `target`.
    fn get_at(
        &self,
        user_key: &[u8],
        target: &[u8],
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, BlockSlice)>> {
        let mut index = IndexIter::new(self, fill_cache);
        index.seek(self, target);
        while index.valid() {
            let handle = self.decode_handle(index.value(), index.block_offset())?;
            let block = self.data_block(handle, fill_cache)?;
            let mut it = block.iter();
            it.seek(target);
            if it.valid() {
                let p = key::parse_internal_key(it.key()).ok_or_else(|| {
                    Error::corruption(&self.file_name, handle.offset, "malformed internal key")
                })?;
                if p.user_key != user_key {
                    return Ok(None);
                }
                let (kind, seq) = (p.kind, p.seq);
                return Ok(Some((kind, seq, it.into_value())));
            }
            it.status()?;
            index.next(self);
        }
        index.status()?;
        Ok(None)
    }

    /// The filter's answer for `user_key` (filter hash `h`): `None` if the table has no filter,
    /// `Some(false)` only if the key is certainly absent. A partitioned filter probes the one
    /// partition that can hold the key (a key past the last partition is absent).
    pub(crate) fn filter_check(
        &self,
        user_key: &[u8],
        h: u64,
        fill_cache: bool,
    ) -> Result<Option<bool>> {
        let Some(filter) = self.filter.as_ref() else { return Ok(None) };
        let block = self.meta_block(filter)?;
        if !self.partitioned_filter {
            return Ok(Some(block.may_contain(h)));
        }
        // One probe per table a lookup visits: a binary search of the top level's restart
        // points (its restart interval is 1), an iterator only for another layout.
        let ph = match block.seek_restarts_bytewise(user_key)? {
            RestartSeek::Value(v) => self.decode_handle(v, block.offset())?,
            RestartSeek::PastEnd => return Ok(Some(false)),
            RestartSeek::Scan => {
                let mut top = block.iter();
                top.seek_bytewise(user_key);
                if !top.valid() {
                    top.status()?;
                    return Ok(Some(false));
                }
                self.decode_handle(top.value(), block.offset())?
            }
        };
        let part = self.cached_block(ph, BlockRole::Filter, fill_cache, Priority::High, None)?;
        Ok(Some(part.may_contain(h)))
    }

    /// False only if the bloom filter proves `user_key` absent (true if the filter cannot be
    /// read).
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        !matches!(self.filter_check(user_key, filter_hash(user_key), true), Ok(Some(false)))
    }

    /// A held (borrowed: no reference taken) or cached (read and re-inserted after an
    /// eviction) index/filter block.
    fn meta_block<'a>(&'a self, m: &'a MetaBlock) -> Result<BlockRef<'a>> {
        match m {
            MetaBlock::Held(b) => Ok(BlockRef::Borrowed(b)),
            MetaBlock::Cached(h, role) => {
                self.cached_block(*h, *role, true, Priority::High, None).map(BlockRef::Held)
            }
        }
    }

    /// The index block, or the top-level index of a partitioned index.
    pub(crate) fn index_block(&self) -> Result<BlockRef<'_>> {
        self.meta_block(&self.index)
    }

    /// The index partition at `handle` (a partitioned index), through the block cache.
    pub(crate) fn index_partition(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
    ) -> Result<CacheHandle<Block>> {
        self.cached_block(handle, BlockRole::Index, fill_cache, Priority::High, None)
    }

    /// A cursor over the index entries (of every partition, in order).
    pub fn index_iter(&self, fill_cache: bool) -> IndexIter<'_> {
        IndexIter::new(self, fill_cache)
    }

    /// True if the reader holds its index and filter blocks (not looked up per read).
    pub fn holds_index_and_filter(&self) -> bool {
        matches!(self.index, MetaBlock::Held(_))
    }

    /// The file's range tombstones, fragmented.
    pub fn range_tombstones(&self) -> &FragmentedTombstones {
        &self.tombstones
    }

    /// The properties block.
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The file number.
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// The file name used in errors.
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The footer's format version (1 to 4).
    pub fn format_version(&self) -> u32 {
        self.footer.version
    }

    /// The footer as decoded (and checked) at open.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The block checksum of the file's blocks (named by its format version).
    pub fn checksum_type(&self) -> ChecksumType {
        self.checksum
    }

    /// Approximate byte offset in the file of the data block holding `ikey`.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let mut index = IndexIter::new(self, true);
        index.seek(self, ikey);
        if index.valid() {
            if let Ok(h) = self.decode_handle(index.value(), index.block_offset()) {
                return h.offset;
            }
        }
        self.props.data_size
    }

    /// True if the table has a bloom filter.
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// True if the table's bloom filter is partitioned.
    pub fn has_partitioned_filter(&self) -> bool {
        self.partitioned_filter
    }

    /// Decodes an index entry's value found in the index block at `block_offset`.
    pub(crate) fn decode_handle(&self, v: &[u8], block_offset: u64) -> Result<BlockHandle> {
        match BlockHandle::decode(v) {
            Some((h, n)) if n == v.len() => Ok(h),
            _ => Err(bad_handle(&self.file_name, block_offset, "index")),
        }
    }

    /// The data block at `handle`, from the block cache if present.
    pub(crate) fn data_block(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
    ) -> Result<CacheHandle<Block>> {
        self.cached_block(handle, BlockRole::Data, fill_cache, Priority::Low, None)
    }

    /// As [`TableReader::data_block`], a miss read through `prefetch` (readahead).
    pub(crate) fn data_block_prefetched(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
        prefetch: &mut Prefetcher,
    ) -> Result<CacheHandle<Block>> {
        self.cached_block(handle, BlockRole::Data, fill_cache, Priority::Low, Some(prefetch))
    }

    /// Looks the block at `handle` up in the block cache (counting a hit or miss of `role`),
    /// reading it on a miss (through `prefetch` if given) and inserting it if `fill_cache`.
    fn cached_block(
        &self,
        handle: BlockHandle,
        role: BlockRole,
        fill_cache: bool,
        pri: Priority,
        prefetch: Option<&mut Prefetcher>,
    ) -> Result<CacheHandle<Block>> {
        let key = (self.file_number, handle.offset);
        if let Some(cache) = &self.block_cache {
            if let Some(b) = cache.lookup(key) {
                perf::cache_hit(role);
                if let Some(p) = prefetch {
                    p.seen(handle);
                }
                return Ok(b);
            }
            perf::cache_miss(role);
        }
        let block = match prefetch {
            Some(p) => {
                let raw = p.read(self.file.as_ref(), &self.file_name, handle, &self.io)?;
                let data = decode_block(raw, &self.file_name, handle, self.checksum)?;
                self.io.block_read(role, handle.size + BLOCK_TRAILER_LEN as u64);
                Block::with_role(data, Arc::clone(&self.file_name), handle.offset, role)?
            }
            None => self.load(handle, role)?,
        };
        Ok(if fill_cache { self.insert_block(block, handle, pri) } else { CacheHandle::new(block) })
    }

    /// Reads, verifies and wraps the block at `handle` (one file read), counting it.
    fn load(&self, handle: BlockHandle, role: BlockRole) -> Result<Block> {
        load_block(self.file.as_ref(), &self.file_name, handle, self.checksum, role, &self.io)
    }

    /// Inserts `block` into the block cache (if any) and returns a handle to it; a block the
    /// cache refuses is returned uncached.
    fn insert_block(&self, block: Block, handle: BlockHandle, pri: Priority) -> CacheHandle<Block> {
        let Some(cache) = &self.block_cache else { return CacheHandle::new(block) };
        let (key, charge) = ((self.file_number, handle.offset), block.charge());
        cache.insert_and_hold(key, block, charge, pri).unwrap_or_else(CacheHandle::new)
    }
}

/// Reads, verifies (block checksum `checksum`) and wraps the block at `handle`, counting the
/// read in `io` and the perf context.
fn load_block(
    file: &dyn RandomAccessFile,
    name: &Arc<str>,
    handle: BlockHandle,
    checksum: ChecksumType,
    role: BlockRole,
    io: &ReadIoStats,
) -> Result<Block> {
    let data = read_block(file, name, handle, checksum)?;
    let stored = handle.size + BLOCK_TRAILER_LEN as u64;
    io.file_read(stored);
    io.block_read(role, stored);
    Block::with_role(data, Arc::clone(name), handle.offset, role)
}

impl IndexSource for TableReader {
    fn properties(&self) -> &TableProperties {
        TableReader::properties(self)
    }
    fn index_block(&self) -> Result<BlockRef<'_>> {
        TableReader::index_block(self)
    }
    fn index_partition(&self, handle: BlockHandle, fill_cache: bool) -> Result<CacheHandle<Block>> {
        TableReader::index_partition(self, handle, fill_cache)
    }
    fn file_name(&self) -> &str {
        TableReader::file_name(self)
    }
}
