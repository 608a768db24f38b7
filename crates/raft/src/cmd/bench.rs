//! `talus raft-bench`: the kill test (`--mode=kill`) and the throughput benchmark
//! (`--mode=throughput`) on three local nodes (`crate::bench`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::bench::cluster::{free_addrs, ClusterSpec};
use crate::bench::kill::{self, KillSpec};
use crate::bench::throughput::{self, RunResult, ThroughputSpec};
use crate::bench::workload::Mix;

/// talus raft-bench: the kill test with a linearizability check, or throughput on 3 local nodes
#[derive(Parser, Debug)]
#[command(name = "talus raft-bench", about, long_about = None)]
struct Args {
    /// kill (leader kills and pauses, history checked), throughput, or check (re-check the
    /// history file --history wrote).
    #[arg(long, default_value = "kill")]
    mode: String,
    /// A new directory for the nodes' data and logs (kill and throughput).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Seconds the clients run (throughput: per phase).
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: u32,
    /// Number of keys.
    #[arg(long, default_value_t = 100)]
    keys: u64,
    /// Fraction of puts (kill mode).
    #[arg(long, default_value_t = 0.5)]
    put_frac: f64,
    /// Fraction of deletes (kill mode; the rest are linearizable gets).
    #[arg(long, default_value_t = 0.05)]
    delete_frac: f64,
    /// Bytes per value.
    #[arg(long, default_value_t = 16)]
    value_size: usize,
    /// Milliseconds between nemesis actions, MIN-MAX.
    #[arg(long, default_value = "2000-4000")]
    kill_every_ms: String,
    /// Longest time a killed leader stays down, milliseconds.
    #[arg(long, default_value_t = 500)]
    restart_max_ms: u64,
    /// Chance that a nemesis action pauses a random node (SIGSTOP) instead of killing the leader.
    #[arg(long, default_value_t = 0.2)]
    pause_prob: f64,
    /// How long a pause lasts, milliseconds, MIN-MAX.
    #[arg(long, default_value = "300-1500")]
    pause_ms: String,
    /// Fail unless at least this many leader kills happened.
    #[arg(long, default_value_t = 0)]
    min_kills: u64,
    /// The engine (kill mode).
    #[arg(long, default_value = "talus")]
    engine: String,
    /// The engines in run order (throughput mode), e.g. talus,rocksdb,rocksdb,talus.
    #[arg(long, default_value = "talus")]
    engines: String,
    /// Snapshot after this many entries (small, so that restarted nodes install snapshots).
    #[arg(long, default_value_t = 3000)]
    snapshot_logs: u64,
    /// Entries kept behind a snapshot.
    #[arg(long, default_value_t = 300)]
    keep_logs: u64,
    /// Run the nodes with a deliberately broken store (to show the test catches it).
    #[arg(long, default_value = "none")]
    unsafe_fault: String,
    /// The random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The checker's step budget per key.
    #[arg(long, default_value_t = 50_000_000)]
    check_budget: u64,
    /// Seconds the nodes get to converge at the end of the kill test.
    #[arg(long, default_value_t = 120)]
    converge_secs: u64,
    /// Write the history (JSON lines) here.
    #[arg(long)]
    history: Option<PathBuf>,
    /// The talus binary to run the nodes with (default: this one).
    #[arg(long)]
    binary: Option<PathBuf>,
}

fn range(s: &str, flag: &str) -> Result<(u64, u64), String> {
    s.split_once('-')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|(a, b)| a <= b)
        .ok_or_else(|| format!("--{flag}={s}: not MIN-MAX"))
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn dir(a: &Args) -> Result<PathBuf, String> {
    a.dir.clone().ok_or_else(|| format!("--mode={} needs --dir", a.mode))
}

fn cluster_spec(a: &Args) -> Result<ClusterSpec, String> {
    let exe = match &a.binary {
        Some(b) => b.clone(),
        None => std::env::current_exe().map_err(|e| format!("finding this binary: {e}"))?,
    };
    let extra = vec![
        format!("--snapshot-logs={}", a.snapshot_logs),
        format!("--keep-logs={}", a.keep_logs),
        format!("--unsafe-fault={}", a.unsafe_fault),
    ];
    let addrs = free_addrs(3).map_err(|e| format!("finding free ports: {e}"))?;
    Ok(ClusterSpec { exe, dir: dir(a)?, addrs, extra })
}

async fn kill_mode(a: Args) -> Result<bool, String> {
    if dir(&a)?.exists() {
        return Err(format!("{} exists: give a new directory", dir(&a)?.display()));
    }
    let mut cluster = cluster_spec(&a)?;
    cluster.extra.push(format!("--engine={}", a.engine));
    let spec = KillSpec {
        cluster,
        duration: Duration::from_secs(a.duration),
        clients: a.clients,
        mix: Mix { keys: a.keys, put: a.put_frac, delete: a.delete_frac, value_size: a.value_size },
        every_ms: range(&a.kill_every_ms, "kill-every-ms")?,
        restart_max_ms: a.restart_max_ms,
        pause_prob: a.pause_prob,
        pause_ms: range(&a.pause_ms, "pause-ms")?,
        seed: a.seed,
        budget: a.check_budget,
        history_file: a.history.clone(),
        converge: Duration::from_secs(a.converge_secs),
    };
    let load_before = load();
    let r = kill::run(spec).await?;
    println!(
        "raft-bench kill: engine {}, fault {}, {} s, {} clients, {} keys, seed {}",
        a.engine, a.unsafe_fault, a.duration, a.clients, a.keys, a.seed
    );
    println!("  load average before {load_before}, after {}", load());
    println!("  leader kills {}, pauses {}, final log index {}", r.kills, r.pauses, r.final_index);
    println!(
        "  writes acknowledged {}, outcome unknown {}; reads {}; failed {}",
        r.writes_done, r.writes_unknown, r.reads_done, r.failed
    );
    if let Some(e) = &r.not_converged {
        println!("  NOT CONVERGED (final state not checked): {e}");
    }
    println!("  acknowledged writes lost: {}", r.lost);
    let differ = if r.replicas_differ.is_empty() {
        "no".to_string()
    } else {
        format!("{:?}", r.replicas_differ)
    };
    println!("  replicas that differ from node 1: {differ}");
    println!(
        "  linearizability: {} ops on {} keys ({} unobserved pending puts dropped), {} violating key(s), {} undecided, checked in {:.1} s",
        r.check.ops,
        r.check.keys,
        r.check.dropped_pending,
        r.check.violations.len(),
        r.check.undecided.len(),
        r.check_secs
    );
    for (key, ops) in r.check.violations.iter().take(3) {
        println!("  violation on {key}: {} ops, the last 12:", ops.len());
        for o in ops.iter().rev().take(12).rev() {
            println!("    {o:?}");
        }
    }
    let enough = r.kills >= a.min_kills;
    if !enough {
        println!("  fewer leader kills than --min-kills={}", a.min_kills);
    }
    let ok = r.ok() && enough;
    println!("RESULT {} (run {:.0} s)", if ok { "ok" } else { "FAILED" }, r.run_secs);
    Ok(ok)
}

fn print_table(runs: &[RunResult]) {
    println!("| run | engine | put ops/s | put p50 us | put p99 us | get ops/s | get p50 us | get p99 us |");
    println!("|---|---|---|---|---|---|---|---|");
    for (i, r) in runs.iter().enumerate() {
        println!(
            "| {} | {} | {:.0} | {} | {} | {:.0} | {} | {} |",
            i + 1,
            r.engine,
            r.put.ops_per_sec,
            r.put.p50_us,
            r.put.p99_us,
            r.get.ops_per_sec,
            r.get.p50_us,
            r.get.p99_us
        );
    }
    let mean = |e: &str, f: &dyn Fn(&RunResult) -> f64| -> Option<f64> {
        let v: Vec<f64> = runs.iter().filter(|r| r.engine == e).map(f).collect();
        (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
    };
    let put = |r: &RunResult| r.put.ops_per_sec;
    let get = |r: &RunResult| r.get.ops_per_sec;
    if let (Some(tp), Some(rp), Some(tg), Some(rg)) =
        (mean("talus", &put), mean("rocksdb", &put), mean("talus", &get), mean("rocksdb", &get))
    {
        println!("talus/rocksdb (geometric means): puts {:.2}x, gets {:.2}x", tp / rp, tg / rg);
    }
}

async fn throughput_mode(a: Args) -> Result<bool, String> {
    let spec = ThroughputSpec {
        cluster: cluster_spec(&a)?,
        engines: a
            .engines
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        duration: Duration::from_secs(a.duration),
        clients: a.clients,
        mix: Mix { keys: a.keys, put: 0.0, delete: 0.0, value_size: a.value_size },
        seed: a.seed,
    };
    let load_before = load();
    let runs = throughput::run(spec).await?;
    println!(
        "raft-bench throughput: {} s per phase, {} clients, {} keys, {}-byte values",
        a.duration, a.clients, a.keys, a.value_size
    );
    println!("load average before {load_before}, after {}", load());
    print_table(&runs);
    Ok(true)
}

/// Re-checks a history written by `--history` (JSON lines).
fn check_mode(a: &Args) -> Result<bool, String> {
    use std::io::BufRead;
    let path = a.history.as_ref().ok_or("--mode=check needs --history=FILE")?;
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut ops = Vec::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |what: &str| format!("{}:{}: {what}", path.display(), n + 1);
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| bad(&e.to_string()))?;
        let value = v["value"].as_str().map(String::from);
        let action = match v["op"].as_str() {
            Some("put") => {
                crate::check::Action::Put(value.ok_or_else(|| bad("a put without a value"))?)
            }
            Some("delete") => crate::check::Action::Delete,
            Some("get") => crate::check::Action::Get(value),
            _ => return Err(bad("op is not put, delete or get")),
        };
        ops.push(crate::check::Op {
            client: v["client"]
                .as_u64()
                .and_then(|c| u32::try_from(c).ok())
                .ok_or_else(|| bad("client"))?,
            key: v["key"].as_str().ok_or_else(|| bad("key"))?.to_string(),
            action,
            call: v["call"].as_u64().ok_or_else(|| bad("call"))?,
            ret: v["ret"].as_u64(),
        });
    }
    let t = std::time::Instant::now();
    let r = crate::check::check(&ops, a.check_budget);
    println!(
        "linearizability of {}: {} ops on {} keys ({} unobserved pending puts dropped), {} violating key(s) {:?}, {} undecided, {:.1} s",
        path.display(),
        r.ops,
        r.keys,
        r.dropped_pending,
        r.violations.len(),
        r.violations.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        r.undecided.len(),
        t.elapsed().as_secs_f64()
    );
    println!("RESULT {}", if r.ok() { "ok" } else { "FAILED" });
    Ok(r.ok())
}

/// `talus raft-bench ARGS`: exit code 0 if every check passed, 1 if one failed, 2 on bad
/// arguments or a run that could not be made.
pub fn raft_bench(args: &[String]) -> i32 {
    let all = std::iter::once("talus raft-bench".to_string()).chain(args.iter().cloned());
    let a = match Args::try_parse_from(all) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let rt = match super::runtime(2) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("talus raft-bench: {e}");
            return 2;
        }
    };
    let r = match a.mode.as_str() {
        "kill" => rt.block_on(kill_mode(a)),
        "throughput" => rt.block_on(throughput_mode(a)),
        "check" => check_mode(&a),
        m => Err(format!("--mode={m}: kill or throughput")),
    };
    match r {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("talus raft-bench: {e}");
            2
        }
    }
}
