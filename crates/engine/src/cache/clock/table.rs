//! One shard of the [`HyperClockCache`](super::HyperClockCache), or one generation of a shard
//! of the [`AutoHyperClockCache`](super::AutoHyperClockCache) (then its usage counter is shared
//! with the shard's other generations): a fixed-size open-addressing
//! table whose slots are each guarded by one `AtomicU64` metadata word (RocksDB's
//! `FixedHyperClockTable`). No locks anywhere; every operation is a handful of atomic
//! read-modify-writes on the slots it probes plus one on the shard's usage counter.
//!
//! # Slots are the handles
//!
//! A slot holds the key, the charge and the value itself (`V`, in place: no allocation per
//! entry). A lookup takes a reference on the slot (one `fetch_add` on its word) and returns a
//! [`SlotRef`], the handle; dropping the handle releases the reference (one `fetch_add`). The
//! value is read through the handle, in the slot, so a hit touches one cache line of the table
//! and nothing else. While a reference is held the slot cannot be taken: the value stays put
//! and the clock hand passes over it (the entry is *pinned*); an erased or replaced entry that
//! is still referenced stays in its slot, invisible to lookups, until the last handle goes.
//!
//! Usage counts the visible entries: the thread that hides an entry (erase, replace) takes its
//! charge off at once, as the LRU cache does when it drops an entry its holders still share
//! (RocksDB's clock cache keeps it charged until freed). The slot stays occupied until freed.
//!
//! # The metadata word
//!
//! ```text
//!  63..61  state: 000 empty, 100 under construction, 110 invisible, 111 visible
//!  60      orphan: the table was dropped while the slot was referenced (`table/owner.rs`)
//!  59..30  release counter (30 bits)
//!  29..0   acquire counter (30 bits)
//! ```
//!
//! * **References.** `acquire - release` (mod 2^30) is the number of references held. A
//!   reference is only meaningful in a *shareable* state (visible or invisible): while one is
//!   held, nobody can take the slot exclusively, so its key, charge and value are stable.
//! * **Exclusive ownership.** A thread owns a slot when it moves it to *under construction*:
//!   from *empty* by `fetch_or` of the occupied bit (insert), from a shareable state with zero
//!   references by compare-exchange (erase, eviction, last release of an invisible entry), or
//!   from *visible* with exactly one reference, the caller's own, by compare-exchange (the
//!   release of a last handle while the shard is over capacity, `table/owner.rs`). The
//!   owner writes or clears the slot's fields and publishes with one `store` of the whole word,
//!   which also discards increments made by optimistic lookups in the meantime.
//! * **CLOCK countdown.** When no reference is held, `acquire == release` and that common value is
//!   the entry's countdown: a new entry starts at [`INITIAL_COUNTDOWN`], every lookup adds one
//!   (acquire then release), and the sweep lowers it to at most [`MAX_COUNTDOWN`]` - 1`, evicting
//!   an unreferenced entry whose countdown is zero. Hot entries survive up to three sweeps.
//! * **Overflow.** A thread that takes a reference and sees the top bit of the release counter
//!   set clears the top bit of both counters at once (it holds a reference, so acquire >=
//!   release >= 2^29: both top bits are set), which keeps their difference. Every release is
//!   preceded by such an acquire, so the release counter never carries into bit 60. (RocksDB
//!   corrects on release; here a release must not touch the slot after its `fetch_add`, see
//!   `table/owner.rs`.)
//! * **Freeing an invisible entry.** The thread that drops the last reference of an invisible
//!   entry frees it (a compare-exchange to under construction); nobody else takes an invisible
//!   slot (the clock hand passes over it). If another thread takes a transient reference
//!   meanwhile (an optimistic lookup), the compare-exchange fails and that thread, dropping
//!   the last reference in turn, frees it instead.
//!
//! # Probing
//!
//! Double hashing over a power-of-two table (odd increment, so a probe sequence visits every slot
//! once). Each slot also counts the *displacements* through it: the entries that live further
//! along a probe sequence passing this slot. A lookup stops at the first slot whose count is zero,
//! so misses are short; insert increments the counts on its way, and freeing an entry walks its
//! sequence again to decrement them ("rollback").

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};

use crossbeam::utils::CachePadded;

use crate::cache::CacheKey;
use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, UnsafeCell};

const COUNTER_BITS: u32 = 30;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;
const ACQUIRE_SHIFT: u32 = 0;
const RELEASE_SHIFT: u32 = COUNTER_BITS;
const ACQUIRE_INC: u64 = 1 << ACQUIRE_SHIFT;
const RELEASE_INC: u64 = 1 << RELEASE_SHIFT;
const STATE_SHIFT: u32 = 61;
/// Set (with the visible bit cleared) on every slot still referenced when its table is
/// dropped: its last release frees it and gives back one of the table's `orphans` tokens.
const ORPHAN_BIT: u64 = 1 << 60;

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

/// A shareable word with countdown `countdown` and `refs` references held.
fn shareable_meta(state: u64, countdown: u64, refs: u64) -> u64 {
    (state << STATE_SHIFT) | (countdown << RELEASE_SHIFT) | ((countdown + refs) << ACQUIRE_SHIFT)
}

/// One table slot: 64 bytes (one cache line) for a value of up to 24 bytes (a `Vec`), a
/// multiple of 64 for larger ones. The key, charge and counters are atomics so that no access
/// is a data race whatever the protocol does; the value is written only by the slot's
/// exclusive owner and read only under a reference, which the protocol makes exclusive of
/// each other.
#[repr(C, align(64))]
pub(super) struct Slot<V> {
    meta: AtomicU64,
    displacements: AtomicU32,
    key0: AtomicU64,
    key1: AtomicU64,
    charge: AtomicUsize,
    /// Initialized while the slot is visible or invisible.
    value: UnsafeCell<MaybeUninit<V>>,
}

impl<V> Slot<V> {
    fn new() -> Self {
        Slot {
            meta: AtomicU64::new(0),
            displacements: AtomicU32::new(0),
            key0: AtomicU64::new(0),
            key1: AtomicU64::new(0),
            charge: AtomicUsize::new(0),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    fn key(&self) -> CacheKey {
        (self.key0.load(Relaxed), self.key1.load(Relaxed))
    }

    /// The value.
    ///
    /// # Safety
    /// The caller holds a reference on the slot (or owns it) and the slot holds a value.
    pub(super) unsafe fn value(&self) -> &V {
        // SAFETY: by the caller's contract the value is initialized and no one may write it
        // while the reference is held.
        self.value.with(|p| unsafe { (*p).assume_init_ref() })
    }

    /// Takes one more reference on a slot the caller already references.
    pub(super) fn add_ref(&self) {
        let old = self.meta.fetch_add(ACQUIRE_INC, Acquire);
        correct_near_overflow(self, old);
    }
}

/// Clears the top bit of both counters when the release counter's is set (see the module
/// documentation); `old` is the word before the caller took a reference.
fn correct_near_overflow<V>(slot: &Slot<V>, old: u64) {
    const TOP: u64 = 1 << (COUNTER_BITS - 1);
    if old & (TOP << RELEASE_SHIFT) != 0 {
        slot.meta.fetch_and(!((TOP << RELEASE_SHIFT) | (TOP << ACQUIRE_SHIFT)), Relaxed);
    }
}

/// The owner's final write of a slot word it frees (publishing it empty): also discards
/// the increments optimistic lookups made while the slot was under construction, which were
/// read-modify-writes ordered before it. A plain `Release` store; under loom a `swap`, because
/// loom 0.7 lets a later store slip between the read and the write of an earlier
/// read-modify-write (tokio-rs/loom#389, fix pending in #391) and would then report a slot
/// stuck under construction that no real execution can produce.
#[inline]
fn publish(meta: &AtomicU64, word: u64) {
    #[cfg(not(loom))]
    meta.store(word, Release);
    #[cfg(loom)]
    meta.swap(word, Release);
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

/// A key whose `hash_key` is `hash` (the hash is a bijection of the first half of a key whose
/// second half is 0): lets a benchmark make keys that collide on chosen hash bits (RocksDB
/// `cache_bench --degenerate_hash_bits`).
pub fn key_for_hash(hash: u64) -> CacheKey {
    // Undo, last step first: `x ^ (x >> 32)` is its own inverse, and multiplying by an odd
    // constant is undone by multiplying by its inverse modulo 2^64.
    let unshift = |h: u64| h ^ (h >> 32);
    let mut h = unshift(hash);
    h = unshift(h.wrapping_mul(inverse(0xd6e8_feb8_6659_fd93)));
    h = unshift(h.wrapping_mul(inverse(0xd6e8_feb8_6659_fd93)));
    (h.wrapping_mul(inverse(0x9e37_79b9_7f4a_7c15)), 0)
}

/// The inverse of an odd `a` modulo 2^64 (Newton's iteration doubles the correct bits).
const fn inverse(a: u64) -> u64 {
    let mut x = a; // correct to 3 bits for odd a
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// The table proper, at a fixed heap address for as long as a handle may point into it (owned
/// by a [`ClockTable`], `table/owner.rs`). The fields lookups read never change; the counters
/// that inserts and the clock hand write sit on cache lines of their own.
pub(super) struct Core<V> {
    slots: Box<[Slot<V>]>,
    mask: usize,
    occupancy_limit: usize,
    capacity: usize,
    strict: bool,
    /// Bytes charged, and whether over capacity: the table's own account (fixed cache) or the
    /// one its shard's generations share (automatic cache).
    usage: Usage,
    occupancy: CachePadded<AtomicUsize>,
    clock: CachePadded<AtomicU64>,
    /// Tokens keeping the core allocated: one of its owner's while it lives, one per orphaned
    /// slot after.
    orphans: CachePadded<AtomicUsize>,
}

impl<V> Core<V> {
    fn new(capacity: usize, slot_bits: u32, strict: bool, usage: Usage) -> Self {
        let len = 1usize << slot_bits;
        let slots = (0..len).map(|_| Slot::new()).collect();
        // RocksDB's kStrictLoadFactor: keep probe sequences short even when entries are small.
        let occupancy_limit = ((len as f64) * 0.84).ceil().max(1.0) as usize;
        Core {
            slots,
            mask: len - 1,
            occupancy_limit,
            capacity,
            strict,
            usage,
            occupancy: CachePadded::new(AtomicUsize::new(0)),
            clock: CachePadded::new(AtomicU64::new(0)),
            orphans: CachePadded::new(AtomicUsize::new(1)),
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

    /// Finds `key` and takes a reference on its slot: a handle to the entry.
    pub(super) fn lookup(&self, hash: u64, key: CacheKey) -> Option<SlotRef<V>> {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            // Optimistic: take a reference first, look at the state afterwards. In the states
            // that are not shareable the increment is garbage the owner's final store discards.
            let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
            match state(old) {
                VISIBLE if slot.key() == key => {
                    correct_near_overflow(slot, old);
                    return Some(SlotRef::adopt(self, i));
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

    /// Drops a reference without counting a use (a probe that passed a non-matching entry).
    fn undo_acquire(&self, i: usize) {
        let old = self.slot(i).meta.fetch_sub(ACQUIRE_INC, Release);
        if state(old) == INVISIBLE && refcount(old) == 1 {
            // SAFETY: `self` is alive (we are inside a method of it) and slot `i` is its own.
            unsafe { free_if_unreferenced_invisible(self, self.slot(i)) };
        }
    }

    /// Empties the contents of slot `i`, which the caller owns exclusively (state under
    /// construction): drops the value, undoes the displacements of its probe sequence and
    /// lowers the occupancy. Returns the charge; the caller accounts for usage and publishes
    /// the slot empty.
    fn free_owned(&self, slot: &Slot<V>) -> usize {
        let key = slot.key();
        let charge = slot.charge.load(Relaxed);
        // SAFETY: the caller owns the slot exclusively and it held a value (it was shareable).
        slot.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        self.rollback(hash_key(key), Some(slot));
        self.occupancy.fetch_sub(1, Relaxed);
        charge
    }

    /// Decrements the displacement counts of the probe sequence of `hash` before `upto` (all
    /// of it when `None`).
    fn rollback(&self, hash: u64, upto: Option<&Slot<V>>) {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            if upto.is_some_and(|u| std::ptr::eq(u, slot)) {
                return;
            }
            slot.displacements.fetch_sub(1, Release);
        }
    }

    /// One look of the clock hand at slot `i`: lowers the countdown of an unreferenced visible
    /// entry, or takes ownership (returns true) of one whose countdown is zero. A referenced
    /// entry (a handle is held: pinned) is left alone, and so is an invisible one: the thread
    /// that dropped its last reference frees it (and must be the only one to, see
    /// `table/owner.rs`). With `force` the countdown is ignored (treated as zero).
    fn clock_update(&self, i: usize, force: bool) -> bool {
        let slot = self.slot(i);
        let meta = slot.meta.load(Relaxed);
        if state(meta) != VISIBLE || refcount(meta) != 0 {
            return false;
        }
        let countdown = acquires(meta);
        if countdown > 0 && !force {
            let lowered = shareable_meta(VISIBLE, (countdown - 1).min(MAX_COUNTDOWN - 1), 0);
            // Not aggressive: a failure means the entry was just used.
            let _ = slot.meta.compare_exchange(meta, lowered, Relaxed, Relaxed);
            return false;
        }
        slot.meta.compare_exchange(meta, CONSTRUCTION << STATE_SHIFT, Acquire, Relaxed).is_ok()
    }

    /// Makes every visible entry for `key` invisible (except slot `skip`), freeing those nobody
    /// references.
    ///
    /// After an insert placed its entry, it erases the other copies of its key (`skip` = its
    /// slot). Two racing inserts of one key must not both miss the other's copy: each one's
    /// displacement increments, publishing swap and this scan are `SeqCst`, so in their single
    /// total order the later publisher's scan sees the earlier one's copy and the displacement
    /// counts leading to it (found by the loom model; with `Acquire`/`Release` alone both
    /// copies could stay visible). On x86 this costs one `xchg` per insert instead of a `mov`.
    pub(super) fn erase(&self, hash: u64, key: CacheKey, skip: Option<usize>) {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            if Some(i) != skip {
                let old = slot.meta.fetch_add(ACQUIRE_INC, SeqCst);
                match state(old) {
                    VISIBLE if slot.key() == key => {
                        let before = slot.meta.fetch_and(!(VISIBLE_BIT << STATE_SHIFT), AcqRel);
                        if state(before) == VISIBLE {
                            // We hid it: it leaves the usage now (its holders keep the value).
                            self.usage.fetch_sub(slot.charge.load(Relaxed), Relaxed);
                        }
                        self.undo_acquire(i);
                    }
                    VISIBLE | INVISIBLE => self.undo_acquire(i),
                    _ => {}
                }
            }
            if slot.displacements.load(SeqCst) == 0 {
                return;
            }
        }
    }
}

/// Frees `slot` if it is invisible and unreferenced (the caller just dropped its last
/// reference); if it was orphaned, gives back its token and frees the core with the last one.
/// (An invisible entry is no longer charged: whoever hid it took its charge off usage.)
///
/// # Safety
/// `core` is alive (it owns `slot`), or the caller's reference just dropped was on an
/// orphaned slot (whose token keeps the core alive until this function gives it back).
/// After this returns the caller must not touch `core` or `slot` again.
unsafe fn free_if_unreferenced_invisible<V>(core: *const Core<V>, slot: *const Slot<V>) {
    // SAFETY: see the function's contract: until the slot is published empty (non-orphan) or
    // the token is given back (orphan), the core is alive.
    let (c, s) = unsafe { (&*core, &*slot) };
    let mut meta = s.meta.load(Relaxed);
    while state(meta) == INVISIBLE && refcount(meta) == 0 {
        match s.meta.compare_exchange_weak(meta, CONSTRUCTION << STATE_SHIFT, AcqRel, Relaxed) {
            Ok(_) => {
                // Uncharged already, when it was hidden.
                c.free_owned(s);
                // The last touch of a live table: its dropper waits for this store.
                publish(&s.meta, EMPTY << STATE_SHIFT);
                if meta & ORPHAN_BIT != 0 {
                    // SAFETY: this slot's token kept the core alive until now.
                    unsafe { owner::give_back_token(core) };
                }
                return;
            }
            Err(now) => meta = now,
        }
    }
}

mod account;
#[cfg(test)]
mod hooks;
mod insert;
#[cfg(loom)]
mod loom_tests;
mod owner;
mod scan;

pub(super) use account::{new_usage, Usage};
pub(super) use insert::charge_usage;
pub(super) use owner::ClockTable;
pub(in crate::cache) use owner::SlotRef;
