//! Keys and values from Python: `bytes` borrowed in place, any other buffer (`bytearray`,
//! `memoryview`, `array('B')`, `mmap`) copied, everything else refused with a `TypeError`
//! that names the argument.
//!
//! Called with the GIL held, before it is released for the engine call. A `bytes` object is
//! immutable and the caller's reference keeps it alive for the whole call, so its contents are
//! read in place with the GIL released (no copy). Another buffer's contents could be changed
//! by another thread once the GIL is released, so they are copied first; a buffer longer than
//! the engine's limit (`talus::batch::MAX_ENTRY_LEN`) is refused with `talus.InvalidArgument`
//! before anything is copied.

use std::ops::Deref;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

/// A key or value taken from a Python argument.
pub(crate) enum Bytes<'a> {
    /// The contents of a `bytes` object, in place.
    Borrowed(&'a [u8]),
    /// A copy of another buffer's contents.
    Owned(Vec<u8>),
}

impl Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// `obj` as bytes, or `TypeError: {name} must be bytes or a bytes-like object, not T`.
pub(crate) fn bytes<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Bytes<'a>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Bytes::Borrowed(b.as_bytes()));
    }
    let buf = match PyBuffer::<u8>::get(obj) {
        Ok(buf) => buf,
        Err(_) => return Err(not_bytes(obj, name)),
    };
    if buf.item_count() > talus::batch::MAX_ENTRY_LEN {
        return Err(errors::invalid(format!(
            "{name} is too large: {} bytes (at most {})",
            buf.item_count(),
            talus::batch::MAX_ENTRY_LEN
        )));
    }
    Ok(Bytes::Owned(buf.to_vec(obj.py())?))
}

/// `obj` as bytes, `None` for `None`.
pub(crate) fn opt_bytes<'a>(
    obj: Option<&'a Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<Bytes<'a>>> {
    match obj {
        Some(o) if !o.is_none() => bytes(o, name).map(Some),
        _ => Ok(None),
    }
}

/// An owned copy of `obj`'s bytes (for bounds kept beyond the call), `None` for `None`.
pub(crate) fn opt_vec(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Vec<u8>>> {
    Ok(opt_bytes(obj, name)?.map(|b| b.to_vec()))
}

/// The `TypeError` for an argument that is not bytes.
fn not_bytes(obj: &Bound<'_, PyAny>, name: &str) -> PyErr {
    let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "{name} must be bytes or a bytes-like object (bytearray, memoryview), not {ty}"
    ))
}
