//! Snapshots of the state machine: built from a read view of the engine into a table file,
//! kept as `snapshots/<id>.snap` (the table and a checksummed trailer: `crate::snapshot_file`),
//! installed by deleting the state machine's range and ingesting the table.
//!
//! Build: under a read view, the last applied id and membership and every user key go into one
//! table (`Backend::write_table`); the sealed file is written atomically (temp, sync, rename,
//! directory sync); then `0x00snapshot` (the metadata) is written synced, which also makes
//! durable every `apply` the view saw; older snapshot files are removed.
//!
//! Install (redo-able, so a crash at any step is finished by the next open): the received bytes
//! are checked (trailer, checksum, engine) before anything changes, written atomically as the
//! snapshot file, and `0x00installing` (the metadata) is written synced. Then the state
//! machine's range is deleted, the table ingested (the snapshot's applied id and membership
//! come with it), and `0x00snapshot` set and `0x00installing` removed in one synced batch.
//! [`recover`] (at open) redoes the last three steps while `0x00installing` exists.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use openraft::storage::Snapshot;
use openraft::{ErrorSubject, ErrorVerb};
use talus::fs::{read_all, write_file_atomic};
use talus::Error;

use super::state_machine::applied_at;
use super::{io_err, Store};
use crate::backend::{Backend, Batch, Durability};
use crate::codec;
use crate::keys;
use crate::snapshot_file;
use crate::types::{SnapshotMeta, StorageError, TypeConfig};

/// The file name of snapshot `id`; ids are ours (`T-N-I-nanos-seq`), and anything else is
/// refused rather than used as a path.
fn file_name(id: &str) -> Result<String, Error> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !ok {
        return Err(Error::InvalidArgument(format!(
            "snapshot id {id:?}: not of letters, digits and '-' (at most 128)"
        )));
    }
    Ok(format!("{id}.snap"))
}

fn snap_err(meta: Option<&SnapshotMeta>, verb: ErrorVerb) -> impl Fn(Error) -> StorageError + '_ {
    move |e| io_err(ErrorSubject::Snapshot(meta.map(|m| m.signature())), verb, &e)
}

fn read_meta<B: Backend>(store: &Store<B>, key: &[u8]) -> Result<Option<SnapshotMeta>, Error> {
    match store.backend.get(None, key)? {
        None => Ok(None),
        Some(v) => Ok(Some(codec::decode_snapshot_meta(&v)?)),
    }
}

/// Builds a snapshot of the state machine as it is now and makes it the current one.
pub(super) fn build<B: Backend>(store: &Store<B>) -> Result<Snapshot<TypeConfig>, StorageError> {
    let _g = store.snapshot_lock.lock();
    let err = snap_err(None, ErrorVerb::Write);
    let backend = &*store.backend;
    let view = backend.snapshot();
    let (applied, membership) = applied_at(backend, Some(&view)).map_err(&err)?;
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let seq = store.snapshot_seq.fetch_add(1, Ordering::Relaxed);
    let id = match &applied {
        Some(l) => {
            format!("{}-{}-{}-{nanos}-{seq}", l.leader_id.term, l.leader_id.node_id, l.index)
        }
        None => format!("0-0-none-{nanos}-{seq}"),
    };
    let name = file_name(&id).map_err(&err)?;
    let fs = backend.fs();
    let table_path = store.snapshot_dir.join(format!("{id}.table"));
    let applied_v = codec::encode_opt_log_id(applied.as_ref());
    let membership_v = codec::encode_stored_membership(&membership);
    let head: [(&[u8], &[u8]); 2] =
        [(keys::APPLIED, &applied_v), (keys::MEMBERSHIP, &membership_v)];
    let data_start = [keys::DATA_PREFIX];
    backend.write_table(&view, &head, &data_start, keys::SM_END, &table_path).map_err(&err)?;
    drop(view);
    let table = read_all(fs, &table_path).map_err(&err)?;
    fs.remove_file(&table_path).map_err(&err)?;
    let data = snapshot_file::seal(table, backend.tag());
    write_file_atomic(fs, &store.snapshot_dir, &name, &data).map_err(&err)?;
    let meta = SnapshotMeta { last_log_id: applied, last_membership: membership, snapshot_id: id };
    store
        .put(keys::SNAPSHOT, codec::encode_snapshot_meta(&meta), Durability::Synced)
        .map_err(&err)?;
    remove_others(store, &name).map_err(&err)?;
    Ok(Snapshot { meta, snapshot: Box::new(Cursor::new(data)) })
}

/// Installs the snapshot `meta` with file bytes `data` (received from the leader).
pub(super) fn install<B: Backend>(
    store: &Store<B>,
    meta: &SnapshotMeta,
    data: Vec<u8>,
) -> Result<(), StorageError> {
    let _g = store.snapshot_lock.lock();
    let err = snap_err(Some(meta), ErrorVerb::Write);
    let name = file_name(&meta.snapshot_id).map_err(&err)?;
    let what = format!("snapshot {} as received", meta.snapshot_id);
    snapshot_file::open(&data, store.backend.tag(), &what).map_err(&err)?;
    write_file_atomic(store.backend.fs(), &store.snapshot_dir, &name, &data).map_err(&err)?;
    let m = codec::encode_snapshot_meta(meta);
    store.put(keys::INSTALLING, m, Durability::Synced).map_err(&err)?;
    redo_install(store, meta).map_err(&err)
}

/// The install's steps after the marker: delete the range, ingest, commit, clean up.
fn redo_install<B: Backend>(store: &Store<B>, meta: &SnapshotMeta) -> Result<(), Error> {
    let backend = &*store.backend;
    let fs = backend.fs();
    let name = file_name(&meta.snapshot_id)?;
    let path = store.snapshot_dir.join(&name);
    let data = read_all(fs, &path)?;
    let table = snapshot_file::open(&data, backend.tag(), &path.display().to_string())?;
    let ingest_path = store.snapshot_dir.join(format!("{}.ingest", meta.snapshot_id));
    write_synced(fs, &ingest_path, table)?;
    let mut clear = Batch::new();
    clear.delete_range(keys::SM_START, keys::SM_END);
    backend.write(&clear, Durability::Unsynced)?;
    backend.ingest(&ingest_path)?;
    let mut commit = Batch::new();
    commit.put(keys::SNAPSHOT, codec::encode_snapshot_meta(meta));
    commit.delete(keys::INSTALLING);
    backend.write(&commit, Durability::Synced)?;
    remove_others(store, &name)
}

fn write_synced(fs: &dyn talus::fs::Fs, path: &Path, data: &[u8]) -> Result<(), Error> {
    let mut f = fs.create(path)?;
    f.append(data)?;
    f.sync()
}

/// Removes every file in the snapshot directory but `keep` (older snapshots, and what a crash
/// left: temp, table and ingest files).
fn remove_others<B: Backend>(store: &Store<B>, keep: &str) -> Result<(), Error> {
    let fs = store.backend.fs();
    for n in fs.list_dir(&store.snapshot_dir)? {
        if n != keep {
            fs.remove_file(&store.snapshot_dir.join(&n))?;
        }
    }
    fs.sync_dir(&store.snapshot_dir)
}

/// The current snapshot (its file's bytes, checked), if one was built or installed.
pub(super) fn current<B: Backend>(
    store: &Store<B>,
) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
    let _g = store.snapshot_lock.lock();
    let meta = read_meta(store, keys::SNAPSHOT).map_err(snap_err(None, ErrorVerb::Read))?;
    let Some(meta) = meta else { return Ok(None) };
    let data = {
        let err = snap_err(Some(&meta), ErrorVerb::Read);
        let path: PathBuf = store.snapshot_dir.join(file_name(&meta.snapshot_id).map_err(&err)?);
        let data = read_all(store.backend.fs(), &path).map_err(&err)?;
        let name = path.display().to_string();
        snapshot_file::open(&data, store.backend.tag(), &name).map_err(&err)?;
        data
    };
    Ok(Some(Snapshot { meta, snapshot: Box::new(Cursor::new(data)) }))
}

/// At open: finishes an installation a crash interrupted, reinstalls the current snapshot if
/// the state machine is behind it, and removes files a crash left in the snapshot directory.
pub(super) fn recover<B: Backend>(store: &Store<B>) -> Result<(), Error> {
    if let Some(meta) = read_meta(store, keys::INSTALLING)? {
        return redo_install(store, &meta);
    }
    let Some(meta) = read_meta(store, keys::SNAPSHOT)? else {
        return remove_others(store, "");
    };
    let (applied, _) = applied_at(&*store.backend, None)?;
    if applied < meta.last_log_id {
        return redo_install(store, &meta);
    }
    remove_others(store, &file_name(&meta.snapshot_id)?)
}
