//! Picks the next compaction by score: L0 by file count over the trigger, deeper levels by
//! bytes over their target (`max_bytes_for_level_base * multiplier^(level-1)`). The file within
//! a level is chosen round-robin after the level's cursor. Files already being compacted are
//! never picked, and a compaction whose output range touches a running compaction's is skipped.
//!
//! Who calls: background threads, with the state lock held (CPU only, no IO).

use std::sync::Arc;

use super::Compaction;
use crate::db::core::DbState;
use crate::key::user_key;
use crate::options::Options;
use crate::version::{FileMetaData, Version};

/// Target size of `level` (>= 1).
pub fn level_target(opts: &Options, level: usize) -> u64 {
    let mut t = opts.max_bytes_for_level_base as f64;
    for _ in 1..level {
        t *= opts.max_bytes_for_level_multiplier;
    }
    t as u64
}

/// Compaction scores per level (the last level has none).
pub fn scores(opts: &Options, v: &Version) -> Vec<f64> {
    let n = v.num_levels();
    (0..n.saturating_sub(1))
        .map(|level| {
            if level == 0 {
                v.level_files(0).len() as f64 / opts.level0_file_num_compaction_trigger as f64
            } else {
                v.level_bytes(level) as f64 / level_target(opts, level) as f64
            }
        })
        .collect()
}

/// Bytes that compaction must still rewrite to bring every level under its target, estimated
/// as RocksDB's `EstimateCompactionBytesNeeded`: L0 (once it reaches its trigger) plus the base
/// level; then, walking down, each level's excess over its target (including what the level
/// above pushes into it) times the fan-out `1 + size(next) / size(level)`.
pub fn estimate_pending_bytes(opts: &Options, v: &Version) -> u64 {
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
    let base_level = 1;
    let mut next_level_bytes = 0u64;
    for level in base_level..n.saturating_sub(1) {
        let mut level_size = if next_level_bytes > 0 {
            std::mem::take(&mut next_level_bytes)
        } else {
            v.level_bytes(level)
        };
        if level == base_level && l0_triggered {
            needed += level_size;
        }
        level_size += std::mem::take(&mut to_next);
        let target = level_target(opts, level);
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

/// Builds the compaction of `start` files at `level` into `level + 1`, or `None` if any
/// involved file is busy.
pub fn build(
    v: &Version,
    level: usize,
    start: Vec<Arc<FileMetaData>>,
    busy: &dyn Fn(&FileMetaData) -> bool,
    reason: &'static str,
) -> Option<Compaction> {
    let output_level = level + 1;
    let (lo, hi) = key_range(&start)?;
    let inputs0 = if level == 0 { v.overlapping_files(0, &lo, &hi) } else { start };
    let (lo, hi) = key_range(&inputs0)?;
    let inputs1 = v.overlapping_files(output_level, &lo, &hi);
    if inputs0.iter().chain(inputs1.iter()).any(|f| busy(f)) {
        return None;
    }
    let all: Vec<Arc<FileMetaData>> = inputs0.iter().chain(inputs1.iter()).cloned().collect();
    let (lo, hi) = key_range(&all)?;
    let bottommost = is_bottommost(v, output_level, &lo, &hi);
    let trivial_move = level > 0 && inputs0.len() == 1 && inputs1.is_empty();
    Some(Compaction {
        level,
        output_level,
        inputs: [inputs0, inputs1],
        bottommost,
        trivial_move,
        reason,
    })
}

/// The next automatic compaction, if any level's score is at least 1.
pub(crate) fn pick(opts: &Options, st: &mut DbState) -> Option<Compaction> {
    let v = st.current.clone();
    let compacting = &st.compacting;
    let busy = |f: &FileMetaData| compacting.contains(&f.number);
    let mut levels: Vec<(usize, f64)> = scores(opts, &v).into_iter().enumerate().collect();
    levels.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (level, score) in levels {
        if score < 1.0 {
            break;
        }
        if level == 0 {
            let files = v.level_files(0).to_vec();
            if let Some(c) = build(&v, 0, files, &busy, "LevelL0FilesNum") {
                return Some(c);
            }
            continue;
        }
        // Round-robin: the first file after the cursor, wrapping around.
        let files = v.level_files(level);
        let cursor = st.compact_cursor.get(level).cloned().unwrap_or_default();
        let after = files.partition_point(|f| user_key(f.largest.encoded()) <= cursor.as_slice());
        let order = files[after..].iter().chain(files[..after].iter());
        for f in order {
            if busy(f) {
                continue;
            }
            if let Some(c) = build(&v, level, vec![f.clone()], &busy, "LevelMaxLevelSize") {
                if let Some(cur) = st.compact_cursor.get_mut(level) {
                    *cur = user_key(f.largest.encoded()).to_vec();
                }
                return Some(c);
            }
        }
    }
    None
}
