//! The row codec (docs/format/table-keys.md, "Row values", version 1): a compact, not
//! order-preserving encoding of a whole row, stored as the value of the primary-key entry.
//!
//! Layout: `column count (varint)`, a null bitmap of `ceil(n/8)` bytes (bit `i % 8` of byte
//! `i / 8` set = column `i` is NULL), then each non-NULL column in order: `I64`, `I32`,
//! `DateTime` zigzag varint; `U64` varint; `F64` 8 bytes little-endian; `Bytes`/`Varchar`
//! varint length then the bytes. Pure functions; the decoder checks every bound and returns
//! [`TableError::Corruption`], never panics.

use crate::error::{Result, TableError};
use crate::schema::{ColumnType, Value};

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends the encoding of `row` (already checked against `types`) to `out`.
pub fn encode_row(out: &mut Vec<u8>, row: &[Value]) {
    put_varint(out, row.len() as u64);
    let bm = out.len();
    out.resize(bm + row.len().div_ceil(8), 0);
    for (i, v) in row.iter().enumerate() {
        match v {
            Value::Null => out[bm + i / 8] |= 1 << (i % 8),
            Value::I64(x) | Value::DateTime(x) => put_varint(out, zigzag(*x)),
            Value::I32(x) => put_varint(out, zigzag(i64::from(*x))),
            Value::U64(x) => put_varint(out, *x),
            Value::F64(f) => out.extend_from_slice(&f.to_le_bytes()),
            Value::Bytes(b) => {
                put_varint(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Value::Varchar(s) => {
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, what: &str) -> TableError {
        TableError::corrupt(format!("row value: {what} at offset {}", self.pos))
    }
    /// A varint; one byte (below 128: every count, small integer and short length) is read
    /// without the loop.
    #[inline]
    fn varint(&mut self) -> Result<u64> {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            _ => self.varint_long(),
        }
    }
    fn varint_long(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or_else(|| self.err("truncated varint"))?;
            self.pos += 1;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }
    fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let end = usize::try_from(n).ok().and_then(|n| self.pos.checked_add(n));
        match end.and_then(|e| self.buf.get(self.pos..e)) {
            Some(s) => {
                self.pos += s.len();
                Ok(s)
            }
            None => Err(self.err("truncated field")),
        }
    }
}

/// Walks an encoded row of `types`, calling `keep(i)` to ask whether column `i` is wanted and
/// `put(i, value)` with each wanted one (NULLs included); unwanted columns are skipped without
/// being materialized. Checks the count, every bound and the end, as [`decode_row`] promises.
fn walk(
    buf: &[u8],
    types: &[ColumnType],
    keep: impl Fn(usize) -> bool,
    mut put: impl FnMut(usize, Value),
) -> Result<()> {
    let mut r = Reader { buf, pos: 0 };
    let n = r.varint()?;
    if n != types.len() as u64 {
        return Err(TableError::corrupt(format!(
            "row value has {n} columns, table has {}",
            types.len()
        )));
    }
    let bitmap = r.take(types.len().div_ceil(8) as u64)?;
    for (i, ty) in types.iter().enumerate() {
        let wanted = keep(i);
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            if wanted {
                put(i, Value::Null);
            }
            continue;
        }
        let v = match ty {
            ColumnType::I64 => Value::I64(unzigzag(r.varint()?)),
            ColumnType::DateTime => Value::DateTime(unzigzag(r.varint()?)),
            ColumnType::I32 => {
                let v = unzigzag(r.varint()?);
                Value::I32(i32::try_from(v).map_err(|_| r.err("i32 out of range"))?)
            }
            ColumnType::U64 => Value::U64(r.varint()?),
            ColumnType::F64 => {
                let b = r.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Value::F64(f64::from_le_bytes(a))
            }
            ColumnType::Bytes | ColumnType::Varchar if !wanted => {
                let n = r.varint()?;
                r.take(n)?;
                continue;
            }
            ColumnType::Bytes => {
                let n = r.varint()?;
                Value::Bytes(r.take(n)?.to_vec())
            }
            ColumnType::Varchar => {
                let n = r.varint()?;
                let at = r.pos;
                let s = r.take(n)?;
                Value::Varchar(String::from_utf8(s.to_vec()).map_err(|_| {
                    TableError::corrupt(format!("row value: varchar at offset {at} is not UTF-8"))
                })?)
            }
        };
        if wanted {
            put(i, v);
        }
    }
    if r.pos != buf.len() {
        return Err(r.err("trailing bytes"));
    }
    Ok(())
}

/// Decodes a row of the given column types.
pub fn decode_row(buf: &[u8], types: &[ColumnType]) -> Result<Vec<Value>> {
    let mut row = Vec::with_capacity(types.len());
    walk(buf, types, |_| true, |_, v| row.push(v))?;
    Ok(row)
}

/// Decodes only the columns at positions `wanted` (in that order; a position may repeat) of a
/// row of `types`, without materializing the others: `decode_row(..)` projected on `wanted`,
/// with the same checks of the row's structure (the text of skipped columns is not checked for
/// UTF-8).
pub fn decode_columns(buf: &[u8], types: &[ColumnType], wanted: &[usize]) -> Result<Vec<Value>> {
    if let Some(&bad) = wanted.iter().find(|&&c| c >= types.len()) {
        return Err(TableError::corrupt(format!("column {bad} of a {}-column row", types.len())));
    }
    let mut out = vec![Value::Null; wanted.len()];
    walk(
        buf,
        types,
        |i| wanted.contains(&i),
        |i, v| {
            let mut slots = wanted.iter().enumerate().filter(|(_, &c)| c == i).map(|(j, _)| j);
            if let Some(first) = slots.next() {
                for j in slots {
                    out[j] = v.clone();
                }
                out[first] = v;
            }
        },
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_bytes_v1() {
        let row = vec![
            Value::I64(-1),
            Value::Null,
            Value::U64(300),
            Value::Varchar("hi".into()),
            Value::I32(2),
            Value::F64(1.0),
            Value::DateTime(1),
            Value::Bytes(vec![]),
            Value::Null,
        ];
        let mut out = Vec::new();
        encode_row(&mut out, &row);
        assert_eq!(
            out,
            [
                9,
                0b0000_0010,
                0b0000_0001, // count, bitmap (columns 1 and 8 NULL)
                0x01,        // -1 zigzag
                0xAC,
                0x02, // 300
                2,
                b'h',
                b'i', // "hi"
                4,    // 2 zigzag
                0,
                0,
                0,
                0,
                0,
                0,
                0xF0,
                0x3F, // 1.0 LE
                2,    // 1 zigzag
                0,    // empty bytes
            ]
        );
        let types = [
            ColumnType::I64,
            ColumnType::I32,
            ColumnType::U64,
            ColumnType::Varchar,
            ColumnType::I32,
            ColumnType::F64,
            ColumnType::DateTime,
            ColumnType::Bytes,
            ColumnType::Varchar,
        ];
        assert_eq!(decode_row(&out, &types).unwrap(), row);
    }

    #[test]
    fn bad_bytes_are_corruption() {
        let t = [ColumnType::Varchar];
        for bad in
            [&[][..], &[2, 0], &[1, 0, 5, b'a'], &[1, 0, 1, 0xFF], &[1, 0, 0, 9], &[1, 0, 0xFF]]
        {
            assert!(matches!(decode_row(bad, &t), Err(TableError::Corruption { .. })), "{bad:?}");
        }
        assert!(decode_row(
            &[1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1],
            &[ColumnType::U64]
        )
        .is_err());
        assert!(decode_row(&[1, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0x1F], &[ColumnType::I32]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(a: i64, b: Option<u64>, c: i32, d: f64, e: Vec<u8>, f in "\\PC{0,8}", g: Option<i64>) {
            let row = vec![
                Value::I64(a),
                b.map_or(Value::Null, Value::U64),
                Value::I32(c),
                Value::F64(d),
                Value::Bytes(e),
                Value::Varchar(f),
                g.map_or(Value::Null, Value::DateTime),
            ];
            let types = [ColumnType::I64, ColumnType::U64, ColumnType::I32, ColumnType::F64, ColumnType::Bytes, ColumnType::Varchar, ColumnType::DateTime];
            let mut out = Vec::new();
            encode_row(&mut out, &row);
            let back = decode_row(&out, &types).unwrap();
            prop_assert_eq!(back.len(), row.len());
            for (x, y) in back.iter().zip(&row) {
                match (x, y) {
                    (Value::F64(p), Value::F64(q)) => prop_assert_eq!(p.to_bits(), q.to_bits()),
                    _ => prop_assert_eq!(x, y),
                }
            }
        }

        #[test]
        fn decode_columns_is_a_projection(a: i64, b: Option<u64>, f in "\\PC{0,8}", e: Vec<u8>, wanted in proptest::collection::vec(0..5usize, 0..7)) {
            let row = vec![Value::I64(a), b.map_or(Value::Null, Value::U64), Value::Varchar(f), Value::Bytes(e), Value::Null];
            let types = [ColumnType::I64, ColumnType::U64, ColumnType::Varchar, ColumnType::Bytes, ColumnType::I32];
            let mut out = Vec::new();
            encode_row(&mut out, &row);
            let want: Vec<Value> = wanted.iter().map(|&i| row[i].clone()).collect();
            prop_assert_eq!(decode_columns(&out, &types, &wanted).unwrap(), want);
            // A truncated row is an error, whatever is wanted.
            prop_assert!(decode_columns(&out[..out.len() - 1], &types, &wanted).is_err());
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
            let _ = decode_row(&bytes, &[ColumnType::I32, ColumnType::Varchar, ColumnType::F64, ColumnType::Bytes]);
            let _ = decode_columns(&bytes, &[ColumnType::I32, ColumnType::Varchar, ColumnType::F64, ColumnType::Bytes], &[1, 3, 1]);
        }
    }
}
