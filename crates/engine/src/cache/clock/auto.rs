//! [`AutoHyperClockCache`]: the clock cache whose tables grow as entries arrive, selected by
//! `estimated_entry_charge = 0` with `cache_type = hyper_clock_cache` (RocksDB's meaning of 0:
//! "automatic", its `AutoHyperClockCache`). Called by the block cache (`db/open.rs`) and
//! `talus cache_bench`. Entries, slots, the lookup/insert/erase protocol, pinning and the
//! clock are the fixed cache's ([`super::HyperClockCache`], `clock/table.rs`); only the sizing
//! differs. No lock is taken on lookup, erase or a non-growing insert.
//!
//! # Design: generations of fixed tables
//!
//! Each shard (`auto/shard.rs`) holds a list of fixed tables, newest first, behind an
//! `ArcSwap`, and one usage counter all of them charge. The first table has 16 slots.
//! * **Insert** goes into the newest table. When that table is at its occupancy limit (84% of
//!   its slots) and could not hold a full shard of entries of the current average charge
//!   (`capacity * entries / usage` above the limit: slots, not bytes, will run out first),
//!   the inserting thread takes the shard's growth mutex, builds a table with twice the slots
//!   or, if more, enough for the projected entries (up to the largest size; a filling cache
//!   so goes through two or three generations, not one per doubling), and publishes
//!   `[new, previous newest, older non-empty ones]`; threads that raced to grow see the new
//!   list and use it. Entries are not moved: they stay where they
//!   are until evicted, erased or replaced. After placing its entry, an insert hides every
//!   other copy of the key, in the newest table and in every older table of the list it
//!   loaded, so once an insert returns, later lookups find its value (or a racing insert's).
//!   A table stops growing at the size for entries of [`MIN_AVG_ENTRY_CHARGE`] bytes on
//!   average (RocksDB's `min_avg_entry_charge`); below that size the cache evicts by occupancy
//!   like the fixed one.
//! * **Lookup and erase** probe the newest table first, then the older ones. A lookup finds
//!   the newest copy: an older table only holds a key no later insert has replaced.
//! * **Eviction** (usage over capacity) sweeps the older tables first, oldest first, evicting
//!   every unreferenced, unpinned entry it passes regardless of its countdown (at most 256
//!   slots per table per call, so pinned leftovers cost little), then the newest table by the
//!   normal clock. A hot entry evicted from an old table is missed once and reinserted into the
//!   newest. An insert into a full newest table at its largest size (where slots, not bytes,
//!   may bind for good and the byte eviction above never run) also evicts one entry of the
//!   oldest non-empty table, so old tables drain whichever limit binds. (A full newest table
//!   below that size that may not grow, because bytes bind too, evicts in itself by the clock.)
//!   An insert that could not free enough sets the shard's over-capacity hint (one account
//!   for all its generations, `clock/table/account.rs`): until usage is back within capacity,
//!   the release of an entry's last handle, in whichever generation, frees the entry.
//! * **Retiring** a table: when an older table is empty, the next eviction or growth publishes
//!   a list without it (under the growth mutex, `try_lock` on the eviction path). Operations
//!   hold the list they loaded (`Arc`), so the table is freed only when no operation can still
//!   be inside it. An insert that loaded a stale list may still place an entry into a retired
//!   table: the entry is unreachable (as if evicted at once) and is freed, its charge taken
//!   off the shard's usage, when that insert drops its list (or, if it kept a handle, when
//!   the handle goes: a table dropped while handles point into it orphans their slots,
//!   `clock/table/owner.rs`).
//!
//! # Memory overhead and cost of a miss
//!
//! A slot is 64 bytes for values of up to 24 bytes, 128 for a `Block` (see [`super`]); the
//! newest table is 42% to 84% occupied after growth, so 76 to 152 (or 152 to 305) bytes per
//! entry, plus the older tables while they drain (together fewer slots than the newest: at
//! most as much again). A hit in the newest table costs what the fixed cache's hit does plus
//! one `ArcSwap` load; a miss probes one
//! sequence per generation (each usually ends at its first slot, whose displacement count is
//! zero). While the cache fills without evicting, the generations accumulate (two or three
//! when the entries' average charge stays about the same, at most log2(largest / 16) + 1);
//! once the cache evicts, older tables drain and are retired, and a full cache runs on one
//! table.
//!
//! Accounting is exact: usage is the sum of the charges of the entries present in every
//! generation (a retired table's leftovers are taken off when it is freed), and usage returns
//! to 0 when every entry is erased or evicted.

mod shard;

use super::table::{hash_key, SlotRef};
use super::{initial_countdown, metadata_charge, shard_index, slot_bits_for, MIN_SLOT_BITS};
use crate::cache::{Cache, CacheHandle, CacheKey, MetadataChargePolicy, Priority};
use shard::AutoShard;

/// The smallest average entry charge the tables are grown for (RocksDB's default
/// `min_avg_entry_charge`): bounds the table at `capacity / 450 / 0.7` slots per shard.
pub const MIN_AVG_ENTRY_CHARGE: usize = 450;

/// A lock-free CLOCK cache whose per-shard tables grow with the number of entries (RocksDB's
/// `AutoHyperClockCache`).
pub struct AutoHyperClockCache<V> {
    shards: Box<[AutoShard<V>]>,
    shard_bits: u32,
    capacity: usize,
    /// Bytes added to every entry's charge (the slot, under `FullCharge`).
    metadata: usize,
}

impl<V: Send + Sync> AutoHyperClockCache<V> {
    /// A cache of `capacity` bytes in 2^`num_shard_bits` shards (at most 2^20), each starting
    /// with a table of 16 slots.
    ///
    /// ```
    /// use talus::cache::{AutoHyperClockCache, Cache};
    /// let c: AutoHyperClockCache<u64> = AutoHyperClockCache::new(1 << 20, 0, false);
    /// for i in 0..1000 {
    ///     c.insert((i, 0), i, 1000);
    /// }
    /// assert_eq!(c.lookup((7, 0)).as_deref(), Some(&7));
    /// assert!(c.table_address_count() > 16);
    /// ```
    pub fn new(capacity: usize, num_shard_bits: u32, strict_capacity_limit: bool) -> Self {
        Self::with_min_avg_entry_charge(
            capacity,
            num_shard_bits,
            strict_capacity_limit,
            MIN_AVG_ENTRY_CHARGE,
        )
    }

    /// As [`AutoHyperClockCache::new`], the tables growing at most to the size for entries of
    /// `min_avg_entry_charge` bytes on average (RocksDB's `min_avg_entry_charge`; 0 is taken
    /// as 1).
    pub fn with_min_avg_entry_charge(
        capacity: usize,
        num_shard_bits: u32,
        strict_capacity_limit: bool,
        min_avg_entry_charge: usize,
    ) -> Self {
        let shard_bits = num_shard_bits.min(20);
        let n = 1usize << shard_bits;
        let per_shard = capacity.div_ceil(n);
        let max_bits = slot_bits_for(per_shard, min_avg_entry_charge, 0);
        let shards = (0..n)
            .map(|_| AutoShard::new(per_shard, strict_capacity_limit, MIN_SLOT_BITS, max_bits))
            .collect();
        AutoHyperClockCache { shards, shard_bits, capacity, metadata: 0 }
    }

    /// Charges each entry its table slot too under [`MetadataChargePolicy::FullCharge`]
    /// (RocksDB's default policy); [`MetadataChargePolicy::DontCharge`] is the constructors'.
    pub fn with_metadata_charge_policy(mut self, policy: MetadataChargePolicy) -> Self {
        self.metadata = metadata_charge::<V>(policy);
        self
    }

    fn shard(&self, hash: u64) -> &AutoShard<V> {
        &self.shards[shard_index(hash, self.shard_bits)]
    }

    /// Number of entries held (all generations of all shards; racy while others write).
    pub fn len(&self) -> usize {
        self.shards.iter().map(AutoShard::occupancy).sum()
    }

    /// True if no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of slots, all generations (RocksDB's `GetTableAddressCount`).
    pub fn table_address_count(&self) -> usize {
        self.shards.iter().map(AutoShard::table_len).sum()
    }

    /// The most generations any shard holds right now (1: no older table is draining).
    pub fn max_generations(&self) -> usize {
        self.shards.iter().map(AutoShard::generations).max().unwrap_or(0)
    }
}

impl<V: Send + Sync> Cache<V> for AutoHyperClockCache<V> {
    #[inline]
    fn lookup(&self, key: CacheKey) -> Option<CacheHandle<V>> {
        let h = hash_key(key);
        self.shard(h).lookup(h, key).map(CacheHandle::from_slot)
    }
    fn insert_with_priority(&self, key: CacheKey, value: V, charge: usize, pri: Priority) -> bool {
        let h = hash_key(key);
        let countdown = initial_countdown(pri);
        let charge = charge.saturating_add(self.metadata);
        self.shard(h).insert(h, key, value, charge, countdown, false, |_, _| ()).is_ok()
    }
    fn insert_and_hold(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V> {
        let h = hash_key(key);
        let countdown = initial_countdown(pri);
        let charge = charge.saturating_add(self.metadata);
        // With `hold` the insert published the slot with one reference for us.
        let held = self.shard(h).insert(h, key, value, charge, countdown, true, SlotRef::adopt)?;
        Ok(CacheHandle::from_slot(held))
    }
    fn erase(&self, key: CacheKey) {
        let h = hash_key(key);
        self.shard(h).erase(h, key);
    }
    fn usage(&self) -> usize {
        self.shards.iter().map(AutoShard::usage).sum()
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn name(&self) -> &'static str {
        "AutoHyperClockCache"
    }
    fn for_each_entry(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.shards.iter() {
            s.for_each(f);
        }
    }
}

#[cfg(test)]
mod tests;
