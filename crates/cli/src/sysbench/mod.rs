//! `talus sysbench`: sysbench's OLTP microbenchmarks on Talus (through talus-table) and on
//! SQLite, with the same tables, contents and statements.
//!
//! ```text
//! talus sysbench --engine=talus|sqlite --db=DIR --tables=4 --table_size=1000000 prepare
//! talus sysbench --engine=talus --db=DIR --threads=2 --time=60 --report_interval=10 \
//!     --results=res/talus-t2 all run
//! talus sysbench --engine=talus --db=DIR --tables=4 --expect_rows=1000000 check
//! talus sysbench --results=res --base=sqlite summary
//! ```
//! Tests (names and statements: [`workloads`]) run one after another, each for `--time`
//! seconds on `--threads` threads, printing sysbench's interval lines and final summary block
//! ([`output`]). Statements go through the handler interface of [`crate::oltp::engine`], so
//! both engines receive the same row operations ([`events`]). After each test the process's
//! and the client threads' user/system CPU (getrusage), CPU µs per query and context switches
//! per query are printed and written to summary.csv ([`output`]). `--time=0 --events=N` runs a
//! fixed amount of work per test (sysbench's fixed-work mode), for instruction counts.
//! `check` compares every table with its secondary index and runs the engine's own check.
//! `summary` prints the reference post's relative throughput and CPU-per-query tables
//! ([`summary`]); `talus report` draws the throughput ones.
//!
//! Exit codes: 0 done, 1 an error (named on stderr; for `check`, the first difference), 2 bad
//! flags. Flags: [`config::HELP`] and the engine options of [`crate::oltp::engine_opts`].
//! Every flag is checked before `--db` is touched; `prepare` needs `--db` missing or empty,
//! `run` and `check` open an existing database (never creating one); `--results` (run and
//! summary only) is checked before the open and written after it, so a refused run leaves
//! nothing behind.

mod config;
mod dist;
mod events;
mod output;
mod phases;
mod schema;
pub mod summary;
pub mod workloads;

use crate::oltp::engine::Engine;
use crate::oltp::sqlite_engine::SqliteEngine;
use crate::oltp::table_engine::TalusEngine;
use config::{Command, EngineKind};

/// Runs `talus sysbench` with `args`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let cfg = match config::parse(args) {
        Ok(Some(c)) => c,
        Ok(None) => {
            print!(
                "{}{}{}",
                config::HELP,
                workloads::help_list(),
                crate::oltp::engine_opts::help()
            );
            return 0;
        }
        Err(e) => {
            eprintln!("sysbench: {e}");
            return 2;
        }
    };
    let r = match (cfg.command, cfg.engine) {
        (Command::Summary, _) => print_summary(&cfg),
        (_, EngineKind::Talus) => on::<TalusEngine>(&cfg, args),
        #[cfg(feature = "rocksdb")]
        (_, EngineKind::RocksDb) => on::<crate::oltp::table_engine::RocksEngine>(&cfg, args),
        #[cfg(not(feature = "rocksdb"))]
        (_, EngineKind::RocksDb) => Err(crate::table_engines::ROCKSDB_NOT_BUILT.to_string()),
        (_, EngineKind::Sqlite) => on::<SqliteEngine>(&cfg, args),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("sysbench: {e}");
            1
        }
    }
}

fn on<E: Engine>(cfg: &config::Config, args: &[String]) -> Result<(), String> {
    match cfg.command {
        Command::Prepare => phases::prepare::<E>(cfg),
        Command::Run => phases::run::<E>(cfg, args),
        Command::Check => phases::check::<E>(cfg),
        Command::Flush => phases::flush::<E>(cfg),
        Command::Summary => print_summary(cfg),
    }
}

fn print_summary(cfg: &config::Config) -> Result<(), String> {
    let dir = cfg.results.as_ref().ok_or("summary needs --results=DIR")?;
    let data = crate::report::load::load(dir)?;
    if data.sysbench.is_empty() {
        return Err(format!("no sysbench results under {}", dir.display()));
    }
    for (i, m) in [summary::THROUGHPUT, summary::CPU_PER_QUERY].into_iter().enumerate() {
        let (base, rel) = summary::relative_by(&data.sysbench, cfg.base.as_deref(), m);
        if i > 0 {
            println!();
        }
        print!("{}", summary::text_of(m, &base, &rel));
    }
    Ok(())
}
