//! `Db::property`: named views of the database's state, RocksDB-style. Names are accepted with
//! the `talus.` or the `rocksdb.` prefix.

use std::fmt::Write as _;

use super::core::DbInner;
use super::stats::DbStats;
use crate::compaction::picker;

impl DbInner {
    pub(crate) fn property(&self, name: &str) -> Option<String> {
        let name = name.strip_prefix("talus.").or_else(|| name.strip_prefix("rocksdb."))?;
        let sv = self.super_version.load();
        let v = &sv.version;
        if let Some(n) = name.strip_prefix("num-files-at-level") {
            let level: usize = n.parse().ok()?;
            return (level < v.num_levels()).then(|| v.level_files(level).len().to_string());
        }
        match name {
            "stats" => Some(self.stats_text()),
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
            "recovery-report" => Some(self.recovery_report.lock().clone()),
            "background-errors" => {
                Some(if self.state.lock().bg_error.is_some() { "1" } else { "0" }.to_string())
            }
            _ => None,
        }
    }

    fn level_stats_text(&self) -> String {
        let sv = self.super_version.load();
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

    /// The compaction stats table and DB stats, in RocksDB's layout.
    fn stats_text(&self) -> String {
        let sv = self.super_version.load();
        let v = &sv.version;
        let scores = picker::scores(&self.opts, v);
        let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
        let mut s = String::new();
        let _ = writeln!(s, "\n** Compaction Stats [default] **");
        let _ = writeln!(
            s,
            "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop"
        );
        let _ = writeln!(s, "{}", "-".repeat(180));
        let ingest = DbStats::get(&self.stats.user_bytes_written).max(1);
        let (mut tf, mut tsz, mut trd, mut twr, mut tsec, mut tcnt) =
            (0usize, 0u64, 0u64, 0u64, 0f64, 0u64);
        for l in 0..v.num_levels() {
            let st = &self.stats.levels[l];
            let rn = DbStats::get(&st.bytes_read_input_level);
            let rnp1 = DbStats::get(&st.bytes_read_output_level);
            let w = DbStats::get(&st.bytes_written);
            let moved = DbStats::get(&st.bytes_moved);
            let secs = DbStats::get(&st.micros) as f64 / 1e6;
            let cnt = DbStats::get(&st.count)
                + if l == 0 { DbStats::get(&self.stats.flush_count) } else { 0 };
            let files = v.level_files(l).len();
            let size = v.level_bytes(l);
            if files == 0 && cnt == 0 {
                continue;
            }
            let wamp = if l == 0 || rn == 0 { 0.0 } else { (w as f64) / rn as f64 };
            let _ = writeln!(
                s,
                "  L{:<2} {:>8} {:>8} {:>5.1} {:>8.1} {:>7.1} {:>8.1} {:>9.1} {:>8.1} {:>9.1} {:>5.1} {:>8.1} {:>8.1} {:>9.2} {:>17.2} {:>9} {:>8.3} {:>5} {:>7}",
                l,
                files,
                human_size(size),
                scores.get(l).copied().unwrap_or(0.0),
                gb(rn + rnp1),
                gb(rn),
                gb(rnp1),
                gb(w),
                gb(w.saturating_sub(rnp1)),
                gb(moved),
                wamp,
                if secs > 0.0 { (rn + rnp1) as f64 / 1048576.0 / secs } else { 0.0 },
                if secs > 0.0 { w as f64 / 1048576.0 / secs } else { 0.0 },
                secs,
                secs,
                cnt,
                if cnt > 0 { secs / cnt as f64 } else { 0.0 },
                human_count(DbStats::get(&st.keys_in)),
                human_count(DbStats::get(&st.keys_dropped)),
            );
            tf += files;
            tsz += size;
            trd += rn + rnp1;
            twr += w;
            tsec += secs;
            tcnt += cnt;
        }
        let _ = writeln!(
            s,
            " Sum {:>8} {:>8} {:>5.1} {:>8.1} {:>7} {:>8} {:>9.1} {:>8} {:>9} {:>5.1} {:>8} {:>8} {:>9.2} {:>17.2} {:>9} {:>8.3}",
            tf,
            human_size(tsz),
            0.0,
            gb(trd),
            "",
            "",
            gb(twr),
            "",
            "",
            twr as f64 / ingest as f64,
            "",
            "",
            tsec,
            tsec,
            tcnt,
            if tcnt > 0 { tsec / tcnt as f64 } else { 0.0 }
        );
        let flush = DbStats::get(&self.stats.flush_bytes);
        let _ = writeln!(s, "Flush(GB): cumulative {:.3}, interval {:.3}", gb(flush), gb(flush));
        let _ = writeln!(
            s,
            "Cumulative compaction: {:.2} GB write, {:.2} GB read, {:.1} seconds",
            gb(twr),
            gb(trd),
            tsec
        );
        let _ = writeln!(
            s,
            "Stalls(count): {} level0_slowdown, {} level0_numfiles, {} memtable_compaction",
            DbStats::get(&self.stats.stall_l0_slowdown_count),
            DbStats::get(&self.stats.stall_l0_stop_count),
            DbStats::get(&self.stats.stall_memtable_count),
        );
        let writes = DbStats::get(&self.stats.user_writes);
        let groups = DbStats::get(&self.stats.write_groups).max(1);
        let _ = writeln!(s, "\n** DB Stats **");
        let _ = writeln!(
            s,
            "Cumulative writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.2} GB",
            writes,
            writes,
            groups,
            writes as f64 / groups as f64,
            gb(ingest)
        );
        let _ = writeln!(
            s,
            "Cumulative WAL: {} writes, {} syncs, {:.2} GB written",
            writes,
            DbStats::get(&self.stats.wal_syncs),
            gb(DbStats::get(&self.stats.wal_bytes))
        );
        let stall = DbStats::get(&self.stats.stall_micros) / 1000;
        let _ = writeln!(
            s,
            "Cumulative stall: {:02}:{:02}:{:02}.{:03} H:M:S",
            stall / 3_600_000,
            (stall / 60_000) % 60,
            (stall / 1000) % 60,
            stall % 1000
        );
        s
    }
}

fn human_size(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.2} MB", b as f64 / 1048576.0)
    } else {
        format!("{:.2} KB", b as f64 / 1024.0)
    }
}

fn human_count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}K", n / 1000)
    } else {
        n.to_string()
    }
}
