//! Direct IO: ordinary files on top of aligned `O_DIRECT` ones.
//!
//! A file system opens [`DirectReadFile`]s and [`DirectWriteFile`]s whose every offset, length
//! and buffer address must be a multiple of [`DIRECT_IO_ALIGNMENT`] (the kernel's rule for
//! `O_DIRECT`: EINVAL otherwise). This module hides that rule:
//! - [`DirectReader`] is a [`RandomAccessFile`]: a read of any range reads the enclosing range
//!   aligned to the file's [`DirectReadFile::alignment`] (the device's logical block size,
//!   512 B or 4 KiB) into an aligned bounce buffer (one per thread, reused) and copies the asked
//!   bytes out.
//! - [`DirectWriter`] is a [`WritableFile`]: appends gather in an aligned buffer of
//!   [`DIRECT_WRITE_BUFFER`] bytes written out whole when full. `flush` writes the partial tail
//!   page padded with zeros, then cuts the file back to its real length (`set_len`), and keeps
//!   the tail in the buffer: the next write rewrites that page in place. `sync` flushes, then
//!   fdatasyncs. So after `flush` the file holds exactly the bytes appended.
//!
//! [`open_random`] and [`create`] pick direct or buffered by a flag (the options
//! `use_direct_reads` and `use_direct_io_for_flush_and_compaction`); [`check_supported`] is
//! what `Db::open` calls to refuse those options, naming them, on a file system without direct
//! IO. Who calls: the table cache (SST readers), the blob source (blob file readers), flush and
//! compaction (SST and blob file writers). No locks.
//! Layout and the reasons: `docs/design/direct-io.md`.

use std::cell::RefCell;
use std::io;
use std::path::Path;
use std::sync::Arc;

use super::{DirectReadFile, DirectWriteFile, Fs, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};

/// The alignment of every direct write's offset, length and buffer address, and of every
/// bounce buffer's address: 4 KiB, the page size and a multiple of every common logical block
/// size (512 B, 4 KiB). Reads use the file's own, possibly smaller, alignment.
pub const DIRECT_IO_ALIGNMENT: usize = 4096;
/// Bytes a [`DirectWriter`] gathers before writing (RocksDB's `writable_file_max_buffer_size`).
pub const DIRECT_WRITE_BUFFER: usize = 1 << 20;
/// Reads up to this size reuse the thread's bounce buffer; larger ones allocate their own.
const REUSED_READ_BUFFER: usize = 4 << 20;

const A: u64 = DIRECT_IO_ALIGNMENT as u64;

fn round_down(x: u64) -> u64 {
    round_down_to(x, A)
}

fn round_up(x: u64) -> u64 {
    round_up_to(x, A)
}

fn round_down_to(x: u64, a: u64) -> u64 {
    x & !(a - 1)
}

fn round_up_to(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// A file system's reported direct IO alignment made usable: a power of two from 512 to
/// [`DIRECT_IO_ALIGNMENT`], or [`DIRECT_IO_ALIGNMENT`] if it is not a power of two or larger.
pub fn usable_alignment(reported: usize) -> usize {
    if reported.is_power_of_two() && reported <= DIRECT_IO_ALIGNMENT {
        reported.max(512)
    } else {
        DIRECT_IO_ALIGNMENT
    }
}

/// The error of a file system without direct IO.
pub fn unsupported(path: &Path) -> Error {
    Error::io(
        format!("opening {} for direct IO", path.display()),
        io::Error::new(io::ErrorKind::Unsupported, "direct IO is not supported"),
    )
}

/// The error of a misaligned direct IO request (the kernel's EINVAL), for file systems that
/// check alignment themselves.
pub fn misaligned(what: &str, path: &Path, offset: u64, len: usize, addr: usize) -> Error {
    Error::io(
        format!(
            "{what} {} (offset {offset}, length {len}, buffer address {addr:#x})",
            path.display()
        ),
        io::Error::new(io::ErrorKind::InvalidInput, "direct IO request is not aligned"),
    )
}

/// True if `offset`, `len` and `addr` are all multiples of `align`.
pub fn is_aligned(offset: u64, len: usize, addr: usize, align: usize) -> bool {
    offset.is_multiple_of(align as u64) && len.is_multiple_of(align) && addr.is_multiple_of(align)
}

/// A zeroed heap buffer whose start is aligned to [`DIRECT_IO_ALIGNMENT`] (a `Vec` with room
/// to slide the start up to the next aligned address: no unsafe code).
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A buffer of `len` zero bytes (`len` rounded up to the alignment).
    pub fn new(len: usize) -> AlignedBuf {
        let len = round_up(len as u64) as usize;
        let raw = vec![0u8; len + DIRECT_IO_ALIGNMENT];
        let start = raw.as_ptr().align_offset(DIRECT_IO_ALIGNMENT).min(DIRECT_IO_ALIGNMENT);
        AlignedBuf { raw, start, len }
    }

    /// Its length (a multiple of the alignment).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.raw.get(self.start..self.start + self.len).unwrap_or(&[])
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.raw.get_mut(self.start..self.start + self.len).unwrap_or(&mut [])
    }
}

thread_local! {
    static BOUNCE: RefCell<AlignedBuf> = RefCell::new(AlignedBuf::new(0));
}

/// A [`RandomAccessFile`] over a [`DirectReadFile`]: any range, read through aligned IO.
pub struct DirectReader {
    file: Box<dyn DirectReadFile>,
    path: String,
}

impl DirectReader {
    /// Wraps `file` (`path` is used in errors).
    pub fn new(file: Box<dyn DirectReadFile>, path: &Path) -> DirectReader {
        DirectReader { file, path: path.display().to_string() }
    }

    fn read_via(&self, bounce: &mut AlignedBuf, offset: u64, buf: &mut [u8]) -> Result<()> {
        let a = usable_alignment(self.file.alignment()) as u64;
        let start = round_down_to(offset, a);
        let end = offset.checked_add(buf.len() as u64).ok_or_else(|| self.eof(offset, buf))?;
        let span = (round_up_to(end, a) - start) as usize;
        if bounce.len() < span {
            *bounce = AlignedBuf::new(span);
        }
        let dst = bounce.as_mut_slice().get_mut(..span).unwrap_or(&mut []);
        let mut got = 0;
        // A direct read may return fewer bytes than asked before the end of the file (a signal,
        // a device limit): go on until the range is in or the file ends.
        while (got as u64) < end - start {
            let rest = dst.get_mut(got..).unwrap_or(&mut []);
            let n = self.file.read_aligned(start + got as u64, rest)?;
            if n == 0 || !(n as u64).is_multiple_of(a) {
                got += n;
                break;
            }
            got += n;
        }
        let from = (offset - start) as usize;
        match bounce.as_slice().get(from..from + buf.len()) {
            Some(src) if got >= from + buf.len() => {
                buf.copy_from_slice(src);
                Ok(())
            }
            _ => Err(self.eof(offset, buf)),
        }
    }

    fn eof(&self, offset: u64, buf: &[u8]) -> Error {
        Error::io(
            format!("reading {} bytes at {offset} of {}", buf.len(), self.path),
            io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"),
        )
    }
}

impl RandomAccessFile for DirectReader {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if buf.len() > REUSED_READ_BUFFER {
            return self.read_via(&mut AlignedBuf::new(0), offset, buf);
        }
        BOUNCE.with(|b| match b.try_borrow_mut() {
            Ok(mut bounce) => self.read_via(&mut bounce, offset, buf),
            Err(_) => self.read_via(&mut AlignedBuf::new(0), offset, buf),
        })
    }

    fn size(&self) -> u64 {
        self.file.size()
    }
}

/// A [`WritableFile`] over a [`DirectWriteFile`]; see the module documentation.
pub struct DirectWriter {
    file: Box<dyn DirectWriteFile>,
    buf: AlignedBuf,
    /// Bytes of `buf` in use.
    used: usize,
    /// File offset of `buf[0]` (aligned).
    buf_offset: u64,
    /// Bytes appended so far (the file's real length).
    size: u64,
    /// True if `buf` holds bytes not yet written out.
    dirty: bool,
}

impl DirectWriter {
    /// Wraps `file`, empty.
    pub fn new(file: Box<dyn DirectWriteFile>) -> DirectWriter {
        DirectWriter {
            file,
            buf: AlignedBuf::new(DIRECT_WRITE_BUFFER),
            used: 0,
            buf_offset: 0,
            size: 0,
            dirty: false,
        }
    }

    /// Writes the whole (full) buffer and empties it.
    fn write_full(&mut self) -> Result<()> {
        self.file.write_aligned(self.buf_offset, self.buf.as_slice())?;
        self.buf_offset += self.buf.len() as u64;
        self.used = 0;
        self.dirty = false;
        Ok(())
    }
}

impl WritableFile for DirectWriter {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let room = self.buf.len() - self.used;
            let n = room.min(data.len());
            let (now, rest) = data.split_at(n);
            if let Some(dst) = self.buf.as_mut_slice().get_mut(self.used..self.used + n) {
                dst.copy_from_slice(now);
            }
            self.used += n;
            self.size += n as u64;
            self.dirty = true;
            data = rest;
            if self.used == self.buf.len() {
                self.write_full()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let padded = round_up(self.used as u64) as usize;
        let whole = round_down(self.used as u64) as usize;
        let tail = self.used - whole;
        let bytes = self.buf.as_mut_slice();
        if let Some(pad) = bytes.get_mut(self.used..padded) {
            pad.fill(0);
        }
        self.file.write_aligned(self.buf_offset, bytes.get(..padded).unwrap_or(&[]))?;
        if tail > 0 {
            crate::kill_point::kill_point!("direct.tail_written");
        }
        self.file.set_len(self.size)?;
        // Keep the partial last page: the next write rewrites it in place.
        bytes.copy_within(whole..self.used, 0);
        self.buf_offset += whole as u64;
        self.used = tail;
        self.dirty = false;
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file.sync()
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// Opens `path` for positional reads: direct (`O_DIRECT`) if `direct`, else buffered.
pub fn open_random(fs: &dyn Fs, path: &Path, direct: bool) -> Result<Arc<dyn RandomAccessFile>> {
    if direct {
        Ok(Arc::new(DirectReader::new(fs.open_direct_read(path)?, path)))
    } else {
        fs.open_random(path)
    }
}

/// Creates `path` for appending: direct (`O_DIRECT`) if `direct`, else buffered.
pub fn create(fs: &dyn Fs, path: &Path, direct: bool) -> Result<Box<dyn WritableFile>> {
    if direct {
        Ok(Box::new(DirectWriter::new(fs.create_direct_write(path)?)))
    } else {
        fs.create(path)
    }
}

/// Checks that `fs` can open `existing` (a file of the database directory, e.g. its LOCK) for
/// direct IO; the error is `InvalidArgument` naming `option`, as RocksDB refuses direct IO
/// options on a file system without it. Opens nothing for writing and changes nothing.
pub fn check_supported(fs: &dyn Fs, existing: &Path, option: &str) -> Result<()> {
    fs.open_direct_read(existing).map(drop).map_err(|e| {
        let dir = existing.parent().unwrap_or(existing);
        Error::InvalidArgument(format!(
            "{option}: the file system of {} does not support direct IO (O_DIRECT): {e}",
            dir.display()
        ))
    })
}

#[cfg(test)]
mod tests;
