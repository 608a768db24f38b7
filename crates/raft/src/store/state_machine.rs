//! [`StateMachine`]: openraft's `RaftStateMachine` on the store's state-machine range: user
//! keys under `0x03`, the last applied log id and membership under `0x02`.
//!
//! `apply` writes a whole run of entries as one unsynced batch: their puts and deletes, the
//! membership if one of them changes it, and the last applied id, so the applied id and the data
//! always agree (after a crash the engine recovers a prefix of its log: some earlier applied
//! state, from which openraft re-applies). Snapshots: `snapshot.rs`.

use std::io::Cursor;
use std::sync::Arc;

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{EntryPayload, ErrorVerb, OptionalSend, RaftSnapshotBuilder};

use super::{sm_err, snapshot, Store};
use crate::backend::{Backend, Batch, Durability};
use crate::codec;
use crate::keys;
use crate::types::{
    Entry, LogId, Request, Response, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};

/// The state-machine half of the store.
pub struct StateMachine<B: Backend> {
    store: Arc<Store<B>>,
}

impl<B: Backend> StateMachine<B> {
    pub(super) fn new(store: Arc<Store<B>>) -> StateMachine<B> {
        StateMachine { store }
    }
}

/// Reads the last applied id and membership, at `snap` if given.
pub(super) fn applied_at<B: Backend>(
    backend: &B,
    snap: Option<&B::Snap>,
) -> talus::Result<(Option<LogId>, StoredMembership)> {
    let applied = match backend.get(snap, keys::APPLIED)? {
        None => None,
        Some(v) => codec::decode_opt_log_id(&v, "applied log id")?,
    };
    let membership = match backend.get(snap, keys::MEMBERSHIP)? {
        None => StoredMembership::default(),
        Some(v) => codec::decode_stored_membership(&v)?,
    };
    Ok((applied, membership))
}

impl<B: Backend> RaftStateMachine<TypeConfig> for StateMachine<B> {
    type SnapshotBuilder = SnapshotBuilder<B>;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        applied_at(&*self.store.backend, None).map_err(sm_err(ErrorVerb::Read))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Response>, StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut b = Batch::new();
        let mut replies = Vec::new();
        let mut last = None;
        for e in entries {
            match e.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(Request::Put { key, value }) => {
                    b.put(keys::data_key(key.as_bytes()), value.into_bytes());
                }
                EntryPayload::Normal(Request::Delete { key }) => {
                    b.delete(keys::data_key(key.as_bytes()));
                }
                EntryPayload::Membership(m) => {
                    let sm = StoredMembership::new(Some(e.log_id), m);
                    b.put(keys::MEMBERSHIP, codec::encode_stored_membership(&sm));
                }
            }
            replies.push(Response {});
            last = Some(e.log_id);
        }
        if let Some(last) = last {
            b.put(keys::APPLIED, codec::encode_opt_log_id(Some(&last)));
            self.store.write(&b, Durability::Unsynced).map_err(sm_err(ErrorVerb::Write))?;
        }
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder { store: self.store.clone() }
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let store = self.store.clone();
        let meta = meta.clone();
        let data = snapshot.into_inner();
        blocking(move || snapshot::install(&store, &meta, data)).await
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        snapshot::current(&self.store)
    }
}

/// Builds a snapshot of the state machine as of the moment it is called (a read view of the
/// engine), while `apply` goes on.
pub struct SnapshotBuilder<B: Backend> {
    store: Arc<Store<B>>,
}

impl<B: Backend> RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder<B> {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let store = self.store.clone();
        blocking(move || snapshot::build(&store)).await
    }
}

/// Runs a long blocking step (a snapshot's table, an ingestion) off the async worker threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(sm_err(ErrorVerb::Write)(talus::Error::Busy(format!(
            "a snapshot task failed: {e}"
        )))),
    }
}
