//! `Db::property`: named views of the database's state, RocksDB-style. Names are accepted with
//! the `talus.` or the `rocksdb.` prefix.

use std::fmt::Write as _;

use super::cf_data::ColumnFamilyData;
use super::core::DbInner;
use crate::sst::BlockCacheStats;

impl DbInner {
    /// `Db::property`: the `default` family's value (RocksDB's `GetProperty` without a family).
    pub(crate) fn property(&self, name: &str) -> Option<String> {
        self.property_of(&self.default_cf, name)
    }

    /// Family `cf`'s value of `name`: a per-family property (`properties_cf.rs`) or a
    /// database-wide one, which is the same for every family.
    pub(crate) fn property_of(&self, cf: &ColumnFamilyData, name: &str) -> Option<String> {
        let name = name.strip_prefix("talus.").or_else(|| name.strip_prefix("rocksdb."))?;
        if let Some(value) = self.family_property(cf, name) {
            return Some(value);
        }
        // A family with a block cache of its own answers the cache names for it.
        let cache = || match super::open_families::own_block_cache(&self.opts, &cf.opts) {
            Some(own) => Some(own),
            None => self.table_cache.block_cache().cloned(),
        };
        match name {
            "dbstats" => Some(self.db_stats_text()),
            "options-statistics" => {
                let mut tickers = self.stats.tickers();
                tickers.extend(self.blobs.stats.tickers());
                tickers.extend(self.blobs.cache.stats.tickers());
                Some(crate::statistics::render(&tickers))
            }
            "num-snapshots" => Some(self.snapshots.count().to_string()),
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
            "wal-files-written" => Some(self.wal_files_written()),
            "block-cache-capacity" => Some(cache()?.capacity().to_string()),
            "block-cache-usage" => Some(cache()?.usage().to_string()),
            "block-cache-pinned-usage" => Some(cache()?.pinned_usage().to_string()),
            "block-cache-entry-stats" => Some(BlockCacheStats::collect(cache()?.as_ref()).render()),
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

    /// The `File reads` section of `talus.stats`: table-file blocks read by role and reads
    /// issued, since open, from every thread.
    pub(super) fn read_io_text(&self) -> String {
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
