//! What every compaction picker shares: the [`CompactionPicker`] trait, the [`JobsView`] of
//! running jobs it is fed, and the key-range helpers.
//!
//! A picker is a pure function of a [`Version`], the [`Options`] and a [`JobsView`] (pebble's
//! `compactionPicker` fed a `compactionEnv`): it locks nothing and changes nothing, so it is
//! tested from text fixtures (`leveled_tests.rs`, `universal.rs`). The implementations are
//! [`super::leveled::LeveledPicker`] and [`super::universal::UniversalPicker`];
//! [`super::picker_for`] chooses one by `compaction_style`.

use std::collections::HashSet;
use std::sync::Arc;

use super::Compaction;
use crate::key::user_key;
use crate::options::Options;
use crate::version::{FileMetaData, Version};

/// Chooses the next automatic compaction.
pub trait CompactionPicker: Send + Sync {
    /// The next automatic compaction of `v`, if one is due; never one with a busy input.
    fn pick(&self, v: &Version, opts: &Options, jobs: &JobsView<'_>) -> Option<Compaction>;

    /// The round-robin cursor `c` moves, `(level, key)`, if the picker keeps one; the caller
    /// stores it (in the job registry) when it starts `c`.
    fn cursor_after(&self, _c: &Compaction) -> Option<(usize, Vec<u8>)> {
        None
    }

    /// Compaction scores per level, for the stats (at least 1: a compaction is due).
    fn scores(&self, v: &Version, opts: &Options) -> Vec<f64>;

    /// Bytes compaction must still rewrite (RocksDB's `EstimateCompactionBytesNeeded`), which
    /// the pending-bytes stall triggers compare against.
    fn pending_compaction_bytes(&self, v: &Version, opts: &Options) -> u64;

    /// What the `level0_*` triggers count: L0 files, or sorted runs.
    fn l0_trigger_count(&self, v: &Version) -> usize;
}

/// What a picker may know of the running jobs: the files being compacted and the round-robin
/// cursors (one per level, the largest user key last compacted). Built by the DB's job
/// registry (`db/jobs.rs`) under the state lock.
#[derive(Clone, Copy)]
pub struct JobsView<'a> {
    /// Input files of running compactions.
    pub compacting: &'a HashSet<u64>,
    /// Per level, the largest user key last compacted by a round-robin pick.
    pub cursors: &'a [Vec<u8>],
}

impl JobsView<'_> {
    /// File `f` is an input of a running compaction.
    pub fn is_busy(&self, f: &FileMetaData) -> bool {
        self.compacting.contains(&f.number)
    }
}

/// User-key range `[smallest, largest]` of `files`.
pub fn key_range(files: &[Arc<FileMetaData>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for f in files {
        let s = user_key(f.smallest.encoded());
        let l = user_key(f.largest.encoded());
        if lo.is_none_or(|x| s < x) {
            lo = Some(s);
        }
        if hi.is_none_or(|x| l > x) {
            hi = Some(l);
        }
    }
    Some((lo?.to_vec(), hi?.to_vec()))
}

/// True if no file below `output_level` overlaps `[lo, hi]`.
pub fn is_bottommost(v: &Version, output_level: usize, lo: &[u8], hi: &[u8]) -> bool {
    (output_level + 1..v.num_levels()).all(|l| v.overlapping_files(l, lo, hi).is_empty())
}
