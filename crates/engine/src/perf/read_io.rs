//! [`ReadIoStats`]: the table-file reads of one database, from every thread, and its copy
//! [`ReadIoSnapshot`] (rendered as the property `talus.read-io`). Owned by a database's table
//! cache and shared (`Arc`) with the table readers it opens, which count each block read from a
//! file (never a cache hit) here and in the thread's perf context ([`super`]). Relaxed atomics,
//! no locks.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::{block_read, file_read, BlockRole};

/// Table-file reads of one database from every thread (user reads, iterators, compaction),
/// counted by the table readers next to the perf context: what `talus.stats` prints under
/// "File reads" and the property `talus.read-io` returns. Relaxed atomics, touched only when a
/// block is read from a file (never on a cache hit).
#[derive(Debug, Default)]
pub struct ReadIoStats {
    blocks: [AtomicU64; 4],
    bytes: [AtomicU64; 4],
    file_reads: AtomicU64,
    file_read_bytes: AtomicU64,
}

/// A copy of [`ReadIoStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadIoSnapshot {
    /// Blocks read from files, by [`BlockRole::index`].
    pub blocks: [u64; 4],
    /// Bytes of those blocks as stored, by role.
    pub bytes: [u64; 4],
    /// Reads issued to table files (a readahead counts once).
    pub file_reads: u64,
    /// Bytes asked by those reads.
    pub file_read_bytes: u64,
}

impl ReadIoStats {
    /// Counts a block of `role` and `bytes` obtained from a file, in this and the thread's
    /// perf context.
    #[inline]
    pub(crate) fn block_read(&self, role: BlockRole, bytes: u64) {
        block_read(role, bytes);
        if let (Some(b), Some(n)) = (self.blocks.get(role.index()), self.bytes.get(role.index())) {
            b.fetch_add(1, Relaxed);
            n.fetch_add(bytes, Relaxed);
        }
    }

    /// Counts one read of `bytes` issued to a table file, here and in the perf context.
    #[inline]
    pub(crate) fn file_read(&self, bytes: u64) {
        file_read(bytes);
        self.file_reads.fetch_add(1, Relaxed);
        self.file_read_bytes.fetch_add(bytes, Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> ReadIoSnapshot {
        ReadIoSnapshot {
            blocks: std::array::from_fn(|i| self.blocks[i].load(Relaxed)),
            bytes: std::array::from_fn(|i| self.bytes[i].load(Relaxed)),
            file_reads: self.file_reads.load(Relaxed),
            file_read_bytes: self.file_read_bytes.load(Relaxed),
        }
    }
}

impl ReadIoSnapshot {
    /// `name=value` pairs, space-separated (the property `talus.read-io`): `data_blocks`,
    /// `data_bytes`, `index_blocks`, `index_bytes`, `filter_blocks`, `filter_bytes`,
    /// `other_blocks`, `other_bytes`, `file_reads`, `file_read_bytes`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (i, name) in ["data", "index", "filter", "other"].iter().enumerate() {
            s.push_str(&format!(
                "{name}_blocks={} {name}_bytes={} ",
                self.blocks.get(i).copied().unwrap_or(0),
                self.bytes.get(i).copied().unwrap_or(0)
            ));
        }
        s.push_str(&format!(
            "file_reads={} file_read_bytes={}",
            self.file_reads, self.file_read_bytes
        ));
        s
    }

    /// Parses [`ReadIoSnapshot::render`]'s output (unknown names ignored; `None` if a value is
    /// not a number).
    pub fn parse(s: &str) -> Option<ReadIoSnapshot> {
        let mut out = ReadIoSnapshot::default();
        for (name, v) in s.split_whitespace().filter_map(|kv| kv.split_once('=')) {
            let v: u64 = v.parse().ok()?;
            let role = ["data", "index", "filter", "other"].iter().position(|r| {
                name.strip_prefix(r).is_some_and(|rest| rest == "_blocks" || rest == "_bytes")
            });
            match (name, role) {
                ("file_reads", _) => out.file_reads = v,
                ("file_read_bytes", _) => out.file_read_bytes = v,
                (n, Some(i)) if n.ends_with("_blocks") => out.blocks[i] = v,
                (_, Some(i)) => out.bytes[i] = v,
                _ => {}
            }
        }
        Some(out)
    }
}
