//! The reference post's summary across runs: for each microbenchmark the throughput of a run
//! relative to a base run (`tps / base tps`: above 1 is better than the base), and per group
//! (point, range, write) the average, median, min, max and standard deviation of those ratios;
//! the same for CPU per query ([`CPU_PER_QUERY`]: `cpu_us_per_query / base`, below 1 is
//! better), the measure post 004 explains its regressions with.
//!
//! Pure functions of loaded runs ([`OltpRun`], from `--results` folders), used by `talus report`
//! (HTML) and `talus sysbench summary` (text). The base of a run is the base run (name or
//! engine equal to `--base`; default: the first run's engine) with the same thread count, or
//! the first base run if none has it.

use std::fmt::Write;

use super::workloads::{group_of, Group};
use crate::report::oltp_load::OltpRun;

/// Statistics of a group's ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupStats {
    /// Ratios in the group.
    pub n: usize,
    /// Mean.
    pub avg: f64,
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Population standard deviation.
    pub stddev: f64,
}

/// Reads one statistic of a group.
pub type StatFn = fn(&GroupStats) -> f64;

/// The statistics the post prints per group, in its order.
pub const STATS: [(&str, StatFn); 5] = [
    ("avg", |s| s.avg),
    ("median", |s| s.median),
    ("min", |s| s.min),
    ("max", |s| s.max),
    ("stddev", |s| s.stddev),
];

/// One run compared with its base.
#[derive(Debug, Clone)]
pub struct Relative {
    /// The run.
    pub run: String,
    /// Its base run.
    pub base: String,
    /// Per test (in the run's order): name, group, ratio.
    pub ratios: Vec<(String, Group, f64)>,
    /// Per group that has ratios.
    pub groups: Vec<(Group, GroupStats)>,
}

/// The statistics of `v` (None if empty).
pub fn stats(v: &[f64]) -> Option<GroupStats> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let avg = s.iter().sum::<f64>() / n as f64;
    let median = if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 };
    let var = s.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n as f64;
    Some(GroupStats { n, avg, median, min: s[0], max: s[n - 1], stddev: var.sqrt() })
}

/// A `summary.csv` column compared across runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    /// The column.
    pub column: &'static str,
    /// The table's title.
    pub title: &'static str,
}

/// Throughput (higher is better).
pub const THROUGHPUT: Measure =
    Measure { column: "tps", title: "Throughput relative to the base (tps / base tps" };
/// The whole process's CPU per query (lower is better).
pub const CPU_PER_QUERY: Measure = Measure {
    column: "cpu_us_per_query",
    title: "CPU per query relative to the base (process user+sys µs/query / base; lower is \
            better",
};

fn is_base(r: &OltpRun, base: &str) -> bool {
    r.name == base || r.engine == base
}

/// Every non-base run's throughput relative to its base; `base` defaults to the first run's
/// engine.
pub fn relative(runs: &[OltpRun], base: Option<&str>) -> (String, Vec<Relative>) {
    relative_by(runs, base, THROUGHPUT)
}

/// Every non-base run's `m` relative to its base (tests without the column in both runs, as
/// results written before it existed, are left out).
pub fn relative_by(runs: &[OltpRun], base: Option<&str>, m: Measure) -> (String, Vec<Relative>) {
    let base = base
        .map(str::to_string)
        .unwrap_or_else(|| runs.first().map(|r| r.engine.clone()).unwrap_or_default());
    let bases: Vec<&OltpRun> = runs.iter().filter(|r| is_base(r, &base)).collect();
    let mut out = Vec::new();
    for r in runs.iter().filter(|r| !is_base(r, &base)) {
        let threads = r.option_num("threads");
        let Some(b) = bases.iter().find(|b| b.option_num("threads") == threads).or(bases.first())
        else {
            continue;
        };
        let mut ratios = Vec::new();
        for row in &r.rows {
            let Some(test) = row.get("test") else { continue };
            let Some(group) = group_of(test) else { continue };
            if let (Some(a), Some(bt)) =
                (r.num("test", test, m.column), b.num("test", test, m.column))
            {
                if bt > 0.0 && !ratios.iter().any(|(t, _, _)| t == test) {
                    ratios.push((test.clone(), group, a / bt));
                }
            }
        }
        let groups = [Group::Point, Group::Range, Group::Write]
            .into_iter()
            .filter_map(|g| {
                let v: Vec<f64> = ratios.iter().filter(|x| x.1 == g).map(|x| x.2).collect();
                Some((g, stats(&v)?))
            })
            .collect();
        out.push(Relative { run: r.name.clone(), base: b.name.clone(), ratios, groups });
    }
    (base, out)
}

/// The post's tables as text for measure `m`: per group avg/median/min/max/stddev, one column
/// per run, then each test's ratio.
pub fn text_of(m: Measure, base: &str, rel: &[Relative]) -> String {
    let mut s = String::new();
    if rel.iter().all(|r| r.ratios.is_empty()) {
        let _ = writeln!(s, "{}): no runs to compare with base {base:?}", m.title);
        return s;
    }
    let _ = writeln!(s, "{}; base: {base})\n", m.title);
    let w = rel.iter().map(|r| r.run.len()).max().unwrap_or(8).max(8);
    let _ = write!(s, "{:<16}", "");
    for r in rel {
        let _ = write!(s, "  {:>w$}", r.run);
    }
    s.push('\n');
    for g in [Group::Point, Group::Range, Group::Write] {
        let name = match g {
            Group::Point => "Point",
            Group::Range => "Range",
            Group::Write => "Write",
        };
        for (stat, f) in STATS {
            let _ = write!(s, "{:<16}", format!("{name}: {stat}"));
            for r in rel {
                match r.groups.iter().find(|x| x.0 == g) {
                    Some((_, st)) if stat == "stddev" => {
                        let _ = write!(s, "  {:>w$.3}", f(st));
                    }
                    Some((_, st)) => {
                        let _ = write!(s, "  {:>w$.2}", f(st));
                    }
                    None => {
                        let _ = write!(s, "  {:>w$}", "-");
                    }
                }
            }
            s.push('\n');
        }
    }
    let _ = writeln!(s, "\nPer test (base run in parentheses):");
    for r in rel {
        let _ = writeln!(s, "{} (vs {})", r.run, r.base);
        for (t, g, x) in &r.ratios {
            let _ = writeln!(s, "  {:<32} {:<6} {x:.2}", t, g.name());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn run(name: &str, engine: &str, threads: u32, tps: &[(&str, f64)]) -> OltpRun {
        let mut o = OltpRun { name: name.into(), engine: engine.into(), ..Default::default() };
        o.options.insert("threads".into(), threads.to_string());
        for (t, v) in tps {
            let mut row = BTreeMap::new();
            row.insert("test".to_string(), t.to_string());
            row.insert("tps".to_string(), v.to_string());
            o.rows.push(row);
        }
        o
    }

    #[test]
    fn ratios_and_group_statistics() {
        let st = stats(&[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((st.avg, st.median, st.min, st.max), (2.5, 2.5, 1.0, 4.0));
        assert!((st.stddev - 1.25f64.sqrt()).abs() < 1e-12);
        assert!(stats(&[]).is_none());
        let runs = vec![
            run("s1", "sqlite", 1, &[("point-query", 100.0), ("scan", 10.0), ("insert", 50.0)]),
            run("s2", "sqlite", 2, &[("point-query", 200.0)]),
            run("t1", "talus", 1, &[("point-query", 150.0), ("scan", 5.0), ("insert", 100.0)]),
            run("t2", "talus", 2, &[("point-query", 100.0), ("nosuch", 1.0)]),
        ];
        let (base, rel) = relative(&runs, Some("sqlite"));
        assert_eq!(base, "sqlite");
        assert_eq!(rel.len(), 2);
        assert_eq!(rel[0].base, "s1");
        assert_eq!(rel[0].ratios.len(), 3);
        assert_eq!(rel[0].groups.iter().find(|g| g.0 == Group::Write).unwrap().1.avg, 2.0);
        assert_eq!(rel[1].base, "s2", "same thread count");
        assert_eq!(rel[1].ratios, vec![("point-query".to_string(), Group::Point, 0.5)]);
        let t = text_of(THROUGHPUT, &base, &rel);
        assert!(t.contains("Point: median") && t.contains("1.50") && t.contains("0.50"), "{t}");
        // Default base: the first run's engine.
        assert_eq!(relative(&runs, None).0, "sqlite");
    }

    #[test]
    fn cpu_per_query_is_compared_where_both_runs_have_it() {
        let mut a = run("a", "talus", 1, &[("point-query", 100.0), ("insert", 10.0)]);
        let mut b = run("b", "talus", 1, &[("point-query", 100.0), ("insert", 10.0)]);
        for (r, cpu) in [(&mut a, ["20", "50"]), (&mut b, ["25", ""])] {
            for (row, c) in r.rows.iter_mut().zip(cpu) {
                row.insert("cpu_us_per_query".into(), c.into());
            }
        }
        let (base, rel) = relative_by(&[a, b], Some("a"), CPU_PER_QUERY);
        assert_eq!(rel[0].ratios, vec![("point-query".to_string(), Group::Point, 1.25)]);
        let t = text_of(CPU_PER_QUERY, &base, &rel);
        assert!(t.starts_with("CPU per query relative") && t.contains("1.25"), "{t}");
        let none = text_of(CPU_PER_QUERY, &base, &[]);
        assert!(none.contains("no runs to compare"), "{none}");
    }
}
