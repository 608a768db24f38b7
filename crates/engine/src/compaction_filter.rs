//! Compaction filters (RocksDB's `CompactionFilter`): user code that sees entries as compactions
//! rewrite them and may keep, remove or change each.
//!
//! # Contract (RocksDB's rules, `include/rocksdb/compaction_filter.h`)
//! - Called by compactions only (not flushes), from compaction threads, possibly several at
//!   once (subcompactions): a filter is `Send + Sync`.
//! - A value (a put) is offered once per compaction: the newest entry of its user key in the
//!   compaction's input, whatever snapshots exist (RocksDB's `IgnoreSnapshots() == true`, the
//!   only mode RocksDB 10 supports): a value a snapshot reads may change or disappear. Values
//!   that a compaction makes by merging operands are not offered.
//! - A merge operand is offered when no snapshot can read it (its sequence number is above
//!   every live snapshot's).
//! - [`FilterDecision::Remove`] turns a value into a deletion at the same sequence number
//!   (older versions stay hidden) and drops a merge operand; [`FilterDecision::ChangeValue`]
//!   replaces the value or operand, keeping its kind and sequence number.
//! - A filter that panics stops the compaction: its outputs are deleted, its inputs stay live,
//!   and the error ([`crate::Error::Corruption`] naming the filter and the key) becomes the
//!   database's background error, as any failed compaction's.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{Error, Result};
use crate::key::EscapedBytes;

/// What kind of entry a filter is offered (RocksDB's `CompactionFilter::ValueType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterValueType {
    /// A value written by a put.
    Value,
    /// A merge operand.
    MergeOperand,
}

/// A filter's verdict on one entry (RocksDB's `CompactionFilter::Decision`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterDecision {
    /// Keep the entry as it is.
    Keep,
    /// Remove it: a value becomes a deletion, an operand is dropped.
    Remove,
    /// Replace the value (or the operand) with this.
    ChangeValue(Vec<u8>),
}

/// A compaction filter (RocksDB's `CompactionFilter::FilterV2`). See the module documentation
/// for what it is offered and when.
///
/// ```
/// use std::sync::Arc;
/// use talus::{CompactionFilter, Db, FilterDecision, FilterValueType, Options};
///
/// /// Drops every value that starts with "tmp:".
/// struct DropTemporary;
/// impl CompactionFilter for DropTemporary {
///     fn name(&self) -> &str {
///         "DropTemporary"
///     }
///     fn filter(&self, _level: usize, _key: &[u8], _t: FilterValueType, value: &[u8]) -> FilterDecision {
///         if value.starts_with(b"tmp:") { FilterDecision::Remove } else { FilterDecision::Keep }
///     }
/// }
///
/// let dir = tempfile::tempdir().unwrap();
/// let opts = Options {
///     create_if_missing: true,
///     compaction_filter: Some(Arc::new(DropTemporary)),
///     ..Default::default()
/// };
/// let db = Db::open(dir.path(), opts).unwrap();
/// db.put(b"a", b"tmp:1").unwrap();
/// db.put(b"b", b"kept").unwrap();
/// db.compact_range(None, None).unwrap();
/// assert_eq!(db.get(b"a").unwrap(), None);
/// assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"kept"[..]));
/// ```
pub trait CompactionFilter: Send + Sync {
    /// The filter's name (written to the OPTIONS file, shown in errors).
    fn name(&self) -> &str;

    /// The verdict on the entry `key` = `value` of kind `value_type`; `level` is the level the
    /// compaction starts from.
    fn filter(
        &self,
        level: usize,
        key: &[u8],
        value_type: FilterValueType,
        value: &[u8],
    ) -> FilterDecision;
}

/// Calls `f` on one entry with panics caught: a panic is the compaction's error.
pub(crate) fn apply(
    f: &dyn CompactionFilter,
    level: usize,
    key: &[u8],
    value_type: FilterValueType,
    value: &[u8],
) -> Result<FilterDecision> {
    catch_unwind(AssertUnwindSafe(|| f.filter(level, key, value_type, value))).map_err(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        Error::corruption(
            format!("compaction filter {}", f.name()),
            0,
            format!("the filter panicked on key '{:?}': {msg}", EscapedBytes(key)),
        )
    })
}
