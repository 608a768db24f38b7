//! [`TableReader::open`] and [`TableReader::open_with`]: read and verify a table's footer,
//! meta-index, properties, index, filter and range-deletion blocks, then place the index and
//! filter as [`TableReaderOptions`] asks (held by the reader, or in the block cache, pinned or
//! not). Called once per file by the table cache, and by tools and tests; no locks beyond the
//! block cache's. A malformed block is a `Corruption` naming the file and offset.

use std::sync::Arc;

use crate::cache::{Cache, CacheHandle, Priority};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{self, ValueKind};
use crate::sst::block::{Block, BlockRole};
use crate::sst::builder::{META_PROPERTIES, META_RANGEDEL};
use crate::sst::filter_builder::{META_FILTER, META_PARTITIONED_FILTER};
use crate::sst::format::{BlockHandle, Footer, FOOTER_LEN, PARTITIONED_FORMAT_VERSION};
use crate::sst::properties;

use super::{bad_handle, load_block, MetaBlock, TableReader, TableReaderOptions};

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
        let io = opts.io_stats.clone().unwrap_or_default();
        let size = file.size();
        let footer_at = size.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(&name, 0, format!("file too short for a footer ({size} bytes)"))
        })?;
        let mut fbuf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_at, &mut fbuf)?;
        io.file_read(FOOTER_LEN as u64);
        let footer = Footer::decode(&fbuf, &name, footer_at)?;
        let checksum = footer.checksum_type();

        let load = |h: BlockHandle, role: BlockRole| -> Result<Block> {
            load_block(file.as_ref(), &name, h, checksum, role, &io)
        };
        let metaindex = CacheHandle::new(load(footer.metaindex, BlockRole::Other)?);
        let meta_at = footer.metaindex.offset;

        let (mut filter_h, mut props_h, mut rangedel_h) = (None, None, None);
        let mut partitioned_filter = false;
        let mut it = metaindex.iter();
        it.seek_to_first();
        while it.valid() {
            let h = match BlockHandle::decode(it.value()) {
                Some((h, n)) if n == it.value().len() => h,
                _ => return Err(bad_handle(&name, meta_at, "meta-index")),
            };
            match it.key() {
                k if k == META_FILTER || k == META_PARTITIONED_FILTER => {
                    if filter_h.is_some() {
                        return Err(Error::corruption(&name, meta_at, "meta-index: two filters"));
                    }
                    partitioned_filter = k == META_PARTITIONED_FILTER;
                    filter_h = Some(h);
                }
                k if k == META_PROPERTIES => props_h = Some(h),
                k if k == META_RANGEDEL => rangedel_h = Some(h),
                _ => {}
            }
            it.next();
        }
        it.status()?;

        let props_h = props_h
            .ok_or_else(|| Error::corruption(&name, meta_at, "meta-index: no properties block"))?;
        let props_block = CacheHandle::new(load(props_h, BlockRole::Other)?);
        let mut props = properties::decode(&props_block, &name)?;
        props.file_size = size;
        if (props.partitioned_index || partitioned_filter)
            && footer.version < PARTITIONED_FORMAT_VERSION
        {
            return Err(Error::corruption(
                &name,
                footer_at,
                format!(
                    "a partitioned index or filter in a format_version {} file",
                    footer.version
                ),
            ));
        }

        // The top level of a partitioned index or filter is an index block of handles.
        let index_role = BlockRole::Index;
        let filter_role = if partitioned_filter { BlockRole::Other } else { BlockRole::Filter };
        let mut index = load(footer.index, index_role)?;
        if props.index_key_is_user_key {
            // Seeks of a user-key index are bytewise: give them the search array.
            index.build_search_prefixes();
        }
        let filter = match filter_h {
            Some(h) => Some((load(h, filter_role)?, h)),
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
        let place = |b: Block, h: BlockHandle, role: BlockRole, top_level: bool| match &block_cache
        {
            Some(cache) if opts.cache_index_and_filter_blocks => {
                let (key, charge) = ((file_number, h.offset), b.charge());
                let pin =
                    opts.pin_index_and_filter || (top_level && opts.pin_top_level_index_and_filter);
                if !pin {
                    cache.insert_with_priority(key, b, charge, Priority::High);
                    return MetaBlock::Cached(h, role);
                }
                match cache.insert_and_hold(key, b, charge, Priority::High) {
                    Ok(held) => MetaBlock::Held(held),
                    Err(b) => MetaBlock::Held(CacheHandle::new(b)),
                }
            }
            _ => MetaBlock::Held(CacheHandle::new(b)),
        };
        let index = place(index, footer.index, index_role, props.partitioned_index);
        let filter = filter.map(|(f, h)| place(f, h, filter_role, partitioned_filter));

        Ok(TableReader {
            file,
            file_number,
            file_name: name,
            block_cache,
            index,
            filter,
            partitioned_filter,
            props,
            tombstones,
            io,
            footer,
            checksum,
        })
    }
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
