//! The merge operators RocksDB ships (`utilities/merge_operators/`), with its names and
//! nicknames, so that `talus db_bench --merge_operator=uint64add` and an OPTIONS file's
//! `merge_operator=UInt64AddOperator` mean what they mean to RocksDB.

use std::sync::Arc;

use super::{MergeError, MergeOperator};

/// Every built-in operator as `(name, nickname)`; [`builtin_by_name`] takes either.
pub const BUILTIN_NAMES: &[(&str, &str)] = &[
    ("UInt64AddOperator", "uint64add"),
    ("StringAppendOperator", "stringappend"),
    ("StringAppendTESTOperator", "stringappendtest"),
    ("PutOperator", "put"),
    ("MaxOperator", "max"),
];

/// The built-in operator called `name` (its name or nickname, as in [`BUILTIN_NAMES`]; `put_v1`
/// is `put`), with RocksDB's defaults (string append's delimiter is `,`).
///
/// ```
/// let op = talus::merge::builtin_by_name("uint64add").unwrap();
/// assert_eq!(op.name(), "UInt64AddOperator");
/// assert!(talus::merge::builtin_by_name("nosuch").is_none());
/// ```
pub fn builtin_by_name(name: &str) -> Option<Arc<dyn MergeOperator>> {
    Some(match name {
        "UInt64AddOperator" | "uint64add" => Arc::new(UInt64AddOperator),
        "StringAppendOperator" | "stringappend" => Arc::new(StringAppendOperator::new(",")),
        "StringAppendTESTOperator" | "stringappendtest" => {
            Arc::new(StringAppendTestOperator(StringAppendOperator::new(",")))
        }
        "PutOperator" | "put" | "put_v1" => Arc::new(PutOperator),
        "MaxOperator" | "max" => Arc::new(MaxOperator),
        _ => return None,
    })
}

/// Adds 64-bit unsigned integers stored as 8 little-endian bytes, wrapping (RocksDB's
/// `UInt64AddOperator`, nickname `uint64add`). As RocksDB's, an operand or base of another
/// length counts as 0 (RocksDB logs it as "uint64 value corruption").
///
/// ```
/// use talus::MergeOperator;
/// let op = talus::merge::UInt64AddOperator;
/// let v = op.full_merge(b"k", Some(&5u64.to_le_bytes()), &[&2u64.to_le_bytes(), &3u64.to_le_bytes()]);
/// assert_eq!(v.unwrap(), 10u64.to_le_bytes());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct UInt64AddOperator;

impl UInt64AddOperator {
    fn decode(v: &[u8]) -> u64 {
        v.try_into().map_or(0, u64::from_le_bytes)
    }
}

impl MergeOperator for UInt64AddOperator {
    fn name(&self) -> &str {
        "UInt64AddOperator"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let base = existing.map_or(0, Self::decode);
        let sum = operands.iter().fold(base, |acc, op| acc.wrapping_add(Self::decode(op)));
        Ok(sum.to_le_bytes().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
        Some(Self::decode(left).wrapping_add(Self::decode(right)).to_le_bytes().to_vec())
    }

    fn partial_merge_multi(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let sum = operands.iter().fold(0u64, |acc, op| acc.wrapping_add(Self::decode(op)));
        Some(sum.to_le_bytes().to_vec())
    }
}

/// Appends operands to the value with a delimiter between them (RocksDB's
/// `StringAppendOperator`, nickname `stringappend`, delimiter `,` by default).
///
/// ```
/// use talus::MergeOperator;
/// let op = talus::merge::StringAppendOperator::new(",");
/// assert_eq!(op.full_merge(b"k", Some(b"a"), &[b"b", b"c"]).unwrap(), b"a,b,c");
/// assert_eq!(op.full_merge(b"k", None, &[b"b"]).unwrap(), b"b");
/// ```
#[derive(Debug, Clone)]
pub struct StringAppendOperator {
    delimiter: Vec<u8>,
}

impl StringAppendOperator {
    /// An operator joining with `delimiter` (RocksDB takes a character or a string).
    pub fn new(delimiter: impl AsRef<[u8]>) -> StringAppendOperator {
        StringAppendOperator { delimiter: delimiter.as_ref().to_vec() }
    }

    /// The parts joined by the delimiter, in one allocation.
    fn join<'a>(&self, parts: impl Iterator<Item = &'a [u8]> + Clone) -> Vec<u8> {
        let n: usize = parts.clone().map(|p| p.len() + self.delimiter.len()).sum();
        let mut out = Vec::with_capacity(n);
        for (i, p) in parts.enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.delimiter);
            }
            out.extend_from_slice(p);
        }
        out
    }
}

impl MergeOperator for StringAppendOperator {
    fn name(&self) -> &str {
        "StringAppendOperator"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(self.join(existing.into_iter().chain(operands.iter().copied())))
    }

    fn partial_merge(&self, _key: &[u8], left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
        Some(self.join([left, right].into_iter()))
    }

    fn partial_merge_multi(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(self.join(operands.iter().copied()))
    }
}

/// String append without partial merges (RocksDB's `StringAppendTESTOperator`, nickname
/// `stringappendtest`): flushes and compactions keep every operand until they meet the base.
#[derive(Debug, Clone)]
pub struct StringAppendTestOperator(pub StringAppendOperator);

impl MergeOperator for StringAppendTestOperator {
    fn name(&self) -> &str {
        "StringAppendTESTOperator"
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        self.0.full_merge(key, existing, operands)
    }
}

/// A merge that acts as a put: the newest operand wins (RocksDB's `PutOperator`, nickname
/// `put`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PutOperator;

impl MergeOperator for PutOperator {
    fn name(&self) -> &str {
        "PutOperator"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(operands.last().copied().or(existing).unwrap_or_default().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], _left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
        Some(right.to_vec())
    }

    fn partial_merge_multi(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.last().map(|v| v.to_vec())
    }
}

/// Keeps the largest of the base and the operands, compared as bytes (RocksDB's
/// `MaxOperator`, nickname `max`).
#[derive(Debug, Clone, Copy, Default)]
pub struct MaxOperator;

impl MergeOperator for MaxOperator {
    fn name(&self) -> &str {
        "MaxOperator"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(existing.into_iter().chain(operands.iter().copied()).max().unwrap_or_default().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
        Some(left.max(right).to_vec())
    }

    fn partial_merge_multi(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.iter().max().map(|v| v.to_vec())
    }
}
