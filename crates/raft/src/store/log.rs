//! [`LogStore`]: openraft's `RaftLogReader` and `RaftLogStorage` on the store's log range
//! (`0x01` + index) and metadata keys (`0x00vote`, `0x00committed`, `0x00purged`).
//!
//! Per call: `append` writes its entries as one unsynced batch (readable when it returns) and
//! queues the callback on the sync thread, which completes it after the next `sync_wal`;
//! `save_vote` is one synced write; `truncate` deletes `[index, end)` and `purge` records the
//! purged id and deletes `[0, index]` in one batch, both unsynced (openraft needs neither durable
//! before it proceeds: a lost truncation or purge is redone, and the engine's prefix recovery
//! never keeps a later append without them); `save_committed` is unsynced (a hint: a lost one
//! means fewer entries re-applied at start). The `crate::store::Fault`s change exactly these
//! choices.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{ErrorVerb, OptionalSend, RaftLogReader};

use super::{logs_err, store_err, vote_err, Fault, Store};
use crate::backend::{Backend, Batch, Durability};
use crate::codec;
use crate::keys;
use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

/// The log half of the store (cheap to clone: openraft's log readers are clones).
pub struct LogStore<B: Backend> {
    store: Arc<Store<B>>,
}

impl<B: Backend> Clone for LogStore<B> {
    fn clone(&self) -> Self {
        LogStore { store: self.store.clone() }
    }
}

impl<B: Backend> LogStore<B> {
    pub(super) fn new(store: Arc<Store<B>>) -> LogStore<B> {
        LogStore { store }
    }

    fn read_opt_log_id(&self, key: &[u8], what: &str) -> Result<Option<LogId>, StorageError> {
        let r = self.store.backend.get(None, key).map_err(store_err(ErrorVerb::Read))?;
        match r {
            None => Ok(None),
            Some(v) => codec::decode_opt_log_id(&v, what).map_err(store_err(ErrorVerb::Read)),
        }
    }

    /// The entries with index in `[start, end)` (`end` `None`: to the last), in order.
    fn read_range(&self, start: u64, end: Option<u64>) -> Result<Vec<Entry>, StorageError> {
        let from = keys::log_key(start);
        let to = end.map(keys::log_key);
        let to: &[u8] = match &to {
            Some(k) => k,
            None => keys::LOG_END,
        };
        let mut out = Vec::new();
        self.store
            .backend
            .scan(None, &from, to, &mut |k, v| {
                let e = codec::decode_entry(v)?;
                if keys::log_index(k) != Some(e.log_id.index) {
                    return Err(talus::Error::corruption(
                        "raft log",
                        0,
                        format!("key {k:02x?} holds the entry of index {}", e.log_id.index),
                    ));
                }
                out.push(e);
                Ok(true)
            })
            .map_err(logs_err(ErrorVerb::Read))?;
        Ok(out)
    }
}

/// `[start, end)` of a range of log indexes (`end` `None`: unbounded); `None` if empty.
fn index_bounds(range: &impl RangeBounds<u64>) -> Option<(u64, Option<u64>)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => None,
    };
    match end {
        Some(e) if e <= start => None,
        _ => Some((start, end)),
    }
}

impl<B: Backend> RaftLogReader<TypeConfig> for LogStore<B> {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        match index_bounds(&range) {
            None => Ok(Vec::new()),
            Some((start, end)) => self.read_range(start, end),
        }
    }
}

impl<B: Backend> RaftLogStorage<TypeConfig> for LogStore<B> {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last = self
            .store
            .backend
            .last_in(keys::LOG_START, keys::LOG_END)
            .map_err(logs_err(ErrorVerb::Read))?;
        let last = match last {
            None => None,
            Some((_, v)) => Some(codec::entry_log_id(&v).map_err(logs_err(ErrorVerb::Read))?),
        };
        let last_purged_log_id = self.read_opt_log_id(keys::PURGED, "purged log id")?;
        let last_log_id = last.or(last_purged_log_id);
        Ok(LogState { last_purged_log_id, last_log_id })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let d = match self.store.fault {
            Fault::VoteNotSynced => Durability::Unsynced,
            Fault::VoteNotLogged => Durability::Unlogged,
            _ => Durability::Synced,
        };
        self.store.put(keys::VOTE, codec::encode_vote(vote), d).map_err(vote_err(ErrorVerb::Write))
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        let v = self.store.backend.get(None, keys::VOTE).map_err(vote_err(ErrorVerb::Read))?;
        match v {
            None => Ok(None),
            Some(v) => Ok(Some(codec::decode_vote(&v).map_err(vote_err(ErrorVerb::Read))?)),
        }
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        let v = codec::encode_opt_log_id(committed.as_ref());
        self.store
            .put(keys::COMMITTED, v, Durability::Unsynced)
            .map_err(store_err(ErrorVerb::Write))
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        self.read_opt_log_id(keys::COMMITTED, "committed log id")
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut b = Batch::new();
        for e in entries {
            let mut v = Vec::new();
            codec::encode_entry(&e, &mut v);
            b.put(keys::log_key(e.log_id.index), v);
        }
        let d = if self.store.fault == Fault::LogNotLogged {
            Durability::Unlogged
        } else {
            Durability::Unsynced
        };
        self.store.write(&b, d).map_err(logs_err(ErrorVerb::Write))?;
        match self.store.fault {
            Fault::LogNotSynced | Fault::LogNotLogged => callback.log_io_completed(Ok(())),
            _ => self.store.syncer.submit(callback),
        }
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut b = Batch::new();
        b.delete_range(keys::log_key(log_id.index), keys::LOG_END);
        self.store.write(&b, Durability::Unsynced).map_err(logs_err(ErrorVerb::Delete))
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut b = Batch::new();
        b.put(keys::PURGED, codec::encode_opt_log_id(Some(&log_id)));
        match log_id.index.checked_add(1) {
            Some(end) => b.delete_range(keys::LOG_START, keys::log_key(end)),
            None => b.delete_range(keys::LOG_START, keys::LOG_END),
        }
        self.store.write(&b, Durability::Unsynced).map_err(logs_err(ErrorVerb::Delete))
    }
}

#[cfg(test)]
mod tests {
    use super::index_bounds;

    #[test]
    fn index_bounds_of_every_range_form() {
        assert_eq!(index_bounds(&(3..7)), Some((3, Some(7))));
        assert_eq!(index_bounds(&(3..=7)), Some((3, Some(8))));
        assert_eq!(index_bounds(&(3..)), Some((3, None)));
        assert_eq!(index_bounds(&(..7)), Some((0, Some(7))));
        assert_eq!(index_bounds(&(5..5)), None);
        assert_eq!(index_bounds(&(0..=u64::MAX)), Some((0, None)));
        let excl = (std::ops::Bound::Excluded(u64::MAX), std::ops::Bound::Unbounded);
        assert_eq!(index_bounds(&excl), None);
    }
}
