//! The log format shared by WALs and the MANIFEST: 32 KiB blocks of checksummed record
//! fragments (LevelDB's log format). Byte layout: `docs/format/wal.md`.
//!
//! Contract:
//! - [`LogWriter`] appends records to a new file, splitting each into FULL / FIRST, MIDDLE…,
//!   LAST fragments so that no fragment crosses a block boundary. It is not synchronized: one
//!   owner at a time (the DB's write leader for a WAL, the version mutex holder for a MANIFEST).
//!   `add_record` only hands bytes to the [`WritableFile`](crate::fs::WritableFile) (which may buffer); `flush` makes them
//!   survive a process crash, `sync` a power loss. After any IO error the writer refuses further
//!   records, since the file's tail is unknown: the owner must start a new file.
//! - [`LogReader`] reads records back and never panics on bad bytes: every problem becomes a
//!   [`ReadOutcome::Corrupt`] naming the dropped byte range, after which the reader goes on
//!   (the skip-any-corrupted-records behaviour); the caller's recovery mode decides whether to
//!   stop. `Err` is returned only for IO errors.

mod reader;
mod writer;

#[cfg(test)]
mod tests;

pub use crate::coding::{mask_crc, unmask_crc};
pub use reader::LogReader;
pub use writer::LogWriter;

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Bytes of a fragment header: `checksum: fixed32 | length: fixed16 | type: u8`.
pub const HEADER_SIZE: usize = 7;

/// Fragment type: a whole record.
pub const FULL_TYPE: u8 = 1;
/// Fragment type: the first piece of a record.
pub const FIRST_TYPE: u8 = 2;
/// Fragment type: an interior piece of a record.
pub const MIDDLE_TYPE: u8 = 3;
/// Fragment type: the last piece of a record.
pub const LAST_TYPE: u8 = 4;
/// Fragment type (WALs only, format version 2): a [`PredecessorWal`] record, the first record of
/// a WAL started at a memtable switch; always one whole fragment. The value is RocksDB's
/// `kPredecessorWALInfoType` (bit 7 set: a metadata record, not a write batch).
pub const PREDECESSOR_TYPE: u8 = 130;

/// What a WAL says about the WAL before it (written when the memtable switch starts it): if
/// recovery replays the predecessor to less than this, the predecessor lost its unsynced tail
/// to a power loss and replaying this WAL would leave a hole. RocksDB records the same
/// (`PredecessorWALInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PredecessorWal {
    /// The predecessor's file number.
    pub number: u64,
    /// Its size in bytes when this WAL was started.
    pub size: u64,
    /// The last sequence number written to it (0: it holds no write batch).
    pub last_seq: u64,
}

impl PredecessorWal {
    /// Encoded size: three fixed64.
    pub const ENCODED_LEN: usize = 24;

    /// `number | size | last_seq`, each fixed64.
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut b = [0u8; Self::ENCODED_LEN];
        b[..8].copy_from_slice(&self.number.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b[16..].copy_from_slice(&self.last_seq.to_le_bytes());
        b
    }

    /// Decodes [`PredecessorWal::encode`]'s bytes; `None` for any other length.
    pub fn decode(b: &[u8]) -> Option<PredecessorWal> {
        if b.len() != Self::ENCODED_LEN {
            return None;
        }
        let word = |i: usize| {
            b.get(i..i + 8).and_then(|s| s.try_into().ok()).map(u64::from_le_bytes).unwrap_or(0)
        };
        Some(PredecessorWal { number: word(0), size: word(8), last_seq: word(16) })
    }
}

/// The stored checksum of a fragment: masked crc32c over the type byte then the payload.
#[inline]
pub fn fragment_checksum(fragment_type: u8, payload: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c_append(crc32c::crc32c(&[fragment_type]), payload))
}

/// What the reader found next.
#[derive(Debug)]
pub enum ReadOutcome {
    /// A whole record and the file offset of its first fragment.
    Record(Vec<u8>, u64),
    /// A [`PredecessorWal`] record (WALs only) and its file offset.
    Predecessor(PredecessorWal, u64),
    /// A bad or incomplete stretch of `bytes` bytes at `offset`. `at_tail` is true when it runs
    /// to the end of the file (a torn write, which the tolerant recovery modes accept). The
    /// reader has skipped it and can go on.
    Corrupt {
        /// File offset of the bad bytes.
        offset: u64,
        /// How many bytes were dropped.
        bytes: u64,
        /// What was wrong.
        reason: String,
        /// True if nothing valid follows (the stretch ends at end of file).
        at_tail: bool,
    },
    /// End of file.
    Eof,
}

/// Creates (or truncates) a WAL file: appended through a memory mapping if `mapped`
/// ([`crate::Options::wal_mmap_writes`], [`crate::fs::Fs::create_mapped`], which reserves
/// `size_hint` bytes of disk at once), else with ordinary writes.
pub(crate) fn create_file(
    fs: &dyn crate::fs::Fs,
    path: &std::path::Path,
    mapped: bool,
    size_hint: u64,
) -> crate::error::Result<Box<dyn crate::fs::WritableFile>> {
    if mapped {
        fs.create_mapped(path, size_hint)
    } else {
        fs.create(path)
    }
}
