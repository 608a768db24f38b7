//! How the [`VersionSet`] applies edits: checked and built first, then written to the
//! MANIFEST (appended, or into a new one with a snapshot first), then installed; one edit, or
//! a group of edits of different column families written together (an open's); and a
//! family's level count ([`VersionSet::set_family_levels`]). A child module of `set.rs` (it
//! reads the set's fields); called with the database's version mutex held.

use std::sync::Arc;

use super::{as_slices, FamilyVersion, VersionSet};
use crate::error::{Error, Result};
use crate::kill_point::kill_point;
use crate::version::builder::Builder;
use crate::version::current::write_new_manifest;
use crate::version::{Version, VersionEdit};

impl VersionSet {
    /// [`VersionSet::log_and_apply_to_new_manifest`] of several edits at once, each of a
    /// different column family (an open's: the recovered tables of each family, the families
    /// it creates): all are in the new MANIFEST before CURRENT names it, or none.
    pub fn log_and_apply_group_to_new_manifest(
        &mut self,
        edits: Vec<VersionEdit>,
        manifest_number: u64,
    ) -> Result<()> {
        if manifest_number >= self.next_file_number || manifest_number <= self.manifest_file_number
        {
            return Err(Error::InvalidArgument(format!(
                "new MANIFEST number {manifest_number} outside ({}, {})",
                self.manifest_file_number, self.next_file_number
            )));
        }
        let mut ids: Vec<u32> = edits.iter().map(|e| e.cf.family).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::InvalidArgument(
                "a group of version edits names one column family twice".into(),
            ));
        }
        self.apply_edits(edits, Some(manifest_number))
    }

    pub(super) fn apply_edit(
        &mut self,
        edit: VersionEdit,
        new_manifest: Option<u64>,
    ) -> Result<()> {
        self.apply_edits(vec![edit], new_manifest)
    }

    /// Gives family `id` `num_levels` levels (its options' `num_levels`: each family may have
    /// its own, as in RocksDB; the MANIFEST does not record it). A new family starts with the
    /// database's count, and a recovered one with at least as many as hold files. Writes
    /// nothing. `InvalidArgument` if a file lies at level `num_levels` or deeper (RocksDB's
    /// "db has more levels than options.num_levels"), or the family is not live.
    pub fn set_family_levels(&mut self, id: u32, num_levels: usize) -> Result<()> {
        let Some(f) = self.families.get(&id) else {
            return Err(Error::InvalidArgument(format!("no live column family with id {id}")));
        };
        if f.current.num_levels() == num_levels {
            return Ok(());
        }
        let version = f.current.with_levels(num_levels).map_err(|deepest| {
            Error::InvalidArgument(format!(
                "column family {:?} has files at level {deepest}, more levels than its \
                 num_levels {num_levels} (RocksDB: db has more levels than options.num_levels)",
                f.name
            ))
        })?;
        self.install(id, version);
        Ok(())
    }

    /// Gives family `id` its own block cache (`Options::block_cache` in its options): every
    /// file of its versions, those it has now and those to come, is read through `cache`
    /// (`ReaderSlot::family_cache`). Set at open and at creation, before any read. Writes
    /// nothing; does nothing for a family that is not live.
    pub fn set_family_block_cache(&mut self, id: u32, cache: crate::sst::SharedBlockCache) {
        let Some(f) = self.families.get_mut(&id) else { return };
        f.current.files.iter().flatten().for_each(|m| m.reader.set_family_cache(&cache));
        f.block_cache = Some(cache);
    }

    /// Checks `edit` and builds the version it makes of its family, writing nothing.
    fn prepare_edit(&self, edit: &VersionEdit) -> Result<Version> {
        let id = edit.cf.family;
        self.check_family_edit(edit)?;
        let (family_log, base) = match (&edit.cf.add, self.families.get(&id)) {
            (Some(_), _) => (0, Arc::new(Version::new(self.num_levels))),
            (None, Some(f)) => (f.log_number, Arc::clone(&f.current)),
            (None, None) => unreachable!("check_family_edit refuses an edit of no live family"),
        };
        if let Some(n) = edit.log_number {
            if n < family_log || n >= self.next_file_number {
                return Err(Error::InvalidArgument(format!(
                    "version edit sets log number {n}, outside [{family_log}, {})",
                    self.next_file_number
                )));
            }
        }
        if let Some((_, f)) = edit.new_files.iter().find(|(_, f)| f.number >= self.next_file_number)
        {
            return Err(Error::InvalidArgument(format!(
                "version edit adds file {}, which was never allocated (next file number {})",
                f.number, self.next_file_number
            )));
        }
        let mut builder = Builder::new(&base, base.num_levels());
        drop(base);
        builder
            .apply(edit)
            .map_err(|d| Error::InvalidArgument(format!("version edit rejected: {d}")))?;
        Ok(builder.finish())
    }

    /// Applies `edits` (each of a different family) as one MANIFEST write: checked and built
    /// first (nothing written if one does not apply), then appended (or written into a new
    /// MANIFEST), then installed.
    fn apply_edits(
        &mut self,
        mut edits: Vec<VersionEdit>,
        new_manifest: Option<u64>,
    ) -> Result<()> {
        let mut versions = Vec::with_capacity(edits.len());
        for edit in &edits {
            versions.push(self.prepare_edit(edit)?);
        }
        let roll_to = match (&self.manifest, new_manifest) {
            (_, Some(n)) => Some(n),
            (Some(_), None) => None,
            (None, None) => Some(self.new_file_number()),
        };
        let mut records = Vec::with_capacity(edits.len());
        let mut max_cf = self.max_column_family;
        for edit in edits.iter_mut() {
            edit.next_file_number = Some(self.next_file_number);
            edit.last_sequence = Some(self.last_sequence);
            if edit.cf.add.is_some() {
                max_cf = max_cf.max(edit.cf.family);
                edit.cf.max_column_family = Some(max_cf);
            }
            let mut record = Vec::new();
            edit.encode(&mut record);
            records.push(record);
        }
        let added: Vec<u64> = edits
            .iter()
            .flat_map(|e| {
                e.new_files
                    .iter()
                    .map(|(_, f)| f.number)
                    .chain(e.blob_file_additions.iter().map(|a| a.number))
            })
            .collect();
        match (roll_to, self.manifest.as_mut()) {
            (None, Some(writer)) => {
                let mut synced = Ok(());
                for record in &records {
                    synced = writer.add_record(record);
                    if synced.is_err() {
                        break;
                    }
                }
                let synced = synced.and_then(|()| {
                    kill_point!("manifest.append.before_sync");
                    writer.sync()
                });
                if let Err(e) = synced {
                    // Some or all of the records may be in the file (and the page cache).
                    self.manifest = None;
                    self.in_doubt.extend(added);
                    return Err(e);
                }
            }
            (roll_to, _) => {
                let number = match roll_to {
                    Some(n) => n,
                    None => self.new_file_number(),
                };
                let mut all = self.snapshot_records();
                all.extend(records);
                match write_new_manifest(&*self.fs, &self.dir, number, &as_slices(&all)) {
                    Ok(writer) => {
                        self.manifest = Some(writer);
                        self.manifest_file_number = number;
                        // CURRENT durably names a MANIFEST holding only the in-memory state
                        // and these edits: earlier failed edits are provably not committed.
                        self.in_doubt.clear();
                    }
                    Err(f) => {
                        if f.switched {
                            // CURRENT may name the new MANIFEST: never append to the old one
                            // again, and keep what the edits add.
                            self.manifest = None;
                            self.in_doubt.extend(added);
                        }
                        return Err(f.error);
                    }
                }
            }
        }
        for (edit, version) in edits.into_iter().zip(versions) {
            let id = edit.cf.family;
            if let Some(name) = &edit.cf.add {
                self.families.insert(id, FamilyVersion::new(name.clone(), self.num_levels));
                self.max_column_family = self.max_column_family.max(id);
            }
            if edit.cf.drop {
                self.families.remove(&id);
                self.versions.retain(|w| w.strong_count() > 0);
                continue;
            }
            if let Some(n) = edit.log_number {
                if let Some(f) = self.families.get_mut(&id) {
                    f.log_number = n;
                }
            }
            self.install(id, version);
        }
        Ok(())
    }
}
