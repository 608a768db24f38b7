//! The registry of running background jobs: the flush, the compactions and their input files,
//! the manual-compaction slot (taken by `compact_range` and by ingestion) and the file numbers
//! being written that no version lists yet ("pending outputs").
//!
//! Contract: every mark is taken through a guard whose `Drop` gives it back, so an early
//! return, an error or a panic part-way through a job cannot leave a "running" mark behind
//! (RocksDB releases a compaction in its job's destructor; pebble removes it from
//! `inProgress` in one place). The fields are private to this module; the rest of `db/` reads
//! them through accessors and the pickers through [`JobsView`].
//!
//! Locks: the registry lives in [`DbState`] under `DbInner::state`. A guard is made with the
//! state lock held (the caller's `&mut DbState`) or takes it itself; its `Drop` takes the state
//! lock, so a guard must never be dropped while the caller holds that lock. Dropping a
//! flush, compaction or manual guard wakes the background threads (`bg_cv`) and the waiters
//! (`done_cv`).

use std::collections::HashSet;

use super::core::{DbInner, DbState};
use crate::compaction::picker::JobsView;
use crate::compaction::Compaction;
use crate::error::Result;

/// What is running. See the module documentation.
pub(crate) struct Jobs {
    flush_running: bool,
    compactions_running: usize,
    manual: bool,
    /// Input files of running compactions.
    compacting: HashSet<u64>,
    /// File numbers being written by running jobs (not yet in a version).
    pending_outputs: HashSet<u64>,
    /// Round-robin compaction cursor per level (largest user key last compacted).
    cursors: Vec<Vec<u8>>,
}

impl Jobs {
    /// Nothing running, cursors at the start of each of `num_levels` levels.
    pub fn new(num_levels: usize) -> Jobs {
        Jobs {
            flush_running: false,
            compactions_running: 0,
            manual: false,
            compacting: HashSet::new(),
            pending_outputs: HashSet::new(),
            cursors: vec![Vec::new(); num_levels],
        }
    }

    /// A flush is running.
    pub fn flush_running(&self) -> bool {
        self.flush_running
    }

    /// How many compactions run (automatic and manual).
    pub fn compactions_running(&self) -> usize {
        self.compactions_running
    }

    /// The manual-compaction slot is taken (`compact_range` or an ingestion runs).
    pub fn manual_running(&self) -> bool {
        self.manual
    }

    /// File `number` is an input of a running compaction.
    pub fn is_compacting(&self, number: u64) -> bool {
        self.compacting.contains(&number)
    }

    /// File numbers being written that no version lists yet.
    pub fn pending_outputs(&self) -> impl Iterator<Item = u64> + '_ {
        self.pending_outputs.iter().copied()
    }

    /// What a picker may know of the running jobs.
    pub fn view(&self) -> JobsView<'_> {
        JobsView { compacting: &self.compacting, cursors: &self.cursors }
    }

    /// Moves `level`'s round-robin cursor to `key` (after a pick that the picker says
    /// advances it).
    pub fn set_cursor(&mut self, level: usize, key: Vec<u8>) {
        if let Some(c) = self.cursors.get_mut(level) {
            *c = key;
        }
    }

    /// Nothing is registered (tests: no mark leaked).
    #[cfg(test)]
    pub fn is_idle(&self) -> bool {
        !self.flush_running
            && self.compactions_running == 0
            && !self.manual
            && self.compacting.is_empty()
            && self.pending_outputs.is_empty()
    }
}

/// The flush mark; released on drop.
#[must_use]
pub(crate) struct FlushGuard<'a> {
    db: &'a DbInner,
}

/// A running compaction: its count and its input files; released on drop.
#[must_use]
pub(crate) struct CompactionGuard<'a> {
    db: &'a DbInner,
    inputs: Vec<u64>,
}

/// The manual-compaction slot; released on drop.
#[must_use]
pub(crate) struct ManualGuard<'a> {
    db: &'a DbInner,
}

/// A reserved output file number, kept from obsolete-file deletion until dropped (drop it
/// after the file is in a version, or after the file was removed).
#[must_use]
pub(crate) struct OutputGuard<'a> {
    db: &'a DbInner,
    number: u64,
}

impl OutputGuard<'_> {
    /// The reserved file number.
    pub fn number(&self) -> u64 {
        self.number
    }
}

impl DbInner {
    /// Takes the flush mark, unless a flush runs already.
    pub(crate) fn begin_flush(&self, st: &mut DbState) -> Option<FlushGuard<'_>> {
        if st.jobs.flush_running {
            return None;
        }
        st.jobs.flush_running = true;
        Some(FlushGuard { db: self })
    }

    /// Registers `c` as running: counts it and marks its inputs busy.
    pub(crate) fn begin_compaction(&self, st: &mut DbState, c: &Compaction) -> CompactionGuard<'_> {
        let inputs: Vec<u64> = c.input_files().map(|f| f.number).collect();
        st.jobs.compactions_running += 1;
        st.jobs.compacting.extend(inputs.iter().copied());
        CompactionGuard { db: self, inputs }
    }

    /// Takes the manual-compaction slot, waiting until no compaction (manual or automatic)
    /// runs; no automatic compaction starts while it is held. Fails with the background error
    /// if one is set while waiting.
    pub(crate) fn begin_manual(&self) -> Result<ManualGuard<'_>> {
        let mut st = self.state.lock();
        while st.jobs.manual || st.jobs.compactions_running > 0 {
            DbInner::check_bg_error(&st)?;
            self.done_cv.wait(&mut st);
        }
        st.jobs.manual = true;
        Ok(ManualGuard { db: self })
    }

    /// A new file number, registered as a pending output until the guard is dropped. Takes
    /// `versions`, then `state` (one after the other, never both).
    pub(crate) fn reserve_output(&self) -> OutputGuard<'_> {
        let number = self.versions.lock().new_file_number();
        self.state.lock().jobs.pending_outputs.insert(number);
        OutputGuard { db: self, number }
    }

    fn job_ended(&self) {
        self.done_cv.notify_all();
        self.bg_cv.notify_all();
    }
}

impl Drop for FlushGuard<'_> {
    fn drop(&mut self) {
        self.db.state.lock().jobs.flush_running = false;
        self.db.job_ended();
    }
}

impl Drop for CompactionGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.db.state.lock();
        st.jobs.compactions_running = st.jobs.compactions_running.saturating_sub(1);
        for n in &self.inputs {
            st.jobs.compacting.remove(n);
        }
        drop(st);
        self.db.job_ended();
    }
}

impl Drop for ManualGuard<'_> {
    fn drop(&mut self) {
        self.db.state.lock().jobs.manual = false;
        self.db.job_ended();
    }
}

impl Drop for OutputGuard<'_> {
    fn drop(&mut self) {
        self.db.state.lock().jobs.pending_outputs.remove(&self.number);
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
