//! One step's results: the per-interval rows and the summary, their CSV columns and the lines
//! printed to stdout. Pure data and formatting, no IO except through the caller's writer.
//!
//! The CSV column names here are the contract with `talus report` (which reads columns by
//! name) and are listed in the module doc of [`super`].

use super::metrics::BUCKET_NAMES;

/// One reporting interval.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    /// Seconds since the step started, at the end of the interval.
    pub elapsed_s: f64,
    /// Rows inserted per second in the interval.
    pub ips: f64,
    /// Queries per second in the interval.
    pub qps: f64,
    /// Largest insert commit response time in the interval, ms.
    pub max_insert_ms: f64,
    /// Largest query response time in the interval, ms.
    pub max_query_ms: f64,
    /// Rows deleted per second in the interval.
    pub dps: f64,
    /// Rows inserted per second in the interval by each client (their sum is `ips`).
    pub client_ips: Vec<f64>,
    /// What the engine was doing ([`crate::engine_state::between`]'s columns).
    pub engine: String,
}

/// The CSV header of `<step>.intervals.csv` for `clients` clients: the throughput columns,
/// deletes/s, inserts/s of each client (`ips_c0`, `ips_c1`, ...), then the engine's state
/// ([`crate::engine_state::HEADER`]).
pub fn interval_header(clients: usize) -> String {
    let mut h = String::from("elapsed_s,ips,qps,max_insert_ms,max_query_ms,dps,");
    for c in 0..clients {
        h.push_str(&format!("ips_c{c},"));
    }
    h.push_str(crate::engine_state::HEADER);
    h
}

impl IntervalRow {
    /// The CSV line (no newline); `client_ips` must have one value per client of the header.
    pub fn csv(&self) -> String {
        let mut line = format!(
            "{:.3},{:.1},{:.1},{:.3},{:.3},{:.1},",
            self.elapsed_s, self.ips, self.qps, self.max_insert_ms, self.max_query_ms, self.dps
        );
        for v in &self.client_ips {
            line.push_str(&format!("{v:.1},"));
        }
        line.push_str(&self.engine);
        line
    }
}

/// A step's summary.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Step name (`l.i1`).
    pub step: String,
    /// Engine name.
    pub engine: String,
    /// Wall seconds.
    pub secs: f64,
    /// Rows inserted.
    pub inserts: u64,
    /// Rows deleted.
    pub deletes: u64,
    /// Queries done.
    pub queries: u64,
    /// Insert commit histogram and max (µs).
    pub insert_hist: ([u64; 10], u64),
    /// Query histogram and max (µs).
    pub query_hist: ([u64; 10], u64),
    /// Delta of /proc/self/io syscr.
    pub syscr: u64,
    /// Delta of /proc/self/io rchar (bytes through read syscalls, page-cache hits included).
    pub rchar: u64,
    /// Delta of /proc/self/io wchar.
    pub wchar: u64,
    /// Delta of /proc/self/io read_bytes.
    pub read_bytes: u64,
    /// Delta of /proc/self/io write_bytes.
    pub write_bytes: u64,
    /// Delta of user + system CPU, µs.
    pub cpu_us: u64,
    /// Delta of the table layer's point reads (talus).
    pub point_reads: Option<u64>,
    /// Database bytes on disk at the end.
    pub db_bytes: u64,
    /// Peak RSS (VmHWM) at the end, KiB.
    pub peak_rss_kb: u64,
    /// RSS (VmRSS) at the end, KiB.
    pub rss_kb: u64,
    /// Peak virtual size during the step (VmSize sampled every 50 ms), KiB.
    pub peak_vsz_kb: u64,
    /// Block cache capacity (`--cache_size`), bytes: what `r_delta_kb` and `v_delta_kb`
    /// subtract (post 000's r-delta and v-delta: peak RSS and VSZ minus the block cache).
    pub cache_bytes: u64,
    /// The engine's stats text after the step (saved as `<step>.stats.txt`).
    pub stats_text: Option<String>,
    /// Columns parsed from it.
    pub engine_stats: super::engine_stats::EngineStats,
    /// 95th percentile, from below, of the inserts/s of the step's 10-second windows (the rate
    /// 95% of the windows reached; the post's `ipsP95`); `None` if no window was complete.
    pub ips_p95: Option<f64>,
    /// Reads the engine issued to the device (talus with direct reads); `None`: estimated as
    /// `read_bytes / 4096`.
    pub device_reads: Option<u64>,
    /// Page cache held by the database files (`--drop_page_cache_ms`), largest and average
    /// sample, bytes; `None` when not measured.
    pub page_cache: Option<(u64, u64)>,
}

/// Length of the windows `ips_p95` is computed over, seconds.
pub const P95_WINDOW_S: f64 = 10.0;

/// The rate reached by 95% of `windows` (nearest rank of the 5th percentile from below);
/// `None` if there are none.
pub fn p95_from_below(windows: &[f64]) -> Option<f64> {
    if windows.is_empty() {
        return None;
    }
    let mut w = windows.to_vec();
    w.sort_by(|a, b| a.total_cmp(b));
    let rank = ((w.len() as f64) * 0.05).ceil().max(1.0) as usize;
    w.get(rank - 1).copied()
}

fn per(x: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| x / n as f64)
}

/// Stall causes as `Stalls(count)` names them (spaces as `_`), for the `stalls_*` columns
/// (cumulative since the database was opened).
pub const STALL_CAUSES: [&str; 8] = [
    "level0_slowdown",
    "level0_slowdown_with_compaction",
    "level0_numfiles",
    "level0_numfiles_with_compaction",
    "stop_for_pending_compaction_bytes",
    "slowdown_for_pending_compaction_bytes",
    "memtable_compaction",
    "memtable_slowdown",
];

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}")).unwrap_or_default()
}

impl Summary {
    /// Rows inserted per second.
    pub fn ips(&self) -> f64 {
        if self.secs > 0.0 {
            self.inserts as f64 / self.secs
        } else {
            0.0
        }
    }

    /// Queries per second.
    pub fn qps(&self) -> f64 {
        if self.secs > 0.0 {
            self.queries as f64 / self.secs
        } else {
            0.0
        }
    }

    /// (column, value) pairs in CSV order; empty values where a ratio has no denominator.
    pub fn columns(&self) -> Vec<(String, String)> {
        let mut c: Vec<(String, String)> = vec![
            ("step".into(), self.step.clone()),
            ("engine".into(), self.engine.clone()),
            ("secs".into(), format!("{:.3}", self.secs)),
            ("inserts".into(), self.inserts.to_string()),
            ("deletes".into(), self.deletes.to_string()),
            ("queries".into(), self.queries.to_string()),
            ("ips".into(), format!("{:.1}", self.ips())),
            ("qps".into(), format!("{:.1}", self.qps())),
            ("ips_p95".into(), opt(self.ips_p95, 1)),
        ];
        for (prefix, (b, max)) in [("ins", &self.insert_hist), ("q", &self.query_hist)] {
            for (name, n) in BUCKET_NAMES.iter().zip(b.iter()) {
                c.push((format!("{prefix}_{name}"), n.to_string()));
            }
            c.push((format!("{prefix}_max_us"), max.to_string()));
        }
        let (q, i) = (self.queries, self.inserts);
        let kb = |b: u64| b as f64 / 1024.0;
        c.extend([
            ("reads_per_query".into(), opt(per(self.syscr as f64, q), 3)),
            ("kb_read_per_query".into(), opt(per(kb(self.read_bytes), q), 3)),
            ("reads_per_insert".into(), opt(per(self.syscr as f64, i), 3)),
            ("kb_read_per_insert".into(), opt(per(kb(self.read_bytes), i), 3)),
            (
                "point_reads_per_insert".into(),
                opt(self.point_reads.and_then(|p| per(p as f64, i)), 3),
            ),
            ("kb_written_per_insert".into(), opt(per(kb(self.write_bytes), i), 3)),
            ("cpu_us_per_op".into(), opt(per(self.cpu_us as f64, i + q), 1)),
            ("db_bytes".into(), self.db_bytes.to_string()),
            ("peak_rss_kb".into(), self.peak_rss_kb.to_string()),
            ("dev_reads_per_insert".into(), opt(per(self.device_read_count(), i), 4)),
            ("dev_reads_measured".into(), u8::from(self.device_reads.is_some()).to_string()),
            ("kb_rchar_per_insert".into(), opt(per(kb(self.rchar), i), 3)),
            ("kb_wchar_per_insert".into(), opt(per(kb(self.wchar), i), 3)),
            ("rss_kb".into(), self.rss_kb.to_string()),
            ("peak_vsz_kb".into(), self.peak_vsz_kb.to_string()),
            ("r_delta_kb".into(), self.r_delta_kb().to_string()),
            ("v_delta_kb".into(), self.v_delta_kb().to_string()),
            ("w_amp".into(), opt(self.engine_stats.w_amp, 2)),
            ("comp_write_gb".into(), opt(self.engine_stats.comp_write_gb, 3)),
            ("l0_base_avg_sec".into(), opt(self.engine_stats.l0_base_avg_sec, 3)),
            (
                "l0_base_count".into(),
                self.engine_stats.l0_base_count.map(|c| c.to_string()).unwrap_or_default(),
            ),
            ("stall_pct".into(), opt(self.engine_stats.stall_pct, 1)),
        ]);
        for cause in STALL_CAUSES {
            let n = self.engine_stats.stalls.iter().find(|(c, _)| c == cause).map(|(_, n)| *n);
            c.push((format!("stalls_{cause}"), n.map(|n| n.to_string()).unwrap_or_default()));
        }
        c.extend([
            (
                "page_cache_max_kb".into(),
                self.page_cache.map(|p| (p.0 >> 10).to_string()).unwrap_or_default(),
            ),
            (
                "page_cache_avg_kb".into(),
                self.page_cache.map(|p| (p.1 >> 10).to_string()).unwrap_or_default(),
            ),
        ]);
        c
    }

    /// Post 000's r-delta: the step's peak RSS minus the block cache capacity, KiB (negative
    /// while the cache is not full).
    pub fn r_delta_kb(&self) -> i64 {
        self.peak_rss_kb as i64 - (self.cache_bytes >> 10) as i64
    }

    /// Post 000's v-delta: the step's peak virtual size minus the block cache capacity, KiB.
    pub fn v_delta_kb(&self) -> i64 {
        self.peak_vsz_kb as i64 - (self.cache_bytes >> 10) as i64
    }

    /// Device reads: counted by the engine if it can (talus with direct reads), else
    /// `read_bytes / 4096` (one 4 KiB page per read: SQLite's page size, random reads).
    pub fn device_read_count(&self) -> f64 {
        match self.device_reads {
            Some(n) => n as f64,
            None => self.read_bytes as f64 / 4096.0,
        }
    }

    /// The lines printed at the end of a step: the numbers, then one line per histogram.
    pub fn lines(&self) -> String {
        let cols = self.columns();
        let get = |n: &str| {
            cols.iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| if v.is_empty() { "-".to_string() } else { v.clone() })
                .unwrap_or_default()
        };
        let mut s = format!(
            "summary {} engine={} secs={} rows={} deleted={} queries={} ips={} ipsP95={} qps={} \
             r/q={} rKB/q={} r/i={} dr/i={} rKB/i={} rcharKB/i={} pr/i={} wKB/i={} \
             cpu_us/op={} db_MB={:.1} rss_MB={:.1} r_delta_MB={:.1} v_delta_MB={:.1} \
             pagecache_max_MB={}\n",
            self.step,
            self.engine,
            get("secs"),
            self.inserts,
            self.deletes,
            self.queries,
            get("ips"),
            get("ips_p95"),
            get("qps"),
            get("reads_per_query"),
            get("kb_read_per_query"),
            get("reads_per_insert"),
            get("dev_reads_per_insert"),
            get("kb_read_per_insert"),
            get("kb_rchar_per_insert"),
            get("point_reads_per_insert"),
            get("kb_written_per_insert"),
            get("cpu_us_per_op"),
            self.db_bytes as f64 / 1048576.0,
            self.peak_rss_kb as f64 / 1024.0,
            self.r_delta_kb() as f64 / 1024.0,
            self.v_delta_kb() as f64 / 1024.0,
            self.page_cache.map_or("-".to_string(), |p| format!("{:.1}", p.0 as f64 / 1048576.0)),
        );
        for (label, (b, max)) in [("insert_rt", &self.insert_hist), ("query_rt", &self.query_hist)]
        {
            s.push_str(&format!("  {} {label}", self.step));
            for (name, n) in BUCKET_NAMES.iter().zip(b.iter()) {
                s.push_str(&format!(" {name}={n}"));
            }
            s.push_str(&format!(" max_ms={:.3}\n", *max as f64 / 1000.0));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_ratios() {
        let s = Summary {
            step: "l.i1".into(),
            engine: "talus".into(),
            secs: 2.0,
            inserts: 1000,
            syscr: 500,
            read_bytes: 2048,
            point_reads: Some(1000),
            cpu_us: 4000,
            ..Summary::default()
        };
        let c = s.columns();
        let get = |n: &str| c.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("ips"), Some("500.0"));
        assert_eq!(get("reads_per_insert"), Some("0.500"));
        assert_eq!(get("kb_read_per_insert"), Some("0.002"));
        assert_eq!(get("point_reads_per_insert"), Some("1.000"));
        assert_eq!(get("reads_per_query"), Some(""), "no queries: no ratio");
        assert_eq!(get("cpu_us_per_op"), Some("4.0"));
        assert_eq!(get("dev_reads_per_insert"), Some("0.0005"), "read_bytes / 4096 / inserts");
        assert_eq!(get("dev_reads_measured"), Some("0"));
        assert_eq!(get("ips_p95"), Some(""));
        assert_eq!(c.len(), 9 + 2 * 11 + 18 + 6 + STALL_CAUSES.len());
        assert_eq!(get("w_amp"), Some(""), "no engine stats: empty");
        assert!(s.lines().starts_with("summary l.i1 engine=talus"));
        assert!(s.lines().contains("r/q=-"));
        let s = Summary { device_reads: Some(7), ips_p95: Some(480.0), ..s };
        let c = s.columns();
        let get = |n: &str| c.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("dev_reads_per_insert").as_deref(), Some("0.0070"));
        assert_eq!(get("ips_p95").as_deref(), Some("480.0"));
    }

    #[test]
    fn deltas_subtract_the_block_cache() {
        let s = Summary {
            peak_rss_kb: 300 << 10,
            peak_vsz_kb: 2 << 20,
            cache_bytes: 256 << 20,
            ..Summary::default()
        };
        assert_eq!(s.r_delta_kb(), 44 << 10);
        assert_eq!(s.v_delta_kb(), (2 << 20) - (256 << 10));
        let c = s.columns();
        let get = |n: &str| c.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("r_delta_kb").as_deref(), Some("45056"));
        let small = Summary { peak_rss_kb: 100 << 10, ..s };
        assert_eq!(small.r_delta_kb(), -(156 << 10), "a cache not yet full: negative");
        assert!(small.lines().contains("r_delta_MB=-156.0 v_delta_MB=1792.0"), "{}", small.lines());
    }

    #[test]
    fn interval_rows_carry_deletes_and_each_client() {
        let h = interval_header(2);
        assert!(h.starts_with("elapsed_s,ips,qps,max_insert_ms,max_query_ms,dps,ips_c0,ips_c1,"));
        let r = IntervalRow {
            elapsed_s: 1.0,
            ips: 30.0,
            qps: 0.0,
            max_insert_ms: 2.0,
            max_query_ms: 0.0,
            dps: 12.0,
            client_ips: vec![10.0, 20.0],
            engine: crate::engine_state::between(&Default::default(), &Default::default()),
        };
        assert_eq!(r.csv().split(',').count(), h.split(',').count());
        assert!(r.csv().starts_with("1.000,30.0,0.0,2.000,0.000,12.0,10.0,20.0,"), "{}", r.csv());
    }

    #[test]
    fn p95_is_the_rate_95_percent_of_windows_reach() {
        assert_eq!(p95_from_below(&[]), None);
        assert_eq!(p95_from_below(&[5.0]), Some(5.0));
        let w: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(p95_from_below(&w), Some(5.0));
        let w: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(p95_from_below(&w), Some(1.0));
    }
}
