//! The copy ops of `talus stress` (RocksDB's db_stress `--checkpoint_one_in` and
//! `--backup_one_in`): a checkpoint, or a backup that is verified and restored, made while the
//! other threads write, then opened read-only and checked key by key against the expected state
//! read before and after it (`stress::copies::check_copy`: a prefix of the writes), and
//! removed. Kill points inside `Db::create_checkpoint` and `BackupEngine::create_new_backup`
//! (`checkpoint.*`, `backup.*`) may kill the worker midway; the next run judges what is left
//! (`stress::copies::check_leftovers`).
//!
//! Names: `ckpt-SEED-THREAD-SERIAL` and `restore-SEED-THREAD-SERIAL` in the scratch directory;
//! the backup directory is shared by the threads, one `BackupEngine` per process ([`Copies`]),
//! used under its mutex, keeping the two newest backups.

use std::path::PathBuf;
use std::sync::Mutex;

use talus::BackupEngine;

use super::{db_err, Worker};
use crate::stress::copies::{check_copy, open_copy, read_slots, remove, BACKUP_DIR};
use crate::stress::Failure;

/// What the copy ops of one worker process share.
pub struct Copies {
    /// The scratch directory (`stress::copies::scratch_dir`).
    pub dir: PathBuf,
    /// The backup engine, opened at the first backup.
    backups: Mutex<Option<BackupEngine>>,
}

impl Copies {
    /// Copies kept in `dir` (created at the first copy).
    pub fn new(dir: PathBuf) -> Copies {
        Copies { dir, backups: Mutex::new(None) }
    }

    fn make_dir(&self) -> Result<(), Failure> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Failure::Db(format!("creating {}: {e}", self.dir.display())))
    }
}

impl Worker<'_> {
    /// One checkpoint, checked and removed (see the module doc).
    pub(super) fn checkpoint(&mut self, serial: u64) -> Result<(), Failure> {
        self.copies.make_dir()?;
        let name = format!("ckpt-{}-{}-{serial}", self.cfg.seed, self.thread);
        let dir = self.copies.dir.join(&name);
        let lower = read_slots(self.exp);
        self.db.create_checkpoint(&dir).map_err(|e| db_err("create_checkpoint", e))?;
        let upper = read_slots(self.exp);
        let (copy, fams) = open_copy(&dir, self.cfg)?;
        let what = format!("checkpoint {name}");
        check_copy(&copy, &fams, Some(&lower), &upper, self.exp.value_size_max(), &what)?;
        drop(copy);
        remove(&dir).map_err(Failure::Db)
    }

    /// One backup, verified, restored, checked; the restored copy removed and all but the two
    /// newest backups purged (see the module doc).
    pub(super) fn backup(&mut self, serial: u64) -> Result<(), Failure> {
        let mut guard = self.copies.backups.lock().unwrap_or_else(|p| p.into_inner());
        let engine: &BackupEngine = match &mut *guard {
            Some(e) => e,
            empty => {
                self.copies.make_dir()?;
                empty.insert(
                    BackupEngine::open(self.copies.dir.join(BACKUP_DIR))
                        .map_err(|e| db_err("BackupEngine::open", e))?,
                )
            }
        };
        let lower = read_slots(self.exp);
        let id = engine.create_new_backup(self.db).map_err(|e| db_err("create_new_backup", e))?;
        let upper = read_slots(self.exp);
        engine.verify_backup(id).map_err(|e| db_err("verify_backup", e))?;
        let to =
            self.copies.dir.join(format!("restore-{}-{}-{serial}", self.cfg.seed, self.thread));
        engine.restore_db_from_backup(id, &to).map_err(|e| db_err("restore_db_from_backup", e))?;
        let (copy, fams) = open_copy(&to, self.cfg)?;
        let what = format!("backup {id} restored");
        check_copy(&copy, &fams, Some(&lower), &upper, self.exp.value_size_max(), &what)?;
        drop(copy);
        remove(&to).map_err(Failure::Db)?;
        engine.purge_old_backups(2).map_err(|e| db_err("purge_old_backups", e))
    }
}
