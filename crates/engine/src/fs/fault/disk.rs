//! The state behind [`super::SimFs`]: inodes, the live and durable namespaces, locks, fault rules
//! and counters. Every method runs under the one disk mutex held by the caller.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use super::{CrashMode, OpFilter, OpKind};
use crate::error::{Error, Result};

/// What survives a power loss of one file.
pub(super) enum Durable {
    /// The first `n` bytes of the current data (the file only grew since its last sync).
    Prefix(usize),
    /// A copy of the synced content (the file was truncated since its last sync).
    Copy(Vec<u8>),
}

/// One file's data.
pub(super) struct Inode {
    /// What a reader sees now.
    pub(super) data: Vec<u8>,
    /// What a power loss leaves.
    pub(super) durable: Durable,
    /// Open handles; an unlinked file stays readable while one is open.
    pub(super) open: usize,
}

impl Inode {
    /// Sets the synced content aside (as a copy) before bytes below its end change.
    fn keep_durable_below(&mut self, at: usize) {
        if let Durable::Prefix(n) = self.durable {
            if at < n {
                self.durable = Durable::Copy(self.data.get(..n).unwrap_or(&[]).to_vec());
            }
        }
    }

    /// Writes `src` at `offset`, replacing what is there and growing the file (with zeros if
    /// `offset` is past its end).
    pub(super) fn write_at(&mut self, offset: usize, src: &[u8]) {
        self.keep_durable_below(offset);
        let end = offset + src.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        if let Some(dst) = self.data.get_mut(offset..end) {
            dst.copy_from_slice(src);
        }
    }

    /// Cuts or zero-extends the file to `len` bytes.
    pub(super) fn set_len(&mut self, len: usize) {
        if len < self.data.len() {
            self.keep_durable_below(len);
            self.data.truncate(len);
        } else {
            self.data.resize(len, 0);
        }
    }

    pub(super) fn unsynced_len(&self) -> u64 {
        match &self.durable {
            Durable::Prefix(n) => self.data.len().saturating_sub(*n) as u64,
            Durable::Copy(_) => self.data.len() as u64,
        }
    }
}

/// An armed fault.
pub(super) struct Rule {
    filter: OpFilter,
    /// Only operations on a path whose file name starts with this count (`None`: all).
    name_prefix: Option<String>,
    /// Matching operations still to pass before the fault fires.
    countdown: u64,
    kind: io::ErrorKind,
    one_shot: bool,
    fired: bool,
}

/// SplitMix64: a tiny seeded generator, enough for crash choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..=max`.
    fn upto(&mut self, max: usize) -> usize {
        (self.next() % (max as u64 + 1)) as usize
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// The simulated disk.
pub(super) struct Disk {
    /// Bumped by every crash; views and handles of older epochs are dead.
    pub(super) epoch: u64,
    next_ino: u64,
    pub(super) inodes: BTreeMap<u64, Inode>,
    /// The namespace as the OS shows it now.
    pub(super) live: BTreeMap<PathBuf, u64>,
    /// The namespace a power loss leaves (entries synced with `sync_dir`).
    durable: BTreeMap<PathBuf, u64>,
    /// Directories (always durable).
    dirs: BTreeSet<PathBuf>,
    /// Held locks: path → lock id.
    pub(super) locks: BTreeMap<PathBuf, u64>,
    next_lock: u64,
    pub(super) rules: Vec<Rule>,
    pub(super) counts: [u64; 7],
    pub(super) injected: u64,
    pub(super) capacity: Option<u64>,
    /// Whether `open_direct_read` and `create_direct_write` succeed.
    pub(super) direct_io: bool,
    /// The alignment direct requests must have (the simulated logical block size).
    pub(super) direct_alignment: usize,
}

fn injected_error(kind: io::ErrorKind, what: &str, path: &Path) -> Error {
    Error::io(format!("{what} {}", path.display()), io::Error::new(kind, "injected fault"))
}

impl Disk {
    pub(super) fn new() -> Disk {
        let mut dirs = BTreeSet::new();
        dirs.insert(PathBuf::from("/"));
        Disk {
            epoch: 0,
            next_ino: 1,
            inodes: BTreeMap::new(),
            live: BTreeMap::new(),
            durable: BTreeMap::new(),
            dirs,
            locks: BTreeMap::new(),
            next_lock: 1,
            rules: Vec::new(),
            counts: [0; 7],
            injected: 0,
            capacity: None,
            direct_io: true,
            direct_alignment: crate::fs::direct::DIRECT_IO_ALIGNMENT,
        }
    }

    /// Fails unless `epoch` is the current one.
    pub(super) fn check_alive(&self, epoch: u64, what: &str, path: &Path) -> Result<()> {
        if epoch == self.epoch {
            return Ok(());
        }
        Err(Error::io(
            format!("{what} {}", path.display()),
            io::Error::other("simulated crash: this file system view or handle is dead"),
        ))
    }

    /// Counts one operation of `kind` and fails it if an armed fault says so.
    pub(super) fn count(&mut self, kind: OpKind, what: &str, path: &Path) -> Result<()> {
        if let Some(c) = self.counts.get_mut(kind.index()) {
            *c += 1;
        }
        let mut fail = None;
        let name = path.file_name().map(|n| n.to_string_lossy());
        self.rules.retain_mut(|r| {
            if !r.filter.matches(kind) {
                return true;
            }
            if let Some(prefix) = &r.name_prefix {
                if !name.as_ref().is_some_and(|n| n.starts_with(prefix.as_str())) {
                    return true;
                }
            }
            if r.fired {
                // Only persistent rules are still here once fired.
                fail = Some(r.kind);
                return true;
            }
            r.countdown = r.countdown.saturating_sub(1);
            if r.countdown == 0 {
                r.fired = true;
                fail = Some(r.kind);
                return !r.one_shot;
            }
            true
        });
        match fail {
            Some(k) => {
                self.injected += 1;
                Err(injected_error(k, what, path))
            }
            None => Ok(()),
        }
    }

    pub(super) fn arm(
        &mut self,
        filter: OpFilter,
        name_prefix: Option<String>,
        n: u64,
        kind: io::ErrorKind,
        one_shot: bool,
    ) {
        let countdown = n.max(1);
        self.rules.push(Rule { filter, name_prefix, countdown, kind, one_shot, fired: false });
    }

    /// Fails with `StorageFull` if growing the files by `more` bytes would pass the capacity.
    pub(super) fn check_capacity(&mut self, more: usize, path: &Path) -> Result<()> {
        let Some(cap) = self.capacity else { return Ok(()) };
        if self.used().saturating_add(more as u64) > cap {
            self.injected += 1;
            return Err(Error::io(
                format!("writing {more} bytes to {}", path.display()),
                io::Error::new(io::ErrorKind::StorageFull, "simulated disk full"),
            ));
        }
        Ok(())
    }

    pub(super) fn used(&self) -> u64 {
        let live: BTreeSet<u64> = self.live.values().copied().collect();
        self.inodes
            .iter()
            .filter(|(ino, i)| i.open > 0 || live.contains(ino))
            .map(|(_, i)| i.data.len() as u64)
            .sum()
    }

    pub(super) fn inode_at(&self, path: &Path) -> Option<&Inode> {
        self.live.get(path).and_then(|ino| self.inodes.get(ino))
    }

    pub(super) fn dir_exists(&self, dir: &Path) -> bool {
        dir.as_os_str().is_empty() || self.dirs.contains(dir)
    }

    pub(super) fn parent_exists(&self, path: &Path) -> bool {
        path.parent().is_some_and(|p| self.dir_exists(p))
    }

    /// Creates `path` (or truncates it in place) and opens it; returns its inode.
    pub(super) fn create(&mut self, path: &Path) -> Result<u64> {
        if !self.parent_exists(path) || self.dirs.contains(path) {
            return Err(Error::io(
                format!("creating {}", path.display()),
                io::Error::new(io::ErrorKind::NotFound, "parent directory missing or a directory"),
            ));
        }
        let ino = match self.live.get(path) {
            Some(&ino) => {
                if let Some(i) = self.inodes.get_mut(&ino) {
                    if let Durable::Prefix(n) = i.durable {
                        let synced = i.data.get(..n).unwrap_or(&[]).to_vec();
                        i.durable = if synced.is_empty() {
                            Durable::Prefix(0)
                        } else {
                            Durable::Copy(synced)
                        };
                    }
                    i.data.clear();
                }
                ino
            }
            None => {
                let ino = self.next_ino;
                self.next_ino += 1;
                self.inodes
                    .insert(ino, Inode { data: Vec::new(), durable: Durable::Prefix(0), open: 0 });
                self.live.insert(path.to_path_buf(), ino);
                ino
            }
        };
        self.open_inode(ino);
        Ok(ino)
    }

    /// Counts a new handle on `ino`; returns the file's size.
    pub(super) fn open_inode(&mut self, ino: u64) -> u64 {
        match self.inodes.get_mut(&ino) {
            Some(i) => {
                i.open += 1;
                i.data.len() as u64
            }
            None => 0,
        }
    }

    /// Drops a handle on `ino`.
    pub(super) fn close_inode(&mut self, ino: u64) {
        if let Some(i) = self.inodes.get_mut(&ino) {
            i.open = i.open.saturating_sub(1);
        }
        self.gc();
    }

    /// Forgets inodes no namespace references and no handle holds.
    pub(super) fn gc(&mut self) {
        let referenced: BTreeSet<u64> =
            self.live.values().chain(self.durable.values()).copied().collect();
        self.inodes.retain(|ino, i| i.open > 0 || referenced.contains(ino));
    }

    pub(super) fn create_dir_all(&mut self, dir: &Path) -> Result<()> {
        for a in dir.ancestors() {
            if a.as_os_str().is_empty() {
                continue;
            }
            if self.live.contains_key(a) {
                return Err(Error::io(
                    format!("creating directory {}", dir.display()),
                    io::Error::new(io::ErrorKind::AlreadyExists, "a file is in the way"),
                ));
            }
            self.dirs.insert(a.to_path_buf());
        }
        Ok(())
    }

    /// Removes `dir` if nothing (live) is in it. Directories are durable at once, so entries a
    /// power loss would bring back under it are forgotten with it.
    pub(super) fn remove_dir(&mut self, dir: &Path) -> Result<()> {
        let fail = |kind: io::ErrorKind, why: &str| {
            Err(Error::io(
                format!("removing directory {}", dir.display()),
                io::Error::new(kind, why),
            ))
        };
        if self.live.contains_key(dir) {
            return fail(io::ErrorKind::NotADirectory, "not a directory");
        }
        if !self.dirs.contains(dir) || dir == Path::new("/") {
            return fail(io::ErrorKind::NotFound, "no such directory");
        }
        if !self.list_dir(dir).is_empty() {
            return fail(io::ErrorKind::DirectoryNotEmpty, "directory not empty");
        }
        self.dirs.remove(dir);
        self.durable.retain(|p, _| p.parent() != Some(dir));
        self.gc();
        Ok(())
    }

    /// Renames the directory `from` (with everything under it) to `to`, which must not exist.
    /// Directories are durable at once in this model, so the rename is too, and the entries
    /// under it keep their durable state under the new name.
    pub(super) fn rename_dir(&mut self, from: &Path, to: &Path) -> Result<()> {
        let fail = |kind: io::ErrorKind, why: &str| {
            Err(Error::io(
                format!("renaming {} to {}", from.display(), to.display()),
                io::Error::new(kind, why),
            ))
        };
        if self.dirs.contains(to) || self.live.contains_key(to) {
            return fail(io::ErrorKind::AlreadyExists, "the target exists");
        }
        if to.starts_with(from) {
            return fail(io::ErrorKind::InvalidInput, "a directory cannot move into itself");
        }
        let moved = |p: &Path| to.join(p.strip_prefix(from).unwrap_or(p));
        self.dirs = std::mem::take(&mut self.dirs)
            .into_iter()
            .map(|d| if d.starts_with(from) { moved(&d) } else { d })
            .collect();
        for map in [&mut self.live, &mut self.durable] {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(p, ino)| if p.starts_with(from) { (moved(&p), ino) } else { (p, ino) })
                .collect();
        }
        Ok(())
    }

    pub(super) fn list_dir(&self, dir: &Path) -> Vec<String> {
        let files = self.live.keys().filter(|p| p.parent() == Some(dir));
        let subdirs = self.dirs.iter().filter(|p| p.parent() == Some(dir));
        files
            .chain(subdirs)
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .collect()
    }

    /// Makes every entry directly under `dir` durable as it is now.
    pub(super) fn sync_dir(&mut self, dir: &Path) {
        let paths: BTreeSet<PathBuf> = self
            .live
            .keys()
            .chain(self.durable.keys())
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect();
        for p in paths {
            match self.live.get(&p) {
                Some(&ino) => self.durable.insert(p, ino),
                None => self.durable.remove(&p),
            };
        }
        self.gc();
    }

    pub(super) fn take_lock(&mut self, path: &Path) -> u64 {
        let id = self.next_lock;
        self.next_lock += 1;
        self.locks.insert(path.to_path_buf(), id);
        id
    }

    pub(super) fn release_lock(&mut self, path: &Path, id: u64) {
        if self.locks.get(path) == Some(&id) {
            self.locks.remove(path);
        }
    }

    pub(super) fn crash(&mut self, mode: CrashMode) {
        self.epoch += 1;
        self.locks.clear();
        let mut rng = match mode {
            CrashMode::KeepUnsynced => return,
            CrashMode::DropAllUnsynced => None,
            CrashMode::DropRandomUnsynced { seed } => Some(Rng(seed)),
        };
        for i in self.inodes.values_mut() {
            let durable = std::mem::replace(&mut i.durable, Durable::Prefix(0));
            match (durable, rng.as_mut()) {
                (Durable::Prefix(n), None) => i.data.truncate(n),
                (Durable::Prefix(n), Some(r)) => {
                    let extra = i.data.len().saturating_sub(n);
                    i.data.truncate(n + r.upto(extra));
                }
                (Durable::Copy(c), None) => i.data = c,
                (Durable::Copy(c), Some(r)) => {
                    if r.coin() {
                        i.data = c;
                    } else {
                        let keep = r.upto(i.data.len());
                        i.data.truncate(keep);
                    }
                }
            }
            i.durable = Durable::Prefix(i.data.len());
        }
        let pending: BTreeSet<PathBuf> = self
            .live
            .keys()
            .chain(self.durable.keys())
            .filter(|p| self.live.get(*p) != self.durable.get(*p))
            .cloned()
            .collect();
        for p in pending {
            let keep = rng.as_mut().is_some_and(|r| r.coin());
            let (from, to) = if keep {
                (&self.live, &mut self.durable)
            } else {
                (&self.durable, &mut self.live)
            };
            match from.get(&p).copied() {
                Some(ino) => to.insert(p, ino),
                None => to.remove(&p),
            };
        }
        self.gc();
    }

    fn inode_at_mut(&mut self, path: &Path, what: &str) -> Result<&mut Inode> {
        let ino = self.live.get(path).copied();
        ino.and_then(|ino| self.inodes.get_mut(&ino)).ok_or_else(|| {
            Error::io(
                format!("{what} {}", path.display()),
                io::Error::new(io::ErrorKind::NotFound, "no such file"),
            )
        })
    }

    pub(super) fn flip_bit(&mut self, path: &Path, bit: u64) -> Result<()> {
        let i = self.inode_at_mut(path, "flipping a bit of")?;
        let byte = usize::try_from(bit / 8).unwrap_or(usize::MAX);
        let mask = 1u8 << (bit % 8);
        let Some(b) = i.data.get_mut(byte) else {
            return Err(Error::InvalidArgument(format!("bit {bit} is past the end of the file")));
        };
        *b ^= mask;
        if let Durable::Copy(c) = &mut i.durable {
            if let Some(b) = c.get_mut(byte) {
                *b ^= mask;
            }
        }
        Ok(())
    }

    pub(super) fn truncate(&mut self, path: &Path, len: u64) -> Result<()> {
        let i = self.inode_at_mut(path, "truncating")?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        i.data.truncate(len);
        i.durable = match std::mem::replace(&mut i.durable, Durable::Prefix(0)) {
            Durable::Prefix(n) => Durable::Prefix(n.min(len)),
            Durable::Copy(mut c) => {
                c.truncate(len);
                Durable::Copy(c)
            }
        };
        Ok(())
    }
}
