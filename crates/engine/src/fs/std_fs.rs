//! [`StdFs`]: the real file system, through `std::fs`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use super::{FileLock, Fs, RandomAccessFile, SequentialFile, WritableFile};
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
        start_writeback(self.file.get_ref(), &self.path)
    }
}

#[cfg(target_os = "linux")]
fn start_writeback(file: &File, path: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `sync_file_range` only reads its integer arguments; the descriptor is open for the
    // lifetime of `file`. Offset 0 and length 0 mean "the whole file".
    let r = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    if r != 0 {
        return Err(Error::io(
            format!("starting writeback of {path}"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _path: &str) -> Result<()> {
    Ok(())
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

struct StdLock {
    _file: File,
}

impl FileLock for StdLock {}

impl Fs for StdFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(ctx("creating", path))?;
        Ok(Box::new(StdWritable {
            file: BufWriter::with_capacity(64 << 10, file),
            size: 0,
            path: path.display().to_string(),
        }))
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
}
