//! `talus stress --crash`: the kill -9 loop, modelled on RocksDB's `db_crashtest.py blackbox`.
//!
//! Each cycle spawns this same binary (`std::env::current_exe()`) as a worker `talus stress`
//! with options drawn at random (compression, block size, write buffer size, bloom bits, cache
//! size, open files, background jobs, sync, rarely disable_wal, WAL recovery mode, direct IO,
//! index type, checksum), lets it run a random time between `--kill_min_ms` and
//! `--kill_max_ms` (one cycle in ten: 50 ms to `min(kill_min_ms, 1500)`, to land in recovery),
//! and kills it with SIGKILL (`Child::kill`). The kill lands either during the worker's startup
//! (recovery plus the verification of the previous cycle) or during its workload; the cycle
//! line says which. Then a `--verify_only` worker with the same options must recover the
//! database and find every key as the expected state says (see `verify.rs`). After the last
//! cycle, a final verify-only run with the command line's options. Any failure stops the loop;
//! the exit code is then non-zero.
//!
//! Every worker option is accepted and checked here first (`Config::from_args`, an
//! `--options_file` read): an option the command line names (an engine option by any of its
//! names, `--sync`, `--disable_wal`, `--value_size_max`, the op mix, `--options_file`, ...) is
//! passed to every worker and never drawn; the draws replace only what it leaves out, on top of
//! the OPTIONS file. `--verify_only` is refused.
//!
//! Before it creates anything the driver checks (`setup.rs`, `crate::precheck`) the
//! expected-state file (default `<db>.expected`, beside the directory: with
//! `--destroy_db_initially`, the default, it must be missing or an expected-state file, which
//! is then removed; without, it must have been made for the same `--max_key`), that its
//! directory can be created, that `--db` is a database, empty or missing (never another
//! program's directory, whether or not it is to be replaced), and that no other process holds
//! its LOCK. Then it removes the previous database with `talus::destroy_db`
//! (LOCK first; nothing but the engine's files) and makes the state's directory. The driver
//! keeps no state but its counters: the database and the expected-state file are the whole
//! state between processes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{CompressionType, WalRecoveryMode};

use super::config::Config;
use super::kill;
use super::EXIT_USAGE;
use crate::options::Parsed;

/// The exit code of a Rust process that panicked.
const RUST_PANIC_EXIT: i32 = 101;

/// Workers and verifiers that panicked, over the whole run.
static PANICS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Longest a verify-only run may take before it counts as hung.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(600);

/// Totals over the whole crash test.
#[derive(Default)]
struct Totals {
    cycles: u64,
    kills_startup: u64,
    kills_workload: u64,
    /// Workers that killed themselves at a whitebox kill point.
    kills_at_points: u64,
    exited_early: u64,
    lost_sync: u64,
    lost_unsynced: u64,
    lost_allowed: u64,
    /// Keys a verifier found with a value the expected state rules out.
    wrong: u64,
    /// Workers or verifiers that panicked (exit code 101).
    panics: u64,
    failures: u64,
    pending_applied: u64,
    /// Operations the workers reported (as of their last progress line before the kill).
    ops: u64,
    /// Seconds the workers spent in their workload.
    workload_secs: f64,
}

/// Runs the driver; returns the exit code.
pub fn run(p: &Parsed) -> i32 {
    match drive(p) {
        Ok(t) if t.failures == 0 => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("talus stress --crash: {e}");
            EXIT_USAGE
        }
    }
}

fn drive(p: &Parsed) -> Result<Totals, String> {
    // 1. Every flag, the workers' included (an OPTIONS file read and checked), before anything
    // is touched. The workers start from this template; what the command line names is kept
    // for every cycle, the rest is drawn per cycle.
    let mut template = Config::from_args(p)?;
    if template.verify_only {
        return Err("--verify_only is a worker option: the crash driver verifies after every \
                    kill by itself"
            .into());
    }
    let db = template.db.clone();
    let expected = match &template.expected_state {
        Some(e) => e.clone(),
        None => {
            let name = db.file_name().ok_or("--db must name a directory")?;
            let mut name = name.to_os_string();
            name.push(".expected");
            db.with_file_name(name)
        }
    };
    template.expected_state = Some(expected.clone());
    // Workers keep the database and its expected state across kills.
    template.destroy_db_initially = false;
    template.duration = 3600;
    let duration = Duration::from_secs(p.number("duration")?.unwrap_or(600));
    let max_cycles = p.number("cycles")?.unwrap_or(u64::MAX);
    let kill_min = p.number("kill_min_ms")?.unwrap_or(2000);
    let kill_max = p.number("kill_max_ms")?.unwrap_or(10_000).max(kill_min);
    let seed = match p.number("seed")? {
        Some(s) => s,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    // Whitebox: the kill points to rotate through (a build with them only).
    let mut rotation = match p.value("kill_points") {
        Some(v) => {
            if !talus::kill_point::ENABLED {
                return Err("--kill_points needs kill points, which this build lacks: build with \
                            `cargo build --release -p talus-cli --features kill-points`"
                    .into());
            }
            let mut points = kill::selected(&kill::parse_points(Some(v))?);
            if template.table_workload {
                // The table workload makes no checkpoints or backups.
                points.retain(|p| !p.starts_with("checkpoint.") && !p.starts_with("backup."));
            }
            Some(kill::Rotation::new(points))
        }
        None => None,
    };
    let require_every_point = p.flag("require_every_point");
    // Every cycle with direct reads and writes (otherwise each is drawn per cycle).
    let direct_io = p.flag("direct_io");
    let mut tally = kill::Tally::default();
    let destroy = p.flag_or("destroy_db_initially", true);
    // 2. The disk, read only: the expected-state file (kept: the same --max_key; replaced:
    // only a file that is one), where it goes, the directory and its LOCK.
    super::setup::check_expected(&expected, template.max_key, destroy)?;
    let parent = expected.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = parent {
        crate::precheck::output_dir("--expected_state", dir)?;
    }
    crate::dbdir::check_replaceable(&db)?;
    crate::precheck::not_locked(&db)?;
    // 3. Only now: replace the previous run's database and state, make the state's directory.
    if destroy {
        super::setup::replace(&db, Some(&expected))?;
    }
    if let Some(dir) = parent {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let mut rng = StdRng::seed_from_u64(seed);
    // Fixed for the expected state's life (values are checked against it).
    let drawn_vmax = [0, 20, 100, 1000][rng.gen_range(0..4)];
    let value_size_max = if p.has("value_size_max") { template.value_size_max } else { drawn_vmax };
    let (threads, max_key) = (template.threads, template.max_key);
    println!(
        "crash test: db {} expected state {} seed {seed} duration {}s threads {threads} \
         max_key {max_key} kill after {kill_min}..{kill_max} ms",
        db.display(),
        expected.display(),
        duration.as_secs()
    );
    let t0 = Instant::now();
    let mut tot = Totals::default();
    while tot.cycles < max_cycles && t0.elapsed() < duration && tot.failures == 0 {
        let mut cfg = template.clone();
        cfg.value_size_max = value_size_max;
        cfg.seed = rng.gen();
        randomize(&mut cfg, &mut rng);
        keep_given(&mut cfg, &template, p)?;
        let target = rotation.as_ref().map(|r| r.next_point(&tally));
        // A cycle aimed at a kill point reads tables and blob files through the page cache
        // (unless the command line asks for direct IO): with direct reads every blob value the
        // worker's startup verification reads is a device read (no blob cache across
        // processes), 2.5-3.5 s per verification here, so workers were killed before their
        // workload reached the point and the whitebox minute missed 3-5 of its 25 points. The
        // other crash cycles keep drawing direct reads.
        if target.is_some() && !p.has("use_direct_reads") {
            cfg.use_direct_reads = false;
        }
        if direct_io {
            cfg.use_direct_reads = true;
            cfg.direct_writes = true;
        }
        if let Some(point) = target {
            cfg.steer_to(point);
            cfg.kill_random_test = rotation.as_ref().map_or(1, |r| r.odds(point));
            cfg.kill_points = vec![point.to_string()];
        }
        // One cycle in ten kills early, mostly while the worker recovers and verifies (and
        // writes resolved pending keys back to the expected state).
        let run_ms = if kill_min > 100 && rng.gen_bool(0.1) {
            rng.gen_range(50..kill_min.min(1500))
        } else {
            rng.gen_range(kill_min..=kill_max)
        };
        tot.cycles += 1;
        let cycle = tot.cycles;
        let started = Instant::now();
        let (how, ok, ops) = run_and_kill(&exe, &cfg, Duration::from_millis(run_ms))?;
        tot.ops += ops;
        match &how {
            Ended::KilledInStartup => tot.kills_startup += 1,
            Ended::KilledInWorkload => tot.kills_workload += 1,
            Ended::KilledAtPoint(_) => tot.kills_at_points += 1,
            Ended::Exited => tot.exited_early += 1,
        }
        if let Some(point) = target {
            let at = match &how {
                Ended::KilledAtPoint(p) => Some(p.as_str()),
                _ => None,
            };
            tally.record(point, at);
            if at != Some(point) {
                if let Some(r) = rotation.as_mut() {
                    r.missed(point);
                }
            }
        }
        let ran = started.elapsed();
        tot.workload_secs += ran.as_secs_f64();
        if !ok {
            tot.failures += 1;
            println!(
                "cycle {cycle}: worker FAILED after {:.1}s ({})",
                ran.as_secs_f64(),
                cfg.brief()
            );
            break;
        }
        cfg.verify_only = true;
        // The verifier must finish: no kill point armed.
        cfg.kill_random_test = 0;
        let v = verify_run(&exe, &cfg, &mut tot)?;
        println!(
            "cycle {cycle}: ran {:.1}s ({ops} ops), {} | verify {} | {}",
            ran.as_secs_f64(),
            match target {
                Some(p) => format!("{} (target {p})", how.name()),
                None => how.name(),
            },
            v,
            cfg.brief()
        );
    }
    if tot.failures == 0 {
        let mut cfg = template.clone();
        cfg.verify_only = true;
        let v = verify_run(&exe, &cfg, &mut tot)?;
        println!("final verify-only run: {v}");
    }
    if let Some(r) = &rotation {
        let missed = tally.missed(r.points());
        println!(
            "kill points: {} kills at {} of {} points targeted: {}",
            tally.total(),
            r.points().len() - missed.len(),
            r.points().len(),
            tally.line(r.points())
        );
        if require_every_point && !missed.is_empty() {
            println!("kill points never fired: {}", missed.join(", "));
            tot.failures += 1;
        }
    }
    let kills = tot.kills_startup + tot.kills_workload + tot.kills_at_points;
    println!(
        "crash test summary: seed {seed}, cycles {}, total minutes {:.1}, kills {kills} \
         (during startup/verification {}, during workload {}, at kill points {}), workers that \
         exited by themselves {}, operations {} ({:.0}/s of worker time), pending keys found applied {}, \
         acknowledged sync writes lost {}, \
         acknowledged unsynced writes lost {}, writes lost where allowed (disable_wal) {}, \
         verification failures {}",
        tot.cycles,
        t0.elapsed().as_secs_f64() / 60.0,
        tot.kills_startup,
        tot.kills_workload,
        tot.kills_at_points,
        tot.exited_early,
        tot.ops,
        tot.ops as f64 / tot.workload_secs.max(0.001),
        tot.pending_applied,
        tot.lost_sync,
        tot.lost_unsynced,
        tot.lost_allowed,
        tot.failures
    );
    tot.panics = PANICS.load(Ordering::Relaxed);
    // One line for scripts (bench/crash_campaign.sh).
    println!(
        "crash test totals: cycles={} operations={} kill_point_kills={} lost_acked={} wrong={} \
         panics={} failures={}",
        tot.cycles,
        tot.ops,
        tot.kills_at_points,
        tot.lost_sync + tot.lost_unsynced,
        tot.wrong,
        tot.panics,
        tot.failures
    );
    Ok(tot)
}

/// Sets back the options the command line names (engine options by any of their names, and
/// `--sync`, `--disable_wal`, `--use_merge`) after [`randomize`] drew them: those are fixed for every cycle.
fn keep_given(cfg: &mut Config, template: &Config, p: &Parsed) -> Result<(), String> {
    let mut o = cfg.db_options()?;
    for name in p.names().iter().filter(|n| crate::options::engine::find(n).is_some()) {
        crate::options::engine::set(&mut o, name, p.value(name).unwrap_or("true"))?;
    }
    cfg.set_fields(&o);
    if p.has("sync") {
        cfg.sync = template.sync;
    }
    if p.has("disable_wal") {
        cfg.disable_wal = template.disable_wal;
    }
    if p.has("use_merge") {
        cfg.use_merge = template.use_merge;
    }
    if p.has("checkpoint_one_in") {
        cfg.checkpoint_one_in = template.checkpoint_one_in;
    }
    if p.has("backup_one_in") {
        cfg.backup_one_in = template.backup_one_in;
    }
    Ok(())
}

/// Draws the per-cycle options, as db_crashtest.py does.
fn randomize(c: &mut Config, rng: &mut StdRng) {
    c.compression = [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ][rng.gen_range(0..4)];
    c.block_size = [256, 1024, 4096, 16384][rng.gen_range(0..4)];
    c.write_buffer_size = [64 << 10, 256 << 10, 1 << 20, 4 << 20][rng.gen_range(0..4)];
    c.max_write_buffer_number = rng.gen_range(2..=4);
    c.bloom_bits = [0, 2, 10, 16][rng.gen_range(0..4)];
    // No cache smaller than 1 MiB: since the caches free released blocks when over capacity
    // (issue 36), a 0 or 64 KiB cache with direct reads re-reads every index and filter
    // partition, and a verification of 100,000 keys took 10-60 s instead of 1, starving the
    // whitebox run of cycles. Tiny caches are covered by tests/cache_capacity.rs.
    c.cache_size = [1 << 20, 4 << 20, 8 << 20, 32 << 20][rng.gen_range(0..4)];
    c.max_open_files = [-1, -1, 10, 100][rng.gen_range(0..4)];
    c.max_background_jobs = rng.gen_range(1..=4);
    c.target_file_size_base = [256 << 10, 1 << 20, 2 << 20][rng.gen_range(0..3)];
    c.max_bytes_for_level_base = [1 << 20, 4 << 20, 8 << 20][rng.gen_range(0..3)];
    c.l0_trigger = rng.gen_range(2..=6);
    c.max_subcompactions = [1, 1, 2, 4][rng.gen_range(0..4)];
    c.cache_type = if rng.gen_bool(0.5) {
        talus::options::CacheType::HyperClockCache
    } else {
        talus::options::CacheType::LruCache
    };
    c.intra_l0_compaction = rng.gen_bool(0.7);
    c.sync = rng.gen_bool(0.8);
    // Puts as merge operands in half the cycles: operands and values of one key meet across
    // kills, flushes and compactions.
    c.use_merge = rng.gen_bool(0.5);
    c.disable_wal = rng.gen_bool(0.05);
    c.wal_recovery_mode = if rng.gen_bool(0.8) {
        WalRecoveryMode::PointInTimeRecovery
    } else {
        WalRecoveryMode::TolerateCorruptedTailRecords
    };
    // Direct IO and partitioned index/filters, each about half the cycles, so tables of both
    // formats (and both ways of reading them) meet across reopens.
    c.use_direct_reads = rng.gen_bool(0.5);
    c.direct_writes = rng.gen_bool(0.5);
    c.index_type = if rng.gen_bool(0.5) {
        talus::IndexType::TwoLevelIndexSearch
    } else {
        talus::IndexType::BinarySearch
    };
    c.partition_filters =
        c.index_type == talus::IndexType::TwoLevelIndexSearch && rng.gen_bool(0.7);
    c.metadata_block_size = [64, 512, 4096][rng.gen_range(0..3)];
    // Both block checksums (format versions 2/3 and 4) in one database across reopens.
    c.checksum = talus::ChecksumType::ALL[rng.gen_range(0..2)];
    // Checkpoints and backups made while the others write, each in about a third of the
    // cycles, so kills land in them too.
    c.checkpoint_one_in = if rng.gen_bool(0.3) { 20_000 } else { 0 };
    c.backup_one_in = if rng.gen_bool(0.3) { 50_000 } else { 0 };
    // Blob files (key-value separation) in about half the cycles, unless the command line set
    // blob options: values written with and without them meet across reopens, and cycles
    // without them read the blob files earlier cycles wrote.
    if !c.extra.iter().any(|(n, _)| n.contains("blob")) && rng.gen_bool(0.5) {
        let mut set = |n: &str, v: String| c.extra.push((n.to_string(), v));
        set("enable_blob_files", "true".into());
        set("min_blob_size", [0, 16, 64][rng.gen_range(0..3)].to_string());
        set("blob_file_size", [4096, 65536, 1 << 20][rng.gen_range(0..3)].to_string());
        set("blob_compression_type", ["none", "lz4", "zstd"][rng.gen_range(0..3)].into());
        set("blob_file_starting_level", rng.gen_range(0..2).to_string());
        set("enable_blob_garbage_collection", rng.gen_bool(0.7).to_string());
        set(
            "blob_garbage_collection_age_cutoff",
            ["0.0", "0.25", "0.5", "1.0"][rng.gen_range(0..4)].into(),
        );
    }
}

#[derive(Clone)]
enum Ended {
    KilledInStartup,
    KilledInWorkload,
    /// The worker killed itself at this whitebox kill point.
    KilledAtPoint(String),
    Exited,
}

impl Ended {
    fn name(&self) -> String {
        match self {
            Ended::KilledInStartup => "killed during startup/verification".into(),
            Ended::KilledInWorkload => "killed during workload".into(),
            Ended::KilledAtPoint(p) => format!("killed at kill point {p}"),
            Ended::Exited => "exited by itself".into(),
        }
    }
}

/// A running worker: its stdout is read by a thread into `lines`; `started` turns true when it
/// prints that its workload started.
struct Spawned {
    child: Child,
    started: Arc<AtomicBool>,
    lines: Arc<Mutex<Vec<String>>>,
    /// The thread reading the child's stdout; it ends at the pipe's end (the child's exit).
    reader: Option<std::thread::JoinHandle<()>>,
}

fn spawn(exe: &Path, cfg: &Config) -> Result<Spawned, String> {
    let mut child = Command::new(exe)
        .arg("stress")
        .args(cfg.to_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    let started = Arc::new(AtomicBool::new(false));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let mut reader = None;
    if let Some(out) = child.stdout.take() {
        let (started, lines) = (started.clone(), lines.clone());
        reader = Some(std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if line.starts_with("stress: workload started") {
                    started.store(true, Ordering::Release);
                }
                lines.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        }));
    }
    Ok(Spawned { child, started, lines, reader })
}

/// Runs a worker for `run_for`, then SIGKILLs it. Returns how it ended, false if it exited
/// with an error, and the operations it last reported.
fn run_and_kill(exe: &Path, cfg: &Config, run_for: Duration) -> Result<(Ended, bool, u64), String> {
    let Spawned { mut child, started, lines, mut reader } = spawn(exe, cfg)?;
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for a worker: {e}"))? {
            // The reader must have drained the pipe: the kill point's line is the last one. A
            // fixed pause was not enough at nice 19 on a loaded machine (a worker killed at a
            // point was counted as one that died by itself): wait for the pipe's end.
            drain(&mut reader);
            let point = kill::killed_at(&lines.lock().unwrap_or_else(|p| p.into_inner()));
            if let Some(point) = point.filter(|_| !status.success()) {
                return Ok((Ended::KilledAtPoint(point), true, last_ops(&lines)));
            }
            if status.code() == Some(RUST_PANIC_EXIT) {
                PANICS.fetch_add(1, Ordering::Relaxed);
            }
            if !status.success() {
                for l in lines.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    println!("  worker: {l}");
                }
                eprintln!("worker exited with {status}");
            }
            return Ok((Ended::Exited, status.success(), last_ops(&lines)));
        }
        if t.elapsed() >= run_for {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let in_workload = started.load(Ordering::Acquire);
    child.kill().map_err(|e| format!("killing a worker: {e}"))?;
    let _ = child.wait();
    drain(&mut reader);
    let how = if in_workload { Ended::KilledInWorkload } else { Ended::KilledInStartup };
    Ok((how, true, last_ops(&lines)))
}

/// Waits for the reader thread of a worker that has ended: it stops at the end of the pipe,
/// which the worker's exit closes (workers start no processes that could hold it open).
fn drain(reader: &mut Option<std::thread::JoinHandle<()>>) {
    if let Some(r) = reader.take() {
        let _ = r.join();
    }
}

/// The `ops=` count of the last progress line a worker printed (its reader drained).
fn last_ops(lines: &Mutex<Vec<String>>) -> u64 {
    let lines = lines.lock().unwrap_or_else(|p| p.into_inner());
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("stress: progress ops="))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Runs a verify-only worker to completion and adds its findings to `tot`; returns the summary
/// it printed (its `stress-verify:` line, without the prefix).
fn verify_run(exe: &Path, cfg: &Config, tot: &mut Totals) -> Result<String, String> {
    let Spawned { mut child, lines, mut reader, .. } = spawn(exe, cfg)?;
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("waiting for a verifier: {e}"))? {
            break Some(s);
        }
        if t.elapsed() > VERIFY_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The child is gone (exited or killed): its stdout ends, so the reader drains every line
    // and ends. (A fixed sleep here lost the summary line on a loaded machine: a verifier that
    // exited 0 was counted as failed, seen once in a 7-minute universal campaign.)
    drain(&mut reader);
    let lines = lines.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let summary = lines.iter().rev().find_map(|l| l.strip_prefix("stress-verify: "));
    let field = |name: &str| -> u64 {
        summary
            .and_then(|s| s.split(' ').find_map(|f| f.strip_prefix(name)?.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let lost = field("lost_acked");
    match summary.and_then(|s| s.split(' ').find_map(|f| f.strip_prefix("mode="))) {
        Some("sync") => tot.lost_sync += lost,
        _ => tot.lost_unsynced += lost,
    }
    tot.lost_allowed += field("lost_allowed");
    tot.wrong += field("wrong");
    if status.and_then(|s| s.code()) == Some(RUST_PANIC_EXIT) {
        PANICS.fetch_add(1, Ordering::Relaxed);
    }
    tot.pending_applied += field("pending_applied");
    let ok = status.is_some_and(|s| s.success()) && summary.is_some();
    if !ok {
        tot.failures += 1;
        for l in &lines {
            println!("  verifier: {l}");
        }
        return Ok(match status {
            Some(s) => format!("FAILED ({s})"),
            None => "FAILED (hung)".into(),
        });
    }
    Ok(format!("ok in {:.1}s: {}", t.elapsed().as_secs_f64(), summary.unwrap_or("")))
}
