//! Post 003's view of the insert benchmark: the rate of the measured insert step by number of
//! secondary indexes, per engine. Runs are grouped by engine (a run with `unique_index` as its
//! own row, `<engine> unique`: the first index UNIQUE, so every insert reads) and
//! `secondary_indexes` (from run.json's options; runs without it are left out); the step is
//! `l.i1` (inserts with index maintenance). Renders, when at least one engine has runs for two
//! or more index counts:
//! - the post's table: per engine, for 0..3 indexes, `ipsAvg-ipsP95-dbSize-rssSize` (sizes in
//!   MB at this scale, the post's in GB), and the share of the 0-index rate;
//! - its iostat table: device reads, KB read and KB written per insert, CPU µs per insert, and
//!   the page cache the files held (when measured);
//! - a bar chart of inserts/s by index count, one bar per engine.
//!
//! Pure function of the loaded runs; called by `page::render`.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::cell::cell;
use super::load::Run;
use super::svg::{bar_chart, esc};

/// The measured step.
const STEP: &str = "l.i1";

/// engine → index count → run.
fn group(runs: &[Run]) -> BTreeMap<String, BTreeMap<usize, &Run>> {
    let mut out: BTreeMap<String, BTreeMap<usize, &Run>> = BTreeMap::new();
    for r in runs {
        let Some(n) = r.options.get("secondary_indexes").and_then(|v| v.parse().ok()) else {
            continue;
        };
        if r.step(STEP).is_some() {
            let unique = r.options.get("unique_index").is_some_and(|v| v == "true");
            let name = if unique { format!("{} unique", r.engine) } else { r.engine.clone() };
            out.entry(name).or_default().insert(n, r);
        }
    }
    out
}

fn mb(r: &Run, col: &str, scale: f64) -> String {
    match r.num(STEP, col) {
        Some(v) => format!("{:.0}m", v * scale),
        None => "-".into(),
    }
}

/// Appends the section if there is something to compare.
pub fn section(runs: &[Run], h: &mut String) {
    let groups = group(runs);
    if !groups.values().any(|g| g.len() >= 2) {
        return;
    }
    let counts: Vec<usize> = {
        let mut c: Vec<usize> = groups.values().flat_map(|g| g.keys().copied()).collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    let label = |n: usize| match n {
        0 => "PK-only".to_string(),
        1 => "PK, 1 secondary".to_string(),
        n => format!("PK, {n} secondaries"),
    };
    h.push_str(
        "<h2 id=\"by-indexes\">Insert rate by secondary indexes (post 003)</h2>\n<p>Step \
         <code>l.i1</code>. Each cell: ipsAvg-ipsP95-dbSize-rssSize (inserts/s on average, the \
         rate 95% of the 10-second windows reached, or ? for a step shorter than one window, \
         database and process size at the end of the step in MB); below it the rate as a share \
         of the engine's PK-only rate.</p>\n\
         <table class=\"by-indexes\"><tr><th class=\"name\">engine</th>",
    );
    for &n in &counts {
        let _ = write!(h, "<th>{}</th>", esc(&label(n)));
    }
    h.push_str("</tr>");
    for (engine, g) in &groups {
        let base = g.get(&0).and_then(|r| r.num(STEP, "ips"));
        let _ = write!(h, "<tr><td class=\"name\">{}</td>", esc(engine));
        for n in &counts {
            match g.get(n) {
                Some(r) => {
                    let ips = r.num(STEP, "ips");
                    let rss =
                        if r.num(STEP, "rss_kb").is_some() { "rss_kb" } else { "peak_rss_kb" };
                    let share = match (ips, base) {
                        (Some(a), Some(b)) if b > 0.0 => format!("{:.0}%", 100.0 * a / b),
                        _ => "-".into(),
                    };
                    let _ = write!(
                        h,
                        "<td>{}-{}-{}-{}<br><small>{share}</small></td>",
                        cell(ips),
                        r.num(STEP, "ips_p95").map_or("?".into(), |v| cell(Some(v))),
                        mb(r, "db_bytes", 1.0 / 1048576.0),
                        mb(r, rss, 1.0 / 1024.0)
                    );
                }
                None => h.push_str("<td>-</td>"),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str(
        "</table>\n<p>IO per insert (the post's iostat table): device reads (talus with direct \
         IO: the reads it issued; otherwise read_bytes / 4 KiB), KB read and written from \
         /proc/self/io, CPU (user + system, every thread) per insert, the read syscalls, and the \
         most page cache the database files held (sampled before each drop).</p>\n\
         <table class=\"by-indexes-io\"><tr><th class=\"name\">engine</th><th>#indexes</th>\
         <th>ips</th><th>r/i</th><th>rKB/i</th><th>wKB/i</th><th>CPU µs/i</th>\
         <th>read syscalls/i</th><th>page cache max MB</th></tr>",
    );
    for (engine, g) in &groups {
        for (n, r) in g {
            let _ = write!(
                h,
                "<tr><td class=\"name\">{}</td><td>{n}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(engine),
                cell(r.num(STEP, "ips")),
                cell(r.num(STEP, "dev_reads_per_insert")),
                cell(r.num(STEP, "kb_read_per_insert")),
                cell(r.num(STEP, "kb_written_per_insert")),
                cell(r.num(STEP, "cpu_us_per_op")),
                cell(r.num(STEP, "reads_per_insert")),
                cell(r.num(STEP, "page_cache_max_kb").map(|k| k / 1024.0)),
            );
        }
    }
    h.push_str("</table>\n<div class=\"charts\">");
    let cats: Vec<String> = counts.iter().map(|n| n.to_string()).collect();
    let series: Vec<(String, Vec<f64>)> = groups
        .iter()
        .map(|(e, g)| {
            let v = counts.iter().map(|n| g.get(n).and_then(|r| r.num(STEP, "ips")).unwrap_or(0.0));
            (e.clone(), v.collect())
        })
        .collect();
    h.push_str(&bar_chart(
        "l.i1 inserts/s by secondary indexes",
        "inserts/s",
        &cats,
        &series,
        false,
    ));
    h.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &str, n: usize, ips: f64) -> Run {
        let mut row = BTreeMap::new();
        for (k, v) in [
            ("step", STEP.to_string()),
            ("ips", ips.to_string()),
            ("ips_p95", (ips * 0.8).to_string()),
            ("db_bytes", (300u64 << 20).to_string()),
            ("rss_kb", "51200".to_string()),
            ("dev_reads_per_insert", "0.002".to_string()),
        ] {
            row.insert(k.to_string(), v);
        }
        let mut options = BTreeMap::new();
        options.insert("secondary_indexes".to_string(), n.to_string());
        Run {
            name: format!("{engine}-{n}"),
            engine: engine.into(),
            options,
            steps: vec![row],
            ..Run::default()
        }
    }

    #[test]
    fn the_post_table_and_chart() {
        let runs: Vec<Run> = (0..4)
            .map(|n| run("talus", n, 1000.0 - 100.0 * n as f64))
            .chain((0..4).map(|n| run("sqlite", n, 900.0 / (1 + 3 * n) as f64)))
            .collect();
        let mut h = String::new();
        section(&runs, &mut h);
        assert!(h.contains("<th>PK, 3 secondaries</th>"), "{h}");
        assert!(h.contains("<td>700-560-300m-50m<br><small>70%</small></td>"), "{h}");
        assert!(h.contains("<td>90-72-300m-50m<br><small>10%</small></td>"), "{h}");
        assert_eq!(h.matches("<rect class=\"bar\"").count(), 8);
        assert!(h.contains("data-series=\"sqlite\""));
        // A unique-index run is a row of its own.
        let mut u = run("talus", 3, 300.0);
        u.options.insert("unique_index".into(), "true".into());
        let mut with_unique = runs.clone();
        with_unique.push(u);
        let mut h = String::new();
        section(&with_unique, &mut h);
        assert!(h.contains("<td class=\"name\">talus unique</td>"), "{h}");
        assert!(h.contains("<th>CPU µs/i</th>"), "{h}");
        // One run per engine: nothing to compare.
        let mut h = String::new();
        section(&runs[..1], &mut h);
        assert!(h.is_empty());
    }
}
