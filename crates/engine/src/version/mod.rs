//! The LSM tree's shape: which SST files are live at which level ([`Version`]), the edits that
//! change it ([`edit::VersionEdit`]), and the MANIFEST that records those edits
//! ([`set::VersionSet`]). Byte layout of the MANIFEST: `docs/format/manifest.md`.
//!
//! Contract: a [`Version`] is immutable once built and shared as `Arc<Version>` by readers
//! (through the SuperVersion) and by compactions; only [`VersionSet`] builds new ones, under the
//! DB's version mutex. Level 0 files may overlap and are kept newest first; deeper levels hold
//! files with disjoint key ranges, sorted by smallest key.

use std::sync::{Arc, OnceLock};

use crate::key::{InternalKey, SequenceNumber};
use crate::sst::TableReader;

pub mod blob_meta;
mod builder;
pub mod cf_edit;
pub mod current;
pub mod edit;
mod family;
mod file_meta;
pub mod level_iter;
pub mod set;
pub mod table_cache;

pub use edit::VersionEdit;
pub use set::VersionSet;
pub use table_cache::TableCache;

/// The open reader of one live file when the table cache is unbounded (see the module doc),
/// and the block cache of its column family when that family has its own
/// ([`crate::Options::block_cache`]; set by the version set when the file enters one of the
/// family's versions, before any read can find it there). Clones share both; equality ignores
/// them (they are not part of the file's identity).
#[derive(Default, Clone)]
pub struct ReaderSlot {
    reader: OnceLock<Arc<TableReader>>,
    cache: OnceLock<crate::sst::SharedBlockCache>,
}

impl ReaderSlot {
    /// The reader, if the file has been opened.
    pub fn get(&self) -> Option<&Arc<TableReader>> {
        self.reader.get()
    }

    /// The reader, set to `init()` if the file has not been opened yet (the table cache).
    pub(crate) fn get_or_init(&self, init: impl FnOnce() -> Arc<TableReader>) -> &Arc<TableReader> {
        self.reader.get_or_init(init)
    }

    /// The block cache of the file's family, if it has its own (else the database's is used).
    pub(crate) fn family_cache(&self) -> Option<&crate::sst::SharedBlockCache> {
        self.cache.get()
    }

    /// Gives the file its family's own block cache (the first one given stays: a file never
    /// changes family).
    pub(crate) fn set_family_cache(&self, cache: &crate::sst::SharedBlockCache) {
        let _ = self.cache.set(Arc::clone(cache));
    }
}

impl std::fmt::Debug for ReaderSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.reader.get().is_some() { "open" } else { "closed" })
    }
}

impl PartialEq for ReaderSlot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ReaderSlot {}

/// One live SST file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMetaData {
    /// File number (`NNNNNN.sst`).
    pub number: u64,
    /// Size in bytes.
    pub file_size: u64,
    /// Smallest internal key (point entries and range-tombstone starts).
    pub smallest: InternalKey,
    /// Largest internal key (point entries and range-tombstone ends).
    pub largest: InternalKey,
    /// Smallest sequence number in the file.
    pub smallest_seq: SequenceNumber,
    /// Largest sequence number in the file.
    pub largest_seq: SequenceNumber,
    /// Point entries.
    pub num_entries: u64,
    /// Point and range deletions.
    pub num_deletions: u64,
    /// The smallest blob file number any of its blob indexes points into; 0 when it holds
    /// none or its MANIFEST record predates the field (RocksDB's `oldest_blob_file_number`,
    /// `kInvalidBlobFileNumber`). The MANIFEST's tag 402; read by forced blob garbage
    /// collection (`compaction::blob_gc`).
    pub oldest_blob_file_number: u64,
    /// The file's open reader, kept here while the table cache is unbounded
    /// (`max_open_files = -1`, as RocksDB keeps it in the file's descriptor): a read finds it
    /// with one atomic load instead of a table-cache lookup. Not part of the file's identity.
    pub reader: ReaderSlot,
}

/// An immutable snapshot of the tree's files. Level 0 is ordered newest first (by largest
/// sequence number); deeper levels hold non-overlapping files ordered by smallest key.
#[derive(Debug, Clone, Default)]
pub struct Version {
    /// Files per level.
    pub files: Vec<Vec<Arc<FileMetaData>>>,
    /// Live blob files by number (`blob_meta.rs`).
    pub blob_files: Arc<std::collections::BTreeMap<u64, blob_meta::BlobFileMeta>>,
}

impl FileMetaData {
    /// True if the largest key is the exclusive end of a range tombstone (a sentinel that sorts
    /// before every real entry of its user key).
    pub fn largest_is_sentinel(&self) -> bool {
        crate::key::trailer(self.largest.encoded())
            == crate::key::pack_trailer(
                crate::key::MAX_SEQUENCE,
                crate::key::ValueKind::RangeDelete,
            )
    }
}

/// The most levels a column family may have (`Options::num_levels`); a MANIFEST is read with
/// this many, then each family is given its own count (`VersionSet::set_family_levels`).
pub const MAX_NUM_LEVELS: usize = 64;

impl Version {
    /// Number of levels.
    pub fn num_levels(&self) -> usize {
        self.files.len()
    }
    /// Files at `level`.
    pub fn level_files(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.files.get(level).map_or(&[], |v| v.as_slice())
    }
    /// Total bytes at `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.level_files(level).iter().map(|f| f.file_size).sum()
    }
    /// An empty version with `num_levels` levels.
    pub fn new(num_levels: usize) -> Self {
        Version { files: vec![Vec::new(); num_levels], blob_files: Default::default() }
    }
    /// This version's files in `num_levels` levels (a column family opened with its own
    /// `num_levels`); `Err` with the deepest level holding a file if that is `num_levels` or
    /// deeper.
    pub fn with_levels(&self, num_levels: usize) -> std::result::Result<Version, usize> {
        let deepest = self.files.iter().rposition(|l| !l.is_empty());
        if let Some(d) = deepest.filter(|&d| d >= num_levels) {
            return Err(d);
        }
        let mut files = self.files.clone();
        files.resize(num_levels, Vec::new());
        Ok(Version { files, blob_files: self.blob_files.clone() })
    }
    /// Number of files over all levels.
    pub fn num_files(&self) -> usize {
        self.files.iter().map(Vec::len).sum()
    }
    /// Files at `level` whose user-key range intersects `[smallest, largest]` (user keys,
    /// inclusive). At level 0 the range is widened transitively, as overlapping L0 files must
    /// move together.
    pub fn overlapping_files(
        &self,
        level: usize,
        smallest: &[u8],
        largest: &[u8],
    ) -> Vec<Arc<FileMetaData>> {
        let files = self.level_files(level);
        if level > 0 {
            // Disjoint and sorted: the first file ending at or after `smallest`, then every
            // file starting at or before `largest`.
            let first = files.partition_point(|f| f.largest.user_key() < smallest);
            return files
                .get(first..)
                .unwrap_or(&[])
                .iter()
                .take_while(|f| f.smallest.user_key() <= largest)
                .cloned()
                .collect();
        }
        let mut lo = smallest;
        let mut hi = largest;
        let mut out: Vec<Arc<FileMetaData>> = Vec::new();
        let mut i = 0;
        while let Some(f) = files.get(i) {
            i += 1;
            let (fs, fl) = (f.smallest.user_key(), f.largest.user_key());
            if fl < lo || fs > hi {
                continue;
            }
            if fs < lo || fl > hi {
                // The file sticks out of the range: widen it and start over, so that files
                // overlapping only the widened part are picked up too.
                lo = lo.min(fs);
                hi = hi.max(fl);
                out.clear();
                i = 0;
                continue;
            }
            out.push(Arc::clone(f));
        }
        out
    }
    /// The files that may hold `user_key`, in search order: overlapping L0 files newest first,
    /// then at most one file per deeper level. Calls `f(level, file)` until it returns false.
    /// Inlined into the point read (its one hot caller): out of line, as the compiler left it
    /// from 15214e1 on, it cost each point read about 30 instructions (issue 38).
    #[inline]
    pub fn for_each_file_for_key(
        &self,
        user_key: &[u8],
        mut f: impl FnMut(usize, &Arc<FileMetaData>) -> bool,
    ) {
        for file in self.level_files(0) {
            if file.smallest.user_key() <= user_key
                && user_key <= file.largest.user_key()
                && !f(0, file)
            {
                return;
            }
        }
        for level in 1..self.num_levels() {
            let files = self.level_files(level);
            // A file whose largest key is a range-tombstone sentinel `(k, MAX_SEQUENCE,
            // RangeDelete)` holds nothing at `k` itself: the next file may start at `k`.
            let i = files.partition_point(|file| {
                let l = file.largest.user_key();
                l < user_key || (l == user_key && file.largest_is_sentinel())
            });
            if let Some(file) = files.get(i) {
                if file.smallest.user_key() <= user_key && !f(level, file) {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
