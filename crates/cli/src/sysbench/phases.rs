//! The commands on one engine: `prepare` (create, load, index), `run` (each test for `--time`
//! seconds or `--events` events through [`crate::oltp::driver`], with the process's CPU taken
//! around it by getrusage) and `check` (every table against its index).
//! Called by [`super::run`] with the engine type chosen by `--engine`.

use std::sync::atomic::AtomicI64;
use std::time::Instant;

use parking_lot::Mutex;
use talus_table::{Row, Scan};

use super::config::Config;
use super::events::{max_id, Worker};
use super::output::{
    cpu_block, interval_header, interval_line, interval_row, summary_block, summary_row, COUNTERS,
    ERRORS, OTHER, READS, SUMMARY_HEADER, WRITES,
};
use super::schema::{all_tables, k_index, table_def, table_name, SbRand};
use crate::oltp::cpu;
use crate::oltp::driver::{run_timed, timed, Plan, Recorder};
use crate::oltp::engine::{Engine, OResult, OltpError, OpenMode, RowExt, Session, SessionPool};
use crate::oltp::results;

fn seed(cfg: &Config) -> u64 {
    if cfg.seed != 0 {
        return cfg.seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

fn msg(e: OltpError) -> String {
    e.to_string()
}

/// Rows per insert batch while loading (sysbench's bulk insert size).
const LOAD_BATCH: u64 = 1000;

/// Creates the tables, loads them (threads take tables round robin) and builds each `k` index.
pub fn prepare<E: Engine>(cfg: &Config) -> Result<(), String> {
    let defs: Vec<_> = (1..=cfg.tables).map(|n| table_def(n, false)).collect();
    let engine =
        E::open(&cfg.db, &cfg.engine_opts, &defs, OpenMode::Create, cfg.threads).map_err(msg)?;
    crate::table_engines::announce("prepare", engine.options_report(), None)?;
    let t0 = Instant::now();
    let seed = seed(cfg);
    std::thread::scope(|s| -> Result<(), String> {
        let mut hs = Vec::new();
        for th in 0..cfg.threads.min(cfg.tables) {
            let engine = &engine;
            hs.push(s.spawn(move || -> OResult<()> {
                let mut sess = engine.session()?;
                let mut rng = SbRand::new(seed, th as u64);
                for t in (th..cfg.tables).step_by(cfg.threads) {
                    println!("Inserting {} records into '{}'", cfg.table_size, table_name(t + 1));
                    let mut id = 1u64;
                    while id <= cfg.table_size {
                        let end = (id + LOAD_BATCH).min(cfg.table_size + 1);
                        let rows: Vec<Row> =
                            (id..end).map(|i| rng.row(i as i64, cfg.table_size)).collect();
                        sess.insert_many(t, &rows)?;
                        id = end;
                    }
                }
                Ok(())
            }));
        }
        for h in hs {
            h.join().map_err(|_| "a loader thread panicked".to_string())?.map_err(msg)?;
        }
        Ok(())
    })?;
    let load_secs = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    for t in 0..cfg.tables {
        println!("Creating a secondary index on '{}'...", table_name(t + 1));
        engine.create_index(t, &k_index(t + 1)).map_err(msg)?;
    }
    let index_secs = t1.elapsed().as_secs_f64();
    engine.flush().map_err(msg)?;
    let rows = cfg.tables as u64 * cfg.table_size;
    println!(
        "prepare: engine={} {rows} rows in {load_secs:.1}s ({:.0} rows/s), indexes in \
         {index_secs:.1}s, {} bytes on disk",
        E::NAME,
        rows as f64 / load_secs.max(1e-9),
        engine.disk_size()
    );
    Ok(())
}

/// Runs every test of `cfg.tests` in turn.
pub fn run<E: Engine>(cfg: &Config, argv: &[String]) -> Result<(), String> {
    // The results folder is checked before the open and written after it (the LOCK first).
    if let Some(dir) = &cfg.results {
        crate::precheck::output_dir("--results", dir)?;
    }
    let defs = all_tables(cfg.tables);
    let engine =
        E::open(&cfg.db, &cfg.engine_opts, &defs, OpenMode::Existing, cfg.threads).map_err(msg)?;
    if let Some(dir) = &cfg.results {
        results::write_run(dir, "talus sysbench", E::NAME, argv, &super::config::describe(cfg))?;
        results::remove(dir, "summary.csv")?;
    }
    println!("talus sysbench: engine={} db={}", E::NAME, cfg.db.display());
    crate::table_engines::announce(
        "talus sysbench",
        engine.options_report(),
        cfg.results.as_deref(),
    )?;
    println!();
    println!("Running the test with following options:");
    println!("Number of threads: {}", cfg.threads);
    if cfg.report_interval > 0.0 {
        println!("Report intermediate results every {} second(s)", cfg.report_interval);
    }
    let base_seed = seed(cfg);
    println!("Initializing random number generator from seed ({base_seed}).\n");
    // One session per thread for the whole command: caches stay warm from test to test.
    let pool = SessionPool::new(cfg.threads);
    if cfg.prewarm {
        prewarm(&engine, &pool, cfg)?;
    }
    for (ti, test) in cfg.tests.iter().enumerate() {
        let next_ids: Vec<AtomicI64> = {
            let mut s = engine.session().map_err(msg)?;
            (0..cfg.tables)
                .map(|t| max_id(&mut s, t).map(|m| AtomicI64::new(m + 1)))
                .collect::<OResult<_>>()
                .map_err(msg)?
        };
        let label = test.label();
        println!("== {label} ({})\nThreads started!\n", test.group.name());
        let mut intervals = Vec::new();
        let plan = Plan {
            threads: cfg.threads,
            secs: cfg.time,
            events: cfg.events,
            interval: cfg.report_interval,
            kinds: 1,
            counters: COUNTERS,
        };
        let seed = base_seed.wrapping_add(ti as u64 * 1_000_003);
        let kind = test.kind;
        let worker = |th: usize| {
            let sess = pool.lease(&engine, th).map_err(msg)?;
            let mut w = Worker::new(sess, cfg, &next_ids, seed, th as u64);
            Ok(move |rec: &Mutex<Recorder>| -> Result<(), String> {
                let (r, us) = timed(|| w.event(kind));
                match r {
                    Ok(c) => {
                        let mut rec = rec.lock();
                        rec.event(0, us);
                        rec.add(READS, c[0]);
                        rec.add(WRITES, c[1]);
                        rec.add(OTHER, c[2]);
                        Ok(())
                    }
                    Err(OltpError::Conflict(_) | OltpError::Duplicate(_)) => {
                        w.session.rollback().map_err(msg)?;
                        rec.lock().add(ERRORS, 1);
                        Ok(())
                    }
                    Err(OltpError::Failed(m)) => Err(m),
                }
            })
        };
        if cfg.warmup_time > 0.0 {
            let warm = Plan { secs: cfg.warmup_time, events: 0, interval: 0.0, ..plan };
            run_timed(warm, worker, |_| {})?;
        }
        let cpu0 = cpu::process();
        let engine_state = || crate::engine_state::sample(&|name: &str| engine.property(name));
        let mut last_state = engine_state();
        let totals = run_timed(plan, worker, |iv| {
            println!("{}", interval_line(cfg.threads, iv));
            let now_state = engine_state();
            intervals
                .push(interval_row(iv, &crate::engine_state::between(&last_state, &now_state)));
            last_state = now_state;
        })?;
        let cpu = cpu0.zip(cpu::process()).map(|(a, b)| b.since(&a));
        println!("\n{}", summary_block(&totals));
        println!("{}", cpu_block(&totals, cpu.as_ref()));
        if let Some(dir) = &cfg.results {
            let row = summary_row(
                &label,
                test.group.name(),
                E::NAME,
                cfg.threads,
                &totals,
                engine.disk_size(),
                cpu.as_ref(),
            );
            results::append_row(dir, "summary.csv", SUMMARY_HEADER, &row)?;
            let header = interval_header();
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            results::write_csv(dir, &format!("{label}.intervals.csv"), &header, &intervals)?;
        }
    }
    Ok(())
}

/// Reads every table once (its rows and its `k` index) on every thread's session, so the
/// caches (Talus's shared block cache, each SQLite connection's page cache) start warm.
fn prewarm<E: Engine>(
    engine: &E,
    pool: &SessionPool<E::Session>,
    cfg: &Config,
) -> Result<(), String> {
    let t0 = Instant::now();
    let rows = std::thread::scope(|s| -> Result<u64, String> {
        let hs: Vec<_> = (0..cfg.threads)
            .map(|th| {
                s.spawn(move || -> OResult<u64> {
                    let mut sess = pool.lease(engine, th)?;
                    let mut n = 0u64;
                    for t in 0..cfg.tables {
                        let ix = k_index(t + 1).name;
                        sess.scan(t, &Scan::index("PRIMARY"), |_| n += 1)?;
                        let by_k =
                            Scan { index: &ix, columns: Some(&["k", "id"]), ..Scan::index("") };
                        sess.scan(t, &by_k, |_| n += 1)?;
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut n = 0;
        for h in hs {
            n += h.join().map_err(|_| "a prewarm thread panicked".to_string())?.map_err(msg)?;
        }
        Ok(n)
    })?;
    println!("prewarm: {rows} rows and index entries read in {:.1}s\n", t0.elapsed().as_secs_f64());
    Ok(())
}

/// Opens the database, makes everything written durable in its files and compacts it
/// ([`Engine::compact`]), so the next process replays no log and finds no compaction pending
/// (bench/regress.py settles the database with it before each counted step).
pub fn flush<E: Engine>(cfg: &Config) -> Result<(), String> {
    let defs = all_tables(cfg.tables);
    let engine = E::open(&cfg.db, &cfg.engine_opts, &defs, OpenMode::Existing, 1).map_err(msg)?;
    engine.compact().map_err(msg)?;
    println!("flush: engine={} db={} flushed and compacted", E::NAME, cfg.db.display());
    Ok(())
}

/// Checks every table: the rows (by primary key) and the `k` index (covering scan) hold the
/// same `(k, id)` pairs, the row count is `--expect_rows` when given, and the engine's own
/// check passes. Fails naming the first difference.
pub fn check<E: Engine>(cfg: &Config) -> Result<(), String> {
    let defs = all_tables(cfg.tables);
    let engine = E::open(&cfg.db, &cfg.engine_opts, &defs, OpenMode::Existing, 1).map_err(msg)?;
    let mut s = engine.session().map_err(msg)?;
    for t in 0..cfg.tables {
        let name = table_name(t + 1);
        let mut from_rows: Vec<(i64, i64)> = Vec::new();
        let mut bad: Option<String> = None;
        let pk = Scan { columns: Some(&["id", "k"]), ..Scan::index("PRIMARY") };
        s.scan(t, &pk, |r| match (r.int(0), r.int(1)) {
            (Ok(id), Ok(k)) => from_rows.push((k, id)),
            (Err(e), _) | (_, Err(e)) => {
                bad.get_or_insert(e.to_string());
            }
        })
        .map_err(msg)?;
        let ix = k_index(t + 1).name;
        let by_k = Scan { index: &ix, columns: Some(&["k", "id"]), ..Scan::index("") };
        let mut from_index: Vec<(i64, i64)> = Vec::new();
        s.scan(t, &by_k, |r| match (r.int(0), r.int(1)) {
            (Ok(k), Ok(id)) => from_index.push((k, id)),
            (Err(e), _) | (_, Err(e)) => {
                bad.get_or_insert(e.to_string());
            }
        })
        .map_err(msg)?;
        if let Some(e) = bad {
            return Err(format!("check: {name}: {e}"));
        }
        if !from_index.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!("check: {name}: index {ix} is not in (k, id) order"));
        }
        from_rows.sort_unstable();
        if from_rows != from_index {
            let first = from_rows.iter().zip(&from_index).position(|(a, b)| a != b);
            return Err(format!(
                "check: {name}: {} rows but {} entries in index {ix}; first difference at \
                 position {first:?}",
                from_rows.len(),
                from_index.len()
            ));
        }
        if let Some(want) = cfg.expect_rows {
            if from_rows.len() as u64 != want {
                return Err(format!("check: {name}: {} rows, expected {want}", from_rows.len()));
            }
        }
        println!("check: {name}: {} rows, index {ix} matches the rows", from_rows.len());
    }
    println!("check: {}", engine.verify().map_err(msg)?);
    let sums = crate::oltp::checksum::table_checksums(&engine, &defs).map_err(msg)?;
    print!("{}", crate::oltp::checksum::lines(&sums));
    println!("check: ok");
    Ok(())
}
