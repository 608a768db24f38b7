//! The page cache held by the database's files: measured, and dropped on a timer, so that an
//! engine without direct IO (SQLite) cannot hide reads in the OS cache (`--drop_page_cache_ms`).
//!
//! A [`PageCacheDropper`] runs one background thread: every period it walks the files under
//! `--db`, counts their pages resident in the page cache (`mincore` over a read-only shared
//! mapping, which faults nothing in) and then asks the kernel to drop them
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`: clean pages go at once, dirty ones are written back
//! first and go on a later round). It keeps the largest and the average resident total per
//! step; the driver takes them at the end of each step ([`PageCacheDropper::take`]). No cgroup,
//! nothing outside `--db` is touched, and SQLite's `-shm` file (its shared memory, mapped) is
//! left alone. This bounds the OS cache of the files to what one period can read or dirty; it
//! is not a hard limit (the resident maximum says how well it held).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Resident bytes seen by the sampler since the last [`PageCacheDropper::take`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Residency {
    /// Largest total resident at one sample, bytes.
    pub max_bytes: u64,
    /// Average over the samples, bytes.
    pub avg_bytes: u64,
    /// Samples taken.
    pub samples: u64,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    max: AtomicU64,
    sum: AtomicU64,
    samples: AtomicU64,
}

/// The background measure-and-drop thread; stops when dropped.
pub struct PageCacheDropper {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PageCacheDropper {
    /// Starts measuring and dropping the page cache of the files under `dir` every `every`.
    pub fn start(dir: PathBuf, every: Duration) -> PageCacheDropper {
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("ibench-page-cache".into())
            .spawn(move || {
                while !s.stop.load(Relaxed) {
                    let mut resident = 0;
                    for f in files_under(&dir) {
                        resident += resident_bytes(&f).unwrap_or(0);
                        let _ = drop_page_cache(&f);
                    }
                    s.max.fetch_max(resident, Relaxed);
                    s.sum.fetch_add(resident, Relaxed);
                    s.samples.fetch_add(1, Relaxed);
                    let mut slept = Duration::ZERO;
                    while slept < every && !s.stop.load(Relaxed) {
                        let step = (every - slept).min(Duration::from_millis(20));
                        std::thread::sleep(step);
                        slept += step;
                    }
                }
            })
            .ok();
        PageCacheDropper { shared, thread }
    }

    /// What the samples since the last call saw; starts a new period.
    pub fn take(&self) -> Residency {
        let samples = self.shared.samples.swap(0, Relaxed);
        let sum = self.shared.sum.swap(0, Relaxed);
        Residency {
            max_bytes: self.shared.max.swap(0, Relaxed),
            avg_bytes: sum.checked_div(samples).unwrap_or(0),
            samples,
        }
    }
}

impl Drop for PageCacheDropper {
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The regular files under `dir` (recursively), except SQLite's shared-memory `-shm` files.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_under(&p)),
            Ok(t) if t.is_file() && !p.to_string_lossy().ends_with("-shm") => out.push(p),
            _ => {}
        }
    }
    out
}

/// Bytes of `path` resident in the page cache (`mincore`).
pub fn resident_bytes(path: &Path) -> std::io::Result<u64> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path)?;
    let len = usize::try_from(f.metadata()?.len()).unwrap_or(usize::MAX);
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf only reads its argument.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    // SAFETY: a fresh read-only shared mapping of an open file; nothing reads through it, and it
    // is unmapped below before `f` is closed.
    let addr = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0)
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut vec = vec![0u8; len.div_ceil(page.max(1))];
    // SAFETY: `addr..addr+len` is the mapping made above; `vec` has one byte per page of it.
    let r = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: unmaps exactly the mapping made above.
    unsafe { libc::munmap(addr, len) };
    if r != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64)
}

/// Asks the kernel to drop `path`'s pages from the page cache (`POSIX_FADV_DONTNEED`; dirty
/// pages are written back first and dropped on a later call).
pub fn drop_page_cache(path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path)?;
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is open.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_drops_a_files_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        let _ = std::fs::read(&path).unwrap();
        let before = resident_bytes(&path).unwrap();
        assert!(before >= 512 << 10, "just read: mostly resident ({before})");
        drop_page_cache(&path).unwrap();
        let after = resident_bytes(&path).unwrap();
        assert!(after < before / 2, "dropped: {before} -> {after}");
        assert_eq!(files_under(dir.path()), vec![path.clone()]);
        std::fs::write(dir.path().join("x-shm"), b"s").unwrap();
        assert_eq!(files_under(dir.path()), vec![path]);
        let d = PageCacheDropper::start(dir.path().to_path_buf(), Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(100));
        let r = d.take();
        assert!(r.samples >= 2, "{r:?}");
    }
}
