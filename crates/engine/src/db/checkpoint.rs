//! [`Db::create_checkpoint`]: an openable copy of the database as it was at one moment, made
//! of hard links to its table files (copies where links are not possible) and a new MANIFEST,
//! as RocksDB's `Checkpoint::CreateCheckpoint` makes one.
//!
//! The moment: the memtables are flushed, then, with the write queue held (no write in flight:
//! `write_group.rs`'s `with_write_lock`) and every memtable empty, the current version and the
//! counters are read. Every write acknowledged before that moment is in the version's tables,
//! none after it is, so the checkpoint holds exactly a prefix of the writes (ingestions too:
//! they commit under the write queue). The flush runs in two steps: the active memtable is
//! switched and flushed with writers running, then whatever they wrote meanwhile is switched
//! and flushed with the queue held, so writers wait for one small flush (and a busy writer
//! cannot keep the checkpoint waiting for ever, as it could a plain `Db::flush`). The captured `Version` pins its tables (`VersionSet::live_files` counts every
//! version alive), so compaction cannot delete them while they are linked.
//!
//! The files: every table of the version linked (`Fs::hard_link`; copied when the file system
//! refuses, as across devices), the newest `OPTIONS-NNNNNN` copied, a new MANIFEST holding one
//! snapshot edit (numbered with the next free file number; the checkpoint's counters continue
//! from it), and `CURRENT`, all synced. No WAL is copied: the memtables were empty at the
//! moment. Everything is written into `DIR.tmp`, synced, and renamed to `DIR` as the last step
//! (RocksDB does the same), so a crash leaves either no `DIR` or a complete one; a `DIR.tmp`
//! left by a crash is refused, never deleted, since nothing proves it is ours. A failure
//! removes the files this call created in `DIR.tmp` and the directory, nothing else.
//!
//! Called from any thread; takes the write queue, then `versions`, then `state` (the order the
//! flush takes them in), and no lock while linking or writing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::core::DbInner;
use super::Db;
use crate::error::{Error, Result};
use crate::filename::{blob_path, options_name, FileType};
use crate::filename::{current_path, manifest_name, manifest_path, parse_file_name, table_path};
use crate::fs::{copy_file, Fs};
use crate::kill_point::kill_point;
use crate::memtable::MemTable;
use crate::version::{Version, VersionEdit};
use crate::wal::LogWriter;

/// What a copy of the database holds (a checkpoint's, a backup's: `crate::backup`): the
/// version of each column family, whose `Arc`s pin their tables while held, and the edits that
/// recreate them.
pub(crate) struct Capture {
    /// The database's directory.
    pub db_path: PathBuf,
    /// The `default` family's version at the moment.
    pub version: Arc<Version>,
    /// The other live families' versions at the moment.
    pub others: Vec<Arc<Version>>,
    /// A snapshot edit of it, with counters that continue after the moment.
    pub edit: VersionEdit,
    /// The snapshot edits of the other families (their ids, names, files), after `edit` in
    /// the copy's MANIFEST.
    pub family_edits: Vec<VersionEdit>,
    /// The number the copy's MANIFEST takes.
    pub manifest_number: u64,
    /// The newest `OPTIONS-NNNNNN`'s number, if any.
    pub options_number: Option<u64>,
}

impl Db {
    /// Writes an openable copy of the database as it is now into the new directory `dir`
    /// (RocksDB's `Checkpoint::CreateCheckpoint`): table files are hard-linked where the file
    /// system allows (so a checkpoint of a large database takes little time and space), the
    /// rest copied. The copy holds every write acknowledged before the call and a prefix of
    /// those made during it; it is a database of its own (open it with [`Db::open`]).
    ///
    /// `dir` must not exist (nor `dir` with `.tmp` appended, which a checkpoint interrupted by
    /// a crash leaves behind: remove it by hand); its parent must. On an error nothing is left
    /// in `dir`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v1").unwrap();
    /// let copy = dir.path().join("checkpoint");
    /// db.create_checkpoint(&copy).unwrap();
    /// db.put(b"k", b"v2").unwrap();
    /// let old = talus::Db::open(&copy, talus::Options::default()).unwrap();
    /// assert_eq!(old.get(b"k").unwrap().as_deref(), Some(&b"v1"[..]));
    /// ```
    pub fn create_checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        let dir = dir.as_ref();
        let fs = &*inner.fs;
        let tmp = tmp_dir(dir)?;
        if fs.exists(dir) {
            return Err(Error::InvalidArgument(format!(
                "checkpoint directory {} exists: a checkpoint goes into a new directory",
                dir.display()
            )));
        }
        if fs.exists(&tmp) {
            return Err(Error::InvalidArgument(format!(
                "{} exists (left by a checkpoint a crash interrupted, or another program's): \
                 remove it by hand",
                tmp.display()
            )));
        }
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !fs.exists(parent) {
            return Err(Error::InvalidArgument(format!(
                "the parent of checkpoint directory {} does not exist",
                dir.display()
            )));
        }
        let cap = self.capture_for_copy()?;
        fs.create_dir_all(&tmp)?;
        let mut made = Vec::new();
        let written = write_files(inner, &tmp, &cap, &mut made)
            .and_then(|()| fs.sync_dir(&tmp))
            .and_then(|()| {
                kill_point!("checkpoint.files_written");
                fs.rename(&tmp, dir)
            });
        if let Err(e) = written {
            // Only what this call created: the files in `made`, then the (then empty) directory.
            for p in made.iter().rev() {
                let _ = fs.remove_file(p);
            }
            let _ = fs.remove_dir(&tmp);
            return Err(e);
        }
        kill_point!("checkpoint.renamed");
        fs.sync_dir(parent)?;
        inner.info_log.log(&format!(
            "checkpoint {}: {} table files, last sequence {}",
            dir.display(),
            cap.versions().map(|v| v.files.iter().map(Vec::len).sum::<usize>()).sum::<usize>(),
            cap.edit.last_sequence.unwrap_or(0)
        ));
        Ok(())
    }
}

impl Capture {
    /// Every family's version, `default` first.
    pub fn versions(&self) -> impl Iterator<Item = &Arc<Version>> {
        std::iter::once(&self.version).chain(&self.others)
    }
}

impl Db {
    /// The state a copy holds, read at one moment (see the module doc); for checkpoints and
    /// backups.
    pub(crate) fn capture_for_copy(&self) -> Result<Capture> {
        let inner = self.inner();
        inner.check_writable()?;
        let mut cap = capture(inner)?;
        cap.options_number = newest_options_file(&*inner.fs, &inner.path)?;
        Ok(cap)
    }
}

/// `dir` with `.tmp` appended to its last component.
pub(crate) fn tmp_dir(dir: &Path) -> Result<PathBuf> {
    let Some(name) = dir.file_name() else {
        return Err(Error::InvalidArgument(format!(
            "checkpoint directory {} has no name",
            dir.display()
        )));
    };
    let mut tmp = name.to_os_string();
    tmp.push(".tmp");
    Ok(dir.with_file_name(tmp))
}

/// Flushes, then reads the version and counters with the write queue held and the memtables
/// empty (see the module doc).
fn capture(inner: &DbInner) -> Result<Capture> {
    // Most of the memtable out first, with writers running: wait for that memtable only (new
    // ones a busy writer fills meanwhile are the second step's).
    if let Some(mem) = inner.with_write_lock(|| switch_if_not_empty(inner))? {
        wait_flushed(inner, &mem)?;
    }
    inner.with_write_lock(|| {
        switch_if_not_empty(inner)?;
        // No write can start now, so this ends: the memtables left are flushed.
        inner.wait_for_flushes()?;
        read_if_empty(inner)?.ok_or_else(|| {
            Error::Busy("checkpoint: the memtables were not empty after a flush".into())
        })
    })
}

/// Switches the active memtables if any holds anything (call with the write queue held);
/// returns the newest memtable switched out (the families' are flushed oldest WAL first, so
/// once it is flushed, every memtable of the switch is).
fn switch_if_not_empty(inner: &DbInner) -> Result<Option<Arc<MemTable>>> {
    {
        let st = inner.state.lock();
        DbInner::check_bg_error(&st)?;
        if st.cfs.values().all(|c| c.mem_is_empty()) {
            return Ok(None);
        }
    }
    inner.switch_memtable()?;
    let st = inner.state.lock();
    Ok(st.cfs.values().rev().find_map(|c| c.imms.back().map(|imm| imm.mem.clone())))
}

/// Waits until `mem` has been flushed (it left the immutable memtables).
fn wait_flushed(inner: &DbInner, mem: &Arc<MemTable>) -> Result<()> {
    let mut st = inner.state.lock();
    while st.cfs.values().any(|c| c.imms.iter().any(|imm| Arc::ptr_eq(&imm.mem, mem))) {
        DbInner::check_bg_error(&st)?;
        inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
    }
    DbInner::check_bg_error(&st)
}

/// The capture, if no memtable holds anything (call with the write queue held).
fn read_if_empty(inner: &DbInner) -> Result<Option<Capture>> {
    let vs = inner.versions.lock();
    let st = inner.state.lock();
    DbInner::check_bg_error(&st)?;
    if !st.cfs.values().all(|c| c.all_flushed()) {
        return Ok(None);
    }
    drop(st);
    let mut edits = vs.snapshot_edits();
    let mut edit = edits.remove(0);
    let visible = inner.last_sequence.load(std::sync::atomic::Ordering::Acquire);
    edit.last_sequence = Some(vs.last_sequence().max(visible));
    let manifest_number = vs.next_file_number();
    edit.next_file_number = Some(manifest_number + 1);
    let others = vs
        .families()
        .range(crate::column_family::DEFAULT_COLUMN_FAMILY_ID + 1..)
        .map(|(_, f)| f.current.clone())
        .collect();
    Ok(Some(Capture {
        db_path: inner.path.clone(),
        version: vs.current(),
        others,
        edit,
        family_edits: edits,
        manifest_number,
        options_number: None,
    }))
}

/// Links the tables, copies the OPTIONS file, writes the MANIFEST and CURRENT into `tmp`, each
/// synced; every file created is pushed to `made`.
fn write_files(inner: &DbInner, tmp: &Path, cap: &Capture, made: &mut Vec<PathBuf>) -> Result<()> {
    let fs = &*inner.fs;
    for f in cap.versions().flat_map(|v| v.files.iter().flatten()) {
        let (from, to) = (table_path(&inner.path, f.number), table_path(tmp, f.number));
        made.push(to.clone());
        if fs.hard_link(&from, &to).is_err() {
            copy_file(fs, &from, &to)?;
        }
    }
    for &n in cap.versions().flat_map(|v| v.blob_files.keys()) {
        let (from, to) = (blob_path(&inner.path, n), blob_path(tmp, n));
        made.push(to.clone());
        if fs.hard_link(&from, &to).is_err() {
            copy_file(fs, &from, &to)?;
        }
    }
    if let Some(n) = cap.options_number {
        let to = tmp.join(options_name(n));
        made.push(to.clone());
        copy_file(fs, &inner.path.join(options_name(n)), &to)?;
    }
    write_manifest_and_current(fs, tmp, cap, made)
}

/// Writes the capture's MANIFEST and a `CURRENT` naming it into `dir`, both synced; pushes
/// each file to `made` before creating it.
pub(crate) fn write_manifest_and_current(
    fs: &dyn Fs,
    dir: &Path,
    cap: &Capture,
    made: &mut Vec<PathBuf>,
) -> Result<()> {
    let manifest = manifest_path(dir, cap.manifest_number);
    made.push(manifest.clone());
    let mut w = LogWriter::new(fs.create(&manifest)?);
    for edit in std::iter::once(&cap.edit).chain(&cap.family_edits) {
        let mut record = Vec::new();
        edit.encode(&mut record);
        w.add_record(&record)?;
    }
    w.sync()?;
    drop(w);
    let current = current_path(dir);
    made.push(current.clone());
    let mut f = fs.create(&current)?;
    f.append(format!("{}\n", manifest_name(cap.manifest_number)).as_bytes())?;
    f.sync()
}

/// The number of the newest `OPTIONS-NNNNNN` in `dir`, if any.
fn newest_options_file(fs: &dyn Fs, dir: &Path) -> Result<Option<u64>> {
    Ok(fs
        .list_dir(dir)?
        .iter()
        .filter_map(|name| match parse_file_name(name) {
            Some(FileType::Options(n)) => Some(n),
            _ => None,
        })
        .max())
}

#[cfg(test)]
mod tests {
    use super::tmp_dir;
    use std::path::Path;

    #[test]
    fn tmp_dir_appends_to_the_last_component() {
        assert_eq!(tmp_dir(Path::new("/a/b")).unwrap(), Path::new("/a/b.tmp"));
        assert_eq!(tmp_dir(Path::new("b")).unwrap(), Path::new("b.tmp"));
        assert!(tmp_dir(Path::new("/")).is_err());
    }
}
