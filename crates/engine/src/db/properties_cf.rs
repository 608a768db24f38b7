//! The per-family properties of `Db::property_cf` (and of `Db::property`, which asks them of
//! `default`, as RocksDB's `GetProperty` without a family does): answered from the family's
//! [`SuperVersion`] (its memtables and files, loaded without a lock) and its options, and the
//! family's compaction counters (`stats.rs`, `FamilyStats`). `properties.rs` asks here first
//! and answers the database-wide names (the WAL, caches, snapshots, jobs) itself, the same for
//! every family. Names arrive without their `talus.`/`rocksdb.` prefix.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cf_data::{ColumnFamilyData, SuperVersion};
use super::core::DbInner;
use super::stats::format::{self, LevelShape, StatsInput};
use super::stats::Baseline;
use crate::compaction::picker_for;
use crate::key::user_key;
use crate::version::Version;

impl DbInner {
    /// Family `cf`'s value of the property `name`, `None` if `name` is not a per-family one.
    pub(super) fn family_property(&self, cf: &ColumnFamilyData, name: &str) -> Option<String> {
        let sv = cf.super_version.load();
        let v = &sv.version;
        if let Some(n) = name.strip_prefix("num-files-at-level") {
            let level: usize = n.parse().ok()?;
            return (level < v.num_levels()).then(|| v.level_files(level).len().to_string());
        }
        let imms = || sv.imms.iter().map(|(m, _)| m);
        let value: u64 = match name {
            "stats" => {
                let mut text = self.family_stats_text(cf, &sv);
                text.push_str(&self.db_stats_text());
                return Some(text);
            }
            "cfstats" | "cfstats-no-file-histogram" => {
                return Some(self.family_stats_text(cf, &sv));
            }
            "levelstats" => return Some(level_stats_text(v)),
            "blob-files" => {
                let names: Vec<String> =
                    v.blob_files.keys().map(|&n| crate::filename::blob_name(n)).collect();
                return Some(names.join(" "));
            }
            "estimate-num-keys" => estimate_num_keys(&sv),
            "cur-size-all-mem-tables" | "size-all-mem-tables" => {
                sv.mem.approximate_memory_usage() as u64
                    + imms().map(|m| m.approximate_memory_usage() as u64).sum::<u64>()
            }
            "cur-size-active-mem-table" => sv.mem.approximate_memory_usage() as u64,
            "num-immutable-mem-table" => sv.imms.len() as u64,
            "mem-table-flush-pending" => u64::from(!sv.imms.is_empty()),
            "num-entries-active-mem-table" => sv.mem.num_entries(),
            "num-deletes-active-mem-table" => sv.mem.num_deletes(),
            "num-entries-imm-mem-tables" => imms().map(|m| m.num_entries()).sum(),
            "num-deletes-imm-mem-tables" => imms().map(|m| m.num_deletes()).sum(),
            "total-sst-files-size" | "live-sst-files-size" => {
                (0..v.num_levels()).map(|l| v.level_bytes(l)).sum()
            }
            "estimate-live-data-size" => estimate_live_data_size(v),
            "estimate-pending-compaction-bytes" => {
                picker_for(&sv.opts).pending_compaction_bytes(v, &sv.opts)
            }
            "compaction-pending" => {
                let scores = picker_for(&sv.opts).scores(v, &sv.opts);
                u64::from(!sv.opts.disable_auto_compactions && scores.iter().any(|&s| s >= 1.0))
            }
            "num-blob-files" => v.blob_files.len() as u64,
            "total-blob-file-size" | "live-blob-file-size" => {
                v.blob_files.values().map(|m| m.addition.file_size).sum()
            }
            "live-blob-file-garbage-size" => v.blob_files.values().map(|m| m.garbage_bytes).sum(),
            _ => return None,
        };
        Some(value.to_string())
    }

    /// The family's `Compaction Stats [NAME]` tables, flush and compaction totals and stall
    /// counts (RocksDB's `rocksdb.cfstats`). Moves the family's interval baseline forward.
    fn family_stats_text(&self, cf: &ColumnFamilyData, sv: &SuperVersion) -> String {
        let v = &sv.version;
        let scores = picker_for(&sv.opts).scores(v, &sv.opts);
        let shapes: Vec<LevelShape> = {
            let st = self.state.lock();
            (0..v.num_levels())
                .map(|l| {
                    let files = v.level_files(l);
                    LevelShape {
                        files: files.len(),
                        compacting: files
                            .iter()
                            .filter(|f| st.jobs.is_compacting(f.number))
                            .count(),
                        size: v.level_bytes(l),
                        score: scores.get(l).copied().unwrap_or(0.0),
                    }
                })
                .collect()
        };
        let dump = self.stats.family_snaps(cf.id, true);
        let (prev_at, prev_levels, prev_flush) = dump.prev;
        let db = self.stats.db_snap();
        format::render_cf(&StatsInput {
            family: &cf.name,
            shapes: &shapes,
            levels: &dump.levels,
            prev_levels: &prev_levels,
            flush: dump.flush,
            prev_flush,
            db,
            // The stall counts are the database's: their interval is the DB stats' one.
            prev_db: self.stats.baseline.lock().as_ref().map(|b| b.db).unwrap_or_default(),
            uptime: dump.at.duration_since(self.stats.started).as_secs_f64(),
            interval: dump.at.duration_since(prev_at).as_secs_f64(),
        })
    }

    /// The `** DB Stats **` block (RocksDB's `rocksdb.dbstats`) with the block cache and file
    /// read sections. Moves the database's interval baseline forward.
    pub(super) fn db_stats_text(&self) -> String {
        let now = Baseline {
            at: std::time::Instant::now(),
            levels: self.stats.level_snaps(),
            flush: self.stats.flush.snap(),
            db: self.stats.db_snap(),
        };
        let prev = self.stats.advance_baseline(now.clone());
        let mut text = format::render_db(&StatsInput {
            family: "",
            shapes: &[],
            levels: &now.levels,
            prev_levels: &prev.levels,
            flush: now.flush,
            prev_flush: prev.flush,
            db: now.db,
            prev_db: prev.db,
            uptime: now.at.duration_since(self.stats.started).as_secs_f64(),
            interval: now.at.duration_since(prev.at).as_secs_f64(),
        });
        if let Some(cache) = self.table_cache.block_cache() {
            text.push_str(&crate::sst::BlockCacheStats::collect(cache.as_ref()).render());
        }
        text.push_str(&self.read_io_text());
        text
    }
}

/// RocksDB's `rocksdb.estimate-num-keys`: entries less twice the deletions, over the memtables
/// and files (merges and overwrites counted as keys).
fn estimate_num_keys(sv: &SuperVersion) -> u64 {
    let mut n: i64 = 0;
    for m in std::iter::once(&sv.mem).chain(sv.imms.iter().map(|(m, _)| m)) {
        n += m.num_entries() as i64 - 2 * m.num_deletes() as i64;
    }
    let v = &sv.version;
    for level in 0..v.num_levels() {
        for f in v.level_files(level) {
            n += f.num_entries as i64 - 2 * f.num_deletions as i64;
        }
    }
    n.max(0) as u64
}

/// RocksDB's `rocksdb.estimate-live-data-size` (`VersionStorageInfo::EstimateLiveDataSize`):
/// the bytes of a largest set of files whose key ranges overlap no file of a lower level (the
/// bottom level counted first, each level's files in order), plus the live bytes of the blob
/// files. The less compacted, the smaller the estimate.
pub(super) fn estimate_live_data_size(v: &Version) -> u64 {
    // Counted files by largest user key: (smallest user key, largest).
    let mut ranges: BTreeMap<&[u8], &[u8]> = BTreeMap::new();
    let mut size = 0;
    for l in (0..v.num_levels()).rev() {
        for f in v.level_files(l) {
            let (small, large) = (user_key(&f.smallest.0), user_key(&f.largest.0));
            // The first counted file ending at or after `small` is the only one that can
            // overlap `f` if any does (counted files do not overlap each other).
            let overlaps = ranges.range(small..).next().is_some_and(|(_, &s)| s <= large);
            if !overlaps {
                ranges.insert(large, small);
                size += f.file_size;
            }
        }
    }
    let blob: u64 =
        v.blob_files.values().map(|m| m.addition.blob_bytes.saturating_sub(m.garbage_bytes)).sum();
    size + blob
}

/// `rocksdb.levelstats`: files and megabytes per level.
fn level_stats_text(v: &Version) -> String {
    let mut s = String::from("Level Files Size(MB)\n--------------------\n");
    for l in 0..v.num_levels() {
        let _ = writeln!(
            s,
            "{:>5} {:>5} {:>8.0}",
            l,
            v.level_files(l).len(),
            v.level_bytes(l) as f64 / 1048576.0
        );
    }
    s
}
