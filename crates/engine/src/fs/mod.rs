//! The file-system boundary. The engine never touches `std::fs` directly: every file it opens,
//! writes, syncs, renames or deletes goes through an [`Fs`], so tests can swap in one that forgets
//! unsynced data or fails the Nth operation (`fault.rs`).
//!
//! Contract: `WritableFile::append` may buffer; `flush` hands buffered bytes to the OS (they
//! survive a process crash); `sync` makes them durable (they survive power loss). A new file's
//! directory entry is durable only after `Fs::sync_dir` on its directory.
//!
//! Direct IO (`O_DIRECT`, the page cache bypassed): a file system that supports it opens
//! [`DirectReadFile`]s and [`DirectWriteFile`]s, whose every offset, length and buffer address
//! is a multiple of [`direct::DIRECT_IO_ALIGNMENT`]; [`direct`] turns them into ordinary
//! [`RandomAccessFile`]s and [`WritableFile`]s (aligned bounce buffers, padded tail writes) so
//! that nothing above it sees the alignment. One without (the trait's defaults) fails those
//! opens, and `Db::open` reports it (see `docs/design/direct-io.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

pub mod buf_pool;
pub mod direct;
pub mod fault;
#[cfg(target_os = "linux")]
mod mmap_file;
pub mod rate_limiter;
mod split_read;
mod std_fs;
pub mod throttle;

pub use std_fs::StdFs;

/// A file opened for appending.
pub trait WritableFile: Send + Sync {
    /// Appends bytes (may be buffered in user space).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Appends `parts` one after another, as [`WritableFile::append`] of each would (the
    /// default does exactly that); a file may write them in one call instead (the mapped WAL
    /// writes large ones with one `pwritev(2)`: `mmap_file.rs`).
    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        for p in parts {
            self.append(p)?;
        }
        Ok(())
    }
    /// Hands buffered bytes to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Flushes, then makes the file's data durable (fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn size(&self) -> u64;
    /// Flushes, then asks the operating system to start writing the file's dirty pages to the
    /// device without waiting for them (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`): a hint
    /// that makes a later `sync` cheap, with no durability promise. The default does nothing.
    fn start_writeback(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A file opened for positional reads; shared between threads.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`; a short file is an error.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// Reads exactly `len` bytes at `offset` into a new buffer; a short file is an error. The
    /// default zero-fills the buffer and calls [`RandomAccessFile::read_exact_at`]; a file
    /// that can read into uninitialised memory overrides it (a block read on a cache miss
    /// then writes each byte once).
    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.read_exact_at(offset, &mut buf)?;
        Ok(buf)
    }
    /// Reads `head.len()` bytes at `offset` into `head` and the `tail_len` bytes after them
    /// into a new buffer, which it returns (a blob record: its header and key, then the value
    /// the caller keeps, with no copy out of a whole-record buffer); a short file is an error.
    /// The default reads the whole range with [`RandomAccessFile::read_vec_at`] and splits it;
    /// a file that can scatter one read overrides it (`preadv(2)`).
    fn read_split_at(&self, offset: u64, head: &mut [u8], tail_len: usize) -> Result<Vec<u8>> {
        let mut buf = self.read_vec_at(offset, head.len() + tail_len)?;
        head.copy_from_slice(&buf[..head.len()]);
        buf.drain(..head.len());
        Ok(buf)
    }
}

/// A file read from start to end.
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; 0 means end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
}

/// A file opened for direct reads (`O_DIRECT`): every `offset`, `buf.len()` and buffer address
/// passed to it is a multiple of [`DirectReadFile::alignment`]. Use it through
/// [`direct::DirectReader`].
pub trait DirectReadFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset` (all aligned); returns the bytes read, fewer
    /// than asked only at the end of the file.
    fn read_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// The alignment reads need: a power of two from 512 to
    /// [`direct::DIRECT_IO_ALIGNMENT`] (the device's logical block size, where the file system
    /// tells it). The default is [`direct::DIRECT_IO_ALIGNMENT`], right for every device.
    fn alignment(&self) -> usize {
        direct::DIRECT_IO_ALIGNMENT
    }
}

/// A file created for direct writes (`O_DIRECT`): every `offset`, `data.len()` and buffer
/// address passed to `write_aligned` is a multiple of [`direct::DIRECT_IO_ALIGNMENT`]. Use it
/// through [`direct::DirectWriter`].
pub trait DirectWriteFile: Send + Sync {
    /// Writes `data` at `offset` (both aligned), replacing what was there and growing the file.
    fn write_aligned(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    /// Sets the file's length (cuts the zero padding after the last real byte).
    fn set_len(&mut self, len: u64) -> Result<()>;
    /// Makes the data written and the length set durable (fdatasync).
    fn sync(&mut self) -> Result<()>;
}

/// An exclusive lock on a file, released on drop.
pub trait FileLock: Send + Sync {}

/// The operations the engine needs from a file system.
pub trait Fs: Send + Sync + 'static {
    /// Creates (or truncates) a file for appending.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// As [`Fs::create`], for a file appended in many small pieces (a write-ahead log): the real
    /// file system appends it through a memory mapping where it can (`mmap_file.rs`: no system
    /// call per append); the file's length may then run ahead of its contents by zeros until
    /// the writer is dropped. `size_hint` is the length the file is expected to reach: the
    /// mapping reserves that much disk space at once (so appends up to it allocate nothing).
    /// The default is `create`.
    fn create_mapped(&self, path: &Path, size_hint: u64) -> Result<Box<dyn WritableFile>> {
        let _ = size_hint;
        self.create(path)
    }
    /// Asks the first `len` bytes of the file at `path` into the page cache without waiting
    /// for them (Linux `posix_fadvise(POSIX_FADV_WILLNEED)`): advice, so every failure is
    /// ignored. The flush thread gives it for the WAL it makes ahead (`db/write.rs`,
    /// `prepare_wal`), whose preallocated pages then need no zero-filling on the write path.
    /// The default does nothing.
    fn will_need(&self, path: &Path, len: u64) {
        let _ = (path, len);
    }
    /// Opens an existing file for positional reads.
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Opens an existing file for sequential reads.
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// True if the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// The names (not paths) of the entries of a directory. Listing a file fails with an IO
    /// error of kind [`std::io::ErrorKind::NotADirectory`].
    fn list_dir(&self, dir: &Path) -> Result<Vec<String>>;
    /// Deletes a file.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Renames a file, replacing `to` atomically if it exists.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Removes an empty directory (fails if it holds anything).
    fn remove_dir(&self, dir: &Path) -> Result<()>;
    /// Makes the directory's entries (creations, renames, deletions) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// A file's size in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Takes an exclusive lock on `path` (created if missing); `Error::Locked` if held elsewhere.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Makes `to` a second name of the existing file `from` (a hard link; `to` must not
    /// exist). The default: links are not supported (an IO error of kind
    /// [`std::io::ErrorKind::Unsupported`]), so callers copy instead.
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        let _ = from;
        Err(Error::io(
            format!("linking {}", to.display()),
            std::io::Error::new(std::io::ErrorKind::Unsupported, "hard links are not supported"),
        ))
    }
    /// Opens an existing file for direct reads. The default: direct IO is not supported.
    fn open_direct_read(&self, path: &Path) -> Result<Box<dyn DirectReadFile>> {
        Err(direct::unsupported(path))
    }
    /// Creates (or truncates) a file for direct writes. The default: direct IO is not
    /// supported.
    fn create_direct_write(&self, path: &Path) -> Result<Box<dyn DirectWriteFile>> {
        Err(direct::unsupported(path))
    }
    /// The device caps this file system applies ([`throttle::ThrottledFs`]); `None` for every
    /// other.
    fn throttle(&self) -> Option<&Arc<throttle::Throttle>> {
        None
    }
}

/// Asks the operating system to start writing the first `len` bytes of `file` to the device (0:
/// the whole file) without waiting (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`; nothing
/// elsewhere). [`WritableFile::start_writeback`] of the real file system's writers.
#[cfg(target_os = "linux")]
fn start_writeback(file: &std::fs::File, path: &str, len: u64) -> Result<()> {
    use std::os::fd::AsRawFd;
    let what = || format!("starting writeback of {path}");
    let len = off_t(len).map_err(|e| crate::error::Error::io(what(), e))?;
    // SAFETY: `sync_file_range` only reads its integer arguments; the descriptor is open for the
    // lifetime of `file`. Offset 0 and length 0 mean "the whole file".
    let r = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, len, libc::SYNC_FILE_RANGE_WRITE) };
    if r != 0 {
        return Err(crate::error::Error::io(what(), std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &std::fs::File, _path: &str, _len: u64) -> Result<()> {
    Ok(())
}

/// A file offset or length as the system calls take it (`off_t`), or an error if it overflows.
fn off_t(v: u64) -> std::io::Result<libc::off_t> {
    libc::off_t::try_from(v).map_err(|_| std::io::Error::other("offset overflow"))
}

/// Reads a whole file through `fs`.
pub fn read_all(fs: &dyn Fs, path: &Path) -> Result<Vec<u8>> {
    let mut f = fs.open_sequential(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(buf.get(..n).unwrap_or(&[]));
    }
}

/// Copies the file `from` to the new file `to` through `fs` (1 MiB at a time) and syncs it.
/// Used by ingestion (`move_files` = false), checkpoints and backups.
pub fn copy_file(fs: &dyn Fs, from: &Path, to: &Path) -> Result<()> {
    let mut src = fs.open_sequential(from)?;
    let mut dst = fs.create(to)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        dst.append(buf.get(..n).unwrap_or(&buf))?;
    }
    dst.sync()
}

/// Writes `data` to `path` atomically and durably: write a temp file, sync it, rename it over
/// `path`, sync the directory.
pub fn write_file_atomic(fs: &dyn Fs, dir: &Path, name: &str, data: &[u8]) -> Result<()> {
    let tmp: PathBuf = dir.join(format!("{name}.dbtmp"));
    let mut f = fs.create(&tmp)?;
    f.append(data)?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, &dir.join(name))?;
    fs.sync_dir(dir)
}
