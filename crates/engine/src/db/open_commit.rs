//! The write phase of a read-write open, all or nothing: the WALs replayed again into L0 SSTs,
//! the new WAL, damaged WALs renamed `NNNNNN.log.corrupt`, then one new MANIFEST made current.
//!
//! The replay in `open.rs` (writing nothing) decided that the open can succeed and what it
//! drops, and kept the data if it fit in one write buffer. If it did not, the WALs are replayed
//! a second time here, one memtable at a time, each written to L0 when it is full, so recovery
//! holds one write buffer in memory; the second pass must find exactly what the first found
//! (else the WALs changed under the LOCK: Corruption, undone).
//!
//! Who calls: `open.rs`, once recovery has succeeded in memory, with the LOCK held and before
//! any background thread exists (so the `versions` and `state` locks are uncontended). Every
//! file created and every rename is recorded in an [`Undo`] guard; until CURRENT names the new
//! MANIFEST, any error (a full disk, an IO error) runs it backwards, deleting the new files
//! (partial ones included) and renaming the WALs back, so the directory is as it was. Once
//! CURRENT names the new MANIFEST the open has committed: nothing is undone (a directory sync
//! failing after that rename still returns its error, but the state on disk is the new one,
//! consistent, and the next open reads it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::cf_data::CfState;
use super::core::DbInner;
use super::open_families::FamilyPlan;
use super::replay::{replay_wals, Replayed, WalFile};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename::{corrupt_wal_name, corrupt_wal_path, table_path, wal_path};
use crate::fs::Fs;
use crate::kill_point::kill_point;
use crate::memtable::MemTable;
use crate::version::VersionEdit;
use crate::wal::LogWriter;

/// Steps to take back if the commit fails: files to delete, renames to reverse (newest first).
/// Runs on drop unless [`Undo::disarm`]ed.
struct Undo<'a> {
    fs: &'a dyn Fs,
    steps: Vec<Step>,
}

enum Step {
    Remove(PathBuf),
    Rename { from: PathBuf, to: PathBuf },
}

impl Undo<'_> {
    fn disarm(mut self) {
        self.steps.clear();
    }
}

impl Drop for Undo<'_> {
    fn drop(&mut self) {
        for step in self.steps.drain(..).rev() {
            // Best effort: the error that made the commit fail is the one returned.
            match step {
                Step::Remove(p) => {
                    if self.fs.exists(&p) {
                        let _ = self.fs.remove_file(&p);
                    }
                }
                Step::Rename { from, to } => {
                    let _ = self.fs.rename(&to, &from);
                }
            }
        }
    }
}

impl DbInner {
    /// Makes the replayed state durable and current (see the module doc). On success the new
    /// WAL is open, the memtable empty, and the report says which WALs were kept.
    /// `mems`: the replayed data, if the first replay kept it (else it is replayed again).
    pub(super) fn commit_open(
        &self,
        wals: &[WalFile],
        checked: Replayed,
        mems: Option<Vec<(u32, Vec<Arc<MemTable>>)>>,
        plan: &FamilyPlan,
    ) -> Result<()> {
        let fs = self.fs.as_ref();
        let mut undo = Undo { fs, steps: Vec::new() };
        // Numbers: the MANIFEST's first, so a new database gets MANIFEST-000001.
        let manifest_number = self.versions.lock().new_file_number();
        // One edit per open family (its recovered tables and new log number), in one MANIFEST.
        let mut edits: BTreeMap<u32, VersionEdit> = BTreeMap::new();
        for f in &plan.open {
            let mut e = VersionEdit::default();
            e.cf.family = f.id;
            edits.insert(f.id, e);
        }
        let opts_of = |id: u32| plan.open.iter().find(|f| f.id == id).map(|f| f.opts.clone());
        let mut to_l0 = |id: u32, mem: &Arc<MemTable>, undo: &mut Undo<'_>| -> Result<()> {
            let (Some(opts), Some(edit)) = (opts_of(id), edits.get_mut(&id)) else {
                return Ok(());
            };
            let number = self.versions.lock().new_file_number();
            undo.steps.push(Step::Remove(table_path(&self.path, number)));
            let start = std::time::Instant::now();
            let mut blobs = super::blob_outputs::BlobOutputs::default();
            let written = self.write_level0_table(&opts, mem, number, &mut blobs);
            // Its blob files, finished or not, go too if the commit fails.
            let paths = blobs.numbers().map(|n| crate::filename::blob_path(&self.path, n));
            undo.steps.extend(paths.map(Step::Remove));
            let written = written?;
            edit.blob_file_additions.append(&mut blobs.additions);
            let blob_bytes = blobs.bytes;
            if let Some(meta) = written {
                // A recovery flush is a flush (RocksDB counts it in L0's row and in
                // `Flush(GB)`): without it a step that reopens a database undercounts what it
                // wrote and its W-Amp's denominator.
                let bytes = (meta.file_size, blob_bytes);
                self.report_flush("recovered memtable", id, mem, number, bytes, start);
                edit.new_files.push((0, meta));
            }
            Ok(())
        };
        let replayed = match mems {
            Some(families) => {
                for (id, mems) in &families {
                    for mem in mems {
                        to_l0(*id, mem, &mut undo)?;
                    }
                }
                checked
            }
            None => {
                let mut mems = super::open::replay_memtables(&self.versions.lock(), plan);
                let (start, log_number) = {
                    let vs = self.versions.lock();
                    (vs.last_sequence(), vs.log_number())
                };
                let mode = self.opts.wal_recovery_mode;
                let mut sink = |wal: u64, batch: &WriteBatch| {
                    for (id, full) in mems.insert(wal, batch) {
                        to_l0(id, &full, &mut undo)?;
                    }
                    Ok(())
                };
                let replayed =
                    replay_wals(fs, &self.path, wals, mode, start, log_number, &mut sink)?;
                if replayed != checked {
                    return Err(Error::corruption(
                        self.path.display(),
                        0,
                        format!(
                            "the WALs read differently on the second pass of recovery (first: \
                             {}, then: {}); nothing was changed",
                            checked.report, replayed.report
                        ),
                    ));
                }
                for (id, mems) in mems.finish() {
                    for mem in &mems {
                        to_l0(id, mem, &mut undo)?;
                    }
                }
                replayed
            }
        };
        kill_point!("open.tables_written");
        let Replayed { last_sequence, mut report } = replayed;
        let log_number = self.versions.lock().new_file_number();
        let log_path = wal_path(&self.path, log_number);
        undo.steps.push(Step::Remove(log_path.clone()));
        let wal = LogWriter::new(self.create_wal(log_number)?);
        // Keep what recovery could not replay: renamed before CURRENT moves past it (a crash in
        // between replays the renamed file the same way: `open.rs` reads `.log.corrupt` WALs
        // at or above the log number), never deleted as obsolete afterwards.
        for loss in report.wals.iter_mut().filter(|l| l.needs_keeping() && l.kept_as.is_none()) {
            let (from, to) =
                (wal_path(&self.path, loss.wal), corrupt_wal_path(&self.path, loss.wal));
            fs.rename(&from, &to)?;
            undo.steps.push(Step::Rename { from, to });
            loss.kept_as = Some(corrupt_wal_name(loss.wal));
        }
        fs.sync_dir(&self.path)?;
        let mut vs = self.versions.lock();
        // The families the open creates, numbered after every id the database ever gave.
        let mut created = Vec::new();
        for (i, (name, opts)) in plan.create.iter().enumerate() {
            let id = vs.max_column_family() + 1 + i as u32;
            let mut e = VersionEdit { log_number: Some(log_number), ..Default::default() };
            e.cf.family = id;
            e.cf.add = Some(name.clone());
            edits.insert(id, e);
            created.push((id, name.clone(), opts.clone()));
        }
        for e in edits.values_mut() {
            e.log_number = Some(log_number);
        }
        vs.set_last_sequence(last_sequence);
        let edits: Vec<VersionEdit> = edits.into_values().collect();
        if let Err(e) = vs.log_and_apply_group_to_new_manifest(edits, manifest_number) {
            if crate::version::current::current_names(fs, &self.path, manifest_number) {
                // CURRENT was switched; only the directory sync after it failed. Committed.
                undo.disarm();
            }
            return Err(e);
        }
        undo.disarm();
        for (id, _, opts) in &created {
            // Each created family's own level count (empty: cannot fail) and block cache.
            vs.set_family_levels(*id, opts.num_levels)?;
            if let Some(cache) = super::open_families::own_block_cache(&self.opts, opts) {
                vs.set_family_block_cache(*id, cache);
            }
        }
        let currents: Vec<(u32, Option<Arc<crate::version::Version>>)> =
            vs.families().keys().map(|&id| (id, vs.current_of(id))).collect();
        drop(vs);
        *self.wal.lock() = Some(super::core::ActiveWal::new(wal, log_number));
        self.last_sequence.store(last_sequence, Ordering::Release);
        let mut st = self.state.lock();
        for (id, name, opts) in created {
            let v = Arc::new(crate::version::Version::new(opts.num_levels));
            st.cfs.insert(id, CfState::new(id, name, opts, self.instance, v));
        }
        let mut retired = Vec::new();
        for (id, current) in currents {
            let (Some(cf), Some(current)) = (st.cf_mut(id), current) else { continue };
            cf.mem_log_number = log_number;
            cf.current = current;
            retired.extend(self.install_super_version(&st, id));
        }
        self.publish_write_mems(&mut st);
        drop(st);
        drop(retired);
        if !report.is_empty() {
            self.info_log.log(&format!("[WARN] WAL recovery:\n{report}"));
        }
        *self.recovery_report.lock() = report;
        Ok(())
    }
}
