//! The log format shared by WALs and the MANIFEST: 32 KiB blocks of checksummed record
//! fragments. Byte layout: `docs/format/wal.md`.
//!
//! STUB: interface fixed by the skeleton; the implementation lands separately.

use crate::error::Result;
use crate::fs::{SequentialFile, WritableFile};

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Appends records to a log file. Not synchronized: one owner at a time.
pub struct LogWriter {}

impl LogWriter {
    /// Starts writing at the beginning of `file` (a new file).
    pub fn new(file: Box<dyn WritableFile>) -> Self {
        let _ = file;
        todo!()
    }
    /// Appends one record (fragmented across blocks as needed); buffered until `flush`/`sync`.
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        let _ = payload;
        todo!()
    }
    /// Hands buffered bytes to the OS.
    pub fn flush(&mut self) -> Result<()> {
        todo!()
    }
    /// Flushes and fdatasyncs.
    pub fn sync(&mut self) -> Result<()> {
        todo!()
    }
    /// Bytes written so far.
    pub fn file_size(&self) -> u64 {
        todo!()
    }
}

/// What the reader found next.
#[derive(Debug)]
pub enum ReadOutcome {
    /// A whole record and the file offset of its first fragment.
    Record(Vec<u8>, u64),
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

/// Reads records back from a log file.
pub struct LogReader {}

impl LogReader {
    /// Reads `file` from the start; `file_name` is used in reports.
    pub fn new(file: Box<dyn SequentialFile>, file_name: String) -> Self {
        let _ = (file, file_name);
        todo!()
    }
    /// The next record, corruption report or end of file. `Err` only for IO errors.
    pub fn read_record(&mut self) -> Result<ReadOutcome> {
        todo!()
    }
}
