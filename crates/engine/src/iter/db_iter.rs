//! The user-facing cursor: from a merged stream of internal entries to the user keys visible at a
//! sequence number, with point and range tombstones applied and bounds honoured, both directions.
//!
//! LevelDB's `DBIter` is the model. For each user key only the newest entry with
//! `seq <= read_seq` counts; the key is visible if that entry is a `Put` not covered by a range
//! tombstone with a higher sequence (visible at `read_seq`). A `Merge` operand so visible makes
//! the key's value its operands merged (newest first down to the key's base: a put, a delete, an
//! entry covered by a range tombstone, or the end of its entries) by the merge operator
//! (`merge::resolve::full_merge`; a failure makes the cursor invalid with the error in
//! `status()`). A `BlobIndex` is a value kept in a blob file: the cursor stops on it like on a
//! put and reads the value only when `value()` is called (once per position; a failed read
//! makes `value()` empty and `status()` the error), so a scan of keys reads no blob. A blob
//! index under merge operands is read when the merge needs it. Any other kind (`Delete`,
//! `SingleDelete`) hides the key. `RangeDelete` entries are never expected in the point stream and are skipped.
//!
//! # Positioning invariant
//! - Forward: the inner iterator is at the newest visible entry of the current key; `key` and
//!   `value` read through it. After a merge (`value_saved`) the key and the merged value are in
//!   `saved_key`/`saved_value` and the inner iterator is past the entries the merge read.
//! - Backward: the inner iterator is before every entry of the current key (at the last entry of
//!   some smaller user key, or invalid); `key`/`value` are copies in reusable buffers
//!   (`saved_key`, `saved_value`), so stepping does not allocate once they have grown.
//!
//! Bounds: `lower` inclusive, `upper` exclusive, applied by seeks and while stepping.
//! An inner error (or an undecodable internal key, reported as corruption) makes the cursor
//! invalid and `status()` returns it. Owned by one reader; no locks.

use std::cell::OnceCell;
use std::sync::Arc;

use super::range_del::FragmentedTombstones;
use super::{BlobValues, InternalIterator};
use crate::error::{Error, Result};
use crate::key::{
    pack_trailer, parse_internal_key, user_key, SequenceNumber, ValueKind, KIND_FOR_SEEK,
    MAX_SEQUENCE,
};
use crate::merge::resolve::{full_merge, Operands};
use crate::merge::MergeOperator;
use smallvec::SmallVec;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Backward,
}

/// A cursor over user keys.
pub struct DbIterator {
    inner: Box<dyn InternalIterator>,
    read_seq: SequenceNumber,
    /// `None`: no range tombstone in any source.
    tombstones: Option<Arc<FragmentedTombstones>>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    dir: Direction,
    valid: bool,
    /// Backward: the current user key. Forward: scratch for the key being skipped.
    saved_key: SmallVec<[u8; 64]>,
    /// Backward: the current value.
    saved_value: Vec<u8>,
    /// Scratch for building seek targets.
    seek_buf: SmallVec<[u8; 64]>,
    /// A corruption found in the inner stream, or a failed merge (sticky).
    err: Option<Error>,
    /// Combines merge operands.
    merge: Option<Arc<dyn MergeOperator>>,
    /// Forward: the current entry is a merged value held in `saved_key`/`saved_value`.
    value_saved: bool,
    /// A merge's operands (forward: newest first; backward: oldest first).
    operands: Operands,
    /// Reads values that live in blob files.
    blobs: Option<Arc<dyn BlobValues>>,
    /// The current entry is a blob index (in `blob_index`), its value not read yet.
    pending_blob: bool,
    blob_index: Vec<u8>,
    /// The current blob value, read by the first `value()` call at this position.
    blob_value: OnceCell<Result<Vec<u8>>>,
}

impl DbIterator {
    /// Wraps `inner` (all sources merged), reading as of `read_seq`; `tombstones` holds every
    /// range tombstone of every source; `lower`/`upper` bound the user keys (upper exclusive).
    pub fn new(
        inner: Box<dyn InternalIterator>,
        read_seq: SequenceNumber,
        tombstones: Option<Arc<FragmentedTombstones>>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        DbIterator {
            inner,
            read_seq: read_seq.min(MAX_SEQUENCE),
            tombstones,
            lower,
            upper,
            dir: Direction::Forward,
            valid: false,
            saved_key: SmallVec::new(),
            saved_value: Vec::new(),
            seek_buf: SmallVec::new(),
            err: None,
            merge: None,
            value_saved: false,
            operands: Operands::default(),
            blobs: None,
            pending_blob: false,
            blob_index: Vec::new(),
            blob_value: OnceCell::new(),
        }
    }

    /// Reads the values of `BlobIndex` entries from `blobs` (without one, such an entry makes
    /// the cursor fail with `Corruption`).
    pub fn with_blob_source(mut self, blobs: Option<Arc<dyn BlobValues>>) -> Self {
        self.blobs = blobs;
        self
    }

    /// The value `index` (a blob index of user key `key`) points to.
    fn read_blob(&self, key: &[u8], index: &[u8]) -> Result<Vec<u8>> {
        match &self.blobs {
            Some(b) => b.blob_value(key, index),
            None => Err(Error::corruption("<iterator>", 0, "a blob index with no blob files")),
        }
    }

    /// Stops at a blob index entry of `saved_key` whose encoded index is in `blob_index`.
    fn stop_at_blob(&mut self) {
        self.pending_blob = true;
        self.blob_value = OnceCell::new();
        self.valid = true;
    }

    /// Resolves merge operands with `op` (without one, a key with operands makes the cursor
    /// fail with `InvalidArgument`).
    pub fn with_merge_operator(mut self, op: Option<Arc<dyn MergeOperator>>) -> Self {
        self.merge = op;
        self
    }

    /// True if a range tombstone visible at the read sequence covers `user_key` at `seq`.
    #[inline]
    fn covered(&self, user_key: &[u8], seq: SequenceNumber) -> bool {
        self.tombstones.as_ref().is_some_and(|t| t.covers(user_key, seq, self.read_seq))
    }

    /// True if positioned at a visible entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Positions at the first visible key (at or after the lower bound).
    pub fn seek_to_first(&mut self) {
        self.dir = Direction::Forward;
        self.value_saved = false;
        match self.lower.take() {
            Some(lower) => {
                self.seek_inner(&lower);
                self.lower = Some(lower);
            }
            None => self.inner.seek_to_first(),
        }
        self.find_next_user_entry(false);
    }

    /// Positions at the last visible key (before the upper bound).
    pub fn seek_to_last(&mut self) {
        self.dir = Direction::Backward;
        self.value_saved = false;
        match self.upper.take() {
            Some(upper) => {
                self.seek_for_prev_before(&upper);
                self.upper = Some(upper);
            }
            None => self.inner.seek_to_last(),
        }
        self.find_prev_user_entry();
    }

    /// Positions at the first visible key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.dir = Direction::Forward;
        self.value_saved = false;
        match self.lower.take() {
            Some(lower) => {
                self.seek_inner(if key < lower.as_slice() { &lower } else { key });
                self.lower = Some(lower);
            }
            None => self.seek_inner(key),
        }
        self.find_next_user_entry(false);
    }

    /// Positions at the last visible key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        self.dir = Direction::Backward;
        self.value_saved = false;
        match self.upper.take() {
            Some(upper) if key >= upper.as_slice() => {
                self.seek_for_prev_before(&upper);
                self.upper = Some(upper);
            }
            other => {
                self.upper = other;
                // The last internal key of `key` has sequence 0 and the lowest kind.
                self.seek_buf.clear();
                self.seek_buf.extend_from_slice(key);
                self.seek_buf.extend_from_slice(&pack_trailer(0, ValueKind::Delete).to_le_bytes());
                self.inner.seek_for_prev(&self.seek_buf);
            }
        }
        self.find_prev_user_entry();
    }

    /// Moves to the next visible key. Does nothing if not valid.
    pub fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.dir == Direction::Backward {
            // The inner iterator is before the current key's entries; step into them. The
            // current key is in `saved_key`, to be skipped below.
            self.dir = Direction::Forward;
            if self.inner.valid() {
                self.inner.next();
            } else {
                self.inner.seek_to_first();
            }
        } else if self.value_saved {
            // A merge left the inner iterator past what it read; `saved_key` is the key to
            // skip.
            self.value_saved = false;
        } else {
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            self.inner.next();
        }
        self.find_next_user_entry(true);
    }

    /// Moves to the previous visible key. Does nothing if not valid.
    pub fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.dir == Direction::Forward && self.value_saved {
            // A merge left the inner iterator past the key's entries: find their start again
            // and step before it.
            self.value_saved = false;
            self.seek_buf.clear();
            self.seek_buf.extend_from_slice(&self.saved_key);
            self.seek_buf
                .extend_from_slice(&pack_trailer(MAX_SEQUENCE, KIND_FOR_SEEK).to_le_bytes());
            self.inner.seek(&self.seek_buf);
            self.inner.prev();
            self.dir = Direction::Backward;
        } else if self.dir == Direction::Forward {
            // Step back over every entry of the current key.
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            loop {
                self.inner.prev();
                if !self.inner.valid() || user_key(self.inner.key()) < self.saved_key.as_slice() {
                    break;
                }
            }
            self.dir = Direction::Backward;
        }
        self.find_prev_user_entry();
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        match self.dir {
            Direction::Forward if !self.value_saved => user_key(self.inner.key()),
            _ => &self.saved_key,
        }
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        if self.pending_blob {
            let v =
                self.blob_value.get_or_init(|| self.read_blob(&self.saved_key, &self.blob_index));
            return v.as_deref().unwrap_or(&[]);
        }
        match self.dir {
            Direction::Forward if !self.value_saved => self.inner.value(),
            _ => &self.saved_value,
        }
    }

    /// The encoded blob index of the current entry when its value lives in a blob file (the
    /// value is then not read by this call), else `None`: what `ldb --decode_blob_index` shows.
    pub fn blob_index(&self) -> Option<&[u8]> {
        (self.valid && self.pending_blob).then_some(&self.blob_index[..])
    }

    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.duplicate());
        }
        if let Some(Err(e)) = self.blob_value.get().filter(|_| self.pending_blob) {
            return Err(e.duplicate());
        }
        self.inner.status()
    }

    /// Seeks the inner iterator to the first entry of `user_key` visible at `read_seq`.
    fn seek_inner(&mut self, user_key: &[u8]) {
        self.seek_buf.clear();
        self.seek_buf.extend_from_slice(user_key);
        self.seek_buf.extend_from_slice(&pack_trailer(self.read_seq, KIND_FOR_SEEK).to_le_bytes());
        self.inner.seek(&self.seek_buf);
    }

    /// Positions the inner iterator at the last entry with user key `< upper` (entries of
    /// `upper` itself that sort at or before the target are skipped by the backward scan).
    fn seek_for_prev_before(&mut self, upper: &[u8]) {
        self.seek_buf.clear();
        self.seek_buf.extend_from_slice(upper);
        self.seek_buf.extend_from_slice(&pack_trailer(MAX_SEQUENCE, KIND_FOR_SEEK).to_le_bytes());
        self.inner.seek_for_prev(&self.seek_buf);
    }

    fn corrupt(&mut self) {
        if self.err.is_none() {
            self.err = Some(Error::corruption(
                "<iterator>",
                0,
                format!("undecodable internal key of {} bytes", self.inner.key().len()),
            ));
        }
        self.valid = false;
    }

    /// The cursor ran off the inner stream: invalid (an inner error shows in `status`).
    fn exhausted(&mut self) {
        self.valid = false;
        self.saved_key.clear();
        self.saved_value.clear();
    }

    /// Moving forward from the inner position, finds the newest visible entry of the next user
    /// key. With `skipping`, entries of user keys `<= saved_key` are hidden.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        self.pending_blob = false;
        if self.err.is_some() {
            self.valid = false;
            return;
        }
        while self.inner.valid() {
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.corrupt();
                return;
            };
            if let Some(upper) = &self.upper {
                if p.user_key >= upper.as_slice() {
                    break;
                }
            }
            if p.seq <= self.read_seq && !(skipping && p.user_key <= self.saved_key.as_slice()) {
                match p.kind {
                    ValueKind::RangeDelete => {}
                    ValueKind::Put if !self.covered(p.user_key, p.seq) => {
                        self.valid = true;
                        return;
                    }
                    ValueKind::BlobIndex if !self.covered(p.user_key, p.seq) => {
                        // Held like a merged value: the key in `saved_key`, the inner
                        // iterator at the entry (skipped by the next step).
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.blob_index.clear();
                        self.blob_index.extend_from_slice(self.inner.value());
                        self.value_saved = true;
                        self.stop_at_blob();
                        return;
                    }
                    ValueKind::Merge if !self.covered(p.user_key, p.seq) => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.merge_forward();
                        return;
                    }
                    _ => {
                        // Hides every older entry of this user key.
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                }
            }
            self.inner.next();
        }
        self.exhausted();
    }

    /// Moving backward from the inner position, finds the previous user key whose newest entry
    /// visible at `read_seq` is a live put; leaves the inner iterator before all its entries.
    fn find_prev_user_entry(&mut self) {
        self.pending_blob = false;
        if self.err.is_some() {
            self.valid = false;
            return;
        }
        // Whether `saved_key`/`saved_value` hold a live candidate (a value, or with `merging`
        // the operands gathered so far over the base in `saved_value` if `has_base`).
        let mut live = false;
        let mut merging = false;
        let mut has_base = false;
        // `saved_value` holds a blob index, not a value.
        let mut blob = false;
        while self.inner.valid() {
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.corrupt();
                return;
            };
            if let Some(lower) = &self.lower {
                if p.user_key < lower.as_slice() {
                    break;
                }
            }
            let above_upper = self.upper.as_deref().is_some_and(|u| p.user_key >= u);
            if p.seq <= self.read_seq && !above_upper && p.kind != ValueKind::RangeDelete {
                if (live || merging) && p.user_key < self.saved_key.as_slice() {
                    // The candidate's entries are all behind us: it is the answer.
                    break;
                }
                let covered = self.covered(p.user_key, p.seq);
                match p.kind {
                    ValueKind::Put | ValueKind::BlobIndex if !covered => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                        blob = p.kind == ValueKind::BlobIndex;
                        (live, merging) = (true, false);
                    }
                    ValueKind::Merge if !covered => {
                        if !merging {
                            // A newer operand over this key's value (if `live`), or over none.
                            has_base = live;
                            self.operands.clear();
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(p.user_key);
                        }
                        self.operands.push(self.inner.value());
                        (live, merging) = (false, true);
                    }
                    _ => (live, merging) = (false, false),
                }
            }
            self.inner.prev();
        }
        if !(live || merging) || (!self.inner.valid() && self.inner.status().is_err()) {
            self.exhausted();
            return;
        }
        if live && blob {
            std::mem::swap(&mut self.blob_index, &mut self.saved_value);
            self.stop_at_blob();
            return;
        }
        if merging && has_base && blob {
            match self.read_blob(&self.saved_key, &self.saved_value) {
                Ok(v) => self.saved_value = v,
                Err(e) => {
                    self.err = Some(e);
                    self.valid = false;
                    return;
                }
            }
        }
        if merging {
            // Gathered oldest first: the merge takes them newest first.
            let newest_first = self.operands.reversed();
            let base = has_base.then_some(self.saved_value.as_slice());
            match full_merge(self.merge.as_deref(), &self.saved_key, base, &newest_first) {
                Ok(v) => self.saved_value = v,
                Err(e) => {
                    self.err = Some(e);
                    self.valid = false;
                    return;
                }
            }
        }
        self.valid = true;
    }

    /// Forward: the inner iterator is at the newest visible operand of `saved_key`, not covered.
    /// Gathers the operands down to the key's base, merges them into `saved_value` and leaves
    /// the inner iterator at the first entry it did not consume.
    fn merge_forward(&mut self) {
        self.operands.clear();
        self.operands.push(self.inner.value());
        let mut base_put = false;
        let mut base_blob = None;
        loop {
            self.inner.next();
            if !self.inner.valid() {
                if self.inner.status().is_err() {
                    // The base may be in what could not be read: no value.
                    self.exhausted();
                    return;
                }
                break;
            }
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.corrupt();
                return;
            };
            if p.user_key != self.saved_key.as_slice() || self.covered(p.user_key, p.seq) {
                break;
            }
            match p.kind {
                ValueKind::Merge => self.operands.push(self.inner.value()),
                ValueKind::RangeDelete => {}
                ValueKind::Put => {
                    base_put = true;
                    break;
                }
                ValueKind::BlobIndex => {
                    match self.read_blob(&self.saved_key, self.inner.value()) {
                        Ok(v) => base_blob = Some(v),
                        Err(e) => {
                            self.err = Some(e);
                            self.valid = false;
                            return;
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        let base = match &base_blob {
            Some(v) => Some(v.as_slice()),
            None => base_put.then(|| self.inner.value()),
        };
        match full_merge(self.merge.as_deref(), &self.saved_key, base, &self.operands) {
            Ok(v) => {
                self.saved_value = v;
                self.value_saved = true;
                self.valid = true;
            }
            Err(e) => {
                self.err = Some(e);
                self.valid = false;
            }
        }
    }
}

#[cfg(test)]
mod tests;
