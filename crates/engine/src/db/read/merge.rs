//! Point reads of keys whose newest entry is a merge operand: the operands are gathered
//! source by source (memtables, then the files in search order), newest first, until the
//! key's base (a put, a delete, an entry hidden by a range tombstone, or the end of the tree),
//! then merged with [`crate::merge::resolve::full_merge`].
//!
//! Who calls: `read.rs` (`lookup`) and `multi_get.rs`, when the first entry they find is a
//! merge operand. Locks: none.

use crate::db::core::{DbInner, SuperVersion};
use crate::error::Result;
use crate::key::{SequenceNumber, ValueKind};
use crate::merge::resolve::{full_merge, Operands};

/// Where a key's chain of operands stands while the sources are walked.
struct Chain<'a> {
    key: &'a [u8],
    operands: Operands,
    /// Highest sequence of a range tombstone covering the key met so far (same or newer
    /// source): entries below it are deleted.
    max_tomb: SequenceNumber,
    /// Set when the base was met: the merged value (or the read's error).
    done: Option<Result<Option<Vec<u8>>>>,
    op: Option<&'a dyn crate::merge::MergeOperator>,
    /// Where a base in a blob file is read from.
    blobs: &'a crate::blob::reader::BlobSource,
}

impl Chain<'_> {
    /// Takes one entry (newest first); false once the chain has ended.
    fn visit(&mut self, kind: ValueKind, seq: SequenceNumber, v: &[u8]) -> bool {
        if seq < self.max_tomb {
            return self.end(None);
        }
        match kind {
            ValueKind::Merge => {
                self.operands.push(v);
                true
            }
            ValueKind::Put => self.end(Some(v)),
            ValueKind::BlobIndex => {
                self.done = Some(match self.blobs.get(self.key, v) {
                    Ok(base) => self.resolve(Some(&base)),
                    Err(e) => Err(e),
                });
                false
            }
            // Deletes end the chain with no base; a range tombstone never reaches the point
            // stream.
            _ => self.end(None),
        }
    }

    fn end(&mut self, base: Option<&[u8]>) -> bool {
        self.done = Some(self.resolve(base));
        false
    }

    fn resolve(&self, base: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        if self.operands.is_empty() {
            return Ok(base.map(<[u8]>::to_vec));
        }
        full_merge(self.op, self.key, base, &self.operands).map(Some)
    }
}

impl DbInner {
    /// The value of `key` at `read_seq` in `sv`, merging its operands: the slow path of a point
    /// read whose first entry found was a merge operand.
    pub(crate) fn get_merged(
        &self,
        sv: &SuperVersion,
        key: &[u8],
        read_seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<Vec<u8>>> {
        let mut c = Chain {
            key,
            operands: Operands::default(),
            max_tomb: 0,
            done: None,
            op: sv.opts.merge_operator.as_deref(),
            blobs: &self.blobs,
        };
        if let Some(t) = sv.mem.fragmented_range_tombstones() {
            c.max_tomb = t.max_covering_seq(key, read_seq);
        }
        sv.mem.for_each_entry(key, read_seq, |k, s, v| c.visit(k, s, v));
        for (imm, tombs) in &sv.imms {
            if c.done.is_some() {
                break;
            }
            c.max_tomb = c.max_tomb.max(tombs.max_covering_seq(key, read_seq));
            imm.for_each_entry(key, read_seq, |k, s, v| c.visit(k, s, v));
        }
        let mut err = None;
        if c.done.is_none() {
            sv.version.for_each_file_for_key(key, |level, f| {
                let reader = match self.table_cache.reader(f, Some(level)) {
                    Ok(r) => r,
                    Err(e) => {
                        err = Some(e);
                        return false;
                    }
                };
                c.max_tomb =
                    c.max_tomb.max(reader.range_tombstones().max_covering_seq(key, read_seq));
                if let Err(e) =
                    reader.for_each_entry(key, read_seq, fill_cache, |k, s, v| c.visit(k, s, v))
                {
                    err = Some(e);
                    return false;
                }
                c.done.is_none()
            });
        }
        if let Some(e) = err {
            return Err(e);
        }
        match c.done.take() {
            Some(r) => r,
            // The end of the tree: no base.
            None => c.resolve(None),
        }
    }
}
