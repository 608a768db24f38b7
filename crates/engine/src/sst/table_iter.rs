//! The two-level iterator over one table: an index cursor ([`IndexIter`], over one index block
//! or a partitioned index) chooses the data block, a data-block cursor walks it; both
//! directions. Data blocks missing from the block cache are read through a [`Prefetcher`]
//! (automatic readahead for user iterators, a fixed size for compaction). Holds the reader (and
//! through it the file) alive.
//!
//! An IO or corruption error is sticky: the iterator becomes invalid and `status` reports the
//! first error until it is dropped, so a caller never silently skips a bad block.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;

use super::block::BlockIter;
use super::index_iter::IndexIter;
use super::prefetch::{Prefetcher, Readahead};
use super::reader::TableReader;

/// Iterator over the point entries of a table.
pub struct TableIter {
    reader: Arc<TableReader>,
    index: IndexIter<'static>,
    prefetch: Prefetcher,
    data: Option<BlockIter>,
    /// Offset of the block `data` iterates.
    data_offset: u64,
    fill_cache: bool,
    err: Option<Error>,
}

impl TableReader {
    /// An iterator over the point entries, holding the reader alive, with automatic readahead
    /// on sequential access.
    pub fn iter(self: &Arc<Self>, fill_cache: bool) -> Box<dyn InternalIterator> {
        self.iter_with(fill_cache, Readahead::Auto)
    }

    /// As [`TableReader::iter`], reading ahead as `readahead` says (compaction:
    /// `Readahead::Fixed(compaction_readahead_size)`).
    pub fn iter_with(
        self: &Arc<Self>,
        fill_cache: bool,
        readahead: Readahead,
    ) -> Box<dyn InternalIterator> {
        Box::new(TableIter::new(Arc::clone(self), fill_cache, readahead))
    }
}

impl TableIter {
    /// A new, unpositioned iterator reading ahead as `readahead` says.
    pub fn new(reader: Arc<TableReader>, fill_cache: bool, readahead: Readahead) -> TableIter {
        let index = IndexIter::new_owned(reader.as_ref(), fill_cache);
        TableIter {
            reader,
            index,
            prefetch: Prefetcher::new(readahead),
            data: None,
            data_offset: 0,
            fill_cache,
            err: None,
        }
    }

    fn set_err(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.data = None;
    }

    /// Points `data` at the block the index cursor names (or clears it).
    fn init_data_block(&mut self) {
        if self.err.is_some() {
            return;
        }
        if !self.index.valid() {
            if let Err(e) = self.index.status() {
                self.set_err(e);
            }
            self.data = None;
            return;
        }
        let handle = match self.reader.decode_handle(self.index.value(), self.index.block_offset())
        {
            Ok(h) => h,
            Err(e) => return self.set_err(e),
        };
        if self.data.is_some() && self.data_offset == handle.offset {
            return;
        }
        match self.reader.data_block_prefetched(handle, self.fill_cache, &mut self.prefetch) {
            Ok(b) => {
                self.data = Some(b.iter());
                self.data_offset = handle.offset;
            }
            Err(e) => self.set_err(e),
        }
    }

    /// True if `data` is positioned; records its error otherwise.
    fn data_valid(&mut self) -> bool {
        match &self.data {
            Some(d) if d.valid() => true,
            Some(d) => {
                if let Err(e) = d.status() {
                    self.set_err(e);
                }
                false
            }
            None => false,
        }
    }

    fn skip_empty_forward(&mut self) {
        while self.err.is_none() && !self.data_valid() {
            if self.err.is_some() || !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.next(self.reader.as_ref());
            self.init_data_block();
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
    }

    fn skip_empty_backward(&mut self) {
        while self.err.is_none() && !self.data_valid() {
            if self.err.is_some() || !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.prev(self.reader.as_ref());
            self.init_data_block();
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn seek_to_first(&mut self) {
        self.index.seek_to_first(self.reader.as_ref());
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek_to_first();
        }
        self.skip_empty_forward();
    }

    fn seek_to_last(&mut self) {
        self.index.seek_to_last(self.reader.as_ref());
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek_to_last();
        }
        self.skip_empty_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        crate::perf::child_seek();
        self.index.seek(self.reader.as_ref(), target);
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek(target);
        }
        self.skip_empty_forward();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        crate::perf::child_seek();
        self.index.seek(self.reader.as_ref(), target);
        if !self.index.valid() {
            if let Err(e) = self.index.status() {
                return self.set_err(e);
            }
            self.index.seek_to_last(self.reader.as_ref());
        }
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek_for_prev(target);
        }
        self.skip_empty_backward();
    }

    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.next();
        }
        self.skip_empty_forward();
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.prev();
        }
        self.skip_empty_backward();
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.duplicate());
        }
        self.index.status()
    }
}
