//! The schema types: column types, values, rows, and table/index definitions.
//!
//! Plain data, no IO. [`TableDef::check_row`] validates a row against a table's columns and is
//! called by every write path before anything is encoded.

use crate::error::{Result, TableError};

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// Signed 32-bit integer.
    I32,
    /// IEEE 754 double, ordered by `f64::total_cmp`.
    F64,
    /// Arbitrary bytes.
    Bytes,
    /// UTF-8 text, ordered bytewise.
    Varchar,
    /// Microseconds since the Unix epoch (signed).
    DateTime,
}

impl ColumnType {
    /// The type's code in the catalog encoding (docs/format/table-keys.md).
    pub fn code(self) -> u8 {
        match self {
            ColumnType::I64 => 1,
            ColumnType::U64 => 2,
            ColumnType::I32 => 3,
            ColumnType::F64 => 4,
            ColumnType::Bytes => 5,
            ColumnType::Varchar => 6,
            ColumnType::DateTime => 7,
        }
    }

    /// The type for a catalog code.
    pub fn from_code(c: u8) -> Option<ColumnType> {
        Some(match c {
            1 => ColumnType::I64,
            2 => ColumnType::U64,
            3 => ColumnType::I32,
            4 => ColumnType::F64,
            5 => ColumnType::Bytes,
            6 => ColumnType::Varchar,
            7 => ColumnType::DateTime,
            _ => return None,
        })
    }
}

/// One column value.
///
/// Built from Rust's types with `From`/`into()`: each of `i64`, `u64`, `i32`, `f64`,
/// `Vec<u8>`/`&[u8]` and `String`/`&str` maps to the variant of its type, and an `Option`'s
/// `None` to [`Value::Null`]. A [`Value::DateTime`] has no Rust type of its own: build it by
/// name.
///
/// ```
/// use talus_table::Value;
/// let row: Vec<Value> = vec![7i64.into(), "alice".into(), None::<i32>.into(), (&b"\x01"[..]).into()];
/// assert_eq!(row, [Value::I64(7), Value::Varchar("alice".into()), Value::Null, Value::Bytes(vec![1])]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL (only in nullable columns).
    Null,
    /// An `I64` value.
    I64(i64),
    /// A `U64` value.
    U64(u64),
    /// An `I32` value.
    I32(i32),
    /// An `F64` value.
    F64(f64),
    /// A `Bytes` value.
    Bytes(Vec<u8>),
    /// A `Varchar` value.
    Varchar(String),
    /// A `DateTime` value, microseconds since the epoch.
    DateTime(i64),
}

impl Value {
    /// True if this value may be stored in a column of type `ty` (NULL matches every type;
    /// nullability is checked separately).
    pub fn fits(&self, ty: ColumnType) -> bool {
        matches!(
            (self, ty),
            (Value::Null, _)
                | (Value::I64(_), ColumnType::I64)
                | (Value::U64(_), ColumnType::U64)
                | (Value::I32(_), ColumnType::I32)
                | (Value::F64(_), ColumnType::F64)
                | (Value::Bytes(_), ColumnType::Bytes)
                | (Value::Varchar(_), ColumnType::Varchar)
                | (Value::DateTime(_), ColumnType::DateTime)
        )
    }
}

// `From` for each Rust type with a variant of its own (see `Value`'s doc).
macro_rules! value_from {
    ($($t:ty => $v:ident $(via $conv:ident)?),* $(,)?) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x $(.$conv())?)
            }
        }
    )*};
}

value_from! {
    i64 => I64,
    u64 => U64,
    i32 => I32,
    f64 => F64,
    Vec<u8> => Bytes,
    &[u8] => Bytes via to_vec,
    String => Varchar,
    &str => Varchar via to_string,
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(x: Option<T>) -> Value {
        x.map_or(Value::Null, Into::into)
    }
}

/// A row: one [`Value`] per column, in [`TableDef`] column order.
pub type Row = Vec<Value>;

/// A column definition.
#[derive(Clone, Debug)]
pub struct ColumnDef {
    /// Column name, unique within the table.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

/// A secondary index definition.
#[derive(Clone, Debug)]
pub struct IndexDef {
    /// Index name, unique within the table; `PRIMARY` is reserved.
    pub name: String,
    /// The indexed columns, in key order. A name ending in ` DESC` (e.g. `"price DESC"`)
    /// orders that column descending.
    pub columns: Vec<String>,
    /// Whether two rows may not share the indexed values (rows with a NULL in an indexed
    /// column are exempt, as in SQL).
    pub unique: bool,
}

/// A table definition.
#[derive(Clone, Debug)]
pub struct TableDef {
    /// Table name, unique within the catalog.
    pub name: String,
    /// The columns, in row order.
    pub columns: Vec<ColumnDef>,
    /// The primary key's columns, in key order (required, non-nullable).
    pub primary_key: Vec<String>,
    /// Secondary indexes.
    pub indexes: Vec<IndexDef>,
}

impl TableDef {
    /// The position of column `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Checks that `row` has one value per column, each of the column's type, and no NULL in
    /// a non-nullable column; the error names the first offending column.
    pub fn check_row(&self, row: &[Value]) -> Result<()> {
        if row.len() != self.columns.len() {
            let column = self.columns.get(row.len()).map_or("(extra)", |c| c.name.as_str());
            return Err(TableError::schema(
                column,
                format!(
                    "row has {} values, table {} has {} columns",
                    row.len(),
                    self.name,
                    self.columns.len()
                ),
            ));
        }
        for (c, v) in self.columns.iter().zip(row) {
            if !v.fits(c.ty) {
                return Err(TableError::schema(
                    &c.name,
                    format!("{v:?} is not of type {:?}", c.ty),
                ));
            }
            if matches!(v, Value::Null) && !c.nullable {
                return Err(TableError::schema(&c.name, "NULL in a non-nullable column"));
            }
        }
        Ok(())
    }
}

/// Scan direction.
#[derive(Clone, Copy, Debug)]
pub enum Direction {
    /// Ascending index order.
    Forward,
    /// Descending index order.
    Reverse,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> TableDef {
        TableDef {
            name: "t".into(),
            columns: vec![
                ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false },
                ColumnDef { name: "s".into(), ty: ColumnType::Varchar, nullable: true },
            ],
            primary_key: vec!["id".into()],
            indexes: vec![],
        }
    }

    #[test]
    fn check_row_names_the_column() {
        let d = def();
        assert!(d.check_row(&[Value::I64(1), Value::Null]).is_ok());
        match d.check_row(&[Value::Null, Value::Null]) {
            Err(TableError::Schema { column, .. }) => assert_eq!(column, "id"),
            other => panic!("{other:?}"),
        }
        match d.check_row(&[Value::I64(1), Value::I64(2)]) {
            Err(TableError::Schema { column, .. }) => assert_eq!(column, "s"),
            other => panic!("{other:?}"),
        }
        match d.check_row(&[Value::I64(1)]) {
            Err(TableError::Schema { column, .. }) => assert_eq!(column, "s"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn type_codes_round_trip() {
        for c in 0..=255u8 {
            if let Some(t) = ColumnType::from_code(c) {
                assert_eq!(t.code(), c);
            }
        }
        assert_eq!(ColumnType::from_code(0), None);
    }
}
