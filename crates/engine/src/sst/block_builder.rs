//! Builds one block: prefix-compressed entries with a restart point (a full key) every
//! `restart_interval` entries, then the restart array. The inverse of [`super::block::Block`].
//!
//! Used by the table builder only; the caller adds keys in the block's order (internal-key order
//! for data and index blocks, name order for meta blocks).

use crate::coding::{put_fixed32, put_varint32};

/// Accumulates entries of one block.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    num_entries: usize,
    finished: bool,
}

impl BlockBuilder {
    /// A builder with a restart point every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            num_entries: 0,
            finished: false,
        }
    }

    /// Clears the builder for the next block.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.num_entries = 0;
        self.finished = false;
    }

    /// Appends an entry.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished);
        let mut shared = 0;
        if self.counter < self.restart_interval {
            let n = self.last_key.len().min(key.len());
            while shared < n && self.last_key.get(shared) == key.get(shared) {
                shared += 1;
            }
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        let delta = key.get(shared..).unwrap_or(&[]);
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, delta.len() as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(delta);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(delta);
        self.counter += 1;
        self.num_entries += 1;
    }

    /// Appends the restart array and returns the finished block's bytes.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_fixed32(&mut self.buf, r);
            }
            put_fixed32(&mut self.buf, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buf
    }

    /// Size of the block if `key` and `value` were added and it were finished then, estimated
    /// as RocksDB's `BlockBuilder::EstimateSizeAfterKV` does: the whole key counted (not only
    /// its unshared part), a 4-byte shared-length varint, and a restart entry if one is due.
    pub fn size_estimate_after(&self, key: &[u8], value: &[u8]) -> usize {
        let restart = if self.counter >= self.restart_interval { 4 } else { 0 };
        self.size_estimate()
            + key.len()
            + value.len()
            + restart
            + 4
            + crate::coding::varint_len(key.len() as u64)
            + crate::coding::varint_len(value.len() as u64)
    }

    /// Size of the block if finished now.
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + self.restarts.len() * 4 + 4
    }

    /// True if no entry was added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.num_entries == 0
    }

    /// Entries added since the last reset.
    pub fn num_entries(&self) -> usize {
        self.num_entries
    }
}
