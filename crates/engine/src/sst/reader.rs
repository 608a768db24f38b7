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
//! Every block fetched is counted in the thread's [`crate::perf`] context by role.

use std::sync::Arc;

use crate::cache::{Cache, CacheHandle};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};

use crate::cache::Priority;
use crate::perf;

use super::block::{Block, BlockIter, BlockRole};
use super::builder::{META_FILTER, META_PROPERTIES, META_RANGEDEL};
use super::filter::filter_hash;
use super::format::{read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN};
use super::table_iter::TableIter;
use super::{properties, TableProperties};

mod multi_get;

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
}

/// An index or filter block: held by the reader, or in the block cache at a handle.
enum MetaBlock {
    Held(CacheHandle<Block>),
    Cached(BlockHandle),
}

/// An open SST file.
pub struct TableReader {
    file: Arc<dyn RandomAccessFile>,
    file_number: u64,
    file_name: Arc<str>,
    block_cache: Option<Arc<dyn Cache<Block>>>,
    index: MetaBlock,
    filter: Option<MetaBlock>,
    props: TableProperties,
    tombstones: FragmentedTombstones,
}

impl TableReader {
    /// Opens and validates the footer, index, filter, range-deletion and properties blocks,
    /// holding the index and filter itself.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_number: u64,
        file_name: String,
        block_cache: Option<Arc<dyn Cache<Block>>>,
    ) -> Result<TableReader> {
        let opts = TableReaderOptions { block_cache, ..Default::default() };
        TableReader::open_with(file, file_number, file_name, opts)
    }

    /// As [`TableReader::open`], with the index and filter placement of `opts`.
    pub fn open_with(
        file: Arc<dyn RandomAccessFile>,
        file_number: u64,
        file_name: String,
        opts: TableReaderOptions,
    ) -> Result<TableReader> {
        let name: Arc<str> = file_name.into();
        let size = file.size();
        let footer_at = size.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(&name, 0, format!("file too short for a footer ({size} bytes)"))
        })?;
        let mut fbuf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_at, &mut fbuf)?;
        let footer = Footer::decode(&fbuf, &name, footer_at)?;

        let load = |h: BlockHandle, role: BlockRole| -> Result<Block> {
            load_block(file.as_ref(), &name, h, role)
        };
        let metaindex = CacheHandle::new(load(footer.metaindex, BlockRole::Other)?);
        let index = load(footer.index, BlockRole::Index)?;

        let (mut filter_h, mut props_h, mut rangedel_h) = (None, None, None);
        let mut it = metaindex.iter();
        it.seek_to_first();
        while it.valid() {
            let h = match BlockHandle::decode(it.value()) {
                Some((h, n)) if n == it.value().len() => h,
                _ => {
                    return Err(Error::corruption(
                        &name,
                        footer.metaindex.offset,
                        "meta-index: bad block handle",
                    ))
                }
            };
            match it.key() {
                k if k == META_FILTER => filter_h = Some(h),
                k if k == META_PROPERTIES => props_h = Some(h),
                k if k == META_RANGEDEL => rangedel_h = Some(h),
                _ => {}
            }
            it.next();
        }
        it.status()?;

        let props_h = props_h.ok_or_else(|| {
            Error::corruption(&name, footer.metaindex.offset, "meta-index: no properties block")
        })?;
        let props_block = CacheHandle::new(load(props_h, BlockRole::Other)?);
        let mut props = properties::decode(&props_block, &name)?;
        props.file_size = size;

        let filter = match filter_h {
            Some(h) => Some(load(h, BlockRole::Filter)?),
            None => None,
        };

        let tombstones = match rangedel_h {
            Some(h) => {
                let b = CacheHandle::new(load(h, BlockRole::Other)?);
                FragmentedTombstones::new(decode_range_dels(&b, &name)?)
            }
            None => FragmentedTombstones::default(),
        };

        let block_cache = opts.block_cache;
        let place = |b: Block, h: BlockHandle| match &block_cache {
            Some(cache) if opts.cache_index_and_filter_blocks => {
                let (key, charge) = ((file_number, h.offset), b.charge());
                if !opts.pin_index_and_filter {
                    cache.insert_with_priority(key, b, charge, Priority::High);
                    return MetaBlock::Cached(h);
                }
                match cache.insert_and_hold(key, b, charge, Priority::High) {
                    Ok(held) => MetaBlock::Held(held),
                    Err(b) => MetaBlock::Held(CacheHandle::new(b)),
                }
            }
            _ => MetaBlock::Held(CacheHandle::new(b)),
        };
        let index = place(index, footer.index);
        let filter = match (filter, filter_h) {
            (Some(f), Some(h)) => Some(place(f, h)),
            _ => None,
        };

        Ok(TableReader {
            file,
            file_number,
            file_name: name,
            block_cache,
            index,
            filter,
            props,
            tombstones,
        })
    }

    /// The newest point entry of `user_key` with sequence `<= seq`, checking the bloom filter
    /// first: `(kind, seq, value)`.
    pub fn get(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, Vec<u8>)>> {
        perf::table_get();
        if let Some(filter) = self.filter_block()? {
            let may = filter.may_contain(filter_hash(user_key));
            perf::bloom_checked(may);
            if !may {
                return Ok(None);
            }
        }
        key::with_seek_key(user_key, seq.min(key::MAX_SEQUENCE), |target| {
            self.get_at(user_key, target, fill_cache)
        })
    }

    /// [`TableReader::get`] past the filter: the entry at or after seek key `target`.
    fn get_at(
        &self,
        user_key: &[u8],
        target: &[u8],
        fill_cache: bool,
    ) -> Result<Option<(ValueKind, SequenceNumber, Vec<u8>)>> {
        let mut index = self.index_block()?.iter();
        self.seek_index(&mut index, target);
        while index.valid() {
            let handle = self.decode_handle(index.value())?;
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
                return Ok(Some((p.kind, p.seq, it.value().to_vec())));
            }
            it.status()?;
            index.next();
        }
        index.status()?;
        Ok(None)
    }

    /// False only if the bloom filter proves `user_key` absent (true if the filter cannot be
    /// read).
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        match self.filter_block() {
            Ok(Some(f)) => f.may_contain(filter_hash(user_key)),
            _ => true,
        }
    }

    /// The index block: held, or from the block cache (read and re-inserted on a miss).
    pub(crate) fn index_block(&self) -> Result<CacheHandle<Block>> {
        match &self.index {
            MetaBlock::Held(b) => Ok(b.clone()),
            MetaBlock::Cached(h) => self.cached_block(*h, BlockRole::Index, true, Priority::High),
        }
    }

    /// The filter block, if the table has one.
    pub(crate) fn filter_block(&self) -> Result<Option<CacheHandle<Block>>> {
        match &self.filter {
            None => Ok(None),
            Some(MetaBlock::Held(b)) => Ok(Some(b.clone())),
            Some(MetaBlock::Cached(h)) => {
                self.cached_block(*h, BlockRole::Filter, true, Priority::High).map(Some)
            }
        }
    }

    /// True if the reader holds its index and filter blocks (not looked up per read).
    pub fn holds_index_and_filter(&self) -> bool {
        matches!(self.index, MetaBlock::Held(_))
    }

    /// An iterator over the point entries, holding the reader alive.
    pub fn iter(self: &Arc<Self>, fill_cache: bool) -> Box<dyn InternalIterator> {
        Box::new(TableIter::new(Arc::clone(self), fill_cache))
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

    /// Approximate byte offset in the file of the data block holding `ikey`.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let Ok(index) = self.index_block() else {
            return self.props.data_size;
        };
        let mut index = index.iter();
        self.seek_index(&mut index, ikey);
        if index.valid() {
            if let Ok(h) = self.decode_handle(index.value()) {
                return h.offset;
            }
        }
        self.props.data_size
    }

    /// Reads every block and checks its checksum.
    pub fn verify_checksums(&self) -> Result<()> {
        for handle in self.data_block_handles()? {
            let block = load_block(self.file.as_ref(), &self.file_name, handle, BlockRole::Data)?;
            let mut it = CacheHandle::new(block).iter();
            it.seek_to_first();
            while it.valid() {
                if key::parse_internal_key(it.key()).is_none() {
                    return Err(Error::corruption(
                        &self.file_name,
                        handle.offset,
                        "malformed internal key",
                    ));
                }
                it.next();
            }
            it.status()?;
        }
        Ok(())
    }

    /// The handles of the data blocks, in key order (for tools such as `sst_dump`).
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>> {
        let mut out = Vec::new();
        let mut index = self.index_block()?.iter();
        index.seek_to_first();
        while index.valid() {
            out.push(self.decode_handle(index.value())?);
            index.next();
        }
        index.status()?;
        Ok(out)
    }

    /// The index entries: each data block's separator (an internal key at or after the
    /// block's last key) with its handle, in key order (for subcompaction boundaries).
    pub fn index_entries(&self) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        let mut out = Vec::new();
        let mut index = self.index_block()?.iter();
        index.seek_to_first();
        while index.valid() {
            let sep = if self.props.index_key_is_user_key {
                key::make_internal_key(index.key(), key::MAX_SEQUENCE, key::KIND_FOR_SEEK)
            } else {
                index.key().to_vec()
            };
            out.push((sep, self.decode_handle(index.value())?));
            index.next();
        }
        index.status()?;
        Ok(out)
    }

    /// True if the table has a bloom filter.
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// Positions `index` (an iterator over this table's index block) at the first data block
    /// that can hold internal key `target`: by user key if the index has user keys (format
    /// version 2), else by internal key.
    #[inline]
    pub(crate) fn seek_index(&self, index: &mut BlockIter, target: &[u8]) {
        if self.props.index_key_is_user_key {
            index.seek_bytewise(key::user_key(target));
        } else {
            index.seek(target);
        }
    }

    /// A new iterator over the index block (invalid with the error if it cannot be read).
    pub(crate) fn index_iter(&self) -> BlockIter {
        match self.index_block() {
            Ok(b) => b.iter(),
            Err(e) => BlockIter::failed(e),
        }
    }

    /// Decodes an index entry's value.
    pub(crate) fn decode_handle(&self, v: &[u8]) -> Result<BlockHandle> {
        match BlockHandle::decode(v) {
            Some((h, n)) if n == v.len() => Ok(h),
            _ => Err(Error::corruption(
                &self.file_name,
                self.index_offset(),
                "index: bad block handle",
            )),
        }
    }

    fn index_offset(&self) -> u64 {
        match &self.index {
            MetaBlock::Held(b) => b.offset(),
            MetaBlock::Cached(h) => h.offset,
        }
    }

    /// The data block at `handle`, from the block cache if present.
    pub(crate) fn data_block(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
    ) -> Result<CacheHandle<Block>> {
        self.cached_block(handle, BlockRole::Data, fill_cache, Priority::Low)
    }

    /// Looks the block at `handle` up in the block cache (counting a hit or miss of `role`),
    /// reading it on a miss and inserting it if `fill_cache`.
    fn cached_block(
        &self,
        handle: BlockHandle,
        role: BlockRole,
        fill_cache: bool,
        pri: Priority,
    ) -> Result<CacheHandle<Block>> {
        let key = (self.file_number, handle.offset);
        if let Some(cache) = &self.block_cache {
            if let Some(b) = cache.lookup(key) {
                perf::cache_hit(role);
                return Ok(b);
            }
            perf::cache_miss(role);
        }
        let block = load_block(self.file.as_ref(), &self.file_name, handle, role)?;
        Ok(if fill_cache { self.insert_block(block, handle, pri) } else { CacheHandle::new(block) })
    }

    /// Inserts `block` into the block cache (if any) and returns a handle to it; a block the
    /// cache refuses is returned uncached.
    fn insert_block(&self, block: Block, handle: BlockHandle, pri: Priority) -> CacheHandle<Block> {
        let Some(cache) = &self.block_cache else { return CacheHandle::new(block) };
        let (key, charge) = ((self.file_number, handle.offset), block.charge());
        cache.insert_and_hold(key, block, charge, pri).unwrap_or_else(CacheHandle::new)
    }
}

/// Reads, verifies and wraps the block at `handle`, counting the read in the perf context.
fn load_block(
    file: &dyn RandomAccessFile,
    name: &Arc<str>,
    handle: BlockHandle,
    role: BlockRole,
) -> Result<Block> {
    let data = read_block(file, name, handle)?;
    perf::block_read(role, handle.size + BLOCK_TRAILER_LEN as u64);
    Block::with_role(data, Arc::clone(name), handle.offset, role)
}

fn decode_range_dels(block: &CacheHandle<Block>, file: &str) -> Result<Vec<RangeTombstone>> {
    let mut out = Vec::new();
    let mut it = block.iter();
    it.seek_to_first();
    while it.valid() {
        match key::parse_internal_key(it.key()) {
            Some(p) if p.kind == ValueKind::RangeDelete => out.push(RangeTombstone {
                start: p.user_key.to_vec(),
                end: it.value().to_vec(),
                seq: p.seq,
            }),
            _ => {
                return Err(Error::corruption(
                    file,
                    block.offset(),
                    "range-deletion block: bad tombstone key",
                ))
            }
        }
        it.next();
    }
    it.status()?;
    Ok(out)
}
