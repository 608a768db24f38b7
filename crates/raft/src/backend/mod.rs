//! The storage under the Raft log and state machine: the few operations the store needs from a
//! key-value engine ([`Backend`]), implemented on Talus ([`talus_db::TalusBackend`]) and, with
//! the `rocksdb` feature, on RocksDB (`rocks::RocksBackend`), so a benchmark compares the
//! engines under the same `RaftLogStorage` and `RaftStateMachine` code.
//!
//! Contract: writes of one [`Batch`] are atomic; a [`Durability::Synced`] write is durable
//! when it returns and so is every write before it (one write-ahead log, recovered as a
//! prefix); [`Backend::sync_wal`] makes every earlier write durable; an unsynced write survives
//! a process crash (it reached the operating system) but may be lost, with everything after
//! it, on power loss. Snapshot files are written and read through [`Backend::fs`].

use std::path::Path;

use talus::fs::Fs;
use talus::Result;

pub mod talus_db;

#[cfg(feature = "rocksdb")]
pub mod rocks;

/// One operation of a [`Batch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Sets a key.
    Put(Vec<u8>, Vec<u8>),
    /// Deletes a key.
    Delete(Vec<u8>),
    /// Deletes the keys in `[start, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// Operations applied atomically, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }
    /// Adds a put.
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put(key.into(), value.into()));
    }
    /// Adds a delete.
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete(key.into()));
    }
    /// Adds a deletion of `[start, end)`.
    pub fn delete_range(&mut self, start: impl Into<Vec<u8>>, end: impl Into<Vec<u8>>) {
        self.ops.push(Op::DeleteRange(start.into(), end.into()));
    }
    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
    /// True if there is no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// What [`Backend::scan`] calls on each entry: `Ok(false)` stops the scan.
pub type ScanFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// How durable a write must be when it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Synced: survives power loss (and makes every earlier write survive it too).
    Synced,
    /// Logged but not synced: survives a process crash, not a power loss.
    Unsynced,
    /// Not logged at all (the engine's `disable_wal`): lost by a process crash unless flushed
    /// first. Only the deliberately broken stores of `crate::store::Fault` use it.
    Unlogged,
}

/// A key-value engine under the Raft store. See the module documentation for the contract.
pub trait Backend: Send + Sync + 'static {
    /// A consistent read view.
    type Snap: Send + Sync + 'static;

    /// The engine's name (`talus`, `rocksdb`), in snapshot files and reports.
    fn name(&self) -> &'static str;
    /// The engine's tag in snapshot files (docs/format/raft.md): 1 Talus, 2 RocksDB.
    fn tag(&self) -> u8;
    /// Applies `batch` atomically with the given durability.
    fn write(&self, batch: &Batch, durability: Durability) -> Result<()>;
    /// Makes every write made before the call durable.
    fn sync_wal(&self) -> Result<()>;
    /// The value of `key`, at `snap` if given, else the latest.
    fn get(&self, snap: Option<&Self::Snap>, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// A consistent read view of the current state.
    fn snapshot(&self) -> Self::Snap;
    /// Calls `f` on each entry of `[start, end)` in key order (at `snap` if given) until it
    /// returns false.
    fn scan(
        &self,
        snap: Option<&Self::Snap>,
        start: &[u8],
        end: &[u8],
        f: &mut ScanFn<'_>,
    ) -> Result<()>;
    /// The last entry of `[start, end)`, if any.
    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>>;
    /// Writes `head` (entries sorting before `start`, in order) and then every entry of
    /// `[start, end)` at `snap` into a new table file at `path` that [`Backend::ingest`] takes,
    /// synced. Returns the number of entries.
    fn write_table(
        &self,
        snap: &Self::Snap,
        head: &[(&[u8], &[u8])],
        start: &[u8],
        end: &[u8],
        path: &Path,
    ) -> Result<u64>;
    /// Ingests a table file written by [`Backend::write_table`] (of this engine): its entries
    /// become visible at once and hide older values of the same keys. The file is moved in.
    fn ingest(&self, path: &Path) -> Result<()>;
    /// The file system snapshot files go through.
    fn fs(&self) -> &dyn Fs;
}
