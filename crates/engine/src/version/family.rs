//! [`FamilyVersion`]: one column family's part of the [`super::VersionSet`] (its current
//! version, log number and name), and the snapshot edits that recreate a family in a new
//! MANIFEST (`docs/format/manifest.md`, "Snapshot").
//!
//! Owns no lock; the version set holds its families in a map under the database's version
//! mutex.

use std::sync::Arc;

use super::blob_meta::BlobFileGarbage;
use super::{Version, VersionEdit};
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;

/// One live column family's state in the version set.
pub(crate) struct FamilyVersion {
    /// The family's name (`default` for id 0).
    pub name: String,
    /// Its current version.
    pub current: Arc<Version>,
    /// WALs numbered below this hold none of its unflushed writes.
    pub log_number: u64,
    /// The family's own block cache (`Options::block_cache` in its options), given to each
    /// file of its versions (`VersionSet::set_family_block_cache`).
    pub block_cache: Option<crate::sst::SharedBlockCache>,
}

impl FamilyVersion {
    /// A family with no files.
    pub fn new(name: impl Into<String>, num_levels: usize) -> FamilyVersion {
        FamilyVersion {
            name: name.into(),
            current: Arc::new(Version::new(num_levels)),
            log_number: 0,
            block_cache: None,
        }
    }

    /// Adds the family's files, blob files and log number to `edit`; for a family other than
    /// `default`, also its id and name (tags 200 and 201), so the edit recreates it.
    pub fn fill_snapshot(&self, id: u32, edit: &mut VersionEdit) {
        edit.log_number = Some(self.log_number);
        if id != DEFAULT_COLUMN_FAMILY_ID {
            edit.cf.family = id;
            edit.cf.add = Some(self.name.clone());
        }
        for (level, files) in self.current.files.iter().enumerate() {
            edit.new_files.extend(files.iter().map(|f| (level, (**f).clone())));
        }
        for m in self.current.blob_files.values() {
            edit.blob_file_additions.push(m.addition);
            if m.garbage_count > 0 {
                edit.blob_file_garbage.push(BlobFileGarbage {
                    number: m.addition.number,
                    garbage_count: m.garbage_count,
                    garbage_bytes: m.garbage_bytes,
                });
            }
        }
    }
}
