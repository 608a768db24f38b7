//! The `bench/regress.py` part of `talus report`: reads a `regress.json` (format
//! `talus-regress/1`, written by `regress.py --out=DIR`) and draws it: the variants with their
//! builds, then per measure (throughput, CPU per operation, instructions per operation) one bar
//! chart per group of microbenchmarks (point / range / write; for the cache suite lru / clock)
//! with one group of bars per variant, each bar a microbenchmark's ratio to the base variant and
//! a line at 1.0; the per-microbenchmark ratio table; post 004's summary table (avg, median,
//! min, max, stddev per group); and peak RSS / VSZ.
//!
//! The numbers are regress.py's: this module computes nothing but layout. The file is untrusted
//! input: a missing or mistyped field becomes "-" or an error naming the file, never a panic.
//! Called by `load` (parse) and `page` (render); no state.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::svg::{esc, ratio_chart};

/// Statistics of one group's ratios.
#[derive(Debug, Clone, Default)]
pub struct GroupStats {
    /// avg, median, min, max, stddev, in that order.
    pub stats: [Option<f64>; 5],
}

const STAT_NAMES: [&str; 5] = ["avg", "median", "min", "max", "stddev"];

/// One measure of one comparison (to the first or to the previous variant).
#[derive(Debug, Clone, Default)]
pub struct Measure {
    /// `ops_sec`, `cpu_us_op` or `instr_op`.
    pub key: String,
    /// Display title.
    pub title: String,
    /// Whether a ratio above 1 is an improvement.
    pub higher_is_better: bool,
    /// `first` or `previous`.
    pub against: String,
    /// Per variant, per microbenchmark: the median value.
    pub values: BTreeMap<String, BTreeMap<String, Option<f64>>>,
    /// Per non-base variant, per microbenchmark: the ratio.
    pub ratios: BTreeMap<String, BTreeMap<String, Option<f64>>>,
    /// Per non-base variant, per group.
    pub groups: BTreeMap<String, BTreeMap<String, GroupStats>>,
    /// Per non-base variant: geometric mean of the ratios.
    pub geomean: BTreeMap<String, Option<f64>>,
    /// Microbenchmarks the first variant lacks (a revision older than the tool), each relative
    /// to the first variant that has it: microbenchmark -> that variant's label.
    pub bases: BTreeMap<String, String>,
}

/// One variant as regress.py built it.
#[derive(Debug, Clone, Default)]
pub struct Variant {
    /// Label (column name).
    pub label: String,
    /// The spec given (`rev:profile:features:rustflags` or `@PATH`).
    pub spec: String,
    /// The commit built and its subject.
    pub commit: String,
    /// db_bench's build line (profile, target-cpu, allocator).
    pub build_info: String,
}

/// Peak RSS and peak VSZ in MB.
pub type Memory = (Option<f64>, Option<f64>);

/// One regress.json.
#[derive(Debug, Clone, Default)]
pub struct Regress {
    /// The folder's path under the results dir.
    pub name: String,
    /// One line on how it was run (suite, sizes, rounds, counter, load).
    pub setup: String,
    /// regress.py's command line.
    pub command_line: String,
    /// Variants in order; the first is the base.
    pub variants: Vec<Variant>,
    /// (microbenchmark, group) in suite order.
    pub benchmarks: Vec<(String, String)>,
    /// Measures against the first variant, then against the previous one.
    pub measures: Vec<Measure>,
    /// Per variant, per microbenchmark: (peak RSS MB, peak VSZ MB).
    pub memory: BTreeMap<String, BTreeMap<String, Memory>>,
    /// What regress.py reported as failed.
    pub errors: Vec<String>,
    /// Flag threshold in percent.
    pub flag_pct: f64,
}

fn s(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// label -> bench -> number, from an object of objects.
fn table(v: Option<&Value>) -> BTreeMap<String, BTreeMap<String, Option<f64>>> {
    let mut out = BTreeMap::new();
    for (l, row) in v.and_then(Value::as_object).into_iter().flatten() {
        let r = row.as_object().into_iter().flatten().map(|(b, x)| (b.clone(), num(Some(x))));
        out.insert(l.clone(), r.collect());
    }
    out
}

fn measure(key: &str, against: &str, m: &Value) -> Measure {
    let mut groups = BTreeMap::new();
    for (l, gs) in m.get("groups").and_then(Value::as_object).into_iter().flatten() {
        let mut per = BTreeMap::new();
        for (g, st) in gs.as_object().into_iter().flatten() {
            per.insert(g.clone(), GroupStats { stats: STAT_NAMES.map(|n| num(st.get(n))) });
        }
        groups.insert(l.clone(), per);
    }
    let geomean = m
        .get("geomean")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(l, x)| (l.clone(), num(Some(x))))
        .collect();
    let bases = m
        .get("bases")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(b, l)| l.as_str().map(|l| (b.clone(), l.to_string())))
        .collect();
    Measure {
        key: key.to_string(),
        title: s(m, "title"),
        higher_is_better: m.get("higher_is_better").and_then(Value::as_bool).unwrap_or(true),
        against: against.to_string(),
        values: table(m.get("values")),
        ratios: table(m.get("ratios")),
        groups,
        geomean,
        bases,
    }
}

/// Parses regress.json's text; `name` is its folder's path under the results dir.
pub fn parse(name: &str, text: &str) -> Result<Regress, String> {
    let j: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if j.get("format").and_then(Value::as_str) != Some("talus-regress/1") {
        return Err("not a talus-regress/1 file".into());
    }
    let variants: Vec<Variant> = j
        .get("variants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| {
            let sha = s(v, "sha");
            let short = sha.get(..10).unwrap_or(&sha);
            Variant {
                label: s(v, "label"),
                spec: s(v, "spec"),
                commit: format!("{short} {}", s(v, "subject")).trim().to_string(),
                build_info: s(v, "build_info"),
            }
        })
        .collect();
    if variants.is_empty() {
        return Err("no variants".into());
    }
    let benchmarks = j
        .get("benchmarks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|b| (s(b, "name"), s(b, "group")))
        .collect();
    let summary = j.get("summary");
    let mut measures = Vec::new();
    for against in ["first", "previous"] {
        let Some(ms) = summary.and_then(|x| x.get(against)) else { continue };
        for key in ["ops_sec", "cpu_us_op", "instr_op"] {
            if let Some(m) = ms.get(key) {
                measures.push(measure(key, against, m));
            }
        }
    }
    let mut memory = BTreeMap::new();
    for (l, per) in
        summary.and_then(|x| x.get("memory")).and_then(Value::as_object).into_iter().flatten()
    {
        let row = per
            .as_object()
            .into_iter()
            .flatten()
            .map(|(b, m)| (b.clone(), (num(m.get("rss_mb")), num(m.get("vsz_mb")))))
            .collect();
        memory.insert(l.clone(), row);
    }
    let load = |k: &str| {
        j.get(k).and_then(Value::as_array).map_or("-".into(), |a| {
            a.iter()
                .filter_map(Value::as_f64)
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    let setup = format!(
        "suite {}, --num={}, {} round(s), instructions by {} at --num={}; load average {} at \
         start, {} at end on {} CPUs; {} s",
        s(&j, "suite"),
        s(&j, "num"),
        s(&j, "rounds"),
        s(&j, "count"),
        s(&j, "count_num"),
        load("loadavg_start"),
        load("loadavg_end"),
        s(&j, "cpus"),
        s(&j, "seconds")
    );
    let command_line = j
        .get("command_line")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let errors = j
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    let flag_pct = num(j.get("flag_pct")).unwrap_or(2.0);
    Ok(Regress {
        name: name.to_string(),
        setup,
        command_line,
        variants,
        benchmarks,
        measures,
        memory,
        errors,
        flag_pct,
    })
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Renders one regress.json as a page section.
pub fn render(r: &Regress, h: &mut String) {
    let _ = write!(
        h,
        "<h2 class=\"regress\">Regression tracking: {}</h2>\n<p>{}</p><p><code>{}</code></p>\n\
         <table><tr><th class=\"name\">variant</th><th class=\"name\">spec</th><th \
         class=\"name\">commit</th><th class=\"name\">build</th></tr>",
        esc(&r.name),
        esc(&r.setup),
        esc(&r.command_line)
    );
    for v in &r.variants {
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\"><code>{}</code></td><td \
             class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
            esc(&v.label),
            esc(&v.spec),
            esc(&v.commit),
            esc(&v.build_info)
        );
    }
    h.push_str("</table>\n");
    let mut groups: Vec<&str> = Vec::new();
    for (_, g) in &r.benchmarks {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    for m in &r.measures {
        measure_section(r, m, &groups, h);
    }
    memory_table(r, h);
    if !r.errors.is_empty() {
        h.push_str("<h3>Failed steps</h3><ul>");
        for e in &r.errors {
            let _ = write!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul>\n");
    }
}

fn measure_section(r: &Regress, m: &Measure, groups: &[&str], h: &mut String) {
    let labels: Vec<&str> = r.variants.iter().map(|v| v.label.as_str()).collect();
    let Some(base) = labels.first() else { return };
    let others = &labels[1..];
    let against =
        if m.against == "first" { base.to_string() } else { "the previous variant".into() };
    let better = if m.higher_is_better { "higher" } else { "lower" };
    let _ = write!(
        h,
        "<h3 class=\"measure\" data-measure=\"{}\" data-against=\"{}\">{}, relative to {} \
         ({better} is better)</h3>\n<div class=\"charts\">",
        esc(&m.key),
        esc(&m.against),
        esc(&m.title),
        esc(&against)
    );
    for g in groups {
        let benches: Vec<&String> =
            r.benchmarks.iter().filter(|(_, bg)| bg == g).map(|(b, _)| b).collect();
        let cats: Vec<String> = others.iter().map(|l| l.to_string()).collect();
        let series: Vec<(String, Vec<f64>)> = benches
            .iter()
            .map(|b| {
                let vals = others
                    .iter()
                    .map(|l| m.ratios.get(*l).and_then(|x| x.get(*b)).copied().flatten())
                    .map(|x| x.unwrap_or(0.0))
                    .collect();
                (b.to_string(), vals)
            })
            .collect();
        let title = format!("{g}: {} / {against}", m.key);
        h.push_str(&ratio_chart(&title, &cats, &series));
    }
    h.push_str(
        "</div>\n<table class=\"ratios\"><tr><th class=\"name\">microbenchmark</th>\
                <th class=\"name\">group</th>",
    );
    let _ = write!(h, "<th>{}</th>", esc(base));
    for l in others {
        let _ = write!(h, "<th>{}</th>", esc(l));
    }
    h.push_str("</tr>");
    let flag = r.flag_pct / 100.0;
    for (b, g) in &r.benchmarks {
        let value = |l: &str| {
            let v = m.values.get(l).and_then(|x| x.get(b)).copied().flatten();
            cell(v, if v.is_some_and(|x| x < 100.0) { 3 } else { 0 })
        };
        let own_base = m.bases.get(b).filter(|_| m.against == "first");
        let note = own_base.map_or(String::new(), |l| format!(" (vs {})", esc(l)));
        let _ = write!(
            h,
            "<tr><td class=\"name\">{}{note}</td><td class=\"name\">{}</td><td>{}</td>",
            esc(b),
            esc(g),
            value(base)
        );
        for l in others {
            if own_base.is_some_and(|x| x == l) {
                // The variant this line is relative to: its value, not a ratio.
                let _ = write!(h, "<td class=\"base\">{}</td>", value(l));
                continue;
            }
            let x = m.ratios.get(*l).and_then(|x| x.get(b)).copied().flatten();
            let worse =
                x.is_some_and(|x| if m.higher_is_better { x < 1.0 - flag } else { x > 1.0 + flag });
            let style = if worse { " class=\"worse\"" } else { "" };
            let _ = write!(h, "<td{style}>{}</td>", cell(x, 3));
        }
        h.push_str("</tr>");
    }
    h.push_str("<tr><td class=\"name\">geomean</td><td></td><td></td>");
    for l in others {
        let _ = write!(h, "<td>{}</td>", cell(m.geomean.get(*l).copied().flatten(), 3));
    }
    h.push_str("</tr></table>\n<table class=\"summary\"><tr><th class=\"name\"></th>");
    for l in others {
        let _ = write!(h, "<th>{}</th>", esc(l));
    }
    h.push_str("</tr>");
    for g in groups {
        for (i, stat) in STAT_NAMES.iter().enumerate() {
            let mut cap = g.to_string();
            if let Some(c) = cap.get_mut(..1) {
                c.make_ascii_uppercase();
            }
            let _ = write!(h, "<tr><td class=\"name\">{}: {stat}</td>", esc(&cap));
            for l in others {
                let v = m.groups.get(*l).and_then(|x| x.get(*g)).and_then(|s| s.stats[i]);
                let _ = write!(h, "<td>{}</td>", cell(v, if *stat == "stddev" { 3 } else { 2 }));
            }
            h.push_str("</tr>");
        }
    }
    h.push_str("</table>\n");
}

fn memory_table(r: &Regress, h: &mut String) {
    if r.memory.is_empty() {
        return;
    }
    h.push_str(
        "<h3>Peak RSS / peak VSZ (MB, median over rounds)</h3><table><tr><th \
                class=\"name\">microbenchmark</th>",
    );
    for v in &r.variants {
        let _ = write!(h, "<th>{}</th>", esc(&v.label));
    }
    h.push_str("</tr>");
    for (b, _) in &r.benchmarks {
        let _ = write!(h, "<tr><td class=\"name\">{}</td>", esc(b));
        for v in &r.variants {
            let (rss, vsz) =
                r.memory.get(&v.label).and_then(|m| m.get(b)).copied().unwrap_or_default();
            let _ = write!(h, "<td>{} / {}</td>", cell(rss, 0), cell(vsz, 0));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"format":"talus-regress/1","suite":"cached","num":1000,"rounds":1,
      "count":"none","count_num":1000,"flag_pct":2,"cpus":2,"seconds":3,
      "variants":[{"label":"a","spec":"@x","sha":"","subject":"","build_info":"profile release"},
                  {"label":"b<","spec":".:release-lto","sha":"0123456789abcdef","subject":"s",
                   "build_info":""}],
      "benchmarks":[{"name":"fillseq","group":"write"},{"name":"readrandom","group":"point"}],
      "summary":{"first":{"cpu_us_op":{"title":"CPU","higher_is_better":false,
        "values":{"a":{"fillseq":2.0,"readrandom":1.0},"b<":{"fillseq":2.2,"readrandom":null}},
        "ratios":{"b<":{"fillseq":1.1,"readrandom":null}},
        "groups":{"b<":{"write":{"avg":1.1,"median":1.1,"min":1.1,"max":1.1,"stddev":0,"n":1}}},
        "geomean":{"b<":1.1}}},
        "memory":{"a":{"fillseq":{"rss_mb":10.0,"vsz_mb":20.0}}}}}"#;

    #[test]
    fn parses_and_renders_with_missing_values() {
        let r = parse("res", DOC).unwrap();
        assert_eq!(r.variants.len(), 2);
        assert_eq!(r.variants[1].commit, "0123456789 s");
        assert_eq!(r.measures.len(), 1);
        let m = &r.measures[0];
        assert!(!m.higher_is_better);
        assert_eq!(m.ratios["b<"]["fillseq"], Some(1.1));
        assert_eq!(m.ratios["b<"]["readrandom"], None);
        let mut h = String::new();
        render(&r, &mut h);
        assert!(h.contains("b&lt;") && !h.contains("b<"), "labels escaped");
        assert!(h.contains("<td class=\"worse\">1.100</td>"), "10% more CPU is flagged: {h}");
        assert!(h.contains("Write: median</td><td>1.10</td>"));
        assert!(h.contains("<td>10 / 20</td>") && h.contains("<td>- / -</td>"));
        assert_eq!(h.matches("data-kind=\"bar\"").count(), 2, "one chart per group");
    }

    #[test]
    fn a_line_the_first_variant_lacks_names_its_base() {
        // h1 predates ibench: h3's ratio is to h2, whose cell shows its value.
        let doc = r#"{"format":"talus-regress/1",
          "variants":[{"label":"h1"},{"label":"h2"},{"label":"h3"}],
          "benchmarks":[{"name":"ib","group":"write"}],
          "summary":{"first":{"instr_op":{"title":"I","higher_is_better":false,
            "values":{"h1":{"ib":null},"h2":{"ib":9000.0},"h3":{"ib":9900.0}},
            "ratios":{"h2":{"ib":null},"h3":{"ib":1.1}},
            "groups":{},"geomean":{},"bases":{"ib":"h2"}}}}}"#;
        let r = parse("res", doc).unwrap();
        assert_eq!(r.measures[0].bases["ib"], "h2");
        let mut h = String::new();
        render(&r, &mut h);
        assert!(h.contains("ib (vs h2)</td>"), "{h}");
        assert!(
            h.contains("<td>-</td><td class=\"base\">9000</td><td class=\"worse\">1.100</td>"),
            "{h}"
        );
    }

    #[test]
    fn rejects_other_json() {
        assert!(parse("x", "{}").is_err());
        assert!(parse("x", "not json").is_err());
        assert!(parse("x", r#"{"format":"talus-regress/1","variants":[]}"#).is_err());
    }
}
