//! `Db::property`: named views of the database's state, RocksDB-style. Names are accepted with
//! the `talus.` or the `rocksdb.` prefix.

use std::fmt::Write as _;

use super::core::DbInner;
use std::time::Instant;

use super::stats::format::{self, LevelShape, StatsInput};
use super::stats::Baseline;
use crate::compaction::picker_for;
use crate::sst::BlockCacheStats;

impl DbInner {
    pub(crate) fn property(&self, name: &str) -> Option<String> {
        let name = name.strip_prefix("talus.").or_else(|| name.strip_prefix("rocksdb."))?;
        let sv = self.default_cf.super_version.load();
        let v = &sv.version;
        if let Some(n) = name.strip_prefix("num-files-at-level") {
            let level: usize = n.parse().ok()?;
            return (level < v.num_levels()).then(|| v.level_files(level).len().to_string());
        }
        match name {
            "stats" => Some(self.stats_text()),
            "options-statistics" => {
                let mut tickers = self.stats.tickers();
                tickers.extend(self.blobs.stats.tickers());
                tickers.extend(self.blobs.cache.stats.tickers());
                Some(crate::statistics::render(&tickers))
            }
            "levelstats" => Some(self.level_stats_text()),
            "estimate-num-keys" => {
                let mut n: i64 = 0;
                let mems = std::iter::once(&sv.mem).chain(sv.imms.iter().map(|(m, _)| m));
                for m in mems {
                    n += m.num_entries() as i64 - 2 * m.num_deletes() as i64;
                }
                for level in 0..v.num_levels() {
                    for f in v.level_files(level) {
                        n += f.num_entries as i64 - 2 * f.num_deletions as i64;
                    }
                }
                Some(n.max(0).to_string())
            }
            "cur-size-all-mem-tables" => {
                let mut n = sv.mem.approximate_memory_usage();
                for (m, _) in &sv.imms {
                    n += m.approximate_memory_usage();
                }
                Some(n.to_string())
            }
            "cur-size-active-mem-table" => Some(sv.mem.approximate_memory_usage().to_string()),
            "num-immutable-mem-table" => Some(sv.imms.len().to_string()),
            "num-snapshots" => Some(self.snapshots.count().to_string()),
            "total-sst-files-size" | "live-sst-files-size" => {
                Some((0..v.num_levels()).map(|l| v.level_bytes(l)).sum::<u64>().to_string())
            }
            "estimate-pending-compaction-bytes" => {
                Some(self.write_controller.pending_compaction_bytes().to_string())
            }
            "actual-delayed-write-rate" => {
                let delayed = self.write_controller.needs_delay();
                Some(
                    if delayed { self.write_controller.delayed_write_rate() } else { 0 }
                        .to_string(),
                )
            }
            "is-write-stopped" => {
                Some(if self.write_controller.is_stopped() { "1" } else { "0" }.to_string())
            }
            "recovery-report" => Some(self.recovery_report.lock().to_string()),
            // RocksDB's blob properties, and the live blob files by name (Talus only).
            "num-blob-files" => Some(v.blob_files.len().to_string()),
            "total-blob-file-size" => {
                Some(v.blob_files.values().map(|m| m.addition.file_size).sum::<u64>().to_string())
            }
            "live-blob-file-garbage-size" => {
                Some(v.blob_files.values().map(|m| m.garbage_bytes).sum::<u64>().to_string())
            }
            "blob-files" => Some(
                v.blob_files
                    .keys()
                    .map(|&n| crate::filename::blob_name(n))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            "wal-files-written" => Some(self.wal_files_written()),
            "block-cache-capacity" => Some(self.table_cache.block_cache()?.capacity().to_string()),
            "block-cache-usage" => Some(self.table_cache.block_cache()?.usage().to_string()),
            "block-cache-pinned-usage" => {
                Some(self.table_cache.block_cache()?.pinned_usage().to_string())
            }
            "block-cache-entry-stats" => {
                Some(BlockCacheStats::collect(self.table_cache.block_cache()?.as_ref()).render())
            }
            "read-io" => Some(self.table_cache.io_stats().snapshot().render()),
            "num-running-compactions" => {
                Some(self.state.lock().jobs.compactions_running().to_string())
            }
            "num-running-flushes" => {
                Some(u8::from(self.state.lock().jobs.flush_running()).to_string())
            }
            "background-errors" => {
                Some(if self.state.lock().bg_error.is_some() { "1" } else { "0" }.to_string())
            }
            _ => None,
        }
    }

    /// `talus.wal-files-written`: one line `<file name> <bytes written>` for every WAL file the
    /// database holds open (the active one, those a memtable switch closed but has not synced,
    /// and the one prepared for the next switch, 0 bytes). Their length on disk is the
    /// preallocated one (`fs/mmap_file.rs`); these are the bytes in them, for size reports that
    /// count what was written (`du --apparent-size` after a close). The prepared WAL is read
    /// first, then the active ones, each under its own lock (never both: `switch_memtable`
    /// takes them one after the other), so a switch in between lists a file twice, never not.
    fn wal_files_written(&self) -> String {
        let mut lines = Vec::new();
        if let Some((n, _)) = self.next_wal.lock().as_ref() {
            lines.push((*n, 0));
        }
        if let Some(w) = self.wal.lock().as_ref() {
            lines.extend(w.unsynced.iter().map(|(n, old)| (*n, old.file_size())));
            lines.push((w.number, w.writer.file_size()));
        }
        let mut s = String::new();
        for (n, bytes) in lines {
            let _ = writeln!(s, "{} {bytes}", crate::filename::wal_name(n));
        }
        s
    }

    fn level_stats_text(&self) -> String {
        let sv = self.default_cf.super_version.load();
        let v = &sv.version;
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

    /// The compaction stats table and DB stats, in RocksDB's layout. Moves the interval
    /// baseline forward, as RocksDB's `rocksdb.stats` does.
    fn stats_text(&self) -> String {
        let v = self.default_cf.super_version.load().version.clone();
        let scores = picker_for(&self.opts).scores(&v, &self.opts);
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
        let now = Baseline {
            at: Instant::now(),
            levels: self.stats.level_snaps(),
            flush: self.stats.flush.snap(),
            db: self.stats.db_snap(),
        };
        let prev = self.stats.advance_baseline(now.clone());
        let mut text = format::render(&StatsInput {
            shapes: &shapes,
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
            text.push_str(&BlockCacheStats::collect(cache.as_ref()).render());
        }
        text.push_str(&self.read_io_text());
        text
    }

    /// The `File reads` section of `talus.stats`: table-file blocks read by role and reads
    /// issued, since open, from every thread.
    fn read_io_text(&self) -> String {
        let s = self.table_cache.io_stats().snapshot();
        let mb = |b: u64| b as f64 / 1048576.0;
        let mut t = String::from("\n** File reads (table files, all threads, since open) **\n");
        t.push_str("Blocks read:");
        for (i, name) in ["data", "index", "filter", "other"].iter().enumerate() {
            let (n, b) =
                (s.blocks.get(i).copied().unwrap_or(0), s.bytes.get(i).copied().unwrap_or(0));
            let _ = write!(t, " {name} {n} ({:.1} MB){}", mb(b), if i < 3 { "," } else { "" });
        }
        let yes = |b: bool| if b { "on" } else { "off" };
        let _ = writeln!(
            t,
            "\nFile reads: {} ({:.1} MB); use_direct_reads {}, use_direct_io_for_flush_and_compaction {}",
            s.file_reads,
            mb(s.file_read_bytes),
            yes(self.opts.use_direct_reads),
            yes(self.opts.use_direct_io_for_flush_and_compaction)
        );
        t
    }
}
