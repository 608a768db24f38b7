//! `talus stress --crash`: the kill -9 loop, modelled on RocksDB's `db_crashtest.py blackbox`.
//!
//! Each cycle spawns this same binary (`std::env::current_exe()`) as a worker `talus stress`
//! with options drawn at random (compression, block size, write buffer size, bloom bits, cache
//! size, open files, background jobs, sync, rarely disable_wal, WAL recovery mode unless
//! `--wal_recovery_mode` fixes it), lets it run
//! a random time between `--kill_min_ms` and `--kill_max_ms` (one cycle in ten: 50 ms to
//! `min(kill_min_ms, 1500)`, to land in recovery), and kills it with SIGKILL
//! (`Child::kill`). The kill lands either during the worker's startup (recovery plus the
//! verification of the previous cycle) or during its workload; the cycle line says which. Then
//! a `--verify_only` worker with the same options must recover the database and find every key
//! as the expected state says (see `verify.rs`). After the last cycle, a final verify-only run
//! with default options. Any failure stops the loop; the exit code is then non-zero.
//!
//! The driver keeps no state but its counters: the database and the expected-state file
//! (default `<db>.expected`, beside the directory) are the whole state between processes. With
//! `--destroy_db_initially` (the default) a previous database is removed first with
//! `talus::destroy_db`: refused if another process has it open, and nothing but the engine's
//! files is deleted.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{CompactionStyle, CompressionType, WalRecoveryMode};

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
    let db = PathBuf::from(p.value("db").ok_or("--db=DIR is required")?);
    let expected = match p.value("expected_state") {
        Some(e) => PathBuf::from(e),
        None => {
            let name = db.file_name().ok_or("--db must name a directory")?;
            let mut name = name.to_os_string();
            name.push(".expected");
            db.with_file_name(name)
        }
    };
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
    let threads = p.number("threads")?.unwrap_or(8).max(1) as usize;
    let max_key = p.number("max_key")?.unwrap_or(100_000);
    let table_workload = super::config::parse_workload(p.value("workload"))?;
    // Fixed for every cycle if given; drawn per cycle otherwise.
    let recovery_mode = match p.value("wal_recovery_mode") {
        Some(m) => Some(WalRecoveryMode::parse(m).map_err(|e| e.to_string())?),
        None => None,
    };
    // Whitebox: the kill points to rotate through (a build with them only).
    let mut rotation = match p.value("kill_points") {
        Some(v) => {
            if !talus::kill_point::ENABLED {
                return Err("--kill_points needs kill points, which this build lacks: build with \
                            `cargo build --release -p talus-cli --features kill-points`"
                    .into());
            }
            Some(kill::Rotation::new(kill::selected(&kill::parse_points(Some(v))?)))
        }
        None => None,
    };
    let require_every_point = p.flag("require_every_point");
    // Every cycle with direct reads and writes (otherwise each is drawn per cycle).
    let direct_io = p.flag("direct_io");
    let mut tally = kill::Tally::default();
    let destroy = !p.value("destroy_db_initially").is_some_and(|v| v == "0" || v == "false");
    if destroy {
        destroy_db(&db, &expected)?;
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let mut rng = StdRng::seed_from_u64(seed);
    // Fixed for the database's life; `--compaction_style=universal` selects universal.
    let style = match p.value("compaction_style") {
        None | Some("level") | Some("0") => CompactionStyle::Level,
        Some("universal") | Some("1") => CompactionStyle::Universal,
        Some(other) => return Err(format!("compaction_style: unknown style {other:?}")),
    };
    if let Some(parent) = expected.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    // Fixed for the expected state's life (values are checked against it).
    let value_size_max = [0, 20, 100, 1000][rng.gen_range(0..4)];
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
        let mut cfg = Config::new(db.clone(), expected.clone());
        cfg.threads = threads;
        cfg.max_key = max_key;
        cfg.compaction_style = style;
        cfg.value_size_max = value_size_max;
        cfg.duration = 3600;
        cfg.seed = rng.gen();
        randomize(&mut cfg, &mut rng);
        if direct_io {
            cfg.use_direct_reads = true;
            cfg.direct_writes = true;
        }
        cfg.table_workload = table_workload;
        if let Some(m) = recovery_mode {
            cfg.wal_recovery_mode = m;
        }
        let target = rotation.as_ref().map(|r| r.next_point(&tally));
        if let Some(point) = target {
            kill::steer(&mut cfg, point);
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
        let mut cfg = Config::new(db.clone(), expected.clone());
        cfg.max_key = max_key;
        cfg.verify_only = true;
        cfg.table_workload = table_workload;
        if let Some(m) = recovery_mode {
            cfg.wal_recovery_mode = m;
        }
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
    c.cache_size = [0, 64 << 10, 1 << 20, 32 << 20][rng.gen_range(0..4)];
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
    if let Some(out) = child.stdout.take() {
        let (started, lines) = (started.clone(), lines.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if line.starts_with("stress: workload started") {
                    started.store(true, Ordering::Release);
                }
                lines.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
    }
    Ok(Spawned { child, started, lines })
}

/// Runs a worker for `run_for`, then SIGKILLs it. Returns how it ended, false if it exited
/// with an error, and the operations it last reported.
fn run_and_kill(exe: &Path, cfg: &Config, run_for: Duration) -> Result<(Ended, bool, u64), String> {
    let Spawned { mut child, started, lines } = spawn(exe, cfg)?;
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for a worker: {e}"))? {
            // Let the reader thread drain the pipe: the kill point's line is the last one.
            std::thread::sleep(Duration::from_millis(20));
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
    let how = if in_workload { Ended::KilledInWorkload } else { Ended::KilledInStartup };
    Ok((how, true, last_ops(&lines)))
}

/// The `ops=` count of the last progress line a worker printed.
fn last_ops(lines: &Mutex<Vec<String>>) -> u64 {
    // Give the reader thread a moment to drain the pipe of a process that just ended.
    std::thread::sleep(Duration::from_millis(20));
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
    let Spawned { mut child, lines, .. } = spawn(exe, cfg)?;
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
    // Let the reader thread drain the pipe.
    std::thread::sleep(Duration::from_millis(50));
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

/// Removes a previous run's database with `talus::destroy_db` (the LOCK first, so a database
/// in use is refused; only the engine's files; the directory only if that empties it) and its
/// expected state. A directory that is neither a database nor empty is refused whole: the crash
/// test does not move into someone else's directory.
fn destroy_db(db: &Path, expected: &Path) -> Result<(), String> {
    crate::dbdir::check_replaceable(db)?;
    talus::destroy_db(db, &talus::Options::default())
        .map_err(|e| format!("destroying {}: {e}", db.display()))?;
    match std::fs::remove_file(expected) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", expected.display())),
    }
}
