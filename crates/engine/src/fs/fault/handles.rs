//! File handles of [`super::SimFs`]. Each holds the disk, the crash epoch it was opened in (a
//! handle from before a crash fails every call) and its inode (an unlinked file stays readable
//! while a handle is open).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::disk::{Disk, Durable};
use super::OpKind;
use crate::error::{Error, Result};
use crate::fs::direct::{is_aligned, misaligned};
use crate::fs::{
    DirectReadFile, DirectWriteFile, FileLock, RandomAccessFile, SequentialFile, WritableFile,
};

/// A handle's link to its inode; closes the inode on drop.
struct Handle {
    disk: Arc<Mutex<Disk>>,
    epoch: u64,
    ino: u64,
    path: PathBuf,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.disk.lock().close_inode(self.ino);
    }
}

fn gone(path: &Path) -> Error {
    Error::io(
        format!("using {}", path.display()),
        io::Error::new(io::ErrorKind::NotFound, "file vanished"),
    )
}

/// Copies `buf.len()` bytes at `offset` of the inode's current data.
fn read_at(d: &Disk, h: &Handle, offset: u64, buf: &mut [u8]) -> Result<()> {
    let i = d.inodes.get(&h.ino).ok_or_else(|| gone(&h.path))?;
    let src = usize::try_from(offset)
        .ok()
        .and_then(|o| Some(o..o.checked_add(buf.len())?))
        .and_then(|r| i.data.get(r));
    match src {
        Some(src) => {
            buf.copy_from_slice(src);
            Ok(())
        }
        None => Err(Error::io(
            format!("reading {} bytes at {offset} of {}", buf.len(), h.path.display()),
            io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"),
        )),
    }
}

/// A writer.
pub(super) struct SimWritable {
    h: Handle,
    size: u64,
}

impl SimWritable {
    pub(super) fn new(disk: Arc<Mutex<Disk>>, epoch: u64, ino: u64, path: &Path) -> Self {
        SimWritable { h: Handle { disk, epoch, ino, path: path.to_path_buf() }, size: 0 }
    }
}

impl WritableFile for SimWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "writing", &self.h.path)?;
        d.count(OpKind::Write, "writing", &self.h.path)?;
        d.check_capacity(data.len(), &self.h.path)?;
        let i = d.inodes.get_mut(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        i.data.extend_from_slice(data);
        self.size += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.h.disk.lock().check_alive(self.h.epoch, "flushing", &self.h.path)
    }

    fn sync(&mut self) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "syncing", &self.h.path)?;
        d.count(OpKind::Sync, "syncing", &self.h.path)?;
        let i = d.inodes.get_mut(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        i.durable = Durable::Prefix(i.data.len());
        Ok(())
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// A positional reader.
pub(super) struct SimRandom {
    h: Handle,
    size: u64,
}

impl SimRandom {
    pub(super) fn new(
        disk: Arc<Mutex<Disk>>,
        epoch: u64,
        ino: u64,
        size: u64,
        path: &Path,
    ) -> Self {
        SimRandom { h: Handle { disk, epoch, ino, path: path.to_path_buf() }, size }
    }
}

impl RandomAccessFile for SimRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "reading", &self.h.path)?;
        d.count(OpKind::Read, "reading", &self.h.path)?;
        read_at(&d, &self.h, offset, buf)
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// A direct (`O_DIRECT`) reader: aligned requests only.
pub(super) struct SimDirectRead {
    h: Handle,
    size: u64,
    align: usize,
}

impl SimDirectRead {
    pub(super) fn new(
        disk: Arc<Mutex<Disk>>,
        epoch: u64,
        ino: u64,
        size: u64,
        path: &Path,
        align: usize,
    ) -> Self {
        SimDirectRead { h: Handle { disk, epoch, ino, path: path.to_path_buf() }, size, align }
    }
}

impl DirectReadFile for SimDirectRead {
    fn read_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "direct reading", &self.h.path)?;
        d.count(OpKind::Read, "direct reading", &self.h.path)?;
        if !is_aligned(offset, buf.len(), buf.as_ptr() as usize, self.align) {
            return Err(misaligned(
                "direct read of",
                &self.h.path,
                offset,
                buf.len(),
                buf.as_ptr() as usize,
            ));
        }
        let i = d.inodes.get(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let rest = i.data.get(start..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn alignment(&self) -> usize {
        self.align
    }
}

/// A direct (`O_DIRECT`) writer: aligned requests only.
pub(super) struct SimDirectWrite {
    h: Handle,
    align: usize,
}

impl SimDirectWrite {
    pub(super) fn new(
        disk: Arc<Mutex<Disk>>,
        epoch: u64,
        ino: u64,
        path: &Path,
        align: usize,
    ) -> Self {
        SimDirectWrite { h: Handle { disk, epoch, ino, path: path.to_path_buf() }, align }
    }
}

impl DirectWriteFile for SimDirectWrite {
    fn write_aligned(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "direct writing", &self.h.path)?;
        d.count(OpKind::Write, "direct writing", &self.h.path)?;
        let addr = data.as_ptr() as usize;
        if !is_aligned(offset, data.len(), addr, self.align) {
            return Err(misaligned("direct write of", &self.h.path, offset, data.len(), addr));
        }
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let len = d.inodes.get(&self.h.ino).ok_or_else(|| gone(&self.h.path))?.data.len();
        d.check_capacity((offset + data.len()).saturating_sub(len), &self.h.path)?;
        let i = d.inodes.get_mut(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        i.write_at(offset, data);
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "setting the length of", &self.h.path)?;
        d.count(OpKind::Write, "setting the length of", &self.h.path)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let cur = d.inodes.get(&self.h.ino).ok_or_else(|| gone(&self.h.path))?.data.len();
        d.check_capacity(len.saturating_sub(cur), &self.h.path)?;
        let i = d.inodes.get_mut(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        i.set_len(len);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "syncing", &self.h.path)?;
        d.count(OpKind::Sync, "syncing", &self.h.path)?;
        let i = d.inodes.get_mut(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        i.durable = Durable::Prefix(i.data.len());
        Ok(())
    }
}

/// A sequential reader.
pub(super) struct SimSequential {
    h: Handle,
    pos: u64,
}

impl SimSequential {
    pub(super) fn new(disk: Arc<Mutex<Disk>>, epoch: u64, ino: u64, path: &Path) -> Self {
        SimSequential { h: Handle { disk, epoch, ino, path: path.to_path_buf() }, pos: 0 }
    }
}

impl SequentialFile for SimSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut d = self.h.disk.lock();
        d.check_alive(self.h.epoch, "reading", &self.h.path)?;
        d.count(OpKind::Read, "reading", &self.h.path)?;
        let i = d.inodes.get(&self.h.ino).ok_or_else(|| gone(&self.h.path))?;
        let start = usize::try_from(self.pos).unwrap_or(usize::MAX);
        let rest = i.data.get(start..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// A held lock; released on drop unless a crash already released it.
pub(super) struct SimLock {
    disk: Arc<Mutex<Disk>>,
    id: u64,
    path: PathBuf,
}

impl SimLock {
    pub(super) fn new(disk: Arc<Mutex<Disk>>, id: u64, path: &Path) -> Self {
        SimLock { disk, id, path: path.to_path_buf() }
    }
}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.disk.lock().release_lock(&self.path, self.id);
    }
}

impl FileLock for SimLock {}
