//! [`IndexIter`]: a cursor over a table's index entries (separator key → data block handle),
//! whether the index is one block or partitions under a top-level index (format version 3 or later,
//! `kTwoLevelIndexSearch`). Callers (point lookups, MultiGet, the table iterator, tools) walk
//! it as one sorted run of entries and never see partitions.
//!
//! A partitioned cursor holds the top-level block (the reader's, held or from the cache) and
//! the current partition, fetched through the reader's block cache like a data block
//! (`TableReader::index_partition`; counted as index block reads). Moving within a partition
//! touches nothing else; crossing into the next or previous partition fetches it. Seeks use
//! the table's key form: bytewise on user keys when the index holds user keys, else the
//! internal-key order. An error (a partition that cannot be read, a bad handle) is sticky: the
//! cursor turns invalid and `status` reports it.

use crate::cache::CacheHandle;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;

use super::block::{Block, BlockIter, BlockRef};
use super::format::BlockHandle;
use super::TableProperties;

/// What an [`IndexIter`] reads through: the table reader (`reader.rs` implements it; the trait
/// keeps this module from importing the reader, which uses the cursor).
pub trait IndexSource {
    /// The table's properties (is the index partitioned, are its keys user keys).
    fn properties(&self) -> &TableProperties;
    /// The index block, or the top level of a partitioned index (borrowed where the source
    /// holds it).
    fn index_block(&self) -> Result<BlockRef<'_>>;
    /// Index partition `handle`, through the block cache.
    fn index_partition(&self, handle: BlockHandle, fill_cache: bool) -> Result<CacheHandle<Block>>;
    /// The file's name, for errors.
    fn file_name(&self) -> &str;
}

/// A cursor over the index entries of one table. `'a` is the reader's borrow: a cursor made by
/// `IndexIter::new` reads the reader's held index block without a reference of its own (a
/// point read's cursor); `IndexIter::new_owned` takes one and outlives the borrow (a table
/// iterator's).
pub struct IndexIter<'a> {
    /// The index block, or the top-level index.
    top: BlockIter<BlockRef<'a>>,
    /// Offset of the block `top` iterates (for errors).
    top_offset: u64,
    /// For a partitioned index: the current partition and its offset.
    part: Option<(BlockIter<BlockRef<'a>>, u64)>,
    partitioned: bool,
    user_keys: bool,
    fill_cache: bool,
    err: Option<Error>,
}

impl<'a> IndexIter<'a> {
    /// A cursor over the index of `reader`, positioned nowhere, borrowing the reader's index
    /// block if it holds it; `fill_cache` says whether partitions read on a miss go into the
    /// block cache.
    pub(crate) fn new(reader: &'a (impl IndexSource + ?Sized), fill_cache: bool) -> IndexIter<'a> {
        Self::with_top(reader, reader.index_block(), fill_cache)
    }

    /// As [`IndexIter::new`], with a reference of its own on the index block.
    pub(crate) fn new_owned(
        reader: &(impl IndexSource + ?Sized),
        fill_cache: bool,
    ) -> IndexIter<'static> {
        IndexIter::with_top(reader, reader.index_block().map(BlockRef::into_owned), fill_cache)
    }

    fn with_top(
        reader: &(impl IndexSource + ?Sized),
        top: Result<BlockRef<'a>>,
        fill_cache: bool,
    ) -> IndexIter<'a> {
        let props = reader.properties();
        let (top, top_offset, err) = match top {
            Ok(b) => (b.iter(), b.offset(), None),
            Err(e) => (BlockIter::failed(e.duplicate()), 0, Some(e)),
        };
        IndexIter {
            top,
            top_offset,
            part: None,
            partitioned: props.partitioned_index,
            user_keys: props.index_key_is_user_key,
            fill_cache,
            err,
        }
    }

    fn set_err(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.part = None;
    }

    /// The block cursor the entries come from.
    fn cur(&self) -> &BlockIter<BlockRef<'a>> {
        match &self.part {
            Some((p, _)) if self.partitioned => p,
            _ => &self.top,
        }
    }

    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        self.err.is_none() && (!self.partitioned || self.part.is_some()) && self.cur().valid()
    }

    /// The entry's separator (a user key or an internal key, per the table's key form).
    pub fn key(&self) -> &[u8] {
        self.cur().key()
    }

    /// The entry's encoded block handle.
    pub fn value(&self) -> &[u8] {
        self.cur().value()
    }

    /// Offset of the index block the entry is in (for errors).
    pub fn block_offset(&self) -> u64 {
        match &self.part {
            Some((_, off)) if self.partitioned => *off,
            _ => self.top_offset,
        }
    }

    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.duplicate());
        }
        self.top.status()?;
        match &self.part {
            Some((p, _)) => p.status(),
            None => Ok(()),
        }
    }

    fn seek_block(user_keys: bool, it: &mut BlockIter<BlockRef<'a>>, target: &[u8]) {
        if user_keys {
            it.seek_bytewise(key::user_key(target));
        } else {
            it.seek(target);
        }
    }

    /// Loads the partition the top-level cursor names (keeps the current one if it is the
    /// same); false (with the error recorded if any) if there is none.
    fn load_partition(&mut self, reader: &(impl IndexSource + ?Sized)) -> bool {
        if !self.top.valid() {
            if let Err(e) = self.top.status() {
                self.set_err(e);
            }
            self.part = None;
            return false;
        }
        let h = match decode(self.top.value(), reader, self.top_offset) {
            Ok(h) => h,
            Err(e) => {
                self.set_err(e);
                return false;
            }
        };
        if self.part.as_ref().is_some_and(|p| p.1 == h.offset) {
            return true;
        }
        match reader.index_partition(h, self.fill_cache) {
            Ok(b) => {
                self.part = Some((partition_iter(b), h.offset));
                true
            }
            Err(e) => {
                self.set_err(e);
                false
            }
        }
    }

    /// Positions at the first entry whose separator is `>=` internal key `target`.
    pub fn seek(&mut self, reader: &(impl IndexSource + ?Sized), target: &[u8]) {
        if self.err.is_some() {
            return;
        }
        Self::seek_block(self.user_keys, &mut self.top, target);
        if !self.partitioned {
            return;
        }
        if self.load_partition(reader) {
            if let Some((p, _)) = &mut self.part {
                Self::seek_block(self.user_keys, p, target);
            }
            self.skip_forward(reader);
        }
    }

    /// Positions at the first entry.
    pub fn seek_to_first(&mut self, reader: &(impl IndexSource + ?Sized)) {
        if self.err.is_some() {
            return;
        }
        self.top.seek_to_first();
        if self.partitioned && self.load_partition(reader) {
            if let Some((p, _)) = &mut self.part {
                p.seek_to_first();
            }
            self.skip_forward(reader);
        }
    }

    /// Positions at the last entry.
    pub fn seek_to_last(&mut self, reader: &(impl IndexSource + ?Sized)) {
        if self.err.is_some() {
            return;
        }
        self.top.seek_to_last();
        if self.partitioned && self.load_partition(reader) {
            if let Some((p, _)) = &mut self.part {
                p.seek_to_last();
            }
            self.skip_backward(reader);
        }
    }

    /// Moves to the next entry.
    pub fn next(&mut self, reader: &(impl IndexSource + ?Sized)) {
        if !self.valid() {
            return;
        }
        if !self.partitioned {
            self.top.next();
            return;
        }
        if let Some((p, _)) = &mut self.part {
            p.next();
        }
        self.skip_forward(reader);
    }

    /// Moves to the previous entry.
    pub fn prev(&mut self, reader: &(impl IndexSource + ?Sized)) {
        if !self.valid() {
            return;
        }
        if !self.partitioned {
            self.top.prev();
            return;
        }
        if let Some((p, _)) = &mut self.part {
            p.prev();
        }
        self.skip_backward(reader);
    }

    /// Past the end of a partition: on to the first entry of the next non-empty one.
    fn skip_forward(&mut self, reader: &(impl IndexSource + ?Sized)) {
        loop {
            match &self.part {
                Some((p, _)) if p.valid() => return,
                Some((p, _)) => {
                    if let Err(e) = p.status() {
                        return self.set_err(e);
                    }
                }
                None => return,
            }
            self.top.next();
            if !self.load_partition(reader) {
                return;
            }
            if let Some((p, _)) = &mut self.part {
                p.seek_to_first();
            }
        }
    }

    /// Before the start of a partition: back to the last entry of the previous non-empty one.
    fn skip_backward(&mut self, reader: &(impl IndexSource + ?Sized)) {
        loop {
            match &self.part {
                Some((p, _)) if p.valid() => return,
                Some((p, _)) => {
                    if let Err(e) = p.status() {
                        return self.set_err(e);
                    }
                }
                None => return,
            }
            self.top.prev();
            if !self.load_partition(reader) {
                return;
            }
            if let Some((p, _)) = &mut self.part {
                p.seek_to_last();
            }
        }
    }
}

fn partition_iter<'a>(b: CacheHandle<Block>) -> BlockIter<BlockRef<'a>> {
    BlockIter::new(BlockRef::Held(b))
}

/// Decodes an index entry's value found in the index block at `offset`.
pub(crate) fn decode(
    v: &[u8],
    reader: &(impl IndexSource + ?Sized),
    offset: u64,
) -> Result<BlockHandle> {
    match BlockHandle::decode(v) {
        Some((h, n)) if n == v.len() => Ok(h),
        _ => Err(Error::corruption(reader.file_name(), offset, "index: bad block handle")),
    }
}
