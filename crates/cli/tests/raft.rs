//! The replicated service end to end, through the `talus` binary: a short kill test (leader
//! kills, pauses, a linearizability check), the same test failing on a deliberately broken
//! store, and the refusals: a data directory of another node id, a peer list that disagrees
//! with the cluster's membership, and a follower answering with the leader's address instead of
//! reading.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn talus() -> Command {
    Command::new(env!("CARGO_BIN_EXE_talus"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn kill_test_short_run_passes() {
    let dir = tempfile::tempdir().unwrap();
    let o = talus()
        .args(["raft-bench", "--mode=kill", "--duration=20", "--kill-every-ms=1500-3000"])
        .args(["--min-kills=3", "--converge-secs=60", "--seed=7"])
        .arg(format!("--dir={}", dir.path().join("k").display()))
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success() && out.contains("RESULT ok"), "{out}");
    assert!(out.contains("acknowledged writes lost: 0"), "{out}");
}

/// A store that keeps its log entries only in the memtable (a process kill loses them, as a
/// power cut loses unsynced ones) breaks the cluster under leader kills: a restarted node
/// cannot re-apply entries it lost, or the nodes diverge. Whether a given run hits that is a
/// matter of timing (1 run in 2 of 15 s here), so this is not in the default run:
/// `cargo test --release -p talus-cli --test raft -- --ignored`. The deterministic check that
/// every broken store is caught is crates/raft/tests/power_loss.rs (power cuts on SimFs).
#[test]
#[ignore]
fn kill_test_catches_a_store_that_does_not_log_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let o = talus()
        .args(["raft-bench", "--mode=kill", "--duration=90", "--kill-every-ms=800-1500"])
        .args(["--pause-prob=0", "--converge-secs=20", "--unsafe-fault=log-not-logged"])
        .arg(format!("--dir={}", dir.path().join("k").display()))
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("RESULT FAILED"), "{out}");
}

/// Three nodes of a fresh cluster on free ports; killed on drop.
struct Nodes {
    children: Vec<Option<Child>>,
    addrs: Vec<String>,
    peers: String,
}

impl Nodes {
    fn start(dir: &Path) -> Nodes {
        let addrs: Vec<String> = (0..3)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect::<Vec<_>>()
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect();
        let peers: Vec<String> =
            addrs.iter().enumerate().map(|(i, a)| format!("{}={a}", i + 1)).collect();
        let mut n = Nodes { children: Vec::new(), addrs, peers: peers.join(",") };
        for i in 0..3 {
            let c = n.spawn(dir, i + 1, &n.peers.clone(), &format!("n{}", i + 1));
            n.children.push(Some(c));
        }
        n
    }

    fn spawn(&self, dir: &Path, id: usize, peers: &str, data: &str) -> Child {
        talus()
            .arg("raft-kv")
            .arg(format!("--id={id}"))
            .arg(format!("--addr={}", self.addrs[id - 1]))
            .arg(format!("--peers={peers}"))
            .arg(format!("--dir={}", dir.join(data).display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn kill(&mut self, id: usize) {
        if let Some(mut c) = self.children[id - 1].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// `talus raft-ctl` against every node.
    fn ctl(&self, args: &[&str]) -> Output {
        talus()
            .arg("raft-ctl")
            .arg(format!("--nodes={}", self.addrs.join(",")))
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for id in 1..=3 {
            self.kill(id);
        }
    }
}

/// A raw HTTP/1.1 POST (the test checks the service's own JSON, not a client's reading of it).
fn post(addr: &str, path: &str, body: &str) -> String {
    request(addr, "POST", path, body)
}

fn request(addr: &str, method: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Runs `child` to its end (at most `secs`) and returns its exit code and stderr.
fn finish(mut child: Child, secs: u64) -> (Option<i32>, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (status.code(), err);
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            return (None, "still running".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn refusals_by_name_and_followers_answer_with_the_leader() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = Nodes::start(dir.path());
    let put = {
        let start = Instant::now();
        loop {
            let o = nodes.ctl(&["put", "k", "v1"]);
            if o.status.success() || start.elapsed() > Duration::from_secs(30) {
                break o;
            }
        }
    };
    assert!(put.status.success(), "{}", text(&put));
    let got = nodes.ctl(&["get", "k"]);
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "v1", "{}", text(&got));

    // A follower answers a linearizable read with the leader's address, and reads nothing.
    let metrics = String::from_utf8_lossy(&nodes.ctl(&["metrics"]).stdout).into_owned();
    let m: serde_json::Value = serde_json::from_str(&metrics).unwrap();
    let leader = m["current_leader"].as_u64().unwrap() as usize;
    let follower = if leader == 1 { 2 } else { 1 };
    let reply = post(&nodes.addrs[follower - 1], "/api/read", r#"{"key":"k"}"#);
    let leader_addr = &nodes.addrs[leader - 1];
    assert!(reply.contains("NotLeader") && reply.contains(leader_addr.as_str()), "{reply}");
    assert!(!reply.contains("v1"), "a follower served the value: {reply}");
    let reply =
        post(&nodes.addrs[follower - 1], "/api/write", r#"{"Put":{"key":"k","value":"v2"}}"#);
    assert!(reply.contains("NotLeader") && reply.contains(leader_addr.as_str()), "{reply}");

    // Node 3 restarted with a peer list that moves node 2: refused, naming node 2. It must
    // hold the membership first: the put commits on two nodes, and a node 3 killed before the
    // leader reached it has nothing stored, so it would take the fresh node's path below.
    let start = Instant::now();
    while !request(&nodes.addrs[2], "GET", "/debug/dump_local", "").contains("v1") {
        assert!(start.elapsed() < Duration::from_secs(30), "node 3 never applied the put");
        std::thread::sleep(Duration::from_millis(100));
    }
    nodes.kill(3);
    let wrong: String = nodes.peers.replace(&nodes.addrs[1], "127.0.0.1:1");
    let (code, err) = finish(nodes.spawn(dir.path(), 3, &wrong, "n3"), 30);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("node 3 refuses to start") && err.contains("node 2 is at 127.0.0.1:1"),
        "{err}"
    );

    // Node 1 started on node 3's data directory (node 3 is down): refused, naming both ids.
    let (code, err) = finish(nodes.spawn(dir.path(), 1, &nodes.peers.clone(), "n3"), 30);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("holds the data of node 3, not of node 1"), "{err}");

    // A fresh node 3 (an empty directory) whose peer list contradicts the membership the
    // leader replicates to it refuses to join, by name.
    let (code, err) = finish(nodes.spawn(dir.path(), 3, &wrong, "n3-fresh"), 30);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("node 3 refuses to join") && err.contains("node 2 is at 127.0.0.1:1"),
        "{err}"
    );
}
