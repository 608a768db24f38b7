//! `talus.Transaction` (`catalog.begin()`): snapshot isolation, optimistic on primary keys
//! (`talus_table::Transaction`). `insert`/`update`/`delete` are checked when called against the
//! transaction's snapshot and its own earlier writes, and staged; `commit` writes them as one
//! batch or raises `talus.Conflict` (nothing written) if another commit wrote one of the
//! primary keys since `begin`; `rollback` (or dropping it) discards them. As a context manager
//! it commits on a clean exit and rolls back on an exception. After `commit`/`rollback`, or
//! once the database is closed, every call raises `talus.Closed`.
//!
//! An operation holds the transaction's slot (write lock) while it reads the table's, GIL
//! released; rows and keys are converted with the GIL held first, with the table's definition.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use talus_table::Transaction;

use super::scan::ScanArgs;
use super::table::PyTable;
use super::values;
use crate::errors;
use crate::slot::{Close, Slot};

/// A transaction; see the module doc.
#[pyclass(module = "talus", name = "Transaction", frozen)]
pub struct PyTransaction {
    t: Arc<Slot<Transaction>>,
}

impl PyTransaction {
    pub(crate) fn new(t: Arc<Slot<Transaction>>) -> PyTransaction {
        PyTransaction { t }
    }

    /// Runs `f` on the transaction and `table`'s handle, GIL released.
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        table: &PyTable,
        f: impl FnOnce(&mut Transaction, &talus_table::Table) -> talus_table::Result<R> + Send,
    ) -> PyResult<R> {
        py.detach(|| self.t.write(|x| table.t.read(|t| f(x, t).map_err(errors::table))?)?)
    }
}

#[pymethods]
impl PyTransaction {
    /// Stages the insert of `row` into `table` (`talus.DuplicateKey` now if the key exists in
    /// this transaction's view).
    fn insert(
        &self,
        py: Python<'_>,
        table: &Bound<'_, PyTable>,
        row: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let table = table.get();
        let r = values::row(&table.def, row)?;
        self.call(py, table, |x, t| x.insert(t, &r))
    }

    /// Stages the update of the row with `row`'s primary key; `False` if absent in this view.
    fn update(
        &self,
        py: Python<'_>,
        table: &Bound<'_, PyTable>,
        row: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let table = table.get();
        let r = values::row(&table.def, row)?;
        self.call(py, table, |x, t| x.update(t, &r))
    }

    /// Stages the delete of the row with primary key `pk`; `False` if absent in this view.
    fn delete(
        &self,
        py: Python<'_>,
        table: &Bound<'_, PyTable>,
        pk: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let table = table.get();
        let k = table.pk(pk)?;
        self.call(py, table, |x, t| x.delete(t, &k))
    }

    /// The row with primary key `pk`: this transaction's own write if any, else its snapshot's.
    fn get<'py>(
        &self,
        py: Python<'py>,
        table: &Bound<'py, PyTable>,
        pk: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let table = table.get();
        let k = table.pk(pk)?;
        match self.call(py, table, |x, t| x.get(t, &k))? {
            Some(r) => Ok(Some(values::row_to_py(py, &r)?)),
            None => Ok(None),
        }
    }

    /// `Table.scan` at this transaction's snapshot (its own uncommitted writes not included).
    #[pyo3(signature = (table, index = "PRIMARY", start = None, end = None, *,
                        reverse = false, columns = None, limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        table: &Bound<'py, PyTable>,
        index: &str,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        columns: Option<Vec<String>>,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let table = table.get();
        let def = table.def_with(py, index)?;
        let args = ScanArgs::new(&def, index.to_string(), start, end, reverse, columns, limit)?;
        let rows = self.call(py, table, |x, t| args.run(|s, visit| x.scan_range(t, s, visit)))?;
        let rows: Vec<_> = rows.into_iter().map(Some).collect();
        values::rows_to_py(py, &rows)
    }

    /// Writes the staged operations as one batch (`talus.Conflict`: nothing written).
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.t.take()?.commit().map_err(errors::table))
    }

    /// Discards the staged operations.
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.t.take().map(Transaction::rollback))
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Commits on a clean exit (unless already committed or rolled back); rolls back on an
    /// exception and lets it propagate.
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() && !self.t.is_closed() {
            self.commit(py)?;
        } else {
            py.detach(|| self.t.close());
        }
        Ok(false)
    }
}
