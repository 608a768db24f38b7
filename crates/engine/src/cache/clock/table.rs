//! One shard of the [`HyperClockCache`](super::HyperClockCache), or one generation of a shard
//! of the [`AutoHyperClockCache`](super::AutoHyperClockCache) (then its usage counter is shared
//! with the shard's other generations): a fixed-size open-addressing
//! table whose slots are each guarded by one `AtomicU64` metadata word (RocksDB's
//! `FixedHyperClockTable`, 7.x). No locks anywhere; every operation is a handful of atomic
//! read-modify-writes on the slots it probes plus one on the shard's usage counter.
//!
//! # The metadata word
//!
//! ```text
//!  63..61  state: 000 empty, 100 under construction, 110 invisible, 111 visible
//!  60      unused
//!  59..30  release counter (30 bits)
//!  29..0   acquire counter (30 bits)
//! ```
//!
//! * **References.** `acquire - release` (mod 2^30) is the number of threads holding a reference.
//!   A reference is only meaningful in a *shareable* state (visible or invisible): while one is
//!   held, nobody can take the slot exclusively, so its key, charge and value are stable.
//! * **Exclusive ownership.** A thread owns a slot when it moves it to *under construction*:
//!   from *empty* by `fetch_or` of the occupied bit (insert), or from a shareable state with zero
//!   references by compare-exchange (erase, eviction, last release of an invisible entry). The
//!   owner writes or clears the slot's fields and publishes with one `store` of the whole word,
//!   which also discards increments made by optimistic lookups in the meantime.
//! * **CLOCK countdown.** When no reference is held, `acquire == release` and that common value is
//!   the entry's countdown: a new entry starts at [`INITIAL_COUNTDOWN`], every lookup adds one
//!   (acquire then release), and the sweep lowers it to at most [`MAX_COUNTDOWN`]` - 1`, evicting
//!   an unreferenced entry whose countdown is zero. Hot entries survive up to three sweeps.
//! * **Overflow.** Every release checks the top bit of the release counter and, when set, clears
//!   the top bit of both counters at once, which keeps their difference (the reference count).
//!
//! # Probing
//!
//! Double hashing over a power-of-two table (odd increment, so a probe sequence visits every slot
//! once). Each slot also counts the *displacements* through it: the entries that live further
//! along a probe sequence passing this slot. A lookup stops at the first slot whose count is zero,
//! so misses are short; insert increments the counts on its way, and freeing an entry walks its
//! sequence again to decrement them ("rollback").
//!
//! # Values
//!
//! A slot holds an `Arc<V>` turned into a raw pointer. A lookup takes a reference on the slot
//! (one `fetch_add`), clones the `Arc` (the slot reference keeps the pointer alive meanwhile) and
//! releases the slot reference (one `fetch_add`). The caller then holds an ordinary `Arc`, so
//! slot references are only ever held for a few instructions and eviction never waits for a
//! reader to finish with a value.

use std::marker::PhantomData;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::Arc;

use crate::cache::CacheKey;

const COUNTER_BITS: u32 = 30;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;
const ACQUIRE_SHIFT: u32 = 0;
const RELEASE_SHIFT: u32 = COUNTER_BITS;
const ACQUIRE_INC: u64 = 1 << ACQUIRE_SHIFT;
const RELEASE_INC: u64 = 1 << RELEASE_SHIFT;
const STATE_SHIFT: u32 = 61;

const OCCUPIED_BIT: u64 = 0b100;
const VISIBLE_BIT: u64 = 0b001;
const EMPTY: u64 = 0b000;
const CONSTRUCTION: u64 = 0b100;
const INVISIBLE: u64 = 0b110;
const VISIBLE: u64 = 0b111;

/// Highest CLOCK countdown an entry can reach (RocksDB's `kMaxCountdown`).
pub(super) const MAX_COUNTDOWN: u64 = 3;
/// Countdown of a newly inserted entry (RocksDB's `kLowCountdown`, the default priority).
pub(super) const INITIAL_COUNTDOWN: u64 = 2;
/// Slots examined per step of the clock hand.
const CLOCK_STEP: u64 = 4;

fn state(meta: u64) -> u64 {
    meta >> STATE_SHIFT
}

fn acquires(meta: u64) -> u64 {
    (meta >> ACQUIRE_SHIFT) & COUNTER_MASK
}

fn releases(meta: u64) -> u64 {
    (meta >> RELEASE_SHIFT) & COUNTER_MASK
}

fn refcount(meta: u64) -> u64 {
    acquires(meta).wrapping_sub(releases(meta)) & COUNTER_MASK
}

fn shareable_meta(state: u64, countdown: u64) -> u64 {
    (state << STATE_SHIFT) | (countdown << RELEASE_SHIFT) | (countdown << ACQUIRE_SHIFT)
}

/// One table slot (48 bytes). Every field is atomic so that no access is a data race whatever
/// the protocol does; the protocol is what makes the values read meaningful.
pub(super) struct Slot<V> {
    meta: AtomicU64,
    displacements: AtomicU32,
    key0: AtomicU64,
    key1: AtomicU64,
    charge: AtomicUsize,
    /// `Arc::into_raw` of the value while the slot is visible or invisible; null otherwise.
    value: AtomicPtr<V>,
}

impl<V> Slot<V> {
    fn new() -> Self {
        Slot {
            meta: AtomicU64::new(0),
            displacements: AtomicU32::new(0),
            key0: AtomicU64::new(0),
            key1: AtomicU64::new(0),
            charge: AtomicUsize::new(0),
            value: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    fn key(&self) -> CacheKey {
        (self.key0.load(Relaxed), self.key1.load(Relaxed))
    }
}

/// The probe sequence of a hash: `len` distinct slot indexes.
fn probe(hash: u64, mask: usize) -> impl Iterator<Item = usize> {
    let base = hash as usize;
    let inc = ((hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 33) as usize) | 1;
    (0..=mask).map(move |i| base.wrapping_add(i.wrapping_mul(inc)) & mask)
}

/// Hashes a cache key (all 64 bits well mixed; shards use the top bits, slots the low bits).
pub(super) fn hash_key(key: CacheKey) -> u64 {
    let mut h = key.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key.1.rotate_left(29);
    h ^= h >> 32;
    h = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
    h ^= h >> 32;
    h = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
    h ^ (h >> 32)
}

/// One shard: the slots, the clock hand and the usage/occupancy counters.
pub(super) struct ClockTable<V> {
    slots: Box<[Slot<V>]>,
    mask: usize,
    occupancy_limit: usize,
    occupancy: AtomicUsize,
    /// Bytes charged: the table's own counter (fixed cache) or the one its shard's generations
    /// share (automatic cache).
    usage: Arc<AtomicUsize>,
    capacity: usize,
    strict: bool,
    clock: AtomicU64,
    /// The table owns `Arc<V>`s: Send/Sync follow `Arc<V>`, not `AtomicPtr`.
    _owns: PhantomData<Arc<V>>,
}

impl<V> ClockTable<V> {
    /// A shard of `capacity` bytes with `2^slot_bits` slots, at most `occupancy_limit` of them
    /// in use at once.
    pub(super) fn new(capacity: usize, slot_bits: u32, strict: bool) -> Self {
        Self::with_usage(capacity, slot_bits, strict, Arc::new(AtomicUsize::new(0)))
    }

    /// As [`ClockTable::new`], charging to a `usage` counter shared with other tables.
    pub(super) fn with_usage(
        capacity: usize,
        slot_bits: u32,
        strict: bool,
        usage: Arc<AtomicUsize>,
    ) -> Self {
        let len = 1usize << slot_bits;
        let slots = (0..len).map(|_| Slot::new()).collect();
        // RocksDB's kStrictLoadFactor: keep probe sequences short even when entries are small.
        let occupancy_limit = ((len as f64) * 0.84).ceil().max(1.0) as usize;
        ClockTable {
            slots,
            mask: len - 1,
            occupancy_limit,
            occupancy: AtomicUsize::new(0),
            usage,
            capacity,
            strict,
            clock: AtomicU64::new(0),
            _owns: PhantomData,
        }
    }

    fn slot(&self, i: usize) -> &Slot<V> {
        // `i` always comes from `probe` or the clock hand, both masked by `self.mask`.
        &self.slots[i & self.mask]
    }

    pub(super) fn usage(&self) -> usize {
        self.usage.load(Relaxed)
    }

    pub(super) fn occupancy(&self) -> usize {
        self.occupancy.load(Relaxed)
    }

    pub(super) fn occupancy_limit(&self) -> usize {
        self.occupancy_limit
    }

    pub(super) fn table_len(&self) -> usize {
        self.slots.len()
    }

    /// Finds `key`, returning a clone of its value.
    pub(super) fn lookup(&self, hash: u64, key: CacheKey) -> Option<Arc<V>> {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            // Optimistic: take a reference first, look at the state afterwards. In the states
            // that are not shareable the increment is garbage the owner's final store discards.
            let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
            match state(old) {
                VISIBLE if slot.key() == key => {
                    let p = slot.value.load(Relaxed);
                    let got = if p.is_null() {
                        None
                    } else {
                        // SAFETY: `p` came from `Arc::into_raw` when the slot was filled, and
                        // that `Arc` is only dropped by a thread that owns the slot exclusively,
                        // which cannot happen while our reference (taken above, state visible)
                        // is held. So the allocation is live and its strong count >= 1.
                        unsafe {
                            Arc::increment_strong_count(p);
                            Some(Arc::from_raw(p))
                        }
                    };
                    self.release(i);
                    return got;
                }
                VISIBLE | INVISIBLE => self.undo_acquire(i),
                _ => {}
            }
            if slot.displacements.load(Acquire) == 0 {
                return None;
            }
        }
        None
    }

    /// Drops a reference taken by a lookup that used the entry (raises its countdown).
    fn release(&self, i: usize) {
        let slot = self.slot(i);
        let old = slot.meta.fetch_add(RELEASE_INC, Release);
        self.correct_near_overflow(slot, old);
        if state(old) == INVISIBLE && refcount(old) == 1 {
            self.free_if_unreferenced_invisible(i);
        }
    }

    /// Drops a reference without counting a use (a probe that passed a non-matching entry).
    fn undo_acquire(&self, i: usize) {
        let old = self.slot(i).meta.fetch_sub(ACQUIRE_INC, Release);
        if state(old) == INVISIBLE && refcount(old) == 1 {
            self.free_if_unreferenced_invisible(i);
        }
    }

    fn correct_near_overflow(&self, slot: &Slot<V>, old: u64) {
        const TOP: u64 = 1 << (COUNTER_BITS - 1);
        if old & (TOP << RELEASE_SHIFT) != 0 {
            // acquire >= release here (their difference is a small reference count), so both top
            // bits are set and clearing them subtracts 2^29 from each, keeping the difference.
            slot.meta.fetch_and(!((TOP << RELEASE_SHIFT) | (TOP << ACQUIRE_SHIFT)), Relaxed);
        }
    }

    /// Frees slot `i` if it is invisible and unreferenced (the last reference just went away).
    fn free_if_unreferenced_invisible(&self, i: usize) {
        let slot = self.slot(i);
        let mut meta = slot.meta.load(Relaxed);
        while state(meta) == INVISIBLE && refcount(meta) == 0 {
            match slot.meta.compare_exchange_weak(
                meta,
                CONSTRUCTION << STATE_SHIFT,
                AcqRel,
                Relaxed,
            ) {
                Ok(_) => {
                    let charge = self.free_owned(i);
                    self.usage.fetch_sub(charge, Relaxed);
                    return;
                }
                Err(now) => meta = now,
            }
        }
    }

    /// Empties slot `i`, which the caller owns exclusively (state under construction): drops the
    /// value, marks the slot empty, undoes the displacements of its probe sequence and lowers the
    /// occupancy. Returns the charge; the caller accounts for usage.
    fn free_owned(&self, i: usize) -> usize {
        let slot = self.slot(i);
        let key = slot.key();
        let charge = slot.charge.load(Relaxed);
        let p = slot.value.swap(std::ptr::null_mut(), Relaxed);
        slot.meta.store(EMPTY, Release);
        self.rollback(hash_key(key), Some(i));
        self.occupancy.fetch_sub(1, Relaxed);
        if !p.is_null() {
            // SAFETY: `p` came from `Arc::into_raw` in `insert`; we own the slot exclusively and
            // have just swapped the pointer out, so this is the slot's one reference, dropped once.
            drop(unsafe { Arc::from_raw(p) });
        }
        charge
    }

    /// Decrements the displacement counts of the probe sequence of `hash` before slot `upto`
    /// (all of it when `None`).
    fn rollback(&self, hash: u64, upto: Option<usize>) {
        for i in probe(hash, self.mask) {
            if Some(i) == upto {
                return;
            }
            self.slot(i).displacements.fetch_sub(1, Release);
        }
    }

    /// One look of the clock hand at slot `i`: lowers the countdown of an unreferenced visible
    /// entry, or takes ownership (returns true) of an unreferenced entry whose countdown is zero
    /// or that is invisible. A visible entry whose value is held outside the cache
    /// (`Arc::strong_count > 1`: pinned) is left alone: the hand looks at the value under a
    /// slot reference first (so lookups keep finding a pinned entry; an entry pinned between
    /// that look and the take is evicted, its holder keeping the value).
    /// With `force` the countdown is ignored (treated as zero).
    fn clock_update(&self, i: usize, force: bool) -> bool {
        let slot = self.slot(i);
        let mut meta = slot.meta.load(Relaxed);
        let st = state(meta);
        if (st != VISIBLE && st != INVISIBLE) || refcount(meta) != 0 {
            return false;
        }
        let countdown = acquires(meta);
        if st == VISIBLE && countdown > 0 && !force {
            let lowered = shareable_meta(VISIBLE, (countdown - 1).min(MAX_COUNTDOWN - 1));
            // Not aggressive: a failure means the entry was just used.
            let _ = slot.meta.compare_exchange(meta, lowered, Relaxed, Relaxed);
            return false;
        }
        if st == VISIBLE {
            let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
            match state(old) {
                VISIBLE => {
                    let pinned = self.value_pinned(slot);
                    self.undo_acquire(i);
                    if pinned {
                        return false;
                    }
                }
                INVISIBLE => {
                    self.undo_acquire(i);
                    return false;
                }
                // Not shareable: the owner's store discards our increment.
                _ => return false,
            }
            meta = slot.meta.load(Relaxed);
            if state(meta) != VISIBLE || refcount(meta) != 0 || (acquires(meta) != 0 && !force) {
                return false;
            }
        }
        slot.meta.compare_exchange(meta, CONSTRUCTION << STATE_SHIFT, Acquire, Relaxed).is_ok()
    }

    /// Makes every visible entry for `key` invisible (except slot `skip`), freeing those nobody
    /// references.
    pub(super) fn erase(&self, hash: u64, key: CacheKey, skip: Option<usize>) {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            if Some(i) != skip {
                let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
                match state(old) {
                    VISIBLE if slot.key() == key => {
                        slot.meta.fetch_and(!(VISIBLE_BIT << STATE_SHIFT), AcqRel);
                        self.undo_acquire(i);
                    }
                    VISIBLE | INVISIBLE => self.undo_acquire(i),
                    _ => {}
                }
            }
            if slot.displacements.load(Acquire) == 0 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod hooks;
mod insert;
mod scan;

pub(super) use insert::charge_usage;

impl<V> Drop for ClockTable<V> {
    /// Drops the values still held and takes their charges off the (possibly shared) usage: a
    /// table the automatic cache retired while a late insert was still placing into it leaves
    /// the shard's accounting exact.
    fn drop(&mut self) {
        let mut charged = 0;
        for slot in self.slots.iter_mut() {
            let p = *slot.value.get_mut();
            if !p.is_null() {
                charged += *slot.charge.get_mut();
                // SAFETY: a non-null pointer is the slot's own `Arc::into_raw` reference (it is
                // nulled whenever the slot is freed); `&mut self` excludes every other user.
                drop(unsafe { Arc::from_raw(p) });
            }
        }
        self.usage.fetch_sub(charged, Relaxed);
    }
}
