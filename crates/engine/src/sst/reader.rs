//! [`TableReader`]: an open SST file. `open` reads and verifies the footer, meta-index, index,
//! filter, properties and range-deletion blocks and keeps them in memory; data blocks are read on
//! demand, through the block cache when one is given. A reader is immutable after open and
//! shared (`Arc`) between any number of threads; it takes no locks of its own (the block cache
//! locks its shards).

use std::sync::Arc;

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};

use super::block::{Block, BlockIter};
use super::builder::{META_FILTER, META_PROPERTIES, META_RANGEDEL};
use super::filter::BloomFilter;
use super::format::{read_block, BlockHandle, Footer, FOOTER_LEN};
use super::table_iter::TableIter;
use super::{properties, TableProperties};

/// An open SST file.
pub struct TableReader {
    file: Arc<dyn RandomAccessFile>,
    file_number: u64,
    file_name: Arc<str>,
    block_cache: Option<Arc<dyn Cache<Block>>>,
    index: Arc<Block>,
    filter: Option<BloomFilter>,
    props: TableProperties,
    tombstones: FragmentedTombstones,
}

impl TableReader {
    /// Opens and validates the footer, index, filter, range-deletion and properties blocks.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_number: u64,
        file_name: String,
        block_cache: Option<Arc<dyn Cache<Block>>>,
    ) -> Result<TableReader> {
        let name: Arc<str> = file_name.into();
        let size = file.size();
        let footer_at = size.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(&name, 0, format!("file too short for a footer ({size} bytes)"))
        })?;
        let mut fbuf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_at, &mut fbuf)?;
        let footer = Footer::decode(&fbuf, &name, footer_at)?;

        let load = |h: BlockHandle| -> Result<Arc<Block>> {
            let data = read_block(file.as_ref(), &name, h)?;
            Ok(Arc::new(Block::new(data, Arc::clone(&name), h.offset)?))
        };
        let metaindex = load(footer.metaindex)?;
        let index = load(footer.index)?;

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
        let mut props = properties::decode(&load(props_h)?, &name)?;
        props.file_size = size;

        let filter = match filter_h {
            Some(h) => {
                let data = read_block(file.as_ref(), &name, h)?;
                Some(BloomFilter::new(data, &name, h.offset)?)
            }
            None => None,
        };

        let tombstones = match rangedel_h {
            Some(h) => FragmentedTombstones::new(decode_range_dels(&load(h)?, &name)?),
            None => FragmentedTombstones::default(),
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
        if !self.may_contain(user_key) {
            return Ok(None);
        }
        let target = key::seek_key(user_key, seq.min(key::MAX_SEQUENCE));
        let mut index = self.index.iter();
        index.seek(&target);
        while index.valid() {
            let handle = self.decode_handle(index.value())?;
            let block = self.data_block(handle, fill_cache)?;
            let mut it = block.iter();
            it.seek(&target);
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

    /// False only if the bloom filter proves `user_key` absent.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.filter.as_ref().is_none_or(|f| f.may_contain(user_key))
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
        let mut index = self.index.iter();
        index.seek(ikey);
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
            let data = read_block(self.file.as_ref(), &self.file_name, handle)?;
            let block = Arc::new(Block::new(data, Arc::clone(&self.file_name), handle.offset)?);
            let mut it = block.iter();
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
        let mut index = self.index.iter();
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
        let mut index = self.index.iter();
        index.seek_to_first();
        while index.valid() {
            out.push((index.key().to_vec(), self.decode_handle(index.value())?));
            index.next();
        }
        index.status()?;
        Ok(out)
    }

    /// True if the table has a bloom filter.
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// A new iterator over the index block.
    pub(crate) fn index_iter(&self) -> BlockIter {
        self.index.iter()
    }

    /// Decodes an index entry's value.
    pub(crate) fn decode_handle(&self, v: &[u8]) -> Result<BlockHandle> {
        match BlockHandle::decode(v) {
            Some((h, n)) if n == v.len() => Ok(h),
            _ => Err(Error::corruption(
                &self.file_name,
                self.index.offset(),
                "index: bad block handle",
            )),
        }
    }

    /// The data block at `handle`, from the block cache if present.
    pub(crate) fn data_block(&self, handle: BlockHandle, fill_cache: bool) -> Result<Arc<Block>> {
        let key = (self.file_number, handle.offset);
        if let Some(cache) = &self.block_cache {
            if let Some(b) = cache.lookup(key) {
                return Ok(b);
            }
        }
        let data = read_block(self.file.as_ref(), &self.file_name, handle)?;
        let block = Arc::new(Block::new(data, Arc::clone(&self.file_name), handle.offset)?);
        if fill_cache {
            if let Some(cache) = &self.block_cache {
                cache.insert(key, Arc::clone(&block), block.charge());
            }
        }
        Ok(block)
    }
}

fn decode_range_dels(block: &Arc<Block>, file: &str) -> Result<Vec<RangeTombstone>> {
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
