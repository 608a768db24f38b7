//! `talus tpcc` text and `--results` rows.
//!
//! Interval line: `[ 10s ] tpmC: ... tps: ... retries/s: ... p95 ms: NO .. P .. OS .. D .. SL ..`.
//! `summary.csv` (one row per run): `engine, warehouses, threads, secs, tpmc, tps, new_order,
//! payment, order_status, delivery, stock_level, retries, rollbacks, p95_ms_<kind> and
//! p99_ms_<kind> for the five kinds, db_bytes, consistency` (`ok` or `FAILED`).
//! `run.intervals.csv`: `elapsed_s, tpmc, tps, retries_s, p95_ms_<kind>..., db_mb`, then the
//! engine's state in the interval ([`crate::engine_state`]; statistics are always on for its
//! ticker columns).

use std::fmt::Write;

use super::txns::KINDS;
use crate::oltp::driver::{Interval, Stats, Totals};
use crate::oltp::results::num;

/// Counters: retries per kind (0..5), then NewOrder rollbacks.
pub const ROLLBACKS: usize = 5;
/// How many counters.
pub const COUNTERS: usize = 6;

const SHORT: [&str; 5] = ["NO", "P", "OS", "D", "SL"];
const KEYS: [&str; 5] = ["new_order", "payment", "order_status", "delivery", "stock_level"];

fn retries(st: &Stats) -> u64 {
    st.counts[..KINDS.len()].iter().sum()
}

/// One interval's line.
pub fn interval_line(iv: &Interval<'_>) -> String {
    let d = iv.secs.max(1e-9);
    let st = iv.stats;
    let mut s = format!(
        "[ {}s ] tpmC: {:.0} tps: {:.2} retries/s: {:.2} p95 ms:",
        iv.elapsed.round(),
        st.hists[0].count() as f64 * 60.0 / d,
        st.events() as f64 / d,
        retries(st) as f64 / d
    );
    for (k, name) in SHORT.iter().enumerate() {
        let _ = write!(s, " {name} {:.2}", st.hists[k].percentile(95.0) / 1000.0);
    }
    s
}

/// `run.intervals.csv`'s header.
pub fn interval_header() -> Vec<String> {
    let mut h: Vec<String> =
        ["elapsed_s", "tpmc", "tps", "retries_s"].iter().map(|s| s.to_string()).collect();
    h.extend(KEYS.iter().map(|k| format!("p95_ms_{k}")));
    h.push("db_mb".into());
    h.extend(crate::engine_state::HEADER.split(',').map(String::from));
    h
}

/// One interval row; `db_bytes` is the database's size at the interval's end, `engine` the
/// engine's state in the interval ([`crate::engine_state::between`]).
pub fn interval_row(iv: &Interval<'_>, db_bytes: u64, engine: &str) -> Vec<String> {
    let d = iv.secs.max(1e-9);
    let st = iv.stats;
    let mut r = vec![
        num(iv.elapsed),
        num(st.hists[0].count() as f64 * 60.0 / d),
        num(st.events() as f64 / d),
        num(retries(st) as f64 / d),
    ];
    r.extend(st.hists.iter().map(|h| num(h.percentile(95.0) / 1000.0)));
    r.push(num(db_bytes as f64 / 1048576.0));
    r.extend(engine.split(',').map(String::from));
    r
}

/// The final report.
pub fn final_block(
    engine: &str,
    warehouses: i64,
    threads: usize,
    t: &Totals,
    db_bytes: u64,
) -> String {
    let st = &t.stats;
    let secs = t.secs.max(1e-9);
    let ev = st.events();
    let re = retries(st);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "TPC-C: engine={engine} warehouses={warehouses} threads={threads} time={secs:.1}s"
    );
    let _ = writeln!(
        s,
        "    tpmC (NewOrder per minute):  {:.1}",
        st.hists[0].count() as f64 * 60.0 / secs
    );
    let _ = writeln!(s, "    transactions:                {ev} ({:.2} per sec.)", ev as f64 / secs);
    let _ = writeln!(
        s,
        "    retries (write conflicts):   {re} ({:.2}% of attempts)",
        100.0 * re as f64 / (ev + re).max(1) as f64
    );
    let _ = writeln!(s, "    NewOrder rollbacks (1%):     {}", st.counts[ROLLBACKS]);
    let _ = writeln!(s, "    database size:               {:.1} MiB", db_bytes as f64 / 1048576.0);
    let _ = writeln!(
        s,
        "    {:<12} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8}",
        "transaction", "count", "share", "avg ms", "p50", "p90", "p95", "p99", "max", "retries"
    );
    for (k, kind) in KINDS.iter().enumerate() {
        let h = &st.hists[k];
        let ms = |v: f64| v / 1000.0;
        let _ = writeln!(
            s,
            "    {:<12} {:>9} {:>5.1}% {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>8}",
            kind.name(),
            h.count(),
            100.0 * h.count() as f64 / ev.max(1) as f64,
            ms(h.average()),
            ms(h.percentile(50.0)),
            ms(h.percentile(90.0)),
            ms(h.percentile(95.0)),
            ms(h.percentile(99.0)),
            ms(h.max() as f64),
            st.counts[k]
        );
    }
    s
}

/// `summary.csv`'s header.
pub fn summary_header() -> Vec<String> {
    let mut h: Vec<String> = ["engine", "warehouses", "threads", "secs", "tpmc", "tps"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    h.extend(KEYS.iter().map(|k| k.to_string()));
    h.extend(["retries".to_string(), "rollbacks".to_string()]);
    h.extend(KEYS.iter().map(|k| format!("p95_ms_{k}")));
    h.extend(KEYS.iter().map(|k| format!("p99_ms_{k}")));
    h.extend(["db_bytes".to_string(), "consistency".to_string()]);
    h
}

/// One `summary.csv` row.
pub fn summary_row(
    engine: &str,
    warehouses: i64,
    threads: usize,
    t: &Totals,
    db_bytes: u64,
    consistent: bool,
) -> Vec<String> {
    let st = &t.stats;
    let secs = t.secs.max(1e-9);
    let mut r = vec![
        engine.to_string(),
        warehouses.to_string(),
        threads.to_string(),
        num(t.secs),
        num(st.hists[0].count() as f64 * 60.0 / secs),
        num(st.events() as f64 / secs),
    ];
    r.extend(st.hists.iter().map(|h| h.count().to_string()));
    r.push(retries(st).to_string());
    r.push(st.counts[ROLLBACKS].to_string());
    r.extend(st.hists.iter().map(|h| num(h.percentile(95.0) / 1000.0)));
    r.extend(st.hists.iter().map(|h| num(h.percentile(99.0) / 1000.0)));
    r.push(db_bytes.to_string());
    r.push(if consistent { "ok" } else { "FAILED" }.into());
    r
}
