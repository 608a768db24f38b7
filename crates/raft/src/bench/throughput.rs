//! The throughput benchmark: for each engine in turn (in the order given, e.g. `talus,rocksdb,
//! rocksdb,talus` for ABBA), a fresh three-node cluster on loopback, a put phase and a
//! linearizable-get phase of `duration` each with `clients` clients, and each phase's
//! throughput and p50/p99 latency. Only the storage differs between runs: the same binary,
//! the same `RaftLogStorage` and `RaftStateMachine` code, the same network and settings.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cluster::{Cluster, ClusterSpec};
use super::workload::{quantile, run_client, Mix};

/// The benchmark's settings.
#[derive(Clone, Debug)]
pub struct ThroughputSpec {
    /// The nodes (each run uses `dir/runN-ENGINE`, removed after the run).
    pub cluster: ClusterSpec,
    /// The engines, in run order.
    pub engines: Vec<String>,
    /// Each phase's length.
    pub duration: Duration,
    /// Concurrent clients.
    pub clients: u32,
    /// Keys and value size (the fractions are set per phase).
    pub mix: Mix,
    /// The random seed.
    pub seed: u64,
}

/// One phase's numbers.
#[derive(Clone, Debug, Default)]
pub struct Phase {
    /// Completed operations per second.
    pub ops_per_sec: f64,
    /// Median latency, microseconds.
    pub p50_us: u32,
    /// 99th percentile latency, microseconds.
    pub p99_us: u32,
    /// Operations that failed or whose outcome is unknown.
    pub not_done: u64,
}

/// One run's numbers.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The engine.
    pub engine: String,
    /// The put phase.
    pub put: Phase,
    /// The get phase.
    pub get: Phase,
}

async fn phase(c: &Cluster, mix: Mix, clients: u32, seed: u64, d: Duration) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|id| {
            tokio::spawn(run_client(id, c.addrs().to_vec(), mix.clone(), seed, t0, stop.clone()))
        })
        .collect();
    tokio::time::sleep(d).await;
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    let mut not_done = 0;
    for t in tasks {
        if let Ok(r) = t.await {
            lat.extend(r.write_us);
            lat.extend(r.read_us);
            not_done += r.unknown + r.failed;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    Phase {
        ops_per_sec: lat.len() as f64 / secs,
        p50_us: quantile(&mut lat, 0.5),
        p99_us: quantile(&mut lat, 0.99),
        not_done,
    }
}

/// Runs every engine of `spec` in turn.
pub async fn run(spec: ThroughputSpec) -> Result<Vec<RunResult>, String> {
    let mut out = Vec::new();
    for (j, engine) in spec.engines.iter().enumerate() {
        let mut cs = spec.cluster.clone();
        cs.dir = spec.cluster.dir.join(format!("run{}-{engine}", j + 1));
        if cs.dir.exists() {
            return Err(format!("{} exists: give a new --dir", cs.dir.display()));
        }
        cs.extra.push(format!("--engine={engine}"));
        let c = Cluster::start(cs.clone())?;
        if c.wait_leader(Duration::from_secs(30)).await.is_none() {
            return Err(format!("{engine}: no leader within 30 s\n{}", c.log_tail(0, 20)));
        }
        let puts = Mix { put: 1.0, delete: 0.0, ..spec.mix.clone() };
        let gets = Mix { put: 0.0, delete: 0.0, ..spec.mix.clone() };
        let put = phase(&c, puts, spec.clients, spec.seed, spec.duration).await;
        let get = phase(&c, gets, spec.clients, spec.seed, spec.duration).await;
        drop(c);
        let _ = std::fs::remove_dir_all(&cs.dir);
        eprintln!(
            "run {} {engine}: put {:.0}/s p50 {} us p99 {} us; get {:.0}/s p50 {} us p99 {} us",
            j + 1,
            put.ops_per_sec,
            put.p50_us,
            put.p99_us,
            get.ops_per_sec,
            get.p50_us,
            get.p99_us
        );
        out.push(RunResult { engine: engine.clone(), put, get });
    }
    Ok(out)
}
