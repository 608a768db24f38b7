//! Merge operators (RocksDB's `MergeOperator`): a write that says how to change a value instead
//! of what the value is. [`crate::Db::merge`] stores an *operand*; reads, iterators, flushes and
//! compactions combine the operands of a key with the value below them (its *base*: a put, or
//! nothing after a delete, a range deletion or the bottom of the tree) through the operator in
//! [`crate::Options::merge_operator`].
//!
//! # Contract
//! - [`MergeOperator::full_merge`] turns a base and its operands (oldest first) into a value.
//!   Called by point reads, iterators, and by flushes and compactions that reach the key's base
//!   (a put, a delete, a range deletion covering the key, or the bottom of the tree) within one
//!   snapshot stripe. Its result replaces the operands and the base (a put at the newest
//!   operand's sequence number).
//! - [`MergeOperator::partial_merge_multi`] (by default [`MergeOperator::partial_merge`] folded
//!   pairwise) combines operands without a base, when a flush or compaction sees a run of
//!   operands but not the base. Returning `None` (the default) keeps the operands as they are.
//! - Both are called from any thread (readers, the flush thread, compaction threads), so an
//!   operator is `Send + Sync`.
//! - A failure is never a wrong value: a [`MergeError`] or a panic (caught) makes the read
//!   fail with [`crate::Error::Corruption`] naming the operator and the key (RocksDB's
//!   `Status::Corruption(kMergeOperatorFailed)`); a flush or compaction fails the same way
//!   (its outputs are deleted, its inputs stay live, the error becomes the background error)
//!   unless the error's scope is [`MergeFailureScope::MustMerge`], in which case the flush or
//!   compaction keeps the operands unmerged and only reads fail. A failed partial merge keeps
//!   the operands. Without an operator, a read that meets operands fails with
//!   [`crate::Error::InvalidArgument`] (RocksDB: "merge_operator is not properly
//!   initialized"); flushes and compactions then keep the operands unmerged.
//!
//! The built-in operators RocksDB ships are in [`builtin`] ([`UInt64AddOperator`],
//! [`StringAppendOperator`], ...), found by name with [`builtin_by_name`]. The helpers the engine
//! calls (panics caught, errors mapped) are in `resolve.rs`; the record format of an operand is
//! a `Merge` (kind 2) entry, `docs/format/wal.md` and `docs/format/sst.md`.

use std::fmt;

mod builtin;
pub(crate) mod resolve;

pub use builtin::{
    builtin_by_name, MaxOperator, PutOperator, StringAppendOperator, StringAppendTestOperator,
    UInt64AddOperator, BUILTIN_NAMES,
};

/// What a failed merge stops (RocksDB's `MergeOperator::OpFailureScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeFailureScope {
    /// Every operation that tries to merge the key fails: reads, and the flush or compaction
    /// (which then stops, and the database becomes read-only with the error as its background
    /// error). RocksDB's `kTryMerge`, its default.
    #[default]
    TryMerge,
    /// Only operations that must produce the value fail (reads, iterators); a flush or
    /// compaction keeps the operands as they are and goes on. RocksDB's `kMustMerge`.
    MustMerge,
}

/// A merge operator's refusal: why, and what it stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    /// What went wrong (part of the error message the read or compaction returns).
    pub message: String,
    /// What the failure stops.
    pub scope: MergeFailureScope,
}

impl MergeError {
    /// A failure with the default scope ([`MergeFailureScope::TryMerge`]).
    pub fn new(message: impl Into<String>) -> MergeError {
        MergeError { message: message.into(), scope: MergeFailureScope::TryMerge }
    }

    /// A failure that only reads report ([`MergeFailureScope::MustMerge`]).
    pub fn must_merge(message: impl Into<String>) -> MergeError {
        MergeError { message: message.into(), scope: MergeFailureScope::MustMerge }
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A user-supplied merge operator (RocksDB's `MergeOperator`). See the module documentation
/// for when each method is called.
///
/// ```
/// use std::sync::Arc;
/// use talus::{Db, MergeError, MergeOperator, Options};
///
/// /// Keeps the largest operand seen (compared as bytes).
/// struct Largest;
/// impl MergeOperator for Largest {
///     fn name(&self) -> &str {
///         "Largest"
///     }
///     fn full_merge(
///         &self,
///         _key: &[u8],
///         existing: Option<&[u8]>,
///         operands: &[&[u8]],
///     ) -> Result<Vec<u8>, MergeError> {
///         Ok(operands.iter().copied().chain(existing).max().unwrap_or_default().to_vec())
///     }
/// }
///
/// let dir = tempfile::tempdir().unwrap();
/// let opts = Options {
///     create_if_missing: true,
///     merge_operator: Some(Arc::new(Largest)),
///     ..Default::default()
/// };
/// let db = Db::open(dir.path(), opts).unwrap();
/// db.merge(b"k", b"b").unwrap();
/// db.merge(b"k", b"c").unwrap();
/// db.merge(b"k", b"a").unwrap();
/// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"c"[..]));
/// ```
pub trait MergeOperator: Send + Sync {
    /// The operator's name (RocksDB's `Name()`), written to the OPTIONS file and shown in
    /// errors.
    fn name(&self) -> &str;

    /// Applies `operands` (oldest first; at least one) to `existing` (the base value, `None`
    /// if the key has none). RocksDB's `FullMergeV2`.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError>;

    /// Combines two operands (`left` older than `right`) into one, if the operator can without
    /// the base; `None` (the default) keeps them apart. RocksDB's `PartialMerge`.
    fn partial_merge(&self, _key: &[u8], _left: &[u8], _right: &[u8]) -> Option<Vec<u8>> {
        None
    }

    /// Combines `operands` (oldest first; at least two) into one; by default
    /// [`MergeOperator::partial_merge`] from the oldest on, giving up at its first `None`.
    /// RocksDB's `PartialMergeMulti`.
    fn partial_merge_multi(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let (first, rest) = operands.split_first()?;
        let mut acc = first.to_vec();
        for op in rest {
            acc = self.partial_merge(key, &acc, op)?;
        }
        Some(acc)
    }
}

/// An operator whose operands and values are of one type and whose merge is associative
/// (RocksDB's `AssociativeMergeOperator`): `merge(merge(a, b), c) == merge(a, merge(b, c))`.
/// Implementing it gives a [`MergeOperator`] whose full merge folds the operands over the base
/// and whose partial merge folds them without one.
///
/// ```
/// use talus::{AssociativeMergeOperator, MergeError, MergeOperator};
/// /// Concatenates.
/// struct Concat;
/// impl AssociativeMergeOperator for Concat {
///     fn name(&self) -> &str {
///         "Concat"
///     }
///     fn merge(&self, _k: &[u8], existing: Option<&[u8]>, v: &[u8]) -> Result<Vec<u8>, MergeError> {
///         Ok([existing.unwrap_or_default(), v].concat())
///     }
/// }
/// assert_eq!(Concat.full_merge(b"k", Some(b"a"), &[b"b", b"c"]).unwrap(), b"abc");
/// assert_eq!(Concat.partial_merge_multi(b"k", &[b"b", b"c"]).unwrap(), b"bc");
/// ```
pub trait AssociativeMergeOperator: Send + Sync {
    /// The operator's name.
    fn name(&self) -> &str;

    /// Applies one operand `value` to `existing` (`None`: no value yet).
    fn merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        value: &[u8],
    ) -> Result<Vec<u8>, MergeError>;
}

impl<T: AssociativeMergeOperator> MergeOperator for T {
    fn name(&self) -> &str {
        AssociativeMergeOperator::name(self)
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let mut acc: Option<Vec<u8>> = None;
        for op in operands {
            let next = self.merge(key, acc.as_deref().or(existing), op)?;
            acc = Some(next);
        }
        Ok(acc.unwrap_or_else(|| existing.unwrap_or_default().to_vec()))
    }

    fn partial_merge(&self, key: &[u8], left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
        self.merge(key, Some(left), right).ok()
    }
}

#[cfg(test)]
mod tests;
