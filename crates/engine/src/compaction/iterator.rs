//! [`CompactionIter`]: what a flush or a compaction writes, from its merged input (RocksDB's
//! `CompactionIterator`). Shared by `compaction::job` and the flush (`db/flush.rs`).
//!
//! Rules, per user key, over the snapshot stripes ([`stripe`]: the live snapshots cut the
//! sequence space; within a stripe only the newest entry of a key can be read):
//! - an entry that is not the newest of its stripe is dropped, as is one covered by a range
//!   tombstone of its own stripe;
//! - with `bottommost`, a deletion in the oldest stripe is dropped (nothing older lies
//!   beneath), and with `zero_seqs` a put of the oldest stripe gets sequence 0;
//! - a merge operand starts a chain: the operands of its stripe, newest first, up to the key's
//!   base in the stripe. A base (a put, a deletion, or an entry hidden by a range tombstone of
//!   the stripe), or the end of the key's entries with `bottommost`, makes a full merge: one
//!   put at the newest operand's sequence number replaces the chain and its base. A chain
//!   that ends at the stripe's end, or at the key's end above the bottom, is partially merged
//!   into one operand when the operator can, else written as it is. A merge that cannot be
//!   done (no operator, a failure of scope `MustMerge`) writes the operands and then the base
//!   unchanged; any other failure is the job's error (`merge::resolve`);
//! - the compaction filter (compactions only) sees the newest entry of each key if it is a
//!   put (or a value in a blob file, read for it through the policy's `blobs`), and each
//!   operand that no snapshot reads (`compaction_filter.rs` has the rules).
//!
//! Owned by one job on one thread; no locks.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::compaction_filter::{self as filter, CompactionFilter, FilterDecision, FilterValueType};
use crate::error::{Error, Result};
use crate::iter::range_del::FragmentedTombstones;
use crate::iter::InternalIterator;
use crate::key::{
    append_internal_key, parse_internal_key, SequenceNumber, ValueKind, MAX_SEQUENCE,
};
use crate::merge::resolve::{full_merge_in_job, partial_merge_in_job, Operands};
use crate::merge::MergeOperator;

/// The snapshot stripe of `seq`: how many live snapshots (ascending) lie below it. Two versions
/// of a key in the same stripe are read by the same snapshots, so only the newer is needed.
pub(crate) fn stripe(snapshots: &[SequenceNumber], seq: SequenceNumber) -> usize {
    snapshots.partition_point(|&s| s < seq)
}

/// One entry to write: `(internal key, value, first of its user key)`.
pub(crate) type OutEntry<'e> = (&'e [u8], &'e [u8], bool);

/// What a job's input is read with: the policies of [`CompactionIter`].
pub(crate) struct CompactionPolicy<'a> {
    /// Live snapshot sequence numbers, ascending.
    pub snapshots: &'a [SequenceNumber],
    /// The inputs' range tombstones, if any.
    pub tombstones: Option<&'a FragmentedTombstones>,
    /// Nothing older than the input lies below the output for its keys.
    pub bottommost: bool,
    /// Give puts of the oldest stripe sequence 0 (bottommost outputs below L0).
    pub zero_seqs: bool,
    /// The merge operator, if the database has one.
    pub merge: Option<&'a dyn MergeOperator>,
    /// The compaction filter and the level the compaction starts from (compactions only).
    pub filter: Option<(&'a dyn CompactionFilter, usize)>,
    /// Where the filter's blob values are read (a job's blob source): a `BlobIndex` entry
    /// offered to the filter is offered with its value. `None`: such entries are kept unseen.
    pub blobs: Option<&'a dyn crate::iter::BlobValues>,
    /// Set when the database is closing: the job stops with `Error::Busy`.
    pub shutting_down: Option<&'a AtomicBool>,
}

/// How a chain of operands ended.
enum ChainEnd {
    /// At a put (true) or deletion (false) of the stripe (still the input's current entry).
    Base(bool),
    /// At an entry hidden by a range tombstone of the stripe (consumed).
    Covered,
    /// At the key's last entry (the input is at another key, or at its end).
    KeyEnd,
    /// At an entry of an older stripe (still the input's current entry).
    StripeEnd,
}

/// The entries to write, in internal-key order: see the module documentation.
pub(crate) struct CompactionIter<'a> {
    input: &'a mut dyn InternalIterator,
    p: CompactionPolicy<'a>,
    /// The user key of the input's current entry, and whether there is one.
    cur_key: Vec<u8>,
    has_cur: bool,
    /// Stripe of the last entry of `cur_key` taken (usize::MAX: none yet).
    last_stripe: usize,
    /// The first entry of `cur_key` is still to come (the filter's value).
    first_of_key: bool,
    /// Whether an entry of `cur_key` was returned.
    emitted_for_key: bool,
    /// Whether the entry returned last is the first returned of its user key.
    new_user_key: bool,
    /// The input's current entry was returned: move on before reading.
    advance: bool,
    /// A made entry (a changed value, a deletion, a merge's output) being returned.
    out_key: Vec<u8>,
    out_value: Vec<u8>,
    /// A chain's outputs still to return.
    queue: VecDeque<(Vec<u8>, Vec<u8>)>,
    operands: Operands,
    operand_seqs: Vec<SequenceNumber>,
    /// Entries read.
    pub keys_in: u64,
    /// Entries returned.
    pub keys_out: u64,
}

impl<'a> CompactionIter<'a> {
    /// Reads `input` (positioned by the caller with `seek_to_first`) under `p`.
    pub(crate) fn new(input: &'a mut dyn InternalIterator, p: CompactionPolicy<'a>) -> Self {
        CompactionIter {
            input,
            p,
            cur_key: Vec::new(),
            has_cur: false,
            last_stripe: usize::MAX,
            first_of_key: false,
            emitted_for_key: false,
            new_user_key: false,
            advance: false,
            out_key: Vec::new(),
            out_value: Vec::new(),
            queue: VecDeque::new(),
            operands: Operands::default(),
            operand_seqs: Vec::new(),
            keys_in: 0,
            keys_out: 0,
        }
    }

    /// Entries read and not written (dropped, or merged into another).
    pub(crate) fn keys_dropped(&self) -> u64 {
        self.keys_in.saturating_sub(self.keys_out)
    }

    /// Marks an entry of `cur_key` as returned.
    fn emit(&mut self) {
        self.keys_out += 1;
        self.new_user_key = !self.emitted_for_key;
        self.emitted_for_key = true;
    }

    /// True if a range tombstone of stripe `s` covers `user_key` at `seq`.
    fn covered(&self, user_key: &[u8], seq: SequenceNumber, s: usize) -> bool {
        let Some(t) = self.p.tombstones else { return false };
        let bound = self.p.snapshots.get(s).copied().unwrap_or(MAX_SEQUENCE);
        let by = t.max_covering_seq(user_key, bound);
        by > seq && stripe(self.p.snapshots, by) == s
    }

    /// The next entry to write: `(internal key, value, first of its user key)` (an output file
    /// may be cut before the first entry of a user key), or `None` at the end of the input.
    pub(crate) fn next(&mut self) -> Result<Option<OutEntry<'_>>> {
        if self.advance {
            self.input.next();
            self.advance = false;
        }
        if let Some((k, v)) = self.queue.pop_front() {
            self.out_key = k;
            self.out_value = v;
            self.emit();
            return Ok(Some((&self.out_key, &self.out_value, self.new_user_key)));
        }
        loop {
            if !self.input.valid() {
                self.input.status()?;
                return Ok(None);
            }
            if self.p.shutting_down.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Err(Error::Busy("compaction stopped: the database is closing".into()));
            }
            let Some(pk) = parse_internal_key(self.input.key()) else {
                return Err(Error::corruption("compaction input", 0, "unparsable internal key"));
            };
            let (kind, seq) = (pk.kind, pk.seq);
            self.keys_in += 1;
            if !self.has_cur || pk.user_key != self.cur_key.as_slice() {
                self.cur_key.clear();
                self.cur_key.extend_from_slice(pk.user_key);
                self.has_cur = true;
                self.last_stripe = usize::MAX;
                self.first_of_key = true;
                self.emitted_for_key = false;
            }
            let first = std::mem::replace(&mut self.first_of_key, false);
            let s = stripe(self.p.snapshots, seq);
            let mut drop = s == self.last_stripe;
            self.last_stripe = s;
            if !drop && self.covered(&self.cur_key, seq, s) {
                drop = true;
            }
            if !drop && kind == ValueKind::Delete && self.p.bottommost && s == 0 {
                drop = true;
            }
            if drop {
                self.input.next();
                continue;
            }
            match kind {
                ValueKind::Merge => {
                    self.merge_chain(s, seq)?;
                    match self.queue.pop_front() {
                        Some((k, v)) => {
                            self.out_key = k;
                            self.out_value = v;
                            self.emit();
                            return Ok(Some((&self.out_key, &self.out_value, self.new_user_key)));
                        }
                        None => continue,
                    }
                }
                ValueKind::Put | ValueKind::BlobIndex
                    if first
                        && self.p.filter.is_some()
                        && (kind == ValueKind::Put || self.p.blobs.is_some()) =>
                {
                    if let Some(made) = self.filter_value(s, seq, kind)? {
                        if !made {
                            self.input.next();
                            continue;
                        }
                        self.advance = true;
                        self.emit();
                        return Ok(Some((&self.out_key, &self.out_value, self.new_user_key)));
                    }
                }
                _ => {}
            }
            self.advance = true;
            self.emit();
            if self.p.zero_seqs && s == 0 && kind == ValueKind::Put && seq != 0 {
                // At the bottom, the newest version below every snapshot gets sequence 0 (as
                // RocksDB does): nothing older can exist beneath it, and an all-zero trailer
                // compresses far better.
                self.out_key.clear();
                append_internal_key(&mut self.out_key, &self.cur_key, 0, ValueKind::Put);
                return Ok(Some((&self.out_key, self.input.value(), self.new_user_key)));
            }
            return Ok(Some((self.input.key(), self.input.value(), self.new_user_key)));
        }
    }

    /// Offers the input's current entry (the newest of its key, a put or a blob index of
    /// `kind` in stripe `s` at `seq`) to the filter, a blob index with the value it points to
    /// (read through `blobs`, as RocksDB reads it for a filter that asks for blob values).
    /// `None`: keep it as it is; `Some(true)`: `out_key`/`out_value` hold what replaces it (a
    /// changed value is a put, inline; the job may separate it again); `Some(false)`: it is
    /// dropped (removed at the bottom).
    fn filter_value(
        &mut self,
        s: usize,
        seq: SequenceNumber,
        kind: ValueKind,
    ) -> Result<Option<bool>> {
        let Some((f, level)) = self.p.filter else { return Ok(None) };
        let resolved;
        let value = match (kind, self.p.blobs) {
            (ValueKind::BlobIndex, Some(b)) => {
                resolved = b.blob_value(&self.cur_key, self.input.value())?;
                &resolved[..]
            }
            (ValueKind::BlobIndex, None) => return Ok(None),
            _ => self.input.value(),
        };
        let decision = filter::apply(f, level, &self.cur_key, FilterValueType::Value, value)?;
        self.out_key.clear();
        match decision {
            FilterDecision::Keep => Ok(None),
            FilterDecision::Remove => {
                if self.p.bottommost && s == 0 {
                    return Ok(Some(false));
                }
                append_internal_key(&mut self.out_key, &self.cur_key, seq, ValueKind::Delete);
                self.out_value.clear();
                Ok(Some(true))
            }
            FilterDecision::ChangeValue(v) => {
                let seq = if self.p.zero_seqs && s == 0 { 0 } else { seq };
                append_internal_key(&mut self.out_key, &self.cur_key, seq, ValueKind::Put);
                self.out_value = v;
                Ok(Some(true))
            }
        }
    }

    /// The input is at a merge operand of `cur_key` in stripe `s` (at `seq`), the newest of its
    /// stripe: gathers the chain, merges it, and queues what replaces it. Leaves the input at
    /// the first entry it did not consume.
    fn merge_chain(&mut self, s: usize, seq: SequenceNumber) -> Result<()> {
        self.operands.clear();
        self.operand_seqs.clear();
        let newest = seq;
        let latest_snapshot = self.p.snapshots.last().copied();
        let mut cur_seq = seq;
        // The base is a value in a blob file, which a job does not read.
        let mut blob_base = false;
        let end = loop {
            // The input is at an operand of the chain (counted in `keys_in`).
            let offered = latest_snapshot.is_none_or(|l| cur_seq > l);
            let decision = match self.p.filter {
                Some((f, level)) if offered => filter::apply(
                    f,
                    level,
                    &self.cur_key,
                    FilterValueType::MergeOperand,
                    self.input.value(),
                )?,
                _ => FilterDecision::Keep,
            };
            match decision {
                FilterDecision::Keep => self.operands.push(self.input.value()),
                FilterDecision::ChangeValue(v) => self.operands.push(&v),
                FilterDecision::Remove => {}
            }
            if self.operands.len() > self.operand_seqs.len() {
                self.operand_seqs.push(cur_seq);
            }
            self.input.next();
            if !self.input.valid() {
                self.input.status()?;
                break ChainEnd::KeyEnd;
            }
            let Some(pk) = parse_internal_key(self.input.key()) else {
                return Err(Error::corruption("compaction input", 0, "unparsable internal key"));
            };
            if pk.user_key != self.cur_key.as_slice() {
                break ChainEnd::KeyEnd;
            }
            if stripe(self.p.snapshots, pk.seq) != s {
                break ChainEnd::StripeEnd;
            }
            let (kind, next_seq) = (pk.kind, pk.seq);
            if self.covered(&self.cur_key, next_seq, s) {
                self.keys_in += 1;
                self.input.next();
                break ChainEnd::Covered;
            }
            if kind != ValueKind::Merge {
                blob_base = kind == ValueKind::BlobIndex;
                break ChainEnd::Base(kind == ValueKind::Put);
            }
            self.keys_in += 1;
            cur_seq = next_seq;
        };
        if self.operands.is_empty() {
            // The filter removed every operand: a base still in the input is the newest entry
            // of the stripe now.
            if matches!(end, ChainEnd::Base(_)) {
                self.last_stripe = usize::MAX;
            }
            return Ok(());
        }
        if blob_base {
            // The operands as they are, then the blob index as the newest entry left in the
            // stripe: reads merge them over the value (`iter::db_iter`, `db::read::merge`).
            self.queue_operands();
            self.last_stripe = usize::MAX;
            return Ok(());
        }
        let op = self.p.merge;
        let full = match end {
            ChainEnd::Base(is_put) => {
                let base = is_put.then(|| self.input.value());
                Some(full_merge_in_job(op, &self.cur_key, base, &self.operands)?)
            }
            ChainEnd::Covered => Some(full_merge_in_job(op, &self.cur_key, None, &self.operands)?),
            ChainEnd::KeyEnd if self.p.bottommost => {
                Some(full_merge_in_job(op, &self.cur_key, None, &self.operands)?)
            }
            ChainEnd::KeyEnd | ChainEnd::StripeEnd => None,
        };
        match full {
            Some(Some(v)) => {
                // The chain (and a base still in the input) become one put.
                if matches!(end, ChainEnd::Base(_)) {
                    self.keys_in += 1;
                    self.input.next();
                }
                let seq = if self.p.zero_seqs && s == 0 { 0 } else { newest };
                self.queue_entry(seq, ValueKind::Put, v);
                self.last_stripe = s;
            }
            Some(None) => {
                // Not mergeable here: the operands as they are, then the base as the newest
                // entry left in the stripe.
                self.queue_operands();
                let base_left = matches!(end, ChainEnd::Base(_));
                self.last_stripe = if base_left { usize::MAX } else { s };
            }
            None => {
                match partial_merge_in_job(op, &self.cur_key, &self.operands)? {
                    Some(v) => self.queue_entry(newest, ValueKind::Merge, v),
                    None => self.queue_operands(),
                }
                self.last_stripe = s;
            }
        }
        Ok(())
    }

    /// Queues `cur_key` at `seq` of `kind` with `value`.
    fn queue_entry(&mut self, seq: SequenceNumber, kind: ValueKind, value: Vec<u8>) {
        let mut k = Vec::with_capacity(self.cur_key.len() + 8);
        append_internal_key(&mut k, &self.cur_key, seq, kind);
        self.queue.push_back((k, value));
    }

    /// Queues the chain's operands, newest first, each at its own sequence number.
    fn queue_operands(&mut self) {
        for i in 0..self.operand_seqs.len() {
            let v = self.operands.get(i).to_vec();
            self.queue_entry(self.operand_seqs[i], ValueKind::Merge, v);
        }
    }
}

#[cfg(test)]
#[path = "iterator_tests.rs"]
mod tests;
