//! The exception classes of the `talus` module and the mapping from the engine's and the table
//! layer's errors to them.
//!
//! Every class derives from `talus.Error`. Engine errors: `Corruption`, `Locked`, `NotFound`,
//! `InvalidArgument`, `Busy`, `IOError`, `NotSupported`, `BackgroundError`; `Closed` for an
//! object used after its database (or it) was closed, a batch used after it was written;
//! table errors derive from `TableError`. The message is the engine's own text (which names
//! the file and offset of a corruption, the option of a bad option, ...).
//!
//! The functions here only build a `PyErr` (lazily: no Python object is made until it is
//! raised), so they may be called with the GIL released.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use talus_table::TableError as TErr;

create_exception!(talus, Error, PyException, "Base class of every error Talus raises.");
create_exception!(
    talus,
    Corruption,
    Error,
    "Bytes on disk failed a checksum or did not decode; the message names the file and offset."
);
create_exception!(
    talus,
    Locked,
    Error,
    "The database is open in another handle or process (its LOCK is held)."
);
create_exception!(talus, NotFound, Error, "A database or file does not exist (never a key).");
create_exception!(
    talus,
    InvalidArgument,
    Error,
    "An argument the engine refuses: an option out of range, a key or value over the limit."
);
create_exception!(talus, Busy, Error, "The operation is not possible right now.");
create_exception!(talus, IOError, Error, "An operating-system IO error, with what was being done.");
create_exception!(
    talus,
    NotSupported,
    Error,
    "Not supported by this handle (a write to a database opened read-only)."
);
create_exception!(
    talus,
    BackgroundError,
    Error,
    "A flush, compaction or WAL write failed; the database refuses writes until reopened."
);
create_exception!(
    talus,
    Closed,
    Error,
    "The object (or the database it came from) is closed, or the batch was already written."
);
create_exception!(talus, TableError, Error, "Base class of the table layer's refusals.");
create_exception!(talus, DuplicateKey, TableError, "The primary key or a unique index has it.");
create_exception!(talus, SchemaError, TableError, "A row or key does not fit the table's schema.");
create_exception!(talus, TableExists, TableError, "create_table of a name that exists.");
create_exception!(talus, NoSuchTable, TableError, "No table of that name.");
create_exception!(talus, IndexExists, TableError, "create_index of a name that exists.");
create_exception!(talus, NoSuchIndex, TableError, "No index of that name (or still building).");
create_exception!(
    talus,
    Conflict,
    TableError,
    "A transaction wrote a primary key another commit wrote after it began; nothing was written."
);

/// The Python exception for an engine error.
pub(crate) fn engine(e: talus::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        talus::Error::Io { .. } => IOError::new_err(msg),
        talus::Error::Corruption { .. } => Corruption::new_err(msg),
        talus::Error::InvalidArgument(_) => InvalidArgument::new_err(msg),
        talus::Error::Locked(_) => Locked::new_err(msg),
        talus::Error::NotFound(_) => NotFound::new_err(msg),
        talus::Error::BackgroundError(_) => BackgroundError::new_err(msg),
        talus::Error::Busy(_) => Busy::new_err(msg),
        talus::Error::NotSupported(_) => NotSupported::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// The Python exception for a table-layer error (engine errors as [`engine`] maps them).
pub(crate) fn table(e: TErr) -> PyErr {
    let msg = e.to_string();
    match e {
        TErr::Engine(e) => engine(e),
        TErr::DuplicateKey { .. } => DuplicateKey::new_err(msg),
        TErr::Schema { .. } => SchemaError::new_err(msg),
        TErr::TableExists(_) => TableExists::new_err(msg),
        TErr::NoSuchTable(_) => NoSuchTable::new_err(msg),
        TErr::IndexExists(_) => IndexExists::new_err(msg),
        TErr::NoSuchIndex(_) => NoSuchIndex::new_err(msg),
        TErr::Conflict { .. } => Conflict::new_err(msg),
        TErr::Corruption { .. } => Corruption::new_err(msg),
        _ => TableError::new_err(msg),
    }
}

/// `talus.Closed`: `what` was used after it (or its database) was closed.
pub(crate) fn closed(what: &str) -> PyErr {
    Closed::new_err(format!("{what} is closed"))
}

/// `talus.InvalidArgument` with `msg`.
pub(crate) fn invalid(msg: impl Into<String>) -> PyErr {
    InvalidArgument::new_err(msg.into())
}

/// Adds the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("Corruption", py.get_type::<Corruption>())?;
    m.add("Locked", py.get_type::<Locked>())?;
    m.add("NotFound", py.get_type::<NotFound>())?;
    m.add("InvalidArgument", py.get_type::<InvalidArgument>())?;
    m.add("Busy", py.get_type::<Busy>())?;
    m.add("IOError", py.get_type::<IOError>())?;
    m.add("NotSupported", py.get_type::<NotSupported>())?;
    m.add("BackgroundError", py.get_type::<BackgroundError>())?;
    m.add("Closed", py.get_type::<Closed>())?;
    m.add("TableError", py.get_type::<TableError>())?;
    m.add("DuplicateKey", py.get_type::<DuplicateKey>())?;
    m.add("SchemaError", py.get_type::<SchemaError>())?;
    m.add("TableExists", py.get_type::<TableExists>())?;
    m.add("NoSuchTable", py.get_type::<NoSuchTable>())?;
    m.add("IndexExists", py.get_type::<IndexExists>())?;
    m.add("NoSuchIndex", py.get_type::<NoSuchIndex>())?;
    m.add("Conflict", py.get_type::<Conflict>())?;
    Ok(())
}
