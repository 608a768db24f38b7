//! `talus stress`: a db_stress-style workload with an expected-state oracle, and (`--crash`) the
//! kill -9 / restart / verify driver modelled on RocksDB's `db_crashtest.py blackbox`.
//!
//! ```text
//! talus stress --db=DIR [--expected_state=FILE --threads=N --max_key=K --ops_per_thread=M
//!              --duration=S --seed=X --sync=1 --disable_wal=0 --verify_only
//!              --destroy_db_initially ...options]
//! talus stress --crash --db=DIR [--duration=S --cycles=C --seed=X ...]
//! ```
//! A worker run first checks what it will use (`setup.rs`: the expected-state file read, never
//! written; the directory; with `--destroy_db_initially` the old database replaced through
//! `talus::destroy_db`), then opens the database (taking its LOCK), then opens or creates the
//! expected-state file: a refused run, a locked database included, creates nothing. It
//! verifies every key against the expected state (the oracle of `expected.rs`) and reconciles
//! keys left pending by a crash, prints `stress: workload started`, runs N threads of random
//! operations (`ops.rs`) that check every read, verifies everything again and exits: 0 all
//! good, 1 a verification failure, 2 bad usage, 3 the database failed (open, recovery or an
//! operation returned an error). `--verify_only` stops after the first verification. Each
//! verification prints one `stress-verify:` summary line that the driver (`driver.rs`) parses.
//!
//! Without `--expected_state` the run is db_stress's default one: the expected state lives in
//! memory for the run only (RocksDB's `AnonExpectedStateManager`), so the database must start
//! empty, and `--destroy_db_initially` defaults to 1 (db_stress's default) to replace a
//! previous one. With a file it defaults to 0: the file describes the database.
//!
//! Submodules: `value` (keys, self-checking values), `expected` (the oracle), `ops` (the
//! workload threads), `verify` (whole-database verification), `config` (options), `setup`
//! (the checks before anything is created), `driver`, `table` (`--workload=table`: rows and
//! secondary indexes through `talus-table`, checked for index consistency after every crash),
//! `kill` (whitebox kill points: arming a worker, and the driver's rotation and tally),
//! `copies` (the checkpoints and backups the workload makes, and what a kill left of them).

mod config;
mod copies;
mod driver;
mod expected;
mod families;
mod kill;
mod ops;
mod setup;
mod table;
mod value;
mod verify;

use std::time::Instant;

use crate::options::Parsed;
use config::Config;
use expected::{ExpectedState, Mode};

/// Exit code: a verification failure.
pub const EXIT_VERIFY: i32 = 1;
/// Exit code: bad usage.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: the database returned an error (open/recovery or an operation).
pub const EXIT_DB: i32 = 3;

/// Runs `talus stress` with `args` (after the subcommand name); returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let mut p = Parsed::parse(args);
    if p.flag("help") {
        print!("{}{}", config::USAGE, crate::options::engine_help());
        return 0;
    }
    if let Err(e) = p.check(&config::SPEC) {
        eprintln!("talus stress: {e}");
        eprint!("{}", config::USAGE);
        return EXIT_USAGE;
    }
    if p.flag("crash") {
        return driver::run(&p);
    }
    let cfg = match Config::from_args(&p) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("talus stress: {e}");
            return EXIT_USAGE;
        }
    };
    if let Err(e) = kill::arm_worker(cfg.kill_random_test, &cfg.kill_points, cfg.seed) {
        eprintln!("talus stress: {e}");
        return EXIT_USAGE;
    }
    match worker(&cfg) {
        Ok(()) => 0,
        Err(Failure::Verify(e)) => {
            eprintln!("talus stress: VERIFICATION FAILED: {e}");
            EXIT_VERIFY
        }
        Err(Failure::Db(e)) => {
            eprintln!("talus stress: database error: {e}");
            EXIT_DB
        }
        Err(Failure::Usage(e)) => {
            eprintln!("talus stress: {e}");
            EXIT_USAGE
        }
    }
}

/// Why a worker run failed.
#[derive(Debug)]
pub enum Failure {
    /// The database returned something the expected state rules out.
    Verify(String),
    /// The database (or the expected-state file) returned an error.
    Db(String),
    /// A check before anything was created refused the run (a foreign or mismatched
    /// expected-state file, a directory that is no database).
    Usage(String),
}

/// One worker run: check (and replace), open, verify and reconcile, run the workload, verify
/// again.
fn worker(cfg: &Config) -> Result<(), Failure> {
    let options = cfg.db_options().map_err(Failure::Usage)?;
    setup::prepare_worker(cfg)?;
    if cfg.table_workload {
        return table::worker(cfg);
    }
    let t0 = Instant::now();
    // The LOCK first: the expected-state file is created only once the database is ours.
    let (db, fams) = families::Families::open(&cfg.db, options, cfg.column_families)
        .map_err(|e| Failure::Db(format!("opening {}: {e}", cfg.db.display())))?;
    let mut exp = match &cfg.expected_state {
        Some(path) => ExpectedState::open(path, cfg.max_key, cfg.value_size_max),
        None => ExpectedState::in_memory(cfg.max_key, cfg.value_size_max),
    }
    .map_err(Failure::Db)?;
    println!("stress: opened {} in {} ms", cfg.db.display(), t0.elapsed().as_millis());
    if cfg.ingest_one_in > 0 && !cfg.verify_only {
        ops::ingest::reset_scratch(&cfg.expected_state).map_err(Failure::Db)?;
    }
    println!("stress: options {}", cfg.brief());
    verify::verify_all(&db, &fams, &exp, cfg, true)?;
    copies::check_leftovers(&exp, cfg)?;
    if cfg.verify_only {
        return Ok(());
    }
    let mode = match (cfg.disable_wal, cfg.sync) {
        (true, _) => Mode::NoWal,
        (false, true) => Mode::Sync,
        (false, false) => Mode::NoSync,
    };
    exp.set_mode(mode).map_err(Failure::Db)?;
    println!("stress: workload started (seed {})", cfg.seed);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let t1 = Instant::now();
    let counts = ops::run_threads(&db, &fams, &exp, cfg)?;
    println!("stress: workload done in {:.1}s: {}", t1.elapsed().as_secs_f64(), counts.line());
    if cfg.expected_state.is_none() {
        // The per-process scratch directory of ingestions (emptied by each ingestion).
        let _ = std::fs::remove_dir(ops::ingest::scratch_dir(&None));
        copies::reset(&copies::scratch_dir(&None)).map_err(Failure::Db)?;
    }
    verify::verify_all(&db, &fams, &exp, cfg, false)
}
