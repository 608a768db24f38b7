//! Per-thread statistics and RocksDB's output lines: the result line
//! (`%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %ld operations;%s`), the histogram
//! blocks, the progress indicator (stderr, only on a terminal) and the
//! `--stats_interval_seconds` interval lines, all as RocksDB's `Stats` class prints them.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Instant;

use super::engines::Engine;
use super::histogram::Histogram;

/// Microseconds since the process started (a monotonic clock).
pub fn now_micros() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// Operation kinds with their own histogram (RocksDB's `OperationType`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OpType {
    /// Point or scan read.
    Read = 0,
    /// Write.
    Write = 1,
    /// Delete.
    Delete = 2,
    /// Seek.
    Seek = 3,
    /// Merge.
    Merge = 4,
    /// Anything else (a transaction of randomtransaction): RocksDB's `kOthers`, "op".
    Others = 5,
}

const OP_NAMES: [&str; 6] = ["read", "write", "delete", "seek", "merge", "op"];

/// What the progress reporting needs to know, fixed for a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportConfig {
    /// Record per-op latencies.
    pub histogram: bool,
    /// `--stats_interval` (1000 when `--stats_interval_seconds` is set).
    pub stats_interval: u64,
    /// `--stats_interval_seconds`.
    pub stats_interval_seconds: u64,
    /// `--stats_per_interval`.
    pub stats_per_interval: bool,
    /// Print `... finished N ops` (progress reports on and stderr a terminal).
    pub progress: bool,
}

impl ReportConfig {
    /// The config for these flags; progress only when stderr is a terminal.
    pub fn new(f: &super::flags::Flags) -> Self {
        ReportConfig {
            histogram: f.histogram,
            stats_interval: if f.stats_interval_seconds > 0 { 1000 } else { f.stats_interval },
            stats_interval_seconds: f.stats_interval_seconds,
            stats_per_interval: f.stats_per_interval > 0,
            progress: f.progress_reports && std::io::stderr().is_terminal(),
        }
    }
}

/// One thread's counters (RocksDB's `Stats`).
#[derive(Clone)]
pub struct Stats {
    cfg: ReportConfig,
    id: i64,
    start: u64,
    finish: u64,
    seconds: f64,
    done: u64,
    last_report_done: u64,
    next_report: u64,
    bytes: u64,
    last_op_finish: u64,
    last_report_finish: u64,
    hist: [Option<Histogram>; 6],
    message: String,
    exclude_from_merge: bool,
}

impl Stats {
    /// Fresh counters, started now.
    pub fn new(cfg: ReportConfig) -> Self {
        let mut s = Stats {
            cfg,
            id: -1,
            start: 0,
            finish: 0,
            seconds: 0.0,
            done: 0,
            last_report_done: 0,
            next_report: 0,
            bytes: 0,
            last_op_finish: 0,
            last_report_finish: 0,
            hist: Default::default(),
            message: String::new(),
            exclude_from_merge: false,
        };
        s.start(-1);
        s
    }

    /// Resets and starts the clock for thread `id`.
    pub fn start(&mut self, id: i64) {
        self.id = id;
        self.next_report = if self.cfg.stats_interval > 0 { self.cfg.stats_interval } else { 100 };
        self.hist = Default::default();
        self.done = 0;
        self.last_report_done = 0;
        self.bytes = 0;
        self.seconds = 0.0;
        self.start = now_micros();
        self.last_op_finish = self.start;
        self.finish = self.start;
        self.last_report_finish = self.start;
        self.message.clear();
        self.exclude_from_merge = false;
    }

    /// Stops the clock.
    pub fn stop(&mut self) {
        self.finish = now_micros();
        self.seconds = (self.finish - self.start) as f64 * 1e-6;
    }

    /// This thread's numbers are left out of the merged report (the *whilewriting writer).
    pub fn set_exclude_from_merge(&mut self) {
        self.exclude_from_merge = true;
    }

    /// Operations done.
    pub fn ops(&self) -> u64 {
        self.done
    }

    /// Adds bytes moved (for MB/s).
    pub fn add_bytes(&mut self, n: u64) {
        self.bytes += n;
    }

    /// Appends a message shown after the result line.
    pub fn add_message(&mut self, msg: &str) {
        if !self.message.is_empty() {
            self.message.push(' ');
        }
        self.message.push_str(msg);
    }

    /// Restarts the latency clock (so rate-limiter sleeps are not counted as op latency).
    pub fn reset_last_op_time(&mut self) {
        self.last_op_finish = now_micros();
    }

    /// Counts `n` finished operations of kind `op`; prints progress or interval lines.
    #[inline]
    pub fn finished_ops(&mut self, engine: &dyn Engine, n: u64, op: OpType) {
        if self.cfg.histogram {
            let now = now_micros();
            let micros = now.saturating_sub(self.last_op_finish);
            self.hist[op as usize].get_or_insert_with(Histogram::default).add(micros);
            self.last_op_finish = now;
        }
        self.done += n;
        if self.done >= self.next_report {
            self.report_progress(engine);
        }
    }

    #[cold]
    fn report_progress(&mut self, engine: &dyn Engine) {
        let mut err = std::io::stderr().lock();
        if self.cfg.stats_interval == 0 {
            self.next_report += match self.next_report {
                n if n < 1000 => 100,
                n if n < 5000 => 500,
                n if n < 10000 => 1000,
                n if n < 50000 => 5000,
                n if n < 100_000 => 10000,
                n if n < 500_000 => 50000,
                _ => 100_000,
            };
            if self.cfg.progress {
                let _ = write!(err, "... finished {} ops{:30}\r", self.done, "");
            }
        } else {
            let now = now_micros();
            let since_last = now.saturating_sub(self.last_report_finish);
            if self.cfg.stats_interval_seconds > 0
                && since_last < self.cfg.stats_interval_seconds * 1_000_000
            {
                self.next_report += self.cfg.stats_interval;
            } else {
                let interval_ops = self.done - self.last_report_done;
                let _ = writeln!(
                    err,
                    "{} ... thread {}: ({},{}) ops and ({:.1},{:.1}) ops/second in ({:.6},{:.6}) seconds",
                    time_to_string(wall_secs()),
                    self.id,
                    interval_ops,
                    self.done,
                    interval_ops as f64 / (since_last.max(1) as f64 / 1e6),
                    self.done as f64 / (now.saturating_sub(self.start).max(1) as f64 / 1e6),
                    since_last as f64 / 1e6,
                    now.saturating_sub(self.start) as f64 / 1e6
                );
                if self.id == 0 && self.cfg.stats_per_interval {
                    if let Some(s) = engine.property("stats") {
                        let _ = write!(err, "{s}");
                    }
                }
                self.next_report += self.cfg.stats_interval;
                self.last_report_finish = now;
                self.last_report_done = self.done;
            }
        }
        let _ = err.flush();
    }

    /// Adds another thread's counters (RocksDB's `Stats::Merge`).
    pub fn merge(&mut self, other: &Stats) {
        if other.exclude_from_merge {
            return;
        }
        for (mine, theirs) in self.hist.iter_mut().zip(&other.hist) {
            if let Some(t) = theirs {
                mine.get_or_insert_with(Histogram::default).merge(t);
            }
        }
        self.done += other.done;
        self.bytes += other.bytes;
        self.seconds += other.seconds;
        self.start = self.start.min(other.start);
        self.finish = self.finish.max(other.finish);
        if self.message.is_empty() {
            self.message = other.message.clone();
        }
    }

    fn elapsed(&self) -> f64 {
        ((self.finish - self.start) as f64 * 1e-6).max(1e-9)
    }

    /// The result line and, with `--histogram`, the histogram blocks (RocksDB's `Report`).
    pub fn report(&mut self, name: &str) -> String {
        if self.done < 1 {
            self.done = 1;
        }
        let elapsed = self.elapsed();
        let mut extra = String::new();
        if self.bytes > 0 {
            extra = format!("{:6.1} MB/s", (self.bytes as f64 / 1_048_576.0) / elapsed);
        }
        if !self.message.is_empty() {
            if !extra.is_empty() {
                extra.push(' ');
            }
            extra.push_str(&self.message);
        }
        let mut out = format!(
            "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}\n",
            name,
            self.seconds * 1e6 / self.done as f64,
            (self.done as f64 / elapsed) as i64,
            elapsed,
            self.done,
            if extra.is_empty() { "" } else { " " },
            extra
        );
        if self.cfg.histogram {
            for (i, h) in self.hist.iter().enumerate() {
                if let Some(h) = h {
                    out.push_str(&format!(
                        "Microseconds per {}:\n{}\n",
                        OP_NAMES[i],
                        h.to_rocksdb_string()
                    ));
                }
            }
        }
        out
    }
}

/// Seconds since the Unix epoch.
pub fn wall_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `(year, month, day, hour, minute, second, weekday 0=Sunday)` of a Unix time, in UTC.
fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    let wday = (days + 4).rem_euclid(7) as u32;
    (y, m, d, (rem / 3600) as u32, (rem / 60 % 60) as u32, (rem % 60) as u32, wday)
}

/// RocksDB's `TimeToString`: `YYYY/MM/DD-HH:MM:SS` (UTC).
pub fn time_to_string(secs: u64) -> String {
    let (y, mo, d, h, mi, s, _) = civil(secs);
    format!("{y:04}/{mo:02}/{d:02}-{h:02}:{mi:02}:{s:02}")
}

/// `ctime`'s layout without the newline: `Sun Nov 22 23:43:02 2026` (UTC).
pub fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (y, mo, d, h, mi, s, wd) = civil(secs);
    format!("{} {} {:2} {h:02}:{mi:02}:{s:02} {y}", DAYS[wd as usize], MONTHS[(mo - 1) as usize], d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line_matches_rocksdb_format() {
        let mut s = Stats::new(ReportConfig::default());
        s.start = 1_000_000;
        s.finish = 3_000_000;
        s.seconds = 2.0;
        s.done = 500_000;
        s.bytes = 58_000_000;
        let line = s.report("fillrandom");
        assert_eq!(
            line,
            "fillrandom   :       4.000 micros/op 250000 ops/sec 2.000 seconds 500000 operations;   27.7 MB/s\n"
        );
        s.bytes = 0;
        s.add_message("(10 of 10 found)\n");
        assert!(s.report("readrandom").ends_with("operations; (10 of 10 found)\n\n"));
    }

    #[test]
    fn merge_takes_the_span_and_skips_excluded() {
        let mut a = Stats::new(ReportConfig::default());
        let mut b = a.clone();
        a.done = 10;
        b.done = 5;
        let mut w = a.clone();
        w.set_exclude_from_merge();
        let mut m = Stats::new(ReportConfig::default());
        m.merge(&a);
        m.merge(&b);
        m.merge(&w);
        assert_eq!(m.done, 15);
    }

    #[test]
    fn dates() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_390_982), "Sun Nov 22 23:43:02 2026");
        assert_eq!(time_to_string(951_782_400), "2000/02/29-00:00:00");
    }
}
