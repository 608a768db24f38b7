//! The table layer from Python: `talus.Catalog` (DDL, transactions), `talus.Table` (row
//! writes, point reads, scans by the primary key or a secondary index) and
//! `talus.Transaction`, over `talus-table`'s public API (MyRocks's layout; see that crate).
//!
//! Each object holds its `talus-table` handle in a [`crate::slot::Slot`] registered with the
//! database, so `db.close()` empties them too and later calls raise `talus.Closed`. Every
//! table-layer call releases the GIL; rows and keys are converted to and from Python with it
//! held (`values.rs`). A transaction's call holds its own slot's write lock while it reads a
//! table's slot (the one place two slots are held; a close holds one at a time).
//!
//! The binding stays thin on purpose: it calls `Catalog`, `Table`, `Transaction` and `Scan`
//! and nothing inside them, so a change of the table layer's storage underneath reaches Python
//! without a change here.

use pyo3::prelude::*;

mod catalog;
mod scan;
mod table;
mod txn;
mod values;

/// Adds the table classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<catalog::PyCatalog>()?;
    m.add_class::<table::PyTable>()?;
    m.add_class::<txn::PyTransaction>()?;
    Ok(())
}
