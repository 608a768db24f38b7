//! `talus.DB`: an open database, as plyvel's and rocksdict's `DB` read: `get`/`put`/`delete`/
//! `delete_range`/`multi_get`, the mapping protocol, `write_batch()`, `snapshot()`, iterators
//! (`items`/`keys`/`values`, `iterator()` for a seekable one), `flush`, `compact_range`,
//! `property`, `close` and the `with` form; column families (`create_column_family`,
//! `drop_column_family`, `get_column_family`, `column_families`, `list_column_families`, the
//! `column_families=` argument of the open) and the `cf=` keyword of every read, write,
//! iterator, flush, compaction and property (`family.rs`).
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
use crate::family::{self, PyColumnFamily};
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
                        options_file = None, ignore_unknown_options = false,
                        column_families = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        create_if_missing: Option<bool>,
        read_only: bool,
        options: Option<String>,
        options_file: Option<String>,
        ignore_unknown_options: bool,
        column_families: Option<Vec<String>>,
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
            family::open(&path, opts, read_only, column_families)
        })?;
        let h = Arc::new(DbHandle::new(db, path, read_only));
        Ok(PyDb { r: Reader { h, snap: None } })
    }

    /// The value of `key` (in family `cf`), or `default`.
    #[pyo3(signature = (key, default = None, *, cf = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        cf: Option<&Bound<'py, PyColumnFamily>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.r.get(py, key, default, &family::arg(cf))
    }

    /// Sets `key` to `value` (in family `cf`).
    #[pyo3(signature = (key, value, *, sync = false, disable_wal = false, cf = None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        let wo = write_options(sync, disable_wal);
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.put_cf_opt(c, &k, &v, &wo),
                    None => db.put_opt(&k, &v, &wo),
                })
            })?
        })
    }

    /// Merges the operand `value` into `key` through the database's merge operator (opened
    /// with `merge_operator="uint64add"`, `"stringappend"`, ...; without one: `NotSupported`).
    #[pyo3(signature = (key, value, *, sync = false, disable_wal = false, cf = None))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        let wo = write_options(sync, disable_wal);
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.merge_cf_opt(c, &k, &v, &wo),
                    None => db.merge_opt(&k, &v, &wo),
                })
            })?
        })
    }

    /// Deletes `key` (absent is fine; in family `cf`).
    #[pyo3(signature = (key, *, sync = false, disable_wal = false, cf = None))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let wo = write_options(sync, disable_wal);
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.delete_cf_opt(c, &k, &wo),
                    None => db.delete_opt(&k, &wo),
                })
            })?
        })
    }

    /// Deletes every key in `[start, stop)` (of family `cf`).
    #[pyo3(signature = (start, stop, *, sync = false, disable_wal = false, cf = None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        stop: &Bound<'_, PyAny>,
        sync: bool,
        disable_wal: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let a = args::bytes(start, "start")?;
        let b = args::bytes(stop, "stop")?;
        let wo = write_options(sync, disable_wal);
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.delete_range_cf_opt(c, &a, &b, &wo),
                    None => db.delete_range_opt(&a[..]..&b[..], &wo),
                })
            })?
        })
    }

    /// The values of `keys` (`None` where absent; in family `cf`), from one consistent view.
    #[pyo3(signature = (keys, *, cf = None))]
    fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        cf: Option<&Bound<'py, PyColumnFamily>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        self.r.multi_get(py, keys, &family::arg(cf))
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
        self.put(py, key, value, false, false, None)
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, false, false, None)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.r.contains(py, key)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyIter> {
        self.r.iter(py, Kind::Keys, Bounds::new(None, None, None, true)?, false, &None)
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
                        fill_cache = true, cf = None))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<PyIter> {
        let b = Bounds::new(start, stop, prefix, fill_cache)?;
        self.r.iter(py, Kind::Items, b, reverse, &family::arg(cf))
    }

    /// Keys, as `items`.
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, reverse = false,
                        fill_cache = true, cf = None))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<PyIter> {
        let b = Bounds::new(start, stop, prefix, fill_cache)?;
        self.r.iter(py, Kind::Keys, b, reverse, &family::arg(cf))
    }

    /// Values, as `items`.
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, reverse = false,
                        fill_cache = true, cf = None))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        fill_cache: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<PyIter> {
        let b = Bounds::new(start, stop, prefix, fill_cache)?;
        self.r.iter(py, Kind::Values, b, reverse, &family::arg(cf))
    }

    /// A seekable `RawIterator` over `[start, stop)` or `prefix` (not positioned).
    #[pyo3(signature = (start = None, stop = None, *, prefix = None, fill_cache = true,
                        cf = None))]
    fn iterator(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        fill_cache: bool,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<PyRawIter> {
        self.r.raw_iter(py, Bounds::new(start, stop, prefix, fill_cache)?, &family::arg(cf))
    }

    /// Writes an openable copy of the database as it is now into the new directory `path`
    /// (RocksDB's `Checkpoint::CreateCheckpoint`: table files hard-linked, one point in time).
    fn create_checkpoint(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| self.r.h.with(|db| db.create_checkpoint(&path).map_err(errors::engine))?)
    }

    /// Flushes the memtables to table files and waits for it (every family's: `cf` is
    /// checked, and all are cut together).
    #[pyo3(signature = (*, cf = None))]
    fn flush(&self, py: Python<'_>, cf: Option<&Bound<'_, PyColumnFamily>>) -> PyResult<()> {
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.flush_cf(c),
                    None => db.flush(),
                })
            })?
        })
    }

    /// Flushes, then compacts the keys in `[start, stop]` (`None`: unbounded) of family `cf`
    /// to the last level.
    #[pyo3(signature = (start = None, stop = None, *, cf = None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let a = args::opt_bytes(start, "start")?;
        let b = args::opt_bytes(stop, "stop")?;
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::call(&cf, |c| match c {
                    Some(c) => db.compact_range_cf(c, a.as_deref(), b.as_deref()),
                    None => db.compact_range(a.as_deref(), b.as_deref()),
                })
            })?
        })
    }

    /// A named property (`talus.stats`, `rocksdb.estimate-num-keys`, ...) of family `cf`
    /// (`default` without it), or `None`.
    #[pyo3(signature = (name, *, cf = None))]
    fn property(
        &self,
        py: Python<'_>,
        name: &str,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<Option<String>> {
        let cf = family::arg(cf);
        py.detach(|| {
            self.r.h.with(|db| {
                family::on(&cf, |c| match c {
                    Some(c) => db.property_cf(c, name),
                    None => db.property(name),
                })
            })?
        })
    }

    /// Creates the column family `name` (options by RocksDB's names, as the open takes them;
    /// without any, the database's) and returns its handle. `talus.InvalidArgument` if it
    /// exists.
    #[pyo3(signature = (name, **kwargs))]
    fn create_column_family(
        &self,
        py: Python<'_>,
        name: &str,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyColumnFamily> {
        family::create(py, &self.r.h, name, kwargs)
    }

    /// Drops the column family `cf` (a `ColumnFamily` or a name): its data goes once no
    /// handle, iterator or snapshot read holds it; `default` cannot be dropped.
    fn drop_column_family(&self, py: Python<'_>, cf: &Bound<'_, PyAny>) -> PyResult<()> {
        family::drop(py, &self.r.h, cf)
    }

    /// The handle of the live column family `name`, or `None`.
    fn get_column_family(&self, py: Python<'_>, name: &str) -> PyResult<Option<PyColumnFamily>> {
        let name = name.to_string();
        match py.detach(|| self.r.h.with(|db| db.cf_handle(&name)))? {
            Some(cf) => PyColumnFamily::wrap(py, &self.r.h, cf).map(Some),
            None => Ok(None),
        }
    }

    /// The handles of the live column families, `default` first.
    fn column_families(&self, py: Python<'_>) -> PyResult<Vec<PyColumnFamily>> {
        let all = py.detach(|| self.r.h.with(|db| db.column_families()))?;
        all.into_iter().map(|cf| PyColumnFamily::wrap(py, &self.r.h, cf)).collect()
    }

    /// The names of the column families of the database in `path`, `default` first (RocksDB's
    /// `ListColumnFamilies`; works beside an open handle). `talus.NotFound` without one.
    #[staticmethod]
    fn list_column_families(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
        py.detach(|| {
            talus::Db::list_column_families(&path, &talus::Options::default())
                .map_err(errors::engine)
        })
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
