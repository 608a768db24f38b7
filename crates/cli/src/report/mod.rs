//! `talus report --results=DIR --out=FILE.html [--base=NAME]`: one self-contained HTML page
//! from the results of `talus sysbench`, `talus tpcc` and `talus ibench` runs (`--results`
//! folders), db_bench stdout logs and `bench/regress.py --out` results (`regress.json`, drawn
//! by [`regress`]) found under DIR.
//!
//! DIR may be one run folder or hold several (one per engine, in subfolders, up to 3 deep), plus
//! `*.log` files with db_bench output. sysbench runs get the reference post's relative summary
//! against `--base` (`sysbench_page`), tpcc runs their tpmC-per-interval and size charts
//! (`tpcc_page`). For ibench the page has: the runs with their command lines and the
//! l.i1/l.i0 insert-rate ratio; engine-vs-engine bars of inserts/s and queries/s per step; per
//! step a summary table, inserts/s, queries/s and max response time per interval (one line per
//! run) and the response-time histograms; for db_bench logs, ops/sec bars, the result lines and
//! the last per-level compaction stats table. Runs that differ only in `--secondary_indexes`
//! also get post 003's table (ipsAvg-ipsP95-dbSize-rssSize per engine and index count, with the
//! device reads and KB read and written per insert) and a bar chart of inserts/s by index count
//! ([`indexes`]). Charts are inline SVG from [`svg`]; no scripts, no
//! network. Malformed input is skipped and listed at the end of the page and on stderr.
//! Called by `main`'s dispatch; exit code 0 on success, 1 on an error (named), 2 on bad flags.
//! The page is the only file written, once, at the end: `--out` is checked first (not a
//! directory, in an existing writable directory) and an unknown `--base` is refused, so a run
//! that fails writes nothing.

mod cell;
mod csv;
mod indexes;
pub mod load;
pub mod oltp_load;
mod page;
mod regress;
mod svg;
mod sweep;
mod sysbench_page;
mod tpcc_page;

use crate::options::{Parsed, Spec};

const HELP: &str = "usage: talus report --results=DIR --out=FILE.html [--base=NAME]\n\
  --base: the sysbench runs (folder name or engine) the others are relative to (default: the\n\
  first run's engine)\n";

/// Runs `talus report`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let mut p = Parsed::parse(args);
    if let Err(e) =
        p.check(&Spec { values: &["results", "out", "base"], flags: &["help"], engine: false })
    {
        eprintln!("report: {e}\n{HELP}");
        return 2;
    }
    if p.flag("help") {
        print!("{HELP}");
        return 0;
    }
    if let Some(w) = p.positional.first() {
        eprintln!("report: unexpected argument {w:?}\n{HELP}");
        return 2;
    }
    let (Some(results), Some(out)) = (p.value("results"), p.value("out")) else {
        eprintln!("report: --results and --out are required\n{HELP}");
        return 2;
    };
    if let Err(e) = crate::precheck::output_file("--out", std::path::Path::new(out)) {
        eprintln!("report: {e}");
        return 2;
    }
    let data = match load::load(std::path::Path::new(results)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("report: {e}");
            return 1;
        }
    };
    for w in &data.warnings {
        eprintln!("report: skipped: {w}");
    }
    if data.runs.is_empty()
        && data.logs.is_empty()
        && data.sysbench.is_empty()
        && data.tpcc.is_empty()
        && data.regress.is_empty()
    {
        eprintln!(
            "report: no ibench, sysbench or tpcc results (run.json), db_bench logs (*.log) or \
             regress.py results (regress.json) under {results}"
        );
        return 1;
    }
    if let Some(base) = p.value("base") {
        if !data.sysbench.iter().any(|r| r.name == base || r.engine == base) {
            let known: Vec<String> = data
                .sysbench
                .iter()
                .flat_map(|r| [r.name.clone(), r.engine.clone()])
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            eprintln!(
                "report: --base={base} names no sysbench run under {results} (runs and engines: \
                 {}; nothing was written)",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            );
            return 2;
        }
    }
    let html = page::render(&data, results, p.value("base"));
    if let Err(e) = std::fs::write(out, html) {
        eprintln!("report: write {out}: {e}");
        return 1;
    }
    println!(
        "report: {} run(s), {} db_bench log(s), {} sysbench run(s), {} tpcc run(s), {} regress \
         result(s) -> {out}",
        data.runs.len(),
        data.logs.len(),
        data.sysbench.len(),
        data.tpcc.len(),
        data.regress.len()
    );
    0
}
