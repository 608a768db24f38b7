//! [`crate::Table::verify_indexes`]: checks that every secondary index holds exactly the
//! entries derived from the table's rows (for crash and stress testers, and `ibench`).
//!
//! Reads one engine snapshot (so concurrent writers do not disturb it), derives the expected
//! entries of every ready index from the primary rows, sorts them in memory (O(rows) memory),
//! and compares them with the stored entries key by key. Takes no table lock.

use std::sync::atomic::Ordering;

use crate::error::{Result, TableError};
use crate::meta::IndexState;
use crate::rowcodec::decode_row;
use crate::shared::index_range;
use crate::storage::{Cursor, Range, Storage, Walk};
use crate::table::Table;
use crate::write::index_entry;

pub(crate) fn verify_indexes<S: Storage>(t: &Table<S>) -> Result<u64> {
    let m = t.shared.meta();
    if t.shared.dropped.load(Ordering::Acquire) {
        return Err(TableError::NoSuchTable(m.def.name.clone()));
    }
    let db = &t.cat.db;
    let snap = db.take_snapshot();
    let cursor = |id: u32| {
        let (lower, upper) = index_range(id);
        db.cursor(Range { lower, upper, snapshot: Some(&snap), fill_cache: false }, Walk::Forward)
    };
    let ready: Vec<_> = m.indexes.iter().filter(|i| i.state == IndexState::Ready).collect();
    let mut expected: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); ready.len()];
    let mut rows = 0u64;
    let mut it = cursor(m.id);
    while it.valid() {
        let (k, v) = (it.key(), it.value());
        let row = decode_row(v, &m.types)?;
        m.def.check_row(&row).map_err(|e| {
            TableError::corrupt(format!("table {}: stored row {k:02x?}: {e}", m.def.name))
        })?;
        for (ix, exp) in ready.iter().zip(&mut expected) {
            let (ik, iv, _) = index_entry(ix, &row, k.get(4..).unwrap_or(&[]));
            exp.push((ik, iv));
        }
        rows += 1;
        it.advance();
    }
    it.status()?;
    for (ix, mut exp) in ready.into_iter().zip(expected) {
        exp.sort_unstable();
        let mut want = exp.into_iter();
        let mut it = cursor(ix.id);
        loop {
            let got = it.valid().then(|| (it.key(), it.value()));
            let w = want.next();
            match (got, &w) {
                (None, None) => break,
                (Some(g), Some(w)) if g.0 == w.0.as_slice() && g.1 == w.1.as_slice() => {}
                (g, w) => {
                    it.status()?;
                    return Err(TableError::corrupt(format!(
                        "table {} index {}: stored entry {:02x?} where the rows give {:02x?}",
                        m.def.name,
                        ix.def.name,
                        g.map(|e| e.0),
                        w.as_ref().map(|e| &e.0)
                    )));
                }
            }
            it.advance();
        }
        it.status()?;
    }
    Ok(rows)
}

impl<S: Storage> Table<S> {
    /// Checks, on one snapshot, that every ready secondary index holds exactly the entries
    /// derived from the rows; returns the number of rows, or [`crate::TableError::Corruption`]
    /// naming the first mismatch. Memory: all expected entries of the table.
    pub fn verify_indexes(&self) -> Result<u64> {
        verify_indexes(self)
    }
}
