//! [`SimFs`]: an in-memory, fault-injecting file system for deterministic crash and error tests.
//!
//! # What it models
//! - **File data.** Each file (an inode) holds its current bytes (what the OS would return to a
//!   reader: page-cache semantics, so unsynced bytes are readable) and its durable bytes (the
//!   content as of its last `WritableFile::sync`). `append` goes straight to the "OS": there is
//!   no user-space buffer, so `flush` only checks that the handle is still alive.
//! - **Directory entries.** Creations, renames and deletions change the live namespace at once;
//!   they become durable only when [`Fs::sync_dir`] is called on the entry's parent directory.
//!   Directories themselves (`create_dir_all`) are durable at once.
//! - **Power loss.** [`SimFs::crash`] applies a [`CrashMode`] and returns a fresh view of the
//!   "rebooted machine". Every older view and every file handle opened through one is dead from
//!   then on: each call fails with an IO error (and `exists` answers false), so a `Db` left over
//!   from before the crash can neither read the recovered state nor change it. Locks held before
//!   the crash are released.
//! - **Faults.** [`SimFs::fail_after`] makes the n-th matching operation fail with an
//!   [`Error::Io`] of a chosen [`std::io::ErrorKind`] (use `Other` for EIO, `StorageFull` for
//!   ENOSPC), once or from then on; [`SimFs::set_capacity`] bounds the bytes all files may hold.
//!   Every operation is counted per [`OpKind`] ([`SimFs::op_counts`]) so a test can loop "fail
//!   the N-th IO" for N = 1..=total.
//!
//! Which calls count as which kind: `read_exact_at`, sequential `read`, `list_dir` and
//! `file_size` are [`OpKind::Read`]; `append` is [`OpKind::Write`]; `WritableFile::sync` is
//! [`OpKind::Sync`]; `create`, `open_random`, `open_sequential`, `create_dir_all` and `lock` are
//! [`OpKind::Open`]; `rename` is [`OpKind::Rename`]; `remove_file` and `remove_dir` are [`OpKind::Remove`];
//! `sync_dir` is [`OpKind::DirSync`]. `exists` and `flush` are not counted and never fail
//! (except on a dead view). A failed operation has no effect (no partial append).
//!
//! **Direct IO.** `open_direct_read` and `create_direct_write` give handles that check the
//! kernel's `O_DIRECT` rule: every offset, length and buffer address a multiple of the logical
//! block size ([`crate::fs::direct::DIRECT_IO_ALIGNMENT`] unless
//! [`SimFs::set_direct_io_alignment`] says otherwise), else an `InvalidInput` error (EINVAL), so tests
//! on `SimFs` exercise the alignment code. Direct reads count as [`OpKind::Read`], direct
//! writes and `set_len` as [`OpKind::Write`], their sync as [`OpKind::Sync`].
//! [`SimFs::set_direct_io_supported`] makes those opens fail, as on a file system without
//! `O_DIRECT`.
//!
//! Everything is deterministic: there is no global state, iteration is in path/inode order and
//! the only randomness is the seed given to [`CrashMode::DropRandomUnsynced`].
//!
//! # Locking
//! One mutex guards the whole disk; every call takes it briefly and never calls out while
//! holding it. Views and handles are `Send + Sync`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{
    DirectReadFile, DirectWriteFile, FileLock, Fs, RandomAccessFile, SequentialFile, WritableFile,
};
use crate::error::{Error, Result};

mod disk;
mod handles;
#[cfg(test)]
mod tests;

use disk::Disk;
use handles::{SimDirectRead, SimDirectWrite, SimLock, SimRandom, SimSequential, SimWritable};

/// What a simulated crash loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// The process dies (kill -9) but the machine stays up: every byte handed to the OS and
    /// every directory change is kept (and stays unsynced: a later power loss can still drop it).
    KeepUnsynced,
    /// Power loss that drops everything not synced: every file goes back to its synced content,
    /// directory changes since the last `sync_dir` of their directory are undone (files created
    /// since then vanish, renames revert, deletions come back).
    DropAllUnsynced,
    /// Power loss as a real disk may do it: each file keeps a random prefix of its unsynced bytes
    /// and each unsynced directory entry is kept or undone at random, from `seed`.
    DropRandomUnsynced {
        /// Seed of the choices; the same seed on the same history gives the same outcome.
        seed: u64,
    },
}

/// A kind of file-system operation, for fault filters and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    /// Reading file data or metadata (`read_exact_at`, `read`, `list_dir`, `file_size`).
    Read,
    /// Appending to a file.
    Write,
    /// Syncing a file's data.
    Sync,
    /// Creating or opening a file, creating a directory, taking a lock.
    Open,
    /// Renaming a file.
    Rename,
    /// Deleting a file.
    Remove,
    /// Syncing a directory.
    DirSync,
}

impl OpKind {
    /// Every kind, in counter order.
    pub const ALL: [OpKind; 7] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::Sync,
        OpKind::Open,
        OpKind::Rename,
        OpKind::Remove,
        OpKind::DirSync,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// A set of [`OpKind`]s that a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpFilter(u8);

impl OpFilter {
    /// Every operation.
    pub const ALL: OpFilter = OpFilter(0x7f);
    /// No operation.
    pub const NONE: OpFilter = OpFilter(0);

    /// Only operations of `kind`.
    pub const fn only(kind: OpKind) -> OpFilter {
        OpFilter(1 << kind as u8)
    }

    /// This set plus `kind`.
    pub const fn with(self, kind: OpKind) -> OpFilter {
        OpFilter(self.0 | 1 << kind as u8)
    }

    /// True if `kind` is in the set.
    pub const fn matches(self, kind: OpKind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }
}

impl From<OpKind> for OpFilter {
    fn from(kind: OpKind) -> OpFilter {
        OpFilter::only(kind)
    }
}

/// Operations attempted (including those that failed), per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    counts: [u64; 7],
}

impl OpCounts {
    /// Operations of `kind`.
    pub fn get(&self, kind: OpKind) -> u64 {
        self.counts.get(kind.index()).copied().unwrap_or(0)
    }

    /// Operations of every kind in `filter`.
    pub fn matching(&self, filter: OpFilter) -> u64 {
        OpKind::ALL.iter().filter(|k| filter.matches(**k)).map(|k| self.get(*k)).sum()
    }

    /// Operations of every kind.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// An in-memory file system that forgets unsynced data and fails chosen operations. See the
/// module documentation for the model.
pub struct SimFs {
    disk: Arc<Mutex<Disk>>,
    /// The crash epoch this view belongs to; the view is dead once the disk's epoch moves on.
    epoch: u64,
}

impl std::fmt::Debug for SimFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimFs").field("epoch", &self.epoch).finish_non_exhaustive()
    }
}

impl SimFs {
    /// An empty file system (only the root directory exists).
    pub fn new() -> Arc<SimFs> {
        Arc::new(SimFs { disk: Arc::new(Mutex::new(Disk::new())), epoch: 0 })
    }

    /// Simulates a crash: applies `mode`, kills this view, every other view and every open
    /// handle, releases all locks, and returns the view to use from now on. Faults and the
    /// capacity limit stay as they are; counters go on.
    pub fn crash(&self, mode: CrashMode) -> Arc<SimFs> {
        let mut d = self.disk.lock();
        d.crash(mode);
        Arc::new(SimFs { disk: Arc::clone(&self.disk), epoch: d.epoch })
    }

    /// True until a crash kills this view.
    pub fn is_alive(&self) -> bool {
        self.disk.lock().epoch == self.epoch
    }

    /// Makes the `n`-th operation (counting from this call, 1 = the next one) whose kind is in
    /// `filter` fail with an IO error of `kind`; with `one_shot` only that one fails, otherwise
    /// every matching operation from then on fails too. Several faults may be armed at once.
    pub fn fail_after(
        &self,
        filter: impl Into<OpFilter>,
        n: u64,
        kind: io::ErrorKind,
        one_shot: bool,
    ) {
        self.disk.lock().arm(filter.into(), None, n, kind, one_shot);
    }

    /// [`SimFs::fail_after`] counting only operations on paths whose file name starts with
    /// `name_prefix` (`"MANIFEST"`, `"CURRENT"`, `"000012.sst"`; for a directory sync, the
    /// directory's own name).
    pub fn fail_after_on(
        &self,
        filter: impl Into<OpFilter>,
        name_prefix: &str,
        n: u64,
        kind: io::ErrorKind,
        one_shot: bool,
    ) {
        self.disk.lock().arm(filter.into(), Some(name_prefix.to_string()), n, kind, one_shot);
    }

    /// Disarms every fault armed with [`SimFs::fail_after`] (the capacity limit stays).
    pub fn clear_faults(&self) {
        self.disk.lock().rules.clear();
    }

    /// Number of operations that failed because of an injected fault or the capacity limit.
    pub fn faults_injected(&self) -> u64 {
        self.disk.lock().injected
    }

    /// Makes appends fail with `StorageFull` once the files' total size would exceed `bytes`.
    pub fn set_capacity(&self, bytes: u64) {
        self.disk.lock().capacity = Some(bytes);
    }

    /// Removes the capacity limit.
    pub fn clear_capacity(&self) {
        self.disk.lock().capacity = None;
    }

    /// Makes direct IO opens succeed (the default) or fail as on a file system without
    /// `O_DIRECT`.
    pub fn set_direct_io_supported(&self, supported: bool) {
        self.disk.lock().direct_io = supported;
    }

    /// Sets the alignment direct requests must have (a power of two; 4096 by default), as a
    /// device's logical block size; handles opened afterwards use it.
    pub fn set_direct_io_alignment(&self, align: usize) {
        self.disk.lock().direct_alignment = align.max(1);
    }

    /// Total bytes held by live files (and deleted files still open).
    pub fn used_bytes(&self) -> u64 {
        self.disk.lock().used()
    }

    /// Operations attempted so far, per kind.
    pub fn op_counts(&self) -> OpCounts {
        OpCounts { counts: self.disk.lock().counts }
    }

    /// Sets every counter back to zero.
    pub fn reset_op_counts(&self) {
        self.disk.lock().counts = [0; 7];
    }

    /// The current content of a file (synced or not), if it exists. Not counted, never fails.
    pub fn contents(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let d = self.disk.lock();
        d.inode_at(path.as_ref()).map(|i| i.data.clone())
    }

    /// Bytes of a file that a power loss could drop (0 if everything is synced).
    pub fn unsynced_len(&self, path: impl AsRef<Path>) -> Option<u64> {
        let d = self.disk.lock();
        d.inode_at(path.as_ref()).map(|i| i.unsynced_len())
    }

    /// The paths of every live file, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        self.disk.lock().live.keys().cloned().collect()
    }

    /// Flips bit `bit` (counted from the start of the file) of a file's current and durable
    /// content, as a media error would; for corruption tests.
    pub fn flip_bit(&self, path: impl AsRef<Path>, bit: u64) -> Result<()> {
        self.disk.lock().flip_bit(path.as_ref(), bit)
    }

    /// Cuts a file's current and durable content to `len` bytes; for torn-file tests.
    pub fn truncate(&self, path: impl AsRef<Path>, len: u64) -> Result<()> {
        self.disk.lock().truncate(path.as_ref(), len)
    }

    /// Takes the disk lock, fails if this view is dead, then counts `kind` and applies faults.
    fn op(
        &self,
        kind: OpKind,
        what: &str,
        path: &Path,
    ) -> Result<parking_lot::MutexGuard<'_, Disk>> {
        let mut d = self.disk.lock();
        d.check_alive(self.epoch, what, path)?;
        d.count(kind, what, path)?;
        Ok(d)
    }
}

fn not_found(what: &str, path: &Path) -> Error {
    Error::io(
        format!("{what} {}", path.display()),
        io::Error::new(io::ErrorKind::NotFound, "no such file or directory"),
    )
}

impl Fs for SimFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut d = self.op(OpKind::Open, "creating", path)?;
        let ino = d.create(path)?;
        Ok(Box::new(SimWritable::new(Arc::clone(&self.disk), self.epoch, ino, path)))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let mut d = self.op(OpKind::Open, "opening", path)?;
        let ino = *d.live.get(path).ok_or_else(|| not_found("opening", path))?;
        let size = d.open_inode(ino);
        Ok(Arc::new(SimRandom::new(Arc::clone(&self.disk), self.epoch, ino, size, path)))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let mut d = self.op(OpKind::Open, "opening", path)?;
        let ino = *d.live.get(path).ok_or_else(|| not_found("opening", path))?;
        d.open_inode(ino);
        Ok(Box::new(SimSequential::new(Arc::clone(&self.disk), self.epoch, ino, path)))
    }

    fn exists(&self, path: &Path) -> bool {
        let d = self.disk.lock();
        d.epoch == self.epoch && (d.live.contains_key(path) || d.dir_exists(path))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        let d = self.op(OpKind::Read, "listing", dir)?;
        if d.live.contains_key(dir) {
            return Err(Error::io(
                format!("listing {}", dir.display()),
                io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            ));
        }
        if !d.dir_exists(dir) {
            return Err(not_found("listing", dir));
        }
        Ok(d.list_dir(dir))
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut d = self.op(OpKind::Remove, "deleting", path)?;
        if d.live.remove(path).is_none() {
            return Err(not_found("deleting", path));
        }
        d.gc();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut d = self.op(OpKind::Rename, "renaming", from)?;
        if !d.parent_exists(to) {
            return Err(not_found("renaming to", to));
        }
        if d.dir_exists(from) && !d.live.contains_key(from) {
            return d.rename_dir(from, to);
        }
        let ino = d.live.remove(from).ok_or_else(|| not_found("renaming", from))?;
        d.live.insert(to.to_path_buf(), ino);
        d.gc();
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let mut d = self.op(OpKind::Open, "creating directory", dir)?;
        d.create_dir_all(dir)
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let mut d = self.op(OpKind::Remove, "removing directory", dir)?;
        d.remove_dir(dir)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let mut d = self.op(OpKind::DirSync, "syncing directory", dir)?;
        if !d.dir_exists(dir) {
            return Err(not_found("syncing directory", dir));
        }
        d.sync_dir(dir);
        Ok(())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let d = self.op(OpKind::Read, "stat of", path)?;
        d.inode_at(path).map(|i| i.data.len() as u64).ok_or_else(|| not_found("stat of", path))
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut d = self.op(OpKind::Open, "locking", path)?;
        if d.locks.contains_key(path) {
            return Err(Error::Locked(format!(
                "{} is held by another process or handle; close it first",
                path.display()
            )));
        }
        if !d.live.contains_key(path) {
            let ino = d.create(path)?;
            d.close_inode(ino);
        }
        let id = d.take_lock(path);
        Ok(Box::new(SimLock::new(Arc::clone(&self.disk), id, path)))
    }

    fn open_direct_read(&self, path: &Path) -> Result<Box<dyn DirectReadFile>> {
        let mut d = self.op(OpKind::Open, "opening for direct IO", path)?;
        if !d.direct_io {
            return Err(super::direct::unsupported(path));
        }
        let ino = *d.live.get(path).ok_or_else(|| not_found("opening", path))?;
        let size = d.open_inode(ino);
        let align = d.direct_alignment;
        let h = SimDirectRead::new(Arc::clone(&self.disk), self.epoch, ino, size, path, align);
        Ok(Box::new(h))
    }

    fn create_direct_write(&self, path: &Path) -> Result<Box<dyn DirectWriteFile>> {
        let mut d = self.op(OpKind::Open, "creating for direct IO", path)?;
        if !d.direct_io {
            return Err(super::direct::unsupported(path));
        }
        let ino = d.create(path)?;
        let align = d.direct_alignment;
        Ok(Box::new(SimDirectWrite::new(Arc::clone(&self.disk), self.epoch, ino, path, align)))
    }
}
