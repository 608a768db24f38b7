//! `talus.ColumnFamily`: a handle of one column family (`db.create_column_family(name)`,
//! `db.get_column_family(name)`, `db.column_families()`), passed as the `cf=` keyword of the
//! reads, writes, iterators, batches, flush, compaction and properties of `talus.DB` (and the
//! reads of `talus.Snapshot`); without it they act on `default`, as before.
//!
//! The engine's handle keeps the family's memtables and files alive, so it lives in a slot
//! registered with the database like an iterator's (`handle.rs`): the DB's close empties it and
//! a later use raises `talus.Closed`. A call with `cf=` reads the slot under the database's
//! read lock with the GIL released (`slot.rs`'s order: the database's slot, then this one).
//! A handle of another database is refused by the engine (`talus.InvalidArgument`); one of a
//! dropped family still reads what the family held, and its writes are refused.

use std::sync::Arc;

use pyo3::prelude::*;

use pyo3::types::PyDict;

use crate::errors;
use crate::handle::DbHandle;
use crate::options::{self, Sources};
use crate::slot::Slot;

/// A column family of an open database; see the module doc.
#[pyclass(module = "talus", name = "ColumnFamily", frozen)]
pub struct PyColumnFamily {
    slot: Arc<Slot<talus::ColumnFamily>>,
    name: String,
    id: u32,
}

/// A `cf=` argument: the family's slot, `None` for `default`.
pub(crate) type Cf = Option<Arc<Slot<talus::ColumnFamily>>>;

/// The slot of a `cf=` argument.
pub(crate) fn arg(cf: Option<&Bound<'_, PyColumnFamily>>) -> Cf {
    cf.map(|c| c.get().slot.clone())
}

/// `f(Some(handle))` for a family argument (its slot read: call with the database's read lock
/// held, GIL released), `f(None)` without one; `talus.Closed` if the handle was closed.
pub(crate) fn on<R>(cf: &Cf, f: impl FnOnce(Option<&talus::ColumnFamily>) -> R) -> PyResult<R> {
    match cf {
        None => Ok(f(None)),
        Some(s) => s.read(|c| f(Some(c))),
    }
}

/// [`on`] for an engine call: its error as a Python exception.
pub(crate) fn call<R>(
    cf: &Cf,
    f: impl FnOnce(Option<&talus::ColumnFamily>) -> talus::Result<R>,
) -> PyResult<R> {
    on(cf, f)?.map_err(errors::engine)
}

impl PyColumnFamily {
    /// Wraps the engine's handle `cf`, registered with `h` so the DB's close empties it.
    pub(crate) fn wrap(
        py: Python<'_>,
        h: &Arc<DbHandle>,
        cf: talus::ColumnFamily,
    ) -> PyResult<PyColumnFamily> {
        let (name, id) = (cf.name().to_string(), cf.id());
        let slot = py.detach(|| h.adopt(|_| Ok(Slot::new(cf, "the column family"))))?;
        Ok(PyColumnFamily { slot, name, id })
    }

    /// A copy of the engine's handle (for a batch, which keeps it; GIL released).
    pub(crate) fn handle(&self, py: Python<'_>) -> PyResult<talus::ColumnFamily> {
        py.detach(|| self.slot.read(|c| c.clone()))
    }
}

#[pymethods]
impl PyColumnFamily {
    /// The family's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The family's id (what its WAL records and MANIFEST edits carry; `default` is 0).
    #[getter]
    fn id(&self) -> u32 {
        self.id
    }

    fn __repr__(&self) -> String {
        format!("<talus.ColumnFamily {:?} id={}>", self.name, self.id)
    }
}

/// Opens the database in `path` with `opts`: with `families` (the names of the families other
/// than `default`, each with `opts`; RocksDB's `Open` with descriptors) or without (a database
/// with other families is then refused, naming them). GIL released.
pub(crate) fn open(
    path: &std::path::Path,
    opts: talus::Options,
    read_only: bool,
    families: Option<Vec<String>>,
) -> PyResult<talus::Db> {
    let db = match families {
        None if read_only => talus::Db::open_read_only(path, opts),
        None => talus::Db::open(path, opts),
        Some(names) => {
            let descs: Vec<talus::ColumnFamilyDescriptor> = names
                .into_iter()
                .map(|n| talus::ColumnFamilyDescriptor::new(n, opts.clone()))
                .collect();
            if read_only {
                talus::Db::open_cf_read_only(path, opts, descs)
            } else {
                talus::Db::open_cf(path, opts, descs)
            }
        }
    };
    db.map_err(errors::engine)
}

/// `DB.create_column_family(name, **options)`.
pub(crate) fn create(
    py: Python<'_>,
    h: &Arc<DbHandle>,
    name: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyColumnFamily> {
    let named = options::named(kwargs)?;
    let name = name.to_string();
    let cf = py.detach(|| {
        h.with(|db| {
            let opts = if named.is_empty() {
                db.options().clone()
            } else {
                options::build(&Sources { named, ..Default::default() })?
            };
            db.create_column_family(&name, &opts).map_err(errors::engine)
        })?
    })?;
    PyColumnFamily::wrap(py, h, cf)
}

/// `DB.drop_column_family(cf)`: `cf` a `ColumnFamily` or a family's name.
pub(crate) fn drop(py: Python<'_>, h: &Arc<DbHandle>, cf: &Bound<'_, PyAny>) -> PyResult<()> {
    let by: Result<Cf, String> = match cf.cast::<PyColumnFamily>() {
        Ok(c) => Ok(Some(c.get().slot.clone())),
        Err(_) => Err(cf.extract::<String>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("cf must be a ColumnFamily or a name (str)")
        })?),
    };
    py.detach(|| {
        h.with(|db| match &by {
            Ok(slot) => call(slot, |c| match c {
                Some(c) => db.drop_column_family(c),
                None => Ok(()),
            }),
            Err(name) => match db.cf_handle(name) {
                Some(c) => db.drop_column_family(&c).map_err(errors::engine),
                None => Err(errors::invalid(format!("no column family {name:?}"))),
            },
        })?
    })
}
