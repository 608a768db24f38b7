//! [`HyperClockCache`]: a lock-free CLOCK cache after RocksDB's `HyperClockCache` (7.x, the
//! fixed-size table), selected with `cache_type = hyper_clock_cache` (alias `clock_cache`) and
//! a non-zero `estimated_entry_charge`. With `estimated_entry_charge = 0` the block cache is
//! the growing variant, [`AutoHyperClockCache`] (`clock/auto.rs`), built from the same tables.
//!
//! The cache is 2^num_shard_bits shards (spreading the usage counter and the clock hand over
//! cache lines), each a fixed open-addressing table of slots guarded by one `AtomicU64` each; the
//! protocol is documented in `clock/table.rs`. Nothing takes a lock. The slot holds the value
//! itself and is the handle: `lookup` is one `fetch_add` on the slot word to take a reference
//! (plus one `fetch_add`/`fetch_sub` pair per non-matching slot probed, usually none), and
//! dropping the returned [`CacheHandle`] one `fetch_add` to release it, both on the slot's
//! cache line (and one load of the shard's over-capacity hint, see below). `insert` charges the
//! shard's usage, runs the clock hand if over capacity, and claims an empty slot with one
//! `fetch_or`. Callers are the table cache / read path (block
//! cache) and `talus cache_bench`.
//!
//! # Sizing and memory overhead
//!
//! Each shard has `2^k` slots, the smallest power of two with at least
//! `shard_capacity / (estimated_entry_charge * 0.7 + metadata)` slots (minimum 16; `metadata` is
//! the slot size under [`MetadataChargePolicy::FullCharge`], else 0: RocksDB's `CalcHashBits`),
//! and holds at most 84% of them occupied. A slot is the 40 bytes of key, charge and counters
//! plus the value in place, rounded up to whole cache lines: 64 bytes for a value of up to 24
//! bytes (`cache_bench`'s `Vec<u8>`), 128 for a block cache's `Block` (72 bytes). Nothing else
//! is allocated per entry. So the overhead is 64 / 0.7 ≈ 91 (`Vec`) or 128 / 0.7 ≈ 183
//! (`Block`) bytes per entry when the estimate is right, up to twice that after rounding to a
//! power of two. The table is
//! allocated up front and never grows (see [`AutoHyperClockCache`] for one that does): if
//! entries are much smaller than the estimate, the cache fills its slots before its capacity
//! and evicts by occupancy instead (usage then stays below capacity); if they are much larger,
//! slots stay empty. Charges are the callers' numbers, plus the entry's slot under
//! [`MetadataChargePolicy::FullCharge`] (RocksDB's default, which the block cache and
//! `talus cache_bench` use; the constructors default to [`MetadataChargePolicy::DontCharge`]).
//!
//! # Capacity and eviction
//!
//! Each shard gets `capacity / 2^num_shard_bits` (rounded up). An insert that takes a shard over
//! its capacity runs the clock hand, which lowers the countdown of unreferenced entries (new
//! entries start at 2, each lookup adds one, up to 3) and evicts those at zero, until enough is
//! freed or the hand has gone four times round the table.
//! * With `strict_capacity_limit` usage never exceeds capacity: an insert that cannot make room
//!   is refused (the value is handed back to the caller).
//! * Without it an insert always goes in and evicts what it can. Usage can then exceed
//!   capacity by the charges of inserts in flight at once (at most one entry per thread, per
//!   shard) and by unreferenced entries the hand has not reached yet; a later insert evicts the
//!   excess (it evicts everything it sees above capacity, not only its own charge). An insert
//!   whose sweep could not free enough (everything else referenced) sets the shard's
//!   over-capacity hint (`table/account.rs`); while it is set, the release of an entry's last
//!   handle frees the entry if usage is still above capacity, as RocksDB's LRU cache does on
//!   release. (RocksDB's clock caches free nothing on release, "to avoid an extra atomic read
//!   of the variable usage_", and stay over until the next insert; here a release reads the
//!   hint, on a line written only when it changes, and usage only while it is set.)
//!
//! # Referenced entries and a full table
//!
//! An entry with a live handle is *pinned*: the clock hand passes over it, so a block a reader
//! or a table reader holds stays charged to the cache. Erasing or replacing a key hides it at
//! once and uncharges it; a pinned entry stays in its slot, invisible, until its last handle
//! goes (then that thread frees it). When every entry the hand visits (four rounds) is referenced,
//! or every slot is taken, the insert gives up and the new value is not cached (it is handed
//! back; `usage` and the counts are unchanged) or, without `strict_capacity_limit`, usage stays
//! above capacity by the pinned charges. Lookups and erases never block or fail. A cache whose
//! capacity is below what is pinned makes every insert sweep the table: size the cache above
//! the pinned index and filter blocks.
//!
//! # Replacing and erasing
//!
//! Inserting a key that is present makes the older entry invisible (lookups stop finding it; it
//! is freed when its last handle goes, at once if none is held). Two racing inserts of one
//! key may each hide the other, leaving the key absent (a miss, never a wrong value), but
//! never both stay visible (`Core::erase`).

mod auto;
mod table;

pub use auto::{AutoHyperClockCache, MIN_AVG_ENTRY_CHARGE};
pub use table::key_for_hash;
pub(super) use table::SlotRef;

use super::{Cache, CacheHandle, CacheKey, MetadataChargePolicy, Priority};
use table::{hash_key, ClockTable, Slot, INITIAL_COUNTDOWN, MAX_COUNTDOWN};

/// RocksDB's load factor for the fixed table: slots per expected entry is 1 / 0.7.
const LOAD_FACTOR: f64 = 0.7;
/// Fewest slots per shard.
const MIN_SLOT_BITS: u32 = 4;
/// Most slots per shard (2^30 slots is 48 GiB of table: more is a configuration mistake).
const MAX_SLOT_BITS: u32 = 30;

/// A lock-free CLOCK cache of values charged by size (RocksDB's HyperClockCache).
pub struct HyperClockCache<V> {
    shards: Box<[ClockTable<V>]>,
    shard_bits: u32,
    capacity: usize,
    /// Bytes added to every entry's charge (the slot, under `FullCharge`).
    metadata: usize,
}

impl<V: Send + Sync> HyperClockCache<V> {
    /// A cache of `capacity` bytes in 2^`num_shard_bits` shards (at most 2^20), its tables sized
    /// for entries of about `estimated_entry_charge` bytes (0 is taken as 1).
    ///
    /// ```
    /// use talus::cache::{Cache, HyperClockCache};
    /// let c: HyperClockCache<String> = HyperClockCache::new(1 << 20, 4096, 2, false);
    /// c.insert((1, 0), "block".to_string(), 4096);
    /// assert_eq!(c.lookup((1, 0)).as_deref().map(String::as_str), Some("block"));
    /// assert_eq!(c.usage(), 4096);
    /// ```
    pub fn new(
        capacity: usize,
        estimated_entry_charge: usize,
        num_shard_bits: u32,
        strict_capacity_limit: bool,
    ) -> Self {
        Self::with_metadata_charge_policy(
            capacity,
            estimated_entry_charge,
            num_shard_bits,
            strict_capacity_limit,
            MetadataChargePolicy::DontCharge,
        )
    }

    /// As [`HyperClockCache::new`], charging each entry its slot too under
    /// [`MetadataChargePolicy::FullCharge`] (and sizing the table for it, as RocksDB:
    /// `capacity / (estimated_entry_charge * 0.7 + slot size)` slots per shard).
    pub fn with_metadata_charge_policy(
        capacity: usize,
        estimated_entry_charge: usize,
        num_shard_bits: u32,
        strict_capacity_limit: bool,
        policy: MetadataChargePolicy,
    ) -> Self {
        let metadata = metadata_charge::<V>(policy);
        let shard_bits = num_shard_bits.min(20);
        let n = 1usize << shard_bits;
        let per_shard = capacity.div_ceil(n);
        let slot_bits = slot_bits_for(per_shard, estimated_entry_charge, metadata);
        let shards =
            (0..n).map(|_| ClockTable::new(per_shard, slot_bits, strict_capacity_limit)).collect();
        HyperClockCache { shards, shard_bits, capacity, metadata }
    }

    fn shard(&self, hash: u64) -> &ClockTable<V> {
        &self.shards[shard_index(hash, self.shard_bits)]
    }

    /// Number of entries held (occupied slots, all shards; racy while others write).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.occupancy()).sum()
    }

    /// True if no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of slots (RocksDB's `GetTableAddressCount`).
    pub fn table_address_count(&self) -> usize {
        self.shards.iter().map(|s| s.table_len()).sum()
    }
}

/// The bytes a clock cache of `V` adds to each entry's charge under `policy`: its table slot.
fn metadata_charge<V>(policy: MetadataChargePolicy) -> usize {
    match policy {
        MetadataChargePolicy::DontCharge => 0,
        MetadataChargePolicy::FullCharge => std::mem::size_of::<Slot<V>>(),
    }
}

/// Table size, in bits of slots, for a shard of `per_shard` bytes holding entries of about
/// `entry_charge` bytes (0 taken as 1) at [`LOAD_FACTOR`], each also charged `metadata` bytes
/// (RocksDB's `CalcHashBits`: a slot per `entry_charge * LOAD_FACTOR + metadata` bytes), within
/// the slot-bit bounds. The fixed cache's table size, and the automatic cache's largest one.
fn slot_bits_for(per_shard: usize, entry_charge: usize, metadata: usize) -> u32 {
    let per_slot = entry_charge.max(1) as f64 * LOAD_FACTOR + metadata as f64;
    let slots = (per_shard as f64 / per_slot).ceil().max(1.0);
    (slots.log2().ceil() as u32).clamp(MIN_SLOT_BITS, MAX_SLOT_BITS)
}

/// The shard of `hash` among `2^shard_bits` shards (its top bits).
fn shard_index(hash: u64, shard_bits: u32) -> usize {
    if shard_bits == 0 {
        0
    } else {
        (hash >> (64 - shard_bits)) as usize
    }
}

/// RocksDB's clock: a high-priority entry starts at the top countdown, a low one below it.
fn initial_countdown(pri: Priority) -> u64 {
    if pri == Priority::High {
        MAX_COUNTDOWN
    } else {
        INITIAL_COUNTDOWN
    }
}

impl<V: Send + Sync> Cache<V> for HyperClockCache<V> {
    #[inline]
    fn lookup(&self, key: CacheKey) -> Option<CacheHandle<V>> {
        let h = hash_key(key);
        self.shard(h).lookup(h, key).map(CacheHandle::from_slot)
    }
    fn insert_with_priority(&self, key: CacheKey, value: V, charge: usize, pri: Priority) -> bool {
        let h = hash_key(key);
        let charge = charge.saturating_add(self.metadata);
        self.shard(h).insert(h, key, value, charge, initial_countdown(pri), false).is_ok()
    }
    fn insert_and_hold(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V> {
        let h = hash_key(key);
        let t = self.shard(h);
        let charge = charge.saturating_add(self.metadata);
        let at = t.insert(h, key, value, charge, initial_countdown(pri), true)?;
        // The insert published slot `at` with one reference for us.
        Ok(CacheHandle::from_slot(SlotRef::adopt(t, at)))
    }
    fn erase(&self, key: CacheKey) {
        let h = hash_key(key);
        self.shard(h).erase(h, key, None);
    }
    fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.usage()).sum()
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn name(&self) -> &'static str {
        "HyperClockCache"
    }
    fn for_each_entry(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.shards.iter() {
            s.for_each(f);
        }
    }
}

#[cfg(test)]
mod tests;
