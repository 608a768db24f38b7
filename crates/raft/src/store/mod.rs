//! The Raft store: openraft's [`RaftLogStorage`](openraft::storage::RaftLogStorage)
//! ([`LogStore`], `log.rs`) and [`RaftStateMachine`](openraft::storage::RaftStateMachine)
//! ([`StateMachine`], `state_machine.rs`) on one database of a [`Backend`], the log and the
//! state machine in separate key ranges (`crate::keys`), snapshots in `snapshots/`
//! (`snapshot.rs`).
//!
//! Directory of one node: `DIR/db/` (the database) and `DIR/snapshots/` (snapshot files).
//! [`open`] checks the directory belongs to the node id it is opened as (the identity key,
//! written synced by the first open), redoes a snapshot installation a crash interrupted, and
//! starts the sync thread (`syncer.rs`).
//!
//! Durability per openraft call (docs/design/replication.md has the argument):
//! `save_vote`: synced before it returns. `append`: written (readable) before it returns,
//! synced before its callback. `truncate`, `purge`, `save_committed`, `apply`: unsynced,
//! made durable by the next synced write or sync (the engine recovers a prefix of its
//! write-ahead log, so the state after a crash is always a prefix of the calls). Snapshot build
//! and install: the snapshot file is synced and its metadata written synced before they return.
//!
//! Threads: openraft calls the log store from its core task and the state machine from its
//! state-machine task, concurrently; both share one [`Store`]. Snapshot build, install and read
//! hold `Store::snapshot_lock` (never held across an await).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use openraft::{AnyError, ErrorSubject, ErrorVerb, StorageIOError};
use parking_lot::Mutex;
use talus::Error;

use crate::backend::{Backend, Batch, Durability};
use crate::codec;
use crate::keys;
use crate::types::{NodeId, StorageError};

mod fault;
mod log;
mod snapshot;
mod state_machine;
mod syncer;

pub use fault::Fault;
pub use log::LogStore;
pub use state_machine::{SnapshotBuilder, StateMachine};
use syncer::Syncer;

/// What the log store and the state machine share: the engine, the snapshot directory, the
/// sync thread.
pub struct Store<B: Backend> {
    backend: Arc<B>,
    snapshot_dir: PathBuf,
    fault: Fault,
    syncer: Syncer,
    /// Serializes snapshot builds, installs and reads of the snapshot files.
    snapshot_lock: Mutex<()>,
    /// Makes snapshot ids unique within the process (with the time, across restarts).
    snapshot_seq: AtomicU64,
}

impl<B: Backend> Store<B> {
    /// The engine.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The deliberately broken behaviour this store runs with ([`Fault::None`]: correct).
    pub fn fault(&self) -> Fault {
        self.fault
    }

    fn write(&self, batch: &Batch, d: Durability) -> talus::Result<()> {
        self.backend.write(batch, d)
    }

    fn put(&self, key: &[u8], value: Vec<u8>, d: Durability) -> talus::Result<()> {
        let mut b = Batch::new();
        b.put(key, value);
        self.write(&b, d)
    }

    /// The value of user key `key` in the state machine (latest applied state).
    pub fn get(&self, key: &[u8]) -> talus::Result<Option<Vec<u8>>> {
        self.backend.get(None, &keys::data_key(key))
    }
}

/// What [`open`] returns: the log store and the state machine openraft takes, and the shared
/// store (for the service's reads).
pub type Opened<B> = (LogStore<B>, StateMachine<B>, Arc<Store<B>>);

/// Opens the store in `dir` for node `id` over `backend` (already open on `dir/db`). Returns
/// the two halves openraft takes and the shared store (for the service's reads).
///
/// Refuses (`InvalidArgument`, naming both ids) a directory written by another node id.
pub fn open<B: Backend>(
    dir: &Path,
    id: NodeId,
    backend: B,
    fault: Fault,
) -> talus::Result<Opened<B>> {
    let snapshot_dir = dir.join("snapshots");
    backend.fs().create_dir_all(&snapshot_dir)?;
    check_identity(dir, id, &backend)?;
    let backend = Arc::new(backend);
    let syncer = Syncer::start(backend.clone())
        .map_err(|e| Error::io("starting the talus-raft-sync thread", e))?;
    let store = Arc::new(Store {
        backend,
        snapshot_dir,
        fault,
        syncer,
        snapshot_lock: Mutex::new(()),
        snapshot_seq: AtomicU64::new(0),
    });
    snapshot::recover(&store)?;
    Ok((LogStore::new(store.clone()), StateMachine::new(store.clone()), store))
}

/// Writes the identity key on the first open (synced) and refuses a directory of another id.
fn check_identity<B: Backend>(dir: &Path, id: NodeId, backend: &B) -> talus::Result<()> {
    match backend.get(None, keys::NODE_ID)? {
        Some(v) => {
            let owner = codec::decode_node_id(&v)?;
            if owner != id {
                return Err(Error::InvalidArgument(format!(
                    "{} holds the data of node {owner}, not of node {id}: refusing to open it \
                     as node {id}",
                    dir.display()
                )));
            }
            Ok(())
        }
        None => {
            let mut b = Batch::new();
            b.put(keys::NODE_ID, codec::encode_node_id(id));
            backend.write(&b, Durability::Synced)
        }
    }
}

/// An engine error as openraft's storage error.
fn io_err(subject: ErrorSubject<NodeId>, verb: ErrorVerb, e: &Error) -> StorageError {
    StorageIOError::new(subject, verb, AnyError::new(e)).into()
}

/// Shorthands for the subjects openraft names in its storage errors.
fn logs_err(verb: ErrorVerb) -> impl Fn(Error) -> StorageError {
    move |e| io_err(ErrorSubject::Logs, verb, &e)
}

fn vote_err(verb: ErrorVerb) -> impl Fn(Error) -> StorageError {
    move |e| io_err(ErrorSubject::Vote, verb, &e)
}

fn sm_err(verb: ErrorVerb) -> impl Fn(Error) -> StorageError {
    move |e| io_err(ErrorSubject::StateMachine, verb, &e)
}

fn store_err(verb: ErrorVerb) -> impl Fn(Error) -> StorageError {
    move |e| io_err(ErrorSubject::Store, verb, &e)
}
