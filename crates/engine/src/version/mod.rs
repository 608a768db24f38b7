//! The LSM tree's shape: which SST files are live at which level ([`Version`]), the edits that
//! change it ([`edit::VersionEdit`]), and the MANIFEST that records those edits
//! ([`set::VersionSet`]). Byte layout of the MANIFEST: `docs/format/manifest.md`.
//!
//! STUB: interface fixed by the skeleton; the implementation lands separately.

use std::sync::Arc;

use crate::key::{InternalKey, SequenceNumber};

pub mod edit;
pub mod set;

pub use edit::VersionEdit;
pub use set::VersionSet;

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
}

/// An immutable snapshot of the tree's files. Level 0 is ordered newest first (by largest
/// sequence number); deeper levels hold non-overlapping files ordered by smallest key.
#[derive(Debug, Clone, Default)]
pub struct Version {
    /// Files per level.
    pub files: Vec<Vec<Arc<FileMetaData>>>,
}

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
    /// Files at `level` whose user-key range intersects `[smallest, largest]` (user keys,
    /// inclusive). At level 0 the range is widened transitively, as overlapping L0 files must
    /// move together.
    pub fn overlapping_files(
        &self,
        level: usize,
        smallest: &[u8],
        largest: &[u8],
    ) -> Vec<Arc<FileMetaData>> {
        let _ = (level, smallest, largest);
        todo!()
    }
    /// The files that may hold `user_key`, in search order: overlapping L0 files newest first,
    /// then at most one file per deeper level. Calls `f(level, file)` until it returns false.
    pub fn for_each_file_for_key(
        &self,
        user_key: &[u8],
        f: impl FnMut(usize, &Arc<FileMetaData>) -> bool,
    ) {
        let _ = (user_key, f);
        todo!()
    }
}
