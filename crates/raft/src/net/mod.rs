//! The network: HTTP/1.1 with JSON bodies, on hyper (`http.rs`), carrying openraft's RPCs
//! between nodes (`raft_network.rs`: `POST /raft/append`, `/raft/vote`, `/raft/snapshot`) and
//! the service's API (`crate::node`).

pub mod http;
pub mod raft_network;

/// The path of the append-entries RPC.
pub const APPEND: &str = "/raft/append";
/// The path of the vote RPC.
pub const VOTE: &str = "/raft/vote";
/// The path of the install-snapshot RPC (one chunk per request).
pub const SNAPSHOT: &str = "/raft/snapshot";
