//! The node's HTTP routes (JSON in, JSON out), in the shape of openraft's raft-kv examples:
//!
//! | route | body | reply |
//! |---|---|---|
//! | `POST /raft/append`, `/raft/vote`, `/raft/snapshot` | openraft's request | `Result` of openraft's response |
//! | `POST /api/write` | a [`Request`] | [`ApiReply`] of the entry's log index |
//! | `POST /api/read` | a [`ReadRequest`] | [`ApiReply`] of the value (linearizable) |
//! | `POST /cluster/init` | `{}` or `{"ID": "HOST:PORT", ...}` | `Result<(), RaftError<InitializeError>>` |
//! | `POST /cluster/add-learner` | `[ID, "HOST:PORT"]` | `Result<ClientWriteResponse, ...>` |
//! | `POST /cluster/change-membership` | `[ID, ...]` (the new voters) | `Result<ClientWriteResponse, ...>` |
//! | `GET /cluster/metrics` | | openraft's `RaftMetrics` |
//! | `GET /debug/dump_local` | | every key and value of this node's state machine, as it is: **not** linearizable (for the kill test's final comparison of the replicas) |
//!
//! Writes and reads: a node that is not the leader answers [`ApiReply::NotLeader`] with the
//! leader's id and address (if it knows them) without proposing or reading anything, so a
//! client may retry there. A leader proposes the write and answers `Ok` once it is committed
//! and applied; if that fails after the proposal the outcome is [`ApiReply::Unknown`] (the
//! entry may still commit under a later leader). A read on the leader first confirms its
//! leadership with a quorum and waits until it has applied everything committed before the
//! read (openraft's `ensure_linearizable`, the read-index protocol), then reads its state
//! machine: a deposed or partitioned leader cannot serve a stale value.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use hyper::{Method, StatusCode};
use serde::{Deserialize, Serialize};

use super::peers::{conflict, Peers};
use super::KvRead;
use crate::net::http::{Incoming, Reply};
use crate::types::{Node, NodeId, Raft, Request, TypeConfig};

/// What the node's routes share.
pub(super) struct App {
    pub id: NodeId,
    pub raft: Raft,
    pub read: Arc<dyn KvRead>,
    pub peers: Option<Peers>,
    /// Stops the node with the reason (a membership that contradicts the peer list).
    pub refuse: tokio::sync::mpsc::UnboundedSender<String>,
}

/// The body of `POST /api/read`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReadRequest {
    /// The key.
    pub key: String,
}

/// The reply of `/api/write` and `/api/read`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApiReply<T> {
    /// Done: the write's log index, or the value read.
    Ok(T),
    /// Not the leader: nothing was proposed or read. Retry at the leader, if known.
    NotLeader {
        /// The leader's id, if this node knows one.
        leader_id: Option<NodeId>,
        /// The leader's address, if known.
        leader_addr: Option<String>,
    },
    /// The write was proposed and its outcome is unknown (it may commit or not).
    Unknown(String),
    /// Failed; for a write, nothing was proposed.
    Error(String),
}

fn json<T: Serialize>(status: StatusCode, v: &T) -> Reply {
    match serde_json::to_vec(v) {
        Ok(body) => Reply { status, body },
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &format!("encoding the reply: {e}")),
    }
}

fn error(status: StatusCode, msg: &str) -> Reply {
    let body = serde_json::json!({ "error": msg }).to_string().into_bytes();
    Reply { status, body }
}

fn parse<T: for<'de> Deserialize<'de>>(req: &Incoming) -> Result<T, Reply> {
    serde_json::from_slice(&req.body)
        .map_err(|e| error(StatusCode::BAD_REQUEST, &format!("{}: bad body: {e}", req.path)))
}

/// Answers one request.
pub(super) async fn handle(app: Arc<App>, req: Incoming) -> Reply {
    let r = match (&req.method, req.path.as_str()) {
        (&Method::POST, crate::net::APPEND) => append(&app, &req).await,
        (&Method::POST, crate::net::VOTE) => match parse(&req) {
            Ok(v) => Ok(json(StatusCode::OK, &app.raft.vote(v).await)),
            Err(r) => Err(r),
        },
        (&Method::POST, crate::net::SNAPSHOT) => snapshot(&app, &req).await,
        (&Method::POST, "/api/write") => write(&app, &req).await,
        (&Method::POST, "/api/read") => read(&app, &req).await,
        (&Method::POST, "/cluster/init") => init(&app, &req).await,
        (&Method::POST, "/cluster/add-learner") => match parse::<(NodeId, String)>(&req) {
            Ok((id, addr)) => {
                let r = app.raft.add_learner(id, Node { addr }, true).await;
                Ok(json(StatusCode::OK, &r))
            }
            Err(r) => Err(r),
        },
        (&Method::POST, "/cluster/change-membership") => match parse::<BTreeSet<NodeId>>(&req) {
            Ok(ids) => Ok(json(StatusCode::OK, &app.raft.change_membership(ids, false).await)),
            Err(r) => Err(r),
        },
        (&Method::GET, "/debug/dump_local") => Ok(dump_local(&app)),
        (&Method::GET, "/cluster/metrics") => {
            let m = app.raft.metrics().borrow().clone();
            Ok(json(StatusCode::OK, &m))
        }
        _ => Err(error(StatusCode::NOT_FOUND, &format!("no route {} {}", req.method, req.path))),
    };
    r.unwrap_or_else(|reply| reply)
}

/// Refuses (and stops the node on) a membership that contradicts the peer list.
fn check_membership(app: &App, m: &crate::types::Membership) -> Result<(), Reply> {
    let Some(peers) = &app.peers else { return Ok(()) };
    let Some(d) = conflict(peers, m) else { return Ok(()) };
    let msg = format!("node {} refuses to join: {d}", app.id);
    let _ = app.refuse.send(msg.clone());
    Err(error(StatusCode::CONFLICT, &msg))
}

async fn append(app: &App, req: &Incoming) -> Result<Reply, Reply> {
    let r: openraft::raft::AppendEntriesRequest<TypeConfig> = parse(req)?;
    for e in &r.entries {
        if let openraft::EntryPayload::Membership(m) = &e.payload {
            check_membership(app, m)?;
        }
    }
    Ok(json(StatusCode::OK, &app.raft.append_entries(r).await))
}

async fn snapshot(app: &App, req: &Incoming) -> Result<Reply, Reply> {
    let r: openraft::raft::InstallSnapshotRequest<TypeConfig> = parse(req)?;
    check_membership(app, r.meta.last_membership.membership())?;
    Ok(json(StatusCode::OK, &app.raft.install_snapshot(r).await))
}

/// `Some(NotLeader)` unless this node is the leader now.
fn not_leader<T>(app: &App) -> Option<ApiReply<T>> {
    let m = app.raft.metrics().borrow().clone();
    if m.current_leader == Some(app.id) && m.state.is_leader() {
        return None;
    }
    let leader_addr = m
        .current_leader
        .and_then(|l| m.membership_config.membership().get_node(&l).map(|n| n.addr.clone()));
    Some(ApiReply::NotLeader { leader_id: m.current_leader, leader_addr })
}

async fn write(app: &App, req: &Incoming) -> Result<Reply, Reply> {
    let r: Request = parse(req)?;
    if let Some(nl) = not_leader::<u64>(app) {
        return Ok(json(StatusCode::OK, &nl));
    }
    let reply = match app.raft.client_write(r).await {
        Ok(resp) => ApiReply::Ok(resp.log_id.index),
        Err(e) => ApiReply::Unknown(e.to_string()),
    };
    Ok(json(StatusCode::OK, &reply))
}

async fn read(app: &App, req: &Incoming) -> Result<Reply, Reply> {
    let r: ReadRequest = parse(req)?;
    if let Some(nl) = not_leader::<Option<String>>(app) {
        return Ok(json(StatusCode::OK, &nl));
    }
    let reply = match app.raft.ensure_linearizable().await {
        Err(e) => match e.forward_to_leader() {
            Some(f) => ApiReply::NotLeader {
                leader_id: f.leader_id,
                leader_addr: f.leader_node.as_ref().map(|n| n.addr.clone()),
            },
            None => ApiReply::Error(e.to_string()),
        },
        Ok(_) => match app.read.get(r.key.as_bytes()) {
            Ok(None) => ApiReply::Ok(None),
            Ok(Some(v)) => match String::from_utf8(v) {
                Ok(s) => ApiReply::Ok(Some(s)),
                Err(_) => ApiReply::Error(format!("the value of {:?} is not UTF-8", r.key)),
            },
            Err(e) => ApiReply::Error(e.to_string()),
        },
    };
    Ok(json(StatusCode::OK, &reply))
}

fn dump_local(app: &App) -> Reply {
    match app.read.dump() {
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Ok(kvs) => {
            let map: BTreeMap<String, String> = kvs
                .into_iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(&k).into_owned(),
                        String::from_utf8_lossy(&v).into_owned(),
                    )
                })
                .collect();
            json(StatusCode::OK, &map)
        }
    }
}

async fn init(app: &App, req: &Incoming) -> Result<Reply, Reply> {
    let given: BTreeMap<NodeId, String> =
        if req.body.iter().all(u8::is_ascii_whitespace) { BTreeMap::new() } else { parse(req)? };
    let members: BTreeMap<NodeId, Node> = if !given.is_empty() {
        given.into_iter().map(|(id, addr)| (id, Node { addr })).collect()
    } else if let Some(p) = &app.peers {
        p.iter().map(|(id, a)| (*id, Node { addr: a.clone() })).collect()
    } else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "no members given and the node has no --peers: give {\"ID\": \"HOST:PORT\", ...}",
        ));
    };
    Ok(json(StatusCode::OK, &app.raft.initialize(members).await))
}
