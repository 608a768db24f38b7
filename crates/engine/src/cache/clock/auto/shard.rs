//! One shard of the [`AutoHyperClockCache`](super::AutoHyperClockCache): a short list of
//! fixed [`ClockTable`]s (generations, newest first) sharing one usage counter. The design and
//! its costs are in the parent module's doc comment.
//!
//! Locks: `grow` (a mutex) is taken only to publish a new list (a grown table, or the list
//! without drained generations); lookups, erases and inserts that need no growth never take it.
//! The list is an `ArcSwap`: every operation loads it once and works on that snapshot; a table
//! dropped from the list is freed when the last snapshot holding it goes.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use super::super::table::{charge_usage, new_usage, ClockTable, Core, SlotRef, Usage};
use crate::cache::CacheKey;

/// The generations of a shard, newest first (never empty).
type Gens<V> = Vec<Arc<ClockTable<V>>>;

/// One shard: its generations and their shared accounting.
pub(super) struct AutoShard<V> {
    gens: ArcSwap<Gens<V>>,
    grow: Mutex<()>,
    usage: Usage,
    capacity: usize,
    strict: bool,
    max_slot_bits: u32,
}

impl<V> AutoShard<V> {
    /// A shard of `capacity` bytes starting with one table of 2^`initial_bits` slots, which
    /// may grow to 2^`max_bits`.
    pub(super) fn new(capacity: usize, strict: bool, initial_bits: u32, max_bits: u32) -> Self {
        let usage = new_usage();
        let first = ClockTable::with_usage(capacity, initial_bits, strict, Arc::clone(&usage));
        AutoShard {
            gens: ArcSwap::from_pointee(vec![Arc::new(first)]),
            grow: Mutex::new(()),
            usage,
            capacity,
            strict,
            max_slot_bits: max_bits.max(initial_bits),
        }
    }

    /// Bytes charged by the entries of every generation.
    pub(super) fn usage(&self) -> usize {
        self.usage.load(Relaxed)
    }

    /// Entries held, over every generation.
    pub(super) fn occupancy(&self) -> usize {
        self.gens.load().iter().map(|t| t.occupancy()).sum()
    }

    /// Slots, over every generation.
    pub(super) fn table_len(&self) -> usize {
        self.gens.load().iter().map(|t| t.table_len()).sum()
    }

    /// Number of generations (1 when no older table is still draining).
    pub(super) fn generations(&self) -> usize {
        self.gens.load().len()
    }

    /// (slots, entries) of each generation, newest first.
    #[cfg(test)]
    pub(super) fn generations_for_test(&self) -> Vec<(usize, usize)> {
        self.gens.load().iter().map(|t| (t.table_len(), t.occupancy())).collect()
    }

    /// Finds `key`: the newest generation first, then the older ones.
    pub(super) fn lookup(&self, hash: u64, key: CacheKey) -> Option<SlotRef<V>> {
        self.gens.load().iter().find_map(|t| t.lookup(hash, key))
    }

    /// Hides `key` in every generation.
    pub(super) fn erase(&self, hash: u64, key: CacheKey) {
        for t in self.gens.load().iter() {
            t.erase(hash, key, None);
        }
    }

    /// Calls `f(value, charge, pinned)` for every visible entry of every generation.
    pub(super) fn for_each(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for t in self.gens.load().iter() {
            t.for_each(f);
        }
    }

    /// Inserts into the newest generation (growing it first if it is at its occupancy limit
    /// while the shard's bytes are not), then hides every other copy of `key` in the
    /// generations it saw. With `hold` the new slot is published with one reference. Returns
    /// `placed(table, slot)`, called while the insert still holds the table, or the value back if it
    /// was refused (strict limit, or nothing evictable).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert<R>(
        &self,
        hash: u64,
        key: CacheKey,
        value: V,
        charge: usize,
        countdown: u64,
        hold: bool,
        placed: impl FnOnce(&Core<V>, usize) -> R,
    ) -> Result<R, V> {
        let mut gens = self.gens.load_full();
        let evict = |need| self.evict(&gens, need);
        if !charge_usage(&self.usage, self.capacity, self.strict, charge, evict) {
            return Err(value);
        }
        let newest = loop {
            let newest = &gens[0];
            if newest.try_reserve() {
                break Arc::clone(newest);
            }
            if self.should_grow(&gens) {
                if let Some(grown) = self.grow(&gens) {
                    gens = grown;
                    continue;
                }
            }
            // The newest table stays this size: free a slot in it. At its largest size slots,
            // not bytes, may be what is scarce for good, and the charge eviction that drains
            // older tables may never run: drain one entry of the oldest here too.
            if slot_bits(newest) >= self.max_slot_bits {
                if let Some(old) = gens[1..].iter().rev().find(|t| t.occupancy() > 0) {
                    old.evict(0, 1, true);
                }
            }
            if newest.reserve_or_evict() {
                break Arc::clone(newest);
            }
            self.usage.fetch_sub(charge, Relaxed);
            return Err(value);
        };
        let at = newest.place(hash, key, value, charge, countdown, hold)?;
        newest.erase(hash, key, Some(at));
        for t in gens.iter().filter(|t| !Arc::ptr_eq(t, &newest)) {
            t.erase(hash, key, None);
        }
        Ok(placed(&newest, at))
    }

    /// Grow when the newest table is below its largest size and could not hold a full shard
    /// of entries of the current average charge: `capacity * entries / usage` (over every
    /// generation) above its occupancy limit. Entries charged nothing always grow it.
    fn should_grow(&self, gens: &Gens<V>) -> bool {
        let newest = &gens[0];
        if slot_bits(newest) >= self.max_slot_bits {
            return false;
        }
        self.projected_entries(gens) > newest.occupancy_limit() as u128
    }

    /// Entries a full shard would hold at the current average charge, `capacity * entries /
    /// usage` over every generation (unbounded when nothing is charged yet).
    fn projected_entries(&self, gens: &Gens<V>) -> u128 {
        let entries = gens.iter().map(|t| t.occupancy()).sum::<usize>() as u128;
        match self.usage.load(Relaxed) as u128 {
            0 => u128::MAX,
            usage => self.capacity as u128 * entries / usage,
        }
    }

    /// Publishes a list whose newest table has at least twice the slots of `seen[0]` (enough
    /// for the projected entries, up to the largest size), unless another
    /// thread has already replaced `seen[0]` (then returns the current list) or it is at the
    /// largest size (`None`). Drained older generations are left out of the new list.
    fn grow(&self, seen: &Arc<Gens<V>>) -> Option<Arc<Gens<V>>> {
        let _g = self.grow.lock();
        let cur = self.gens.load_full();
        if !Arc::ptr_eq(&cur[0], &seen[0]) {
            return Some(cur);
        }
        // Twice the slots, or at once enough for the projected entries at the occupancy limit
        // (84%), so that a filling cache goes through few generations.
        let want = (self.projected_entries(&cur).saturating_mul(100) / 84).max(1);
        let want_bits = (u128::BITS - (want - 1).leading_zeros()).min(self.max_slot_bits);
        let bits = (slot_bits(&cur[0]) + 1).max(want_bits);
        if bits > self.max_slot_bits {
            return None;
        }
        let usage = Arc::clone(&self.usage);
        let table = Arc::new(ClockTable::with_usage(self.capacity, bits, self.strict, usage));
        let mut list = Vec::with_capacity(cur.len() + 1);
        list.push(table);
        list.push(Arc::clone(&cur[0]));
        list.extend(cur[1..].iter().filter(|t| t.occupancy() > 0).cloned());
        let list = Arc::new(list);
        self.gens.store(Arc::clone(&list));
        Some(list)
    }

    /// Frees at least `need` bytes if it can: older generations first, oldest first, ignoring
    /// their CLOCK countdowns (they are being drained), then the newest by the clock. Returns
    /// the bytes freed (already taken off usage).
    fn evict(&self, gens: &Gens<V>, need: usize) -> usize {
        let mut freed = 0;
        for t in gens[1..].iter().rev().filter(|t| t.occupancy() > 0) {
            freed += t.evict(need - freed, 0, true).0;
            if freed >= need {
                break;
            }
        }
        if freed < need {
            freed += gens[0].evict(need - freed, 0, false).0;
        }
        if gens.len() > 1 && gens[1..].iter().any(|t| t.occupancy() == 0) {
            self.retire_drained();
        }
        freed
    }

    /// Drops drained older generations from the list, unless another thread holds the growth
    /// lock (it will drop them when it publishes its list, or a later eviction will).
    fn retire_drained(&self) {
        let Some(_g) = self.grow.try_lock() else {
            return;
        };
        let cur = self.gens.load_full();
        if cur[1..].iter().all(|t| t.occupancy() > 0) {
            return;
        }
        let mut list = Vec::with_capacity(cur.len());
        list.push(Arc::clone(&cur[0]));
        list.extend(cur[1..].iter().filter(|t| t.occupancy() > 0).cloned());
        self.gens.store(Arc::new(list));
    }
}

fn slot_bits<V>(t: &ClockTable<V>) -> u32 {
    t.table_len().trailing_zeros()
}
