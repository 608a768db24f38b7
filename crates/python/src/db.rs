//! `talus.DB`: an open database, as plyvel's and rocksdict's `DB` read: `get`/`put`/`delete`/
//! `delete_range`/`multi_get`, the mapping protocol, `write_batch()`, `snapshot()`, iterators
//! (`items`/`keys`/`values`, `iterator()` for a seekable one), `flush`, `compact_range`,
//! `property`, `close` and the `with` form.
//!
//! Opening (`talus.DB(path, **options)`), every read, write, flush, compaction and the close
//! release the GIL (see `lib.rs` for the whole contract). Writes take `sync` and `disable_wal`
//! (RocksDB's `WriteOptions`). The handle's state and its children live in [`DbHandle`].

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::args;
use crate::batch::PyWriteBatch;
use crate::errors;
use crate::handle::DbHandle;
use crate::iter::{Kind, PyIter};
use crate::options::{self, Sources};
use crate::raw_iter::PyRawIter;
use crate::read::{Bounds, Reader};
use crate::snapshot::PySnapshot;

/// An open Talus database.
#[pyclass(module = "talus", name = "DB", frozen)]
pub struct PyDb {
    r: Reader,
}

impl PyDb {
    /// The handle, for the objects that write through it (batches, catalogs).
    pub(crate) fn handle(&self) -> &Arc<DbHandle> {
        &self.r.h
    }
}

/// RocksDB's `WriteOptions`.
pub(crate) fn write_options(sync: bool, disable_wal: bool) -> talus::WriteOptions {
    talus::WriteOptions { sync, disable_wal }
}

#[pymethods]
impl PyDb {
    #[new]
    #[pyo3(signature = (path, *, create_if_missing = None, read_only = false, options = None,
                        options_file = None, ignore_unknown_options = false, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        create_if_missing: Option<bool>,
        read_only: bool,
        options: Option<String>,
        options_file: Option<String>,
        ignore_unknown_options: bool,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyDb> {
        let mut named = options::named(kwargs)?;
        if let Some(c) = create_if_missing {
            named.push(("create_if_missing".into(), c.to_string()));
        }
        let src = Sources {
            file: options_file,
            ignore_unknown: ignore_unknown_options,
            string: options,
            named,
        };
        let db = py.detach(|| {
            let opts = options::build(&src)?;
            let db = if read_only {
                talus::Db::open_read_only(&path, opts)
            } else {
                talus::Db::open(&path, opts)
            };
            db.map_err(errors::engine)
        })?;
        let h = Arc::new(DbHandle::new(db, path, read_only));
        Ok(PyDb { r: Reader { h, snap: None } })
    }

    /// The value of `key`, or `default`.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.r.get(py, key, default)
    }

    /// Sets `key` to `value`.
    #[pyo3(signature = (key, value, *, sync = false, disable_wal = false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        let wo = write_options(sync, disable_wal);
        py.detach(|| self.r.h.with(|db| db.put_opt(&k, &v, &wo).map_err(errors::engine))?)
    }

    /// Merges the operand `value` into `key` through the database's merge operator (opened
    /// with `merge_operator="uint64add"`, `"stringappend"`, ...; without one: `NotSupported`).
    #[pyo3(signature = (key, value, *, sync = false, disable_wal = false))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        let wo = write_options(sync, disable_wal);
        py.detach(|| self.r.h.with(|db| db.merge_opt(&k, &v, &wo).map_err(errors::engine))?)
    }

    /// Deletes `key` (absent is fine).
    #[pyo3(signature = (key, *, sync = false, disable_wal = false))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let wo = write_options(sync, disable_wal);
        py.detach(|| self.r.h.with(|db| db.delete_opt(&k, &wo).map_err(errors::engine))?)
    }

    /// Deletes every key in `[start, stop)`.
    #[pyo3(signature = (start, stop, *, sync = false, disable_wal = false))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        stop: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let a = args::bytes(start, "start")?;
        let b = args::bytes(stop, "stop")?;
        let wo = write_options(sync, disable_wal);
        py.detach(|| {
            self.r.h.with(|db| db.delete_range_opt(&a[..]..&b[..], &wo).map_err(errors::engine))?
        })
    }

    /// The values of `keys` (`None` where absent), from one consistent view.
    fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        self.r.multi_get(py, keys)
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        self.r.get_item(py, key)
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.put(py, key, value, false, false)
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, false, false)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.r.contains(py, key)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyIter> {
        self.r.iter(py, Kind::Keys, Bounds::new(None, None, None, true)?, false)
    }

    /// Writes `batch` atomically (it cannot be used again).
    #[pyo3(signature = (batch, *, sync = false, disable_wal = false))]
    fn write(
        &self,
        py: Python<'_>,
        batch: &Bound<'_, PyWriteBatch>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let b = batch.borrow_mut().take()?;
        let wo = write_options(sync, disable_wal);
        py.detach(|| self.r.h.with(|db| db.write(b, &wo).map_err(errors::engine))?)
    }

    /// A batch bound to this database; as a context manager it writes on a clean exit.
    #[pyo3(signature = (*, sync = false, disable_wal = false))]
    fn write_batch(&self, sync: bool, disable_wal: bool) -> PyWriteBatch {
        PyWriteBatch::bound(self.r.h.clone(), write_options(sync, disable_wal))
    }

    /// A snapshot of the current state (a context manager releasing it on exit).
    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        PySnapshot::take(py, &self.r.h)
    }

    /// `(key, value)` pairs in `[start, stop)` or under `prefix`, in key order (`reverse`:
    /// descending).
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, reverse = false,
                        fill_cache = true))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
    ) -> PyResult<PyIter> {
        self.r.iter(py, Kind::Items, Bounds::new(start, stop, prefix, fill_cache)?, reverse)
    }

    /// Keys, as `items`.
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, reverse = false,
                        fill_cache = true))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
    ) -> PyResult<PyIter> {
        self.r.iter(py, Kind::Keys, Bounds::new(start, stop, prefix, fill_cache)?, reverse)
    }

    /// Values, as `items`.
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, reverse = false,
                        fill_cache = true))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
    ) -> PyResult<PyIter> {
        self.r.iter(py, Kind::Values, Bounds::new(start, stop, prefix, fill_cache)?, reverse)
    }

    /// A seekable `RawIterator` over `[start, stop)` or `prefix` (not positioned).
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, fill_cache = true))]
    fn iterator(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        fill_cache: bool,
    ) -> PyResult<PyRawIter> {
        self.r.raw_iter(py, Bounds::new(start, stop, prefix, fill_cache)?)
    }

    /// Writes an openable copy of the database as it is now into the new directory `path`
    /// (RocksDB's `Checkpoint::CreateCheckpoint`: table files hard-linked, one point in time).
    fn create_checkpoint(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| self.r.h.with(|db| db.create_checkpoint(&path).map_err(errors::engine))?)
    }

    /// Flushes the memtable to a table file and waits for it.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.r.h.with(|db| db.flush().map_err(errors::engine))?)
    }

    /// Flushes, then compacts the keys in `[start, stop]` (`None`: unbounded) to the last level.
    #[pyo3(signature = (start = None, stop = None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let a = args::opt_bytes(start, "start")?;
        let b = args::opt_bytes(stop, "stop")?;
        py.detach(|| {
            self.r
                .h
                .with(|db| db.compact_range(a.as_deref(), b.as_deref()).map_err(errors::engine))?
        })
    }

    /// A named property (`talus.stats`, `rocksdb.estimate-num-keys`, ...), or `None`.
    fn property(&self, py: Python<'_>, name: &str) -> PyResult<Option<String>> {
        py.detach(|| self.r.h.with(|db| db.property(name)))
    }

    /// Closes the database: waits for calls in flight, closes every iterator, snapshot and
    /// table made from it, stops background work and releases the LOCK. Closing twice is fine.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.r.h.close())
    }

    /// True once closed.
    #[getter]
    fn closed(&self) -> bool {
        self.r.h.is_closed()
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.r.h.path.clone()
    }

    /// True if opened with `read_only=True`.
    #[getter]
    fn read_only(&self) -> bool {
        self.r.h.read_only
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.r.h.is_closed() { " closed" } else { "" };
        format!("<talus.DB {:?}{state}>", self.r.h.path.display().to_string())
    }
}
