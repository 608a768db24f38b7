//! `talus tpcc` flags, checked before `--db` is touched (errors name the flag). sysbench-tpcc's
//! spelling works too (`--scale` for `--warehouses`, dashes for underscores).

use std::path::PathBuf;

use crate::oltp::engine_opts::EngineOpts;
use crate::oltp::normalize_args as normalize;
use crate::options::{Parsed, Spec};

pub use crate::oltp::EngineKind;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Create the tables and load `--warehouses` warehouses.
    Prepare,
    /// Run the mix for `--time` seconds, then check.
    Run,
    /// Check the consistency conditions only.
    Check,
}

/// A test-only fault: a transaction that breaks a consistency condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Payment does not add the amount to D_YTD (breaks condition 1).
    PaymentSkipsDistrictYtd,
    /// NewOrder does not insert its last order line (breaks condition 4).
    NewOrderSkipsOrderLine,
}

/// Everything `talus tpcc` was asked to do.
#[derive(Debug, Clone)]
pub struct Config {
    /// Engine under test.
    pub engine: EngineKind,
    /// Database directory.
    pub db: PathBuf,
    /// The command.
    pub command: Command,
    /// Warehouses (the scale).
    pub warehouses: i64,
    /// Terminal threads (also loader threads).
    pub threads: usize,
    /// Seconds to run.
    pub time: f64,
    /// Seconds between interval lines (0: none).
    pub report_interval: f64,
    /// Items (spec: 100000; smaller only for tests).
    pub items: i64,
    /// Customers per district, also orders per district (spec: 3000; smaller for tests).
    pub customers: i64,
    /// Seed (0: from the clock).
    pub seed: u64,
    /// Where to write results.
    pub results: Option<PathBuf>,
    /// Skip the consistency check after `run`.
    pub skip_check: bool,
    /// Engine options.
    pub engine_opts: EngineOpts,
    /// Test-only fault.
    pub fault: Option<Fault>,
}

impl Config {
    /// Districts per warehouse (fixed by the spec).
    pub const DISTRICTS: i64 = 10;

    /// Orders per district loaded as undelivered (the spec's 900 of 3000: the last 30%).
    pub fn new_orders(&self) -> i64 {
        self.customers * 3 / 10
    }
}

const VALUES: &[&str] = &[
    "engine",
    "db",
    "warehouses",
    "scale",
    "threads",
    "time",
    "report_interval",
    "items",
    "customers",
    "rand_seed",
    "results",
    "inject_fault",
];
const FLAGS: &[&str] = &["skip_check", "help"];

/// The `--help` text.
pub const HELP: &str = "\
usage: talus tpcc [options] prepare|run|check

  prepare   create the nine tables and load --warehouses warehouses (clause 4.3.3)
  run       the mix (45% NewOrder, 43% Payment, 4% each OrderStatus, Delivery, StockLevel),
            no keying or think time, for --time seconds; tpmC and latency percentiles every
            --report_interval seconds; then the consistency conditions 1-4 (exit 1 if any fails)
  check     the consistency conditions 1-4 only

  --engine=talus|sqlite  --db=DIR  --warehouses=1 (--scale)  --threads=1  --time=60
  --report_interval=10  --rand_seed=0  --results=DIR (run.json, summary.csv,
  run.intervals.csv, engine_stats.txt)  --skip_check
  --items=100000 --customers=3000 (per district; smaller than the spec only for tests)
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

/// Parses `args`; `Ok(None)` means `--help`.
pub fn parse(args: &[String]) -> Result<Option<Config>, String> {
    let args = normalize(args);
    let mut p = Parsed::parse(&args);
    p.check(&Spec { values: VALUES, flags: FLAGS, engine: true })?;
    if p.flag("help") {
        return Ok(None);
    }
    let command = match p.positional.as_slice() {
        [c] if c == "prepare" => Command::Prepare,
        [c] if c == "run" => Command::Run,
        [c] if c == "check" => Command::Check,
        _ => return Err("expected one command: prepare, run or check".into()),
    };
    if p.has("results") && command != Command::Run {
        return Err("--results applies to run: prepare and check write no results (nothing was \
                    created)"
            .into());
    }
    let engine = match p.value("engine") {
        Some("talus") | None => EngineKind::Talus,
        Some("sqlite") => EngineKind::Sqlite,
        Some(v) => return Err(bad("engine", v, "talus or sqlite")),
    };
    let db = match p.value("db") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => return Err("flag --db is required (--db=DIR)".into()),
    };
    let wname = if p.has("scale") { "scale" } else { "warehouses" };
    let warehouses: i64 = num(&p, wname, 1, "a number of warehouses")?;
    if !(1..=100_000).contains(&warehouses) {
        return Err(bad(wname, &warehouses.to_string(), "1 to 100000"));
    }
    let threads: usize = num(&p, "threads", 1, "a number of threads")?;
    if !(1..=1024).contains(&threads) {
        return Err(bad("threads", &threads.to_string(), "1 to 1024"));
    }
    let time: f64 = num(&p, "time", 60.0, "seconds")?;
    if !(time.is_finite() && time > 0.0) {
        return Err(bad("time", &time.to_string(), "a positive number of seconds"));
    }
    let report_interval: f64 = num(&p, "report_interval", 10.0, "seconds")?;
    if !(report_interval.is_finite() && report_interval >= 0.0) {
        return Err(bad("report_interval", &report_interval.to_string(), "seconds >= 0"));
    }
    let items: i64 = num(&p, "items", 100_000, "a number of items")?;
    if !(100..=100_000_000).contains(&items) {
        return Err(bad("items", &items.to_string(), "100 to 100000000"));
    }
    let customers: i64 = num(&p, "customers", 3000, "customers per district")?;
    if !(10..=1_000_000).contains(&customers) {
        return Err(bad("customers", &customers.to_string(), "10 to 1000000"));
    }
    let fault = match p.value("inject_fault") {
        None => None,
        Some("payment-skips-district-ytd") => Some(Fault::PaymentSkipsDistrictYtd),
        Some("new-order-skips-order-line") => Some(Fault::NewOrderSkipsOrderLine),
        Some(v) => {
            return Err(bad(
                "inject_fault",
                v,
                "payment-skips-district-ytd or new-order-skips-order-line",
            ))
        }
    };
    Ok(Some(Config {
        engine,
        db,
        command,
        warehouses,
        threads,
        time,
        report_interval,
        items,
        customers,
        seed: num(&p, "rand_seed", 0, "an unsigned integer")?,
        results: p.value("results").map(PathBuf::from),
        skip_check: p.flag("skip_check"),
        engine_opts: EngineOpts::parse(&p)?,
        fault,
    }))
}

/// The options as (name, value) pairs, for run.json.
pub fn describe(c: &Config) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [
        ("engine", c.engine.name().to_string()),
        ("warehouses", c.warehouses.to_string()),
        ("threads", c.threads.to_string()),
        ("time", c.time.to_string()),
        ("report_interval", c.report_interval.to_string()),
        ("items", c.items.to_string()),
        ("customers", c.customers.to_string()),
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
    fn flags_and_errors() {
        let c =
            parse(&args(&["--db=/x", "--scale=3", "--report-interval=5", "run"])).unwrap().unwrap();
        assert_eq!((c.warehouses, c.report_interval, c.command), (3, 5.0, Command::Run));
        assert_eq!(c.new_orders(), 900);
        for (a, want) in [
            ("--warehouses=0", "--warehouses"),
            ("--engine=pg", "--engine"),
            ("--items=5", "--items"),
            ("--inject_fault=x", "--inject_fault"),
            ("--rate_limiter_bytes_per_sec=x", "rate_limiter_bytes_per_sec"),
        ] {
            let e = parse(&args(&["--db=/x", a, "run"])).unwrap_err();
            assert!(e.contains(want), "{a}: {e}");
        }
        assert!(parse(&args(&["--db=/x"])).unwrap_err().contains("command"));
    }
}
