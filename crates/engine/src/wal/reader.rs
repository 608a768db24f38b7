//! [`LogReader`]: reassembles records from fragments, reporting every bad stretch.
//!
//! Two layers: `next_fragment` reads one physical fragment (header, bounds, checksum) from the
//! current block; `read_record` stitches FULL / FIRST, MIDDLE…, LAST fragments together and
//! checks that they come in a legal order.
//!
//! Skipping rules after a problem:
//! - a fragment whose framing cannot be trusted (checksum mismatch, a length running past the
//!   block, non-zero bytes after zero padding) makes the reader drop the rest of its block;
//! - a fragment with a good checksum but an illegal place in the sequence (unknown type, MIDDLE
//!   or LAST without FIRST) drops only that fragment;
//! - a FIRST run interrupted by a FULL or FIRST drops the unfinished run; the interrupting
//!   fragment is kept and read next;
//! - zero padding (an all-zero header) is silent only when zeros run to the end of the file;
//!   zeros followed by more log data are a hole and are reported, then the data is read.

use super::{
    fragment_checksum, PredecessorWal, ReadOutcome, BLOCK_SIZE, FIRST_TYPE, FULL_TYPE, HEADER_SIZE,
    LAST_TYPE, MIDDLE_TYPE, PREDECESSOR_TYPE,
};
use crate::coding::decode_fixed32;
use crate::error::Result;
use crate::fs::SequentialFile;

/// One physical fragment, its payload given as a range of the reader's current block.
#[derive(Debug, Clone, Copy)]
struct Fragment {
    fragment_type: u8,
    /// File offset of the fragment's header.
    offset: u64,
    start: usize,
    end: usize,
}

/// What `next_fragment` found.
enum Physical {
    Fragment(Fragment),
    Bad { offset: u64, bytes: u64, reason: String, at_tail: bool },
    Eof,
}

/// Reads records back from a log file.
pub struct LogReader {
    file: Box<dyn SequentialFile>,
    file_name: String,
    /// The current block (a full [`BLOCK_SIZE`] unless it is the file's last).
    block: Vec<u8>,
    /// Next unread byte of `block`.
    pos: usize,
    /// File offset of `block[0]`.
    block_offset: u64,
    /// The file has no bytes beyond `block`.
    eof: bool,
    /// A fragment already read that interrupted an unfinished run; handled on the next call.
    pending: Option<Fragment>,
    /// File offset where a stretch of zero padding began, while the reader is inside one.
    /// Zeros are only legitimate at the end of a file (preallocation); if log data follows,
    /// the zeros are a hole (lost writes) and are reported.
    zero_run_start: Option<u64>,
    /// Whether the file may have been appended through a memory mapping (a WAL): then a
    /// fragment cut short and followed by zeros to the end of the file is a torn tail
    /// ([`LogReader::new_wal`]).
    mapped_appends: bool,
    /// A fragment that failed its checksum and ends in zeros to the end of its block, as an
    /// append cut short by a crash leaves it in a file written through a memory mapping (whose
    /// unwritten bytes are preallocated zeros): `(offset, reason)`. If only zeros follow it to
    /// the end of the file it is a torn tail; if log data follows, damage.
    torn_candidate: Option<(u64, String)>,
}

impl LogReader {
    /// Reads `file` from the start; `file_name` is used in reports.
    pub fn new(file: Box<dyn SequentialFile>, file_name: String) -> Self {
        LogReader {
            file,
            file_name,
            block: Vec::with_capacity(BLOCK_SIZE),
            pos: 0,
            block_offset: 0,
            eof: false,
            pending: None,
            zero_run_start: None,
            mapped_appends: false,
            torn_candidate: None,
        }
    }

    /// As [`LogReader::new`], for a WAL, which may have been appended through a memory mapping
    /// (`wal_mmap_writes`): a fragment whose checksum fails, whose last byte and the rest of
    /// its block are zero, and after which only zeros run to the end of the file is reported as
    /// a torn tail (`at_tail`), what a crash in the middle of a mapped append leaves. A MANIFEST
    /// is never mapped: its reader ([`LogReader::new`]) reports such a fragment as damage.
    pub fn new_wal(file: Box<dyn SequentialFile>, file_name: String) -> Self {
        LogReader { mapped_appends: true, ..LogReader::new(file, file_name) }
    }

    /// The name given at construction (for error messages built by callers).
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The next record, corruption report or end of file. `Err` only for IO errors.
    pub fn read_record(&mut self) -> Result<ReadOutcome> {
        let mut scratch: Vec<u8> = Vec::new();
        // File offset of the unfinished FIRST run's first fragment, if one is open.
        let mut run_start: Option<u64> = None;
        loop {
            let physical = match self.pending.take() {
                Some(f) => Physical::Fragment(f),
                None => self.next_fragment()?,
            };
            let frag = match physical {
                Physical::Fragment(f) => f,
                Physical::Bad { offset, bytes, reason, at_tail } => {
                    // An open run is lost along with the bad stretch.
                    let (offset, bytes) = match run_start {
                        Some(start) => (start, offset + bytes - start),
                        None => (offset, bytes),
                    };
                    return Ok(ReadOutcome::Corrupt { offset, bytes, reason, at_tail });
                }
                Physical::Eof => {
                    return Ok(match run_start {
                        Some(start) => ReadOutcome::Corrupt {
                            offset: start,
                            bytes: self.end_offset() - start,
                            reason: "record cut by end of file (FIRST run without LAST)".into(),
                            at_tail: true,
                        },
                        None => ReadOutcome::Eof,
                    });
                }
            };
            let payload = self.block.get(frag.start..frag.end).unwrap_or(&[]);
            let frag_bytes = (HEADER_SIZE + payload.len()) as u64;
            match frag.fragment_type {
                FULL_TYPE | FIRST_TYPE | PREDECESSOR_TYPE if run_start.is_some() => {
                    self.pending = Some(frag);
                    let start = run_start.unwrap_or(frag.offset);
                    return Ok(ReadOutcome::Corrupt {
                        offset: start,
                        bytes: frag.offset - start,
                        reason: "FIRST fragment not followed by MIDDLE/LAST".into(),
                        at_tail: false,
                    });
                }
                FULL_TYPE => return Ok(ReadOutcome::Record(payload.to_vec(), frag.offset)),
                PREDECESSOR_TYPE => {
                    return Ok(match PredecessorWal::decode(payload) {
                        Some(p) => ReadOutcome::Predecessor(p, frag.offset),
                        None => ReadOutcome::Corrupt {
                            offset: frag.offset,
                            bytes: frag_bytes,
                            reason: format!(
                                "predecessor-WAL record of {} bytes (expected {})",
                                payload.len(),
                                PredecessorWal::ENCODED_LEN
                            ),
                            at_tail: false,
                        },
                    });
                }
                FIRST_TYPE => {
                    scratch.extend_from_slice(payload);
                    run_start = Some(frag.offset);
                }
                MIDDLE_TYPE | LAST_TYPE if run_start.is_none() => {
                    let what = if frag.fragment_type == MIDDLE_TYPE { "MIDDLE" } else { "LAST" };
                    return Ok(ReadOutcome::Corrupt {
                        offset: frag.offset,
                        bytes: frag_bytes,
                        reason: format!("{what} fragment without FIRST"),
                        at_tail: false,
                    });
                }
                MIDDLE_TYPE => scratch.extend_from_slice(payload),
                LAST_TYPE => {
                    scratch.extend_from_slice(payload);
                    return Ok(ReadOutcome::Record(scratch, run_start.unwrap_or(frag.offset)));
                }
                other => {
                    let (offset, bytes) = match run_start {
                        Some(start) => (start, frag.offset + frag_bytes - start),
                        None => (frag.offset, frag_bytes),
                    };
                    return Ok(ReadOutcome::Corrupt {
                        offset,
                        bytes,
                        reason: format!("unknown fragment type {other}"),
                        at_tail: false,
                    });
                }
            }
        }
    }

    /// File offset just past the bytes read so far.
    fn end_offset(&self) -> u64 {
        self.block_offset + self.block.len() as u64
    }

    /// Reads the next block into `block`; sets `eof` when the file ends within it.
    fn read_block(&mut self) -> Result<()> {
        self.block_offset += self.block.len() as u64;
        self.block.clear();
        self.block.resize(BLOCK_SIZE, 0);
        self.pos = 0;
        let mut filled = 0;
        while filled < BLOCK_SIZE {
            let buf = self.block.get_mut(filled..).unwrap_or(&mut []);
            let n = self.file.read(buf)?;
            if n == 0 {
                self.eof = true;
                break;
            }
            filled += n;
        }
        self.block.truncate(filled);
        Ok(())
    }

    /// Drops the rest of the current block; returns how many bytes that was.
    fn skip_block(&mut self) -> u64 {
        let n = self.block.len().saturating_sub(self.pos);
        self.pos = self.block.len();
        n as u64
    }

    /// Reports `[offset, end of the current block)` as bad and skips the rest of the block.
    fn bad(&mut self, offset: u64, reason: String, at_tail: bool) -> Physical {
        self.skip_block();
        Physical::Bad { offset, bytes: self.end_offset().saturating_sub(offset), reason, at_tail }
    }

    /// If zeros (or a torn-looking fragment and zeros) preceded the data at `offset`, reports
    /// them (skipping nothing: the data is read on the next call).
    fn end_zero_run(&mut self, offset: u64) -> Option<Physical> {
        if let Some((start, reason)) = self.torn_candidate.take() {
            // Log data after it: not an append cut short at the end, damage.
            self.zero_run_start = None;
            return Some(Physical::Bad {
                offset: start,
                bytes: offset - start,
                reason,
                at_tail: false,
            });
        }
        let start = self.zero_run_start.take()?;
        Some(Physical::Bad {
            offset: start,
            bytes: offset - start,
            reason: "zero-filled hole followed by more log data".into(),
            at_tail: false,
        })
    }

    fn next_fragment(&mut self) -> Result<Physical> {
        loop {
            let rest = self.block.get(self.pos..).unwrap_or(&[]);
            let offset = self.block_offset + self.pos as u64;
            if rest.len() < HEADER_SIZE {
                let is_trailer = self.pos > BLOCK_SIZE - HEADER_SIZE;
                if !self.eof {
                    // A block trailer (zero-filled by the writer; never holds data).
                    self.read_block()?;
                    continue;
                }
                if rest.is_empty() || is_trailer || rest.iter().all(|&b| b == 0) {
                    // Zeros up to the end of the file are preallocated space, not a hole.
                    self.zero_run_start = None;
                    self.skip_block();
                    if let Some((start, reason)) = self.torn_candidate.take() {
                        let bytes = self.end_offset() - start;
                        return Ok(Physical::Bad { offset: start, bytes, reason, at_tail: true });
                    }
                    return Ok(Physical::Eof);
                }
                if let Some(hole) = self.end_zero_run(offset) {
                    return Ok(hole);
                }
                return Ok(self.bad(
                    offset,
                    "incomplete fragment header at end of file".into(),
                    true,
                ));
            }
            if rest.get(..HEADER_SIZE).is_some_and(|h| h.iter().any(|&b| b != 0)) {
                if let Some(hole) = self.end_zero_run(offset) {
                    return Ok(hole);
                }
            }
            let rest = self.block.get(self.pos..).unwrap_or(&[]);
            let (header, after) = rest.split_at(HEADER_SIZE);
            let stored_crc = decode_fixed32(header).unwrap_or(0);
            let length = usize::from(u16::from_le_bytes([header[4], header[5]]));
            let fragment_type = header[6];
            if stored_crc == 0 && length == 0 && fragment_type == 0 {
                // Zero padding (preallocated space): the rest of the block must be zero too.
                if after.iter().all(|&b| b == 0) {
                    self.zero_run_start.get_or_insert(offset);
                    self.skip_block();
                    continue;
                }
                let candidate = self.torn_candidate.take().map(|c| c.0);
                let start = candidate.or(self.zero_run_start.take()).unwrap_or(offset);
                return Ok(self.bad(start, "non-zero bytes after zero padding".into(), false));
            }
            if self.pos + HEADER_SIZE + length > BLOCK_SIZE {
                let reason = format!("fragment length {length} runs past the end of its block");
                return Ok(self.bad(offset, reason, false));
            }
            let Some(payload) = after.get(..length) else {
                // Fits in the block but the file ends first: a torn write (or an unfinished
                // block of a file that is not at EOF, which read_block rules out) -- unless a
                // shorter payload matches the checksum: then the length field is damaged, the
                // records after it are real, and dropping them silently would be wrong.
                if prefix_matches_checksum(stored_crc, fragment_type, after) {
                    let reason = "fragment length field damaged (runs past end of file)";
                    return Ok(self.bad(offset, reason.into(), false));
                }
                let at_tail = self.eof;
                return Ok(self.bad(offset, "fragment payload cut by end of file".into(), at_tail));
            };
            let actual = fragment_checksum(fragment_type, payload);
            if actual != stored_crc {
                let reason = format!(
                    "fragment checksum mismatch (stored {stored_crc:#010x}, computed {actual:#010x})"
                );
                // The fragment's last byte and the rest of the block are zero: possibly an
                // append cut short (see `torn_candidate`); decided by what follows.
                let cut_from = self.pos + HEADER_SIZE + length - 1;
                if self.mapped_appends
                    && self.torn_candidate.is_none()
                    && self.block.get(cut_from..).is_some_and(|t| t.iter().all(|&b| b == 0))
                {
                    self.torn_candidate = Some((offset, reason));
                    self.skip_block();
                    continue;
                }
                return Ok(self.bad(offset, reason, false));
            }
            let start = self.pos + HEADER_SIZE;
            self.pos = start + length;
            return Ok(Physical::Fragment(Fragment {
                fragment_type,
                offset,
                start,
                end: start + length,
            }));
        }
    }
}

/// True if some prefix of `avail` is a payload whose checksum (with `fragment_type`) is
/// `stored`: the fragment is whole and only its length field is wrong. One incremental CRC pass;
/// runs only when a fragment is cut by the end of the file.
fn prefix_matches_checksum(stored: u32, fragment_type: u8, avail: &[u8]) -> bool {
    let mut crc = crc32c::crc32c(&[fragment_type]);
    if super::mask_crc(crc) == stored {
        return true;
    }
    avail.iter().any(|b| {
        crc = crc32c::crc32c_append(crc, std::slice::from_ref(b));
        super::mask_crc(crc) == stored
    })
}
