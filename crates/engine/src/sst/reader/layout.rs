//! A table's layout walked whole ([`TableReader::index_entries`], the data block, index
//! partition and filter partition handles) and [`TableReader::verify_checksums`], which reads
//! every block: for tools (`sst_dump`, `ldb`), tests, and subcompaction boundaries; never on a
//! read path. `verify_checksums` reads each block from the file past the block cache; the
//! index walks fill no cache. No locks beyond the block cache's.

use crate::cache::CacheHandle;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;
use crate::sst::block::{BlockRef, BlockRole};
use crate::sst::format::BlockHandle;
use crate::sst::index_iter::IndexIter;

use super::TableReader;

impl TableReader {
    /// Reads every data block (and every filter partition) and checks its checksum.
    pub fn verify_checksums(&self) -> Result<()> {
        for handle in self.data_block_handles()? {
            let block = self.load(handle, BlockRole::Data)?;
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
        for h in self.filter_partition_handles()? {
            self.load(h, BlockRole::Filter)?;
        }
        Ok(())
    }

    /// The handles of a partitioned filter's partitions, in key order (empty otherwise).
    pub fn filter_partition_handles(&self) -> Result<Vec<BlockHandle>> {
        let Some(filter) = self.filter.as_ref().filter(|_| self.partitioned_filter) else {
            return Ok(Vec::new());
        };
        self.listed_handles(&self.meta_block(filter)?)
    }

    /// The handles of the data blocks, in key order (for tools such as `sst_dump`).
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>> {
        Ok(self.index_entries()?.into_iter().map(|e| e.1).collect())
    }

    /// The handles of the index partitions of a partitioned index, in key order (empty
    /// otherwise; for tools and tests).
    pub fn index_partition_handles(&self) -> Result<Vec<BlockHandle>> {
        if !self.props.partitioned_index {
            return Ok(Vec::new());
        }
        self.listed_handles(&self.index_block()?)
    }

    /// The block handles a top-level block of a partitioned index or filter lists, in order.
    fn listed_handles(&self, top: &BlockRef<'_>) -> Result<Vec<BlockHandle>> {
        let mut out = Vec::new();
        let mut it = top.iter();
        it.seek_to_first();
        while it.valid() {
            out.push(self.decode_handle(it.value(), top.offset())?);
            it.next();
        }
        it.status()?;
        Ok(out)
    }

    /// The index entries: each data block's separator (an internal key at or after the
    /// block's last key) with its handle, in key order (for subcompaction boundaries).
    pub fn index_entries(&self) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        let mut out = Vec::new();
        let mut index = IndexIter::new(self, false);
        index.seek_to_first(self);
        while index.valid() {
            let sep = if self.props.index_key_is_user_key {
                key::make_internal_key(index.key(), key::MAX_SEQUENCE, key::KIND_FOR_SEEK)
            } else {
                index.key().to_vec()
            };
            out.push((sep, self.decode_handle(index.value(), index.block_offset())?));
            index.next(self);
        }
        index.status()?;
        Ok(out)
    }
}
