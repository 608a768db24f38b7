//! `talus ibench`: the insert benchmark (Mark Callaghan's iibench / insert benchmark) on Talus
//! and on RocksDB (both through the same talus-table layer, MyRocks's design) and on SQLite,
//! with the same schema, indexes, rows and steps.
//!
//! `talus ibench --engine=talus|rocksdb|sqlite --db=DIR --steps=l.i0,l.x,l.i1,q100,q500 --num=N
//! --num_i1=M --seconds=S --clients=C --results=DIR [...]` (all flags: [`config::HELP`]).
//! Every flag and the step order ([`step_order`]) are checked before `--db` is touched; an
//! error names the flag and exits 1. When the steps include `l.i0` (first) the `--db`
//! directory must be missing or empty (l.i0 creates the tables); without it `--db` must hold
//! the tables, which are checked for the secondary indexes the steps need right after the open
//! (which takes the database's LOCK). `--results` is checked up front and written only after
//! that, so a refused run leaves no database and no results folder.
//! `--engine=rocksdb` needs a build with the `rocksdb` feature (else it names the feature and
//! the build command); it refuses options whose RocksDB values differ from Talus's unless
//! `--accept_option_diff` names them, and prints the comparison (`options: ...`); with
//! `--results` both OPTIONS texts are saved there (`OPTIONS-talus`, `OPTIONS-rocksdb`).
//!
//! Steps (each client has its own table `purchases_index_<c>`, or with `--shared_table` all
//! write `purchases_index_0`; see [`schema`]):
//! - `l.i0`: insert `--num` rows per client in PK order, `--rows_per_commit` per commit, no
//!   secondary index.
//! - `l.x`: create the first `--secondary_indexes` (default 3) of the indexes marketsegment,
//!   registersegment and pdc.
//! - `l.i1`: insert `--num_i1` more rows per client maintaining the indexes (with
//!   `--delete_per_insert`, each commit also deletes as many rows from the PK tail).
//! - `q100`, `q500`, `q1000`: for `--seconds`, per client one query thread runs flat out (pick
//!   one of the indexes and a random start value, read 10 rows in index order, only the
//!   index's columns: covering) while a writer inserts (and deletes) 100/500/1000 rows/s.
//! - `check`: the checksum of every table and index ([`check`]); a seeded run prints the same
//!   lines on every engine.
//!
//! Output: a line per `--interval` (ips, qps, max insert and query response time in it) and per
//! step the `summary` line plus the two histogram lines (see [`summary::Summary::lines`]).
//!
//! `--results=DIR` files (read by `talus report`):
//! - `run.json`: `{"tool", "format_version": 1, "engine", "command_line": [..], "options":
//!   {flag: value as string}, "started_unix"}`.
//! - `summary.csv`, one row per step: `step, engine, secs, inserts` (rows), `deletes, queries,
//!   ips` (rows/s), `qps`, `ips_p95` (the inserts/s reached by 95% of the step's 10-second
//!   windows: the 5th percentile from below, post 003's ipsP95; empty if the step was shorter),
//!   `ins_le256us .. ins_gt16s` (insert commits by response time: <=256µs,
//!   <=1ms, 4ms, 16ms, 64ms, 256ms, 1s, 4s, 16s, >16s), `ins_max_us`, `q_le256us .. q_gt16s,
//!   q_max_us` (queries), `reads_per_query, kb_read_per_query, reads_per_insert,
//!   kb_read_per_insert` (deltas of /proc/self/io `syscr` and `read_bytes` over the step divided
//!   by queries or inserted rows: the whole process, as iostat would count it),
//!   `point_reads_per_insert` (talus: engine gets issued by the table layer per inserted row;
//!   empty for sqlite), `kb_written_per_insert` (/proc/self/io `write_bytes`), `cpu_us_per_op`
//!   (getrusage user+system over inserted rows + queries), `db_bytes` (the database's files as
//!   written: never a preallocated WAL length; SQLite's main files and WALs),
//!   `peak_rss_kb` (VmHWM), `dev_reads_per_insert` (device reads per inserted row: talus with
//!   `--use_direct_reads` counts every table-file read it issues, each one reaching the device;
//!   otherwise `read_bytes / 4096`, one 4 KiB page per read, as SQLite's random page reads are),
//!   `dev_reads_measured` (1 if counted, 0 if estimated; rocksdb counts the reads of its
//!   `rocksdb.file.read.*` statistics), `kb_rchar_per_insert` and
//!   `kb_wchar_per_insert` (/proc/self/io `rchar`/`wchar`: bytes through read and write
//!   syscalls, page-cache hits included, next to `read_bytes`/`write_bytes`), `rss_kb` (VmRSS
//!   at the end), `peak_vsz_kb` (VmSize sampled every 50 ms), `r_delta_kb` and `v_delta_kb`
//!   (post 000's r-delta and v-delta: the step's peak RSS and peak VSZ minus the block cache
//!   capacity `--cache_size`; negative while the cache is not full), `page_cache_max_kb` and `page_cache_avg_kb` (page cache held by the files
//!   under --db, sampled by `--drop_page_cache_ms`; empty when off). A ratio without a
//!   denominator is empty.
//! - `<step>.intervals.csv`: `elapsed_s, ips, qps, max_insert_ms, max_query_ms`, `dps` (rows
//!   deleted per second), `ips_c0 .. ips_cN` (each client's inserts/s; their sum is `ips`), then what
//!   the engine was doing in the interval ([`crate::engine_state`]: L0 files and MB, immutable
//!   memtables, pending compaction MB, the stall state and stalled ms, flush and compaction MB,
//!   running compactions, device MB read and written, throttle wait ms, cache hit %), one row
//!   per interval.
//!
//! Called by `main`'s dispatch; runs the steps on the calling thread, each step's threads scoped
//! to it ([`steps::run_step`]).

mod backend;
mod check;
mod config;
mod engine_stats;
mod metrics;
mod pagecache;
mod results;
mod schema;
mod sqlite;
mod sqlite_vfs;
mod step_order;
mod steps;
mod summary;
mod table_backend;

pub use backend::sqlite_size;
use backend::IbenchBackend;
use config::{Config, EngineKind, Step};
pub use sqlite::open_connection;
use talus_table::storage::options_diff::OptionsReport;

/// Runs `talus ibench` with `args`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let cfg = match config::parse(args) {
        Ok(Some(c)) => c,
        Ok(None) => {
            print!("{}{}", config::HELP, crate::options::engine_help());
            return 0;
        }
        Err(e) => {
            eprintln!("ibench: {e}");
            return 1;
        }
    };
    match run_steps(&cfg, args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ibench: {e}");
            1
        }
    }
}

fn check_db_dir(cfg: &Config) -> Result<(), String> {
    if !cfg.steps.contains(&Step::LoadI0) {
        if !cfg.db.is_dir() {
            return Err(format!("--db={} does not exist (run l.i0 first)", cfg.db.display()));
        }
        return Ok(());
    }
    match std::fs::read_dir(&cfg.db) {
        Ok(mut rd) => {
            if rd.next().is_some() {
                return Err(format!(
                    "--db={} is not empty; l.i0 needs a new database (remove it or drop l.i0)",
                    cfg.db.display()
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("--db={}: {e}", cfg.db.display())),
    }
}

/// Without `l.i0`: every table must be in `--db`, with the secondary indexes the steps
/// need ([`step_order::check`] with the count found).
fn check_tables(cfg: &Config, backend: &dyn IbenchBackend) -> Result<(), String> {
    if cfg.steps.contains(&Step::LoadI0) {
        return Ok(());
    }
    for c in 0..cfg.tables() {
        let Some(n) = backend.secondary_indexes(c)? else {
            return Err(format!(
                "--db={} has no table {} (made by l.i0 with fewer --clients, or by another \
                 tool?)",
                cfg.db.display(),
                schema::table_name(c)
            ));
        };
        step_order::check(&cfg.steps, cfg.secondary_indexes, Some(n)).map_err(|e| {
            format!(
                "--db={} ({} has {n} secondary indexes): {e}",
                cfg.db.display(),
                schema::table_name(c)
            )
        })?;
    }
    Ok(())
}

type Opened = (Box<dyn IbenchBackend>, Option<OptionsReport>);

/// The backend of `cfg.engine`, and the options comparison of an engine that makes one.
fn open_backend(cfg: &Config) -> Result<Opened, String> {
    let create = cfg.steps.contains(&Step::LoadI0);
    fn boxed<B: IbenchBackend + 'static>(
        r: Result<(B, Option<OptionsReport>), String>,
    ) -> Result<Opened, String> {
        r.map(|(b, o)| (Box::new(b) as Box<dyn IbenchBackend>, o))
    }
    match cfg.engine {
        EngineKind::Talus => boxed(table_backend::TableBackend::<talus::Db>::open(cfg)),
        #[cfg(feature = "rocksdb")]
        EngineKind::RocksDb => {
            boxed(table_backend::TableBackend::<talus_table::storage::rocksdb::RocksDb>::open(cfg))
        }
        #[cfg(not(feature = "rocksdb"))]
        EngineKind::RocksDb => Err(crate::table_engines::ROCKSDB_NOT_BUILT.to_string()),
        EngineKind::Sqlite => boxed(
            sqlite::SqliteBackend::open(
                &cfg.db,
                cfg.cache_size,
                cfg.sync,
                create,
                cfg.db_options.io_limits,
            )
            .map(|b| (b, None)),
        ),
    }
}

fn run_steps(cfg: &Config, args: &[String]) -> Result<(), String> {
    // Read-only checks first, then the open (the LOCK), then the tables, and only then files.
    if let Some(dir) = &cfg.results {
        crate::precheck::output_dir("--results", dir)?;
    }
    check_db_dir(cfg)?;
    let (backend, options) = open_backend(cfg)?;
    check_tables(cfg, backend.as_ref())?;
    if let Some(dir) = &cfg.results {
        results::write_run(dir, cfg, args)?;
    }
    println!(
        "ibench: engine={} db={} clients={}{} steps={} secondary_indexes={}{}",
        cfg.engine.name(),
        cfg.db.display(),
        cfg.clients,
        if cfg.shared_table { " (one shared table)" } else { "" },
        cfg.steps.iter().map(|s| s.name()).collect::<Vec<_>>().join(","),
        cfg.secondary_indexes,
        if cfg.unique_index { " (the first unique)" } else { "" },
    );
    crate::table_engines::announce("ibench", options.as_ref(), cfg.results.as_deref())?;
    let pagecache = (cfg.drop_page_cache_ms > 0).then(|| {
        let every = std::time::Duration::from_millis(cfg.drop_page_cache_ms);
        pagecache::PageCacheDropper::start(cfg.db.clone(), every)
    });
    for (i, step) in cfg.steps.iter().enumerate() {
        let (summary, out) =
            steps::run_step(cfg, backend.as_ref(), *step, i as u64 + 1, pagecache.as_ref())?;
        print!("{}{}", check::lines(&out.checksums), summary.lines());
        if let Some(dir) = &cfg.results {
            results::write_step(dir, &summary, &out.intervals, cfg.clients)?;
            if *step == Step::Check {
                let path = dir.join("check.csv");
                std::fs::write(&path, check::csv(&out.checksums))
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
            }
            if let Some(text) = &summary.stats_text {
                let path = dir.join(format!("{}.stats.txt", summary.step));
                std::fs::write(&path, text)
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
            }
        }
    }
    backend.close()
}
