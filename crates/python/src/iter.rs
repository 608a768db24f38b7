//! `talus.Iterator`: what `items()`, `keys()` and `values()` return, a Python iterator over a
//! key range, forward or reversed, read in chunks.
//!
//! Each refill releases the GIL once and reads a chunk of entries under the cursor's slot
//! (`Cursor::fill`: 1 entry, then twice as many each time up to [`MAX_ITEMS`], at most
//! [`MAX_BYTES`] of keys and values but always one entry), so the GIL release, the lock and
//! the engine's step are paid once per chunk, not once per entry; `__next__` then hands out
//! the chunk's entries with the GIL held and no lock. An error of the engine is raised after
//! the entries read before it. Once the database (or the iterator) is closed, `__next__`
//! raises `talus.Closed`, buffered entries or not.
//!
//! One iterator is not for two threads at once: the second `__next__` raises `RuntimeError`
//! (PyO3's borrow check) instead of interleaving.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors;
use crate::slot::CursorSlot;

/// Largest number of entries read per chunk.
const MAX_ITEMS: usize = 256;
/// Bytes of keys and values after which a chunk stops (it always holds one entry).
const MAX_BYTES: usize = 256 << 10;

/// What an iterator yields.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `(key, value)` tuples.
    Items,
    /// Keys.
    Keys,
    /// Values.
    Values,
}

/// The engine's cursor and where the walk stands; lives in a slot the database's close empties.
pub(crate) struct Cursor {
    raw: talus::RawIter,
    reverse: bool,
    started: bool,
}

impl Cursor {
    /// A walk over `raw` (not positioned yet), backwards if `reverse`.
    pub(crate) fn new(raw: talus::RawIter, reverse: bool) -> Cursor {
        Cursor { raw, reverse, started: false }
    }

    /// Reads up to `want` entries into `chunk` (which must be drained). GIL released.
    fn fill(&mut self, chunk: &mut Chunk, want: usize, kind: Kind) {
        chunk.clear();
        while chunk.spans.len() < want && (chunk.data.len() < MAX_BYTES || chunk.spans.is_empty()) {
            match (self.started, self.reverse) {
                (false, false) => self.raw.seek_to_first(),
                (false, true) => self.raw.seek_to_last(),
                (true, false) => self.raw.next(),
                (true, true) => self.raw.prev(),
            }
            self.started = true;
            if !self.raw.valid() {
                chunk.done = true;
                chunk.error = self.raw.status().err();
                return;
            }
            let key = if kind == Kind::Values { &[][..] } else { self.raw.key() };
            let value = if kind == Kind::Keys { &[][..] } else { self.raw.value() };
            chunk.data.extend_from_slice(key);
            chunk.data.extend_from_slice(value);
            chunk.spans.push((key.len(), value.len()));
        }
    }
}

/// Entries read by one refill: keys and values back to back in `data`, their lengths in
/// `spans`; `next`/`pos` walk them.
#[derive(Default)]
struct Chunk {
    data: Vec<u8>,
    spans: Vec<(usize, usize)>,
    next: usize,
    pos: usize,
    /// The cursor reached the end (or an error): no refill after this chunk.
    done: bool,
    /// The error that ended the walk, raised after the chunk's entries.
    error: Option<talus::Error>,
}

impl Chunk {
    fn clear(&mut self) {
        self.data.clear();
        self.spans.clear();
        self.next = 0;
        self.pos = 0;
    }

    /// The next entry's key and value.
    fn pop(&mut self) -> Option<(&[u8], &[u8])> {
        let &(kl, vl) = self.spans.get(self.next)?;
        self.next += 1;
        let key = self.data.get(self.pos..self.pos + kl)?;
        let value = self.data.get(self.pos + kl..self.pos + kl + vl)?;
        self.pos += kl + vl;
        Some((key, value))
    }
}

/// A Python iterator over a key range; see the module doc.
#[pyclass(module = "talus", name = "Iterator")]
pub struct PyIter {
    cursor: Arc<CursorSlot<Cursor>>,
    chunk: Chunk,
    want: usize,
    kind: Kind,
}

impl PyIter {
    pub(crate) fn new(cursor: Arc<CursorSlot<Cursor>>, kind: Kind) -> PyIter {
        PyIter { cursor, chunk: Chunk::default(), want: 1, kind }
    }
}

#[pymethods]
impl PyIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        mut slf: PyRefMut<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if slf.cursor.is_closed() {
            return Err(slf.cursor.closed_error());
        }
        let this = &mut *slf;
        if this.chunk.next == this.chunk.spans.len() {
            if let Some(e) = this.chunk.error.take() {
                return Err(errors::engine(e));
            }
            if this.chunk.done {
                return Ok(None);
            }
            let (cursor, chunk, want, kind) = (&this.cursor, &mut this.chunk, this.want, this.kind);
            py.detach(|| cursor.with(|c| c.fill(chunk, want, kind)))?;
            this.want = (this.want * 2).min(MAX_ITEMS);
            if this.chunk.spans.is_empty() {
                return match this.chunk.error.take() {
                    Some(e) => Err(errors::engine(e)),
                    None => Ok(None),
                };
            }
        }
        let kind = this.kind;
        let Some((k, v)) = this.chunk.pop() else { return Ok(None) };
        Ok(Some(match kind {
            Kind::Items => PyTuple::new(py, [PyBytes::new(py, k), PyBytes::new(py, v)])?.into_any(),
            Kind::Keys => PyBytes::new(py, k).into_any(),
            Kind::Values => PyBytes::new(py, v).into_any(),
        }))
    }

    /// Releases the iterator's view of the database now (the `with` form calls it); later
    /// `__next__` calls raise `talus.Closed`.
    fn close(&self, py: Python<'_>) {
        py.detach(|| crate::slot::Close::close(&*self.cursor));
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}
