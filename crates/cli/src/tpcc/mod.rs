//! `talus tpcc`: a TPC-C workload (the spec's schema, loader, five transactions and mix, no
//! keying or think time) on Talus (through talus-table) and on SQLite, with the consistency
//! conditions 1-4 checked after every run.
//!
//! ```text
//! talus tpcc --engine=talus|sqlite --db=DIR --warehouses=W --threads=T prepare
//! talus tpcc --engine=talus --db=DIR --warehouses=W --threads=2 --time=600 \
//!     --report_interval=10 --results=res/tpcc-talus [engine options] run
//! talus tpcc --engine=talus --db=DIR --warehouses=W check
//! ```
//! `run` and `check` must be given the `--warehouses` (and `--items`, `--customers`) that
//! `prepare` loaded. Transactions have the table layer's snapshot isolation (Talus: reads
//! from the snapshot taken at begin, first committer wins on written rows; SQLite: serialized
//! writers); a write-write conflict rolls the transaction back and retries it with the same
//! inputs, counted per type. Output: a line per interval with tpmC (NewOrder transactions per
//! minute, the 1% rolled back included as the spec counts them), tps, retries/s and the 95th
//! percentile latency per type; at the end the totals, a latency table and the consistency
//! check ([`check`]): exit 1 and `CONSISTENCY CHECK FAILED: <condition and where>` if one
//! fails. Results files: [`output`]. Modules: `config` (flags), `schema`, `random`, `load`,
//! `txns` (the transactions), `check`, `output`, `phases` (the commands).
//!
//! Every flag is checked before `--db` is touched (exit 2); `prepare` needs `--db` missing or
//! empty, `run` and `check` open an existing database (never creating one); `--results`
//! (run only) is checked before the open and written after it, so a refused run leaves
//! nothing behind.

mod check;
mod config;
mod load;
mod output;
mod phases;
mod random;
mod schema;
mod txns;

use crate::oltp::engine::Engine;
use crate::oltp::sqlite_engine::SqliteEngine;
use crate::oltp::table_engine::TalusEngine;
use config::{Command, EngineKind};

/// Runs `talus tpcc` with `args`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let cfg = match config::parse(args) {
        Ok(Some(c)) => c,
        Ok(None) => {
            print!("{}{}", config::HELP, crate::oltp::engine_opts::help());
            return 0;
        }
        Err(e) => {
            eprintln!("tpcc: {e}");
            return 2;
        }
    };
    let r = match cfg.engine {
        EngineKind::Talus => on::<TalusEngine>(&cfg, args),
        #[cfg(feature = "rocksdb")]
        EngineKind::RocksDb => on::<crate::oltp::table_engine::RocksEngine>(&cfg, args),
        #[cfg(not(feature = "rocksdb"))]
        EngineKind::RocksDb => Err(crate::table_engines::ROCKSDB_NOT_BUILT.to_string()),
        EngineKind::Sqlite => on::<SqliteEngine>(&cfg, args),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tpcc: {e}");
            1
        }
    }
}

fn on<E: Engine>(cfg: &config::Config, args: &[String]) -> Result<(), String> {
    match cfg.command {
        Command::Prepare => phases::prepare::<E>(cfg),
        Command::Run => phases::run::<E>(cfg, args),
        Command::Check => phases::check::<E>(cfg),
    }
}
