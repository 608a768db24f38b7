//! The write phase of a read-write open, all or nothing: replayed memtables to L0 SSTs, the new
//! WAL, damaged WALs renamed `NNNNNN.log.corrupt`, then one new MANIFEST made current.
//!
//! Who calls: `open.rs`, once recovery has succeeded in memory, with the LOCK held and before
//! any background thread exists (so the `versions` and `state` locks are uncontended). Every
//! file created and every rename is recorded in an [`Undo`] guard; until CURRENT names the new
//! MANIFEST, any error (a full disk, an IO error) runs it backwards, deleting the new files
//! (partial ones included) and renaming the WALs back, so the directory is as it was. Once
//! CURRENT names the new MANIFEST the open has committed: nothing is undone (a directory sync
//! failing after that rename still returns its error, but the state on disk is the new one,
//! consistent, and the next open reads it).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::core::DbInner;
use super::replay::Replayed;
use crate::error::Result;
use crate::filename::{corrupt_wal_name, corrupt_wal_path, table_path, wal_path};
use crate::fs::Fs;
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
    pub(super) fn commit_open(&self, replayed: Replayed) -> Result<()> {
        let Replayed { mems, last_sequence, mut report } = replayed;
        let fs = self.fs.as_ref();
        let mut undo = Undo { fs, steps: Vec::new() };
        // Numbers: the MANIFEST's first, so a new database gets MANIFEST-000001.
        let manifest_number = self.versions.lock().new_file_number();
        let mut edit = VersionEdit::default();
        for mem in &mems {
            let number = self.versions.lock().new_file_number();
            undo.steps.push(Step::Remove(table_path(&self.path, number)));
            if let Some(meta) = self.write_level0_table(mem, number)? {
                edit.new_files.push((0, meta));
            }
        }
        let log_number = self.versions.lock().new_file_number();
        let log_path = wal_path(&self.path, log_number);
        undo.steps.push(Step::Remove(log_path.clone()));
        let wal = LogWriter::new(fs.create(&log_path)?);
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
        edit.log_number = Some(log_number);
        let mut vs = self.versions.lock();
        vs.set_last_sequence(last_sequence);
        if let Err(e) = vs.log_and_apply_to_new_manifest(edit, manifest_number) {
            if current_names(fs, &self.path, manifest_number) {
                // CURRENT was switched; only the directory sync after it failed. Committed.
                undo.disarm();
            }
            return Err(e);
        }
        undo.disarm();
        let current = vs.current();
        drop(vs);
        *self.wal.lock() = Some(wal);
        self.last_sequence.store(last_sequence, Ordering::Release);
        let mut st = self.state.lock();
        st.mem_log_number = log_number;
        st.current = current;
        self.install_super_version(&st);
        drop(st);
        if !report.is_empty() {
            self.info_log.log(&format!("[WARN] WAL recovery:\n{report}"));
        }
        *self.recovery_report.lock() = report;
        Ok(())
    }
}

/// True if `dir/CURRENT` names MANIFEST `number`.
fn current_names(fs: &dyn Fs, dir: &std::path::Path, number: u64) -> bool {
    crate::fs::read_all(fs, &crate::filename::current_path(dir))
        .is_ok_and(|c| c == format!("{}\n", crate::filename::manifest_name(number)).as_bytes())
}
