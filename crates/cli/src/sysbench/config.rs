//! `talus sysbench` flags: sysbench's names (`--tables`, `--table_size`, `--threads`, `--time`,
//! `--report_interval`, `--range_size`, `--point_selects`, ...; `--table-size` with dashes is
//! the same flag), the engine options of [`crate::oltp::engine_opts`], then the test names and
//! the command (`prepare`, `run`, `check`, `summary`). Everything is checked before `--db` is
//! touched; an error names the flag.

use std::path::PathBuf;

use crate::oltp::engine_opts::EngineOpts;
use crate::options::{Parsed, Spec};

use super::dist::Dist;
use super::workloads::{resolve, Test};

pub use crate::oltp::EngineKind;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Create and load the tables, then build the secondary indexes.
    Prepare,
    /// Run the tests, one after another.
    Run,
    /// Check every table against its secondary index (and the engine's own check).
    Check,
    /// Make everything written durable in the engine's files and compact them (Talus: flush
    /// the memtable, compact every level; SQLite: checkpoint the WAL), so the next process
    /// replays no log and finds no compaction pending.
    Flush,
    /// Print the relative summary of the runs under `--results`.
    Summary,
}

/// A test-only fault: a transaction that breaks the workload's invariants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `read-write` deletes a row and does not insert it back (the row count drops).
    ReadWriteSkipsInsert,
}

/// Everything `talus sysbench` was asked to do.
#[derive(Debug, Clone)]
pub struct Config {
    /// Engine under test.
    pub engine: EngineKind,
    /// Database directory.
    pub db: PathBuf,
    /// The command.
    pub command: Command,
    /// Tests to run, in order.
    pub tests: Vec<Test>,
    /// Tables `sbtest1..=N`.
    pub tables: usize,
    /// Rows per table.
    pub table_size: u64,
    /// Client threads.
    pub threads: usize,
    /// Seconds per test (0: no time limit; `events` ends each test).
    pub time: f64,
    /// Events per test over all threads (0: no limit; `time` ends each test).
    pub events: u64,
    /// `--rand_type`: the distribution of ids, range starts and `k` values.
    pub dist: Dist,
    /// The zipfian distribution of `--rand_zipfian_exp` (update-zipf's ids).
    pub zipf: Dist,
    /// Seconds between interval lines (0: none).
    pub report_interval: f64,
    /// Seconds each test runs unmeasured first (sysbench's `--warmup-time`).
    pub warmup_time: f64,
    /// Before the first test, every thread reads every table once (warm caches).
    pub prewarm: bool,
    /// Rows per range query of the transactional tests.
    pub range_size: u64,
    /// Point selects per transaction.
    pub point_selects: u32,
    /// Each range query kind per transaction.
    pub simple_ranges: u32,
    /// SUM ranges per transaction.
    pub sum_ranges: u32,
    /// ORDER BY ranges per transaction.
    pub order_ranges: u32,
    /// DISTINCT ranges per transaction.
    pub distinct_ranges: u32,
    /// Index updates per transaction.
    pub index_updates: u32,
    /// Non-index updates per transaction.
    pub non_index_updates: u32,
    /// Delete + insert pairs per transaction.
    pub delete_inserts: u32,
    /// Whether the range queries run at all.
    pub range_selects: bool,
    /// No BEGIN/COMMIT around the read-only and read-write statements.
    pub skip_trx: bool,
    /// Values in the IN list of the random-points tests.
    pub random_points: usize,
    /// Rows the hot-points test draws its IN list from.
    pub hot_points: u64,
    /// Seed (0: from the clock).
    pub seed: u64,
    /// Where to write results.
    pub results: Option<PathBuf>,
    /// `check`: rows each table must have.
    pub expect_rows: Option<u64>,
    /// `summary`: the base runs (name or engine).
    pub base: Option<String>,
    /// Engine options.
    pub engine_opts: EngineOpts,
    /// Test-only fault.
    pub fault: Option<Fault>,
}

const VALUES: &[&str] = &[
    "engine",
    "accept_option_diff",
    "db",
    "tables",
    "table_size",
    "threads",
    "time",
    "events",
    "rand_zipfian_exp",
    "rand_pareto_h",
    "report_interval",
    "warmup_time",
    "range_size",
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "random_points",
    "hot_points",
    "rand_type",
    "rand_seed",
    "results",
    "expect_rows",
    "base",
    "inject_fault",
];
const FLAGS: &[&str] = &["range_selects", "skip_trx", "prewarm", "help"];

/// The `--help` text.
pub const HELP: &str = "\
usage: talus sysbench [options] [TEST[,TEST...]] prepare|run|check|flush|summary

  prepare   create sbtest1..N, load --table_size rows each (sysbench's contents), index k
  run       run each TEST for --time seconds (sysbench's interval lines and summary block)
  check     every table against its secondary index (and the engine's own check)
  flush     flush the memtable and compact (SQLite: checkpoint the WAL): the next open
            replays no log and has no compaction pending
  summary   throughput of each run under --results relative to --base, by group
            (point, range, write: avg, median, min, max, stddev of the ratios)

  --engine=talus|rocksdb|sqlite  --db=DIR  --tables=1  --table_size=10000  --threads=1  --time=10
  --events=0 (events per test over all threads; 0: no limit. --time=0 --events=N: N events each)
  --report_interval=0  --warmup_time=0  --prewarm (run: every thread reads every table first)
  --range_size=100  --point_selects=10  --simple_ranges=1  --sum_ranges=1
  --order_ranges=1  --distinct_ranges=1  --index_updates=1  --non_index_updates=1
  --delete_inserts=1  --range_selects=on  --skip_trx=off  --random_points=10  --hot_points=100
  --rand_type=uniform|zipfian|pareto  --rand_zipfian_exp=0.8  --rand_pareto_h=0.2  --rand_seed=0
  --results=DIR (run.json, summary.csv, TEST.intervals.csv)
  --expect_rows=N (check: each table must have N rows)  --base=NAME (summary: base runs)
tests: all, post004, point, range, write, or names (sysbench's oltp_* names work too):
";

fn bad(name: &str, v: &str, what: &str) -> String {
    format!("invalid value {v:?} for flag --{name}: expected {what}")
}

fn num<T: std::str::FromStr>(p: &Parsed, name: &str, default: T, what: &str) -> Result<T, String> {
    match p.value(name) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| bad(name, v, what)),
    }
}

fn flag_or(p: &Parsed, name: &str, default: bool) -> bool {
    if p.has(name) {
        p.flag(name)
    } else {
        default
    }
}

/// Parses `args`; `Ok(None)` means `--help`.
pub fn parse(args: &[String]) -> Result<Option<Config>, String> {
    let args = crate::oltp::normalize_args(args);
    let mut p = Parsed::parse(&args);
    p.check(&Spec { values: VALUES, flags: FLAGS, engine: true })?;
    if p.flag("help") {
        return Ok(None);
    }
    let (command, names) = match p.positional.split_last() {
        Some((c, rest)) => {
            let cmd = match c.as_str() {
                "prepare" => Command::Prepare,
                "run" => Command::Run,
                "check" => Command::Check,
                "flush" => Command::Flush,
                "summary" => Command::Summary,
                other => {
                    return Err(format!(
                        "unknown command {other:?}: expected prepare, run, check, flush or summary"
                    ))
                }
            };
            (cmd, rest)
        }
        None => return Err("no command: expected prepare, run, check, flush or summary".into()),
    };
    let mut tests = Vec::new();
    for n in names.iter().flat_map(|n| n.split(',')).filter(|n| !n.is_empty()) {
        tests.extend(resolve(n).ok_or_else(|| format!("unknown test {n:?} (see --help)"))?);
    }
    if command == Command::Run && tests.is_empty() {
        return Err("run needs test names (e.g. `talus sysbench point-query run`)".into());
    }
    if p.has("results") && matches!(command, Command::Prepare | Command::Check | Command::Flush) {
        return Err("--results applies to run and summary: prepare, check and flush write no \
                    results (nothing was created)"
            .into());
    }
    let engine = EngineKind::parse(p.value("engine"))?;
    let db = match p.value("db") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ if command == Command::Summary => PathBuf::new(),
        _ => return Err("flag --db is required (--db=DIR)".into()),
    };
    let tables: usize = num(&p, "tables", 1, "a number of tables")?;
    if !(1..=1024).contains(&tables) {
        return Err(bad("tables", &tables.to_string(), "1 to 1024"));
    }
    let table_size: u64 = num(&p, "table_size", 10_000, "a number of rows")?;
    if table_size == 0 || table_size > i32::MAX as u64 {
        return Err(bad("table_size", &table_size.to_string(), "1 to 2147483647"));
    }
    let threads: usize = num(&p, "threads", 1, "a number of threads")?;
    if !(1..=1024).contains(&threads) {
        return Err(bad("threads", &threads.to_string(), "1 to 1024"));
    }
    let time: f64 = num(&p, "time", 10.0, "seconds")?;
    let report_interval: f64 = num(&p, "report_interval", 0.0, "seconds")?;
    let warmup_time: f64 = num(&p, "warmup_time", 0.0, "seconds")?;
    if !(warmup_time.is_finite() && warmup_time >= 0.0) {
        return Err(bad("warmup_time", &warmup_time.to_string(), "seconds >= 0"));
    }
    if !(time.is_finite() && time >= 0.0) {
        return Err(bad("time", &time.to_string(), "seconds >= 0 (0: no time limit)"));
    }
    let events: u64 = num(&p, "events", 0, "a number of events (0: no limit)")?;
    if time == 0.0 && events == 0 && command == Command::Run {
        return Err("--time=0 with --events=0: nothing would end a test (give --time=SECONDS \
                    or --events=N)"
            .into());
    }
    if !(report_interval.is_finite() && report_interval >= 0.0) {
        return Err(bad("report_interval", &report_interval.to_string(), "seconds >= 0"));
    }
    let zipf_exp: f64 = num(&p, "rand_zipfian_exp", 0.8, "an exponent")?;
    if !(zipf_exp.is_finite() && zipf_exp > 0.0) {
        return Err(bad("rand_zipfian_exp", &zipf_exp.to_string(), "an exponent > 0"));
    }
    let pareto_h: f64 = num(&p, "rand_pareto_h", 0.2, "a fraction")?;
    if !(pareto_h > 0.0 && pareto_h < 1.0) {
        return Err(bad("rand_pareto_h", &pareto_h.to_string(), "a fraction between 0 and 1"));
    }
    let dist = match p.value("rand_type") {
        None | Some("uniform") => Dist::Uniform,
        Some("zipfian") => Dist::zipfian(zipf_exp),
        Some("pareto") => Dist::pareto(pareto_h),
        Some(v) => return Err(bad("rand_type", v, "uniform, zipfian or pareto")),
    };
    let fault = match p.value("inject_fault") {
        None => None,
        Some("read-write-skips-insert") => Some(Fault::ReadWriteSkipsInsert),
        Some(v) => return Err(bad("inject_fault", v, "read-write-skips-insert")),
    };
    let random_points: usize = num(&p, "random_points", 10, "a count")?;
    let hot_points: u64 = num(&p, "hot_points", 100, "a count")?;
    let range_size: u64 = num(&p, "range_size", 100, "a number of rows")?;
    if random_points == 0 || hot_points == 0 || range_size == 0 {
        return Err("--random_points, --hot_points and --range_size must be positive".into());
    }
    Ok(Some(Config {
        engine,
        db,
        command,
        tests,
        tables,
        table_size,
        threads,
        time,
        events,
        dist,
        zipf: Dist::zipfian(zipf_exp),
        report_interval,
        warmup_time,
        prewarm: flag_or(&p, "prewarm", false),
        range_size,
        point_selects: num(&p, "point_selects", 10, "a count")?,
        simple_ranges: num(&p, "simple_ranges", 1, "a count")?,
        sum_ranges: num(&p, "sum_ranges", 1, "a count")?,
        order_ranges: num(&p, "order_ranges", 1, "a count")?,
        distinct_ranges: num(&p, "distinct_ranges", 1, "a count")?,
        index_updates: num(&p, "index_updates", 1, "a count")?,
        non_index_updates: num(&p, "non_index_updates", 1, "a count")?,
        delete_inserts: num(&p, "delete_inserts", 1, "a count")?,
        range_selects: flag_or(&p, "range_selects", true),
        skip_trx: flag_or(&p, "skip_trx", false),
        random_points,
        hot_points,
        seed: num(&p, "rand_seed", 0, "an unsigned integer")?,
        results: p.value("results").map(PathBuf::from),
        expect_rows: match p.value("expect_rows") {
            None => None,
            Some(_) => Some(num(&p, "expect_rows", 0, "a number of rows")?),
        },
        base: p.value("base").map(str::to_string),
        engine_opts: EngineOpts::parse(&p)?,
        fault,
    }))
}

fn dist_name(d: &Dist) -> String {
    match d {
        Dist::Uniform => "uniform".into(),
        Dist::Zipfian { exp, .. } => format!("zipfian(exp={exp})"),
        Dist::Pareto { power } => format!("pareto(power={power:.4})"),
    }
}

/// The options as (name, value) pairs, for run.json.
pub fn describe(c: &Config) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [
        ("engine", c.engine.name().to_string()),
        ("tables", c.tables.to_string()),
        ("table_size", c.table_size.to_string()),
        ("threads", c.threads.to_string()),
        ("time", c.time.to_string()),
        ("events", c.events.to_string()),
        ("rand_type", dist_name(&c.dist)),
        ("report_interval", c.report_interval.to_string()),
        ("warmup_time", c.warmup_time.to_string()),
        ("prewarm", c.prewarm.to_string()),
        ("range_size", c.range_size.to_string()),
        ("random_points", c.random_points.to_string()),
        ("hot_points", c.hot_points.to_string()),
        ("skip_trx", c.skip_trx.to_string()),
        ("rand_seed", c.seed.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    v.extend(c.engine_opts.describe());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sysbench_spellings() {
        let c = parse(&args(&[
            "--db=/x",
            "--table-size=500",
            "--tables=4",
            "--skip_trx=on",
            "--range_selects=off",
            "oltp_point_select,range-pk.range100",
            "run",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((c.table_size, c.tables, c.skip_trx, c.range_selects), (500, 4, true, false));
        assert_eq!(c.command, Command::Run);
        let names: Vec<&str> = c.tests.iter().map(|t| t.name).collect();
        assert_eq!(names, vec!["point-query", "range-pk.range100"]);
    }

    #[test]
    fn events_and_distributions() {
        let c = parse(&args(&[
            "--db=/x",
            "--time=0",
            "--events=50",
            "--rand-type=zipfian",
            "update-one",
            "run",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((c.time, c.events), (0.0, 50));
        assert_eq!(c.dist, Dist::zipfian(0.8));
        let c = parse(&args(&["--db=/x", "--rand_type=pareto", "--rand_pareto_h=0.1", "prepare"]))
            .unwrap()
            .unwrap();
        assert_eq!(c.dist, Dist::pareto(0.1));
        // Both limits: whichever comes first.
        let c =
            parse(&args(&["--db=/x", "--time=5", "--events=9", "scan", "run"])).unwrap().unwrap();
        assert_eq!((c.time, c.events), (5.0, 9));
    }

    #[test]
    fn errors_name_the_flag() {
        for (a, want) in [
            ("--tables=0", "--tables"),
            ("--engine=mysql", "--engine"),
            ("--time=-1", "--time"),
            ("--rand_type=gaussian", "--rand_type"),
            ("--rand_pareto_h=1", "--rand_pareto_h"),
            ("--rand_zipfian_exp=0", "--rand_zipfian_exp"),
            ("--events=-1", "--events"),
            ("--time=0", "--events=0"),
            ("--bogus=1", "bogus"),
            ("--compression_type=gzip", "compression_type"),
        ] {
            let e = parse(&args(&["--db=/x", a, "point-query", "run"])).unwrap_err();
            assert!(e.contains(want), "{a}: {e}");
        }
        assert!(parse(&args(&["--db=/x", "nope", "run"])).unwrap_err().contains("nope"));
        assert!(parse(&args(&["--db=/x", "run"])).unwrap_err().contains("test names"));
        assert!(parse(&args(&["--db=/x", "point-query", "go"])).unwrap_err().contains("go"));
    }
}
