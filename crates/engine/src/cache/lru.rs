//! [`LruCache`]: 2^num_shard_bits shards, each a `parking_lot::Mutex` over a hash map from key to
//! value and slot, and index-based doubly linked LRU lists in a slab of nodes (`lru/shard.rs`; a
//! lookup moves a node to the front without allocating). An entry inserted through [`Cache`] is
//! an `Arc` of its value, key and shard (`lru/entry.rs`), and its handles are clones of that
//! `Arc`: eviction drops the cache's reference only, so a reader holding a value keeps it alive.
//! [`LruCache::lookup_shared`] and [`LruCache::insert_shared`] take and give bare `Arc<V>`s
//! instead (the table cache keeps its readers so); the two kinds of entries can share a cache,
//! but `lookup_shared` finds only the second.
//!
//! # Pools
//!
//! As RocksDB's `LRUCache`, each shard keeps a high-priority pool of at most
//! `high_pri_pool_ratio` of its capacity: entries inserted with [`Priority::High`] (index and
//! filter blocks) and entries that have been hit at least once go to the head of the
//! high-priority list; others go to the head of the low-priority list. When the high pool is
//! over its share, its least recently used entries move to the head of the low list.
//! Eviction takes the tail of the low list first, then the tail of the high list. With ratio
//! 0 there is one list (plain LRU).
//!
//! # Capacity and pinning
//!
//! Capacity is split evenly between shards. An entry held outside the cache (a handle, or a
//! shared `Arc`) is pinned: eviction passes over it (moving it to the head of its list).
//! Without `strict_capacity_limit` an insert always succeeds and evicts unpinned entries until
//! the shard fits (it may stay over capacity by pinned entries, or by the new entry itself when
//! it is larger than the shard); with it, an insert that cannot fit after evicting is refused.
//! While a shard is over capacity, the release of an entry's last handle frees that entry, as
//! RocksDB's `LRUCacheShard::Release` does (`lru/entry.rs`): so once the handles taken during a
//! burst of reads are dropped, a shard holds at most its capacity, or one entry more when that
//! entry alone is larger than the room left (an entry shared with `lookup_shared` is released
//! by dropping its `Arc`, which never locks: it waits for the shard's next insert).
//!
//! Locks: each call locks exactly one shard, except `usage`, `pinned_usage`, `len` and
//! `for_each_entry`, which visit the shards one after another; a handle's release locks its
//! shard only while the shard is flagged over capacity. Values are never dropped while a shard
//! is locked, except the cache's own reference to an evicted, erased or replaced entry (its
//! last one when no handle is out).

use std::sync::Arc;

use super::{Cache, CacheHandle, CacheKey, MetadataChargePolicy, Priority};
use entry::{Entry, Home};
use shard::{Node, Shard, Slot, Stored};

mod entry;
mod shard;

pub(super) use entry::LruRef;

/// A sharded LRU cache: 2^num_shard_bits shards, each a mutex over a hash map and LRU lists.
pub struct LruCache<V> {
    shards: Box<[Arc<Home<V>>]>,
    shard_bits: u32,
    capacity: usize,
    strict: bool,
    /// Bytes added to every entry's charge (node, `Arc` counts, map slot, the entry's key and
    /// shard, under `FullCharge`).
    metadata: usize,
}

impl<V: Send + Sync> LruCache<V> {
    /// A cache of `capacity` bytes in 2^`num_shard_bits` shards (at most 2^20; the option stops
    /// at 2^19), without a high-priority pool.
    pub fn new(capacity: usize, num_shard_bits: u32, strict_capacity_limit: bool) -> Self {
        LruCache::with_high_pri_pool(capacity, num_shard_bits, strict_capacity_limit, 0.0)
    }

    /// As [`LruCache::new`], reserving up to `high_pri_pool_ratio` (clamped to 0..=1) of each
    /// shard for high-priority and hit entries (RocksDB's `LRUCacheOptions::high_pri_pool_ratio`).
    pub fn with_high_pri_pool(
        capacity: usize,
        num_shard_bits: u32,
        strict_capacity_limit: bool,
        high_pri_pool_ratio: f64,
    ) -> Self {
        let ratio =
            if high_pri_pool_ratio.is_nan() { 0.0 } else { high_pri_pool_ratio.clamp(0.0, 1.0) };
        let shard_bits = num_shard_bits.min(20);
        let n = 1usize << shard_bits;
        let per_shard = capacity.div_ceil(n);
        let shards = (0..n).map(|_| Arc::new(Home::new(Shard::new(per_shard, ratio)))).collect();
        LruCache { shards, shard_bits, capacity, strict: strict_capacity_limit, metadata: 0 }
    }

    fn shard(&self, key: CacheKey) -> &Arc<Home<V>> {
        let h = (key.0 ^ key.1.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let i = if self.shard_bits == 0 { 0 } else { (h >> (64 - self.shard_bits)) as usize };
        // `i < 2^shard_bits == shards.len()`; fall back to shard 0 defensively.
        self.shards.get(i).or_else(|| self.shards.first()).expect("at least one shard")
    }

    /// Number of entries held (all shards).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.shard.lock().len()).sum()
    }

    /// True if no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Looks a key inserted with [`LruCache::insert_shared`] up, marking it recently used;
    /// returns the cache's own `Arc` (cloned). An entry inserted through [`Cache`] is a miss
    /// here (its value is not a bare `Arc<V>`).
    pub fn lookup_shared(&self, key: CacheKey) -> Option<Arc<V>> {
        match self.shard(key).shard.lock().lookup(key)? {
            Stored::Shared(v) => Some(v),
            Stored::Handled(_) => None,
        }
    }

    /// Inserts (or replaces) `value`, sharing the caller's `Arc`. Returns whether it was
    /// inserted (with `strict_capacity_limit`, a value that cannot fit is not).
    pub fn insert_shared(
        &self,
        key: CacheKey,
        value: Arc<V>,
        charge: usize,
        pri: Priority,
    ) -> bool {
        self.insert_stored(self.shard(key), key, Stored::Shared(value), charge, pri)
    }

    fn insert_stored(
        &self,
        home: &Home<V>,
        key: CacheKey,
        value: Stored<V>,
        charge: usize,
        pri: Priority,
    ) -> bool {
        let charge = charge.saturating_add(self.metadata);
        let mut shard = home.shard.lock();
        let inserted = shard.insert(key, value, charge, pri, self.strict);
        home.sync_over(&shard);
        inserted
    }

    /// Charges each entry the cache's own bytes for it too under
    /// [`MetadataChargePolicy::FullCharge`] (RocksDB's default policy, which charges its
    /// `LRUHandle`): the node, the `Arc`'s two counts, the entry's key and shard reference, and
    /// a hash-map slot (key, node index, value pointer and its tag, and the control byte).
    /// [`MetadataChargePolicy::DontCharge`] is the constructors'.
    pub fn with_metadata_charge_policy(mut self, policy: MetadataChargePolicy) -> Self {
        self.metadata = match policy {
            MetadataChargePolicy::DontCharge => 0,
            MetadataChargePolicy::FullCharge => {
                std::mem::size_of::<Node>()
                    + 2 * std::mem::size_of::<usize>()
                    + std::mem::size_of::<Entry<()>>()
                    + std::mem::size_of::<(CacheKey, Slot<V>)>()
                    + 1
            }
        };
        self
    }

    /// Bytes charged by entries in the high-priority pools (all shards).
    pub fn high_pri_pool_usage(&self) -> usize {
        self.shards.iter().map(|s| s.shard.lock().high_usage).sum()
    }

    /// A new entry for `value`, sharing the shard of `key`.
    fn entry(home: &Arc<Home<V>>, key: CacheKey, value: V) -> Arc<Entry<V>> {
        Arc::new(Entry { home: Arc::clone(home), key, value })
    }
}

impl<V: Send + Sync> Cache<V> for LruCache<V> {
    fn lookup(&self, key: CacheKey) -> Option<CacheHandle<V>> {
        Some(match self.shard(key).shard.lock().lookup(key)? {
            Stored::Handled(e) => CacheHandle::from_lru(LruRef::new(e)),
            Stored::Shared(v) => CacheHandle::from_arc(v),
        })
    }
    fn insert_with_priority(&self, key: CacheKey, value: V, charge: usize, pri: Priority) -> bool {
        let home = self.shard(key);
        let e = Self::entry(home, key, value);
        self.insert_stored(home, key, Stored::Handled(e), charge, pri)
    }
    fn insert_and_hold(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V> {
        let home = self.shard(key);
        let e = Self::entry(home, key, value);
        if self.insert_stored(home, key, Stored::Handled(Arc::clone(&e)), charge, pri) {
            return Ok(CacheHandle::from_lru(LruRef::new(e)));
        }
        // Refused: the shard dropped its clone, so ours is the only one left and the value
        // comes back (were it still shared, a handle would do as well).
        match Arc::try_unwrap(e) {
            Ok(entry) => Err(entry.value),
            Err(shared) => Ok(CacheHandle::from_lru(LruRef::new(shared))),
        }
    }
    fn erase(&self, key: CacheKey) {
        let home = self.shard(key);
        let mut shard = home.shard.lock();
        shard.erase(key);
        home.sync_over(&shard);
    }
    fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.shard.lock().usage).sum()
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn name(&self) -> &'static str {
        "LRUCache"
    }
    fn for_each_entry(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.shards.iter() {
            s.shard.lock().for_each(f);
        }
    }
}

impl<V> Drop for LruCache<V> {
    /// Each entry refers to its shard, which holds the entry: empty the shards so that both are
    /// freed (a shard whose entries still have handles out lives until the last is dropped).
    fn drop(&mut self) {
        for s in self.shards.iter() {
            let held = s.shard.lock().take_all();
            drop(held);
        }
    }
}

#[cfg(test)]
mod tests;
