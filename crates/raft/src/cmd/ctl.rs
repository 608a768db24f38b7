//! `talus raft-ctl`: the service's client and cluster admin on the command line.

use std::time::Duration;

use clap::{Parser, Subcommand};
use hyper::Method;

use crate::client::{KvClient, Outcome};
use crate::net::http::HttpClient;

/// talus raft-ctl: put, get and delete keys, and administer a raft-kv cluster
#[derive(Parser, Debug)]
#[command(name = "talus raft-ctl", about, long_about = None)]
struct Args {
    /// The nodes to talk to (HOST:PORT,...); requests follow the leader from there.
    #[arg(long)]
    nodes: String,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Sets KEY to VALUE (through the leader).
    Put { key: String, value: String },
    /// Reads KEY linearizably (through the leader).
    Get { key: String },
    /// Deletes KEY.
    Delete { key: String },
    /// Initializes a fresh cluster: the members ID=HOST:PORT,... (default: the node's --peers).
    Init { members: Option<String> },
    /// Adds node ID at ADDR as a learner.
    AddLearner { id: u64, addr: String },
    /// Makes the voters exactly ID,ID,... (learners first).
    ChangeMembership { ids: String },
    /// Prints the first node's metrics (JSON).
    Metrics,
}

async fn admin(
    nodes: &[String],
    method: Method,
    path: &str,
    body: String,
) -> Result<String, String> {
    let http = HttpClient::new();
    let addr = nodes.first().ok_or("--nodes is empty")?;
    let (status, reply) = http
        .request(addr, method, path, body.into_bytes(), Duration::from_secs(10))
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    let text = String::from_utf8_lossy(&reply).into_owned();
    if status.is_success() {
        Ok(text)
    } else {
        Err(format!("{addr} answered {status}: {text}"))
    }
}

fn show<T: std::fmt::Debug>(o: Outcome<T>) -> Result<String, String> {
    match o {
        Outcome::Done(v) => Ok(format!("{v:?}")),
        Outcome::Failed(e) => Err(format!("failed: {e}")),
        Outcome::Unknown(e) => Err(format!("outcome unknown: {e}")),
    }
}

async fn run(a: Args) -> Result<String, String> {
    let nodes: Vec<String> =
        a.nodes.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    if nodes.is_empty() {
        return Err("--nodes is empty".into());
    }
    let client = KvClient::new(nodes.clone());
    match a.cmd {
        Cmd::Put { key, value } => show(client.put(&key, &value).await),
        Cmd::Get { key } => match client.get(&key).await {
            Outcome::Done(Some(v)) => Ok(v),
            Outcome::Done(None) => Err(format!("{key:?}: not found")),
            o => show(o),
        },
        Cmd::Delete { key } => show(client.delete(&key).await),
        Cmd::Init { members } => {
            let body = match members {
                None => "{}".to_string(),
                Some(m) => {
                    let p = crate::node::peers::parse(&m)?;
                    serde_json::to_string(&p).map_err(|e| e.to_string())?
                }
            };
            admin(&nodes, Method::POST, "/cluster/init", body).await
        }
        Cmd::AddLearner { id, addr } => {
            let body = serde_json::to_string(&(id, addr)).map_err(|e| e.to_string())?;
            admin(&nodes, Method::POST, "/cluster/add-learner", body).await
        }
        Cmd::ChangeMembership { ids } => {
            let ids: Result<Vec<u64>, _> =
                ids.split(',').map(|s| s.trim().parse::<u64>()).collect();
            let ids = ids.map_err(|e| format!("change-membership: {e}"))?;
            let body = serde_json::to_string(&ids).map_err(|e| e.to_string())?;
            admin(&nodes, Method::POST, "/cluster/change-membership", body).await
        }
        Cmd::Metrics => admin(&nodes, Method::GET, "/cluster/metrics", String::new()).await,
    }
}

/// `talus raft-ctl ARGS`: prints the result; exit code 1 on failure, 2 on bad arguments.
pub fn raft_ctl(args: &[String]) -> i32 {
    let all = std::iter::once("talus raft-ctl".to_string()).chain(args.iter().cloned());
    let a = match Args::try_parse_from(all) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let rt = match super::runtime(1) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("talus raft-ctl: {e}");
            return 2;
        }
    };
    match rt.block_on(run(a)) {
        Ok(out) => {
            println!("{out}");
            0
        }
        Err(e) => {
            eprintln!("talus raft-ctl: {e}");
            1
        }
    }
}
