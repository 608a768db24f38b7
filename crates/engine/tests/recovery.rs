//! Power-loss, fault and open-time tests through `SimFs` (and the real file system where it
//! matters): what a write acknowledged with `sync=true` must survive, what an unsynced write may
//! lose (a suffix, never a hole), and what `Db::open` must refuse.

mod common;

use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use common::prefixes::random_round;
use common::{
    assert_db_eq, b, diff, random_write, read_consistent, tiny_options, Model, WriteOp, SIM_DB,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::{Fs, StdFs};
use talus::{Db, Error, Options};

fn sim_options(fs: &Arc<SimFs>) -> Options {
    tiny_options(fs.clone(), 4096)
}

fn open_sim(fs: &Arc<SimFs>, ctx: &str) -> Db {
    Db::open(SIM_DB, sim_options(fs)).unwrap_or_else(|e| panic!("{ctx}: open failed: {e}"))
}

#[test]
fn sync_writes_survive_power_loss() {
    for seed in 0..16u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut fs = SimFs::new();
        let mut model = Model::new();
        for round in 0..3 {
            let ctx = format!("seed {seed} round {round}");
            let db = open_sim(&fs, &ctx);
            assert_db_eq(&db, &model, &format!("{ctx}: after open"));
            let n = rng.gen_range(10..120);
            let pre = random_round(&db, &mut rng, model.clone(), n, 1.0);
            model = pre.last().clone();
            let next = fs.crash(CrashMode::DropAllUnsynced);
            drop(db);
            fs = next;
        }
        let db = open_sim(&fs, &format!("seed {seed} final"));
        assert_db_eq(&db, &model, &format!("seed {seed}: every synced write"));
    }
}

#[test]
fn unsynced_writes_recover_a_prefix_after_power_loss() {
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let mut fs = SimFs::new();
        let mut model = Model::new();
        for round in 0..4 {
            let ctx = format!("seed {seed} round {round}");
            let db = open_sim(&fs, &ctx);
            assert_db_eq(&db, &model, &format!("{ctx}: after open"));
            let n = rng.gen_range(10..150);
            let pre = random_round(&db, &mut rng, model.clone(), n, 0.05);
            let mode = if rng.gen_bool(0.8) {
                CrashMode::DropRandomUnsynced { seed: rng.gen() }
            } else {
                CrashMode::DropAllUnsynced
            };
            let next = fs.crash(mode);
            drop(db);
            fs = next;
            let db = open_sim(&fs, &format!("{ctx}: after {mode:?}"));
            let got = read_consistent(&db).unwrap_or_else(|e| panic!("{ctx} {mode:?}: {e}"));
            match pre.find(&got) {
                Some(_) => model = got,
                None => panic!(
                    "{ctx} {mode:?}: recovered state is no prefix of at least {} of the {} \
                     acknowledged writes; against all of them:\n{}",
                    pre.must_keep,
                    pre.states.len() - 1,
                    diff(&got, pre.last())
                ),
            }
        }
    }
}

#[test]
fn process_crash_keeps_every_acknowledged_write() {
    for seed in 0..8u64 {
        let mut rng = StdRng::seed_from_u64(2000 + seed);
        let mut fs = SimFs::new();
        let mut model = Model::new();
        for round in 0..3 {
            let ctx = format!("seed {seed} round {round}");
            let db = open_sim(&fs, &ctx);
            let n = rng.gen_range(10..150);
            model = random_round(&db, &mut rng, model.clone(), n, 0.0).last().clone();
            let next = fs.crash(CrashMode::KeepUnsynced);
            drop(db);
            fs = next;
            let db = open_sim(&fs, &ctx);
            assert_db_eq(&db, &model, &format!("{ctx}: after a process crash"));
        }
    }
}

#[test]
fn open_locked_db_twice_is_refused() {
    let sim = SimFs::new();
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("db");
    let cases: [(Arc<dyn Fs>, &Path); 2] = [(sim, Path::new(SIM_DB)), (Arc::new(StdFs), &real)];
    for (fs, path) in cases {
        let first = Db::open(path, tiny_options(fs.clone(), 4096)).unwrap();
        first.put(b"k", b"v").unwrap();
        match Db::open(path, tiny_options(fs.clone(), 4096)) {
            Err(Error::Locked(_)) => {}
            Err(e) => panic!("second open of {}: want Locked, got {e}", path.display()),
            Ok(_) => panic!("second open of {} succeeded while the first is open", path.display()),
        }
        drop(first);
        let again = Db::open(path, tiny_options(fs, 4096)).unwrap();
        assert_eq!(again.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}

#[test]
fn missing_db_without_create_if_missing_fails_and_creates_nothing() {
    let sim = SimFs::new();
    let opts = Options { create_if_missing: false, ..sim_options(&sim) };
    assert!(Db::open("/nope", opts).is_err());
    assert!(!sim.exists(Path::new("/nope")));
    assert!(sim.files().is_empty(), "created {:?}", sim.files());

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nope");
    let opts = Options { create_if_missing: false, ..tiny_options(Arc::new(StdFs), 4096) };
    assert!(Db::open(&path, opts).is_err());
    assert!(!path.exists());

    // And `error_if_exists` refuses an existing database.
    drop(open_sim(&sim, "create"));
    let opts = Options { error_if_exists: true, ..sim_options(&sim) };
    assert!(Db::open(SIM_DB, opts).is_err());
}

#[test]
fn invalid_options_are_refused_naming_the_option() {
    let sim = SimFs::new();
    let cases = [
        ("write_buffer_size", Options { write_buffer_size: 0, ..sim_options(&sim) }),
        ("num_levels", Options { num_levels: 0, ..sim_options(&sim) }),
    ];
    for (name, opts) in cases {
        match Db::open(SIM_DB, opts) {
            Err(e @ Error::InvalidArgument(_)) => {
                assert!(e.to_string().contains(name), "{name}: error does not name it: {e}")
            }
            Err(e) => panic!("{name}: want InvalidArgument, got {e}"),
            Ok(_) => panic!("{name}: invalid option accepted"),
        }
        assert!(sim.files().is_empty(), "{name}: refused open created {:?}", sim.files());
    }
}

/// What the fault workload did before its first error.
struct Outcome {
    db: Option<Db>,
    /// Writes acknowledged (all with `sync=true`).
    acked: Vec<WriteOp>,
    /// The write that failed, if a write failed: it may or may not have reached the disk.
    failed: Option<WriteOp>,
}

/// A fixed workload: open, synced writes big enough to switch memtables, a flush, a manual
/// compaction, more writes. Stops at the first error.
fn fault_workload(fs: &Arc<SimFs>) -> Outcome {
    let mut out = Outcome { db: None, acked: Vec::new(), failed: None };
    let Ok(db) = Db::open(SIM_DB, sim_options(fs)) else { return out };
    let db = out.db.insert(db);
    let mut rng = StdRng::seed_from_u64(42);
    for i in 0..100 {
        // Values of a few hundred bytes: memtables switch and compactions start on their own.
        let w = match random_write(&mut rng) {
            WriteOp::Put(k, _) => WriteOp::Put(k, vec![i as u8; rng.gen_range(100..400)].into()),
            w => w,
        };
        if w.exec(db, true).is_err() {
            out.failed = Some(w);
            return out;
        }
        out.acked.push(w);
        let step = match i {
            30 => db.flush(),
            60 => db.compact_range(None, None),
            _ => Ok(()),
        };
        if step.is_err() {
            return out;
        }
    }
    out
}

/// Cuts the power (so the old handle cannot go on without faults), clears faults, reopens and
/// checks that every acknowledged write is there (and the failed one entirely or not at all)
/// and that the database works.
fn check_after_fault(fs: &Arc<SimFs>, out: Outcome, ctx: &str) {
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    fs.clear_faults();
    fs.clear_capacity();
    drop(out.db);
    let db = open_sim(&fs, &format!("{ctx}: reopen"));
    let got = read_consistent(&db).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let mut want = Model::new();
    out.acked.iter().for_each(|w| w.apply(&mut want));
    if got != want {
        let mut with_failed = want.clone();
        if let Some(w) = &out.failed {
            w.apply(&mut with_failed);
        }
        assert!(
            got == with_failed,
            "{ctx}: lost or invented data ({} acknowledged sync writes):\n{}",
            out.acked.len(),
            diff(&got, &want)
        );
        want = with_failed;
    }
    WriteOp::Put(b(b"after"), b(b"fault")).apply(&mut want);
    db.put(b"after", b"fault").unwrap_or_else(|e| panic!("{ctx}: write after reopen: {e}"));
    db.flush().unwrap_or_else(|e| panic!("{ctx}: flush after reopen: {e}"));
    db.compact_range(None, None).unwrap_or_else(|e| panic!("{ctx}: compact after reopen: {e}"));
    assert_db_eq(&db, &want, &format!("{ctx}: after a write, flush and compaction"));
}

#[test]
fn fail_nth_io_loses_no_acknowledged_sync_write() {
    let fs = SimFs::new();
    let clean = fault_workload(&fs);
    assert!(
        clean.failed.is_none() && clean.acked.len() == 100,
        "the workload fails without faults"
    );
    let total = fs.op_counts().total();
    drop(clean);
    assert!(total > 20, "suspiciously few IOs: {total}");
    let mut injected_runs = 0;
    for n in 1..=total {
        for one_shot in [true, false] {
            let kind = if n % 2 == 0 { ErrorKind::Other } else { ErrorKind::StorageFull };
            let ctx = format!("IO {n} of {total} failing ({kind:?}, one_shot {one_shot})");
            let fs = SimFs::new();
            fs.fail_after(OpFilter::ALL, n, kind, one_shot);
            let out = fault_workload(&fs);
            injected_runs += u64::from(fs.faults_injected() > 0);
            check_after_fault(&fs, out, &ctx);
        }
    }
    // Background jobs make the IO sequence vary a little from run to run, but most runs must
    // really have met their fault.
    assert!(injected_runs >= total, "only {injected_runs} of {} runs met a fault", 2 * total);
}

#[test]
fn disk_full_loses_no_acknowledged_sync_write() {
    for capacity in (2u64..=40).map(|k| k * 2048) {
        let ctx = format!("capacity {capacity}");
        let fs = SimFs::new();
        fs.set_capacity(capacity);
        let out = fault_workload(&fs);
        check_after_fault(&fs, out, &ctx);
    }
}

/// `Db::sync_wal` makes every unsynced write before it durable, across memtable switches (the
/// tiny write buffer switches WALs often, leaving old ones unsynced): after power loss every
/// write is there. Without the call the same history loses writes (the check can fail).
#[test]
fn sync_wal_makes_earlier_unsynced_writes_durable() {
    let mut lost_without = 0;
    for seed in 0..12u64 {
        for call_sync_wal in [true, false] {
            let mut rng = StdRng::seed_from_u64(7000 + seed);
            let fs = SimFs::new();
            let ctx = format!("seed {seed} sync_wal {call_sync_wal}");
            let db = open_sim(&fs, &ctx);
            let n = rng.gen_range(20..200);
            let pre = random_round(&db, &mut rng, Model::new(), n, 0.0);
            if call_sync_wal {
                db.sync_wal().unwrap_or_else(|e| panic!("{ctx}: sync_wal: {e}"));
            }
            let next = fs.crash(CrashMode::DropAllUnsynced);
            drop(db);
            let db = open_sim(&next, &ctx);
            let got = read_consistent(&db).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            if call_sync_wal {
                assert!(&got == pre.last(), "{ctx}: lost writes:\n{}", diff(&got, pre.last()));
            } else if &got != pre.last() {
                lost_without += 1;
            }
        }
    }
    assert!(lost_without > 0, "no history lost a write without sync_wal: the test proves nothing");
}
