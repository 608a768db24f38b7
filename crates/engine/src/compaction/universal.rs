//! The universal (size-tiered) picker, RocksDB's `UniversalCompactionPicker`.
//!
//! Sorted runs, newest first: every L0 file on its own, then every non-empty level below as one
//! run. Nothing happens below `level0_file_num_compaction_trigger` runs. Then, in order:
//! 1. space amplification: if the runs other than the oldest hold more than
//!    `max_size_amplification_percent` of the oldest's size, everything is merged into the last
//!    level;
//! 2. size ratio: from the newest idle run, keep adding the next older run while it is no
//!    larger than the total so far times `(100 + size_ratio) / 100`; at least `min_merge_width`
//!    and at most `max_merge_width` runs make a compaction (trying each start in turn);
//! 3. otherwise, merge the newest `runs - trigger + 1` runs to bring the count under the trigger.
//!
//! The output goes to the last level if the oldest run is included, else just above the next
//! older run (L0 if that run is an L0 file, where the output must stay one file). A run with a
//! busy file is never picked, and a pick stops at the first busy run.
//!
//! Who calls: background threads, with the state lock held (CPU only).

use std::sync::Arc;

use super::picker::{is_bottommost, key_range, CompactionPicker, JobsView};
use super::Compaction;
use crate::options::Options;
use crate::version::{FileMetaData, Version};

/// One sorted run.
#[derive(Debug, Clone)]
struct Run {
    level: usize,
    files: Vec<Arc<FileMetaData>>,
    size: u64,
    busy: bool,
}

fn sorted_runs(v: &Version, busy: &dyn Fn(&FileMetaData) -> bool) -> Vec<Run> {
    let mut runs: Vec<Run> = v
        .level_files(0)
        .iter()
        .map(|f| Run { level: 0, files: vec![f.clone()], size: f.file_size, busy: busy(f) })
        .collect();
    for level in 1..v.num_levels() {
        let files = v.level_files(level);
        if !files.is_empty() {
            runs.push(Run {
                level,
                files: files.to_vec(),
                size: v.level_bytes(level),
                busy: files.iter().any(|f| busy(f)),
            });
        }
    }
    runs
}

/// Number of sorted runs in `v` (what the L0 triggers count under universal compaction).
pub fn num_sorted_runs(v: &Version) -> usize {
    v.level_files(0).len() + (1..v.num_levels()).filter(|&l| !v.level_files(l).is_empty()).count()
}

/// The universal (size-tiered) picker (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct UniversalPicker;

impl CompactionPicker for UniversalPicker {
    fn pick(&self, v: &Version, opts: &Options, jobs: &JobsView<'_>) -> Option<Compaction> {
        pick(opts, v, &|f| jobs.is_busy(f))
    }

    /// L0 only: sorted runs over the trigger.
    fn scores(&self, v: &Version, opts: &Options) -> Vec<f64> {
        let mut s = vec![0.0; v.num_levels().saturating_sub(1).max(1)];
        s[0] = num_sorted_runs(v) as f64 / opts.level0_file_num_compaction_trigger as f64;
        s
    }

    /// Not estimated (RocksDB's universal compaction does not either).
    fn pending_compaction_bytes(&self, _v: &Version, _opts: &Options) -> u64 {
        0
    }

    /// Sorted runs, as RocksDB counts them against the L0 triggers.
    fn l0_trigger_count(&self, v: &Version) -> usize {
        num_sorted_runs(v)
    }
}

/// The next universal compaction, if any.
pub fn pick(
    opts: &Options,
    v: &Version,
    busy: &dyn Fn(&FileMetaData) -> bool,
) -> Option<Compaction> {
    let runs = sorted_runs(v, busy);
    if runs.len() < opts.level0_file_num_compaction_trigger.max(2) {
        return None;
    }
    // 1. Space amplification.
    if let Some((last, newer)) = runs.split_last() {
        let newer_size: u64 = newer.iter().map(|r| r.size).sum();
        let amp_limit = opts.max_size_amplification_percent as u128 * u128::from(last.size);
        if !runs.iter().any(|r| r.busy) && u128::from(newer_size) * 100 > amp_limit {
            return Some(build(opts, v, &runs, 0, runs.len(), "UniversalSizeAmplification"));
        }
    }
    // 2. Size ratio.
    let max_width = opts.max_merge_width.max(2);
    for start in 0..runs.len() {
        if runs[start].busy {
            continue;
        }
        let mut total = runs[start].size;
        let mut end = start + 1;
        while end < runs.len() && end - start < max_width {
            let next = &runs[end];
            let allowed = total as u128 * (100 + opts.size_ratio as u128) / 100;
            if next.busy || allowed < next.size as u128 {
                break;
            }
            total += next.size;
            end += 1;
        }
        if end - start >= opts.min_merge_width.max(2) {
            return Some(build(opts, v, &runs, start, end, "UniversalSizeRatio"));
        }
    }
    // 3. Too many runs: merge the newest ones.
    let want = runs.len() + 1 - opts.level0_file_num_compaction_trigger.max(2);
    let want = want.clamp(2, max_width);
    let start = runs.iter().position(|r| !r.busy)?;
    let end = (start..runs.len()).take_while(|&i| !runs[i].busy).take(want).last()? + 1;
    (end - start >= 2).then(|| build(opts, v, &runs, start, end, "UniversalSortedRunNum"))
}

fn build(
    opts: &Options,
    v: &Version,
    runs: &[Run],
    start: usize,
    end: usize,
    reason: &'static str,
) -> Compaction {
    let picked = &runs[start..end];
    let output_level = match runs.get(end) {
        None => v.num_levels() - 1,
        Some(r) if r.level == 0 => 0,
        Some(r) => r.level - 1,
    };
    let level = picked.first().map_or(0, |r| r.level);
    let mut inputs0 = Vec::new();
    let mut inputs1 = Vec::new();
    let mut middle: Vec<(usize, Vec<Arc<FileMetaData>>)> = Vec::new();
    for r in picked {
        if r.level == level {
            inputs0.extend(r.files.iter().cloned());
        } else if r.level == output_level {
            inputs1.extend(r.files.iter().cloned());
        } else {
            middle.push((r.level, r.files.clone()));
        }
    }
    let all: Vec<Arc<FileMetaData>> = picked.iter().flat_map(|r| r.files.iter().cloned()).collect();
    let bottommost = end == runs.len()
        && key_range(&all).is_none_or(|(lo, hi)| is_bottommost(v, output_level, &lo, &hi));
    Compaction {
        level,
        output_level,
        inputs: [inputs0, inputs1],
        bottommost,
        trivial_move: false,
        reason,
        // An L0 run is one file.
        target_file_size: if output_level == 0 { u64::MAX } else { opts.target_file_size_base },
        middle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{InternalKey, ValueKind};

    /// A version from run sizes, newest first: `(level, size)`.
    fn version(runs: &[(usize, u64)]) -> Version {
        let mut v = Version::new(7);
        let n = runs.len() as u64;
        for (i, &(level, size)) in runs.iter().enumerate() {
            let seq = (n - i as u64) * 10;
            v.files[level].push(Arc::new(FileMetaData {
                number: i as u64 + 1,
                file_size: size,
                smallest: InternalKey::new(b"a", seq, ValueKind::Put),
                largest: InternalKey::new(b"z", seq, ValueKind::Put),
                smallest_seq: seq,
                largest_seq: seq,
                num_entries: 1,
                num_deletions: 0,
                oldest_blob_file_number: 0,
                reader: Default::default(),
            }));
        }
        v
    }

    fn show(c: Option<Compaction>) -> String {
        match c {
            None => "none".into(),
            Some(c) => format!(
                "L{}->L{} {} files {}",
                c.level,
                c.output_level,
                c.input_files().count(),
                c.reason
            ),
        }
    }

    #[test]
    fn picks_like_rocksdb() {
        let opts = Options {
            compaction_style: crate::options::CompactionStyle::Universal,
            level0_file_num_compaction_trigger: 4,
            ..Default::default()
        };
        let idle = |_: &FileMetaData| false;
        // (runs newest first, expected pick)
        let cases: &[(&[(usize, u64)], &str)] = &[
            // Below the trigger.
            (&[(0, 10), (0, 10), (6, 1000)], "none"),
            // Space amp: 4 x 100 over 100 is 400% > 200%: everything to the last level.
            (
                &[(0, 100), (0, 100), (0, 100), (6, 100)],
                "L0->L6 4 files UniversalSizeAmplification",
            ),
            // Similar sizes merge by size ratio; the big last run stays.
            (&[(0, 10), (0, 10), (0, 10), (6, 1000)], "L0->L5 3 files UniversalSizeRatio"),
            // The newest run is too small to pull the next ones: start further down.
            (
                &[(0, 1), (0, 100), (0, 100), (0, 100), (6, 10000)],
                "L0->L5 3 files UniversalSizeRatio",
            ),
            // Growing runs: no ratio pick, so merge the newest runs - trigger + 1.
            (
                &[(0, 1), (0, 10), (0, 100), (4, 1000), (6, 100000)],
                "L0->L0 2 files UniversalSortedRunNum",
            ),
        ];
        for (runs, want) in cases {
            let v = version(runs);
            assert_eq!(show(pick(&opts, &v, &idle)), *want, "runs {runs:?}");
        }
        // A busy run blocks the space-amp pick and ends a size-ratio pick.
        let v = version(&[(0, 100), (0, 100), (0, 100), (6, 100)]);
        let busy = |f: &FileMetaData| f.number == 3;
        assert_eq!(show(pick(&opts, &v, &busy)), "L0->L0 2 files UniversalSizeRatio");
        assert_eq!(num_sorted_runs(&v), 4);
    }

    #[test]
    fn a_universal_database_keeps_its_runs_under_the_trigger() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            create_if_missing: true,
            compaction_style: crate::options::CompactionStyle::Universal,
            write_buffer_size: 32 << 10,
            level0_file_num_compaction_trigger: 4,
            ..Default::default()
        };
        let db = crate::Db::open(dir.path(), opts).unwrap();
        let mut model = std::collections::BTreeMap::new();
        for round in 0..12u32 {
            for i in 0..300u32 {
                let k = format!("k{:05}", (i * 7919 + round * 31) % 2000).into_bytes();
                let v = format!("{round}-{i}-{}", "v".repeat(30)).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            db.flush().unwrap();
        }
        // Let the background compactions finish.
        let runs = || {
            (1..7)
                .filter(|l| db.property(&format!("talus.num-files-at-level{l}")).unwrap() != "0")
                .count()
                + db.property("talus.num-files-at-level0").unwrap().parse::<usize>().unwrap()
        };
        for _ in 0..200 {
            if runs() < 4 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(runs() < 4, "{} sorted runs", runs());
        let got: std::collections::BTreeMap<Vec<u8>, Vec<u8>> =
            db.iter(&Default::default()).map(|r| r.unwrap()).collect();
        assert_eq!(got, model);
        let stats = db.property("talus.stats").unwrap();
        assert!(stats.contains("\n  L6 "), "the space-amp merges reach the last level\n{stats}");
    }
}
