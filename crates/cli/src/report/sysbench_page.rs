//! The sysbench part of the report page: the runs, the reference post's relative summary
//! (tables of avg/median/min/max/stddev per group, one column per run, and horizontal bar
//! charts of each test's ratio per group with a line at 1.0), the absolute throughput per test
//! (a table) and per test the transactions/s per interval (one line per run). Pure
//! function of the loaded runs; every text goes through [`esc`].

use std::fmt::Write;

use super::oltp_load::OltpRun;
use super::svg::{esc, hbar_chart, line_chart, Series};
use crate::sysbench::summary::{relative, STATS};
use crate::sysbench::workloads::{Group, ALL};

fn opt<'a>(r: &'a OltpRun, k: &str) -> &'a str {
    r.options.get(k).map_or("-", String::as_str)
}

/// Test names present in any run, in the canonical order.
fn tests(runs: &[OltpRun]) -> Vec<&'static str> {
    ALL.iter()
        .map(|t| t.name)
        .filter(|n| runs.iter().any(|r| r.num("test", n, "tps").is_some()))
        .collect()
}

/// Renders the sysbench section; `base` is `--base` (default: the first run's engine).
pub fn section(runs: &[OltpRun], base: Option<&str>, h: &mut String) {
    h.push_str(
        "<h2 id=\"sysbench\">sysbench</h2><table><tr><th class=\"name\">run</th>\
         <th class=\"name\">engine</th><th>threads</th><th>tables</th><th>table_size</th>\
         <th>cache_size</th><th class=\"name\">command line</th></tr>",
    );
    for r in runs {
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"name\"><code>{}</code></td></tr>",
            esc(&r.name),
            esc(&r.engine),
            esc(opt(r, "threads")),
            esc(opt(r, "tables")),
            esc(opt(r, "table_size")),
            esc(opt(r, "cache_size")),
            esc(&r.command_line)
        );
    }
    h.push_str("</table>\n");
    let (base, rel) = relative(runs, base);
    let _ = write!(
        h,
        "<h3>Relative throughput (tps / base tps, base: {})</h3><table class=\"relative\">\
         <tr><th class=\"name\"></th>",
        esc(&base)
    );
    for r in &rel {
        let _ = write!(h, "<th>{} <small>vs {}</small></th>", esc(&r.run), esc(&r.base));
    }
    h.push_str("</tr>");
    for g in [Group::Point, Group::Range, Group::Write] {
        for (name, f) in STATS {
            let _ = write!(h, "<tr><td class=\"name\">{}: {name}</td>", esc(g.name()));
            for r in &rel {
                match r.groups.iter().find(|x| x.0 == g) {
                    Some((_, st)) if name == "stddev" => {
                        let _ = write!(h, "<td>{:.3}</td>", f(st));
                    }
                    Some((_, st)) => {
                        let _ = write!(h, "<td>{:.2}</td>", f(st));
                    }
                    None => h.push_str("<td>-</td>"),
                }
            }
            h.push_str("</tr>");
        }
    }
    h.push_str("</table>\n<div class=\"charts\">");
    for g in [Group::Point, Group::Range, Group::Write] {
        let cats: Vec<String> = ALL
            .iter()
            .filter(|t| t.group == g && rel.iter().any(|r| r.ratios.iter().any(|x| x.0 == t.name)))
            .map(|t| t.name.to_string())
            .collect();
        let series: Vec<(String, Vec<f64>)> = rel
            .iter()
            .map(|r| {
                let v = cats
                    .iter()
                    .map(|c| r.ratios.iter().find(|x| &x.0 == c).map_or(0.0, |x| x.2))
                    .collect();
                (format!("{} vs {}", r.run, r.base), v)
            })
            .collect();
        let title = format!("{}: throughput relative to {base}", g.name());
        h.push_str(&hbar_chart(&title, "relative throughput", &cats, &series, Some(1.0)));
    }
    h.push_str(
        "</div>\n<h3>Throughput (transactions/s)</h3><table><tr><th class=\"name\">test</th>",
    );
    let names = tests(runs);
    for r in runs {
        let _ = write!(h, "<th>{}</th>", esc(&r.name));
    }
    h.push_str("</tr>");
    for t in &names {
        let _ = write!(h, "<tr><td class=\"name\">{}</td>", esc(t));
        for r in runs {
            match r.num("test", t, "tps") {
                Some(v) => {
                    let _ = write!(h, "<td>{v:.1}</td>");
                }
                None => h.push_str("<td>-</td>"),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>\n<div class=\"charts\">");
    for t in &names {
        let series: Vec<Series> = runs
            .iter()
            .filter_map(|r| {
                let pts = r.series(t, "elapsed_s", "tps");
                (!pts.is_empty()).then(|| Series { name: r.name.clone(), points: pts })
            })
            .collect();
        if !series.is_empty() {
            h.push_str(&line_chart(&format!("{t}: tps per interval"), "seconds", "tps", &series));
        }
    }
    h.push_str("</div>\n");
}
