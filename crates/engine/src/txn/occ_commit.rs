//! The commit of an optimistic transaction (RocksDB's `CommitWithParallelValidate`): lock the
//! buckets of its keys (a fixed array of mutexes indexed by a hash of the key, taken in bucket
//! order so two commits never wait for each other in a circle), check every key
//! (`db/conflict.rs`: the memtables, then the files if the memtables do not reach back far
//! enough), write the batch through the write path (one write group member, one WAL record),
//! and only then unlock. So two transactions with a common key commit one after the other, and
//! the second sees the first's write. Writes outside transactions take no bucket lock: they are
//! seen by the checks that come after them, as in RocksDB.
//!
//! Who calls: [`crate::Transaction::commit`]. Locks: the buckets of one commit, in order;
//! below them, the write path's.

use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;

use super::tracker::Tracker;
use crate::batch::WriteBatch;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::key::EscapedBytes;
use crate::options::WriteOptions;

/// The commit locks of one optimistic database.
pub(crate) struct OccShared {
    buckets: Box<[Mutex<()>]>,
}

impl OccShared {
    /// `n` commit locks (at least one).
    pub(crate) fn new(n: usize) -> OccShared {
        OccShared { buckets: (0..n.max(1)).map(|_| Mutex::new(())).collect() }
    }

    fn bucket(&self, key: &[u8]) -> usize {
        (xxhash_rust::xxh3::xxh3_64(key) % self.buckets.len() as u64) as usize
    }

    /// Validates `tracker`'s keys and writes `batch`, under the keys' commit locks.
    pub(crate) fn commit(
        &self,
        db: &Db,
        txn_id: u64,
        tracker: &Tracker,
        batch: WriteBatch,
        wo: &WriteOptions,
    ) -> Result<()> {
        let mut order: SmallVec<[usize; 16]> =
            tracker.iter().map(|(k, _)| self.bucket(k)).collect();
        order.sort_unstable();
        order.dedup();
        let _held: SmallVec<[MutexGuard<'_, ()>; 16]> =
            order.iter().filter_map(|&b| self.buckets.get(b)).map(Mutex::lock).collect();
        if let Some(k) = db.first_written_after(tracker.iter().map(|(k, t)| (k, t.seq)))? {
            return Err(Error::Busy(format!(
                "write conflict: {:?} was written after transaction {txn_id} read it for update \
                 or wrote it",
                EscapedBytes(k)
            )));
        }
        if batch.is_empty() {
            return Ok(());
        }
        db.write(batch, wo)
    }
}
