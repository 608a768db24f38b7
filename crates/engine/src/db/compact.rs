//! Running compactions: the automatic ones picked by background threads and the manual
//! `compact_range`. Builds the merged input, runs [`crate::compaction::job::run`] (once, or once
//! per subcompaction range on scoped threads), and installs the result as one VersionEdit; on
//! any failure every output file of the job is deleted and the inputs stay live.
//!
//! Locks: `state` to register outputs and to install; `versions` for the MANIFEST write; none
//! while merging.

use std::sync::Arc;
use std::time::Instant;

use super::cf_data::ColumnFamilyData;
use super::core::DbInner;
use super::stats::LevelSnap;
use crate::kill_point::kill_point;
use parking_lot::Mutex;

use crate::compaction::job::{self, JobContext, JobOutput};
use crate::compaction::{leveled, subcompaction, Compaction};
use crate::error::{Error, Result};
use crate::iter::merging::MergingIterator;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::user_key;
use crate::sst::prefetch::Readahead;
use crate::version::level_iter::LevelIterator;
use crate::version::{FileMetaData, VersionEdit};

impl DbInner {
    /// Runs `c` to completion and installs it. On failure the inputs stay live, partial outputs
    /// are deleted and the error is recorded as a background error.
    /// `c` is a compaction of family `cf`.
    pub(crate) fn run_compaction(&self, cf: &ColumnFamilyData, c: &Compaction) -> Result<()> {
        let start = Instant::now();
        let result = if c.trivial_move { self.trivial_move(cf, c) } else { self.merge(cf, c) };
        match result {
            Ok(written) => {
                let (r0, r1): (u64, u64) = (
                    c.inputs[0].iter().map(|f| f.file_size).sum::<u64>()
                        + c.middle
                            .iter()
                            .flat_map(|m| m.1.iter())
                            .map(|f| f.file_size)
                            .sum::<u64>(),
                    c.inputs[1].iter().map(|f| f.file_size).sum(),
                );
                let mut s =
                    LevelSnap { micros: start.elapsed().as_micros() as u64, count: 1, ..written };
                if c.trivial_move {
                    s.moved = r0;
                } else {
                    s.rn = r0;
                    s.rnp1 = r1;
                }
                self.stats.record_compaction(cf.id, c.output_level, &s);
                self.info_log.log(&format!(
                    "[compaction] {} L{} ({} files) + L{} ({} files) -> {} bytes written{} in {} ms",
                    c.reason,
                    c.level,
                    c.inputs[0].len(),
                    c.output_level,
                    c.inputs[1].len(),
                    s.written + s.blob_written,
                    if c.trivial_move { " (trivial move)" } else { "" },
                    start.elapsed().as_millis()
                ));
                self.delete_obsolete_files();
                Ok(())
            }
            Err(e) => {
                if !matches!(e, crate::Error::Busy(_)) {
                    let mut st = self.state.lock();
                    self.set_bg_error(&mut st, e.duplicate());
                }
                Err(e)
            }
        }
    }

    fn trivial_move(&self, cf: &ColumnFamilyData, c: &Compaction) -> Result<LevelSnap> {
        let mut edit = VersionEdit::default();
        for f in &c.inputs[0] {
            edit.deleted_files.push((c.level, f.number));
            edit.new_files.push((c.output_level, (**f).clone()));
        }
        self.install(cf.id, edit)?;
        Ok(LevelSnap::default())
    }

    /// Applies `edit` to family `id` and publishes its new version. `Busy` (writing nothing)
    /// if the family was dropped meanwhile: the job's outputs are then in no version.
    fn install(&self, id: u32, mut edit: VersionEdit) -> Result<()> {
        let mut vs = self.versions.lock();
        if vs.current_of(id).is_none() {
            return Err(Error::Busy(format!("column family id {id} was dropped")));
        }
        edit.cf.family = id;
        let seq = vs.last_sequence().max(self.visible_sequence());
        vs.set_last_sequence(seq);
        vs.log_and_apply(edit)?;
        let current = vs.current_of(id);
        let mut st = self.state.lock();
        let mut retired = None;
        if let (Some(state), Some(current)) = (st.cf_mut(id), current) {
            state.current = current;
            retired = self.install_super_version(&st, id);
        }
        drop(st);
        drop(vs);
        drop(retired);
        Ok(())
    }

    /// The merged input of `c`: each L0 file, then one concatenating iterator per level; every
    /// file read ahead `compaction_readahead_size` bytes at a time.
    fn compaction_input(&self, c: &Compaction) -> Result<Box<dyn InternalIterator>> {
        let ra = Readahead::Fixed(self.opts.compaction_readahead_size);
        let level = |files: &Vec<Arc<FileMetaData>>| -> Box<dyn InternalIterator> {
            Box::new(
                LevelIterator::new(files.clone(), self.table_cache.clone(), false)
                    .with_readahead(ra),
            )
        };
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        if c.level == 0 {
            for f in &c.inputs[0] {
                children.push(self.table_cache.reader(f, Some(0))?.to_arc().iter_with(false, ra));
            }
        } else {
            children.push(level(&c.inputs[0]));
        }
        for (_, files) in &c.middle {
            children.push(level(files));
        }
        if !c.inputs[1].is_empty() {
            children.push(level(&c.inputs[1]));
        }
        Ok(Box::new(MergingIterator::new(children)))
    }

    /// Subcompaction boundaries for `c` from its input files' index blocks.
    fn subcompaction_boundaries(&self, c: &Compaction) -> Result<Vec<Vec<u8>>> {
        let mut anchors = Vec::new();
        for f in c.input_files() {
            let r = self.table_cache.reader(f, None)?;
            let mut prev_end = 0u64;
            for (sep, h) in r.index_entries()? {
                let end = h.offset + h.size;
                anchors.push((user_key(&sep).to_vec(), end.saturating_sub(prev_end)));
                prev_end = end;
            }
        }
        Ok(subcompaction::boundaries(anchors, self.opts.max_subcompactions))
    }

    /// Merges the inputs, split into subcompactions when allowed; installs the outputs as one
    /// VersionEdit. Returns (bytes written, keys in, keys dropped).
    /// Runs a merging compaction; returns what it did for the stats (bytes written to tables
    /// and to blob files, bytes read from blob files, entries in and dropped).
    fn merge(&self, cf: &ColumnFamilyData, c: &Compaction) -> Result<LevelSnap> {
        let mut tombstones: Vec<RangeTombstone> = Vec::new();
        for f in c.input_files() {
            let r = self.table_cache.reader(f, None)?;
            tombstones.extend(r.range_tombstones().to_tombstones());
        }
        let bounds = if subcompaction::should_split(c, self.opts.max_subcompactions) {
            self.subcompaction_boundaries(c)?
        } else {
            Vec::new()
        };
        let ranges = subcompaction::ranges(&bounds);
        let allocated = Mutex::new(Vec::new());
        let snapshots = self.snapshots.sequences();
        let (blob_source, blob_gc_cutoff) = self.blob_compaction_inputs(cf);
        let run_one = |lo: Option<Vec<u8>>, hi: Option<Vec<u8>>| -> Result<JobOutput> {
            let whole = lo.is_none() && hi.is_none();
            let clipped = subcompaction::clip(&tombstones, lo.as_deref(), hi.as_deref());
            let input = self.compaction_input(c)?;
            let input: Box<dyn InternalIterator> =
                if whole { input } else { Box::new(subcompaction::Bounded::new(input, lo, hi)) };
            let mut new_number = || {
                let output = self.reserve_output();
                let n = output.number();
                allocated.lock().push(output);
                n
            };
            let mut ctx = JobContext {
                opts: &cf.opts,
                fs: self.fs.as_ref(),
                dir: &self.path,
                snapshots: snapshots.clone(),
                new_file_number: &mut new_number,
                shutting_down: &self.shutting_down,
                rate_limiter: self.rate_limiter.as_ref(),
                blobs: blob_source,
                blob_gc_cutoff,
            };
            job::run(c, input, &FragmentedTombstones::new(clipped), &mut ctx)
        };
        let outputs: Vec<Result<JobOutput>> = if ranges.len() == 1 {
            vec![run_one(None, None)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = ranges
                    .into_iter()
                    .map(|(lo, hi)| {
                        let run_one = &run_one;
                        s.spawn(move || run_one(lo, hi))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Busy("a subcompaction thread panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        let mut out = JobOutput::default();
        let mut first_err = None;
        for o in outputs {
            match o {
                Ok(o) => {
                    out.files.extend(o.files);
                    out.keys_in += o.keys_in;
                    out.keys_dropped += o.keys_dropped;
                    out.bytes_written += o.bytes_written;
                    out.blobs.additions.extend(o.blobs.additions);
                    out.blobs.garbage.extend(o.blobs.garbage);
                    out.blobs.relocated.0 += o.blobs.relocated.0;
                    out.blobs.relocated.1 += o.blobs.relocated.1;
                    out.blobs.bytes_written += o.blobs.bytes_written;
                    out.blobs.bytes_read += o.blobs.bytes_read;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let result = match first_err {
            Some(e) => Err(e),
            None => self.install_outputs(cf, c, &out),
        };
        if result.is_err() {
            // No half-installed job: the outputs of the subcompactions that did finish go too.
            for f in &out.files {
                self.remove_failed_output(f.number);
            }
            // And their blob files (a subcompaction that failed abandoned its own).
            self.remove_failed_blob_files(out.blobs.additions.iter().map(|a| a.number));
        }
        // Installed or removed: the outputs need no protection from deletion any more.
        drop(allocated);
        // A job's `bytes_written` counts its blob files too: the table bytes are the rest.
        result.map(|()| LevelSnap {
            written: out.bytes_written.saturating_sub(out.blobs.bytes_written),
            blob_written: out.blobs.bytes_written,
            blob_read: out.blobs.bytes_read,
            keys_in: out.keys_in,
            keys_dropped: out.keys_dropped,
            ..LevelSnap::default()
        })
    }

    fn install_outputs(
        &self,
        cf: &ColumnFamilyData,
        c: &Compaction,
        out: &JobOutput,
    ) -> Result<()> {
        kill_point!("compaction.outputs_written");
        if !out.files.is_empty() {
            self.fs.sync_dir(&self.path)?;
        }
        let mut edit = VersionEdit::default();
        for f in c.inputs[0].iter() {
            edit.deleted_files.push((c.level, f.number));
        }
        for (level, files) in &c.middle {
            for f in files {
                edit.deleted_files.push((*level, f.number));
            }
        }
        for f in c.inputs[1].iter() {
            edit.deleted_files.push((c.output_level, f.number));
        }
        for f in &out.files {
            edit.new_files.push((c.output_level, f.clone()));
        }
        edit.blob_file_additions.extend_from_slice(&out.blobs.additions);
        edit.blob_file_garbage.extend_from_slice(&out.blobs.garbage);
        self.install(cf.id, edit)?;
        kill_point!("compaction.manifest_written");
        Ok(())
    }

    /// Manual compaction of `[begin, end]` of family `cf` down to the last non-empty level (at
    /// least L1).
    pub(crate) fn compact_range(
        &self,
        cf: &ColumnFamilyData,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let _manual = self.begin_manual()?;
        self.compact_range_locked(cf, begin, end)
    }

    /// Family `cf`'s current version; `Busy` if it was dropped.
    fn current_of(&self, cf: &ColumnFamilyData) -> Result<Arc<crate::version::Version>> {
        match self.state.lock().cf(cf.id) {
            Some(state) => Ok(state.current.clone()),
            None => Err(Error::Busy(format!("column family {:?} was dropped", cf.name))),
        }
    }

    fn compact_range_locked(
        &self,
        cf: &ColumnFamilyData,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let opts = &*cf.opts;
        let (last, num_levels) = {
            let v = self.current_of(cf)?;
            let last = (0..v.num_levels()).rev().find(|&l| !v.level_files(l).is_empty());
            (last, v.num_levels())
        };
        let Some(last) = last else { return Ok(()) };
        // Dynamic level bytes: everything ends in the last level, as RocksDB's CompactRange.
        let target = if opts.level_compaction_dynamic_level_bytes
            || opts.compaction_style == crate::options::CompactionStyle::Universal
        {
            num_levels - 1
        } else {
            last.max(1).min(num_levels - 1)
        };
        let mut level = 0;
        while level < target {
            let v = self.current_of(cf)?;
            let lo = begin.map(|b| b.to_vec());
            let hi = end.map(|e| e.to_vec());
            let files: Vec<_> = v
                .level_files(level)
                .iter()
                .filter(|f| {
                    let s = crate::key::user_key(f.smallest.encoded());
                    let l = crate::key::user_key(f.largest.encoded());
                    lo.as_deref().is_none_or(|b| l >= b) && hi.as_deref().is_none_or(|e| s <= e)
                })
                .cloned()
                .collect();
            if files.is_empty() {
                level += 1;
                continue;
            }
            // Skip empty levels: the output is the next non-empty level, or the target.
            let output =
                (level + 1..target).find(|&l| !v.level_files(l).is_empty()).unwrap_or(target);
            let c = leveled::build(opts, &v, level, output, files, &|_| false, "ManualCompaction");
            // Drop our reference to the version now, so its files become obsolete when the
            // compaction installs.
            drop(v);
            let Some(mut c) = c else {
                level += 1;
                continue;
            };
            level = output;
            // A manual compaction rewrites even a lone file, so tombstones get dropped.
            c.trivial_move = false;
            let running = {
                let mut st = self.state.lock();
                DbInner::check_bg_error(&st)?;
                self.begin_compaction(&mut st, &c)
            };
            let r = self.run_compaction(cf, &c);
            drop(running);
            drop(c);
            r?;
            self.delete_obsolete_files();
        }
        if opts.compaction_filter.is_some() {
            // RocksDB's default `BottommostLevelCompaction::kIfHaveCompactionFilter`: with a
            // filter the last level's files in the range are rewritten too, so that the filter
            // sees every key of the range.
            self.compact_last_level(cf, target, begin, end)?;
        }
        Ok(())
    }

    /// Rewrites the files of `level` overlapping `[begin, end]` in place (one compaction of
    /// the level into itself).
    fn compact_last_level(
        &self,
        cf: &ColumnFamilyData,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let v = self.current_of(cf)?;
        let files: Vec<_> = v
            .level_files(level)
            .iter()
            .filter(|f| {
                let (s, l) = (f.smallest.user_key(), f.largest.user_key());
                begin.is_none_or(|b| l >= b) && end.is_none_or(|e| s <= e)
            })
            .cloned()
            .collect();
        if files.is_empty() {
            return Ok(());
        }
        let c = leveled::build(&cf.opts, &v, level, level, files, &|_| false, "ManualCompaction");
        drop(v);
        let Some(mut c) = c else { return Ok(()) };
        c.trivial_move = false;
        let running = {
            let mut st = self.state.lock();
            DbInner::check_bg_error(&st)?;
            self.begin_compaction(&mut st, &c)
        };
        let r = self.run_compaction(cf, &c);
        drop(running);
        drop(c);
        r?;
        self.delete_obsolete_files();
        Ok(())
    }
}
