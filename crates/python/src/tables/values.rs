//! Python values to the table layer's and back: column values by the column's type, rows from
//! a sequence or a mapping, primary keys and scan prefixes, table definitions from tuples.
//!
//! All of it runs with the GIL held and touches no lock and no disk. A Python value of the
//! wrong type for its column raises `TypeError` naming the column; what the schema refuses
//! beyond that (NULL in a non-null column, a duplicate key) is the table layer's
//! `talus.SchemaError`/`talus.DuplicateKey`, raised when the operation runs.
//!
//! Types: `i64`, `u64`, `i32` take an `int`; `f64` a `float` (or an `int`); `bytes` any bytes-like
//! object; `varchar` (or `str`) a `str`; `datetime` a timezone-aware `datetime.datetime` or
//! an `int` of microseconds since the Unix epoch, and reads back as an aware UTC `datetime`.
//! `None` is NULL in every type.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMapping, PyString, PyTuple};
use talus_table::{ColumnDef, ColumnType, IndexDef, Row, TableDef, Value};

use crate::args;
use crate::errors;

/// The type named `name` (`i64`, `u64`, `i32`, `f64`, `bytes`, `varchar`/`str`, `datetime`).
pub(crate) fn column_type(name: &str) -> PyResult<ColumnType> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "i64" | "int64" | "bigint" => ColumnType::I64,
        "u64" | "uint64" => ColumnType::U64,
        "i32" | "int32" | "int" => ColumnType::I32,
        "f64" | "float64" | "double" | "float" => ColumnType::F64,
        "bytes" | "blob" => ColumnType::Bytes,
        "varchar" | "str" | "text" => ColumnType::Varchar,
        "datetime" | "timestamp" => ColumnType::DateTime,
        _ => {
            return Err(errors::invalid(format!(
                "unknown column type {name:?} (i64, u64, i32, f64, bytes, varchar, datetime)"
            )))
        }
    })
}

/// The name [`column_type`] takes for `ty`.
pub(crate) fn type_name(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::I64 => "i64",
        ColumnType::U64 => "u64",
        ColumnType::I32 => "i32",
        ColumnType::F64 => "f64",
        ColumnType::Bytes => "bytes",
        ColumnType::Varchar => "varchar",
        ColumnType::DateTime => "datetime",
    }
}

/// A table definition: `columns` as `(name, type)` or `(name, type, nullable)` tuples,
/// `primary_key` column names, `indexes` as `(name, columns)` or `(name, columns, unique)`.
pub(crate) fn table_def(
    name: String,
    columns: &Bound<'_, PyAny>,
    primary_key: Vec<String>,
    indexes: Option<&Bound<'_, PyAny>>,
) -> PyResult<TableDef> {
    let mut cols = Vec::new();
    for c in columns.try_iter()? {
        let c = c?;
        let t = c.cast::<PyTuple>().map_err(|_| {
            PyTypeError::new_err("a column is a tuple (name, type) or (name, type, nullable)")
        })?;
        let (name, ty, nullable) = match t.len() {
            2 => (t.get_item(0)?.extract()?, t.get_item(1)?.extract::<String>()?, false),
            3 => (t.get_item(0)?.extract()?, t.get_item(1)?.extract()?, t.get_item(2)?.extract()?),
            _ => return Err(PyTypeError::new_err("a column is (name, type[, nullable])")),
        };
        cols.push(ColumnDef { name, ty: column_type(&ty)?, nullable });
    }
    let mut idx = Vec::new();
    if let Some(indexes) = indexes.filter(|i| !i.is_none()) {
        for i in indexes.try_iter()? {
            idx.push(index_def(&i?)?);
        }
    }
    Ok(TableDef { name, columns: cols, primary_key, indexes: idx })
}

/// An index definition from `(name, columns)` or `(name, columns, unique)`.
pub(crate) fn index_def(i: &Bound<'_, PyAny>) -> PyResult<IndexDef> {
    let t = i.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err("an index is a tuple (name, columns) or (name, columns, unique)")
    })?;
    let unique = match t.len() {
        2 => false,
        3 => t.get_item(2)?.extract()?,
        _ => return Err(PyTypeError::new_err("an index is (name, columns[, unique])")),
    };
    Ok(IndexDef { name: t.get_item(0)?.extract()?, columns: t.get_item(1)?.extract()?, unique })
}

/// `obj` as a value of column `col`.
pub(crate) fn value(obj: &Bound<'_, PyAny>, col: &str, ty: ColumnType) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    let wrong = |_: PyErr| {
        let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!("column {col} is {}, not {got}", type_name(ty)))
    };
    Ok(match ty {
        ColumnType::I64 => Value::I64(obj.extract().map_err(wrong)?),
        ColumnType::U64 => Value::U64(obj.extract().map_err(wrong)?),
        ColumnType::I32 => Value::I32(obj.extract().map_err(wrong)?),
        ColumnType::F64 => Value::F64(obj.extract().map_err(wrong)?),
        ColumnType::Varchar => {
            let s = obj.cast::<PyString>().map_err(|e| wrong(e.into()))?;
            Value::Varchar(s.to_str()?.to_string())
        }
        ColumnType::Bytes => Value::Bytes(args::bytes(obj, col)?.to_vec()),
        ColumnType::DateTime => Value::DateTime(micros(obj).map_err(wrong)?),
    })
}

/// Microseconds since the epoch of an `int` or an aware `datetime`.
fn micros(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(us) = obj.extract::<i64>() {
        return Ok(us);
    }
    let py = obj.py();
    let dt = py.import("datetime")?;
    if !obj.is_instance(&dt.getattr("datetime")?)? || obj.getattr("tzinfo")?.is_none() {
        return Err(PyTypeError::new_err("an aware datetime"));
    }
    let delta = obj.call_method1("__sub__", (epoch(py)?,))?;
    let days: i64 = delta.getattr("days")?.extract()?;
    let secs: i64 = delta.getattr("seconds")?.extract()?;
    let us: i64 = delta.getattr("microseconds")?.extract()?;
    Ok((days * 86_400 + secs) * 1_000_000 + us)
}

/// `datetime(1970, 1, 1, tzinfo=timezone.utc)`.
fn epoch(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let dt = py.import("datetime")?;
    let utc = dt.getattr("timezone")?.getattr("utc")?;
    let kw = PyDict::new(py);
    kw.set_item("tzinfo", utc)?;
    dt.getattr("datetime")?.call((1970, 1, 1), Some(&kw))
}

/// A value as Python: `int`, `float`, `bytes`, `str`, an aware UTC `datetime`, `None`.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::I64(x) => x.into_pyobject(py)?.into_any(),
        Value::U64(x) => x.into_pyobject(py)?.into_any(),
        Value::I32(x) => x.into_pyobject(py)?.into_any(),
        Value::F64(x) => x.into_pyobject(py)?.into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::Varchar(s) => PyString::new(py, s).into_any(),
        Value::DateTime(us) => {
            let td = py.import("datetime")?.getattr("timedelta")?;
            let kw = PyDict::new(py);
            kw.set_item("microseconds", *us)?;
            epoch(py)?.call_method1("__add__", (td.call((), Some(&kw))?,))?
        }
    })
}

/// A row as a tuple.
pub(crate) fn row_to_py<'py>(py: Python<'py>, row: &Row) -> PyResult<Bound<'py, PyTuple>> {
    let items = row.iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)
}

/// Rows as a list of tuples (`None` for an absent one).
pub(crate) fn rows_to_py<'py>(
    py: Python<'py>,
    rows: &[Option<Row>],
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for r in rows {
        match r {
            Some(r) => out.append(row_to_py(py, r)?)?,
            None => out.append(py.None())?,
        }
    }
    Ok(out)
}

/// A row of `def` from a sequence (one value per column, in order) or a mapping (column name
/// to value; a missing column is `None`).
pub(crate) fn row(def: &TableDef, obj: &Bound<'_, PyAny>) -> PyResult<Row> {
    if let Ok(m) = obj.cast::<PyMapping>() {
        for k in m.keys()?.iter() {
            let k: String = k.extract()?;
            if def.column_index(&k).is_none() {
                return Err(errors::SchemaError::new_err(format!(
                    "column {k}: no such column in table {}",
                    def.name
                )));
            }
        }
        return def
            .columns
            .iter()
            .map(|c| match m.get_item(&c.name) {
                Ok(v) => value(&v, &c.name, c.ty),
                Err(_) => Ok(Value::Null),
            })
            .collect();
    }
    let items: Vec<Bound<'_, PyAny>> = obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err("a row is a sequence of values or a mapping"))?
        .collect::<PyResult<_>>()?;
    if items.len() != def.columns.len() {
        return Err(errors::SchemaError::new_err(format!(
            "row has {} values, table {} has {} columns",
            items.len(),
            def.name,
            def.columns.len()
        )));
    }
    def.columns.iter().zip(&items).map(|(c, v)| value(v, &c.name, c.ty)).collect()
}

/// The columns (name and type) a key of `index` starts with: the primary key's for
/// `PRIMARY`, else the index's (a trailing ` DESC` dropped).
pub(crate) fn key_columns(def: &TableDef, index: &str) -> PyResult<Vec<(String, ColumnType)>> {
    let names: Vec<&str> = if index == "PRIMARY" {
        def.primary_key.iter().map(String::as_str).collect()
    } else {
        let i = def.indexes.iter().find(|i| i.name == index);
        let i = i.ok_or_else(|| errors::NoSuchIndex::new_err(format!("no index {index}")))?;
        i.columns.iter().map(|c| c.strip_suffix(" DESC").unwrap_or(c).trim()).collect()
    };
    names
        .into_iter()
        .map(|n| {
            let ty = def.columns.iter().find(|c| c.name == n).map(|c| c.ty);
            let ty = ty.ok_or_else(|| {
                errors::SchemaError::new_err(format!("column {n}: no such column"))
            })?;
            Ok((n.to_string(), ty))
        })
        .collect()
}

/// Values for the leading `cols` from `obj`: a tuple or list of values, or one value.
pub(crate) fn key(cols: &[(String, ColumnType)], obj: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    let items: Vec<Bound<'_, PyAny>> =
        if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
            obj.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![obj.clone()]
        };
    if items.len() > cols.len() {
        return Err(errors::SchemaError::new_err(format!(
            "key has {} values, the index has {} columns",
            items.len(),
            cols.len()
        )));
    }
    items.iter().zip(cols).map(|(v, (n, ty))| value(v, n, *ty)).collect()
}
