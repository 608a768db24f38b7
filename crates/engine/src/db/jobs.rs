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
//! Locks: the registry lives in `DbState` under `DbInner::state`. A guard is made with the
//! state lock held (the caller's `&mut Jobs`; `core.rs` wraps these in `DbInner::begin_*`);
//! its `Drop` takes the state lock through [`JobHost`], so a guard must never be dropped while
//! the caller holds that lock. This module knows nothing of `DbInner` (no circle with `core`). Dropping a
//! flush, compaction or manual guard wakes the background threads (`bg_cv`) and the waiters
//! (`done_cv`).

use std::collections::HashSet;

use crate::compaction::picker::JobsView;
use crate::compaction::Compaction;

/// What is running. See the module documentation.
pub(crate) struct Jobs {
    flush_running: bool,
    compactions_running: usize,
    manual: bool,
    /// Input files of running compactions.
    compacting: HashSet<u64>,
    /// File numbers being written by running jobs (not yet in a version).
    pending_outputs: HashSet<u64>,
}

impl Jobs {
    /// Nothing running.
    pub fn new() -> Jobs {
        Jobs {
            flush_running: false,
            compactions_running: 0,
            manual: false,
            compacting: HashSet::new(),
            pending_outputs: HashSet::new(),
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

    /// What a picker may know of the running jobs, with the family's round-robin `cursors`
    /// (`cf_data.rs`).
    pub fn view<'a>(&'a self, cursors: &'a [Vec<u8>]) -> JobsView<'a> {
        JobsView { compacting: &self.compacting, cursors }
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
    host: &'a dyn JobHost,
}

/// A running compaction: its count and its input files; released on drop.
#[must_use]
pub(crate) struct CompactionGuard<'a> {
    host: &'a dyn JobHost,
    inputs: Vec<u64>,
}

/// The manual-compaction slot; released on drop.
#[must_use]
pub(crate) struct ManualGuard<'a> {
    host: &'a dyn JobHost,
}

/// A reserved output file number, kept from obsolete-file deletion until dropped (drop it
/// after the file is in a version, or after the file was removed).
#[must_use]
pub(crate) struct OutputGuard<'a> {
    host: &'a dyn JobHost,
    number: u64,
}

impl OutputGuard<'_> {
    /// The reserved file number.
    pub fn number(&self) -> u64 {
        self.number
    }
}

/// What the guards release into: the owner of the registry (`DbInner`, in `core.rs`).
pub(crate) trait JobHost: Sync {
    /// Runs `f` on the registry, under the lock that guards it.
    fn with_jobs(&self, f: &mut dyn FnMut(&mut Jobs));
    /// Wakes the background threads and whoever waits for a job to end.
    fn job_ended(&self);
}

impl Jobs {
    /// Takes the flush mark, unless a flush runs already.
    pub fn begin_flush<'a>(&mut self, host: &'a dyn JobHost) -> Option<FlushGuard<'a>> {
        if self.flush_running {
            return None;
        }
        self.flush_running = true;
        Some(FlushGuard { host })
    }

    /// Registers `c` as running: counts it and marks its inputs busy.
    pub fn begin_compaction<'a>(
        &mut self,
        host: &'a dyn JobHost,
        c: &Compaction,
    ) -> CompactionGuard<'a> {
        let inputs: Vec<u64> = c.input_files().map(|f| f.number).collect();
        self.compactions_running += 1;
        self.compacting.extend(inputs.iter().copied());
        CompactionGuard { host, inputs }
    }

    /// Takes the manual-compaction slot if it is free and no compaction runs.
    pub fn try_begin_manual<'a>(&mut self, host: &'a dyn JobHost) -> Option<ManualGuard<'a>> {
        if self.manual || self.compactions_running > 0 {
            return None;
        }
        self.manual = true;
        Some(ManualGuard { host })
    }

    /// Registers file `number` as a pending output.
    pub fn add_output<'a>(&mut self, host: &'a dyn JobHost, number: u64) -> OutputGuard<'a> {
        self.pending_outputs.insert(number);
        OutputGuard { host, number }
    }
}

impl Drop for FlushGuard<'_> {
    fn drop(&mut self) {
        self.host.with_jobs(&mut |j| j.flush_running = false);
        self.host.job_ended();
    }
}

impl Drop for CompactionGuard<'_> {
    fn drop(&mut self) {
        let inputs = &self.inputs;
        self.host.with_jobs(&mut |j| {
            j.compactions_running = j.compactions_running.saturating_sub(1);
            for n in inputs {
                j.compacting.remove(n);
            }
        });
        self.host.job_ended();
    }
}

impl Drop for ManualGuard<'_> {
    fn drop(&mut self) {
        self.host.with_jobs(&mut |j| j.manual = false);
        self.host.job_ended();
    }
}

impl Drop for OutputGuard<'_> {
    fn drop(&mut self) {
        let n = self.number;
        self.host.with_jobs(&mut |j| {
            j.pending_outputs.remove(&n);
        });
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
