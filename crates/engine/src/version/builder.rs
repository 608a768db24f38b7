//! Applies [`VersionEdit`]s to a base [`Version`], checking that they make sense.
//!
//! Used by `VersionSet` under the version mutex: once per edit in `log_and_apply`, and across
//! all edits of a MANIFEST during recovery (so that replay costs O(files) per edit, not per
//! version built).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::blob_meta::BlobFileMeta;
use super::{FileMetaData, Version, VersionEdit};
use crate::key::compare_internal;

/// A mutable set of files per level, built up from a base version and edits.
pub(crate) struct Builder {
    /// file number -> (level, metadata)
    files: HashMap<u64, (usize, Arc<FileMetaData>)>,
    num_levels: usize,
    /// Live blob files (`blob_meta.rs`).
    blobs: BTreeMap<u64, BlobFileMeta>,
}

impl Builder {
    /// Starts from `base`.
    pub(crate) fn new(base: &Version, num_levels: usize) -> Self {
        let mut files = HashMap::with_capacity(base.num_files());
        for (level, level_files) in base.files.iter().enumerate() {
            for f in level_files {
                files.insert(f.number, (level, Arc::clone(f)));
            }
        }
        Builder { files, num_levels, blobs: (*base.blob_files).clone() }
    }

    /// Applies `edit`'s deletions, then its additions (so a file may move between levels in
    /// one edit). On error the builder may be partly updated; callers discard it.
    pub(crate) fn apply(&mut self, edit: &VersionEdit) -> Result<(), String> {
        for &(level, number) in &edit.deleted_files {
            match self.files.get(&number) {
                Some((l, _)) if *l == level => {
                    self.files.remove(&number);
                }
                Some((l, _)) => {
                    return Err(format!(
                        "edit deletes file {number} from level {level}, but it is at level {l}"
                    ))
                }
                None => {
                    return Err(format!(
                        "edit deletes file {number} from level {level}, which has no such file"
                    ))
                }
            }
        }
        for (level, meta) in &edit.new_files {
            if *level >= self.num_levels {
                return Err(format!(
                    "edit adds file {} at level {level}, but there are only {} levels",
                    meta.number, self.num_levels
                ));
            }
            if let Some((l, _)) = self.files.get(&meta.number) {
                return Err(format!(
                    "edit adds file {} at level {level}, but it is already live at level {l}",
                    meta.number
                ));
            }
            self.files.insert(meta.number, (*level, Arc::new(meta.clone())));
        }
        self.apply_blobs(edit)
    }

    /// Applies `edit`'s blob file additions, then its garbage; a file all garbage is dropped
    /// (no SST references it any more).
    fn apply_blobs(&mut self, edit: &VersionEdit) -> Result<(), String> {
        for a in &edit.blob_file_additions {
            if self.blobs.contains_key(&a.number) || self.files.contains_key(&a.number) {
                return Err(format!("edit adds blob file {}, but it is already live", a.number));
            }
            self.blobs.insert(a.number, BlobFileMeta { addition: *a, ..Default::default() });
        }
        for g in &edit.blob_file_garbage {
            let Some(m) = self.blobs.get_mut(&g.number) else {
                return Err(format!(
                    "edit counts garbage in blob file {}, which is not live",
                    g.number
                ));
            };
            m.garbage_count = m.garbage_count.saturating_add(g.garbage_count);
            m.garbage_bytes = m.garbage_bytes.saturating_add(g.garbage_bytes);
            if m.garbage_count > m.addition.blob_count || m.garbage_bytes > m.addition.blob_bytes {
                return Err(format!(
                    "edit counts more garbage in blob file {} than it holds",
                    g.number
                ));
            }
            if m.all_garbage() {
                self.blobs.remove(&g.number);
            }
        }
        Ok(())
    }

    /// The largest file number present (0 if none).
    pub(crate) fn max_file_number(&self) -> u64 {
        let tables = self.files.keys().copied().max().unwrap_or(0);
        tables.max(self.blobs.keys().next_back().copied().unwrap_or(0))
    }

    /// Builds the version: level 0 newest first, deeper levels by smallest internal key.
    pub(crate) fn finish(&self) -> Version {
        let mut v = Version::new(self.num_levels);
        v.blob_files = Arc::new(self.blobs.clone());
        for (level, f) in self.files.values() {
            if let Some(files) = v.files.get_mut(*level) {
                files.push(Arc::clone(f));
            }
        }
        for (level, files) in v.files.iter_mut().enumerate() {
            if level == 0 {
                files.sort_by(|a, b| newest_first(a, b));
            } else {
                files.sort_by(|a, b| {
                    compare_internal(a.smallest.encoded(), b.smallest.encoded())
                        .then(a.number.cmp(&b.number))
                });
            }
        }
        v
    }
}

/// Level-0 order: largest sequence number descending, then file number descending.
pub(crate) fn newest_first(a: &FileMetaData, b: &FileMetaData) -> Ordering {
    b.largest_seq.cmp(&a.largest_seq).then(b.number.cmp(&a.number))
}
