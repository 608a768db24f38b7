//! sysbench's text (the per-interval line and the final summary block, field for field as
//! sysbench 1.0 prints them) and the `--results` CSV rows.
//!
//! `summary.csv`, one row per test: `test, group, engine, threads, secs, events, tps, qps,
//! reads, writes, other, errors, lat_min_ms, lat_avg_ms, lat_p95_ms, lat_p99_ms, lat_max_ms,
//! db_bytes, cpu_user_s, cpu_sys_s, cpu_us_per_query, thread_user_s, thread_sys_s,
//! thread_cpu_us_per_query, cs_per_query`: the CPU columns are getrusage's over the test, of
//! the whole process (`cpu_*`: every thread, background flush and compaction included) and of
//! the client threads alone (`thread_*`, RUSAGE_THREAD), per query as sysbench counts queries
//! (reads + writes + other); `cs_per_query` is the process's context switches (voluntary +
//! involuntary) per query; empty where the platform cannot measure it.
//! `<test>.intervals.csv`: `elapsed_s, tps, qps, lat_p95_ms, err_s`, then the engine's state in
//! the interval ([`crate::engine_state`]; statistics are always on for its ticker columns).

use std::fmt::Write;

use crate::oltp::cpu::Cpu;
use crate::oltp::driver::{Interval, Totals};
use crate::oltp::results::num;

/// Counter indices in the driver's recorders.
pub const READS: usize = 0;
/// Write statements.
pub const WRITES: usize = 1;
/// BEGIN/COMMIT.
pub const OTHER: usize = 2;
/// Ignored errors (conflicts, duplicate keys): the event was dropped.
pub const ERRORS: usize = 3;
/// How many counters.
pub const COUNTERS: usize = 4;

/// `[ 10s ] thds: 4 tps: ... qps: ... (r/w/o: .../.../...) lat (ms,95%): ... err/s: ...
/// reconn/s: 0.00`.
pub fn interval_line(threads: usize, iv: &Interval<'_>) -> String {
    let d = iv.secs.max(1e-9);
    let c = &iv.stats.counts;
    let (r, w, o) = (c[READS] as f64 / d, c[WRITES] as f64 / d, c[OTHER] as f64 / d);
    format!(
        "[ {}s ] thds: {threads} tps: {:.2} qps: {:.2} (r/w/o: {r:.2}/{w:.2}/{o:.2}) lat (ms,95%): \
         {:.2} err/s: {:.2} reconn/s: 0.00",
        iv.elapsed.round(),
        iv.stats.events() as f64 / d,
        r + w + o,
        iv.stats.all().percentile(95.0) / 1000.0,
        c[ERRORS] as f64 / d
    )
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt())
}

/// sysbench's final block: SQL statistics, general statistics, latency, threads fairness.
pub fn summary_block(t: &Totals) -> String {
    let c = &t.stats.counts;
    let total = c[READS] + c[WRITES] + c[OTHER];
    let ev = t.stats.events();
    let secs = t.secs.max(1e-9);
    let h = t.stats.all();
    let (ev_avg, ev_sd) = mean_sd(&t.per_thread.iter().map(|p| p.0 as f64).collect::<Vec<_>>());
    let (ex_avg, ex_sd) = mean_sd(&t.per_thread.iter().map(|p| p.1).collect::<Vec<_>>());
    let mut s = String::new();
    let _ = writeln!(s, "SQL statistics:\n    queries performed:");
    let _ = writeln!(s, "        read:                            {}", c[READS]);
    let _ = writeln!(s, "        write:                           {}", c[WRITES]);
    let _ = writeln!(s, "        other:                           {}", c[OTHER]);
    let _ = writeln!(s, "        total:                           {total}");
    let _ = writeln!(
        s,
        "    transactions:                        {ev:<6} ({:.2} per sec.)",
        ev as f64 / secs
    );
    let _ = writeln!(
        s,
        "    queries:                             {total:<6} ({:.2} per sec.)",
        total as f64 / secs
    );
    let _ = writeln!(
        s,
        "    ignored errors:                      {:<6} ({:.2} per sec.)",
        c[ERRORS],
        c[ERRORS] as f64 / secs
    );
    let _ = writeln!(s, "    reconnects:                          0      (0.00 per sec.)\n");
    let _ = writeln!(s, "General statistics:");
    let _ = writeln!(s, "    total time:                          {secs:.4}s");
    let _ = writeln!(s, "    total number of events:              {ev}\n");
    let _ = writeln!(s, "Latency (ms):");
    let ms = |us: f64| us / 1000.0;
    let _ = writeln!(s, "         min: {:>39.2}", ms(h.min() as f64));
    let _ = writeln!(s, "         avg: {:>39.2}", ms(h.average()));
    let _ = writeln!(s, "         max: {:>39.2}", ms(h.max() as f64));
    let _ = writeln!(s, "         95th percentile: {:>27.2}", ms(h.percentile(95.0)));
    let _ = writeln!(s, "         sum: {:>39.2}\n", ms(h.sum() as f64));
    let _ = writeln!(s, "Threads fairness:");
    let _ = writeln!(s, "    events (avg/stddev):           {ev_avg:.4}/{ev_sd:.2}");
    let _ = writeln!(s, "    execution time (avg/stddev):   {ex_avg:.4}/{ex_sd:.2}");
    s
}

/// `summary.csv`'s header.
pub const SUMMARY_HEADER: &[&str] = &[
    "test",
    "group",
    "engine",
    "threads",
    "secs",
    "events",
    "tps",
    "qps",
    "reads",
    "writes",
    "other",
    "errors",
    "lat_min_ms",
    "lat_avg_ms",
    "lat_p95_ms",
    "lat_p99_ms",
    "lat_max_ms",
    "db_bytes",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_us_per_query",
    "thread_user_s",
    "thread_sys_s",
    "thread_cpu_us_per_query",
    "cs_per_query",
];

fn queries(t: &Totals) -> u64 {
    let c = &t.stats.counts;
    c[READS] + c[WRITES] + c[OTHER]
}

/// Microseconds of `cpu` per query of `t` (None without queries or a measurement).
fn us_per_query(t: &Totals, cpu: Option<&Cpu>) -> Option<f64> {
    let q = queries(t);
    cpu.filter(|_| q > 0).map(|c| c.total_s() * 1e6 / q as f64)
}

/// The CPU lines printed after sysbench's block: the process's and the client threads'
/// user/system seconds, CPU per query and context switches per query.
pub fn cpu_block(t: &Totals, process: Option<&Cpu>) -> String {
    let mut s = String::from("CPU (getrusage, over the test):\n");
    let q = queries(t).max(1) as f64;
    let line = |s: &mut String, what: &str, c: Option<&Cpu>| match c {
        Some(c) => {
            let _ = writeln!(
                s,
                "    {what:<34} user {:.3}s sys {:.3}s ({:.0}% sys), {:.2} µs/query, {:.3} \
                 context switches/query",
                c.user_s,
                c.sys_s,
                100.0 * c.sys_s / c.total_s().max(1e-9),
                c.total_s() * 1e6 / q,
                c.switches() as f64 / q
            );
        }
        None => {
            let _ = writeln!(s, "    {what:<34} not measurable on this platform");
        }
    };
    line(&mut s, "process:", process);
    line(&mut s, "client threads:", t.worker_cpu.as_ref());
    let rest = process.zip(t.worker_cpu.as_ref()).map(|(p, w)| p.since(w));
    line(&mut s, "other threads (engine background):", rest.as_ref());
    s
}

/// One `summary.csv` row.
pub fn summary_row(
    test: &str,
    group: &str,
    engine: &str,
    threads: usize,
    t: &Totals,
    db_bytes: u64,
    process: Option<&Cpu>,
) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(num).unwrap_or_default();
    let w = t.worker_cpu.as_ref();
    let c = &t.stats.counts;
    let h = t.stats.all();
    let secs = t.secs.max(1e-9);
    let ev = t.stats.events();
    vec![
        test.to_string(),
        group.to_string(),
        engine.to_string(),
        threads.to_string(),
        num(t.secs),
        ev.to_string(),
        num(ev as f64 / secs),
        num((c[READS] + c[WRITES] + c[OTHER]) as f64 / secs),
        c[READS].to_string(),
        c[WRITES].to_string(),
        c[OTHER].to_string(),
        c[ERRORS].to_string(),
        num(h.min() as f64 / 1000.0),
        num(h.average() / 1000.0),
        num(h.percentile(95.0) / 1000.0),
        num(h.percentile(99.0) / 1000.0),
        num(h.max() as f64 / 1000.0),
        db_bytes.to_string(),
        opt(process.map(|c| c.user_s)),
        opt(process.map(|c| c.sys_s)),
        opt(us_per_query(t, process)),
        opt(w.map(|c| c.user_s)),
        opt(w.map(|c| c.sys_s)),
        opt(us_per_query(t, w)),
        opt(process.filter(|_| queries(t) > 0).map(|c| c.switches() as f64 / queries(t) as f64)),
    ]
}

/// `<test>.intervals.csv`'s header: the throughput columns, then the engine's state
/// ([`crate::engine_state::HEADER`]).
pub fn interval_header() -> Vec<String> {
    let mut h: Vec<String> =
        ["elapsed_s", "tps", "qps", "lat_p95_ms", "err_s"].iter().map(|s| s.to_string()).collect();
    h.extend(crate::engine_state::HEADER.split(',').map(String::from));
    h
}

/// One interval row; `engine` is the engine's state in it ([`crate::engine_state::between`]).
pub fn interval_row(iv: &Interval<'_>, engine: &str) -> Vec<String> {
    let d = iv.secs.max(1e-9);
    let c = &iv.stats.counts;
    vec![
        num(iv.elapsed),
        num(iv.stats.events() as f64 / d),
        num((c[READS] + c[WRITES] + c[OTHER]) as f64 / d),
        num(iv.stats.all().percentile(95.0) / 1000.0),
        num(c[ERRORS] as f64 / d),
    ]
    .into_iter()
    .chain(engine.split(',').map(String::from))
    .collect()
}
