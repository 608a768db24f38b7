//! Who keeps a table's [`Core`] alive: its [`ClockTable`] (the owner: a shard of the fixed
//! cache, a generation of an automatic shard) and the [`SlotRef`]s (handles) into it.
//!
//! A handle holds raw pointers to its slot and core, not a count on the table: a count would
//! put one more atomic, on a line every thread writes, on every hit. So the table may be
//! dropped while handles are out (the cache dropped before a reader's block, or an automatic
//! shard retiring a generation an insert raced into). Dropping the owner then does this, slot
//! by slot, without waiting for any handle:
//!
//! * an unreferenced visible entry is freed at once;
//! * a slot under construction is being freed by a thread that dropped the last reference of
//!   an invisible entry: wait (spin) until it publishes the slot empty, its last touch of the
//!   table;
//! * a referenced entry, or an invisible one whose last reference was just dropped (its
//!   releaser is on its way to free it), is *orphaned*: made invisible with the orphan bit
//!   set, one token added to the core's `orphans` count, by one compare-exchange.
//!
//! The last release of an orphaned slot frees it and gives its token back; the owner gives
//! back its own token when done; whoever gives back the last token frees the core. So the
//! core outlives every handle and every thread still inside it, and the slots' values are
//! dropped exactly once.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use super::*;
use crate::sync::spin_loop;

/// Owns a table [`Core`] (at a fixed heap address): a shard of the fixed cache or a
/// generation of an automatic shard. Dereferences to the core.
pub(in crate::cache::clock) struct ClockTable<V> {
    core: NonNull<Core<V>>,
    _owns: PhantomData<Core<V>>,
}

// SAFETY: the core is shared between threads only through atomics and the slot protocol;
// values cross threads (dropped by whichever thread frees them, read by any holder), so `V`
// must be `Send + Sync`.
unsafe impl<V: Send + Sync> Send for ClockTable<V> {}
// SAFETY: as above.
unsafe impl<V: Send + Sync> Sync for ClockTable<V> {}

impl<V> ClockTable<V> {
    /// A table of `capacity` bytes with `2^slot_bits` slots (at most 84% of them in use at
    /// once), charging a usage counter of its own.
    pub(in crate::cache::clock) fn new(capacity: usize, slot_bits: u32, strict: bool) -> Self {
        Self::with_usage(capacity, slot_bits, strict, new_usage())
    }

    /// As [`ClockTable::new`], charging to a `usage` counter shared with other tables.
    pub(in crate::cache::clock) fn with_usage(
        capacity: usize,
        slot_bits: u32,
        strict: bool,
        usage: Usage,
    ) -> Self {
        let core = Box::new(Core::new(capacity, slot_bits, strict, usage));
        ClockTable { core: NonNull::from(Box::leak(core)), _owns: PhantomData }
    }
}

impl<V> std::ops::Deref for ClockTable<V> {
    type Target = Core<V>;

    fn deref(&self) -> &Core<V> {
        // SAFETY: the core is alive while its owner is: only `Drop` gives the owner's token
        // back.
        unsafe { self.core.as_ref() }
    }
}

impl<V> Drop for ClockTable<V> {
    fn drop(&mut self) {
        // A loom execution that failed unwinds with the other threads stopped where they were:
        // waiting for one would never end. Leak instead (only then).
        #[cfg(loom)]
        if std::thread::panicking() {
            return;
        }
        let core = self.core.as_ptr();
        // SAFETY: we still hold the owner's token, so the core is alive until we give it back
        // below; no operation borrows this table any more (we are dropping it), so the only
        // other threads in the core are handles releasing.
        let c = unsafe { &*core };
        let mut freed = 0;
        for slot in c.slots.iter() {
            let mut meta = slot.meta.load(Acquire);
            loop {
                let st = state(meta);
                if st == EMPTY {
                    break;
                }
                if st == CONSTRUCTION {
                    // The last reference of an invisible entry was dropped and its releaser
                    // is freeing the slot; its store of `EMPTY` is its last touch of the core.
                    spin_loop();
                    meta = slot.meta.load(Acquire);
                    continue;
                }
                if st == VISIBLE && refcount(meta) == 0 {
                    let take = CONSTRUCTION << STATE_SHIFT;
                    match slot.meta.compare_exchange(meta, take, Acquire, Acquire) {
                        Ok(_) => {
                            freed += c.free_owned(slot);
                            publish(&slot.meta, EMPTY << STATE_SHIFT);
                            break;
                        }
                        Err(now) => {
                            meta = now;
                            continue;
                        }
                    }
                }
                // Referenced, or invisible with its releaser on the way: leave it to them.
                c.orphans.fetch_add(1, Relaxed);
                let orphaned = (meta & !(VISIBLE_BIT << STATE_SHIFT)) | ORPHAN_BIT;
                match slot.meta.compare_exchange(meta, orphaned, AcqRel, Acquire) {
                    Ok(_) => {
                        if st == VISIBLE {
                            // Hidden by us: uncharged now, as an erase does.
                            freed += slot.charge.load(Relaxed);
                        }
                        break;
                    }
                    Err(now) => {
                        c.orphans.fetch_sub(1, Relaxed);
                        meta = now;
                    }
                }
            }
        }
        c.usage.fetch_sub(freed, Relaxed);
        // SAFETY: this is the owner's token.
        unsafe { give_back_token(core) };
    }
}

/// Gives back one token of `core`, freeing it with the last one.
///
/// # Safety
/// The caller holds a token of `core` (the owner's, or an orphaned slot's it just freed) and
/// does not touch the core afterwards.
pub(super) unsafe fn give_back_token<V>(core: *const Core<V>) {
    // SAFETY: our token keeps the core alive until the `fetch_sub`.
    if unsafe { (*core).orphans.fetch_sub(1, AcqRel) } == 1 {
        // SAFETY: no token is left: no owner, no referenced slot, no thread inside (every
        // thread that frees a slot does so under a token or before the owner's drop saw the
        // slot empty). The core came from `Box::leak` in `ClockTable::with_usage`.
        drop(unsafe { Box::from_raw(core.cast_mut()) });
    }
}

/// A reference held on a slot: the cache's handle to an entry ([`crate::cache::CacheHandle`]
/// wraps it). Reads the value in place; dropping it reads the shard's over-capacity hint and
/// releases the reference (one `fetch_add`), or, the hint set, releases it by compare-exchange
/// and frees the entry if the reference was its last (`release_over_capacity`); cloning takes
/// another (one `fetch_add`).
pub(in crate::cache) struct SlotRef<V> {
    slot: NonNull<Slot<V>>,
    core: NonNull<Core<V>>,
}

// SAFETY: a handle reads `V` (shared) and may drop it (its release can free the entry) from
// any thread.
unsafe impl<V: Send + Sync> Send for SlotRef<V> {}
// SAFETY: `&SlotRef` only reads the value.
unsafe impl<V: Send + Sync> Sync for SlotRef<V> {}

impl<V> SlotRef<V> {
    /// Wraps a reference the caller has taken on slot `i` of `core` (a lookup's acquire, or an
    /// insert that published the slot with one reference).
    pub(in crate::cache::clock) fn adopt(core: &Core<V>, i: usize) -> Self {
        SlotRef { slot: NonNull::from(core.slot(i)), core: NonNull::from(core) }
    }

    /// The entry's value.
    #[inline]
    pub(in crate::cache) fn value(&self) -> &V {
        // SAFETY: our reference keeps the slot shareable (so initialized and unwritten) and the
        // core alive (an orphaned slot keeps a token until its last release).
        unsafe { self.slot.as_ref().value() }
    }

    /// True if both handles are on the same slot.
    pub(in crate::cache) fn same_slot(&self, other: &SlotRef<V>) -> bool {
        self.slot == other.slot
    }
}

impl<V> Clone for SlotRef<V> {
    fn clone(&self) -> Self {
        // SAFETY: as in `value`.
        unsafe { self.slot.as_ref() }.add_ref();
        SlotRef { slot: self.slot, core: self.core }
    }
}

impl<V> Drop for SlotRef<V> {
    #[inline]
    fn drop(&mut self) {
        let (core, slot) = (self.core.as_ptr().cast_const(), self.slot.as_ptr().cast_const());
        // SAFETY: our reference keeps the core alive until we give it up.
        if unsafe { (*core).usage.over() } {
            // SAFETY: we hold a reference on `slot`, a slot of `core`, and give it up here.
            unsafe { release_over_capacity(core, slot) };
            return;
        }
        // SAFETY: our reference keeps the slot and core alive until the `fetch_add`; after it we
        // touch them only if we dropped the last reference of an invisible entry, which makes
        // us responsible for freeing it (see the module documentation).
        let old = unsafe { (*slot).meta.fetch_add(RELEASE_INC, Release) };
        // SAFETY: `old` is the word our release replaced.
        unsafe { after_release(core, slot, old) };
    }
}

/// What a release does after giving its reference up: frees an invisible entry whose last
/// reference it was.
///
/// # Safety
/// The caller just released a reference on `slot`, a slot of `core`, replacing the word `old`.
#[inline]
unsafe fn after_release<V>(core: *const Core<V>, slot: *const Slot<V>, old: u64) {
    if state(old) == INVISIBLE && refcount(old) == 1 {
        // SAFETY: a live table's dropper waits for us (slot under construction) or orphans the
        // slot (then its token keeps the core for us).
        unsafe { free_if_unreferenced_invisible(core, slot) };
    }
}

/// The release of a handle while its shard's over-capacity hint is set (`table/account.rs`):
/// if usage is above capacity and ours is the entry's only reference, takes the slot,
/// reference and all (visible with one reference to under construction), frees the entry and
/// uncharges it, as RocksDB's LRU cache frees a released entry when over capacity; otherwise
/// releases the reference as usual (and clears the hint if usage is within capacity).
///
/// Both steps are compare-exchanges on the slot word, so of two handles on one entry released
/// at once, the one that goes second sees that its reference is the last (a `fetch_add`
/// release, as the first, could leave both seeing the other's and neither freeing the entry).
/// Another thread's reference, an erase or the owner's drop changes the word and sends the
/// loop round again. What can still keep a released entry over capacity until the shard's
/// next insert: a lookup probing past it at that instant (a transient reference), or the
/// insert that sets the hint racing the release that read it.
///
/// # Safety
/// The caller holds a reference on `slot`, a slot of `core`, which this gives up; the caller
/// must not touch `core` or `slot` again.
unsafe fn release_over_capacity<V>(core: *const Core<V>, slot: *const Slot<V>) {
    // SAFETY: our reference keeps both alive (see the contract) until we give it up; once we
    // own the slot, the owner's drop waits for our publishing store, which is our last touch.
    let (c, s) = unsafe { (&*core, &*slot) };
    let over = c.usage.load(Relaxed) > c.capacity;
    if !over {
        c.usage.set_over(false);
    }
    let mut meta = s.meta.load(Relaxed);
    loop {
        if over && state(meta) == VISIBLE && refcount(meta) == 1 {
            let take = CONSTRUCTION << STATE_SHIFT;
            match s.meta.compare_exchange(meta, take, Acquire, Relaxed) {
                Ok(_) => {
                    let charge = c.free_owned(s);
                    if c.usage.fetch_sub(charge, Relaxed).saturating_sub(charge) <= c.capacity {
                        c.usage.set_over(false);
                    }
                    // The last touch of a live table: its dropper waits for this store.
                    publish(&s.meta, EMPTY << STATE_SHIFT);
                    return;
                }
                Err(now) => {
                    meta = now;
                    continue;
                }
            }
        }
        // The usual release (a `fetch_add` of one release), as a compare-exchange.
        match s.meta.compare_exchange(meta, meta.wrapping_add(RELEASE_INC), Release, Relaxed) {
            Ok(old) => {
                // SAFETY: we just released our reference, replacing `old`.
                unsafe { after_release(core, slot, old) };
                return;
            }
            Err(now) => meta = now,
        }
    }
}
