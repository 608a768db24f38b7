//! Engine options from Python: keyword arguments by RocksDB's names, a RocksDB option string
//! (`options="write_buffer_size=64M;compression=kZSTD"`) and an OPTIONS file
//! (`options_file=`), all through `talus-options`, the table the tools' flags use (one
//! validation per option, errors naming the option and the value).
//!
//! Order, later wins, as in the tools: Talus's defaults (with `create_if_missing` true), the
//! OPTIONS file, the option string, the keyword arguments. [`named`] converts the keyword
//! arguments to strings with the GIL held (a `bool` is `true`/`false`, an `int` or `float` its
//! decimal text, a `str` itself; anything else is a `TypeError` naming the option); [`build`]
//! reads the file and applies everything, and runs with the GIL released (it may read a file).
//! A bad option is `talus.InvalidArgument`; nothing is opened.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use crate::errors;

/// Where a database's options come from.
#[derive(Default)]
pub(crate) struct Sources {
    /// `options_file=`.
    pub file: Option<String>,
    /// `ignore_unknown_options=`: skip the options of the file Talus does not have.
    pub ignore_unknown: bool,
    /// `options=`: a RocksDB option string.
    pub string: Option<String>,
    /// Keyword arguments by RocksDB's names, as text, in call order.
    pub named: Vec<(String, String)>,
}

/// The keyword arguments as `(name, value text)` pairs.
pub(crate) fn named(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(kwargs) = kwargs else { return Ok(Vec::new()) };
    let mut out = Vec::with_capacity(kwargs.len());
    for (k, v) in kwargs.iter() {
        let name: String = k.extract()?;
        let text = if v.is_instance_of::<PyBool>() {
            if v.is_truthy()? { "true" } else { "false" }.to_string()
        } else if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
            v.str()?.to_string()
        } else if let Ok(s) = v.cast::<PyString>() {
            s.to_str()?.to_string()
        } else {
            let ty = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            return Err(PyTypeError::new_err(format!(
                "option {name} must be a bool, int, float or str, not {ty}"
            )));
        };
        out.push((name, text));
    }
    Ok(out)
}

/// Talus's options from `src` (with the GIL released: this may read the OPTIONS file).
pub(crate) fn build(src: &Sources) -> PyResult<talus::Options> {
    let mut o = talus::Options { create_if_missing: true, ..Default::default() };
    if let Some(path) = &src.file {
        talus_options::apply_file(&mut o, path, src.ignore_unknown).map_err(errors::invalid)?;
    }
    if let Some(s) = &src.string {
        talus_options::apply_string(&mut o, s)
            .map_err(|e| errors::invalid(format!("options: {e}")))?;
    }
    for (name, value) in &src.named {
        talus_options::engine::set(&mut o, name, value).map_err(errors::invalid)?;
    }
    Ok(o)
}
