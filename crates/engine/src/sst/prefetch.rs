//! Readahead for the data blocks of one table iterator: a [`Prefetcher`] reads more than the
//! block asked for into its buffer and serves the following blocks from it.
//!
//! Two policies ([`Readahead`]), RocksDB's:
//! - `Fixed(n)`: every read that misses the buffer reads `n` bytes (compaction inputs,
//!   `compaction_readahead_size`, 2 MiB by default), so a compaction reads its inputs in large
//!   sequential chunks, which direct IO needs (no kernel readahead behind it).
//! - `Auto`: after [`AUTO_READAHEAD_MIN_READS`] block reads in a row that each start where the
//!   previous block ended, read ahead [`AUTO_READAHEAD_INITIAL`] bytes, doubling with each
//!   further readahead up to [`AUTO_READAHEAD_MAX`]; a block that is not next in the file starts
//!   over (user iterators: a scan gets readahead, seeks do not).
//!
//! Owned by one [`super::table_iter::TableIter`] (single-threaded, no locks). Every read it
//! issues is counted once as a file read in the reader's [`ReadIoStats`]; the blocks it hands
//! out are counted by the reader as block reads.

use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::perf::ReadIoStats;

use super::format::{checked_end, BlockHandle, BLOCK_TRAILER_LEN};

/// First readahead of the automatic policy (RocksDB's initial auto readahead size).
pub const AUTO_READAHEAD_INITIAL: usize = 8 << 10;
/// Largest readahead of the automatic policy (RocksDB's `max_auto_readahead_size`).
pub const AUTO_READAHEAD_MAX: usize = 256 << 10;
/// Sequential block reads before the automatic policy starts reading ahead.
pub const AUTO_READAHEAD_MIN_READS: u32 = 2;

/// How a table iterator reads ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readahead {
    /// Grow readahead on sequential reads (user iterators).
    Auto,
    /// Always read this many bytes from the block asked for on (compaction); 0: never read
    /// ahead.
    Fixed(usize),
}

/// A readahead buffer over one file; see the module documentation.
#[derive(Debug)]
pub struct Prefetcher {
    mode: Readahead,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    /// Auto: sequential reads in a row (buffer misses).
    reads: u32,
    /// Auto: the next readahead size.
    next_size: usize,
    /// End (trailer included) of the last block asked for.
    prev_end: u64,
}

impl Prefetcher {
    /// An empty buffer with policy `mode`.
    pub fn new(mode: Readahead) -> Prefetcher {
        Prefetcher {
            mode,
            buf: Vec::new(),
            buf_offset: 0,
            reads: 0,
            next_size: AUTO_READAHEAD_INITIAL,
            prev_end: u64::MAX,
        }
    }

    /// Notes that the block at `handle` was found elsewhere (the block cache): it still counts
    /// for sequential access.
    pub fn seen(&mut self, handle: BlockHandle) {
        self.prev_end = handle.end_with_trailer().unwrap_or(u64::MAX);
    }

    /// The stored bytes (block and trailer) of `handle` in `file` (named `name` in errors),
    /// from the buffer or read, reading ahead as the policy says.
    pub fn read(
        &mut self,
        file: &dyn RandomAccessFile,
        name: &str,
        handle: BlockHandle,
        io: &ReadIoStats,
    ) -> Result<Vec<u8>> {
        let end = checked_end(file.size(), name, handle)?;
        let len = handle.size as usize + BLOCK_TRAILER_LEN;
        let sequential = handle.offset == self.prev_end;
        self.prev_end = end;
        let buf_end = self.buf_offset + self.buf.len() as u64;
        if handle.offset >= self.buf_offset && end <= buf_end {
            let from = (handle.offset - self.buf_offset) as usize;
            if let Some(b) = self.buf.get(from..from + len) {
                return Ok(b.to_vec());
            }
        }
        let ahead = match self.mode {
            Readahead::Fixed(n) => n,
            Readahead::Auto => {
                if sequential {
                    self.reads = self.reads.saturating_add(1);
                } else {
                    self.reads = 1;
                    self.next_size = AUTO_READAHEAD_INITIAL;
                }
                if self.reads > AUTO_READAHEAD_MIN_READS {
                    let n = self.next_size;
                    self.next_size = (n * 2).min(AUTO_READAHEAD_MAX);
                    n
                } else {
                    0
                }
            }
        };
        if ahead <= len {
            let out = file.read_vec_at(handle.offset, len)?;
            io.file_read(len as u64);
            return Ok(out);
        }
        let want = (ahead as u64).min(file.size() - handle.offset);
        self.buf.resize(want as usize, 0);
        self.buf_offset = handle.offset;
        if let Err(e) = file.read_exact_at(handle.offset, &mut self.buf) {
            self.buf.clear();
            return Err(e);
        }
        io.file_read(want);
        self.buf.get(..len).map(<[u8]>::to_vec).ok_or_else(|| {
            Error::corruption(name, handle.offset, "readahead: block past the buffer")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::tests::MemRandom;

    fn handles(n: usize, size: u64) -> Vec<BlockHandle> {
        (0..n as u64).map(|i| BlockHandle { offset: i * (size + 5), size }).collect()
    }

    #[test]
    fn auto_readahead_starts_after_two_sequential_reads_and_doubles() {
        let hs = handles(1000, 995); // 1000 bytes per block with the trailer
        let file = MemRandom((0..1_000_000u32).map(|i| i as u8).collect());
        let io = ReadIoStats::default();
        let mut p = Prefetcher::new(Readahead::Auto);
        let mut reads = Vec::new();
        for h in &hs {
            let before = io.snapshot();
            let got = p.read(&file, "f", *h, &io).unwrap();
            let o = h.offset as usize;
            assert_eq!(got, file.0[o..o + 1000]);
            let after = io.snapshot();
            if after.file_reads > before.file_reads {
                reads.push(after.file_read_bytes - before.file_read_bytes);
            }
        }
        // Two plain reads, then 8K, 16K, ... up to 256K.
        assert_eq!(&reads[..6], &[1000, 1000, 8192, 16384, 32768, 65536]);
        assert!(reads.iter().all(|&r| r <= AUTO_READAHEAD_MAX as u64));
        assert!(reads.contains(&(AUTO_READAHEAD_MAX as u64)));
        // A jump backwards starts over: no readahead for the next two reads.
        let before = io.snapshot();
        p.read(&file, "f", hs[3], &io).unwrap();
        p.read(&file, "f", hs[4], &io).unwrap();
        assert_eq!(io.snapshot().file_read_bytes - before.file_read_bytes, 2000);
    }

    #[test]
    fn fixed_readahead_reads_chunks_and_clips_at_the_end() {
        let hs = handles(100, 995);
        let file = MemRandom(vec![7u8; 100_000]);
        let io = ReadIoStats::default();
        let mut p = Prefetcher::new(Readahead::Fixed(32 << 10));
        for h in &hs {
            p.read(&file, "f", *h, &io).unwrap();
        }
        // Each readahead starts at the block that missed: at 0, 32000, 64000 and 96000 (clipped
        // to the file's end).
        let s = io.snapshot();
        assert_eq!(s.file_reads, 4);
        assert_eq!(s.file_read_bytes, 3 * 32768 + 4000);
        let past = BlockHandle { offset: 99_990, size: 100 };
        assert!(p.read(&file, "f", past, &io).unwrap_err().is_corruption());
    }
}
