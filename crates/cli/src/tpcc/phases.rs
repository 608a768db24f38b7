//! `prepare`, `run` and `check` on one engine (the type `--engine` chose). Called by
//! [`super::run`].

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use talus_table::{Direction, Scan};

use super::check::check as check_conditions;
use super::config::Config;
use super::load::{load_items, load_warehouse};
use super::output::{
    final_block, interval_header, interval_line, interval_row, summary_header, summary_row,
    COUNTERS, ROLLBACKS,
};
use super::random::TpccRand;
use super::schema::{tables, HISTORY};
use super::txns::{draw, exec, Kind, Outcome, KINDS};
use crate::oltp::driver::{run_timed, Plan, Recorder};
use crate::oltp::engine::{Engine, OResult, OltpError, OpenMode, RowExt, Session};
use crate::oltp::results;

fn msg(e: OltpError) -> String {
    e.to_string()
}

fn seed(cfg: &Config) -> u64 {
    if cfg.seed != 0 {
        return cfg.seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// Creates the tables and loads the warehouses (threads take warehouses round robin).
pub fn prepare<E: Engine>(cfg: &Config) -> Result<(), String> {
    let engine = E::open(&cfg.db, &cfg.engine_opts, &tables(), OpenMode::Create, cfg.threads)
        .map_err(msg)?;
    crate::table_engines::announce("prepare", engine.options_report(), None)?;
    let t0 = Instant::now();
    let seed = seed(cfg);
    let threads = cfg.threads.min(cfg.warehouses as usize).max(1);
    let rows = std::thread::scope(|s| -> Result<u64, String> {
        let hs: Vec<_> = (0..threads)
            .map(|th| {
                let engine = &engine;
                s.spawn(move || -> OResult<u64> {
                    let mut sess = engine.session()?;
                    let mut r = TpccRand::new(seed, th as u64);
                    let mut n = 0;
                    if th == 0 {
                        n += load_items(&mut sess, cfg, &mut r)?;
                    }
                    for wid in (th as i64 + 1..=cfg.warehouses).step_by(threads) {
                        let t = Instant::now();
                        n += load_warehouse(&mut sess, cfg, wid, &mut r)?;
                        println!("loaded warehouse {wid} in {:.1}s", t.elapsed().as_secs_f64());
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut n = 0;
        for h in hs {
            n += h.join().map_err(|_| "a loader thread panicked".to_string())?.map_err(msg)?;
        }
        Ok(n)
    })?;
    engine.flush().map_err(msg)?;
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "prepare: engine={} warehouses={} {rows} rows in {secs:.1}s ({:.0} rows/s), {:.1} MiB \
         on disk",
        E::NAME,
        cfg.warehouses,
        rows as f64 / secs.max(1e-9),
        engine.disk_size() as f64 / 1048576.0
    );
    Ok(())
}

/// The largest history id (new history rows continue after it).
fn max_history_id<S: Session>(s: &mut S) -> OResult<i64> {
    let mut max = Ok(0);
    let sc = Scan {
        dir: Direction::Reverse,
        columns: Some(&["h_id"]),
        limit: 1,
        ..Scan::index("PRIMARY")
    };
    s.scan(HISTORY, &sc, |r| max = r.int(0))?;
    max
}

/// Runs the mix, prints and saves the results, then checks the consistency conditions.
pub fn run<E: Engine>(cfg: &Config, argv: &[String]) -> Result<(), String> {
    // The results folder is checked before the open and written after it (the LOCK first).
    if let Some(dir) = &cfg.results {
        crate::precheck::output_dir("--results", dir)?;
    }
    let engine = E::open(&cfg.db, &cfg.engine_opts, &tables(), OpenMode::Existing, cfg.threads)
        .map_err(msg)?;
    if let Some(dir) = &cfg.results {
        results::write_run(dir, "talus tpcc", E::NAME, argv, &super::config::describe(cfg))?;
        results::remove(dir, "summary.csv")?;
    }
    crate::table_engines::announce("tpcc", engine.options_report(), cfg.results.as_deref())?;
    let h_id = {
        let mut s = engine.session().map_err(msg)?;
        AtomicI64::new(max_history_id(&mut s).map_err(msg)? + 1)
    };
    let seed = seed(cfg);
    println!(
        "talus tpcc: engine={} db={} warehouses={} threads={} time={}s seed={seed}",
        E::NAME,
        cfg.db.display(),
        cfg.warehouses,
        cfg.threads,
        cfg.time
    );
    let plan = Plan {
        threads: cfg.threads,
        secs: cfg.time,
        events: 0,
        interval: cfg.report_interval,
        kinds: KINDS.len(),
        counters: COUNTERS,
    };
    let mut intervals = Vec::new();
    let engine_state = || crate::engine_state::sample(&|name: &str| engine.property(name));
    let mut last_state = engine_state();
    let totals = run_timed(
        plan,
        |th| {
            let mut sess = engine.session().map_err(msg)?;
            let mut r = TpccRand::new(seed, th as u64 + 1);
            let h_id = &h_id;
            Ok(move |rec: &Mutex<Recorder>| -> Result<(), String> {
                let kind = Kind::draw(&mut r);
                let input = draw(kind, &mut r, cfg);
                let t = Instant::now();
                let mut tries = 0;
                let outcome = loop {
                    let id = if kind == Kind::Payment {
                        h_id.fetch_add(1, Ordering::Relaxed)
                    } else {
                        0
                    };
                    match exec(&mut sess, &input, cfg, id) {
                        Ok(o) => break o,
                        Err(OltpError::Conflict(_) | OltpError::Duplicate(_)) => {
                            sess.rollback().map_err(msg)?;
                            tries += 1;
                        }
                        Err(OltpError::Failed(m)) => {
                            let _ = sess.rollback();
                            return Err(format!("{}: {m}", kind.name()));
                        }
                    }
                };
                let us = t.elapsed().as_micros() as u64;
                let mut rec = rec.lock();
                rec.event(kind as usize, us);
                rec.add(kind as usize, tries);
                if outcome == Outcome::RolledBack {
                    rec.add(ROLLBACKS, 1);
                }
                Ok(())
            })
        },
        |iv| {
            println!("{}", interval_line(iv));
            let now_state = engine_state();
            let state = crate::engine_state::between(&last_state, &now_state);
            last_state = now_state;
            intervals.push(interval_row(iv, engine.disk_size(), &state));
        },
    )?;
    let db_bytes = engine.disk_size();
    print!("\n{}", final_block(E::NAME, cfg.warehouses, cfg.threads, &totals, db_bytes));
    let verdict = if cfg.skip_check {
        None
    } else {
        let mut s = engine.session().map_err(msg)?;
        Some(check_conditions(&mut s, cfg))
    };
    if let Some(dir) = &cfg.results {
        let ok = matches!(verdict, Some(Ok(_)));
        let row = summary_row(E::NAME, cfg.warehouses, cfg.threads, &totals, db_bytes, ok);
        let header = summary_header();
        let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
        results::append_row(dir, "summary.csv", &hdr, &row)?;
        let ih = interval_header();
        let ihdr: Vec<&str> = ih.iter().map(String::as_str).collect();
        results::write_csv(dir, "run.intervals.csv", &ihdr, &intervals)?;
        if let Some(text) = engine.stats_text() {
            let path = dir.join("engine_stats.txt");
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    report(verdict)
}

fn report(verdict: Option<Result<Vec<String>, String>>) -> Result<(), String> {
    match verdict {
        None => Ok(()),
        Some(Ok(lines)) => {
            println!("\nconsistency checks:");
            for l in lines {
                println!("    {l}");
            }
            println!("consistency: ok");
            Ok(())
        }
        Some(Err(e)) => Err(format!("CONSISTENCY CHECK FAILED: {e}")),
    }
}

/// Checks the consistency conditions only.
pub fn check<E: Engine>(cfg: &Config) -> Result<(), String> {
    let engine =
        E::open(&cfg.db, &cfg.engine_opts, &tables(), OpenMode::Existing, 1).map_err(msg)?;
    let mut s = engine.session().map_err(msg)?;
    let t = Instant::now();
    let r = check_conditions(&mut s, cfg);
    println!("checked in {:.1}s", t.elapsed().as_secs_f64());
    let sums = crate::oltp::checksum::table_checksums(&engine, &tables()).map_err(msg)?;
    print!("{}", crate::oltp::checksum::lines(&sums));
    report(Some(r))
}
