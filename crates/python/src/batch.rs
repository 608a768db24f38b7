//! `talus.WriteBatch`: writes applied atomically. `db.write_batch()` gives one bound to its
//! database, a context manager that writes on a clean exit and discards on an exception;
//! `talus.WriteBatch()` makes an unbound one for `db.write(batch)`. Each operation takes a
//! `cf=` column family (`default` without it): one batch spans families atomically.
//!
//! Adding to a batch copies the key and value into it with the GIL held (no IO, no lock: the
//! batch is the Python object's own, guarded by PyO3's borrow check). A key or value over the
//! engine's limit raises `talus.InvalidArgument` at once and is not added. Writing releases the
//! GIL. A batch is used up by its write (successful or not): every later call raises
//! `talus.Closed`.

use std::sync::Arc;

use pyo3::prelude::*;

use crate::args;
use crate::errors;
use crate::family::PyColumnFamily;
use crate::handle::DbHandle;

/// A batch of writes; see the module doc.
#[pyclass(module = "talus", name = "WriteBatch")]
pub struct PyWriteBatch {
    batch: Option<talus::WriteBatch>,
    db: Option<Arc<DbHandle>>,
    wo: talus::WriteOptions,
}

impl PyWriteBatch {
    /// A batch `write()` (and a clean `with` exit) writes to `db` with `wo`.
    pub(crate) fn bound(db: Arc<DbHandle>, wo: talus::WriteOptions) -> PyWriteBatch {
        PyWriteBatch { batch: Some(talus::WriteBatch::new()), db: Some(db), wo }
    }

    /// The batch, taken out for writing: `talus.Closed` if it was written already.
    pub(crate) fn take(&mut self) -> PyResult<talus::WriteBatch> {
        self.batch.take().ok_or_else(used)
    }

    fn batch(&mut self) -> PyResult<&mut talus::WriteBatch> {
        self.batch.as_mut().ok_or_else(used)
    }
}

fn used() -> PyErr {
    errors::Closed::new_err("the WriteBatch was already written")
}

/// The engine's handle of a `cf=` argument (its slot read with the GIL released).
fn family(
    py: Python<'_>,
    cf: Option<&Bound<'_, PyColumnFamily>>,
) -> PyResult<Option<talus::ColumnFamily>> {
    cf.map(|c| c.get().handle(py)).transpose()
}

fn check_size(key: usize, value: usize) -> PyResult<()> {
    talus::batch::check_entry_size(key, value).map_err(errors::engine)
}

#[pymethods]
impl PyWriteBatch {
    /// An empty batch not bound to a database (write it with `db.write(batch)`).
    #[new]
    fn new() -> PyWriteBatch {
        PyWriteBatch { batch: Some(talus::WriteBatch::new()), db: None, wo: Default::default() }
    }

    /// Adds "set `key` to `value`" (in family `cf`).
    #[pyo3(signature = (key, value, *, cf = None))]
    fn put(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        check_size(k.len(), v.len())?;
        match family(py, cf)? {
            Some(c) => self.batch()?.put_cf(&c, &k, &v),
            None => self.batch()?.put(&k, &v),
        }
        Ok(())
    }

    /// Adds "merge the operand `value` into `key`" (in family `cf`).
    #[pyo3(signature = (key, value, *, cf = None))]
    fn merge(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        let v = args::bytes(value, "value")?;
        check_size(k.len(), v.len())?;
        match family(py, cf)? {
            Some(c) => self.batch()?.merge_cf(&c, &k, &v),
            None => self.batch()?.merge(&k, &v),
        }
        Ok(())
    }

    /// Adds "delete `key`" (in family `cf`).
    #[pyo3(signature = (key, *, cf = None))]
    fn delete(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let k = args::bytes(key, "key")?;
        check_size(k.len(), 0)?;
        match family(py, cf)? {
            Some(c) => self.batch()?.delete_cf(&c, &k),
            None => self.batch()?.delete(&k),
        }
        Ok(())
    }

    /// Adds "delete every key in `[start, stop)`" (of family `cf`).
    #[pyo3(signature = (start, stop, *, cf = None))]
    fn delete_range(
        &mut self,
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        stop: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, PyColumnFamily>>,
    ) -> PyResult<()> {
        let a = args::bytes(start, "start")?;
        let b = args::bytes(stop, "stop")?;
        check_size(a.len(), b.len())?;
        match family(py, cf)? {
            Some(c) => self.batch()?.delete_range_cf(&c, &a, &b),
            None => self.batch()?.delete_range(&a, &b),
        }
        Ok(())
    }

    /// Removes every operation.
    fn clear(&mut self) -> PyResult<()> {
        self.batch()?.clear();
        Ok(())
    }

    /// The number of operations.
    fn __len__(&mut self) -> PyResult<usize> {
        Ok(self.batch()?.count() as usize)
    }

    /// Writes the batch to the database it is bound to (GIL released); used up afterwards.
    fn write(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(db) = self.db.clone() else {
            return Err(errors::invalid(
                "this WriteBatch is not bound to a database: use db.write(batch)",
            ));
        };
        let b = self.take()?;
        let wo = self.wo;
        py.detach(|| db.with(|db| db.write(b, &wo).map_err(errors::engine))?)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Writes on a clean exit; on an exception discards the batch and lets it propagate.
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() {
            self.write(py)?;
        } else {
            self.batch = None;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match &self.batch {
            Some(b) => format!("<talus.WriteBatch {} ops>", b.count()),
            None => "<talus.WriteBatch written>".into(),
        }
    }
}
