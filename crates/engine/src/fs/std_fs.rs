//! [`StdFs`]: the real file system, through `std::fs`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use super::{
    DirectReadFile, DirectWriteFile, FileLock, Fs, RandomAccessFile, SequentialFile, WritableFile,
};
use crate::error::{Error, Result};

/// The operating system's file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdFs;

fn ctx(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let c = format!("{what} {}", path.display());
    move |e| Error::io(c, e)
}

struct StdWritable {
    file: BufWriter<File>,
    size: u64,
    path: String,
}

impl WritableFile for StdWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.file.write_all(data).map_err(|e| Error::io(format!("writing {}", self.path), e))?;
        self.size += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|e| Error::io(format!("flushing {}", self.path), e))
    }
    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file.get_ref().sync_data().map_err(|e| Error::io(format!("syncing {}", self.path), e))
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn start_writeback(&mut self) -> Result<()> {
        self.flush()?;
        super::start_writeback(self.file.get_ref(), &self.path, 0)
    }
}

/// Creates (or truncates) `path` for writing, and for reading too if `read` (a file to map).
fn create_truncated(path: &Path, read: bool) -> Result<File> {
    OpenOptions::new()
        .read(read)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(ctx("creating", path))
}

struct StdRandom {
    file: File,
    size: u64,
    path: String,
}

impl RandomAccessFile for StdRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            Error::io(format!("reading {} bytes at {offset} of {}", buf.len(), self.path), e)
        })
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        super::split_read::pread_exact(&self.file, offset, len)
            .map_err(|e| Error::io(format!("reading {len} bytes at {offset} of {}", self.path), e))
    }
    fn read_split_at(&self, offset: u64, head: &mut [u8], tail_len: usize) -> Result<Vec<u8>> {
        let len = head.len() + tail_len;
        super::split_read::preadv_split(&self.file, offset, head, tail_len)
            .map_err(|e| Error::io(format!("reading {len} bytes at {offset} of {}", self.path), e))
    }
}

struct StdSequential {
    file: File,
    path: String,
}

impl SequentialFile for StdSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.file.read(buf).map_err(|e| Error::io(format!("reading {}", self.path), e))
    }
}

/// A file opened with `O_DIRECT` for reading.
struct StdDirectRead {
    file: File,
    size: u64,
    path: String,
    align: usize,
}

impl DirectReadFile for StdDirectRead {
    fn read_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read_at(buf, offset) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::io(
                        format!("direct read of {} bytes at {offset} of {}", buf.len(), self.path),
                        e,
                    ))
                }
            }
        }
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn alignment(&self) -> usize {
        self.align
    }
}

/// The direct IO alignment the file system reports for `file` (`statx` with `STATX_DIOALIGN`,
/// Linux 6.1+: the larger of the offset and memory alignments), made usable by
/// [`super::direct::usable_alignment`]; 4096 when it does not say.
#[cfg(target_os = "linux")]
fn dio_alignment(file: &File) -> usize {
    use std::os::fd::AsRawFd;
    // SAFETY: statx writes only into the zeroed struct passed; the empty path with
    // AT_EMPTY_PATH names the open descriptor itself.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 || stx.stx_dio_offset_align == 0 {
        return super::direct::DIRECT_IO_ALIGNMENT;
    }
    let a = stx.stx_dio_offset_align.max(stx.stx_dio_mem_align) as usize;
    super::direct::usable_alignment(a)
}

#[cfg(not(target_os = "linux"))]
fn dio_alignment(_file: &File) -> usize {
    super::direct::DIRECT_IO_ALIGNMENT
}

/// A file created with `O_DIRECT` for writing.
struct StdDirectWrite {
    file: File,
    path: String,
}

impl DirectWriteFile for StdDirectWrite {
    fn write_aligned(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.file.write_all_at(data, offset).map_err(|e| {
            Error::io(
                format!("direct write of {} bytes at {offset} of {}", data.len(), self.path),
                e,
            )
        })
    }
    fn set_len(&mut self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| Error::io(format!("setting the length of {}", self.path), e))
    }
    fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(format!("syncing {}", self.path), e))
    }
}

/// `O_DIRECT` where the platform has it.
#[cfg(target_os = "linux")]
fn direct_flag(o: &mut OpenOptions, _path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    o.custom_flags(libc::O_DIRECT);
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn direct_flag(_o: &mut OpenOptions, path: &Path) -> Result<()> {
    Err(super::direct::unsupported(path))
}

struct StdLock {
    _file: File,
}

impl FileLock for StdLock {}

impl Fs for StdFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = create_truncated(path, false)?;
        Ok(Box::new(StdWritable {
            file: BufWriter::with_capacity(64 << 10, file),
            size: 0,
            path: path.display().to_string(),
        }))
    }

    #[cfg(target_os = "linux")]
    fn create_mapped(&self, path: &Path, size_hint: u64) -> Result<Box<dyn WritableFile>> {
        let file = create_truncated(path, true)?;
        match super::mmap_file::MmapWritable::new(file, path.display().to_string(), size_hint) {
            Ok(w) => Ok(Box::new(w)),
            // A file system that cannot preallocate or map the file: append with write(2).
            Err(_) => self.create(path),
        }
    }

    #[cfg(target_os = "linux")]
    fn will_need(&self, path: &Path, len: u64) {
        use std::os::fd::AsRawFd;
        let (Ok(file), Ok(len)) = (File::open(path), super::off_t(len)) else { return };
        // SAFETY: `posix_fadvise` only reads its integer arguments; the descriptor is open for
        // the call. Advice: its result is ignored.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, len, libc::POSIX_FADV_WILLNEED) };
    }

    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::hard_link(from, to).map_err(ctx("linking", to))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(ctx("opening", path))?;
        let size = file.metadata().map_err(ctx("stat of", path))?.len();
        Ok(Arc::new(StdRandom { file, size, path: path.display().to_string() }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(ctx("opening", path))?;
        Ok(Box::new(StdSequential { file, path: path.display().to_string() }))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(ctx("listing", dir))? {
            let entry = entry.map_err(ctx("listing", dir))?;
            if let Some(name) = entry.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).map_err(ctx("deleting", path))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(ctx("renaming", from))
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(ctx("creating directory", dir))
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        std::fs::remove_dir(dir).map_err(ctx("removing directory", dir))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = File::open(dir).map_err(ctx("opening directory", dir))?;
        d.sync_all().map_err(ctx("syncing directory", dir))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(std::fs::metadata(path).map_err(ctx("stat of", path))?.len())
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(ctx("opening lock file", path))?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(StdLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked(format!(
                "{} is held by another process or handle; close it first",
                path.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(Error::io(format!("locking {}", path.display()), e))
            }
        }
    }

    fn open_direct_read(&self, path: &Path) -> Result<Box<dyn DirectReadFile>> {
        let mut o = OpenOptions::new();
        o.read(true);
        direct_flag(&mut o, path)?;
        let file = o.open(path).map_err(ctx("opening for direct IO", path))?;
        let size = file.metadata().map_err(ctx("stat of", path))?.len();
        let align = dio_alignment(&file);
        Ok(Box::new(StdDirectRead { file, size, path: path.display().to_string(), align }))
    }

    fn create_direct_write(&self, path: &Path) -> Result<Box<dyn DirectWriteFile>> {
        let mut o = OpenOptions::new();
        o.write(true).create(true).truncate(true);
        direct_flag(&mut o, path)?;
        let file = o.open(path).map_err(ctx("creating for direct IO", path))?;
        Ok(Box::new(StdDirectWrite { file, path: path.display().to_string() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::Fs;

    #[test]
    fn read_vec_at_reads_exactly_and_reports_a_short_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = StdFs.open_random(&path).unwrap();
        for (off, len) in [(0u64, 0usize), (0, 10_000), (1, 4096), (9_999, 1), (5_000, 5_000)] {
            let got = f.read_vec_at(off, len).unwrap();
            assert_eq!(got, data[off as usize..off as usize + len], "{off}+{len}");
            // The zero-filling default reads the same bytes.
            let mut want = vec![0u8; len];
            f.read_exact_at(off, &mut want).unwrap();
            assert_eq!(got, want);
        }
        for (off, len) in [(9_999u64, 2usize), (10_000, 1), (u64::MAX - 1, 4)] {
            let e = f.read_vec_at(off, len).unwrap_err();
            assert!(e.to_string().contains("of "), "{e}");
        }
    }
}
