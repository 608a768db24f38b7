//! The blob files a flush writes: a [`BlobSeparator`] whose file numbers are pending outputs
//! (kept from obsolete-file deletion until the MANIFEST lists the files or the job is over).
//!
//! A flush that fails removes the files its separator created (finished or not,
//! [`DbInner::remove_failed_blob_outputs`]), as a compaction abandons its own; a recovery flush
//! at open adds them to its undo steps.
//!
//! Who calls: `flush.rs` (`write_level0_table`). Locks: `versions` then `state`, one after the
//! other, for each new blob file's number (`reserve_output`). A file written by a job a crash
//! interrupts before its MANIFEST edit is in no version: obsolete-file deletion at the next open
//! removes it.

use super::cf_data::ColumnFamilyData;
use super::core::DbInner;
use super::jobs::OutputGuard;
use crate::blob::separate::{AddEntry, BlobSeparator};
use crate::error::Result;
use crate::options::Options;
use crate::version::blob_meta::BlobFileAddition;

/// The blob files of one job and the guards that keep them.
#[derive(Default)]
pub(crate) struct BlobOutputs<'a> {
    /// The finished files' MANIFEST records.
    pub additions: Vec<BlobFileAddition>,
    /// Their numbers' pending-output marks.
    pub guards: Vec<OutputGuard<'a>>,
    /// Bytes written to blob files.
    pub bytes: u64,
}

impl BlobOutputs<'_> {
    /// The numbers of every blob file the job created, finished or not.
    pub fn numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.guards.iter().map(|g| g.number())
    }
}

impl DbInner {
    /// Deletes the blob files of a flush that failed (every file it created, as
    /// [`Self::remove_failed_output`] its table), except those the failed MANIFEST write may
    /// have committed ([`crate::version::VersionSet::in_doubt`]): they stay until the next
    /// open. Call before the guards go (else obsolete-file deletion may race for them).
    pub(crate) fn remove_failed_blob_outputs(&self, outputs: &BlobOutputs<'_>) {
        self.remove_failed_blob_files(outputs.numbers());
    }

    /// Deletes blob files `numbers` of a job that failed, except those in doubt (above) and
    /// those a live version lists (a flush fails after its MANIFEST edit when the edit of an
    /// idle family's log number that follows it fails).
    pub(crate) fn remove_failed_blob_files(&self, numbers: impl Iterator<Item = u64>) {
        let (in_doubt, live) = {
            let vs = self.versions.lock();
            (vs.in_doubt().clone(), vs.live_files())
        };
        for n in numbers {
            if live.contains(&n) {
                continue;
            }
            if in_doubt.contains(&n) {
                self.info_log.log(&format!(
                    "[WARN] keeping {}: the MANIFEST write that added it failed, but may \
                     have committed",
                    crate::filename::blob_name(n)
                ));
                continue;
            }
            let _ = self.fs.remove_file(&crate::filename::blob_path(&self.path, n));
        }
    }

    /// A separator for an output at `level` of a family with options `opts`, or `None` when
    /// values stay inline there.
    pub(crate) fn blob_separator(&self, opts: &Options, level: usize) -> Option<BlobSeparator<'_>> {
        let policy = crate::blob::separate::SeparationPolicy::for_level(opts, level)?;
        Some(BlobSeparator::new(self.fs.as_ref(), &self.path, policy))
    }

    /// Writes `ikey`/`value` to `add`, through `sep` when it separates the value.
    pub(crate) fn add_maybe_separated<'a>(
        &'a self,
        sep: &mut Option<BlobSeparator<'_>>,
        outputs: &mut BlobOutputs<'a>,
        ikey: &[u8],
        value: &[u8],
        add: &mut AddEntry<'_>,
    ) -> Result<()> {
        if let Some(s) = sep {
            let mut new_number = || {
                let g = self.reserve_output();
                let n = g.number();
                outputs.guards.push(g);
                n
            };
            if s.separate(ikey, value, &mut new_number)? {
                self.prepopulate_blob_cache(s.value(), value);
                return add(s.key(), s.value());
            }
        }
        add(ikey, value)
    }

    /// With `prepopulate_blob_cache = FlushOnly`, puts `value`, just written where blob index
    /// `encoded` points, into the blob cache (this is only called by flushes).
    fn prepopulate_blob_cache(&self, encoded: &[u8], value: &[u8]) {
        use crate::blob::cache::PrepopulateBlobCache;
        if self.opts.prepopulate_blob_cache != PrepopulateBlobCache::FlushOnly
            || !self.blobs.cache.enabled()
        {
            return;
        }
        if let Ok(index) = crate::blob::format::BlobIndex::decode(encoded) {
            self.blobs.cache.insert(index.file_number, index.offset, value);
        }
    }

    /// What a compaction takes for blob files: the source to read them (when the database has
    /// any or writes them) and the garbage collection cutoff: blob indexes into files numbered
    /// below it are relocated (RocksDB's `blob_garbage_collection_age_cutoff`: that fraction of
    /// the live blob files, rounded down, oldest first: [`crate::blob::gc::gc_cutoff_file_number`];
    /// 0 when garbage collection is off).
    /// Of family `cf`.
    pub(crate) fn blob_compaction_inputs(
        &self,
        cf: &ColumnFamilyData,
    ) -> (Option<&crate::blob::reader::BlobSource>, u64) {
        let v = &cf.super_version.load().version;
        let opts = &cf.opts;
        if !opts.enable_blob_files && v.blob_files.is_empty() {
            return (None, 0);
        }
        let mut cutoff = 0;
        if opts.enable_blob_garbage_collection {
            cutoff = crate::blob::gc::gc_cutoff_file_number(
                v.blob_files.keys().copied(),
                v.blob_files.len(),
                opts.blob_garbage_collection_age_cutoff,
            );
        }
        (Some(&self.blobs), cutoff)
    }

    /// Finishes `sep`'s last file; its records go to `outputs`.
    pub(crate) fn finish_blobs(
        &self,
        sep: Option<BlobSeparator<'_>>,
        outputs: &mut BlobOutputs<'_>,
    ) -> Result<()> {
        if let Some(s) = sep {
            outputs.bytes += s.bytes_written();
            let written = &self.blobs.stats.bytes_written;
            written.fetch_add(s.bytes_written(), std::sync::atomic::Ordering::Relaxed);
            outputs.additions.extend(s.finish()?);
        }
        Ok(())
    }
}
