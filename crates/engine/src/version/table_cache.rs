//! [`TableCache`]: open SST readers by file number, bounded by `max_open_files`.
//!
//! Readers are opened through the [`Fs`] at `filename::table_path(db_path, n)`. With a bound
//! (`max_open_files > 0`) they are kept in an [`LruCache`] with charge 1 per reader (one shard,
//! so the bound is exact); the only lock is the LRU's shard mutex, never held across IO.
//! Unbounded (`max_open_files = -1`, the default) a reader is kept in its file's
//! [`ReaderSlot`](crate::version::ReaderSlot) (in the [`FileMetaData`] every Version shares), as RocksDB keeps it in the
//! file descriptor: a read reaches it with one atomic load and no reference count, and it is
//! closed when the last Version holding the file is dropped. [`TableCache::preload`] opens every
//! file of a Version (RocksDB's `LoadTableHandlers` at DB open). Called by the read path and
//! compaction from any thread. Two concurrent first reads of one file may both open it; one
//! reader is kept and both are valid.
//!
//! Index and filter placement (`cache_index_and_filter_blocks`, `pin_l0_...`) is decided when a
//! reader is opened: [`TableCache::get_at`] passes the file's level, and a reader opened for
//! level 0 with `pin_l0_filter_and_index_blocks_in_cache` pins them for its lifetime (as
//! RocksDB decides at table open). [`TableCache::get`] opens with the level unknown (unpinned).
//! Files are opened with direct IO when `use_direct_reads` (see `fs::direct`), and every
//! reader counts its reads in the cache's one [`ReadIoStats`] (`talus.stats`, `talus.read-io`).

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::Arc;

use super::{FileMetaData, Version};
use crate::error::Result;
use crate::filename;
use crate::fs::Fs;
use crate::perf::ReadIoStats;
use crate::sst::reader::TableReaderOptions;
use crate::sst::{Block, TableReader};

use crate::cache::{Cache, LruCache, Priority};

/// How the table cache opens readers.
#[derive(Clone, Default)]
pub struct TableCacheOptions {
    /// The block cache the readers use.
    pub block_cache: Option<Arc<dyn Cache<Block>>>,
    /// Readers kept open (`None`: unbounded).
    pub capacity: Option<usize>,
    /// Index and filter blocks in the block cache, charged.
    pub cache_index_and_filter_blocks: bool,
    /// With `cache_index_and_filter_blocks`: readers opened for L0 pin them.
    pub pin_l0: bool,
    /// With `cache_index_and_filter_blocks`: pin the top level of partitioned ones.
    pub pin_top_level_index_and_filter: bool,
    /// Open the files with direct IO.
    pub use_direct_reads: bool,
}

/// A reader borrowed from its file's slot, or shared out of the LRU.
pub enum TableRef<'a> {
    /// Kept in the file's [`ReaderSlot`](crate::version::ReaderSlot): no reference count taken.
    Slot(&'a Arc<TableReader>),
    /// From the bounded LRU.
    Shared(Arc<TableReader>),
}

impl TableRef<'_> {
    /// An owned handle (for iterators that outlive the borrow).
    pub fn to_arc(&self) -> Arc<TableReader> {
        match self {
            TableRef::Slot(r) => Arc::clone(r),
            TableRef::Shared(r) => Arc::clone(r),
        }
    }
}

impl Deref for TableRef<'_> {
    type Target = TableReader;
    fn deref(&self) -> &TableReader {
        match self {
            TableRef::Slot(r) => r,
            TableRef::Shared(r) => r,
        }
    }
}

/// Open SST readers by file number, bounded by `max_open_files`.
pub struct TableCache {
    db_path: PathBuf,
    fs: Arc<dyn Fs>,
    readers: LruCache<TableReader>,
    opts: TableCacheOptions,
    io: Arc<ReadIoStats>,
    /// `max_open_files = -1`: readers live in their files' slots.
    unbounded: bool,
}

impl TableCache {
    /// A table cache for the database in `db_path`; `capacity` readers (`None`: unbounded).
    pub fn new(
        db_path: PathBuf,
        fs: Arc<dyn Fs>,
        block_cache: Option<Arc<dyn Cache<Block>>>,
        capacity: Option<usize>,
    ) -> Self {
        let opts = TableCacheOptions { block_cache, capacity, ..Default::default() };
        TableCache::with_options(db_path, fs, opts)
    }

    /// As [`TableCache::new`], with the placement and IO of `opts`.
    pub fn with_options(db_path: PathBuf, fs: Arc<dyn Fs>, opts: TableCacheOptions) -> Self {
        let cap = opts.capacity.unwrap_or(usize::MAX).max(1);
        TableCache {
            db_path,
            fs,
            readers: LruCache::new(cap, 0, false),
            unbounded: opts.capacity.is_none(),
            opts,
            io: Arc::new(ReadIoStats::default()),
        }
    }

    /// The reads of every reader this cache opened.
    pub fn io_stats(&self) -> &ReadIoStats {
        &self.io
    }

    /// The reader of live file `f` at `level` (`None`: unknown), opening it if needed; borrowed
    /// from the file's slot when the cache is unbounded.
    pub fn reader<'a>(&self, f: &'a FileMetaData, level: Option<usize>) -> Result<TableRef<'a>> {
        let family_cache = f.reader.family_cache();
        if !self.unbounded {
            return self.get_in(f.number, level, family_cache).map(TableRef::Shared);
        }
        if let Some(r) = f.reader.get() {
            return Ok(TableRef::Slot(r));
        }
        let opened = Arc::new(self.open(f.number, level, family_cache)?);
        // A racing first read may have set it meanwhile: then theirs is kept, ours dropped.
        Ok(TableRef::Slot(f.reader.get_or_init(|| opened)))
    }

    /// Opens the reader of every file of `v` that is not open yet (unbounded cache only;
    /// RocksDB's `LoadTableHandlers` at DB open), so the first reads do not pay for it. A file
    /// that fails to open is left closed: the read that needs it reports the error.
    pub fn preload(&self, v: &Version) {
        if !self.unbounded {
            return;
        }
        for level in 0..v.num_levels() {
            for f in v.level_files(level) {
                let _ = self.reader(f, Some(level));
            }
        }
    }

    /// Opens SST `file_number` with `family_cache` as its block cache (a family's own), or the
    /// database's.
    fn open(
        &self,
        file_number: u64,
        level: Option<usize>,
        family_cache: Option<&crate::sst::SharedBlockCache>,
    ) -> Result<TableReader> {
        let path = filename::table_path(&self.db_path, file_number);
        let o = &self.opts;
        let file = crate::fs::direct::open_random(self.fs.as_ref(), &path, o.use_direct_reads)?;
        let opts = TableReaderOptions {
            block_cache: family_cache.cloned().or_else(|| o.block_cache.clone()),
            cache_index_and_filter_blocks: o.cache_index_and_filter_blocks,
            pin_index_and_filter: o.pin_l0 && level == Some(0),
            pin_top_level_index_and_filter: o.pin_top_level_index_and_filter,
            io_stats: Some(Arc::clone(&self.io)),
        };
        TableReader::open_with(file, file_number, path.display().to_string(), opts)
    }

    /// The reader of SST `file_number`, opening it if needed (level unknown).
    pub fn get(&self, file_number: u64) -> Result<Arc<TableReader>> {
        self.get_at(file_number, None)
    }

    /// The reader of SST `file_number` of `level`, opening it if needed.
    pub fn get_at(&self, file_number: u64, level: Option<usize>) -> Result<Arc<TableReader>> {
        self.get_in(file_number, level, None)
    }

    /// [`TableCache::get_at`], opening the file with `family_cache` (its family's own block
    /// cache) if it is not open yet.
    fn get_in(
        &self,
        file_number: u64,
        level: Option<usize>,
        family_cache: Option<&crate::sst::SharedBlockCache>,
    ) -> Result<Arc<TableReader>> {
        let key = (file_number, 0);
        if let Some(r) = self.readers.lookup_shared(key) {
            return Ok(r);
        }
        let reader = Arc::new(self.open(file_number, level, family_cache)?);
        self.readers.insert_shared(key, Arc::clone(&reader), 1, Priority::Low);
        Ok(reader)
    }

    /// The block cache the readers use.
    pub fn block_cache(&self) -> Option<&Arc<dyn Cache<Block>>> {
        self.opts.block_cache.as_ref()
    }

    /// Drops the reader of a deleted file.
    pub fn evict(&self, file_number: u64) {
        self.readers.erase((file_number, 0));
    }

    /// Readers currently open in the cache.
    pub fn len(&self) -> usize {
        self.readers.len()
    }

    /// True if no reader is cached.
    pub fn is_empty(&self) -> bool {
        self.readers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;
    use crate::key::{make_internal_key, ValueKind};
    use crate::options::CompressionType;
    use crate::sst::{TableBuilder, TableBuilderOptions};

    fn write_table(fs: &dyn Fs, dir: &std::path::Path, n: u64) {
        let path = filename::table_path(dir, n);
        let opts = TableBuilderOptions {
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: 10,
            compression: CompressionType::None,
            ..Default::default()
        };
        let mut b = TableBuilder::new(opts, fs.create(&path).unwrap(), path.display().to_string());
        b.add(&make_internal_key(b"k", 5, ValueKind::Put), &n.to_le_bytes()).unwrap();
        b.finish().unwrap();
    }

    #[test]
    fn opens_caches_bounds_and_evicts() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Fs> = Arc::new(StdFs);
        for n in 1..=5 {
            write_table(fs.as_ref(), dir.path(), n);
        }
        let block_cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(1 << 20, 2, false));
        let tc = TableCache::new(dir.path().to_path_buf(), fs, Some(block_cache), Some(3));
        for n in 1..=5u64 {
            let r = tc.get(n).unwrap();
            let got = r.get(b"k", 10, true).unwrap().unwrap();
            assert_eq!(got.2, n.to_le_bytes());
        }
        assert_eq!(tc.len(), 3);
        let a = tc.get(5).unwrap();
        assert!(Arc::ptr_eq(&a, &tc.get(5).unwrap()));
        tc.evict(5);
        assert!(!Arc::ptr_eq(&a, &tc.get(5).unwrap()));
        assert!(tc.get(99).is_err());
    }
}
