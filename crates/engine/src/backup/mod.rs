//! [`BackupEngine`]: incremental backups of a database into a directory of their own, with
//! verify, restore and purge, after RocksDB's `BackupEngine` (format: `docs/format/backup.md`).
//!
//! Layout of a backup directory: `TALUS-BACKUP` (the marker: a directory without it is not
//! opened unless empty), `LOCK`, `shared_checksum/NNNNNN_CRC_SIZE.sst` and `.blob` (table and
//! blob files, shared by every backup that holds them: a file already there is not copied
//! again, which makes backups incremental; one is deleted when no kept backup lists it),
//! `private/N/` (backup N's MANIFEST, CURRENT and OPTIONS) and `meta/N`
//! (the list of backup N's files with sizes and CRC32C; a backup exists exactly when its meta
//! file does).
//!
//! A backup reads the database at one moment (`Db::capture_for_copy`, as a checkpoint does: a
//! prefix of the writes, the version pinned while its files are read), copies each table and
//! blob file not yet shared (to `*.tmp`, synced, renamed), writes `private/N.tmp/`, renames it to
//! `private/N`, and writes `meta/N` last (to `meta/N.tmp`, synced, renamed, directory synced).
//! A crash at any point leaves only files of the engine's own naming that no meta file
//! references, which the next [`BackupEngine::open`] removes; nothing else in the directory is
//! ever deleted. Restore copies a backup's files into a new directory (`DIR.tmp`, renamed to
//! `DIR`), checking each file's size and CRC32C on the way, so a damaged backup fails with
//! `Error::Corruption` naming the file and nothing is left in `DIR`.
//!
//! Every method takes `&self`; the engine holds the directory's LOCK for its life, so one
//! engine per directory across processes. All IO goes through the engine's [`Fs`].

mod meta;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::db::checkpoint::{tmp_dir, write_manifest_and_current};
use crate::error::{Error, Result};
use crate::filename::{options_name, table_path};
use crate::fs::{copy_file, read_all, write_file_atomic, FileLock, Fs};
use crate::kill_point::kill_point;
use crate::Db;
pub use meta::{FileEntry, Meta};

/// The marker file that makes a directory a backup directory.
const MARKER: &str = "TALUS-BACKUP";
const SHARED: &str = "shared_checksum";
const PRIVATE: &str = "private";
const META: &str = "meta";

/// What [`BackupEngine::get_backup_info`] says of one backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupInfo {
    /// The backup's id.
    pub backup_id: u32,
    /// Seconds since the Unix epoch when it was made.
    pub timestamp: u64,
    /// Bytes of all its files (shared ones counted in full).
    pub size: u64,
    /// How many files it holds.
    pub number_files: usize,
    /// The last sequence number it holds.
    pub sequence: u64,
}

/// Backups of databases in one directory.
pub struct BackupEngine {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    _lock: Box<dyn FileLock>,
}

impl BackupEngine {
    /// Opens (creating if missing or empty) the backup directory `dir` on the real file system.
    pub fn open(dir: impl AsRef<Path>) -> Result<BackupEngine> {
        Self::open_with_fs(dir, Arc::new(crate::fs::StdFs))
    }

    /// [`BackupEngine::open`] through `fs`. A directory that holds anything but is not a
    /// backup directory (no `TALUS-BACKUP`) is refused untouched. Removes what an interrupted
    /// backup left (files of the engine's own naming no meta file references).
    pub fn open_with_fs(dir: impl AsRef<Path>, fs: Arc<dyn Fs>) -> Result<BackupEngine> {
        let dir = dir.as_ref().to_path_buf();
        let marker = dir.join(MARKER);
        if !fs.exists(&marker) {
            if fs.exists(&dir) && !fs.list_dir(&dir)?.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{} holds files but is not a backup directory (no {MARKER})",
                    dir.display()
                )));
            }
            fs.create_dir_all(&dir)?;
        }
        let lock = fs.lock(&dir.join("LOCK"))?;
        for sub in [SHARED, PRIVATE, META] {
            fs.create_dir_all(&dir.join(sub))?;
        }
        if !fs.exists(&marker) {
            write_file_atomic(&*fs, &dir, MARKER, b"talus backup directory, format 1\n")?;
        }
        let engine = BackupEngine { fs, dir, _lock: lock };
        engine.collect_garbage()?;
        Ok(engine)
    }

    /// Backs `db` up; returns the new backup's id. Tables and blob files already in the
    /// directory (by number, size and CRC32C) are not copied again.
    pub fn create_new_backup(&self, db: &Db) -> Result<u32> {
        let fs = &*self.fs;
        let id = self.ids()?.last().map_or(1, |l| l + 1);
        let cap = db.capture_for_copy()?;
        let mut files = Vec::new();
        let tables =
            cap.versions().flat_map(|v| v.files.iter().flatten()).map(|f| (f.number, "sst"));
        let blobs = cap.versions().flat_map(|v| v.blob_files.keys()).map(|&n| (n, "blob"));
        for (number, ext) in tables.chain(blobs) {
            let from = match ext {
                "sst" => table_path(&cap.db_path, number),
                _ => crate::filename::blob_path(&cap.db_path, number),
            };
            let (crc, size) = crc_of(fs, &from)?;
            let name = format!("{SHARED}/{number:06}_{crc:08x}_{size}.{ext}");
            let to = self.dir.join(&name);
            if !fs.exists(&to) {
                let tmp = self.dir.join(format!("{name}.tmp"));
                copy_file(fs, &from, &tmp)?;
                fs.rename(&tmp, &to)?;
                kill_point!("backup.shared_copied");
            }
            files.push(FileEntry { path: name, size, crc });
        }
        fs.sync_dir(&self.dir.join(SHARED))?;
        let private = self.dir.join(PRIVATE).join(id.to_string());
        let tmp = self.dir.join(PRIVATE).join(format!("{id}.tmp"));
        fs.create_dir_all(&tmp)?;
        let mut made = Vec::new();
        if let Some(n) = cap.options_number {
            let to = tmp.join(options_name(n));
            made.push(to.clone());
            copy_file(fs, &cap.db_path.join(options_name(n)), &to)?;
        }
        write_manifest_and_current(fs, &tmp, &cap, &mut made)?;
        fs.sync_dir(&tmp)?;
        for p in &made {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let (crc, size) = crc_of(fs, p)?;
            files.push(FileEntry { path: format!("{PRIVATE}/{id}/{name}"), size, crc });
        }
        fs.rename(&tmp, &private)?;
        fs.sync_dir(&self.dir.join(PRIVATE))?;
        kill_point!("backup.private_written");
        let meta = Meta {
            id,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            sequence: cap.edit.last_sequence.unwrap_or(0),
            files,
        };
        write_file_atomic(fs, &self.dir.join(META), &id.to_string(), &meta.encode())?;
        kill_point!("backup.meta_written");
        Ok(id)
    }

    /// Every backup, oldest first.
    pub fn get_backup_info(&self) -> Result<Vec<BackupInfo>> {
        self.ids()?
            .into_iter()
            .map(|id| {
                let m = self.meta(id)?;
                Ok(BackupInfo {
                    backup_id: id,
                    timestamp: m.timestamp,
                    size: m.files.iter().map(|f| f.size).sum(),
                    number_files: m.files.len(),
                    sequence: m.sequence,
                })
            })
            .collect()
    }

    /// Reads every file of backup `id` and checks its size and CRC32C; `Error::Corruption`
    /// naming the first bad file, `NotFound` for a missing backup or file.
    pub fn verify_backup(&self, id: u32) -> Result<()> {
        for f in &self.meta(id)?.files {
            self.check_file(f)?;
        }
        Ok(())
    }

    /// Restores backup `id` into the new directory `db_dir` (which must not exist), checking
    /// every file as it is copied; on an error nothing is left in `db_dir`.
    pub fn restore_db_from_backup(&self, id: u32, db_dir: impl AsRef<Path>) -> Result<()> {
        let fs = &*self.fs;
        let db_dir = db_dir.as_ref();
        let meta = self.meta(id)?;
        let tmp = tmp_dir(db_dir)?;
        for p in [db_dir, tmp.as_path()] {
            if fs.exists(p) {
                return Err(Error::InvalidArgument(format!(
                    "{} exists: a backup is restored into a new directory",
                    p.display()
                )));
            }
        }
        fs.create_dir_all(&tmp)?;
        let mut made = Vec::new();
        let r = (|| {
            for f in &meta.files {
                self.check_file(f)?;
                let to = tmp.join(restored_name(f)?);
                made.push(to.clone());
                copy_file(fs, &self.dir.join(&f.path), &to)?;
            }
            fs.sync_dir(&tmp)?;
            fs.rename(&tmp, db_dir)
        })();
        if let Err(e) = r {
            for p in made.iter().rev() {
                let _ = fs.remove_file(p);
            }
            let _ = fs.remove_dir(&tmp);
            return Err(e);
        }
        match db_dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => fs.sync_dir(parent),
            None => Ok(()),
        }
    }

    /// [`BackupEngine::restore_db_from_backup`] of the newest backup.
    pub fn restore_db_from_latest_backup(&self, db_dir: impl AsRef<Path>) -> Result<()> {
        let Some(&id) = self.ids()?.last() else {
            return Err(Error::NotFound(format!("no backup in {}", self.dir.display())));
        };
        self.restore_db_from_backup(id, db_dir)
    }

    /// Deletes backup `id` and the shared files no other backup holds.
    pub fn delete_backup(&self, id: u32) -> Result<()> {
        self.meta(id)?;
        self.fs.remove_file(&self.dir.join(META).join(id.to_string()))?;
        self.fs.sync_dir(&self.dir.join(META))?;
        self.collect_garbage()
    }

    /// Deletes all but the newest `num_backups_to_keep` backups.
    pub fn purge_old_backups(&self, num_backups_to_keep: usize) -> Result<()> {
        let ids = self.ids()?;
        for &id in &ids[..ids.len().saturating_sub(num_backups_to_keep)] {
            self.delete_backup(id)?;
        }
        Ok(())
    }

    /// The ids that have a meta file, ascending.
    fn ids(&self) -> Result<Vec<u32>> {
        let mut ids: Vec<u32> =
            self.fs.list_dir(&self.dir.join(META))?.iter().filter_map(|n| n.parse().ok()).collect();
        ids.sort_unstable();
        Ok(ids)
    }

    fn meta(&self, id: u32) -> Result<Meta> {
        let name = format!("{META}/{id}");
        let path = self.dir.join(&name);
        if !self.fs.exists(&path) {
            return Err(Error::NotFound(format!("backup {id} in {}", self.dir.display())));
        }
        let m = Meta::decode(&read_all(&*self.fs, &path)?, &path.display().to_string())?;
        if m.id != id {
            return Err(Error::corruption(path.display(), 0, format!("holds backup {}", m.id)));
        }
        Ok(m)
    }

    /// Size and CRC32C of the backup file `f` as recorded.
    fn check_file(&self, f: &FileEntry) -> Result<()> {
        let path = self.dir.join(&f.path);
        let (crc, size) = crc_of(&*self.fs, &path)?;
        if size != f.size || crc != f.crc {
            return Err(Error::corruption(
                path.display(),
                0,
                format!(
                    "{size} bytes with CRC32C {crc:08x}, the backup says {} and {:08x}",
                    f.size, f.crc
                ),
            ));
        }
        Ok(())
    }

    /// Removes what no meta file references: `*.tmp` files and directories of the engine's
    /// naming, private directories of missing backups, shared tables no backup holds.
    fn collect_garbage(&self) -> Result<()> {
        let fs = &*self.fs;
        let mut live = BTreeSet::new();
        let mut private = BTreeSet::new();
        for id in self.ids()? {
            private.insert(id.to_string());
            live.extend(self.meta(id)?.files.into_iter().map(|f| f.path));
        }
        let shared = self.dir.join(SHARED);
        for name in fs.list_dir(&shared)? {
            let ours =
                is_shared_name(&name) || name.strip_suffix(".tmp").is_some_and(is_shared_name);
            if ours && !live.contains(&format!("{SHARED}/{name}")) {
                fs.remove_file(&shared.join(&name))?;
            }
        }
        let meta_dir = self.dir.join(META);
        for name in fs.list_dir(&meta_dir)? {
            if name.strip_suffix(".dbtmp").or(name.strip_suffix(".tmp")).is_some_and(is_number) {
                fs.remove_file(&meta_dir.join(&name))?;
            }
        }
        let private_dir = self.dir.join(PRIVATE);
        for name in fs.list_dir(&private_dir)? {
            let id = name.strip_suffix(".tmp").unwrap_or(&name);
            if is_number(id) && !(private.contains(id) && id == name) {
                let d = private_dir.join(&name);
                for f in fs.list_dir(&d)? {
                    fs.remove_file(&d.join(f))?;
                }
                fs.remove_dir(&d)?;
            }
        }
        fs.sync_dir(&shared)?;
        fs.sync_dir(&private_dir)
    }
}

/// The name a backup file takes in a restored database: `NNNNNN.sst` for a shared table, its
/// own name for a private file.
fn restored_name(f: &FileEntry) -> Result<String> {
    let bad = || Error::corruption(&f.path, 0, "not a backup file name");
    if let Some(name) = f.path.strip_prefix(&format!("{SHARED}/")) {
        let number = name.split('_').next().and_then(|n| n.parse::<u64>().ok()).ok_or_else(bad)?;
        return match name.rsplit('.').next() {
            Some("sst") => Ok(crate::filename::table_name(number)),
            Some("blob") => Ok(crate::filename::blob_name(number)),
            _ => Err(bad()),
        };
    }
    f.path.rsplit('/').next().filter(|n| !n.is_empty()).map(str::to_string).ok_or_else(bad)
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `NNNNNN_CRC_SIZE.sst` or `NNNNNN_CRC_SIZE.blob`.
fn is_shared_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".sst").or_else(|| name.strip_suffix(".blob")) else {
        return false;
    };
    let parts: Vec<&str> = stem.split('_').collect();
    parts.len() == 3
        && is_number(parts[0])
        && parts[1].len() == 8
        && parts[1].bytes().all(|b| b.is_ascii_hexdigit())
        && is_number(parts[2])
}

/// CRC32C and size of the file at `path`, read sequentially.
fn crc_of(fs: &dyn Fs, path: &Path) -> Result<(u32, u64)> {
    let mut f = fs.open_sequential(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut crc, mut size) = (0u32, 0u64);
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((crc, size));
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        size += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_shared_name("000012_0badf00d_4096.sst"));
        assert!(!is_shared_name("000012_0badf00d_4096.sst.tmp"));
        assert!(!is_shared_name("notes.sst"));
        assert!(!is_shared_name("000012_xyz_4096.sst"));
        let f = |p: &str| FileEntry { path: p.into(), size: 0, crc: 0 };
        assert_eq!(
            restored_name(&f("shared_checksum/000012_0badf00d_1.sst")).unwrap(),
            "000012.sst"
        );
        assert_eq!(restored_name(&f("private/3/MANIFEST-000009")).unwrap(), "MANIFEST-000009");
        assert!(restored_name(&f("shared_checksum/x_y_z.sst")).is_err());
        assert!(is_shared_name("000007_0badf00d_4096.blob"));
        assert!(!is_shared_name("000007_0badf00d_4096.blob.tmp"));
        assert_eq!(
            restored_name(&f("shared_checksum/000007_0badf00d_1.blob")).unwrap(),
            "000007.blob"
        );
        assert!(restored_name(&f("shared_checksum/000007_0badf00d_1.log")).is_err());
        // Backups of format 1 before shared blob files kept them private.
        assert_eq!(restored_name(&f("private/2/000007.blob")).unwrap(), "000007.blob");
    }
}
