//! A concatenating iterator over the non-overlapping files of one level (L1 and deeper),
//! opening each file's table iterator lazily through the table cache.
//!
//! Files are ordered by smallest key and their internal-key ranges do not overlap, so a seek
//! binary-searches the first file whose largest internal key is `>= target`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::{EmptyIterator, InternalIterator};
use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::key::compare_internal;
use crate::sst::prefetch::Readahead;
use crate::version::{FileMetaData, Version};

/// The files a [`LevelIterator`] walks: a level of a shared [`Version`] (not copied: a read
/// iterator over a level of hundreds of files takes one reference count, not hundreds), or a
/// list of its own (a compaction's inputs).
pub enum LevelFiles {
    /// Level `.1` of the version.
    Level(Arc<Version>, usize),
    /// These files.
    List(Vec<Arc<FileMetaData>>),
}

impl LevelFiles {
    fn as_slice(&self) -> &[Arc<FileMetaData>] {
        match self {
            LevelFiles::Level(v, level) => v.level_files(*level),
            LevelFiles::List(files) => files,
        }
    }
}

impl From<Vec<Arc<FileMetaData>>> for LevelFiles {
    fn from(files: Vec<Arc<FileMetaData>>) -> Self {
        LevelFiles::List(files)
    }
}

/// Iterates one level's files in key order.
pub struct LevelIterator {
    files: LevelFiles,
    table_cache: Arc<TableCache>,
    fill_cache: bool,
    readahead: Readahead,
    index: usize,
    cur: Option<Box<dyn InternalIterator>>,
    err: Option<Error>,
}

impl LevelIterator {
    /// Iterates `files` (sorted, non-overlapping).
    pub fn new(
        files: impl Into<LevelFiles>,
        table_cache: Arc<TableCache>,
        fill_cache: bool,
    ) -> Self {
        let files = files.into();
        let index = files.as_slice().len();
        let readahead = Readahead::Auto;
        LevelIterator { files, table_cache, fill_cache, readahead, index, cur: None, err: None }
    }

    /// The same, each file read ahead as `readahead` says (compaction inputs).
    pub fn with_readahead(mut self, readahead: Readahead) -> Self {
        self.readahead = readahead;
        self
    }

    fn open(&mut self, index: usize) {
        self.index = index;
        self.cur = None;
        let Some(f) = self.files.as_slice().get(index) else { return };
        let it: Box<dyn InternalIterator> = match self.table_cache.reader(f, None) {
            Ok(r) => r.to_arc().iter_with(self.fill_cache, self.readahead),
            Err(e) => {
                if self.err.is_none() {
                    self.err = Some(e.duplicate());
                }
                Box::new(EmptyIterator::with_error(e))
            }
        };
        self.cur = Some(it);
    }

    fn cur_valid(&self) -> bool {
        self.cur.as_ref().is_some_and(|c| c.valid())
    }

    fn note_error(&mut self) {
        if self.err.is_none() {
            if let Some(Err(e)) = self.cur.as_ref().map(|c| c.status()) {
                self.err = Some(e);
            }
        }
    }

    fn skip_forward(&mut self) {
        while !self.cur_valid() {
            self.note_error();
            if self.err.is_some() || self.index + 1 >= self.files.as_slice().len() {
                self.cur = None;
                self.index = self.files.as_slice().len();
                return;
            }
            self.open(self.index + 1);
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        while !self.cur_valid() {
            self.note_error();
            if self.err.is_some() || self.index == 0 || self.index > self.files.as_slice().len() {
                self.cur = None;
                self.index = self.files.as_slice().len();
                return;
            }
            self.open(self.index - 1);
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && self.cur_valid()
    }
    fn seek_to_first(&mut self) {
        if self.files.as_slice().is_empty() {
            return;
        }
        self.open(0);
        if let Some(c) = self.cur.as_mut() {
            c.seek_to_first();
        }
        self.skip_forward();
    }
    fn seek_to_last(&mut self) {
        if self.files.as_slice().is_empty() {
            return;
        }
        self.open(self.files.as_slice().len() - 1);
        if let Some(c) = self.cur.as_mut() {
            c.seek_to_last();
        }
        self.skip_backward();
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .files
            .as_slice()
            .partition_point(|f| compare_internal(f.largest.encoded(), target) == Ordering::Less);
        if i >= self.files.as_slice().len() {
            self.cur = None;
            self.index = self.files.as_slice().len();
            return;
        }
        self.open(i);
        if let Some(c) = self.cur.as_mut() {
            c.seek(target);
        }
        self.skip_forward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        // Last file whose smallest <= target.
        let n = self.files.as_slice().partition_point(|f| {
            compare_internal(f.smallest.encoded(), target) != Ordering::Greater
        });
        if n == 0 {
            self.cur = None;
            self.index = self.files.as_slice().len();
            return;
        }
        self.open(n - 1);
        if let Some(c) = self.cur.as_mut() {
            c.seek_for_prev(target);
        }
        self.skip_backward();
    }
    fn next(&mut self) {
        if let Some(c) = self.cur.as_mut() {
            c.next();
        }
        self.skip_forward();
    }
    fn prev(&mut self) {
        if let Some(c) = self.cur.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }
    fn key(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.key())
    }
    fn value(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.value())
    }
    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.duplicate());
        }
        match &self.cur {
            Some(c) => c.status(),
            None => Ok(()),
        }
    }
}
