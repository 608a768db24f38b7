//! [`LogWriter`]: splits records into fragments and appends them block by block.

use super::{
    fragment_checksum, PredecessorWal, BLOCK_SIZE, FIRST_TYPE, FULL_TYPE, HEADER_SIZE, LAST_TYPE,
    MIDDLE_TYPE, PREDECESSOR_TYPE,
};
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use smallvec::SmallVec;

/// A piece of a record as written: the zeros closing the previous block (0..6 bytes), a
/// fragment's header, the fragment.
type Piece<'a> = (usize, [u8; HEADER_SIZE], &'a [u8]);

/// Zeros for a block's trailer (fewer than [`HEADER_SIZE`] bytes).
const TRAILER_ZEROS: [u8; HEADER_SIZE - 1] = [0; HEADER_SIZE - 1];

/// Appends records to a log file. Not synchronized: one owner at a time.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Bytes already used in the current block.
    block_offset: usize,
    /// Set after an IO error: the file's tail is unknown, so no more records may follow.
    failed: bool,
    /// File size at the last sync or writeback request.
    written_back: u64,
}

impl LogWriter {
    /// Starts writing at the end of `file`: normally a new, empty file; if it already holds
    /// `file.size()` bytes of log, the writer continues in the block where they end.
    pub fn new(file: Box<dyn WritableFile>) -> Self {
        let block_offset = (file.size() % BLOCK_SIZE as u64) as usize;
        let written_back = file.size();
        LogWriter { file, block_offset, failed: false, written_back }
    }

    /// Appends one record (fragmented across blocks as needed); buffered until `flush`/`sync`.
    ///
    /// An empty payload is written as one FULL fragment of length 0.
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        self.check_usable()?;
        let r = self.write_fragments(payload);
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Appends the [`PredecessorWal`] record: the first record of a WAL started at a memtable
    /// switch (so it always fits in the first block; anywhere else is refused).
    pub fn add_predecessor(&mut self, p: &PredecessorWal) -> Result<()> {
        self.check_usable()?;
        if self.block_offset != 0 || self.file.size() != 0 {
            return Err(Error::InvalidArgument(
                "the predecessor-WAL record must be a WAL's first record".into(),
            ));
        }
        let r = self.emit(PREDECESSOR_TYPE, &p.encode());
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Hands buffered bytes to the OS.
    pub fn flush(&mut self) -> Result<()> {
        self.check_usable()?;
        let r = self.file.flush();
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Starts writeback (see [`WritableFile::start_writeback`]) if at least `bytes_per_sync`
    /// bytes were written since the last sync or writeback; 0 never does.
    pub fn writeback_every(&mut self, bytes_per_sync: u64) -> Result<()> {
        let size = self.file.size();
        if bytes_per_sync == 0 || size - self.written_back.min(size) < bytes_per_sync {
            return Ok(());
        }
        self.check_usable()?;
        let r = self.file.start_writeback();
        if r.is_err() {
            self.failed = true;
        }
        self.written_back = size;
        r
    }

    /// Flushes and fdatasyncs.
    pub fn sync(&mut self) -> Result<()> {
        self.check_usable()?;
        let r = self.file.sync();
        if r.is_err() {
            self.failed = true;
        } else {
            self.written_back = self.file.size();
        }
        r
    }

    /// Bytes written so far.
    pub fn file_size(&self) -> u64 {
        self.file.size()
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::io(
                "appending to a log whose previous write failed",
                std::io::Error::other("log writer is unusable after an IO error"),
            ));
        }
        Ok(())
    }

    /// Appends `payload`'s fragments (with any block trailers between them) in one
    /// [`WritableFile::append_parts`] call: a file that writes large appends with one system
    /// call sees the whole record, not its pieces (a 4 KiB record crossing a block boundary
    /// would otherwise be two appends under the mapped WAL's `pwritev` threshold, copied into
    /// the mapping: `fs/mmap_file.rs`). The bytes are those of one append per piece.
    fn write_fragments(&mut self, payload: &[u8]) -> Result<()> {
        // The common case, a record that fits in the current block: one fragment, no pieces.
        if BLOCK_SIZE - self.block_offset >= HEADER_SIZE + payload.len() {
            let header = header(FULL_TYPE, payload);
            self.file.append_parts(&[&header, payload])?;
            self.block_offset += HEADER_SIZE + payload.len();
            return Ok(());
        }
        // The pieces, in file order: zeros closing the previous block, header, fragment.
        let mut pieces: SmallVec<[Piece<'_>; 4]> = SmallVec::new();
        let mut block_offset = self.block_offset;
        let mut left = payload;
        let mut begin = true;
        loop {
            let leftover = BLOCK_SIZE - block_offset;
            // Too small for a header: zero-fill the block's tail and start a new block.
            let trailer = if leftover < HEADER_SIZE {
                block_offset = 0;
                leftover
            } else {
                0
            };
            let avail = BLOCK_SIZE - block_offset - HEADER_SIZE;
            let n = left.len().min(avail);
            let (fragment, rest) = left.split_at(n);
            let end = rest.is_empty();
            let fragment_type = match (begin, end) {
                (true, true) => FULL_TYPE,
                (true, false) => FIRST_TYPE,
                (false, true) => LAST_TYPE,
                (false, false) => MIDDLE_TYPE,
            };
            pieces.push((trailer, header(fragment_type, fragment), fragment));
            block_offset += HEADER_SIZE + fragment.len();
            left = rest;
            begin = false;
            if end {
                break;
            }
        }
        let mut parts: SmallVec<[&[u8]; 8]> = SmallVec::new();
        for (trailer, header, fragment) in &pieces {
            if *trailer > 0 {
                parts.push(TRAILER_ZEROS.get(..*trailer).unwrap_or(&[]));
            }
            parts.push(header);
            parts.push(fragment);
        }
        self.file.append_parts(&parts)?;
        self.block_offset = block_offset;
        Ok(())
    }

    fn emit(&mut self, fragment_type: u8, fragment: &[u8]) -> Result<()> {
        self.file.append_parts(&[&header(fragment_type, fragment), fragment])?;
        self.block_offset += HEADER_SIZE + fragment.len();
        Ok(())
    }
}

/// The header of a fragment of `fragment_type` carrying `fragment`.
fn header(fragment_type: u8, fragment: &[u8]) -> [u8; HEADER_SIZE] {
    debug_assert!(fragment.len() <= BLOCK_SIZE - HEADER_SIZE);
    let mut header = [0u8; HEADER_SIZE];
    header[..4].copy_from_slice(&fragment_checksum(fragment_type, fragment).to_le_bytes());
    header[4..6].copy_from_slice(&(fragment.len() as u16).to_le_bytes());
    header[6] = fragment_type;
    header
}
