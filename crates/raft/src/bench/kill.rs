//! The kill test: three nodes, clients recording a history, and a nemesis that kills the
//! leader with `SIGKILL` at random moments and restarts it, and sometimes pauses a node with
//! `SIGSTOP` for a while (a network partition of that node: this machine has no firewall to
//! block its port with, and a paused process answers nothing, as a cut-off one). At the end
//! the nodes must converge to the same state, lose no acknowledged write, and the history
//! (with the final state) must be linearizable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::cluster::{Cluster, ClusterSpec};
use super::verify;
use super::workload::{run_client, Mix};
use crate::check;

/// The kill test's settings.
#[derive(Clone, Debug)]
pub struct KillSpec {
    /// The nodes.
    pub cluster: ClusterSpec,
    /// How long the clients and the nemesis run.
    pub duration: Duration,
    /// Concurrent clients.
    pub clients: u32,
    /// The operation mix.
    pub mix: Mix,
    /// Time between nemesis actions, milliseconds (uniform in the range).
    pub every_ms: (u64, u64),
    /// Longest time a killed leader stays down, milliseconds.
    pub restart_max_ms: u64,
    /// Chance that a nemesis action pauses a random node instead of killing the leader.
    pub pause_prob: f64,
    /// How long a pause lasts, milliseconds.
    pub pause_ms: (u64, u64),
    /// The random seed.
    pub seed: u64,
    /// The checker's step budget per key.
    pub budget: u64,
    /// Write the history here (JSON lines), if given.
    pub history_file: Option<std::path::PathBuf>,
    /// How long the nodes get to converge at the end.
    pub converge: Duration,
}

/// What the kill test found.
#[derive(Debug, Default)]
pub struct KillReport {
    /// Leader kills.
    pub kills: u64,
    /// Node pauses.
    pub pauses: u64,
    /// Operations recorded (completed and pending).
    pub ops: usize,
    /// Completed writes.
    pub writes_done: usize,
    /// Writes with an unknown outcome.
    pub writes_unknown: u64,
    /// Completed reads.
    pub reads_done: usize,
    /// Operations that failed (not done).
    pub failed: u64,
    /// The final log index all nodes reached.
    pub final_index: u64,
    /// Why the nodes did not converge at the end (then the final state is not checked), with
    /// the last lines of their logs.
    pub not_converged: Option<String>,
    /// Acknowledged writes missing from the final state.
    pub lost: u64,
    /// Nodes whose final state differs from node 1's.
    pub replicas_differ: Vec<usize>,
    /// The linearizability verdict.
    pub check: check::Report,
    /// Seconds the check took.
    pub check_secs: f64,
    /// Seconds the run took.
    pub run_secs: f64,
}

impl KillReport {
    /// True if every check passed.
    pub fn ok(&self) -> bool {
        self.not_converged.is_none()
            && self.lost == 0
            && self.replicas_differ.is_empty()
            && self.check.ok()
    }
}

fn between(rng: &mut StdRng, (lo, hi): (u64, u64)) -> Duration {
    Duration::from_millis(rng.gen_range(lo..=hi.max(lo)))
}

/// The nemesis: until `stop`, every `every_ms` kill the leader (and restart it after a while)
/// or pause a random node. Returns the cluster and the counts of kills and pauses.
async fn nemesis(
    mut c: Cluster,
    spec: KillSpec,
    stop: Arc<AtomicBool>,
) -> Result<(Cluster, u64, u64), String> {
    let mut rng = StdRng::seed_from_u64(spec.seed.wrapping_mul(31).wrapping_add(7));
    let (mut kills, mut pauses) = (0, 0);
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(between(&mut rng, spec.every_ms)).await;
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if rng.gen_bool(spec.pause_prob.clamp(0.0, 1.0)) {
            let i = rng.gen_range(0..c.len());
            if c.running(i) && c.pause(i) {
                pauses += 1;
                tokio::time::sleep(between(&mut rng, spec.pause_ms)).await;
                c.resume(i);
            }
            continue;
        }
        let Some(l) = c.wait_leader(Duration::from_secs(3)).await else { continue };
        c.kill(l);
        kills += 1;
        tokio::time::sleep(Duration::from_millis(rng.gen_range(0..=spec.restart_max_ms))).await;
        c.spawn(l)?;
    }
    Ok((c, kills, pauses))
}

/// Runs the kill test.
pub async fn run(spec: KillSpec) -> Result<KillReport, String> {
    let t_run = Instant::now();
    let cluster = Cluster::start(spec.cluster.clone())?;
    cluster.wait_leader(Duration::from_secs(30)).await.ok_or("no leader within 30 s of start")?;
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let mut clients = Vec::new();
    for id in 0..spec.clients {
        let addrs = cluster.addrs().to_vec();
        let (mix, stop) = (spec.mix.clone(), stop.clone());
        clients.push(tokio::spawn(run_client(id, addrs, mix, spec.seed, t0, stop)));
    }
    let nem = tokio::spawn(nemesis(cluster, spec.clone(), stop.clone()));
    tokio::time::sleep(spec.duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut report = KillReport::default();
    let mut history = Vec::new();
    for c in clients {
        let r = c.await.map_err(|e| format!("a client task failed: {e}"))?;
        report.writes_done += r.write_us.len();
        report.reads_done += r.read_us.len();
        report.writes_unknown += r.unknown;
        report.failed += r.failed;
        history.extend(r.history);
    }
    let (mut cluster, kills, pauses) =
        nem.await.map_err(|e| format!("the nemesis failed: {e}"))??;
    report.kills = kills;
    report.pauses = pauses;
    match verify::converge(&mut cluster, spec.converge).await {
        Ok(index) => {
            report.final_index = index;
            let mut dumps = Vec::new();
            for i in 0..cluster.len() {
                dumps.push(cluster.dump(i).await?);
            }
            report.replicas_differ =
                (1..dumps.len()).filter(|&i| dumps[i] != dumps[0]).map(|i| i + 1).collect();
            report.lost = verify::lost_writes(&history, &dumps[0], spec.mix.keys);
            let t_end = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            history.extend(verify::final_reads(&dumps, spec.mix.keys, t_end));
        }
        Err(e) => {
            let logs: Vec<String> = (0..cluster.len())
                .map(|i| format!("node {} log:\n{}", i + 1, cluster.log_tail(i, 4)))
                .collect();
            report.not_converged = Some(format!("{e}\n{}", logs.join("\n")));
        }
    }
    report.ops = history.len();
    if let Some(p) = &spec.history_file {
        write_history(p, &history)?;
    }
    cluster.stop();
    let t_check = Instant::now();
    report.check = check::check(&history, spec.budget);
    report.check_secs = t_check.elapsed().as_secs_f64();
    report.run_secs = t_run.elapsed().as_secs_f64();
    Ok(report)
}

/// Writes the history as JSON lines: `{"client","key","op","value","call","ret"}` (`ret` null:
/// outcome unknown; times in nanoseconds since the clients started).
fn write_history(p: &std::path::Path, h: &[check::Op]) -> Result<(), String> {
    use std::io::Write;
    let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut w = std::io::BufWriter::new(f);
    for o in h {
        let (op, value) = match &o.action {
            check::Action::Put(v) => ("put", Some(v.as_str())),
            check::Action::Delete => ("delete", None),
            check::Action::Get(v) => ("get", v.as_deref()),
        };
        let line = serde_json::json!({
            "client": o.client, "key": o.key, "op": op, "value": value, "call": o.call, "ret": o.ret,
        });
        writeln!(w, "{line}").map_err(|e| format!("{}: {e}", p.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", p.display()))
}
