//! The TPC-C part of the report page: a table of the runs (engine, warehouses, threads, the
//! engine options that vary in post 002's experiments: rate limiter, per-level and bottommost
//! compression; tpmC, tps, retries, NewOrder rollbacks, database size, consistency), tpmC per
//! interval with one line per run (the rate-limiter chart when the runs differ by
//! `--rate_limiter_bytes_per_sec`), database size per interval, and the 95th percentile latency
//! of each transaction type per run. Pure function of the loaded runs.

use std::fmt::Write;

use super::oltp_load::OltpRun;
use super::svg::{bar_chart, esc, fmt_num, line_chart, Series};

const KINDS: [(&str, &str); 5] = [
    ("new_order", "NewOrder"),
    ("payment", "Payment"),
    ("order_status", "OrderStatus"),
    ("delivery", "Delivery"),
    ("stock_level", "StockLevel"),
];

fn summary(r: &OltpRun, col: &str) -> Option<f64> {
    r.rows.last()?.get(col)?.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn cell(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.decimals$}"))
}

/// Renders the TPC-C section.
pub fn section(runs: &[OltpRun], h: &mut String) {
    h.push_str(
        "<h2 id=\"tpcc\">TPC-C</h2><table><tr><th class=\"name\">run</th>\
         <th class=\"name\">engine</th><th>warehouses</th><th>threads</th><th>secs</th>\
         <th>rate limiter</th><th class=\"name\">compression (per level / bottommost)</th>\
         <th>tpmC</th><th>tps</th><th>retries</th><th>rollbacks</th><th>DB MiB</th>\
         <th class=\"name\">consistency</th></tr>",
    );
    for r in runs {
        let o = |k: &str| r.options.get(k).cloned().unwrap_or_default();
        let levels = o("compression_per_level");
        let comp = format!(
            "{} / {}",
            if levels.is_empty() { o("compression_type") } else { levels },
            match o("bottommost_compression") {
                b if b.is_empty() => "-".to_string(),
                b => b,
            }
        );
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"name\">{}</td></tr>",
            esc(&r.name),
            esc(&r.engine),
            esc(&o("warehouses")),
            esc(&o("threads")),
            cell(summary(r, "secs"), 0),
            esc(&match r.option_num("rate_limiter_bytes_per_sec").unwrap_or(0.0) {
                x if x > 0.0 => format!("{} MiB/s", fmt_num(x / 1048576.0)),
                _ => "off".to_string(),
            }),
            esc(&comp),
            cell(summary(r, "tpmc"), 0),
            cell(summary(r, "tps"), 1),
            cell(summary(r, "retries"), 0),
            cell(summary(r, "rollbacks"), 0),
            cell(summary(r, "db_bytes").map(|b| b / 1048576.0), 1),
            esc(r.rows.last().and_then(|x| x.get("consistency")).map_or("-", String::as_str))
        );
    }
    h.push_str("</table>\n<div class=\"charts\">");
    let series = |col: &str| -> Vec<Series> {
        runs.iter()
            .map(|r| Series { name: r.name.clone(), points: r.series("run", "elapsed_s", col) })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    h.push_str(&line_chart("TPC-C: tpmC per interval", "seconds", "tpmC", &series("tpmc")));
    h.push_str(&line_chart("TPC-C: database size", "seconds", "MiB", &series("db_mb")));
    // What the engine was doing, on the same time axis (columns a run has only).
    for &(col, what, unit) in super::svg::ENGINE_STATE_CHARTS {
        let s = series(col);
        if !s.is_empty() {
            h.push_str(&line_chart(&format!("TPC-C: {what} per interval"), "seconds", unit, &s));
        }
    }
    let cats: Vec<String> = KINDS.iter().map(|k| k.1.to_string()).collect();
    let p95: Vec<(String, Vec<f64>)> = runs
        .iter()
        .map(|r| {
            let v = KINDS
                .iter()
                .map(|k| summary(r, &format!("p95_ms_{}", k.0)).unwrap_or(0.0))
                .collect();
            (r.name.clone(), v)
        })
        .collect();
    h.push_str(&bar_chart("TPC-C: 95th percentile latency", "ms", &cats, &p95, false));
    h.push_str("</div>\n");
}
