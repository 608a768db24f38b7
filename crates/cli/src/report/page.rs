//! Assembles the report page from [`Loaded`] results: one self-contained HTML document (inline
//! CSS and SVG, no scripts, no external resources). All text from the results goes through
//! [`esc`]. Pure function of its input; called by [`super::run`].

use std::fmt::Write;

use super::load::{BenchLog, Loaded, Run};
use super::svg::{bar_chart, esc, fmt_num, line_chart, Series};

const BUCKETS: [(&str, &str); 10] = [
    ("le256us", "≤256µs"),
    ("le1ms", "≤1ms"),
    ("le4ms", "≤4ms"),
    ("le16ms", "≤16ms"),
    ("le64ms", "≤64ms"),
    ("le256ms", "≤256ms"),
    ("le1s", "≤1s"),
    ("le4s", "≤4s"),
    ("le16s", "≤16s"),
    ("gt16s", ">16s"),
];

/// Summary table columns: (csv column, header, scale applied to the value).
const SUMMARY_COLS: [(&str, &str, f64); 18] = [
    ("secs", "secs", 1.0),
    ("inserts", "rows", 1.0),
    ("ips", "ips", 1.0),
    ("qps", "qps", 1.0),
    ("ins_max_us", "ins max ms", 0.001),
    ("q_max_us", "q max ms", 0.001),
    ("reads_per_query", "reads/q", 1.0),
    ("kb_read_per_query", "rKB/q", 1.0),
    ("reads_per_insert", "reads/i", 1.0),
    ("kb_read_per_insert", "rKB/i", 1.0),
    ("point_reads_per_insert", "point reads/i", 1.0),
    ("kb_written_per_insert", "wKB/i", 1.0),
    ("cpu_us_per_op", "CPU µs/op", 1.0),
    ("db_bytes", "DB MB", 1.0 / 1048576.0),
    ("peak_rss_kb", "peak RSS MB", 1.0 / 1024.0),
    ("r_delta_kb", "r-delta MB", 1.0 / 1024.0),
    ("v_delta_kb", "v-delta MB", 1.0 / 1024.0),
    ("deletes", "deleted", 1.0),
];

const CSS: &str = "body{font-family:sans-serif;margin:20px;color:#222}\
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 7px;\
text-align:right;font-size:13px}th{background:#f3f3f3}td.name,th.name{text-align:left}\
.charts{display:flex;flex-wrap:wrap;gap:12px}pre{background:#f7f7f7;padding:8px;font-size:12px;\
overflow-x:auto}code{font-size:12px}td.worse{background:#fbe3e3}td.base{font-style:italic}";

/// Step names in order of first appearance across runs.
fn step_order(runs: &[Run]) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for r in runs {
        for row in &r.steps {
            if let Some(s) = row.get("step") {
                if !steps.contains(s) {
                    steps.push(s.clone());
                }
            }
        }
    }
    steps
}

pub use super::cell::cell;

/// Renders the whole page; `base` is the sysbench summary's base (`--base`).
pub fn render(data: &Loaded, source: &str, base: Option<&str>) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Talus \
         benchmark report</title><style>{CSS}</style></head><body>\n<h1>Talus benchmark \
         report</h1>\n<p>Results from <code>{}</code>: {} ibench run(s), {} db_bench log(s), {} \
         sysbench run(s), {} tpcc run(s), {} regress result(s).</p>\n",
        esc(source),
        data.runs.len(),
        data.logs.len(),
        data.sysbench.len(),
        data.tpcc.len(),
        data.regress.len()
    );
    if !data.sysbench.is_empty() {
        super::sysbench_page::section(&data.sysbench, base, &mut h);
    }
    if !data.tpcc.is_empty() {
        super::tpcc_page::section(&data.tpcc, &mut h);
    }
    if !data.runs.is_empty() {
        super::indexes::section(&data.runs, &mut h);
        runs_section(&data.runs, &mut h);
    }
    if !data.logs.is_empty() {
        logs_section(&data.logs, &mut h);
    }
    for r in &data.regress {
        super::regress::render(r, &mut h);
    }
    if !data.warnings.is_empty() {
        h.push_str("<h2>Skipped input</h2><ul>");
        for w in &data.warnings {
            let _ = write!(h, "<li>{}</li>", esc(w));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</body></html>\n");
    h
}

fn runs_section(runs: &[Run], h: &mut String) {
    h.push_str(
        "<h2>Runs</h2><table><tr><th class=\"name\">run</th><th class=\"name\">engine</th>\
                <th class=\"name\">command line</th><th>l.i1 ips / l.i0 ips</th></tr>",
    );
    for r in runs {
        let ratio = match (r.num("l.i1", "ips"), r.num("l.i0", "ips")) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.3}", a / b),
            _ => "-".into(),
        };
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\"><code>{}\
             </code></td><td>{ratio}</td></tr>",
            esc(&r.name),
            esc(&r.engine),
            esc(&r.command_line)
        );
    }
    h.push_str("</table>\n");
    let steps = step_order(runs);
    h.push_str("<h2>Engine vs engine</h2><div class=\"charts\">");
    for (col, title) in [("ips", "inserts/s by step"), ("qps", "queries/s by step")] {
        let cats: Vec<String> = steps
            .iter()
            .filter(|s| runs.iter().any(|r| r.num(s, col).is_some_and(|v| v > 0.0)))
            .cloned()
            .collect();
        let series: Vec<(String, Vec<f64>)> = runs
            .iter()
            .map(|r| (r.name.clone(), cats.iter().map(|s| r.num(s, col).unwrap_or(0.0)).collect()))
            .collect();
        h.push_str(&bar_chart(title, col, &cats, &series, false));
    }
    h.push_str("</div>\n");
    super::sweep::section(runs, &steps, h);
    for step in &steps {
        step_section(step, runs, h);
    }
}

fn step_section(step: &str, runs: &[Run], h: &mut String) {
    let _ = write!(
        h,
        "<h2 id=\"step-{0}\">Step {0}</h2>\n<table><tr><th class=\"name\">run</th>",
        esc(step)
    );
    for (_, head, _) in SUMMARY_COLS {
        let _ = write!(h, "<th>{}</th>", esc(head));
    }
    h.push_str("</tr>");
    for r in runs.iter().filter(|r| r.step(step).is_some()) {
        let _ = write!(h, "<tr><td class=\"name\">{}</td>", esc(&r.name));
        for (col, _, scale) in SUMMARY_COLS {
            let _ = write!(h, "<td>{}</td>", cell(r.num(step, col).map(|v| v * scale)));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>\n<div class=\"charts\">");
    let has = |col: &str| runs.iter().any(|r| r.num(step, col).is_some_and(|v| v > 0.0));
    let series = |idx: usize| -> Vec<Series> {
        runs.iter()
            .filter_map(|r| {
                let pts = r.intervals.get(step)?;
                Some(Series {
                    name: r.name.clone(),
                    points: pts.iter().map(|p| (p[0], p[idx])).collect(),
                })
            })
            .collect()
    };
    let t = |what: &str| format!("{step}: {what} per interval");
    if has("inserts") {
        h.push_str(&line_chart(&t("inserts/s"), "seconds", "inserts/s", &series(1)));
        // One chart while its legend stays readable, else one chart per run.
        let clients = client_series(runs, step);
        if !clients.is_empty() && clients.len() <= MAX_CLIENT_LINES {
            let title = t("inserts/s of each client and their sum");
            h.push_str(&line_chart(&title, "seconds", "inserts/s", &clients));
        } else if !clients.is_empty() {
            for r in runs {
                let one = client_series(std::slice::from_ref(r), step);
                if !one.is_empty() {
                    let title = t(&format!("inserts/s of each client of {} and their sum", r.name));
                    h.push_str(&line_chart(&title, "seconds", "inserts/s", &one));
                }
            }
        }
        h.push_str(&line_chart(&t("max insert response"), "seconds", "ms", &series(3)));
    }
    if has("deletes") {
        // Only the runs that deleted in this step (the others' lines would lie on the axis).
        let deleting: Vec<Run> = runs
            .iter()
            .filter(|r| r.num(step, "deletes").is_some_and(|d| d > 0.0))
            .cloned()
            .collect();
        let dps = rate_series(&deleting, step, |c| c == "dps", |r, _| r.name.clone());
        if !dps.is_empty() {
            h.push_str(&line_chart(&t("deletes/s"), "seconds", "deletes/s", &dps));
        }
    }
    // What the engine was doing, on the same time axis (columns the runs have only).
    for &(col, what, unit) in super::svg::ENGINE_STATE_CHARTS {
        let state: Vec<Series> = runs
            .iter()
            .filter_map(|r| {
                let points: Vec<(f64, f64)> =
                    r.state.get(step)?.iter().filter(|p| p.1 == col).map(|p| (p.0, p.2)).collect();
                (!points.is_empty()).then(|| Series { name: r.name.clone(), points })
            })
            .collect();
        if !state.is_empty() {
            h.push_str(&line_chart(&t(what), "seconds", unit, &state));
        }
    }
    if has("queries") {
        h.push_str(&line_chart(&t("queries/s"), "seconds", "queries/s", &series(2)));
        h.push_str(&line_chart(&t("max query response"), "seconds", "ms", &series(4)));
    }
    for (prefix, col, what) in [("ins", "inserts", "insert commits"), ("q", "queries", "queries")] {
        if !has(col) {
            continue;
        }
        let cats: Vec<String> = BUCKETS.iter().map(|b| b.1.to_string()).collect();
        let hist: Vec<(String, Vec<f64>)> = runs
            .iter()
            .map(|r| {
                let v = BUCKETS
                    .iter()
                    .map(|b| r.num(step, &format!("{prefix}_{}", b.0)).unwrap_or(0.0))
                    .collect();
                (r.name.clone(), v)
            })
            .collect();
        let title = format!("{step}: {what} by response time (log scale)");
        h.push_str(&bar_chart(&title, "count", &cats, &hist, true));
    }
    h.push_str("</div>\n");
}

/// Most lines in one per-client chart (runs × (clients + sum)); more: a chart per run.
const MAX_CLIENT_LINES: usize = 12;

/// The `(elapsed_s, value)` points of the rate columns `want` picks, one series per run and
/// column, named by `name(run, column)`.
fn rate_series(
    runs: &[Run],
    step: &str,
    want: impl Fn(&str) -> bool,
    name: impl Fn(&Run, &str) -> String,
) -> Vec<Series> {
    let mut out = Vec::new();
    for r in runs {
        let Some(rates) = r.rates.get(step) else { continue };
        let mut cols: Vec<&str> = rates.iter().map(|p| p.1.as_str()).filter(|c| want(c)).collect();
        cols.sort_by_key(|c| (c.len(), *c));
        cols.dedup();
        for col in cols {
            let points = rates.iter().filter(|p| p.1 == col).map(|p| (p.0, p.2)).collect();
            out.push(Series { name: name(r, col), points });
        }
    }
    out
}

/// Each client's inserts/s (`run c0`, `run c1`, ...) and, beside them, their sum (`run sum`)
/// for every run with more than one client; empty if no run has per-client columns.
fn client_series(runs: &[Run], step: &str) -> Vec<Series> {
    let is_client = |c: &str| c.starts_with("ips_c");
    let mut out = Vec::new();
    for r in runs {
        let per = rate_series(std::slice::from_ref(r), step, is_client, |r, c| {
            format!("{} {}", r.name, c.trim_start_matches("ips_"))
        });
        if per.is_empty() {
            continue;
        }
        if per.len() > 1 {
            let sum = r.intervals.get(step).map(|pts| pts.iter().map(|p| (p[0], p[1])).collect());
            out.push(Series { name: format!("{} sum", r.name), points: sum.unwrap_or_default() });
        }
        out.extend(per);
    }
    out
}

fn logs_section(logs: &[BenchLog], h: &mut String) {
    h.push_str("<h2>db_bench</h2>\n");
    let mut benches: Vec<String> = Vec::new();
    for l in logs {
        for b in &l.results {
            if !benches.contains(&b.name) {
                benches.push(b.name.clone());
            }
        }
    }
    let series: Vec<(String, Vec<f64>)> = logs
        .iter()
        .map(|l| {
            let v = benches
                .iter()
                .map(|n| {
                    l.results.iter().rev().find(|b| &b.name == n).map_or(0.0, |b| b.ops_per_sec)
                })
                .collect();
            (l.name.clone(), v)
        })
        .collect();
    h.push_str("<div class=\"charts\">");
    h.push_str(&bar_chart("db_bench ops/sec", "ops/sec", &benches, &series, false));
    h.push_str(
        "</div>\n<table><tr><th class=\"name\">log</th><th class=\"name\">benchmark</th>\
                <th>micros/op</th><th>ops/sec</th></tr>",
    );
    for l in logs {
        for b in &l.results {
            let _ = write!(
                h,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&l.name),
                esc(&b.name),
                cell(Some(b.micros_per_op)),
                esc(&fmt_num(b.ops_per_sec))
            );
        }
    }
    h.push_str("</table>\n");
    for l in logs.iter().filter(|l| !l.compaction_stats.is_empty()) {
        let _ = writeln!(
            h,
            "<h3>Compaction stats: {}</h3><pre class=\"compaction-stats\">{}</pre>",
            esc(&l.name),
            esc(&l.compaction_stats.join("\n"))
        );
    }
}
