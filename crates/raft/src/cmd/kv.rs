//! `talus raft-kv`: runs one node of the replicated key-value service.

use std::path::PathBuf;

use clap::Parser;

use crate::node::{self, Engine, NodeConfig};
use crate::store::Fault;

/// talus raft-kv: one node of a replicated key-value service (openraft on Talus)
#[derive(Parser, Debug)]
#[command(name = "talus raft-kv", about, long_about = None)]
struct Args {
    /// Read settings from FILE (`name = value` lines, the flags' names); flags given win.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// This node's id.
    #[arg(long)]
    id: u64,
    /// The address to listen on and be known by (HOST:PORT).
    #[arg(long)]
    addr: String,
    /// Every node of the cluster, this one included: ID=HOST:PORT,... The lowest id
    /// initializes a fresh cluster; a node whose list disagrees with the cluster refuses.
    #[arg(long)]
    peers: Option<String>,
    /// The data directory.
    #[arg(long)]
    dir: PathBuf,
    /// The storage engine: talus, or rocksdb (a build with the rocksdb feature).
    #[arg(long, default_value = "talus")]
    engine: Engine,
    /// Heartbeat interval in milliseconds.
    #[arg(long, default_value_t = 50)]
    heartbeat_ms: u64,
    /// Election timeout range in milliseconds, MIN-MAX.
    #[arg(long, default_value = "300-600")]
    election_ms: String,
    /// Build a snapshot after this many applied entries.
    #[arg(long, default_value_t = 20_000)]
    snapshot_logs: u64,
    /// Log entries kept behind a snapshot.
    #[arg(long, default_value_t = 2_000)]
    keep_logs: u64,
    /// Async worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// A deliberately broken store, for showing that the checks catch it: vote-not-synced,
    /// log-not-synced, vote-not-logged, log-not-logged. Never in use.
    #[arg(long, default_value = "none", hide = true)]
    unsafe_fault: Fault,
}

fn config(args: &[String]) -> Result<(NodeConfig, usize), String> {
    let mut all = vec!["talus raft-kv".to_string()];
    // A --config file's settings first, so the command line's win.
    if let Some(path) = args.iter().find_map(|a| a.strip_prefix("--config=")) {
        all.extend(super::config_file_args(std::path::Path::new(path))?);
    }
    all.extend(args.iter().cloned());
    let a = Args::try_parse_from(all).map_err(|e| e.to_string())?;
    let (lo, hi) = a
        .election_ms
        .split_once('-')
        .and_then(|(l, h)| Some((l.parse().ok()?, h.parse().ok()?)))
        .ok_or_else(|| format!("--election-ms={}: not MIN-MAX", a.election_ms))?;
    let mut c = NodeConfig::new(a.id, &a.addr, a.dir);
    c.peers = a.peers.as_deref().map(node::peers::parse).transpose()?;
    c.engine = a.engine;
    c.fault = a.unsafe_fault;
    c.heartbeat_ms = a.heartbeat_ms;
    c.election_ms = (lo, hi);
    c.snapshot_logs = a.snapshot_logs;
    c.keep_logs = a.keep_logs;
    Ok((c, a.threads))
}

/// `talus raft-kv ARGS`: runs the node until it is killed or refuses to go on; returns the exit
/// code (2: bad arguments or refused).
pub fn raft_kv(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        use clap::CommandFactory;
        println!("{}", Args::command().render_help());
        return 0;
    }
    let (cfg, threads) = match config(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if cfg.fault != Fault::None {
        eprintln!("talus raft-kv: WARNING: running the deliberately broken store {}", cfg.fault);
    }
    let rt = match super::runtime(threads) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("talus raft-kv: {e}");
            return 2;
        }
    };
    match rt.block_on(node::run(cfg)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("talus raft-kv: {e}");
            2
        }
    }
}
