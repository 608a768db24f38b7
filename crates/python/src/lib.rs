//! The `talus` Python module: Talus's key-value API ([`db::PyDb`] and what it makes) and its
//! table layer ([`tables`]) for CPython, built by maturin (`pip install ./crates/python`).
//!
//! # The GIL and the locks
//!
//! - **Released** (`Python::detach`) around every call into the engine or the table layer
//!   (open, close, reads, writes, iterator steps, flush, compaction, properties, table
//!   operations), so other Python threads run while one waits on the disk.
//! - **Held** while Python objects are read or made: arguments are converted before the GIL is
//!   released (a `bytes` argument is borrowed in place, since it cannot change; any other
//!   buffer is copied first, since another thread could change it), results are turned into
//!   `bytes` after it is taken back.
//! - Every engine object sits in a [`slot::Slot`] (a read-write lock around an `Option`).
//!   A slot's lock is only ever taken with the GIL released, and nothing holding one waits for
//!   the GIL, so the GIL and the binding's locks never wait on each other. Lock order: a
//!   database's slot, then its list of children, then one child's slot (see `slot.rs`).
//! - [`db::PyDb::close`] waits for the calls in flight, then empties the database's slot and
//!   the slot of every object made from it (iterators, snapshots, catalogs, tables,
//!   transactions): the engine's files and LOCK are released when it returns, and any later
//!   use of one of those objects raises `talus.Closed` instead of touching freed memory.
//!
//! Modules: `errors` (the exception classes), `args` (bytes arguments), `options` (engine
//! options by RocksDB's names), `slot` (slots and closing), `handle` (an open database and its
//! children), `db` (`talus.DB`), `family` (`ColumnFamily` and the `cf=` argument), `read` (reads shared by `DB` and `Snapshot`), `snapshot`,
//! `batch` (`WriteBatch`), `iter` (`Iterator`: items, keys, values), `raw_iter`
//! (`RawIterator`), `tables` (`Catalog`, `Table`, `Transaction`).
#![deny(clippy::unwrap_used, clippy::expect_used)]

use pyo3::prelude::*;

mod args;
mod backup;
mod batch;
mod db;
mod errors;
mod family;
mod handle;
mod iter;
mod options;
mod raw_iter;
mod read;
mod slot;
mod snapshot;
mod tables;

/// Destroys the database in `path` (`talus::destroy_db`): only a database whose MANIFEST reads
/// back, and not one another handle or process has open. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (path, **kwargs))]
fn destroy_db(
    py: Python<'_>,
    path: std::path::PathBuf,
    kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<()> {
    let named = options::named(kwargs)?;
    py.detach(|| {
        let opts = options::build(&options::Sources { named, ..Default::default() })?;
        ::talus::destroy_db(&path, &opts).map_err(errors::engine)
    })
}

/// Talus, a write-optimized LSM storage engine in pure Rust, from Python.
///
/// `talus.DB(path, **options)` opens a database (options by RocksDB's names); keys and values
/// are bytes. `talus.Catalog(db)` gives tables with secondary indexes and transactions. Every
/// call that may touch the disk releases the GIL; `DB.close()` closes everything made from the
/// database. Errors derive from `talus.Error`.
#[pymodule]
fn talus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<db::PyDb>()?;
    m.add_class::<family::PyColumnFamily>()?;
    m.add_class::<batch::PyWriteBatch>()?;
    m.add_class::<snapshot::PySnapshot>()?;
    m.add_class::<iter::PyIter>()?;
    m.add_class::<raw_iter::PyRawIter>()?;
    m.add_class::<backup::PyBackupEngine>()?;
    tables::register(m)?;
    m.add_function(wrap_pyfunction!(destroy_db, m)?)?;
    Ok(())
}
