//! [`Cluster`]: three `talus raft-kv` child processes on loopback, which the bench starts,
//! kills (`SIGKILL`), restarts, pauses (`SIGSTOP`) and resumes (`SIGCONT`), and asks for their
//! metrics. Each node's output is appended to `DIR/nN.log`. Dropping the cluster kills every
//! node it started (and only those: it holds their `Child` handles).

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hyper::Method;

use crate::net::http::HttpClient;

/// How to start the nodes.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// The `talus` binary.
    pub exe: PathBuf,
    /// The directory holding `n1`, `n2`, `n3` and their logs.
    pub dir: PathBuf,
    /// The nodes' addresses (node `i + 1` at `addrs[i]`).
    pub addrs: Vec<String>,
    /// Flags added to every node's command line (engine, snapshot policy, fault, ...).
    pub extra: Vec<String>,
}

/// The running nodes.
pub struct Cluster {
    spec: ClusterSpec,
    children: Vec<Option<Child>>,
    paused: Vec<bool>,
    http: HttpClient,
}

/// `n` free loopback addresses (bound, then released: another process could take one first).
pub fn free_addrs(n: usize) -> std::io::Result<Vec<String>> {
    let listeners: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0")).collect::<Result<_, _>>()?;
    listeners.iter().map(|l| Ok(l.local_addr()?.to_string())).collect()
}

impl Cluster {
    /// Starts every node of `spec` (their directories must be new or theirs from before).
    pub fn start(spec: ClusterSpec) -> Result<Cluster, String> {
        std::fs::create_dir_all(&spec.dir).map_err(|e| format!("{}: {e}", spec.dir.display()))?;
        let n = spec.addrs.len();
        let mut c = Cluster {
            spec,
            children: (0..n).map(|_| None).collect(),
            paused: vec![false; n],
            http: HttpClient::new(),
        };
        for i in 0..n {
            c.spawn(i)?;
        }
        Ok(c)
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// True if the cluster has no node.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// The nodes' addresses.
    pub fn addrs(&self) -> &[String] {
        &self.spec.addrs
    }

    /// The data directory of node index `i`.
    pub fn node_dir(&self, i: usize) -> PathBuf {
        self.spec.dir.join(format!("n{}", i + 1))
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.spec.dir.join(format!("n{}.log", i + 1))
    }

    /// Starts node index `i` (if it is not running).
    pub fn spawn(&mut self, i: usize) -> Result<(), String> {
        if self.children.get(i).is_some_and(Option::is_some) {
            return Ok(());
        }
        let peers: Vec<String> =
            self.spec.addrs.iter().enumerate().map(|(j, a)| format!("{}={a}", j + 1)).collect();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path(i))
            .map_err(|e| format!("{}: {e}", self.log_path(i).display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&self.spec.exe)
            .arg("raft-kv")
            .arg(format!("--id={}", i + 1))
            .arg(format!("--addr={}", self.spec.addrs[i]))
            .arg(format!("--peers={}", peers.join(",")))
            .arg(format!("--dir={}", self.node_dir(i).display()))
            .args(&self.spec.extra)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.spec.exe.display()))?;
        self.children[i] = Some(child);
        self.paused[i] = false;
        Ok(())
    }

    /// Kills node index `i` with `SIGKILL` and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.children.get_mut(i).and_then(Option::take) {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.paused[i] = false;
    }

    fn signal(&self, i: usize, sig: libc::c_int) -> bool {
        let Some(Some(c)) = self.children.get(i) else { return false };
        let Ok(pid) = libc::pid_t::try_from(c.id()) else { return false };
        // SAFETY: `kill` only sends a signal to the process we started (and have not reaped).
        unsafe { libc::kill(pid, sig) == 0 }
    }

    /// Pauses node index `i` (`SIGSTOP`): it answers nothing until resumed, as if cut off.
    pub fn pause(&mut self, i: usize) -> bool {
        let ok = self.signal(i, libc::SIGSTOP);
        self.paused[i] |= ok;
        ok
    }

    /// Resumes node index `i` (`SIGCONT`).
    pub fn resume(&mut self, i: usize) {
        if self.paused[i] {
            self.signal(i, libc::SIGCONT);
            self.paused[i] = false;
        }
    }

    /// True if node index `i` was started and has not exited.
    pub fn running(&mut self, i: usize) -> bool {
        match self.children.get_mut(i) {
            Some(Some(c)) => matches!(c.try_wait(), Ok(None)),
            _ => false,
        }
    }

    /// True if node index `i` is paused.
    pub fn is_paused(&self, i: usize) -> bool {
        self.paused[i]
    }

    /// Node index `i`'s metrics (openraft's, as JSON), if it answers in time.
    pub async fn metrics(&self, i: usize) -> Option<serde_json::Value> {
        let addr = self.spec.addrs.get(i)?;
        let r = self.http.request(
            addr,
            Method::GET,
            "/cluster/metrics",
            Vec::new(),
            Duration::from_millis(500),
        );
        let (status, body) = r.await.ok()?;
        if !status.is_success() {
            return None;
        }
        serde_json::from_slice(&body).ok()
    }

    /// The index of the node that says it leads (the highest term if several do).
    pub async fn leader(&self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for i in 0..self.len() {
            if self.paused[i] {
                continue;
            }
            let Some(m) = self.metrics(i).await else { continue };
            if m["state"] == "Leader" {
                let term = m["current_term"].as_u64().unwrap_or(0);
                if best.is_none_or(|(t, _)| term > t) {
                    best = Some((term, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// Waits up to `timeout` for a leader.
    pub async fn wait_leader(&self, timeout: Duration) -> Option<usize> {
        let start = std::time::Instant::now();
        while start.elapsed() < timeout {
            if let Some(l) = self.leader().await {
                return Some(l);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// Node index `i`'s whole state machine (`/debug/dump_local`).
    pub async fn dump(
        &self,
        i: usize,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        let addr = &self.spec.addrs[i];
        let r = self.http.request(
            addr,
            Method::GET,
            "/debug/dump_local",
            Vec::new(),
            Duration::from_secs(30),
        );
        let (status, body) = r.await.map_err(|e| format!("node {}: {e}", i + 1))?;
        if !status.is_success() {
            return Err(format!("node {}: {status}", i + 1));
        }
        serde_json::from_slice(&body).map_err(|e| format!("node {}: {e}", i + 1))
    }

    /// Kills every node.
    pub fn stop(&mut self) {
        for i in 0..self.len() {
            self.resume(i);
            self.kill(i);
        }
    }

    /// The last lines of node index `i`'s log (for failure reports).
    pub fn log_tail(&self, i: usize, lines: usize) -> String {
        tail(&self.log_path(i), lines)
    }
}

fn tail(p: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
