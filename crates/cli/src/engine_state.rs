//! What the engine was doing in each interval (issue 37): sampled from the engine's properties
//! (RocksDB's names, so Talus and RocksDB under the table layer give the same columns) and
//! from `/proc/self/io`, and turned into the columns the tools' interval files append after
//! their throughput columns, so a dip and its cause line up on one time axis.
//!
//! Gauges (at the interval's end): L0 files and MB (`rocksdb.levelstats`), immutable memtables
//! and their MB (`rocksdb.num-immutable-mem-table`, `cur-size-all-mem-tables` less
//! `cur-size-active-mem-table`), pending compaction MB (`estimate-pending-compaction-bytes`),
//! the stall state (none, delayed, stopped: the worst in the interval by Talus's
//! `talus.write.stops`/`talus.write.delays` tickers, else `is-write-stopped` and
//! `actual-delayed-write-rate` at the sample),
//! running compactions (`num-running-compactions`). Counters (the interval's share, from the
//! `rocksdb.options-statistics` tickers, so the engine must count statistics: the tools open it
//! with `statistics`): stalled ms (`rocksdb.stall.micros`), flush MB written, compaction MB read
//! and written, the throttle's wait ms (`talus.io.throttle.wait.micros`), the block cache hit
//! rate; and the process's device MB read and written (`/proc/self/io`). A column the engine
//! cannot give (SQLite: every one but the device's) is empty in the CSV.
//!
//! Who calls: the interval reporters of `ibench` and `tpcc`, once per interval, from their
//! reporting thread; the properties are the engine's own (its locks, briefly). Pure parsing
//! otherwise.

use crate::procio::ProcIo;

/// One reading of the engine's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Gauges (`None` when the engine has no such property).
    l0_files: Option<u64>,
    l0_mb: Option<f64>,
    imm_count: Option<u64>,
    imm_bytes: Option<u64>,
    pending_bytes: Option<u64>,
    stall: Option<&'static str>,
    running_compactions: Option<u64>,
    /// Cumulative tickers (`None` without statistics).
    tickers: Option<Tickers>,
    io: ProcIo,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tickers {
    stall_micros: u64,
    flush_write: u64,
    compact_read: u64,
    compact_write: u64,
    throttle_wait_micros: u64,
    cache_hit: u64,
    cache_miss: u64,
    stops: u64,
    delays: u64,
}

/// The CSV header of the columns [`between`] gives, to append after a tool's own.
pub const HEADER: &str = "l0_files,l0_mb,imm_memtables,imm_mb,pending_compaction_mb,stall,\
stalled_ms,flush_write_mb,compact_read_mb,compact_write_mb,running_compactions,dev_read_mb,\
dev_write_mb,throttle_wait_ms,cache_hit_pct";

/// Reads the state through `prop` (an engine's `property`, RocksDB's names) and
/// `/proc/self/io`.
pub fn sample(prop: &dyn Fn(&str) -> Option<String>) -> Sample {
    let num = |name: &str| prop(name).and_then(|v| v.trim().parse::<u64>().ok());
    let (l0_files, l0_mb) = match prop("rocksdb.levelstats").as_deref().and_then(level0) {
        Some((f, mb)) => (Some(f), Some(mb)),
        None => (num("rocksdb.num-files-at-level0"), None),
    };
    let all = num("rocksdb.cur-size-all-mem-tables");
    let active = num("rocksdb.cur-size-active-mem-table");
    let stall = match (num("rocksdb.is-write-stopped"), num("rocksdb.actual-delayed-write-rate")) {
        (Some(1), _) => Some("stopped"),
        (Some(_), Some(r)) if r > 0 => Some("delayed"),
        (Some(_), _) => Some("none"),
        (None, _) => None,
    };
    Sample {
        l0_files,
        l0_mb,
        imm_count: num("rocksdb.num-immutable-mem-table"),
        imm_bytes: all.zip(active).map(|(a, b)| a.saturating_sub(b)),
        pending_bytes: num("rocksdb.estimate-pending-compaction-bytes"),
        stall,
        running_compactions: num("rocksdb.num-running-compactions"),
        tickers: prop("rocksdb.options-statistics").as_deref().and_then(tickers),
        io: ProcIo::now(),
    }
}

/// L0's files and MB from `rocksdb.levelstats` (`Level Files Size(MB)` rows).
fn level0(text: &str) -> Option<(u64, f64)> {
    text.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["0", files, mb, ..] => Some((files.parse().ok()?, mb.parse().ok()?)),
            _ => None,
        }
    })
}

/// The tickers this module reads, from a `STATISTICS:` text (`name COUNT : n` lines).
fn tickers(text: &str) -> Option<Tickers> {
    let mut t = Tickers::default();
    let mut seen = false;
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(" COUNT : ") else { continue };
        let Ok(v) = rest.trim().parse::<u64>() else { continue };
        let slot = match name.trim() {
            "rocksdb.stall.micros" => &mut t.stall_micros,
            "rocksdb.flush.write.bytes" => &mut t.flush_write,
            "rocksdb.compact.read.bytes" => &mut t.compact_read,
            "rocksdb.compact.write.bytes" => &mut t.compact_write,
            "talus.io.throttle.wait.micros" => &mut t.throttle_wait_micros,
            "rocksdb.block.cache.hit" => &mut t.cache_hit,
            "rocksdb.block.cache.miss" => &mut t.cache_miss,
            "talus.write.stops" => &mut t.stops,
            "talus.write.delays" => &mut t.delays,
            _ => continue,
        };
        *slot = v;
        seen = true;
    }
    seen.then_some(t)
}

const MB: f64 = 1048576.0;

/// The columns of the interval from `prev` to `cur` (CSV, [`HEADER`]'s order, empty where the
/// engine gave nothing).
pub fn between(prev: &Sample, cur: &Sample) -> String {
    fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
        v.map_or(String::new(), |v| v.to_string())
    }
    let mb = |b: Option<u64>| opt(b.map(|b| format!("{:.1}", b as f64 / MB)));
    let t = prev.tickers.zip(cur.tickers);
    let d = |f: fn(&Tickers) -> u64| t.map(|(a, b)| f(&b).saturating_sub(f(&a)));
    let hit_pct = t.and_then(|(a, b)| {
        let hits = b.cache_hit.saturating_sub(a.cache_hit);
        let all = hits + b.cache_miss.saturating_sub(a.cache_miss);
        (all > 0).then(|| format!("{:.1}", 100.0 * hits as f64 / all as f64))
    });
    let io = cur.io.since(&prev.io);
    // The worst state in the interval: a stop or delay counted since the last sample (Talus's
    // stall tickers; a stall that began and ended between samples), else the state now.
    let stall = match (d(|t| t.stops), d(|t| t.delays), cur.stall) {
        (Some(n), _, _) if n > 0 => Some("stopped"),
        (_, _, Some("stopped")) => Some("stopped"),
        (_, Some(n), _) if n > 0 => Some("delayed"),
        (_, _, s) => s,
    };
    [
        opt(cur.l0_files),
        opt(cur.l0_mb.map(|m| format!("{m:.0}"))),
        opt(cur.imm_count),
        mb(cur.imm_bytes),
        mb(cur.pending_bytes),
        opt(stall),
        opt(d(|t| t.stall_micros).map(|u| format!("{:.1}", u as f64 / 1000.0))),
        mb(d(|t| t.flush_write)),
        mb(d(|t| t.compact_read)),
        mb(d(|t| t.compact_write)),
        opt(cur.running_compactions),
        format!("{:.1}", io.read_bytes as f64 / MB),
        format!("{:.1}", io.write_bytes as f64 / MB),
        opt(d(|t| t.throttle_wait_micros).map(|u| format!("{:.1}", u as f64 / 1000.0))),
        opt(hit_pct),
    ]
    .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|p| p.0 == name).map(|p| p.1.to_string())
    }

    #[test]
    fn columns_from_properties_and_ticker_deltas() {
        let stats0 = "rocksdb.stall.micros COUNT : 1000\nrocksdb.compact.write.bytes COUNT : 0\n\
                      rocksdb.block.cache.hit COUNT : 10\nrocksdb.block.cache.miss COUNT : 10\n";
        let stats1 = "rocksdb.stall.micros COUNT : 251000\nrocksdb.compact.write.bytes COUNT : \
                      2097152\nrocksdb.block.cache.hit COUNT : 100\nrocksdb.block.cache.miss COUNT \
                      : 20\ntalus.io.throttle.wait.micros COUNT : 1500\n";
        let levels =
            "Level Files Size(MB)\n--------------------\n    0     6      384\n    1     3 100\n";
        let p0: &'static [(&str, &str)] = Box::leak(Box::new([
            ("rocksdb.levelstats", levels),
            ("rocksdb.options-statistics", stats0),
            ("rocksdb.is-write-stopped", "0"),
            ("rocksdb.actual-delayed-write-rate", "0"),
        ]));
        let p1: &'static [(&str, &str)] = Box::leak(Box::new([
            ("rocksdb.levelstats", levels),
            ("rocksdb.options-statistics", stats1),
            ("rocksdb.is-write-stopped", "1"),
            ("rocksdb.num-immutable-mem-table", "2"),
            ("rocksdb.cur-size-all-mem-tables", "3145728"),
            ("rocksdb.cur-size-active-mem-table", "1048576"),
            ("rocksdb.estimate-pending-compaction-bytes", "10485760"),
            ("rocksdb.num-running-compactions", "1"),
        ]));
        let (a, b) = (sample(&props(p0)), sample(&props(p1)));
        assert_eq!(a.stall, Some("none"));
        let cols: Vec<String> = between(&a, &b).split(',').map(str::to_string).collect();
        let names: Vec<&str> = HEADER.split(',').collect();
        assert_eq!(cols.len(), names.len());
        let col = |n: &str| cols[names.iter().position(|x| *x == n).unwrap()].as_str();
        assert_eq!((col("l0_files"), col("l0_mb")), ("6", "384"));
        assert_eq!((col("imm_memtables"), col("imm_mb")), ("2", "2.0"));
        assert_eq!((col("pending_compaction_mb"), col("stall")), ("10.0", "stopped"));
        assert_eq!((col("stalled_ms"), col("compact_write_mb")), ("250.0", "2.0"));
        assert_eq!((col("throttle_wait_ms"), col("running_compactions")), ("1.5", "1"));
        assert_eq!(col("cache_hit_pct"), "90.0", "90 hits of 100 lookups in the interval");
    }

    #[test]
    fn a_stop_between_two_samples_shows_as_stopped() {
        let p0: &'static [(&str, &str)] = &[
            (
                "rocksdb.options-statistics",
                "talus.write.stops COUNT : 3\ntalus.write.delays COUNT : 0\n",
            ),
            ("rocksdb.is-write-stopped", "0"),
        ];
        let p1: &'static [(&str, &str)] = &[
            (
                "rocksdb.options-statistics",
                "talus.write.stops COUNT : 4\ntalus.write.delays COUNT : 9\n",
            ),
            ("rocksdb.is-write-stopped", "0"),
        ];
        let p2: &'static [(&str, &str)] = &[
            (
                "rocksdb.options-statistics",
                "talus.write.stops COUNT : 4\ntalus.write.delays COUNT : 10\n",
            ),
            ("rocksdb.is-write-stopped", "0"),
        ];
        let (a, b, c) = (sample(&props(p0)), sample(&props(p1)), sample(&props(p2)));
        let stall = |x: &Sample, y: &Sample| between(x, y).split(',').nth(5).unwrap().to_string();
        assert_eq!(stall(&a, &b), "stopped", "the stop is over, but it happened");
        assert_eq!(stall(&b, &c), "delayed");
        assert_eq!(stall(&c, &c), "none");
    }

    #[test]
    fn an_engine_without_properties_leaves_its_columns_empty() {
        let none = |_: &str| None;
        let (a, b) = (sample(&none), sample(&none));
        let cols: Vec<String> = between(&a, &b).split(',').map(str::to_string).collect();
        let names: Vec<&str> = HEADER.split(',').collect();
        for (n, v) in names.iter().zip(&cols) {
            let device = n.starts_with("dev_");
            assert_eq!(v.is_empty(), !device, "{n}={v}");
        }
    }
}
