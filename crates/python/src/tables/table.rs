//! `talus.Table`: one table (`talus_table::Table`): `insert`, `insert_many`, `get`,
//! `get_many`, `update`, `delete`, `scan`, `verify_indexes`, and its definition.
//!
//! Each write is its own atomic batch (use `Catalog.begin()` for several). Rows go in as a
//! sequence (one value per column) or a mapping (column name to value) and come back as
//! tuples; a primary key is a tuple of values or, for a one-column key, the value itself.
//! Conversions run with the GIL held (`values.rs`), the table layer's call with it released.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use talus_table::{Catalog, Table, TableDef};

use super::scan::ScanArgs;
use super::values;
use crate::errors;
use crate::handle::DbHandle;
use crate::slot::Slot;

/// A table; see the module doc.
#[pyclass(module = "talus", name = "Table", frozen)]
pub struct PyTable {
    h: Arc<DbHandle>,
    cat: Arc<Slot<Catalog>>,
    pub(crate) t: Arc<Slot<Table>>,
    /// The definition when this handle was made (columns never change; see `def_with`).
    pub(crate) def: TableDef,
}

impl PyTable {
    pub(crate) fn new(
        py: Python<'_>,
        h: Arc<DbHandle>,
        cat: Arc<Slot<Catalog>>,
        t: Arc<Slot<Table>>,
    ) -> PyResult<PyTable> {
        let def = py.detach(|| t.read(|t| t.def().clone()))?;
        Ok(PyTable { h, cat, t, def })
    }

    /// The definition listing `index`: this handle's, or the catalog's current one for an
    /// index created after the handle was made.
    pub(crate) fn def_with(&self, py: Python<'_>, index: &str) -> PyResult<TableDef> {
        if index == "PRIMARY" || self.def.indexes.iter().any(|i| i.name == index) {
            return Ok(self.def.clone());
        }
        let name = &self.def.name;
        py.detach(|| {
            self.cat.read(|c| c.table(name).map(|t| t.def().clone()).map_err(errors::table))?
        })
    }

    /// A primary key from `obj`.
    pub(crate) fn pk(&self, obj: &Bound<'_, PyAny>) -> PyResult<Vec<talus_table::Value>> {
        values::key(&values::key_columns(&self.def, "PRIMARY")?, obj)
    }

    /// Runs `f` on the table layer's handle, GIL released.
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Table) -> talus_table::Result<R> + Send,
    ) -> PyResult<R> {
        py.detach(|| self.t.read(|t| f(t).map_err(errors::table))?)
    }
}

#[pymethods]
impl PyTable {
    /// Inserts `row` (`talus.DuplicateKey` if its primary or a unique key exists).
    fn insert(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        let r = values::row(&self.def, row)?;
        self.call(py, |t| t.insert(&r))
    }

    /// Inserts every row of `rows` in one batch, all or nothing.
    fn insert_many(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut rs = Vec::new();
        for r in rows.try_iter()? {
            rs.push(values::row(&self.def, &r?)?);
        }
        self.call(py, |t| t.insert_many(&rs))
    }

    /// The row with primary key `pk` as a tuple, or `None`.
    fn get<'py>(
        &self,
        py: Python<'py>,
        pk: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let k = self.pk(pk)?;
        match self.call(py, |t| t.get(&k))? {
            Some(r) => Ok(Some(values::row_to_py(py, &r)?)),
            None => Ok(None),
        }
    }

    /// The rows with primary keys `pks`, in that order (`None` where absent), from one view.
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        pks: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut keys = Vec::new();
        for k in pks.try_iter()? {
            keys.push(self.pk(&k?)?);
        }
        let rows = self.call(py, |t| t.get_many(&keys))?;
        values::rows_to_py(py, &rows)
    }

    /// Replaces the row with `row`'s primary key; `False` if there is none.
    fn update(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<bool> {
        let r = values::row(&self.def, row)?;
        self.call(py, |t| t.update(&r))
    }

    /// Deletes the row with primary key `pk`; `False` if there is none.
    fn delete(&self, py: Python<'_>, pk: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = self.pk(pk)?;
        self.call(py, |t| t.delete(&k))
    }

    /// Rows in the order of `index` (`"PRIMARY"` or a secondary index) whose leading index
    /// columns lie between the prefixes `start` and `end` (both inclusive; `None`: open),
    /// descending if `reverse`, only `columns` if given, at most `limit`.
    #[pyo3(signature = (index = "PRIMARY", start = None, end = None, *,
                        reverse = false, columns = None, limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        index: &str,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        columns: Option<Vec<String>>,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let def = self.def_with(py, index)?;
        let args = ScanArgs::new(&def, index.to_string(), start, end, reverse, columns, limit)?;
        let rows = self.call(py, |t| args.run(|s, visit| t.scan_range(s, visit)))?;
        let rows: Vec<_> = rows.into_iter().map(Some).collect();
        values::rows_to_py(py, &rows)
    }

    /// Checks, on one snapshot, that every ready secondary index holds exactly the entries
    /// derived from the rows; returns the number of rows (`talus.Corruption` naming the first
    /// mismatch).
    fn verify_indexes(&self, py: Python<'_>) -> PyResult<u64> {
        self.call(py, |t| t.verify_indexes())
    }

    /// The table's name.
    #[getter]
    fn name(&self) -> String {
        self.def.name.clone()
    }

    /// The columns as `(name, type, nullable)`.
    #[getter]
    fn columns(&self) -> Vec<(String, &'static str, bool)> {
        self.def
            .columns
            .iter()
            .map(|c| (c.name.clone(), values::type_name(c.ty), c.nullable))
            .collect()
    }

    /// The primary key's column names.
    #[getter]
    fn primary_key(&self) -> Vec<String> {
        self.def.primary_key.clone()
    }

    /// The ready secondary indexes as `(name, columns, unique)`, current as of this call.
    fn indexes(&self, py: Python<'_>) -> PyResult<Vec<(String, Vec<String>, bool)>> {
        let name = &self.def.name;
        let def = py.detach(|| {
            self.cat.read(|c| c.table(name).map(|t| t.def().clone()).map_err(errors::table))?
        })?;
        Ok(def.indexes.into_iter().map(|i| (i.name, i.columns, i.unique)).collect())
    }

    fn __repr__(&self) -> String {
        let state = if self.h.is_closed() { " (closed)" } else { "" };
        format!("<talus.Table {}{state}>", self.def.name)
    }
}
