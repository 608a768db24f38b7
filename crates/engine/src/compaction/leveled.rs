//! The leveled picker: chooses the next compaction by score, RocksDB's way.
//!
//! - Level targets ([`level_targets`]): with `level_compaction_dynamic_level_bytes` the last
//!   level's target is its actual size and each level above is a `multiplier` smaller, down to
//!   the base level, the first whose target fits `max_bytes_for_level_base` (RocksDB's
//!   `CalculateBaseBytes`); L0 compacts into the base level and the levels between are empty.
//!   Without it, L1 is the base and level `n` targets `base * multiplier^(n-1)`.
//! - Scores ([`scores`]): L0 by file count over `level0_file_num_compaction_trigger` (or by
//!   size over the base target, whichever is larger); other levels by bytes over target.
//! - Within a level above L0 the file is chosen round-robin after the level's cursor.
//! - L0→base takes every L0 file. When it cannot start (an input is busy) and L0 has at least
//!   `trigger + 2` files, an intra-L0 compaction merges the newest (at least 4) idle L0 files into
//!   one L0 file, bounded by `max_compaction_bytes` (turned off by `intra_l0_compaction`).
//! - Trivial moves: a single file above L0, or a set of disjoint L0 files, that overlaps nothing
//!   in the output level is moved, not rewritten.
//! - When no level is due, forced blob garbage collection ([`super::blob_gc`]) may compact an
//!   SST into its own level.
//! - Files already being compacted are never picked; any compaction touching one is skipped, so
//!   running compactions have disjoint inputs and disjoint output ranges.
//!
//! A pure function of the version, the options and the running jobs ([`JobsView`]): it locks
//! nothing and changes nothing; the round-robin cursor a pick moves is returned by
//! [`LeveledPicker::cursor_after`] for the caller to store.
//!
//! Who calls: background threads (through [`CompactionPicker`]) and `compact_range`
//! ([`build`]), with the state lock held (CPU only); the write controller and the stats
//! ([`estimate_pending_bytes`], [`scores`]).

use std::collections::HashSet;
use std::sync::Arc;

use super::picker::{is_bottommost, key_range, CompactionPicker, JobsView};
use super::Compaction;
use crate::key::user_key;
use crate::options::Options;
use crate::version::{FileMetaData, Version};

/// At least this many files go into an intra-L0 compaction (RocksDB's value).
const MIN_FILES_FOR_INTRA_L0: usize = 4;

/// The base level and every level's target size.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelTargets {
    /// The level L0 compacts into.
    pub base_level: usize,
    /// Target bytes per level; `u64::MAX` for L0 and for levels above the base level.
    pub targets: Vec<u64>,
}

impl LevelTargets {
    /// The target of `level` (`u64::MAX` if it has none).
    pub fn target(&self, level: usize) -> u64 {
        self.targets.get(level).copied().unwrap_or(u64::MAX)
    }
}

/// Computes the base level and the level targets for `v` (see the module documentation).
pub fn level_targets(opts: &Options, v: &Version) -> LevelTargets {
    let n = v.num_levels();
    let mut targets = vec![u64::MAX; n];
    let mult = opts.max_bytes_for_level_multiplier;
    let base = opts.max_bytes_for_level_base;
    if !opts.level_compaction_dynamic_level_bytes || n < 2 {
        let mut t = base as f64;
        for (level, slot) in targets.iter_mut().enumerate().skip(1) {
            if level > 1 {
                t *= mult;
            }
            *slot = t.min(u64::MAX as f64) as u64;
        }
        return LevelTargets { base_level: 1.min(n.saturating_sub(1)), targets };
    }
    let max_level_size = (1..n).map(|l| v.level_bytes(l)).max().unwrap_or(0);
    let first_non_empty = (1..n).find(|&l| !v.level_files(l).is_empty());
    let (base_level, mut base_size, mut level_mult) = match first_non_empty {
        None => (n - 1, base, mult),
        Some(first) => {
            let base_min = (base as f64 / mult) as u64;
            let mut cur = max_level_size as f64;
            for _ in first..n - 1 {
                cur /= mult;
            }
            if cur as u64 <= base_min {
                (first, base_min + 1, mult)
            } else {
                let mut bl = first;
                while bl > 1 && cur > base as f64 {
                    bl -= 1;
                    cur /= mult;
                }
                (bl, if cur > base as f64 { base } else { (cur as u64).max(1) }, mult)
            }
        }
    };
    let l0_size = v.level_bytes(0);
    if l0_size > base_size
        && (l0_size > base || v.level_files(0).len() / 2 >= opts.level0_file_num_compaction_trigger)
    {
        base_size = l0_size;
        level_mult = if base_level == n - 1 {
            1.0
        } else {
            (max_level_size as f64 / base_size as f64)
                .powf(1.0 / (n - base_level - 1) as f64)
                .max(1.0)
        };
    }
    let mut size = base_size as f64;
    for (level, slot) in targets.iter_mut().enumerate().skip(base_level) {
        if level > base_level {
            size *= level_mult;
        }
        // No level below the base target: an hourglass shape would starve L0.
        *slot = (size.min(u64::MAX as f64) as u64).max(base);
    }
    LevelTargets { base_level, targets }
}

/// Target size of `level` (>= 1) in the current shape of `v`.
pub fn level_target(opts: &Options, v: &Version, level: usize) -> u64 {
    level_targets(opts, v).target(level)
}

/// Target size of the output files of a compaction into `output_level`: the base
/// `target_file_size_base`, times `target_file_size_multiplier` per level below the base level.
pub fn target_file_size(opts: &Options, base_level: usize, output_level: usize) -> u64 {
    let steps = output_level.saturating_sub(base_level.max(1));
    let mut t = opts.target_file_size_base as f64;
    for _ in 0..steps {
        t *= opts.target_file_size_multiplier as f64;
    }
    (t.min(u64::MAX as f64) as u64).max(1)
}

/// Compaction scores per level (the last level has none).
pub fn scores(opts: &Options, v: &Version) -> Vec<f64> {
    scores_with(opts, v, &level_targets(opts, v))
}

fn scores_with(opts: &Options, v: &Version, t: &LevelTargets) -> Vec<f64> {
    let n = v.num_levels();
    (0..n.saturating_sub(1))
        .map(|level| {
            if level == 0 {
                let by_count =
                    v.level_files(0).len() as f64 / opts.level0_file_num_compaction_trigger as f64;
                let mut l0_target = opts.max_bytes_for_level_base;
                if opts.level_compaction_dynamic_level_bytes {
                    let bt = t.target(t.base_level);
                    if bt != u64::MAX {
                        let per = (bt as f64 / opts.max_bytes_for_level_multiplier) as u64;
                        l0_target = l0_target.max(per);
                    }
                }
                by_count.max(v.level_bytes(0) as f64 / l0_target as f64)
            } else {
                match t.target(level) {
                    u64::MAX => 0.0,
                    target => v.level_bytes(level) as f64 / target as f64,
                }
            }
        })
        .collect()
}

/// Bytes that compaction must still rewrite to bring every level under its target, estimated
/// as RocksDB's `EstimateCompactionBytesNeeded`: L0 (once it reaches its trigger) plus the base
/// level; then, walking down, each level's excess over its target (including what the level
/// above pushes into it) times the fan-out `1 + size(next) / size(level)`.
pub fn estimate_pending_bytes(opts: &Options, v: &Version) -> u64 {
    let t = level_targets(opts, v);
    let n = v.num_levels();
    let l0_size = v.level_bytes(0);
    let l0_triggered = v.level_files(0).len() >= opts.level0_file_num_compaction_trigger
        || l0_size >= opts.max_bytes_for_level_base;
    let mut needed = 0u64;
    let mut to_next = 0u64;
    if l0_triggered {
        needed = l0_size;
        to_next = l0_size;
    }
    let mut next_level_bytes = 0u64;
    for level in t.base_level..n.saturating_sub(1) {
        let mut level_size = if next_level_bytes > 0 {
            std::mem::take(&mut next_level_bytes)
        } else {
            v.level_bytes(level)
        };
        if level == t.base_level && l0_triggered {
            needed += level_size;
        }
        level_size += std::mem::take(&mut to_next);
        let target = t.target(level);
        if level_size > target {
            to_next = level_size - target;
            next_level_bytes = v.level_bytes(level + 1);
            if next_level_bytes > 0 {
                let fan_out = next_level_bytes as f64 / level_size as f64 + 1.0;
                needed += (to_next as f64 * fan_out) as u64;
            }
        }
    }
    needed
}

/// True if no two of `files` overlap in user keys.
fn pairwise_disjoint(files: &[Arc<FileMetaData>]) -> bool {
    let mut ranges: Vec<(&[u8], &[u8])> = files
        .iter()
        .map(|f| (user_key(f.smallest.encoded()), user_key(f.largest.encoded())))
        .collect();
    ranges.sort();
    ranges.windows(2).all(|w| w[0].1 < w[1].0)
}

/// Builds the compaction of `start` files at `level` into `output_level`, or `None` if any
/// involved file is busy. At L0 the inputs widen to every overlapping L0 file.
pub fn build(
    opts: &Options,
    v: &Version,
    level: usize,
    output_level: usize,
    start: Vec<Arc<FileMetaData>>,
    busy: &dyn Fn(&FileMetaData) -> bool,
    reason: &'static str,
) -> Option<Compaction> {
    let (lo, hi) = key_range(&start)?;
    let inputs0 = if level == 0 { v.overlapping_files(0, &lo, &hi) } else { start };
    let (lo, hi) = key_range(&inputs0)?;
    let inputs1 = if output_level == level {
        Vec::new()
    } else {
        v.overlapping_files(output_level, &lo, &hi)
    };
    if inputs0.iter().chain(inputs1.iter()).any(|f| busy(f)) {
        return None;
    }
    // Nothing in the levels between may overlap (they are empty with dynamic level bytes).
    if (level + 1..output_level).any(|l| !v.overlapping_files(l, &lo, &hi).is_empty()) {
        return None;
    }
    let all: Vec<Arc<FileMetaData>> = inputs0.iter().chain(inputs1.iter()).cloned().collect();
    let (lo, hi) = key_range(&all)?;
    let bottommost = is_bottommost(v, output_level, &lo, &hi);
    let trivial_move = output_level != level
        && inputs1.is_empty()
        && (inputs0.len() == 1 || (level == 0 && pairwise_disjoint(&inputs0)));
    let base_level = level_targets(opts, v).base_level;
    Some(Compaction {
        level,
        output_level,
        inputs: [inputs0, inputs1],
        bottommost,
        trivial_move,
        reason,
        target_file_size: target_file_size(opts, base_level, output_level),
        middle: Vec::new(),
    })
}

/// The intra-L0 compaction: the newest idle L0 files (at least four, at most
/// `max_compaction_bytes`), merged into one L0 file.
pub fn pick_intra_l0(
    opts: &Options,
    v: &Version,
    busy: &dyn Fn(&FileMetaData) -> bool,
) -> Option<Compaction> {
    let files = v.level_files(0);
    let idle = files.iter().take_while(|f| !busy(f)).count();
    if !opts.intra_l0_compaction || idle < opts.level0_file_num_compaction_trigger + 2 {
        return None;
    }
    let mut bytes = 0u64;
    let mut take = 0;
    for f in files.iter().take(idle) {
        if take >= MIN_FILES_FOR_INTRA_L0
            && bytes + f.file_size > opts.effective_max_compaction_bytes()
        {
            break;
        }
        bytes += f.file_size;
        take += 1;
    }
    let inputs0: Vec<Arc<FileMetaData>> = files.iter().take(take).cloned().collect();
    let (lo, hi) = key_range(&inputs0)?;
    // Older L0 files and deeper levels may still hold the keys: never bottommost.
    let bottommost = take == files.len() && is_bottommost(v, 0, &lo, &hi);
    Some(Compaction {
        level: 0,
        output_level: 0,
        inputs: [inputs0, Vec::new()],
        bottommost,
        trivial_move: false,
        reason: "IntraL0",
        target_file_size: u64::MAX,
        middle: Vec::new(),
    })
}

/// The leveled picker (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct LeveledPicker;

impl CompactionPicker for LeveledPicker {
    fn pick(&self, v: &Version, opts: &Options, jobs: &JobsView<'_>) -> Option<Compaction> {
        pick_in(opts, v, jobs.compacting, jobs.cursors)
    }

    /// `(level, largest user key of its input)` for a compaction of one file chosen by level
    /// size.
    fn cursor_after(&self, c: &Compaction) -> Option<(usize, Vec<u8>)> {
        if c.reason != REASON_LEVEL_SIZE {
            return None;
        }
        let f = c.inputs[0].last()?;
        Some((c.level, user_key(f.largest.encoded()).to_vec()))
    }

    fn scores(&self, v: &Version, opts: &Options) -> Vec<f64> {
        scores(opts, v)
    }

    fn pending_compaction_bytes(&self, v: &Version, opts: &Options) -> u64 {
        estimate_pending_bytes(opts, v)
    }

    fn l0_trigger_count(&self, v: &Version) -> usize {
        v.level_files(0).len()
    }
}

const REASON_LEVEL_SIZE: &str = "LevelMaxLevelSize";

/// The next automatic compaction of `v`, given the files being compacted and the round-robin
/// cursors (one per level, the largest user key last compacted; see
/// [`LeveledPicker::cursor_after`]).
pub fn pick_in(
    opts: &Options,
    v: &Version,
    compacting: &HashSet<u64>,
    cursors: &[Vec<u8>],
) -> Option<Compaction> {
    let busy = |f: &FileMetaData| compacting.contains(&f.number);
    let t = level_targets(opts, v);
    let mut levels: Vec<(usize, f64)> = scores_with(opts, v, &t).into_iter().enumerate().collect();
    levels.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (level, score) in levels {
        if score < 1.0 {
            break;
        }
        if level == 0 {
            let files = v.level_files(0).to_vec();
            let c = build(opts, v, 0, t.base_level, files, &busy, "LevelL0FilesNum");
            if let Some(c) = c.or_else(|| pick_intra_l0(opts, v, &busy)) {
                return Some(c);
            }
            continue;
        }
        // Round-robin: the first file after the cursor, wrapping around.
        let files = v.level_files(level);
        let cursor = cursors.get(level).map_or(&[][..], |c| c.as_slice());
        let after = files.partition_point(|f| user_key(f.largest.encoded()) <= cursor);
        let order = files[after..].iter().chain(files[..after].iter());
        for f in order {
            if busy(f) {
                continue;
            }
            let c = build(opts, v, level, level + 1, vec![f.clone()], &busy, REASON_LEVEL_SIZE);
            if c.is_some() {
                return c;
            }
        }
    }
    pick_forced_blob_gc(opts, v, compacting)
}

/// The forced blob garbage collection ([`super::blob_gc`]): the compaction of the first idle
/// marked SST into its own level, or `None`.
pub fn pick_forced_blob_gc(
    opts: &Options,
    v: &Version,
    compacting: &HashSet<u64>,
) -> Option<Compaction> {
    let busy = |f: &FileMetaData| compacting.contains(&f.number);
    for (level, f) in super::blob_gc::files_marked_for_forced_blob_gc(opts, v) {
        if busy(&f) {
            continue;
        }
        let c = build(opts, v, level, level, vec![f], &busy, super::blob_gc::REASON_FORCED_BLOB_GC);
        if let Some(mut c) = c {
            if level == 0 {
                // One L0 output, as intra-L0: L0 files are ordered by their sequence numbers.
                c.target_file_size = u64::MAX;
            }
            return Some(c);
        }
    }
    None
}

#[cfg(test)]
#[path = "leveled_tests.rs"]
mod tests;
