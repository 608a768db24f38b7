//! `talus.RawIterator`: the engine's cursor (`talus::RawIter`) as RocksDB's C++ iterator reads:
//! `seek`/`seek_for_prev`/`seek_to_first`/`seek_to_last`, `next`/`prev`, `valid`,
//! `key`/`value`/`item`, `status`.
//!
//! Every method releases the GIL and works under the cursor's slot (write lock to move, read
//! lock to look), so a move that reads a block from disk lets other threads run; `key()` and
//! `value()` copy out under the lock and make the `bytes` after it. Reading or moving an
//! iterator that is not positioned raises `talus.InvalidArgument` (the engine would panic);
//! after the database or the iterator is closed, every method raises `talus.Closed`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::args;
use crate::errors;
use crate::slot::CursorSlot;

/// A seekable cursor; see the module doc.
#[pyclass(module = "talus", name = "RawIterator", frozen)]
pub struct PyRawIter {
    it: Arc<CursorSlot<talus::RawIter>>,
}

impl PyRawIter {
    pub(crate) fn new(it: Arc<CursorSlot<talus::RawIter>>) -> PyRawIter {
        PyRawIter { it }
    }

    /// Moves with `f` under the write lock, GIL released.
    fn moved(&self, py: Python<'_>, f: impl FnOnce(&mut talus::RawIter) + Send) -> PyResult<()> {
        py.detach(|| self.it.with(f))
    }

    /// Moves one step with `f`, if positioned.
    fn step(&self, py: Python<'_>, f: impl FnOnce(&mut talus::RawIter) + Send) -> PyResult<()> {
        py.detach(|| {
            self.it.with(|it| {
                if !it.valid() {
                    return Err(not_positioned());
                }
                f(it);
                Ok(())
            })?
        })
    }

    /// A copy of what `f` reads at the current entry, if positioned.
    fn look(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&talus::RawIter) -> (Vec<u8>, Vec<u8>) + Send,
    ) -> PyResult<(Vec<u8>, Vec<u8>)> {
        py.detach(|| {
            self.it.with(|it| if it.valid() { Ok(f(it)) } else { Err(not_positioned()) })?
        })
    }
}

fn not_positioned() -> PyErr {
    errors::invalid("the iterator is not positioned at an entry")
}

#[pymethods]
impl PyRawIter {
    /// True if positioned at an entry.
    fn valid(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| self.it.with(|it| it.valid()))
    }

    /// Positions at the first key.
    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.moved(py, |it| it.seek_to_first())
    }

    /// Positions at the last key.
    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.moved(py, |it| it.seek_to_last())
    }

    /// Positions at the first key `>= key`.
    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        self.moved(py, |it| it.seek(&k))
    }

    /// Positions at the last key `<= key`.
    fn seek_for_prev(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        self.moved(py, |it| it.seek_for_prev(&k))
    }

    /// Moves to the next entry.
    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.next())
    }

    /// Moves to the previous entry.
    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.prev())
    }

    /// The current key.
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (k, _) = self.look(py, |it| (it.key().to_vec(), Vec::new()))?;
        Ok(PyBytes::new(py, &k))
    }

    /// The current value.
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (_, v) = self.look(py, |it| (Vec::new(), it.value().to_vec()))?;
        Ok(PyBytes::new(py, &v))
    }

    /// The current `(key, value)`.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (k, v) = self.look(py, |it| (it.key().to_vec(), it.value().to_vec()))?;
        PyTuple::new(py, [PyBytes::new(py, &k), PyBytes::new(py, &v)])
    }

    /// Raises the first error the iterator met, if any.
    fn status(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.it.with(|it| it.status().map_err(errors::engine))?)
    }

    /// Releases the iterator's view of the database now; later calls raise `talus.Closed`.
    fn close(&self, py: Python<'_>) {
        py.detach(|| crate::slot::Close::close(&*self.it));
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}
