//! [`MmapWritable`]: a file appended through a shared memory mapping, as [`StdFs`] writes
//! write-ahead logs ([`crate::fs::Fs::create_mapped`], `allow_mmap_writes`).
//!
//! A WAL is appended one small record per write group. Through `write(2)`, each costs a system
//! call and the file system's buffered-write path (`ext4_da_write_begin`/`_end`, the inode lock,
//! zeroing the new block's tail): about 1 us per record measured, as much as the rest of a put.
//! Through a mapping, appending is a copy into the page cache; the kernel takes a page fault
//! once per 4 KiB page (and once again after each writeback of a page, to mark it dirty).
//!
//! The file is mapped [`WINDOW`] bytes at a time. Before a window is mapped it is allocated
//! with `fallocate(2)` (mode 0: blocks reserved and the file length extended over it), so no
//! page of a window lies past the end of the file (SIGBUS) and no page fault has to allocate a
//! block (a full disk fails the `fallocate`, an `Error::Io` from `append`, not a signal). An
//! append that fills a window unmaps it and maps the next.
//!
//! Durability is the contract of [`WritableFile`]: appended bytes are in the page cache at once
//! (they survive a process crash: `flush` has nothing to do); `sync` is `fdatasync(2)`, which
//! writes back the pages dirtied through the mapping. The file's length runs ahead of the
//! appended bytes by the rest of the window, zero-filled; dropping the writer unmaps it and
//! truncates the file to the bytes appended. A crash leaves the zeros, which the WAL reader
//! takes for preallocated space (`wal/reader.rs`), as it does RocksDB's preallocated WALs.
//!
//! Nothing else may shorten the file while it is mapped (that would turn the next append into a
//! SIGBUS); the database's `LOCK` keeps other Talus processes out. Single-owner (`&mut self`);
//! no locks.
//!
//! [`StdFs`]: super::StdFs

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use super::WritableFile;
use crate::error::{Error, Result};

/// Bytes mapped at a time (a multiple of the page size).
pub(super) const WINDOW: usize = 8 << 20;

/// See the module documentation.
pub(super) struct MmapWritable {
    file: File,
    path: String,
    /// The mapped window: its address (`None` once unmapped) and its offset in the file.
    map: Option<NonNull<u8>>,
    window_offset: u64,
    /// Bytes appended.
    size: u64,
}

// SAFETY: the mapping is owned by this value alone (like a `Box<[u8]>`): only `&mut self`
// methods write through it, and it is unmapped on drop.
unsafe impl Send for MmapWritable {}
// SAFETY: `&MmapWritable` exposes only `size`, which reads a plain field.
unsafe impl Sync for MmapWritable {}

fn os_error(what: String) -> Error {
    Error::io(what, std::io::Error::last_os_error())
}

impl MmapWritable {
    /// Maps the first window of `file` (open for reading and writing, empty). Fails if the file
    /// system cannot preallocate or map it; the caller then writes the file another way.
    pub(super) fn new(file: File, path: String) -> Result<MmapWritable> {
        let mut w = MmapWritable { file, path, map: None, window_offset: 0, size: 0 };
        w.map_window(0)?;
        Ok(w)
    }

    /// Unmaps the current window (if any), then allocates and maps `[offset, offset + WINDOW)`.
    fn map_window(&mut self, offset: u64) -> Result<()> {
        self.unmap();
        let fd = self.file.as_raw_fd();
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(WINDOW))
        else {
            return Err(Error::io(
                format!("mapping {} at {offset}", self.path),
                std::io::Error::other("offset overflow"),
            ));
        };
        // SAFETY: `fallocate` only reads its integer arguments; `fd` is open for writing.
        if unsafe { libc::fallocate(fd, 0, off, len) } != 0 {
            return Err(os_error(format!(
                "allocating {WINDOW} bytes at {offset} of {}",
                self.path
            )));
        }
        // SAFETY: a fresh shared mapping of `WINDOW` bytes of an open file at a page-aligned
        // offset (`offset` is a multiple of `WINDOW`); the kernel picks the address, so nothing
        // of ours is overwritten. The file now extends over the whole window.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                WINDOW,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error(format!("mapping {WINDOW} bytes at {offset} of {}", self.path)));
        }
        self.map = NonNull::new(p.cast::<u8>());
        self.window_offset = offset;
        Ok(())
    }

    fn unmap(&mut self) {
        if let Some(p) = self.map.take() {
            // SAFETY: `p` is the address of a live mapping of `WINDOW` bytes made by
            // `map_window`, unmapped exactly once (it was just taken out of `self.map`).
            unsafe { libc::munmap(p.as_ptr().cast(), WINDOW) };
        }
    }
}

impl WritableFile for MmapWritable {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let used = (self.size - self.window_offset) as usize;
            let map = match self.map {
                Some(p) if used < WINDOW => p,
                _ => {
                    self.map_window(self.size)?;
                    continue;
                }
            };
            let n = data.len().min(WINDOW - used);
            // SAFETY: `map` is a live writable mapping of `WINDOW` bytes and `used + n <=
            // WINDOW`; `data` is a separate allocation of at least `n` bytes.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), map.as_ptr().add(used), n) };
            self.size += n as u64;
            data = data.get(n..).unwrap_or_default();
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        // The bytes are in the page cache already.
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(format!("syncing {}", self.path), e))
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn start_writeback(&mut self) -> Result<()> {
        super::std_fs::start_writeback(&self.file, &self.path)
    }
}

impl Drop for MmapWritable {
    fn drop(&mut self) {
        self.unmap();
        // Best effort: zeros left past the appended bytes read as preallocated space.
        let _ = self.file.set_len(self.size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_rw(path: &std::path::Path) -> File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap()
    }

    /// Appends across window boundaries (records straddling them) read back byte for byte;
    /// the file is as long as the window while open and exactly as long as the data once
    /// dropped.
    #[test]
    fn appends_cross_windows_and_drop_truncates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        let mut w = MmapWritable::new(open_rw(&path), "000001.log".into()).unwrap();
        let mut want = Vec::new();
        let mut i = 0u32;
        while want.len() < 2 * WINDOW + 12_345 {
            // Record sizes that do not divide the window, so some straddle its boundaries.
            let rec: Vec<u8> = (0..(997 + i % 5000)).map(|j| (i ^ j) as u8).collect();
            w.append(&rec).unwrap();
            want.extend_from_slice(&rec);
            i += 1;
        }
        assert_eq!(w.size(), want.len() as u64);
        w.flush().unwrap();
        // Visible to readers of the file at once, before any sync.
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk.len(), 3 * WINDOW, "the file runs to the end of the mapped window");
        assert_eq!(&on_disk[..want.len()], &want[..]);
        assert!(on_disk[want.len()..].iter().all(|&b| b == 0));
        w.sync().unwrap();
        w.start_writeback().unwrap();
        drop(w);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    /// A writer that appends nothing leaves an empty file.
    #[test]
    fn empty_writer_leaves_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000002.log");
        let w = MmapWritable::new(open_rw(&path), "000002.log".into()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), WINDOW as u64);
        drop(w);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }
}
