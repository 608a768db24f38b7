//! [`MmapWritable`]: a file appended through a shared memory mapping, as [`StdFs`] writes
//! write-ahead logs ([`crate::fs::Fs::create_mapped`], `wal_mmap_writes`).
//!
//! A WAL is appended one small record per write group. Through `write(2)`, each costs a system
//! call and the file system's buffered-write path (`ext4_da_write_begin`/`_end`, the inode lock,
//! zeroing the new block's tail): about 1 us per record measured, as much as the rest of a put.
//! Through a mapping, appending is a copy into the page cache; the kernel takes a page fault
//! once per 4 KiB page (and once again after each writeback of a page, to mark it dirty).
//!
//! The file is mapped [`WINDOW`] (1 GiB) of address space at a time, once for any WAL of usual
//! size, and allocated with `fallocate(2)` (mode 0: blocks reserved and the file length
//! extended over them): the size the caller expects (a WAL: one memtable's worth) when made, then
//! [`ALLOC`] (8 MiB) at a time ahead of any appends past it. So no page an append
//! touches lies past the end of the file (SIGBUS) or needs a block allocated when it faults (a
//! full disk fails the `fallocate`, an `Error::Io` from `append`, not a signal); the mapping's
//! pages past the allocated length are never touched. Only a WAL longer than the window
//! unmaps it and maps the next one. Mapping or unmapping 8 MiB windows measured up to 1.4 ms on
//! the write path (`munmap` of dirty pages), hence one window.
//!
//! Pages enter the page cache [`READ_AHEAD`] (256 KiB) at a time, just before the appends reach
//! them (`MADV_WILLNEED`: zero-filled, as the extent is preallocated), and the window is
//! `MADV_RANDOM`, so a page fault never reads ahead by itself. Left to faults, the first write
//! into each allocation took the kernel's mmap read-around (up to the device's `read_ahead_kb`,
//! 8 MiB here, clipped at the end of the file), which zero-filled the rest of the allocation in
//! one fault: 300-600 us in one put once per MiB with 1 MiB allocations (the p99.99 of a fill at
//! 400-byte values: 380-550 us, RocksDB's 70-76 us), milliseconds with 8 MiB ones. Each append
//! still takes a fault per page it is the first to write (the page is cached by then: the fault
//! only maps it writable). Measured (`fillseq`, 1M values of 400 bytes, 4 runs interleaved,
//! medians): 1 MiB allocations and read-around faults 1.14M ops/s, p99.99 380 us; 8 MiB and
//! read-around 1.31M, 425 us; 8 MiB and 256 KiB read ahead 1.20M, 109 us (with 1 MiB read
//! ahead: 1.19M, 350 us); p99 3.5-3.9 us and the maximum 3-4 ms (medians) in all four. Making
//! the pages writable ahead as well (`MADV_POPULATE_WRITE`) moved each page's fault into the one
//! call and put a 25 us put into the 1% (p99 26 us).
//!
//! Large records: a record of at least [`PWRITE_MIN`] (2 KiB) bytes (its headers and
//! fragments, given together through [`WritableFile::append_parts`]) is written with one `pwritev(2)` instead:
//! copied into the mapping it would take a fault per page plus the zero-filling of each page
//! before the copy overwrites it, where the system call copies whole pages once and leaves
//! them unmapped. Measured (db_bench, RocksDB's default options, release build, quiet machine,
//! 6 runs interleaved, medians): system time of `fillseq` of 100K values of 4 KiB 0.875 s
//! copying, 0.815 s with this (`fillrandom` 0.895 / 0.835; 30K values of 16 KiB 0.96 / 0.705),
//! page faults 140K / 63K, throughput +1 to +8% (within the runs' spread); RocksDB 10.4.2 in
//! the same window 0.80 / 0.90 / 0.79 s. The log writer hands a record over whole (every
//! fragment and any block trailer in one `append_parts`, `wal/writer.rs`): given fragment by
//! fragment, a 4 KiB record crossing a 32 KiB block edge (one in eight at 4 KiB values) was two
//! appends under the threshold, copied into the mapping, and each 256 KiB the copy reached
//! asked the next pages in (below): 64 pages zero-filled in one put, 76-170 us, in 1.4% of the
//! puts of a 4 KiB `fillseq` (p99 115-130 us against RocksDB's 25-40 in the same run).
//! At 1 KiB values the copy wins (0.85 s of system time against 1.26 s for a `write(2)` per
//! record; with a 1 KiB threshold, `fillseq` of 200K: 99-101K puts/s against 124-130K, system
//! time 0.70 s against 0.59); at 2 KiB the system call does (threshold 2 KiB against 4 KiB,
//! `fillseq` of 150K: p99 14.7/18.0 us against 92.9/56.0, RocksDB 21.8/21.4; minor faults 33K
//! against 112K; system time 0.83-0.87 s both; same run, load 5.1-5.2), hence 2 KiB. The
//! page cache is one:
//! bytes written either way are the same file's pages, and a later copy into a page the
//! system call wrote faults it in like any other.
//!
//! Durability is the contract of [`WritableFile`]: appended bytes are in the page cache at once
//! (they survive a process crash: `flush` has nothing to do); `sync` is `fdatasync(2)`, which
//! writes back the pages dirtied through the mapping. The file's length runs ahead of the
//! appended bytes by the rest of the allocation, zero-filled; dropping the
//! writer unmaps it and truncates the file to the bytes appended. A crash leaves the zeros,
//! which the WAL reader takes for preallocated space (`wal/reader.rs`), as it does RocksDB's
//! preallocated WALs; a record the crash cut short, followed by those zeros, is a torn tail
//! (`LogReader::new_wal`).
//!
//! Unmapping: the writer of a WAL is dropped on the flush thread once its memtable is flushed.
//! One `munmap` of the window tore down the page tables of every page appended (a 64 MiB WAL:
//! 5-8 ms, `perf trace`) while holding the process's address-space lock, and the writer thread,
//! growing its heap for the next memtable (`mprotect` in glibc's allocator), waited for it:
//! 3.8-7.6 ms, the longest put of such fills. The appended part is unmapped [`UNMAP_STEP`]
//! (1 MiB) at a time instead, each call 0.3-0.5 ms at most, so a waiter waits for one step.
//!
//! Costs: the pages appended stay mapped until the writer is dropped, so they count in the
//! process's RSS (as file pages) where `write(2)`'s would be page cache outside it; and the
//! read ahead and the page faults land on the write path (one `madvise` per 256 KiB, a fault
//! per 4 KiB), as does a `fallocate` per 8 MiB past the expected size (the database makes its
//! WALs ahead, on the flush thread, with the first allocation: `db/write.rs`). The WAL made
//! ahead also has its first allocation asked into the page cache there ([`crate::fs::Fs::will_need`]),
//! so its write-path `madvise` calls find the pages cached: without it the call zero-filled 64
//! pages, 60-120 us in one put per 256 KiB (session 52, `perf trace`).
//!
//! Nothing else may shorten the file while it is mapped (that would turn the next append into a
//! SIGBUS); the database's `LOCK` keeps other Talus processes out. Single-owner (`&mut self`);
//! no locks.
//!
//! [`StdFs`]: super::StdFs

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use super::{off_t, WritableFile};
use crate::error::{Error, Result};

/// Address space mapped at a time (a multiple of [`ALLOC`]).
pub(super) const WINDOW: u64 = 1 << 30;
/// Bytes allocated (`fallocate`) at a time ahead of the appends (a multiple of the page size).
pub(super) const ALLOC: u64 = 8 << 20;
/// Bytes of pages brought into the page cache at a time ahead of the appends (a multiple of the
/// page size).
pub(super) const READ_AHEAD: u64 = 256 << 10;
/// Bytes of appended pages unmapped per `munmap(2)` call when the window goes (a multiple of
/// the page size).
pub(super) const UNMAP_STEP: u64 = 1 << 20;
/// Appends of at least this many bytes (one WAL record's header and fragment together) are
/// written with `pwritev(2)` rather than copied into the mapping (module documentation:
/// "Large records").
pub(super) const PWRITE_MIN: usize = 2048;
/// The page size the offsets are rounded to (the kernel's on every target we build for).
const PAGE: u64 = 4096;

/// See the module documentation.
pub(super) struct MmapWritable {
    file: File,
    path: String,
    /// The mapped window: its address (`None` once unmapped) and its offset in the file.
    map: Option<NonNull<u8>>,
    window_offset: u64,
    /// Address space per window and bytes per allocation ([`WINDOW`], [`ALLOC`]; smaller in
    /// tests).
    window: u64,
    alloc: u64,
    /// File length allocated so far (a multiple of `alloc`).
    allocated: u64,
    /// File offset up to which pages were asked into the page cache (page-aligned; between
    /// `window_offset` and `allocated`).
    cached: u64,
    /// Bytes appended.
    size: u64,
}

// SAFETY: the mapping is owned by this value alone (like a `Box<[u8]>`): only `&mut self`
// methods write through it, and it is unmapped on drop.
unsafe impl Send for MmapWritable {}
// SAFETY: `&MmapWritable` exposes only `size`, which reads a plain field.
unsafe impl Sync for MmapWritable {}

impl MmapWritable {
    /// Maps `file` (open for reading and writing, empty) and allocates its first `size_hint`
    /// bytes (rounded up to [`ALLOC`], at least that, at most the window) in one call. Fails if
    /// the file system cannot preallocate or map it; the caller then writes the file another way.
    pub(super) fn new(file: File, path: String, size_hint: u64) -> Result<MmapWritable> {
        MmapWritable::with_sizes(file, path, WINDOW, ALLOC, size_hint)
    }

    fn with_sizes(
        file: File,
        path: String,
        window: u64,
        alloc: u64,
        size_hint: u64,
    ) -> Result<MmapWritable> {
        let mut w = MmapWritable {
            file,
            path,
            map: None,
            window_offset: 0,
            window,
            alloc,
            allocated: 0,
            cached: 0,
            size: 0,
        };
        w.map_window(0)?;
        w.allocate(size_hint.max(1).next_multiple_of(alloc).min(window))?;
        Ok(w)
    }

    /// Unmaps the current window (if any), then maps `window` bytes of the file from `offset`
    /// (the file may be shorter: its pages past the allocated length are never touched).
    fn map_window(&mut self, offset: u64) -> Result<()> {
        self.unmap();
        let what = || format!("mapping {} bytes at {offset} of {}", self.window, self.path);
        let (off, len) = match (off_t(offset), usize::try_from(self.window)) {
            (Ok(o), Ok(l)) => (o, l),
            (Err(e), _) => return Err(Error::io(what(), e)),
            (_, Err(_)) => {
                return Err(Error::io(what(), std::io::Error::other("window too large")))
            }
        };
        // SAFETY: a fresh shared mapping of an open file at a page-aligned offset (a multiple of
        // the window); the kernel picks the address, so nothing of ours is overwritten.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.file.as_raw_fd(),
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::io(what(), std::io::Error::last_os_error()));
        }
        // SAFETY: advice about the mapping just made (no fault reads ahead in it); a refusal
        // changes nothing but speed.
        unsafe { libc::madvise(p, len, libc::MADV_RANDOM) };
        self.map = NonNull::new(p.cast::<u8>());
        self.window_offset = offset;
        self.cached = offset;
        Ok(())
    }

    /// Asks the next [`READ_AHEAD`] bytes of pages from `cached` (within the allocated length)
    /// into the page cache (module documentation).
    fn read_ahead(&mut self, map: NonNull<u8>) {
        let len = READ_AHEAD.min(self.allocated - self.cached);
        // SAFETY: `cached` lies in the window (`window_offset <= cached < allocated`, and the
        // allocated length never passes the window's end, both being multiples of `alloc`), so
        // the address is inside the live mapping `map` and page-aligned, and `len` bytes from
        // it are too. The call is advice: it reads or changes no memory of ours (the file's
        // zero pages enter the page cache); its error is ignored.
        unsafe {
            let at = map.as_ptr().add((self.cached - self.window_offset) as usize);
            libc::madvise(at.cast(), len as usize, libc::MADV_WILLNEED);
        }
        self.cached += len;
    }

    /// Allocates the next `bytes` of the file (a multiple of `alloc`), extending its length
    /// over them.
    fn allocate(&mut self, bytes: u64) -> Result<()> {
        let what = || format!("allocating {bytes} bytes at {} of {}", self.allocated, self.path);
        let (off, len) = match (off_t(self.allocated), off_t(bytes)) {
            (Ok(o), Ok(l)) => (o, l),
            (Err(e), _) | (_, Err(e)) => return Err(Error::io(what(), e)),
        };
        // SAFETY: `fallocate` only reads its integer arguments; the descriptor is open for
        // writing.
        if unsafe { libc::fallocate(self.file.as_raw_fd(), 0, off, len) } != 0 {
            return Err(Error::io(what(), std::io::Error::last_os_error()));
        }
        self.allocated += bytes;
        Ok(())
    }

    /// Unmaps the window: the pages appended to [`UNMAP_STEP`] at a time, then the rest (whose
    /// pages were never touched) in one call (module documentation: "Unmapping").
    fn unmap(&mut self) {
        if let Some(p) = self.map.take() {
            // Page tables exist only for pages appended to, which lie below `cached`
            // (page-aligned, within the window).
            let touched = (self.cached - self.window_offset).min(self.window);
            for (off, len) in unmap_steps(touched, self.window, UNMAP_STEP) {
                // SAFETY: `p` is the address of a live mapping of `window` bytes made by
                // `map_window`, just taken out of `self.map` (nothing writes through it again);
                // the steps are page-aligned, inside the window, and do not overlap, so each
                // byte is unmapped exactly once.
                unsafe { libc::munmap(p.as_ptr().add(off as usize).cast(), len as usize) };
            }
        }
    }
}

impl MmapWritable {
    /// Writes `parts` (`total` bytes) at the append offset with `pwritev(2)`, again after a
    /// short write.
    fn pwrite_all(&mut self, parts: &[&[u8]], total: usize) -> Result<()> {
        let mut done = 0usize;
        while done < total {
            // The parts from byte `done` on, as at most 16 iovecs (a record is 2 parts per
            // fragment, and a zero trailer before a fragment that starts a block).
            let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 16];
            let (mut n, mut skip) = (0usize, done);
            for p in parts {
                if skip >= p.len() {
                    skip -= p.len();
                    continue;
                }
                let Some(slot) = iov.get_mut(n) else { break };
                let rest = p.get(skip..).unwrap_or_default();
                *slot = libc::iovec {
                    iov_base: rest.as_ptr() as *mut libc::c_void,
                    iov_len: rest.len(),
                };
                skip = 0;
                n += 1;
            }
            let at = self.size + done as u64;
            let what = || format!("writing {} bytes at {at} of {}", total - done, self.path);
            let off = off_t(at).map_err(|e| Error::io(what(), e))?;
            // SAFETY: the first `n` iovecs point into the caller's live slices (`parts`), which
            // `pwritev` only reads; the descriptor is open for writing.
            let r = unsafe { libc::pwritev(self.file.as_raw_fd(), iov.as_ptr(), n as i32, off) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Error::io(what(), e));
            }
            if r == 0 {
                return Err(Error::io(what(), std::io::Error::other("pwritev wrote nothing")));
            }
            done += r as usize;
        }
        Ok(())
    }
}

/// The `(offset, length)` pieces `unmap` unmaps a window of `window` bytes in: `[0, touched)`
/// in pieces of at most `step`, then `[touched, window)` in one (none if empty). They follow
/// one another from 0 to `window`.
fn unmap_steps(touched: u64, window: u64, step: u64) -> impl Iterator<Item = (u64, u64)> {
    let mut off = 0u64;
    std::iter::from_fn(move || {
        if off >= window {
            return None;
        }
        let len = if off < touched { step.min(touched - off) } else { window - off };
        let piece = (off, len);
        off += len;
        Some(piece)
    })
}

impl WritableFile for MmapWritable {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let used = self.size - self.window_offset;
            let map = match self.map {
                Some(p) if used < self.window => p,
                _ => {
                    self.map_window(self.size)?;
                    continue;
                }
            };
            if self.size == self.allocated {
                self.allocate(self.alloc)?;
            }
            if self.size == self.cached {
                self.read_ahead(map);
            }
            // Within the window and the pages asked into the page cache (which never pass the
            // allocated length; it and the window are multiples of `alloc` apart).
            let room = (self.window - used).min(self.cached - self.size);
            let n = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            // SAFETY: `map` is a live writable mapping of `window` bytes starting at file offset
            // `window_offset`; `used + n <= window`, and the file is allocated (so extends) past
            // `size + n` (`n <= cached - size`, `cached <= allocated`), so every page written
            // lies inside the file. `data` is a separate allocation of at least `n` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), map.as_ptr().add(used as usize), n)
            };
            self.size += n as u64;
            data = data.get(n..).unwrap_or_default();
        }
        Ok(())
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        // Within the mapped window only: the copying path maps the next window at a
        // window-aligned offset, which the appends must reach exactly.
        let window_end = self.window_offset + self.window;
        if total < PWRITE_MIN || self.map.is_none() || self.size + total as u64 > window_end {
            for p in parts {
                self.append(p)?;
            }
            return Ok(());
        }
        while self.size + total as u64 > self.allocated {
            self.allocate(self.alloc)?;
        }
        self.pwrite_all(parts, total)?;
        self.size += total as u64;
        // The copying path resumes in the page the write ended in (cached now) and reads
        // ahead from the next page boundary.
        if self.cached < self.size {
            self.cached = self.size.next_multiple_of(PAGE).min(self.allocated);
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
        // The appended bytes only: the preallocated zeros past them need no writing (with
        // nothing appended, 0 asks for the whole file, none of whose pages is dirty).
        super::start_writeback(&self.file, &self.path, self.size)
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
mod tests;
