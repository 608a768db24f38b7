//! The write-conflict check of transactions (`crate::txn`): was `key` written after sequence
//! number `since`? RocksDB's `TransactionUtil::CheckKey` with `GetLatestSequenceForKey`.
//!
//! Who calls: an optimistic transaction's commit (for every key it read for update or wrote,
//! under its commit locks) and a pessimistic transaction taking a lock while it has a snapshot.
//! Locks: none (it reads one SuperVersion, as a point lookup does).
//!
//! The memtables are searched first, newest first. Writes get sequence numbers in order and a
//! memtable is switched between write groups, so once a memtable's smallest sequence number is
//! at most `since + 1`, every later write is in the memtables already searched: the answer is
//! known without a file. Otherwise the files are searched too (newest first, bloom filters
//! first), unlike RocksDB's optimistic transactions, which return `TryAgain` when the memtables
//! hold too little history (`max_write_buffer_size_to_maintain`).
//!
//! Contract for the file search: the caller holds a snapshot at or below `since` from before it
//! read `key` until the check, so compaction keeps every version above `since` (it drops or
//! zeroes the sequence number only of versions below every snapshot). Ingested files that take
//! sequence number 0 at a level (no overlap) are not seen as writes, as in RocksDB.

use super::core::SuperVersion;
use super::Db;
use crate::error::Result;
use crate::key::{SequenceNumber, MAX_SEQUENCE};

impl Db {
    /// The sequence number of the last write readers see (RocksDB's
    /// `GetLatestSequenceNumber`): what a transaction records when it starts tracking a key.
    pub(crate) fn latest_sequence(&self) -> SequenceNumber {
        self.inner().visible_sequence()
    }

    /// The first of `keys` written (a put, a delete, or a range deletion covering it) after its
    /// sequence number, if any. See the module doc for what the caller must hold.
    pub(crate) fn first_written_after<'a>(
        &self,
        keys: impl IntoIterator<Item = (&'a [u8], SequenceNumber)>,
    ) -> Result<Option<&'a [u8]>> {
        let inner = self.inner();
        let sv = inner.default_cf.super_version.load();
        // Published after the SuperVersion was loaded: a later write is not in it, and is not
        // seen either way (it raced with the check).
        let visible = inner.visible_sequence();
        for (key, since) in keys {
            if since >= visible {
                continue;
            }
            if written_after(inner, &sv, key, since)? {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }
}

/// True if `sv` holds a write of `key` (or a range deletion covering it) above `since`.
fn written_after(
    inner: &super::core::DbInner,
    sv: &SuperVersion,
    key: &[u8],
    since: SequenceNumber,
) -> Result<bool> {
    let mems = std::iter::once((&sv.mem, None)).chain(sv.imms.iter().map(|(m, t)| (m, Some(t))));
    for (mem, tombs) in mems {
        let covering = match tombs {
            Some(t) => t.max_covering_seq(key, MAX_SEQUENCE),
            None => mem
                .fragmented_range_tombstones()
                .map_or(0, |t| t.max_covering_seq(key, MAX_SEQUENCE)),
        };
        if covering > since {
            return Ok(true);
        }
        if let Some((_, seq, _)) = mem.get(key, MAX_SEQUENCE) {
            return Ok(seq > since);
        }
        if mem.first_seq().is_some_and(|first| first <= since.saturating_add(1)) {
            return Ok(false);
        }
    }
    let mut result: Result<bool> = Ok(false);
    sv.version.for_each_file_for_key(key, |level, f| {
        let reader = match inner.table_cache.reader(f, Some(level)) {
            Ok(r) => r,
            Err(e) => {
                result = Err(e);
                return false;
            }
        };
        if reader.range_tombstones().max_covering_seq(key, MAX_SEQUENCE) > since {
            result = Ok(true);
            return false;
        }
        match reader.get_pinned(key, MAX_SEQUENCE, true) {
            Ok(Some((_, seq, _))) => {
                result = Ok(seq > since);
                false
            }
            Ok(None) => true,
            Err(e) => {
                result = Err(e);
                false
            }
        }
    });
    result
}
