//! `talus.BackupEngine`: RocksDB's `BackupEngine` (incremental backups of a database into one
//! directory, shared table files copied once, every file checksummed) from Python, as
//! rocksdict and python-rocksdb name it: `create_new_backup(db)`, `get_backup_info()`,
//! `verify_backup(id)`, `restore_db_from_backup(id, path)`, `restore_db_from_latest_backup(path)`,
//! `delete_backup(id)`, `purge_old_backups(n)`, `close()` and the `with` form.
//!
//! The engine object lives in a [`Slot`] (taken away by `close`, after the calls in flight);
//! every call releases the GIL. A backup engine holds its directory's LOCK until closed or
//! collected. It is not a child of any database: `create_new_backup` borrows the database's
//! handle for the call only.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::db::PyDb;
use crate::errors;
use crate::slot::Slot;

/// Backups of databases in one directory (RocksDB's `BackupEngine`).
#[pyclass(module = "talus", name = "BackupEngine", frozen)]
pub struct PyBackupEngine {
    engine: Slot<talus::BackupEngine>,
}

impl PyBackupEngine {
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&talus::BackupEngine) -> talus::Result<R> + Send,
    ) -> PyResult<R> {
        py.detach(|| self.engine.read(|e| f(e).map_err(errors::engine))?)
    }
}

#[pymethods]
impl PyBackupEngine {
    /// Opens (creating if missing or empty) the backup directory `path`. A directory that
    /// holds other files is refused (`talus.InvalidArgument`); one another engine has open is
    /// `talus.Locked`.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let engine = py.detach(|| talus::BackupEngine::open(&path)).map_err(errors::engine)?;
        Ok(PyBackupEngine { engine: Slot::new(engine, "the backup engine") })
    }

    /// Backs `db` up; returns the new backup's id. Table files already in the directory are
    /// not copied again.
    fn create_new_backup(&self, py: Python<'_>, db: &Bound<'_, PyDb>) -> PyResult<u32> {
        let h = db.get().handle().clone();
        py.detach(|| {
            let r = h.with(|db| self.engine.read(|e| e.create_new_backup(db)))?;
            r?.map_err(errors::engine)
        })
    }

    /// The backups, oldest first: dicts with `backup_id`, `timestamp` (seconds since the
    /// epoch), `size` (bytes), `num_files` and `sequence`.
    fn get_backup_info<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let infos = self.call(py, |e| e.get_backup_info())?;
        infos
            .into_iter()
            .map(|i| {
                let d = PyDict::new(py);
                d.set_item("backup_id", i.backup_id)?;
                d.set_item("timestamp", i.timestamp)?;
                d.set_item("size", i.size)?;
                d.set_item("num_files", i.number_files)?;
                d.set_item("sequence", i.sequence)?;
                Ok(d)
            })
            .collect()
    }

    /// Checks every file of backup `backup_id` against its recorded size and checksum
    /// (`talus.Corruption` naming the file if one differs, `talus.NotFound` for no such id).
    fn verify_backup(&self, py: Python<'_>, backup_id: u32) -> PyResult<()> {
        self.call(py, |e| e.verify_backup(backup_id))
    }

    /// Restores backup `backup_id` into the new (or empty) directory `db_dir`.
    fn restore_db_from_backup(
        &self,
        py: Python<'_>,
        backup_id: u32,
        db_dir: PathBuf,
    ) -> PyResult<()> {
        self.call(py, |e| e.restore_db_from_backup(backup_id, &db_dir))
    }

    /// Restores the newest backup into the new (or empty) directory `db_dir`.
    fn restore_db_from_latest_backup(&self, py: Python<'_>, db_dir: PathBuf) -> PyResult<()> {
        self.call(py, |e| e.restore_db_from_latest_backup(&db_dir))
    }

    /// Deletes backup `backup_id` (its table files stay while another backup uses them).
    fn delete_backup(&self, py: Python<'_>, backup_id: u32) -> PyResult<()> {
        self.call(py, |e| e.delete_backup(backup_id))
    }

    /// Deletes all but the newest `num_backups_to_keep` backups.
    fn purge_old_backups(&self, py: Python<'_>, num_backups_to_keep: usize) -> PyResult<()> {
        self.call(py, |e| e.purge_old_backups(num_backups_to_keep))
    }

    /// Releases the directory's LOCK; later calls raise `talus.Closed`. Closing twice is fine.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.engine.close_with(drop));
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }
}
