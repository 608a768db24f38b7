//! [`Reader`]: the reads `talus.DB` and `talus.Snapshot` share (get, multi_get, membership,
//! iterators), at the latest state or at a snapshot.
//!
//! Each method converts its arguments with the GIL held (`args.rs`), releases the GIL for the
//! engine call (under the database's read lock, then the snapshot's: `slot.rs`'s order), and
//! makes the result's `bytes` after taking it back. A point read returns the engine's pinned
//! value (`Db::get_pinned`: no copy in the engine) and copies it once, into the `bytes`.

use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::args::{self, Bytes};
use crate::errors;
use crate::family::{self, Cf};
use crate::handle::DbHandle;
use crate::iter::{Cursor, Kind, PyIter};
use crate::raw_iter::PyRawIter;
use crate::slot::{CursorSlot, Slot};

/// A database, read at the latest state or at a snapshot.
pub(crate) struct Reader {
    pub(crate) h: Arc<DbHandle>,
    pub(crate) snap: Option<Arc<Slot<talus::Snapshot>>>,
}

/// Iterator bounds and options from Python: `start` (inclusive), `stop` (exclusive) or a
/// `prefix`, and `fill_cache`.
pub(crate) struct Bounds {
    pub(crate) lower: Option<Vec<u8>>,
    pub(crate) upper: Option<Vec<u8>>,
    pub(crate) fill_cache: bool,
}

impl Bounds {
    /// From the arguments of `items()`/`keys()`/`values()`/`iterator()`; `prefix` together
    /// with `start` or `stop` is a `TypeError`.
    pub(crate) fn new(
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        fill_cache: bool,
    ) -> PyResult<Bounds> {
        let lower = args::opt_vec(start, "start")?;
        let upper = args::opt_vec(stop, "stop")?;
        match args::opt_vec(prefix, "prefix")? {
            Some(_) if lower.is_some() || upper.is_some() => {
                Err(PyTypeError::new_err("prefix cannot be used together with start or stop"))
            }
            Some(p) => {
                let upper = prefix_end(&p);
                Ok(Bounds { lower: Some(p), upper, fill_cache })
            }
            None => Ok(Bounds { lower, upper, fill_cache }),
        }
    }
}

/// The smallest key after every key that starts with `prefix` (`None` if there is none: the
/// prefix is empty or all `0xff`).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut end = prefix.get(..=keep)?.to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    Some(end)
}

impl Reader {
    /// The read options: this reader's snapshot, if any (its slot read under the database's
    /// read lock: call inside [`DbHandle::with`] or [`DbHandle::adopt`]).
    fn read_options(&self) -> PyResult<talus::ReadOptions> {
        let snapshot = match &self.snap {
            Some(s) => Some(s.read(|s| s.clone())?),
            None => None,
        };
        Ok(talus::ReadOptions { snapshot, ..Default::default() })
    }

    /// The value of `key` in family `cf`, pinned (GIL released meanwhile).
    fn get_pinned(
        &self,
        py: Python<'_>,
        key: &[u8],
        cf: &Cf,
    ) -> PyResult<Option<talus::PinnedSlice>> {
        py.detach(|| {
            self.h.with(|db| match (&self.snap, cf) {
                (None, None) => db.get_pinned(key).map_err(errors::engine),
                _ => {
                    let ro = self.read_options()?;
                    family::call(cf, |c| match c {
                        Some(c) => db.get_pinned_cf_opt(c, key, &ro),
                        None => db.get_pinned_opt(key, &ro),
                    })
                }
            })?
        })
    }

    /// `get(key, default=None)`.
    pub(crate) fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        cf: &Cf,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = args::bytes(key, "key")?;
        Ok(match self.get_pinned(py, &k, cf)? {
            Some(v) => PyBytes::new(py, &v).into_any(),
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    /// `obj[key]`: the value, or `KeyError`.
    pub(crate) fn get_item<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let k = args::bytes(key, "key")?;
        match self.get_pinned(py, &k, &None)? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// `key in obj`.
    pub(crate) fn contains(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = args::bytes(key, "key")?;
        Ok(self.get_pinned(py, &k, &None)?.is_some())
    }

    /// `multi_get(keys)`: a list of values (`None` where absent), in the order of `keys`, read
    /// from one consistent view with the engine's batched MultiGet.
    pub(crate) fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        cf: &Cf,
    ) -> PyResult<Bound<'py, PyList>> {
        // A list or tuple is read in place (no iterator protocol per key).
        let objs: Vec<Bound<'py, PyAny>> = if let Ok(l) = keys.cast::<PyList>() {
            l.iter().collect()
        } else if let Ok(t) = keys.cast::<pyo3::types::PyTuple>() {
            t.iter().collect()
        } else {
            keys.try_iter()?.collect::<PyResult<_>>()?
        };
        let ks: Vec<Bytes<'_>> =
            objs.iter().map(|o| args::bytes(o, "key")).collect::<PyResult<_>>()?;
        let got = py.detach(|| {
            self.h.with(|db| -> PyResult<Vec<Option<Vec<u8>>>> {
                let ro = self.read_options()?;
                let got = family::on(cf, |c| match c {
                    Some(c) => db.multi_get_cf(c, &ks, &ro),
                    None => db.multi_get(&ks, &ro),
                })?;
                got.into_iter().map(|r| r.map_err(errors::engine)).collect()
            })?
        })?;
        // One list of the final length, filled in place (no appends).
        let none = py.None().into_bound(py);
        let out = PyList::new(
            py,
            got.iter().map(|v| match v {
                Some(v) => PyBytes::new(py, v).into_any(),
                None => none.clone(),
            }),
        )?;
        Ok(out)
    }

    /// An `Iterator` over `kind` within `b`, forward or in `reverse`.
    pub(crate) fn iter(
        &self,
        py: Python<'_>,
        kind: Kind,
        b: Bounds,
        reverse: bool,
        cf: &Cf,
    ) -> PyResult<PyIter> {
        let cursor = py.detach(|| {
            self.h.adopt(|db| {
                let raw = self.raw_iter_in(db, b, cf)?;
                Ok(CursorSlot::new(Cursor::new(raw, reverse), "the iterator"))
            })
        })?;
        Ok(PyIter::new(cursor, kind))
    }

    /// A `RawIterator` within `b`, not positioned.
    pub(crate) fn raw_iter(&self, py: Python<'_>, b: Bounds, cf: &Cf) -> PyResult<PyRawIter> {
        let raw = py.detach(|| {
            self.h.adopt(|db| Ok(CursorSlot::new(self.raw_iter_in(db, b, cf)?, "the iterator")))
        })?;
        Ok(PyRawIter::new(raw))
    }

    /// The engine's cursor over family `cf` within `b` (under the database's read lock).
    fn raw_iter_in(&self, db: &talus::Db, b: Bounds, cf: &Cf) -> PyResult<talus::RawIter> {
        let ro = self.iter_options(b)?;
        family::call(cf, |c| match c {
            Some(c) => db.raw_iter_cf(c, &ro),
            None => Ok(db.raw_iter(&ro)),
        })
    }

    fn iter_options(&self, b: Bounds) -> PyResult<talus::ReadOptions> {
        Ok(talus::ReadOptions {
            iterate_lower_bound: b.lower,
            iterate_upper_bound: b.upper,
            fill_cache: b.fill_cache,
            ..self.read_options()?
        })
    }
}
