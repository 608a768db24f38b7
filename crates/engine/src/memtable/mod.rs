//! The memtable: an in-memory sorted map of internal keys, written by the write groups (a lone
//! leader, or a group's members in parallel) and read concurrently by any number of readers
//! without locks.
//!
//! # Contract
//! - Point entries (puts, deletes, ...) live in an arena-allocated skiplist (`skiplist.rs`) ordered
//!   by [`crate::key::compare_internal`]; each costs one arena allocation, no heap allocation.
//! - Range tombstones live beside it in a `RwLock<Vec<RangeTombstone>>`, plus an `AtomicBool` so
//!   that readers of a memtable that never had one pay a single atomic load. Their fragmented
//!   form is cached ([`MemTable::fragmented_range_tombstones`]): the first reader after a
//!   tombstone was added builds it, later readers share it (one `ArcSwap` load), as RocksDB's
//!   memtables cache theirs. Without the cache every point read re-sorted every tombstone.
//! - Writers: [`MemTable::add`] may be called from any thread; concurrent calls are serialized by
//!   an internal writer mutex (the engine serializes them anyway). The members of a write group
//!   insert their own batches in parallel with [`MemTable::insert_batch_concurrent`] (the
//!   skiplist links with compare-and-swap; the mutex is held only to allocate).
//! - Readers: [`MemTable::get`] and the iterator take no lock and see every entry whose `add`
//!   returned before they started (and possibly later ones), always in sorted order.
//! - Nothing is freed until the memtable is dropped; iterators hold an `Arc<MemTable>`.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use parking_lot::RwLock;

use crate::batch::{BatchOp, WriteBatch};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{
    pack_trailer, parse_internal_key, trailer, user_key, SequenceNumber, ValueKind, KIND_FOR_SEEK,
    MAX_SEQUENCE, TRAILER_LEN,
};

mod arena;
mod chunk_pool;
mod iter;
mod skiplist;

pub use iter::MemTableIterator;
use skiplist::{key_prefix, NodePtr, SkipList};

/// Orders the internal key `ikey` against the internal key `target_user_key ++ target_trailer`
/// (as [`crate::key::compare_internal`] would), without building the target.
#[inline]
fn compare_to_parts(ikey: &[u8], target_user_key: &[u8], target_trailer: u64) -> Ordering {
    match user_key(ikey).cmp(target_user_key) {
        Ordering::Equal => target_trailer.cmp(&trailer(ikey)),
        o => o,
    }
}

/// The fragmented range tombstones of a memtable, as of its first `count` tombstones.
struct Fragmented {
    count: usize,
    tombstones: Arc<FragmentedTombstones>,
}

/// A memtable.
pub struct MemTable {
    list: SkipList,
    has_range_tombstones: AtomicBool,
    range_tombstones: RwLock<Vec<RangeTombstone>>,
    /// `range_tombstones.len()`, stored under its write lock after each push.
    range_tombstone_count: AtomicUsize,
    /// The newest fragmented form built (of `count` tombstones; `count` only grows).
    fragmented: ArcSwapOption<Fragmented>,
    range_tombstone_bytes: AtomicUsize,
    num_entries: AtomicU64,
    num_deletes: AtomicU64,
    /// The smallest sequence number inserted (`u64::MAX` while empty): every write with a
    /// larger sequence number went to this memtable or a newer one (transaction conflict
    /// checks use it to know when the memtables hold all the history they need).
    first_seq: AtomicU64,
}

impl Default for MemTable {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTable")
            .field("entries", &self.num_entries())
            .field("deletes", &self.num_deletes())
            .field("memory", &self.approximate_memory_usage())
            .finish()
    }
}

/// A value inside a memtable, held alive by a reference on the memtable (entries are never
/// moved or freed while the memtable lives): the zero-copy result of a point lookup.
pub struct MemValue {
    mem: Arc<MemTable>,
    /// A node of `mem`'s list (so `SkipList::value` may read it).
    node: NodePtr,
}

impl std::ops::Deref for MemValue {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.mem.list.value(self.node)
    }
}

impl MemTable {
    /// Inserts every operation of `batch`, the i-th at sequence `first_seq + i` (the write
    /// path and WAL replay).
    pub fn insert_batch(&self, batch: &WriteBatch, first_seq: u64) {
        self.insert_batch_with::<false>(batch, first_seq);
    }

    /// [`MemTable::insert_batch`] that may run beside other `insert_batch_concurrent` calls on
    /// this memtable (the members of one write group, each inserting its own batch:
    /// `allow_concurrent_memtable_write`). Safe beside [`MemTable::add`] too (the skiplist links
    /// with compare-and-swap), though the write path never mixes them.
    pub fn insert_batch_concurrent(&self, batch: &WriteBatch, first_seq: u64) {
        self.insert_batch_with::<true>(batch, first_seq);
    }

    /// Inserts the operations of column family `family` in `batch` (numbered from
    /// `first_seq` over the whole batch), skipping the other families' (their sequence numbers
    /// with them): the write path calls it once per family a batch writes (`db/write_mems.rs`).
    pub fn insert_family(&self, batch: &WriteBatch, first_seq: u64, family: u32, concurrent: bool) {
        for (seq, (cf, op)) in (first_seq..).zip(batch.iter_cf()) {
            if cf != family {
                continue;
            }
            self.note_seq(seq);
            if concurrent {
                self.add_op::<true>(seq, op);
            } else {
                self.add_op::<false>(seq, op);
            }
        }
    }

    /// Operations of column families other than `default` are not this memtable's: they are
    /// skipped, their sequence numbers with them (the write path routes them to their family's
    /// memtable; recovery skips a family that is gone, as RocksDB does). `CONCURRENT`: each
    /// instance inlines one of the skiplist's two inserts.
    fn insert_batch_with<const CONCURRENT: bool>(&self, batch: &WriteBatch, first_seq: u64) {
        self.note_seq(first_seq);
        for (seq, (cf, op)) in (first_seq..).zip(batch.iter_cf()) {
            if cf != crate::column_family::DEFAULT_COLUMN_FAMILY_ID {
                continue;
            }
            self.add_op::<CONCURRENT>(seq, op);
        }
    }

    #[inline(always)]
    fn add_op<const CONCURRENT: bool>(&self, seq: u64, op: BatchOp<'_>) {
        match op {
            BatchOp::Put(k, v) => self.add_with(seq, ValueKind::Put, k, v, CONCURRENT),
            BatchOp::Delete(k) => self.add_with(seq, ValueKind::Delete, k, &[], CONCURRENT),
            BatchOp::Merge(k, v) => self.add_with(seq, ValueKind::Merge, k, v, CONCURRENT),
            BatchOp::DeleteRange(b, e) => {
                if b < e {
                    self.add_with(seq, ValueKind::RangeDelete, b, e, CONCURRENT)
                }
            }
        }
    }

    /// An empty memtable.
    pub fn new() -> Self {
        MemTable {
            list: SkipList::new(),
            has_range_tombstones: AtomicBool::new(false),
            range_tombstones: RwLock::new(Vec::new()),
            range_tombstone_count: AtomicUsize::new(0),
            fragmented: ArcSwapOption::empty(),
            range_tombstone_bytes: AtomicUsize::new(0),
            num_entries: AtomicU64::new(0),
            num_deletes: AtomicU64::new(0),
            first_seq: AtomicU64::new(u64::MAX),
        }
    }

    /// Lowers [`MemTable::first_seq`] to `seq` (a load, and a store only the first time).
    #[inline]
    fn note_seq(&self, seq: SequenceNumber) {
        if seq < self.first_seq.load(AtomicOrdering::Relaxed) {
            self.first_seq.fetch_min(seq, AtomicOrdering::AcqRel);
        }
    }

    /// The smallest sequence number inserted, `None` while empty. Writes are given sequence
    /// numbers in order and a memtable is switched between write groups, so every write
    /// numbered above it is in this memtable or a newer one.
    pub fn first_seq(&self) -> Option<SequenceNumber> {
        let s = self.first_seq.load(AtomicOrdering::Acquire);
        (s != u64::MAX).then_some(s)
    }

    /// Inserts an entry. Callers serialize `add` (one writer at a time); readers may run
    /// concurrently. For `RangeDelete`, `key` is the start and `value` the exclusive end.
    ///
    /// Panics if `seq > MAX_SEQUENCE` or the key or value is 4 GiB or longer (caller bugs).
    pub fn add(&self, seq: SequenceNumber, kind: ValueKind, key: &[u8], value: &[u8]) {
        self.note_seq(seq);
        self.add_with(seq, kind, key, value, false);
    }

    #[inline]
    fn add_with(
        &self,
        seq: SequenceNumber,
        kind: ValueKind,
        key: &[u8],
        value: &[u8],
        concurrent: bool,
    ) {
        assert!(seq <= MAX_SEQUENCE, "sequence number {seq} out of range");
        match kind {
            ValueKind::RangeDelete => {
                let t = RangeTombstone { start: key.to_vec(), end: value.to_vec(), seq };
                let bytes = std::mem::size_of::<RangeTombstone>() + key.len() + value.len();
                let mut all = self.range_tombstones.write();
                all.push(t);
                self.range_tombstone_count.store(all.len(), AtomicOrdering::Release);
                drop(all);
                self.range_tombstone_bytes.fetch_add(bytes, AtomicOrdering::Relaxed);
                self.has_range_tombstones.store(true, AtomicOrdering::Release);
            }
            _ => {
                let t = pack_trailer(seq, kind);
                let write_key = |dst: &mut [u8]| {
                    let (k, tr) = dst.split_at_mut(key.len());
                    k.copy_from_slice(key);
                    tr.copy_from_slice(&t.to_le_bytes());
                };
                let cmp = |node_key: &[u8]| compare_to_parts(node_key, key, t);
                let (prefix, len) = (key_prefix(key), key.len() + TRAILER_LEN);
                if concurrent {
                    self.list.insert_concurrent(prefix, len, write_key, cmp, value);
                } else {
                    self.list.insert(prefix, len, write_key, cmp, value);
                }
            }
        }
        if matches!(kind, ValueKind::Delete | ValueKind::SingleDelete | ValueKind::RangeDelete) {
            self.num_deletes.fetch_add(1, AtomicOrdering::Relaxed);
        }
        self.num_entries.fetch_add(1, AtomicOrdering::Relaxed);
    }

    /// The newest point entry of `user_key` with sequence `<= seq`: `(kind, seq, value)`.
    /// Range tombstones are not consulted here (see [`MemTable::range_tombstones`]).
    pub fn get(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
    ) -> Option<(ValueKind, SequenceNumber, &[u8])> {
        let (kind, seq, n) = self.find(user_key, seq)?;
        Some((kind, seq, self.list.value(n)))
    }

    /// As [`MemTable::get`], with the value left in the memtable, which the returned
    /// [`MemValue`] holds alive (no copy).
    pub fn get_pinned(
        self: &Arc<Self>,
        user_key: &[u8],
        seq: SequenceNumber,
    ) -> Option<(ValueKind, SequenceNumber, MemValue)> {
        let (kind, seq, node) = self.find(user_key, seq)?;
        Some((kind, seq, MemValue { mem: Arc::clone(self), node }))
    }

    /// Calls `f(kind, seq, value)` for each point entry of `user_key` with sequence `<= seq`,
    /// newest first, until `f` returns false (a read gathering merge operands).
    pub fn for_each_entry(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        mut f: impl FnMut(ValueKind, SequenceNumber, &[u8]) -> bool,
    ) {
        let Some((_, _, mut n)) = self.find(user_key, seq) else { return };
        loop {
            let Some(p) = parse_internal_key(self.list.key(n)) else { return };
            if p.user_key != user_key || !f(p.kind, p.seq, self.list.value(n)) {
                return;
            }
            match self.list.next_of(n) {
                Some(next) => n = next,
                None => return,
            }
        }
    }

    fn find(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
    ) -> Option<(ValueKind, SequenceNumber, NodePtr)> {
        let target = pack_trailer(seq.min(MAX_SEQUENCE), KIND_FOR_SEEK);
        let n = self
            .list
            .seek_ge(Some(key_prefix(user_key)), |k| compare_to_parts(k, user_key, target))?;
        let p = parse_internal_key(self.list.key(n))?;
        if p.user_key != user_key {
            return None;
        }
        Some((p.kind, p.seq, n))
    }

    /// An iterator over the point entries (puts and deletes), holding the memtable alive.
    pub fn iter(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(MemTableIterator::new(Arc::clone(self)))
    }

    /// Every range tombstone added, in insertion order.
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        if !self.has_range_tombstones() {
            return Vec::new();
        }
        self.range_tombstones.read().clone()
    }

    /// The range tombstones added so far, fragmented for lookups; `None` if there are none.
    ///
    /// Includes every tombstone whose `add` returned before this call (so every tombstone a
    /// read at a published sequence number can see), possibly later ones too, which a read
    /// filters by sequence number anyway. Built by the first caller after a tombstone was added
    /// and shared until the next: a read costs two atomic loads and an `Arc` clone.
    pub fn fragmented_range_tombstones(&self) -> Option<Arc<FragmentedTombstones>> {
        if !self.has_range_tombstones() {
            return None;
        }
        let wanted = self.range_tombstone_count.load(AtomicOrdering::Acquire);
        if let Some(f) = &*self.fragmented.load() {
            if f.count >= wanted {
                return Some(Arc::clone(&f.tombstones));
            }
        }
        let (count, all) = {
            let all = self.range_tombstones.read();
            (all.len(), all.clone())
        };
        let tombstones = Arc::new(FragmentedTombstones::new(all));
        let built = Arc::new(Fragmented { count, tombstones: Arc::clone(&tombstones) });
        // Keep whichever of this and a concurrently built one covers more.
        self.fragmented.rcu(|cur| match cur {
            Some(c) if c.count >= count => Some(Arc::clone(c)),
            _ => Some(Arc::clone(&built)),
        });
        Some(tombstones)
    }

    /// True if any range tombstone was added (cheap: one atomic load).
    pub fn has_range_tombstones(&self) -> bool {
        self.has_range_tombstones.load(AtomicOrdering::Acquire)
    }

    /// Bytes used, including the arena and index overhead.
    pub fn approximate_memory_usage(&self) -> usize {
        self.list.memory_usage() + self.range_tombstone_bytes.load(AtomicOrdering::Relaxed)
    }

    /// Entries added (all kinds).
    pub fn num_entries(&self) -> u64 {
        self.num_entries.load(AtomicOrdering::Relaxed)
    }

    /// Point and range deletions added.
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes.load(AtomicOrdering::Relaxed)
    }

    /// True if nothing was added.
    pub fn is_empty(&self) -> bool {
        self.num_entries() == 0
    }
}

#[cfg(test)]
mod concurrent_tests;
#[cfg(test)]
mod tests;
