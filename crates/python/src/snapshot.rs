//! `talus.Snapshot`: a consistent read view (`db.snapshot()`), with the reads of `talus.DB`
//! (`get`, `multi_get`, `[]`, `in`, `items`/`keys`/`values`, `iterator()`) at the moment it was
//! taken. A context manager: `with db.snapshot() as s:` releases it on exit (`close()` does
//! the same), after which compaction may drop what only it needed, and its reads raise
//! `talus.Closed`. Iterators made from it keep their own view until they are closed.
//!
//! The engine's snapshot lives in a slot registered with the database (the DB's close empties
//! it); reads go through [`Reader`], which reads the slot under the database's read lock with
//! the GIL released.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::family::{self, PyColumnFamily};
use crate::handle::DbHandle;
use crate::iter::{Kind, PyIter};
use crate::raw_iter::PyRawIter;
use crate::read::{Bounds, Reader};
use crate::slot::Slot;

/// A read view of the database; see the module doc.
#[pyclass(module = "talus", name = "Snapshot", frozen)]
pub struct PySnapshot {
    r: Reader,
    sequence: u64,
}

impl PySnapshot {
    /// Takes a snapshot of `h`'s current state.
    pub(crate) fn take(py: Python<'_>, h: &Arc<DbHandle>) -> PyResult<PySnapshot> {
        let slot = py.detach(|| h.adopt(|db| Ok(Slot::new(db.snapshot(), "the snapshot"))))?;
        let sequence = py.detach(|| slot.read(|s| s.sequence()))?;
        Ok(PySnapshot { r: Reader { h: h.clone(), snap: Some(slot) }, sequence })
    }
}

#[pymethods]
impl PySnapshot {
    /// The value of `key` at the snapshot, or `default`.
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

    /// The values of `keys` at the snapshot (`None` where absent).
    #[pyo3(signature = (keys, *, cf = None))]
    fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        cf: Option<&Bound<'py, PyColumnFamily>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.r.multi_get(py, keys, &family::arg(cf))
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.r.get_item(py, key)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.r.contains(py, key)
    }

    /// `(key, value)` pairs at the snapshot, as `DB.items`.
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

    /// Keys at the snapshot, as `DB.keys`.
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

    /// Values at the snapshot, as `DB.values`.
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

    /// A seekable `RawIterator` at the snapshot.
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

    /// The sequence number the snapshot reads at.
    #[getter]
    fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Releases the snapshot; later reads through it raise `talus.Closed`.
    fn close(&self, py: Python<'_>) {
        if let Some(s) = &self.r.snap {
            py.detach(|| crate::slot::Close::close(&**s));
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        format!("<talus.Snapshot at sequence {}>", self.sequence)
    }
}
