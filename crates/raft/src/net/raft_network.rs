//! openraft's `RaftNetworkFactory` and `RaftNetwork` over [`HttpClient`]: each RPC is one POST
//! of the request as JSON to the target node's address; the reply is the JSON of the
//! `Result<Response, RaftError>` the target's `Raft` returned. A connection that cannot be made
//! is `RPCError::Unreachable` (openraft backs off), a timeout `RPCError::Network` after the
//! RPC's hard TTL, an error the target returned `RPCError::RemoteError`.

use std::time::Duration;

use hyper::Method;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::http::{HttpClient, HttpError};
use crate::types::{Node, NodeId, TypeConfig};

/// Makes a [`Connection`] per target node; all share one connection pool.
#[derive(Clone, Default)]
pub struct Network {
    client: HttpClient,
}

impl Network {
    /// A network with its own connection pool.
    pub fn new() -> Network {
        Network::default()
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: NodeId, node: &Node) -> Connection {
        Connection { client: self.client.clone(), target, addr: node.addr.clone() }
    }
}

/// The RPCs to one node.
pub struct Connection {
    client: HttpClient,
    target: NodeId,
    addr: String,
}

/// An RPC error as openraft's.
fn rpc_error<E: std::error::Error>(e: HttpError) -> RPCError<NodeId, Node, E> {
    match e {
        HttpError::Unreachable(_) => RPCError::Unreachable(Unreachable::new(&e)),
        HttpError::Timeout | HttpError::Io(_) => RPCError::Network(NetworkError::new(&e)),
    }
}

impl Connection {
    async fn call<Req, Resp, E>(
        &self,
        path: &str,
        req: &Req,
        ttl: Duration,
    ) -> Result<Resp, RPCError<NodeId, Node, RaftError<NodeId, E>>>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let body = serde_json::to_vec(req).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let (status, reply) = self
            .client
            .request(&self.addr, Method::POST, path, body, ttl)
            .await
            .map_err(rpc_error)?;
        if !status.is_success() {
            let msg = String::from_utf8_lossy(&reply).into_owned();
            let e = std::io::Error::other(format!("node {} answered {status}: {msg}", self.target));
            return Err(RPCError::Network(NetworkError::new(&e)));
        }
        let res: Result<Resp, RaftError<NodeId, E>> =
            serde_json::from_slice(&reply).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        res.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        req: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        self.call(super::APPEND, &req, option.hard_ttl()).await
    }

    async fn install_snapshot(
        &mut self,
        req: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, Node, RaftError<NodeId, InstallSnapshotError>>,
    > {
        self.call(super::SNAPSHOT, &req, option.hard_ttl()).await
    }

    async fn vote(
        &mut self,
        req: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        self.call(super::VOTE, &req, option.hard_ttl()).await
    }
}
