//! `talus.Catalog(db)`: the tables of one database (`talus_table::Catalog`): create, open and
//! drop tables, create and drop indexes, begin transactions, read the counters.
//!
//! Open one catalog per database (the table layer keeps its uniqueness locks in it) and keep
//! it; it and every table and transaction made from it close with the database. Every method
//! releases the GIL for the table layer's call; DDL is synced to disk by the table layer.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use talus_table::{Catalog, CreateIndexOptions, IndexDef};

use super::table::PyTable;
use super::txn::PyTransaction;
use super::values;
use crate::db::{write_options, PyDb};
use crate::errors;
use crate::handle::DbHandle;
use crate::slot::Slot;

/// The tables of a database; see the module doc.
#[pyclass(module = "talus", name = "Catalog", frozen)]
pub struct PyCatalog {
    h: Arc<DbHandle>,
    cat: Arc<Slot<Catalog>>,
}

impl PyCatalog {
    /// A `talus.Table` for what `make` returns (run on the catalog, GIL released).
    fn table_obj(
        &self,
        py: Python<'_>,
        make: impl FnOnce(&Catalog) -> talus_table::Result<talus_table::Table> + Send,
    ) -> PyResult<PyTable> {
        let slot = py.detach(|| {
            self.h.adopt(|_| {
                let t = self.cat.read(make)?.map_err(errors::table)?;
                Ok(Slot::new(t, "the table"))
            })
        })?;
        PyTable::new(py, self.h.clone(), self.cat.clone(), slot)
    }
}

#[pymethods]
impl PyCatalog {
    /// Loads the catalog stored in `db` (an empty one if none). Table writes use `sync` and
    /// `disable_wal`; DDL is always synced.
    #[new]
    #[pyo3(signature = (db, *, sync = false, disable_wal = false))]
    fn new(py: Python<'_>, db: &Bound<'_, PyDb>, sync: bool, disable_wal: bool) -> PyResult<Self> {
        let h = db.get().handle().clone();
        let wo = write_options(sync, disable_wal);
        let cat = py.detach(|| {
            h.adopt(|db| {
                let c = Catalog::open_with(db.clone(), wo).map_err(errors::table)?;
                Ok(Slot::new(c, "the catalog"))
            })
        })?;
        Ok(PyCatalog { h, cat })
    }

    /// Creates table `name`: `columns` as `(name, type)` or `(name, type, nullable)`,
    /// `primary_key` a list of column names, `indexes` as `(name, columns)` or
    /// `(name, columns, unique)` (a column name may end in `" DESC"`).
    #[pyo3(signature = (name, columns, primary_key, indexes = None))]
    fn create_table(
        &self,
        py: Python<'_>,
        name: String,
        columns: &Bound<'_, PyAny>,
        primary_key: Vec<String>,
        indexes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTable> {
        let def = values::table_def(name, columns, primary_key, indexes)?;
        self.table_obj(py, move |c| c.create_table(def))
    }

    /// The table `name` (`talus.NoSuchTable` if there is none).
    fn table(&self, py: Python<'_>, name: String) -> PyResult<PyTable> {
        self.table_obj(py, move |c| c.table(&name))
    }

    /// Drops table `name` and its rows.
    fn drop_table(&self, py: Python<'_>, name: String) -> PyResult<()> {
        py.detach(|| self.cat.read(|c| c.drop_table(&name).map_err(errors::table))?)
    }

    /// Builds index `name` on `columns` of the populated table `table` (online: writes go on).
    #[pyo3(signature = (table, name, columns, *, unique = false, sort_memory_bytes = None))]
    fn create_index(
        &self,
        py: Python<'_>,
        table: String,
        name: String,
        columns: Vec<String>,
        unique: bool,
        sort_memory_bytes: Option<usize>,
    ) -> PyResult<()> {
        let def = IndexDef { name, columns, unique };
        let mut opts = CreateIndexOptions::default();
        if let Some(b) = sort_memory_bytes {
            opts.sort_memory_bytes = b;
        }
        py.detach(|| {
            self.cat.read(|c| c.create_index(&table, def, &opts).map_err(errors::table))?
        })
    }

    /// Drops index `index` of table `table`.
    fn drop_index(&self, py: Python<'_>, table: String, index: String) -> PyResult<()> {
        py.detach(|| self.cat.read(|c| c.drop_index(&table, &index).map_err(errors::table))?)
    }

    /// A transaction (snapshot isolation, optimistic on primary keys): a context manager that
    /// commits on a clean exit and rolls back on an exception.
    fn begin(&self, py: Python<'_>) -> PyResult<PyTransaction> {
        let slot = py.detach(|| {
            self.h.adopt(|_| Ok(Slot::new(self.cat.read(|c| c.begin())?, "the transaction")))
        })?;
        Ok(PyTransaction::new(slot))
    }

    /// The table layer's counters (rows inserted, updated, deleted, point reads, index
    /// entries written, blind index writes, rows read by scans).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = py.detach(|| self.cat.read(|c| c.stats()))?;
        let d = PyDict::new(py);
        d.set_item("rows_inserted", s.rows_inserted)?;
        d.set_item("rows_updated", s.rows_updated)?;
        d.set_item("rows_deleted", s.rows_deleted)?;
        d.set_item("point_reads", s.point_reads)?;
        d.set_item("index_entries_written", s.index_entries_written)?;
        d.set_item("blind_index_writes", s.blind_index_writes)?;
        d.set_item("rows_read_by_scans", s.rows_read_by_scans)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("<talus.Catalog {:?}>", self.h.path.display().to_string())
    }
}
