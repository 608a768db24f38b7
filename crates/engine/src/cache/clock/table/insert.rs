//! The insert side of a [`ClockTable`]: charging usage (with eviction to make room), reserving
//! occupancy, claiming a slot, and the clock hand that evicts. The fixed cache calls
//! [`Core::insert`], which does all of it on one table; the automatic cache
//! (`clock/auto`) calls the parts separately ([`charge_usage`], [`Core::try_reserve`],
//! [`Core::place`], [`Core::evict`]) because its usage and eviction span several
//! tables. No locks: every step is atomic read-modify-writes on the slots and counters.

use super::account::Account;
use super::*;

/// Adds `charge` to `usage`, calling `evict(bytes needed)` (which returns the bytes it freed
/// and has already subtracted them from `usage`) to make room. Strict: never takes `usage`
/// over `capacity` and fails if eviction cannot make room. Otherwise always succeeds, evicts
/// what it can, and sets the account's over-capacity hint when that was not enough (clears it
/// when it was: `table/account.rs`).
pub(in crate::cache::clock) fn charge_usage(
    usage: &Account,
    capacity: usize,
    strict: bool,
    charge: usize,
    mut evict: impl FnMut(usize) -> usize,
) -> bool {
    if !strict {
        let now = usage.fetch_add(charge, Relaxed).saturating_add(charge);
        let short = if now > capacity {
            let need = now - capacity;
            evict(need) < need
        } else {
            false
        };
        usage.set_over(short);
        return true;
    }
    if charge > capacity {
        return false;
    }
    let mut cur = usage.load(Relaxed);
    for _ in 0..8 {
        if cur + charge <= capacity {
            match usage.compare_exchange_weak(cur, cur + charge, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => {
                    cur = now;
                    continue;
                }
            }
        }
        let freed = evict(cur + charge - capacity);
        if freed == 0 {
            return false;
        }
        cur = usage.load(Relaxed);
    }
    false
}

/// Most slots one forced eviction looks at (bounds the cost an insert pays to drain an older
/// table that holds pinned entries).
const FORCE_SWEEP: u64 = 256;

impl<V> Core<V> {
    /// Inserts `value` under `key`, replacing (making invisible) any entry with the same key;
    /// with `hold` the slot is published with one reference, which the caller adopts
    /// ([`SlotRef::adopt`]). Returns the slot, or the value back if it was refused (strict
    /// limit, or no slot could be freed). The entry starts with CLOCK countdown `countdown`
    /// (at most [`MAX_COUNTDOWN`]).
    pub(in crate::cache::clock) fn insert(
        &self,
        hash: u64,
        key: CacheKey,
        value: V,
        charge: usize,
        countdown: u64,
        hold: bool,
    ) -> Result<usize, V> {
        let evict = |need| self.evict(need, 0, false).0;
        if !charge_usage(&self.usage, self.capacity, self.strict, charge, evict) {
            return Err(value);
        }
        // Keep the table below its load factor: evict one entry if it is at the limit.
        if !self.reserve_or_evict() {
            self.usage.fetch_sub(charge, Relaxed);
            return Err(value);
        }
        let at = self.place(hash, key, value, charge, countdown, hold)?;
        self.erase(hash, key, Some(at));
        Ok(at)
    }

    /// Takes one unit of occupancy if the table is below its occupancy limit.
    pub(in crate::cache::clock) fn try_reserve(&self) -> bool {
        if self.occupancy.fetch_add(1, Acquire) < self.occupancy_limit {
            return true;
        }
        self.occupancy.fetch_sub(1, Relaxed);
        false
    }

    /// Takes one unit of occupancy, evicting one entry (by the clock) if the table is at its
    /// limit. False if nothing could be evicted.
    pub(in crate::cache::clock) fn reserve_or_evict(&self) -> bool {
        if self.try_reserve() {
            return true;
        }
        if self.evict(0, 1, false).1 == 0 {
            return false;
        }
        self.occupancy.fetch_add(1, Relaxed);
        true
    }

    /// Writes the entry into the first empty slot of its probe sequence and makes it visible
    /// (with one reference for the caller if `hold`); the caller has charged `charge` to usage
    /// and reserved one unit of occupancy (the eviction of an entry also hands its unit over).
    /// Does not hide other entries of `key`. Returns the slot, or the value back if every slot
    /// was taken (possible only above the occupancy limit under races): then the charge and
    /// the reservation are given back.
    pub(in crate::cache::clock) fn place(
        &self,
        hash: u64,
        key: CacheKey,
        value: V,
        charge: usize,
        countdown: u64,
        hold: bool,
    ) -> Result<usize, V> {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            // SeqCst here, on the publishing swap and in `erase`: see `Core::erase`.
            let old = slot.meta.fetch_or(OCCUPIED_BIT << STATE_SHIFT, SeqCst);
            if state(old) == EMPTY {
                // We own the slot: fill it and publish it with one store.
                slot.key0.store(key.0, Relaxed);
                slot.key1.store(key.1, Relaxed);
                slot.charge.store(charge, Relaxed);
                // SAFETY: we own the slot exclusively and it holds no value (it was empty).
                slot.value.with_mut(|p| unsafe { (*p).write(value) });
                let meta = shareable_meta(VISIBLE, countdown.min(MAX_COUNTDOWN), u64::from(hold));
                slot.meta.swap(meta, SeqCst);
                return Ok(i);
            }
            slot.displacements.fetch_add(1, SeqCst);
        }
        self.rollback(hash, None);
        self.occupancy.fetch_sub(1, Relaxed);
        self.usage.fetch_sub(charge, Relaxed);
        Err(value)
    }

    /// Runs the clock hand until `need_charge` bytes and `need_count` entries are freed or the
    /// hand has gone round the table `MAX_COUNTDOWN + 1` times. With `force` (at most
    /// [`FORCE_SWEEP`] slots looked at)
    /// the countdown is ignored: every unreferenced entry the hand passes is evicted
    /// (the automatic cache drains its older tables so). Returns (charge, entries) freed; both
    /// usage and occupancy are already lowered.
    pub(in crate::cache::clock) fn evict(
        &self,
        need_charge: usize,
        need_count: usize,
        force: bool,
    ) -> (usize, usize) {
        let len = self.slots.len() as u64;
        let budget = if force { len.min(FORCE_SWEEP) } else { (MAX_COUNTDOWN + 1) * len };
        let limit = self.clock.load(Relaxed) + budget;
        let (mut freed_charge, mut freed) = (0usize, 0usize);
        loop {
            let hand = self.clock.fetch_add(CLOCK_STEP, Relaxed);
            for j in hand..hand + CLOCK_STEP {
                let i = (j as usize) & self.mask;
                if self.clock_update(i, force) {
                    let slot = self.slot(i);
                    freed_charge += self.free_owned(slot);
                    publish(&slot.meta, EMPTY << STATE_SHIFT);
                    freed += 1;
                }
            }
            if (freed_charge >= need_charge && freed >= need_count) || hand >= limit {
                self.usage.fetch_sub(freed_charge, Relaxed);
                return (freed_charge, freed);
            }
        }
    }
}
