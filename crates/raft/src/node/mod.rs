//! One node of the replicated key-value service (`talus raft-kv`): the store on Talus (or
//! RocksDB), openraft over the HTTP network, and the HTTP API (`routes.rs`) on one address.
//!
//! Start-up ([`run`]): the peer list must give this node the address it listens on; the store
//! refuses a data directory of another node id; openraft starts with its timers off, and a node
//! whose stored membership disagrees with the peer list refuses to start, naming the nodes that
//! disagree (`peers.rs`); then the listener opens and the timers start. A fresh cluster started
//! with `--peers` is initialized by its lowest-numbered node with the peer list as membership
//! (initializing on one node only: two nodes initialized with different lists would hold
//! different entries under the same log id). At run time a membership that arrives from a
//! leader and contradicts the peer list makes the node refuse it and stop, naming the nodes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use openraft::{Config, SnapshotPolicy};

use crate::backend::Backend;
use crate::net::raft_network::Network;
use crate::store::{self, Fault, Store};
use crate::types::{Node, NodeId, Raft};

pub mod peers;
mod routes;

pub use peers::Peers;
pub use routes::{ApiReply, ReadRequest};

/// Which engine stores the log and the state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Talus.
    Talus,
    /// RocksDB (the `rocksdb` feature).
    RocksDb,
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "talus" => Ok(Engine::Talus),
            "rocksdb" => Ok(Engine::RocksDb),
            _ => Err(format!("unknown engine {s:?} (talus or rocksdb)")),
        }
    }
}

/// A node's settings.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// This node's id.
    pub id: NodeId,
    /// The address it listens on and is known by (`HOST:PORT`).
    pub addr: String,
    /// Every node of the cluster, this one included (`None`: no checks, no automatic
    /// initialization; use the admin API).
    pub peers: Option<Peers>,
    /// The data directory (`DIR/db`, `DIR/snapshots`).
    pub dir: PathBuf,
    /// The engine.
    pub engine: Engine,
    /// A deliberately broken store (tests only).
    pub fault: Fault,
    /// Heartbeat interval, milliseconds.
    pub heartbeat_ms: u64,
    /// Election timeout range, milliseconds.
    pub election_ms: (u64, u64),
    /// Build a snapshot after this many applied entries.
    pub snapshot_logs: u64,
    /// Entries kept in the log behind a snapshot (for followers that lag a little).
    pub keep_logs: u64,
}

impl NodeConfig {
    /// Defaults for node `id` at `addr` in `dir`.
    pub fn new(id: NodeId, addr: &str, dir: PathBuf) -> NodeConfig {
        NodeConfig {
            id,
            addr: addr.to_string(),
            peers: None,
            dir,
            engine: Engine::Talus,
            fault: Fault::None,
            heartbeat_ms: 50,
            election_ms: (300, 600),
            snapshot_logs: 20_000,
            keep_logs: 2_000,
        }
    }

    fn raft_config(&self) -> Result<Arc<Config>, String> {
        let c = Config {
            cluster_name: "talus-raft".into(),
            heartbeat_interval: self.heartbeat_ms,
            election_timeout_min: self.election_ms.0,
            election_timeout_max: self.election_ms.1,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(self.snapshot_logs),
            max_in_snapshot_log_to_keep: self.keep_logs,
            install_snapshot_timeout: 5_000,
            enable_tick: false,
            ..Default::default()
        };
        c.validate().map(Arc::new).map_err(|e| format!("raft config: {e}"))
    }
}

/// Reads a user key from the state machine, whatever the engine.
pub(crate) trait KvRead: Send + Sync {
    fn get(&self, key: &[u8]) -> talus::Result<Option<Vec<u8>>>;
    /// Every user key and value of the local state machine.
    fn dump(&self) -> talus::Result<Vec<(Vec<u8>, Vec<u8>)>>;
}

impl<B: Backend> KvRead for Store<B> {
    fn get(&self, key: &[u8]) -> talus::Result<Option<Vec<u8>>> {
        Store::get(self, key)
    }

    fn dump(&self) -> talus::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        let end = [crate::keys::DATA_PREFIX + 1];
        self.backend().scan(None, &[crate::keys::DATA_PREFIX], &end, &mut |k, v| {
            out.push((k.get(1..).unwrap_or_default().to_vec(), v.to_vec()));
            Ok(true)
        })?;
        Ok(out)
    }
}

/// Runs node `cfg` until it refuses a membership (the error says why) or the process ends.
pub async fn run(cfg: NodeConfig) -> Result<(), String> {
    if let Some(p) = &cfg.peers {
        match p.get(&cfg.id) {
            Some(a) if *a == cfg.addr => {}
            Some(a) => {
                return Err(format!(
                    "--peers names node {} at {a}, but --addr is {}",
                    cfg.id, cfg.addr
                ))
            }
            None => return Err(format!("--peers does not name this node ({})", cfg.id)),
        }
    }
    let db_dir = cfg.dir.join("db");
    match cfg.engine {
        Engine::Talus => {
            let fs = Arc::new(talus::fs::StdFs);
            let b = crate::backend::talus_db::TalusBackend::open(&db_dir, fs)
                .map_err(|e| format!("opening {}: {e}", db_dir.display()))?;
            run_on(cfg, b).await
        }
        #[cfg(feature = "rocksdb")]
        Engine::RocksDb => {
            let b = crate::backend::rocks::RocksBackend::open(&db_dir)
                .map_err(|e| format!("opening {}: {e}", db_dir.display()))?;
            run_on(cfg, b).await
        }
        #[cfg(not(feature = "rocksdb"))]
        Engine::RocksDb => Err("this talus was built without the rocksdb feature".into()),
    }
}

async fn run_on<B: Backend>(cfg: NodeConfig, backend: B) -> Result<(), String> {
    let (log, sm, store) = store::open(&cfg.dir, cfg.id, backend, cfg.fault)
        .map_err(|e| format!("node {}: {e}", cfg.id))?;
    let raft = Raft::new(cfg.id, cfg.raft_config()?, Network::new(), log, sm)
        .await
        .map_err(|e| format!("starting raft: {e}"))?;
    // The membership openraft loaded (from the state machine and the log), read inside its
    // core task: the metrics may not show it yet.
    let stored = raft
        .with_raft_state(|st| {
            let e = st.membership_state.effective();
            (*e.log_id(), e.membership().clone())
        })
        .await
        .map_err(|e| format!("starting raft: {e}"))?;
    if let (Some(peers), Some(_)) = (&cfg.peers, stored.0) {
        if let Some(d) = peers::restart_disagreement(peers, &stored.1) {
            let _ = raft.shutdown().await;
            return Err(format!(
                "node {} refuses to start: its peer list disagrees with the cluster's \
                 membership stored here: {d}",
                cfg.id
            ));
        }
    }
    let listener = tokio::net::TcpListener::bind(&cfg.addr)
        .await
        .map_err(|e| format!("listening on {}: {e}", cfg.addr))?;
    let (refuse_tx, mut refuse_rx) = tokio::sync::mpsc::unbounded_channel();
    let app = Arc::new(routes::App {
        id: cfg.id,
        raft: raft.clone(),
        read: store.clone(),
        peers: cfg.peers.clone(),
        refuse: refuse_tx,
    });
    let server = tokio::spawn(crate::net::http::serve(listener, move |req| {
        routes::handle(app.clone(), req)
    }));
    raft.runtime_config().tick(true);
    if let Some(peers) = &cfg.peers {
        let fresh = stored.0.is_none();
        if fresh && peers.keys().next() == Some(&cfg.id) {
            let members: BTreeMap<NodeId, Node> =
                peers.iter().map(|(id, a)| (*id, Node { addr: a.clone() })).collect();
            // NotAllowed if a vote or log exists already: nothing to do then.
            let _ = raft.initialize(members).await;
        }
    }
    eprintln!(
        "talus raft-kv: node {} serving on {} ({})",
        cfg.id,
        cfg.addr,
        store.backend().name()
    );
    let why = refuse_rx.recv().await.unwrap_or_else(|| "the service stopped".into());
    server.abort();
    let _ = raft.shutdown().await;
    Err(why)
}
