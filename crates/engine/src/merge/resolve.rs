//! The engine's calls into a [`MergeOperator`]: the operands of one key gathered in a reusable
//! buffer ([`Operands`]), and the full and partial merges with panics caught and failures
//! mapped to [`Error`]s (the module documentation of `merge` has the rules).
//!
//! Who calls: the point-read path (`db/read/merge.rs`), the database iterator
//! (`iter/db_iter.rs`) and the compaction iterator (`compaction/iterator.rs`, used by flushes
//! and compactions). No locks.

use std::panic::{catch_unwind, AssertUnwindSafe};

use smallvec::SmallVec;

use super::{MergeError, MergeFailureScope, MergeOperator};
use crate::error::{Error, Result};
use crate::key::EscapedBytes;

/// The operands of one key, pushed newest first (the order reads and compactions meet them),
/// stored in one buffer so that gathering them allocates nothing once it has grown.
#[derive(Default, Debug)]
pub(crate) struct Operands {
    data: Vec<u8>,
    /// End offset in `data` of each operand, newest first.
    ends: Vec<usize>,
}

impl Operands {
    /// Forgets every operand (keeping the buffers).
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    /// Adds an operand older than every one already held.
    pub(crate) fn push(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.ends.push(self.data.len());
    }

    /// How many operands are held.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// True if none is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Operand `i`, newest first.
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends.get(i - 1).copied().unwrap_or(0) };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.data.get(start..end).unwrap_or(&[])
    }

    /// A copy in the other order (the backward iterator gathers operands oldest first).
    pub(crate) fn reversed(&self) -> Operands {
        let mut r = Operands::default();
        for i in (0..self.len()).rev() {
            r.push(self.get(i));
        }
        r
    }

    /// The operands oldest first, as a merge operator takes them.
    pub(crate) fn oldest_first(&self) -> SmallVec<[&[u8]; 16]> {
        (0..self.len()).rev().map(|i| self.get(i)).collect()
    }
}

/// What a panic carried, as text.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The corruption a failed merge of `key` by `op` is reported as.
fn merge_failed(op: &dyn MergeOperator, key: &[u8], why: &str) -> Error {
    Error::corruption(
        format!("merge operator {}", op.name()),
        0,
        format!("merge of key '{:?}' failed: {why}", EscapedBytes(key)),
    )
}

/// The error of a read that meets operands without an operator.
pub(crate) fn no_operator(key: &[u8]) -> Error {
    Error::InvalidArgument(format!(
        "merge_operator is not properly initialized: key '{:?}' has merge operands and \
         Options::merge_operator is not set",
        EscapedBytes(key)
    ))
}

/// `op`'s full merge of `operands` onto `base`, panics caught. `Err(scope, error)` on failure.
fn try_full_merge(
    op: &dyn MergeOperator,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &Operands,
) -> std::result::Result<Vec<u8>, (MergeFailureScope, Error)> {
    let list = operands.oldest_first();
    match catch_unwind(AssertUnwindSafe(|| op.full_merge(key, base, &list))) {
        Ok(Ok(v)) => match crate::batch::check_entry_size(key.len(), v.len()) {
            Ok(()) => Ok(v),
            Err(e) => Err((MergeFailureScope::TryMerge, merge_failed(op, key, &e.to_string()))),
        },
        Ok(Err(MergeError { message, scope })) => Err((scope, merge_failed(op, key, &message))),
        Err(p) => Err((
            MergeFailureScope::TryMerge,
            merge_failed(op, key, &format!("the operator panicked: {}", panic_message(&*p))),
        )),
    }
}

/// The value of `key` for a read: `operands` (newest first, at least one) applied to `base`.
/// Fails with `InvalidArgument` without an operator, `Corruption` if the operator fails or
/// panics.
pub(crate) fn full_merge(
    op: Option<&dyn MergeOperator>,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &Operands,
) -> Result<Vec<u8>> {
    let op = op.ok_or_else(|| no_operator(key))?;
    try_full_merge(op, key, base, operands).map_err(|(_, e)| e)
}

/// A full merge for a flush or compaction: `Ok(Some(value))`, or `Ok(None)` when the operands
/// must stay as they are (no operator, or a failure of scope [`MergeFailureScope::MustMerge`]);
/// any other failure is the job's error.
pub(crate) fn full_merge_in_job(
    op: Option<&dyn MergeOperator>,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &Operands,
) -> Result<Option<Vec<u8>>> {
    let Some(op) = op else { return Ok(None) };
    match try_full_merge(op, key, base, operands) {
        Ok(v) => Ok(Some(v)),
        Err((MergeFailureScope::MustMerge, _)) => Ok(None),
        Err((MergeFailureScope::TryMerge, e)) => Err(e),
    }
}

/// A partial merge for a flush or compaction: the one operand replacing `operands` (newest
/// first, at least two), or `None` to keep them. A panic is the job's error.
pub(crate) fn partial_merge_in_job(
    op: Option<&dyn MergeOperator>,
    key: &[u8],
    operands: &Operands,
) -> Result<Option<Vec<u8>>> {
    let Some(op) = op else { return Ok(None) };
    if operands.len() < 2 {
        return Ok(None);
    }
    let list = operands.oldest_first();
    match catch_unwind(AssertUnwindSafe(|| op.partial_merge_multi(key, &list))) {
        Ok(Some(v)) if crate::batch::check_entry_size(key.len(), v.len()).is_ok() => Ok(Some(v)),
        Ok(_) => Ok(None),
        Err(p) => Err(merge_failed(
            op,
            key,
            &format!("the operator panicked in a partial merge: {}", panic_message(&*p)),
        )),
    }
}
