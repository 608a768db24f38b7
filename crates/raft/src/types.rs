//! The Raft type configuration: what a log entry carries ([`Request`]), what applying it returns
//! ([`Response`]), node ids (`u64`) and nodes ([`openraft::BasicNode`]: one `addr`, the node's
//! HTTP address), snapshots held as bytes in memory (`Cursor<Vec<u8>>`: the snapshot file's
//! bytes, docs/format/raft.md), on tokio.

use std::io::Cursor;

use serde::{Deserialize, Serialize};

/// A node id.
pub type NodeId = u64;

/// A node's address record in the membership.
pub type Node = openraft::BasicNode;

/// A write to the replicated key-value map: a log entry's payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Sets `key` to `value`.
    Put {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Removes `key`.
    Delete {
        /// The key.
        key: String,
    },
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Request::Put { key, value } => write!(f, "put {key:?} ({} bytes)", value.len()),
            Request::Delete { key } => write!(f, "delete {key:?}"),
        }
    }
}

/// What applying an entry returns to the client that proposed it: nothing beyond the fact (a
/// put or delete always applies).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {}

openraft::declare_raft_types!(
    /// The type configuration of Talus's replicated key-value service.
    pub TypeConfig:
        D = Request,
        R = Response,
        NodeId = NodeId,
        Node = Node,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

/// A log entry.
pub type Entry = openraft::Entry<TypeConfig>;
/// A log id.
pub type LogId = openraft::LogId<NodeId>;
/// A vote.
pub type Vote = openraft::Vote<NodeId>;
/// A membership config.
pub type Membership = openraft::Membership<NodeId, Node>;
/// A membership config with the log id that set it.
pub type StoredMembership = openraft::StoredMembership<NodeId, Node>;
/// A snapshot's metadata.
pub type SnapshotMeta = openraft::SnapshotMeta<NodeId, Node>;
/// openraft's storage error.
pub type StorageError = openraft::StorageError<NodeId>;
/// A Raft instance of this configuration.
pub type Raft = openraft::Raft<TypeConfig>;
