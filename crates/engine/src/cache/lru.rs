//! [`LruCache`]: 2^num_shard_bits shards, each a `parking_lot::Mutex` over a hash map from key to
//! value and slot, and index-based doubly linked LRU lists in a slab of nodes (a lookup moves a
//! node to the front without allocating). The value sits in the map, beside the node's index, so
//! a lookup reaches the value and the node each straight from the map: on a cache cold in the
//! CPU caches, their two memory misses overlap instead of following each other. Entries are
//! `Arc<V>` and its handles are clones of them ([`CacheHandle::from_arc`]): eviction drops the
//! cache's reference only, so a reader holding a value keeps it alive.
//! [`LruCache::lookup_shared`] and [`LruCache::insert_shared`] take and give the `Arc`s
//! themselves (the table cache keeps its readers so).
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
//! Capacity is split evenly between shards. An entry whose value is held outside the cache
//! (`Arc::strong_count > 1`) is pinned: eviction passes over it (moving it to the head of its
//! list). Without `strict_capacity_limit` an insert always succeeds and evicts unpinned
//! entries until the shard fits (it may stay over capacity by pinned entries, or by the new
//! entry itself when it is larger than the shard); with it, an insert that cannot fit after
//! evicting is refused. Each call locks exactly one shard, except `usage`, `pinned_usage` and
//! `for_each_entry`, which visit the shards one after another.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Cache, CacheHandle, CacheKey, MetadataChargePolicy, Priority};

const NIL: usize = usize::MAX;
const HIGH: usize = 0;
const LOW: usize = 1;

/// A cheap multiplicative hasher for the `(u64, u64)` keys (SipHash is not needed: keys are not
/// attacker-chosen).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // Fold the well-mixed high bits down: the map indexes buckets by the low bits, and block
        // offsets share their low bits.
        let h = self.0;
        (h ^ (h >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (h >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A map entry: the value and the index of its node.
struct Slot<V> {
    node: usize,
    value: Arc<V>,
}

type KeyMap<V> = HashMap<CacheKey, Slot<V>, BuildHasherDefault<KeyHasher>>;

/// An entry's place in the LRU lists (its value is in the map).
struct Node {
    key: CacheKey,
    charge: usize,
    prev: usize,
    next: usize,
    /// `HIGH` or `LOW`: the list the node is on.
    pool: usize,
    high_pri: bool,
    hit: bool,
}

struct Shard<V> {
    map: KeyMap<V>,
    nodes: Vec<Node>,
    free: Vec<usize>,
    /// Most recently used of each list (`HIGH`, `LOW`).
    head: [usize; 2],
    /// Least recently used of each list.
    tail: [usize; 2],
    usage: usize,
    high_usage: usize,
    capacity: usize,
    high_capacity: usize,
    use_high_pool: bool,
}

impl<V> Shard<V> {
    fn new(capacity: usize, high_pri_pool_ratio: f64) -> Self {
        Shard {
            map: KeyMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: [NIL; 2],
            tail: [NIL; 2],
            usage: 0,
            high_usage: 0,
            capacity,
            high_capacity: (capacity as f64 * high_pri_pool_ratio) as usize,
            use_high_pool: high_pri_pool_ratio > 0.0,
        }
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next, pool, charge) = match self.nodes.get(i) {
            Some(n) => (n.prev, n.next, n.pool, n.charge),
            None => return,
        };
        match self.nodes.get_mut(prev) {
            Some(p) => p.next = next,
            None => self.head[pool] = next,
        }
        match self.nodes.get_mut(next) {
            Some(n) => n.prev = prev,
            None => self.tail[pool] = prev,
        }
        if pool == HIGH {
            self.high_usage -= charge;
        }
    }

    fn push_front(&mut self, i: usize, pool: usize) {
        let old = self.head[pool];
        let Some(n) = self.nodes.get_mut(i) else { return };
        n.prev = NIL;
        n.next = old;
        n.pool = pool;
        if pool == HIGH {
            self.high_usage += n.charge;
        }
        match self.nodes.get_mut(old) {
            Some(o) => o.prev = i,
            None => self.tail[pool] = i,
        }
        self.head[pool] = i;
    }

    /// The list a node goes to when it becomes most recently used (RocksDB's `LRU_Insert`).
    fn pool_for(&self, i: usize) -> usize {
        match self.nodes.get(i) {
            Some(n) if self.use_high_pool && (n.high_pri || n.hit) => HIGH,
            _ => LOW,
        }
    }

    /// Moves the high list's oldest entries to the low list until the pool fits its share.
    fn maintain_pool(&mut self) {
        while self.high_usage > self.high_capacity && self.tail[HIGH] != NIL {
            let t = self.tail[HIGH];
            self.unlink(t);
            self.push_front(t, LOW);
        }
    }

    fn remove_slot(&mut self, i: usize) {
        self.unlink(i);
        if let Some(n) = self.nodes.get_mut(i) {
            self.usage -= n.charge;
            n.charge = 0;
            self.map.remove(&n.key);
            self.free.push(i);
        }
    }

    fn pinned(&self, i: usize) -> bool {
        self.nodes
            .get(i)
            .and_then(|n| self.map.get(&n.key))
            .is_some_and(|s| Arc::strong_count(&s.value) > 1)
    }

    /// Evicts unpinned entries, oldest first, until `usage + extra <= capacity`, never `keep`.
    /// Each entry is looked at most once (pinned ones move to the head of their list).
    fn evict(&mut self, extra: usize, keep: usize) {
        let mut budget = self.map.len();
        while self.usage + extra > self.capacity && budget > 0 {
            budget -= 1;
            let pool = if self.tail[LOW] != NIL { LOW } else { HIGH };
            let t = self.tail[pool];
            if t == NIL {
                return;
            }
            if t == keep || self.pinned(t) {
                self.unlink(t);
                self.push_front(t, pool);
                continue;
            }
            self.remove_slot(t);
        }
    }

    fn lookup(&mut self, key: CacheKey) -> Option<Arc<V>> {
        let slot = self.map.get(&key)?;
        let (i, value) = (slot.node, Arc::clone(&slot.value));
        self.unlink(i);
        if let Some(n) = self.nodes.get_mut(i) {
            n.hit = true;
        }
        let pool = self.pool_for(i);
        self.push_front(i, pool);
        self.maintain_pool();
        Some(value)
    }

    fn insert(
        &mut self,
        key: CacheKey,
        value: Arc<V>,
        charge: usize,
        pri: Priority,
        strict: bool,
    ) -> bool {
        if let Some(i) = self.map.get(&key).map(|s| s.node) {
            self.remove_slot(i);
        }
        if strict {
            if charge > self.capacity {
                return false;
            }
            self.evict(charge, NIL);
            if self.usage + charge > self.capacity {
                return false;
            }
        }
        let node = Node {
            key,
            charge,
            prev: NIL,
            next: NIL,
            pool: LOW,
            high_pri: pri == Priority::High,
            hit: false,
        };
        let i = match self.free.pop() {
            Some(i) => {
                if let Some(slot) = self.nodes.get_mut(i) {
                    *slot = node;
                }
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        self.map.insert(key, Slot { node: i, value });
        let pool = self.pool_for(i);
        self.push_front(i, pool);
        self.usage += charge;
        self.maintain_pool();
        self.evict(0, i);
        true
    }

    fn erase(&mut self, key: CacheKey) {
        if let Some(i) = self.map.get(&key).map(|s| s.node) {
            self.remove_slot(i);
        }
    }

    fn for_each(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.map.values() {
            if let Some(n) = self.nodes.get(s.node) {
                f(&s.value, n.charge, Arc::strong_count(&s.value) > 1);
            }
        }
    }
}

/// A sharded LRU cache: 2^num_shard_bits shards, each a mutex over a hash map and LRU lists.
pub struct LruCache<V> {
    shards: Box<[Mutex<Shard<V>>]>,
    shard_bits: u32,
    capacity: usize,
    strict: bool,
    /// Bytes added to every entry's charge (node, `Arc` counts, map slot, under `FullCharge`).
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
        let shards = (0..n).map(|_| Mutex::new(Shard::new(per_shard, ratio))).collect();
        LruCache { shards, shard_bits, capacity, strict: strict_capacity_limit, metadata: 0 }
    }

    fn shard(&self, key: CacheKey) -> &Mutex<Shard<V>> {
        let h = (key.0 ^ key.1.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let i = if self.shard_bits == 0 { 0 } else { (h >> (64 - self.shard_bits)) as usize };
        // `i < 2^shard_bits == shards.len()`; fall back to shard 0 defensively.
        self.shards.get(i).or_else(|| self.shards.first()).expect("at least one shard")
    }

    /// Number of entries held (all shards).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    /// True if no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Looks a key up, marking it recently used; returns the cache's own `Arc` (cloned).
    pub fn lookup_shared(&self, key: CacheKey) -> Option<Arc<V>> {
        self.shard(key).lock().lookup(key)
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
        let charge = charge.saturating_add(self.metadata);
        self.shard(key).lock().insert(key, value, charge, pri, self.strict)
    }

    /// Charges each entry the cache's own bytes for it too under
    /// [`MetadataChargePolicy::FullCharge`] (RocksDB's default policy, which charges its
    /// `LRUHandle`): the node, the `Arc`'s two counts and a hash-map slot (key, node index,
    /// value pointer and its control byte). [`MetadataChargePolicy::DontCharge`] is the
    /// constructors'.
    pub fn with_metadata_charge_policy(mut self, policy: MetadataChargePolicy) -> Self {
        self.metadata = match policy {
            MetadataChargePolicy::DontCharge => 0,
            MetadataChargePolicy::FullCharge => {
                std::mem::size_of::<Node>()
                    + 2 * std::mem::size_of::<usize>()
                    + std::mem::size_of::<(CacheKey, Slot<V>)>()
                    + 1
            }
        };
        self
    }

    /// Bytes charged by entries in the high-priority pools (all shards).
    pub fn high_pri_pool_usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().high_usage).sum()
    }
}

impl<V: Send + Sync> Cache<V> for LruCache<V> {
    fn lookup(&self, key: CacheKey) -> Option<CacheHandle<V>> {
        self.lookup_shared(key).map(CacheHandle::from_arc)
    }
    fn insert_with_priority(&self, key: CacheKey, value: V, charge: usize, pri: Priority) -> bool {
        self.insert_shared(key, Arc::new(value), charge, pri)
    }
    fn insert_and_hold(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V> {
        let v = Arc::new(value);
        if self.insert_shared(key, Arc::clone(&v), charge, pri) {
            return Ok(CacheHandle::from_arc(v));
        }
        // Refused: the shard dropped its clone, so ours is the only one left and the value
        // comes back (were it still shared, the handle would do as well).
        match Arc::try_unwrap(v) {
            Ok(value) => Err(value),
            Err(shared) => Ok(CacheHandle::from_arc(shared)),
        }
    }
    fn erase(&self, key: CacheKey) {
        self.shard(key).lock().erase(key);
    }
    fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn name(&self) -> &'static str {
        "LRUCache"
    }
    fn for_each_entry(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.shards.iter() {
            s.lock().for_each(f);
        }
    }
}

#[cfg(test)]
mod tests;
