//! The arguments of `Table.scan` and `Transaction.scan`, converted with the GIL held into an
//! owned [`ScanArgs`] that builds the table layer's `Scan` where it runs (GIL released).
//!
//! `start` and `end` are prefixes of the index's columns (a tuple, or one value), both
//! inclusive, as in `talus_table::Scan`: `start=("a",), end=("a",)` reads exactly the
//! entries whose first column is `"a"`. `columns` picks and orders the returned columns (an
//! index-only read when they are all in a secondary index); `limit` caps the rows.

use pyo3::prelude::*;
use talus_table::{Direction, Row, Scan, TableDef, Value};

use super::values;

/// An owned scan request; see the module doc.
pub(crate) struct ScanArgs {
    index: String,
    from: Vec<Value>,
    to: Vec<Value>,
    dir: Direction,
    columns: Option<Vec<String>>,
    limit: usize,
}

impl ScanArgs {
    /// From Python's arguments; `def` must list `index` (see `PyTable::def_with`).
    pub(crate) fn new(
        def: &TableDef,
        index: String,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        columns: Option<Vec<String>>,
        limit: Option<usize>,
    ) -> PyResult<ScanArgs> {
        let cols = values::key_columns(def, &index)?;
        let prefix = |b: Option<&Bound<'_, PyAny>>| match b {
            Some(b) if !b.is_none() => values::key(&cols, b),
            _ => Ok(Vec::new()),
        };
        Ok(ScanArgs {
            from: prefix(start)?,
            to: prefix(end)?,
            index,
            dir: if reverse { Direction::Reverse } else { Direction::Forward },
            columns,
            limit: limit.unwrap_or(usize::MAX),
        })
    }

    /// Runs `f` with the table layer's `Scan` and a visitor that collects the rows; returns
    /// what `f` returned and the rows.
    pub(crate) fn run<E>(
        &self,
        f: impl FnOnce(&Scan<'_>, &mut dyn FnMut(Row) -> bool) -> Result<(), E>,
    ) -> Result<Vec<Row>, E> {
        let names: Option<Vec<&str>> =
            self.columns.as_ref().map(|c| c.iter().map(String::as_str).collect());
        let s = Scan {
            index: &self.index,
            from: &self.from,
            to: &self.to,
            dir: self.dir,
            columns: names.as_deref(),
            limit: self.limit,
        };
        let mut rows = Vec::new();
        f(&s, &mut |r| {
            rows.push(r);
            true
        })?;
        Ok(rows)
    }
}
