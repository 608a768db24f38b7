//! The power-loss campaign (issue 34): many histories on `SimFs`, each a few rounds of random
//! writes (batches, deletes and range deletions; a share synced), flushes and compactions under
//! randomly drawn options (write buffer, compaction style, recovery mode), each round ended by a
//! power loss at that moment (background flushes and compactions may be mid-job) that keeps a
//! random part of what was not synced (or none of it). After each, the database must reopen and
//! hold a prefix of the acknowledged writes, at least up to the last synced write or completed
//! flush: a shorter prefix counts as lost acknowledged writes, a state that is no prefix (a
//! hole, an invented value) as wrong values; a panic is counted too, and the campaign goes on.
//!
//! `POWER_LOSS_SEQUENCES` (default 150: about a second) sets how many power losses;
//! `POWER_LOSS_SEED` the first seed. `bench/crash_campaign.sh` runs it with 100,000 and more.
//! The summary line: `power-loss campaign: sequences N ..., acknowledged writes lost 0, wrong
//! values 0, panics 0`.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use common::prefixes::random_round;
use common::{read_consistent, tiny_options, Model, SIM_DB};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::fs::fault::{CrashMode, SimFs};
use talus::{CompactionStyle, Db, Options, WalRecoveryMode};

/// What one history found.
#[derive(Default)]
struct Found {
    sequences: u64,
    writes: u64,
    lost: u64,
    wrong: u64,
    failures: Vec<String>,
}

fn options(fs: &Arc<SimFs>, rng: &mut StdRng) -> Options {
    Options {
        compaction_style: if rng.gen_bool(0.3) {
            CompactionStyle::Universal
        } else {
            CompactionStyle::Level
        },
        wal_recovery_mode: if rng.gen_bool(0.8) {
            WalRecoveryMode::PointInTimeRecovery
        } else {
            WalRecoveryMode::TolerateCorruptedTailRecords
        },
        ..tiny_options(fs.clone(), rng.gen_range(4096..65536))
    }
}

/// One history of `rounds` power losses from `seed`.
fn history(seed: u64, rounds: u32, found: &mut Found) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut fs = SimFs::new();
    let opts = options(&fs, &mut rng);
    let mut model = Model::new();
    for round in 0..rounds {
        let ctx = format!("seed {seed} round {round}");
        let db = match Db::open(SIM_DB, Options { fs: fs.clone(), ..opts.clone() }) {
            Ok(db) => db,
            Err(e) => {
                found.wrong += 1;
                found.failures.push(format!("{ctx}: open failed: {e}"));
                return;
            }
        };
        let n = rng.gen_range(5..120);
        let p_sync = [0.02, 0.3, 1.0][rng.gen_range(0..3)];
        let pre = random_round(&db, &mut rng, model.clone(), n, p_sync);
        found.writes += n as u64;
        let mode = if rng.gen_bool(0.75) {
            CrashMode::DropRandomUnsynced { seed: rng.gen() }
        } else {
            CrashMode::DropAllUnsynced
        };
        let next = fs.crash(mode);
        drop(db);
        fs = next;
        found.sequences += 1;
        let reopened = Db::open(SIM_DB, Options { fs: fs.clone(), ..opts.clone() });
        let got = match reopened.map_err(|e| e.to_string()).and_then(|db| read_consistent(&db)) {
            Ok(got) => got,
            Err(e) => {
                found.wrong += 1;
                found.failures.push(format!("{ctx} {mode:?}: reopen or read failed: {e}"));
                return;
            }
        };
        match pre.find(&got) {
            Some(_) => model = got,
            None => {
                let shorter = (0..pre.must_keep).any(|i| pre.states.get(i) == Some(&got));
                if shorter {
                    found.lost += 1;
                } else {
                    found.wrong += 1;
                }
                found.failures.push(format!(
                    "{ctx} {mode:?}: recovered state is no prefix of at least {} of the {} \
                     acknowledged writes ({})",
                    pre.must_keep,
                    pre.states.len() - 1,
                    if shorter { "acknowledged writes lost" } else { "a hole or a wrong value" }
                ));
                return;
            }
        }
    }
}

#[test]
fn power_loss_campaign() {
    let var = |name: &str, default: u64| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let target = var("POWER_LOSS_SEQUENCES", 150);
    let first_seed = var("POWER_LOSS_SEED", 0);
    let start = std::time::Instant::now();
    let mut found = Found::default();
    let mut panics = 0u64;
    let mut seed = first_seed;
    // Panics are counted, not fatal: silence the default hook's backtraces for them.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while found.sequences < target {
        let rounds = 1 + (seed % 3) as u32;
        let result = catch_unwind(AssertUnwindSafe(|| history(seed, rounds, &mut found)));
        if let Err(p) = result {
            panics += 1;
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            found.failures.push(format!("seed {seed}: panic: {msg}"));
            found.sequences += 1;
        }
        seed += 1;
    }
    std::panic::set_hook(hook);
    println!(
        "power-loss campaign: sequences {} (seeds {first_seed}..{seed}, {} writes) in {:.1} s, \
         acknowledged writes lost {}, wrong values {}, panics {panics}",
        found.sequences,
        found.writes,
        start.elapsed().as_secs_f64(),
        found.lost,
        found.wrong
    );
    for f in found.failures.iter().take(20) {
        println!("FAILURE: {f}");
    }
    assert!(found.failures.is_empty(), "{} failures (see above)", found.failures.len());
}
