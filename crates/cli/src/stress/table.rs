//! `talus stress --workload=table`: random inserts, updates, deletes and small transactions on
//! a table with two secondary indexes (and, once per run, `drop_index` + `create_index` of a
//! third on the populated table, so kills also hit index builds), checking after every (re)open and at the end that every index holds
//! exactly the entries derived from the rows (`talus_table::Table::verify_indexes`).
//!
//! There is no expected-state oracle for row contents here: the invariant checked is the
//! table layer's own (rows and index entries are written in one batch, a crash in the middle
//! of an index build leaves no index or a complete one). A duplicate-key refusal is an
//! expected outcome of a random insert; every other error fails the run with exit code 3, and
//! an inconsistent index with exit code 1. Threads share nothing but the table handle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus_table::{
    Catalog, ColumnDef, ColumnType, CreateIndexOptions, Direction, IndexDef, Row, Table, TableDef,
    TableError, Value,
};

use super::config::Config;
use super::Failure;

const TABLE: &str = "stress";
/// The index built during the run (on a populated table).
const BUILT: &str = "by_c";

fn schema() -> TableDef {
    let col = |name: &str, ty, nullable| ColumnDef { name: name.into(), ty, nullable };
    let idx = |name: &str, cols: &[&str]| IndexDef {
        name: name.into(),
        columns: cols.iter().map(|c| c.to_string()).collect(),
        unique: false,
    };
    TableDef {
        name: TABLE.into(),
        columns: vec![
            col("id", ColumnType::I64, false),
            col("a", ColumnType::I32, true),
            col("b", ColumnType::Varchar, false),
            col("c", ColumnType::I64, false),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![idx("by_a", &["a"]), idx("by_bc", &["b", "c DESC"])],
    }
}

fn random_row(rng: &mut StdRng, max_key: u64) -> Row {
    let id = rng.gen_range(0..max_key) as i64;
    let a = if rng.gen_bool(0.1) { Value::Null } else { Value::I32(rng.gen_range(0..100)) };
    let b = Value::Varchar(format!("b{}", rng.gen_range(0..50)));
    vec![Value::I64(id), a, b, Value::I64(rng.gen_range(0..1_000_000))]
}

fn db_err(e: TableError) -> Failure {
    Failure::Db(format!("table {TABLE}: {e}"))
}

/// Verifies every index of the table and prints the `stress-verify:` line the driver reads.
fn verify(t: &Table, phase: &str) -> Result<(), Failure> {
    let t0 = Instant::now();
    match t.verify_indexes() {
        Ok(rows) => {
            println!(
                "stress-verify: phase={phase} mode=table rows={rows} indexes={} lost_acked=0 \
                 lost_allowed=0 pending_applied=0 ms={}",
                t.def().indexes.len(),
                t0.elapsed().as_millis()
            );
            Ok(())
        }
        Err(TableError::Corruption { detail }) => Err(Failure::Verify(detail)),
        Err(e) => Err(db_err(e)),
    }
}

/// One worker run of the table workload.
pub fn worker(cfg: &Config) -> Result<(), Failure> {
    let t0 = Instant::now();
    let db = talus::Db::open(&cfg.db, cfg.db_options().map_err(Failure::Db)?)
        .map_err(|e| Failure::Db(format!("opening {}: {e}", cfg.db.display())))?;
    let cat = Catalog::open(db).map_err(db_err)?;
    let t = match cat.table(TABLE) {
        Ok(t) => t,
        Err(TableError::NoSuchTable(_)) => cat.create_table(schema()).map_err(db_err)?,
        Err(e) => return Err(db_err(e)),
    };
    println!("stress: opened {} in {} ms", cfg.db.display(), t0.elapsed().as_millis());
    verify(&t, "open")?;
    if cfg.verify_only {
        return Ok(());
    }
    println!("stress: workload started (seed {})", cfg.seed);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(cfg.duration);
    let failure = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for i in 0..cfg.threads {
            let (t, cat, stop, ops, failure) = (&t, &cat, &stop, &ops, &failure);
            let seed = cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i as u64);
            s.spawn(move || {
                let r = thread(cfg, cat, t, i, seed, stop, ops, deadline);
                if let Err(e) = r {
                    stop.store(true, Ordering::Relaxed);
                    failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let st = cat.stats();
    println!(
        "stress: workload done: ops={} inserted={} updated={} deleted={} point_reads={} \
         index_entries={}",
        ops.load(Ordering::Relaxed),
        st.rows_inserted,
        st.rows_updated,
        st.rows_deleted,
        st.point_reads,
        st.index_entries_written
    );
    let t = cat.table(TABLE).map_err(db_err)?;
    verify(&t, "end")
}

#[allow(clippy::too_many_arguments)]
fn thread(
    cfg: &Config,
    cat: &Catalog,
    t: &Table,
    i: usize,
    seed: u64,
    stop: &AtomicBool,
    ops: &AtomicU64,
    deadline: Instant,
) -> Result<(), Failure> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut last_progress = Instant::now();
    let build_at = Instant::now() + Duration::from_millis(500);
    let mut rebuilt = false;
    for n in 0..cfg.ops_per_thread {
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            break;
        }
        if i == 0 && !rebuilt && Instant::now() >= build_at {
            // Drop and rebuild an index on the populated table while the other threads
            // write, once per run, so that kills also land in the middle of a build.
            match cat.drop_index(TABLE, BUILT) {
                Ok(()) | Err(TableError::NoSuchIndex(_)) => {}
                Err(e) => return Err(db_err(e)),
            }
            println!("stress: building index {BUILT}");
            let def = IndexDef { name: BUILT.into(), columns: vec!["c".into()], unique: false };
            let o = CreateIndexOptions { sort_memory_bytes: 1 << 20, temp_dir: None };
            match cat.create_index(TABLE, def, &o) {
                Ok(()) => println!("stress: index {BUILT} built"),
                Err(e) => return Err(db_err(e)),
            }
            rebuilt = true;
        }
        let r = match rng.gen_range(0..100) {
            0..=39 => t.insert(&random_row(&mut rng, cfg.max_key)).map(|_| ()),
            40..=64 => t.update(&random_row(&mut rng, cfg.max_key)).map(|_| ()),
            65..=79 => t.delete(&[Value::I64(rng.gen_range(0..cfg.max_key) as i64)]).map(|_| ()),
            80..=89 => {
                let mut tx = cat.begin();
                let mut r = Ok(());
                for _ in 0..rng.gen_range(1..5) {
                    let row = random_row(&mut rng, cfg.max_key);
                    r = match rng.gen_range(0..3) {
                        0 => tx.insert(t, &row),
                        1 => tx.update(t, &row).map(|_| ()),
                        _ => tx.delete(t, &row[..1]).map(|_| ()),
                    };
                    if r.is_err() {
                        break;
                    }
                }
                match r {
                    Ok(()) if rng.gen_bool(0.9) => tx.commit(),
                    Ok(()) => {
                        tx.rollback();
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            90..=97 => {
                let from = [Value::I32(rng.gen_range(0..100))];
                let dir = if rng.gen_bool(0.5) { Direction::Forward } else { Direction::Reverse };
                t.scan("by_a", &from, 10, dir).map(|_| ())
            }
            _ => {
                if cfg.flush_one_in > 0 && n % 4 == 0 {
                    cat.db().flush().map_err(TableError::from)
                } else {
                    t.get(&[Value::I64(rng.gen_range(0..cfg.max_key) as i64)]).map(|_| ())
                }
            }
        };
        match r {
            Ok(()) | Err(TableError::DuplicateKey { .. }) | Err(TableError::Conflict { .. }) => {}
            Err(TableError::Corruption { detail }) => return Err(Failure::Verify(detail)),
            Err(e) => return Err(db_err(e)),
        }
        let total = ops.fetch_add(1, Ordering::Relaxed) + 1;
        if i == 0 && last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            println!("stress: progress ops={total}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
    }
    Ok(())
}
