//! Memcomparable key encoding (docs/format/table-keys.md, version 1): the byte order of two
//! encoded keys equals the order of the values they encode, column by column.
//!
//! Pure functions, no IO, no locks. Encoders assume the value was checked against its column
//! type ([`crate::TableDef::check_row`]); decoders treat their input as untrusted and return
//! [`TableError::Corruption`] on any malformed byte, never panic.
//!
//! Per column: a nullable column starts with a marker, `0x00` NULL (nothing follows) or `0x01`
//! (the value follows); non-nullable columns have no marker. Values: `I64`/`DateTime` 8 bytes
//! big-endian with the sign bit flipped; `I32` 4 bytes the same way; `U64` 8 bytes big-endian;
//! `F64` the IEEE bits big-endian, all bits flipped if the sign bit is set, else only the sign
//! bit (so the order is `f64::total_cmp`); `Bytes`/`Varchar` the bytes with every `0x00`
//! written as `0x00 0xFF`, then the terminator `0x00 0x01`. A descending column is the
//! ascending encoding (marker included) with every byte inverted.

use crate::error::{Result, TableError};
use crate::schema::{ColumnType, Value};

/// How one key column is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyCol {
    /// The column's type.
    pub ty: ColumnType,
    /// Whether the column is nullable (then a null marker precedes the value).
    pub nullable: bool,
    /// Descending order (every byte of the column's encoding inverted).
    pub desc: bool,
}

/// Bytes of the index id prefix every table key starts with.
pub const INDEX_ID_LEN: usize = 4;

/// Appends the 4-byte big-endian index id.
pub fn put_index_id(out: &mut Vec<u8>, id: u32) {
    out.extend_from_slice(&id.to_be_bytes());
}

/// The index id a key starts with.
pub fn index_id_of(key: &[u8]) -> Result<u32> {
    match key.get(..INDEX_ID_LEN) {
        Some(b) => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(TableError::corrupt(format!("key of {} bytes has no index id", key.len()))),
    }
}

/// Appends the encoding of `v` as column `col`. `v` must fit `col.ty` (NULL only if nullable).
pub fn encode_value(out: &mut Vec<u8>, v: &Value, col: &KeyCol) {
    let start = out.len();
    if col.nullable {
        out.push(if matches!(v, Value::Null) { 0x00 } else { 0x01 });
    }
    match v {
        Value::Null => {}
        Value::I64(x) | Value::DateTime(x) => {
            out.extend_from_slice(&((*x as u64) ^ (1 << 63)).to_be_bytes())
        }
        Value::I32(x) => out.extend_from_slice(&((*x as u32) ^ (1 << 31)).to_be_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::F64(f) => {
            let b = f.to_bits();
            let m = if b >> 63 == 1 { !b } else { b ^ (1 << 63) };
            out.extend_from_slice(&m.to_be_bytes());
        }
        Value::Bytes(b) => encode_escaped(out, b),
        Value::Varchar(s) => encode_escaped(out, s.as_bytes()),
    }
    if col.desc {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
}

fn encode_escaped(out: &mut Vec<u8>, b: &[u8]) {
    for &c in b {
        out.push(c);
        if c == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// A bounds-checked reader over an encoded key.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    mask: u8,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b =
            self.buf.get(self.pos).copied().ok_or_else(|| {
                TableError::corrupt(format!("key truncated at offset {}", self.pos))
            })?;
        self.pos += 1;
        Ok(b ^ self.mask)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        for x in &mut a {
            *x = self.byte()?;
        }
        Ok(a)
    }
    fn escaped(&mut self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        loop {
            let b = self.byte()?;
            if b != 0 {
                v.push(b);
                continue;
            }
            match self.byte()? {
                0xFF => v.push(0),
                0x01 => return Ok(v),
                x => {
                    return Err(TableError::corrupt(format!(
                        "bad escape 0x00 0x{x:02x} at key offset {}",
                        self.pos - 1
                    )))
                }
            }
        }
    }
}

/// Decodes one column at `*pos`, advancing `*pos` past it.
pub fn decode_value(buf: &[u8], pos: &mut usize, col: &KeyCol) -> Result<Value> {
    let mut r = Reader { buf, pos: *pos, mask: if col.desc { 0xFF } else { 0 } };
    if col.nullable {
        match r.byte()? {
            0x00 => {
                *pos = r.pos;
                return Ok(Value::Null);
            }
            0x01 => {}
            m => {
                return Err(TableError::corrupt(format!(
                    "bad null marker 0x{m:02x} at key offset {}",
                    *pos
                )))
            }
        }
    }
    let v = match col.ty {
        ColumnType::I64 => Value::I64((u64::from_be_bytes(r.array()?) ^ (1 << 63)) as i64),
        ColumnType::DateTime => {
            Value::DateTime((u64::from_be_bytes(r.array()?) ^ (1 << 63)) as i64)
        }
        ColumnType::I32 => Value::I32((u32::from_be_bytes(r.array()?) ^ (1 << 31)) as i32),
        ColumnType::U64 => Value::U64(u64::from_be_bytes(r.array()?)),
        ColumnType::F64 => {
            let m = u64::from_be_bytes(r.array()?);
            let b = if m >> 63 == 1 { m ^ (1 << 63) } else { !m };
            Value::F64(f64::from_bits(b))
        }
        ColumnType::Bytes => Value::Bytes(r.escaped()?),
        ColumnType::Varchar => {
            let at = r.pos;
            Value::Varchar(String::from_utf8(r.escaped()?).map_err(|_| {
                TableError::corrupt(format!("varchar at key offset {at} is not UTF-8"))
            })?)
        }
    };
    *pos = r.pos;
    Ok(v)
}

/// Appends the encodings of `vals` as the columns `cols` (pairwise).
pub fn encode_values<'a>(
    out: &mut Vec<u8>,
    vals: impl IntoIterator<Item = &'a Value>,
    cols: &[KeyCol],
) {
    for (v, c) in vals.into_iter().zip(cols) {
        encode_value(out, v, c);
    }
}

/// Decodes `cols.len()` columns starting at `*pos`.
///
/// A plain loop into a vector of the right size, not `collect::<Result<Vec<_>>>()`: that goes
/// through std's generic shunt adapters, which the compiler may leave out of line depending
/// on how the crate is split into codegen units (about 100 more instructions per call when it
/// did: issue 38's `range-covered-si.range100` step at 17e6f2e, with no change to this code).
pub fn decode_values(buf: &[u8], pos: &mut usize, cols: &[KeyCol]) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        out.push(decode_value(buf, pos, c)?);
    }
    Ok(out)
}

/// The smallest key greater than every key starting with `prefix`, or `None` if there is none
/// (the prefix is all `0xFF`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut v = prefix.to_vec();
    while let Some(last) = v.pop() {
        if last != 0xFF {
            v.push(last + 1);
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests;
