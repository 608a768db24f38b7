//! [`LruCache`]: 2^num_shard_bits shards, each a `parking_lot::Mutex` over a hash map from key to
//! slot and an index-based doubly linked LRU list in a slab of nodes (a lookup moves a node to
//! the front without allocating). Entries are `Arc<V>`: eviction drops the cache's reference
//! only, so a reader holding a value keeps it alive.
//!
//! Capacity is split evenly between shards. Without `strict_capacity_limit` an insert always
//! succeeds and evicts least-recently-used entries until the shard fits (an entry larger than the
//! whole shard stays alone until the next insert); with it, an entry larger than the shard's
//! capacity is refused. Each call locks exactly one shard, except `usage` which visits all.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Cache, CacheKey};

const NIL: usize = usize::MAX;

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

type KeyMap = HashMap<CacheKey, usize, BuildHasherDefault<KeyHasher>>;

struct Node<V> {
    key: CacheKey,
    value: Option<Arc<V>>,
    charge: usize,
    prev: usize,
    next: usize,
}

struct Shard<V> {
    map: KeyMap,
    nodes: Vec<Node<V>>,
    free: Vec<usize>,
    /// Most recently used.
    head: usize,
    /// Least recently used.
    tail: usize,
    usage: usize,
    capacity: usize,
}

impl<V> Shard<V> {
    fn new(capacity: usize) -> Self {
        Shard {
            map: KeyMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            usage: 0,
            capacity,
        }
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = match self.nodes.get(i) {
            Some(n) => (n.prev, n.next),
            None => return,
        };
        match self.nodes.get_mut(prev) {
            Some(p) => p.next = next,
            None => self.head = next,
        }
        match self.nodes.get_mut(next) {
            Some(n) => n.prev = prev,
            None => self.tail = prev,
        }
    }

    fn push_front(&mut self, i: usize) {
        let old = self.head;
        if let Some(n) = self.nodes.get_mut(i) {
            n.prev = NIL;
            n.next = old;
        }
        match self.nodes.get_mut(old) {
            Some(o) => o.prev = i,
            None => self.tail = i,
        }
        self.head = i;
    }

    fn remove_slot(&mut self, i: usize) {
        self.unlink(i);
        if let Some(n) = self.nodes.get_mut(i) {
            self.usage -= n.charge;
            n.value = None;
            n.charge = 0;
            self.map.remove(&n.key);
            self.free.push(i);
        }
    }

    fn lookup(&mut self, key: CacheKey) -> Option<Arc<V>> {
        let i = *self.map.get(&key)?;
        self.unlink(i);
        self.push_front(i);
        self.nodes.get(i).and_then(|n| n.value.clone())
    }

    fn insert(&mut self, key: CacheKey, value: Arc<V>, charge: usize, strict: bool) {
        if strict && charge > self.capacity {
            return;
        }
        if let Some(&i) = self.map.get(&key) {
            self.remove_slot(i);
        }
        let node = Node { key, value: Some(value), charge, prev: NIL, next: NIL };
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
        self.map.insert(key, i);
        self.push_front(i);
        self.usage += charge;
        while self.usage > self.capacity && self.tail != i && self.tail != NIL {
            let t = self.tail;
            self.remove_slot(t);
        }
    }

    fn erase(&mut self, key: CacheKey) {
        if let Some(&i) = self.map.get(&key) {
            self.remove_slot(i);
        }
    }
}

/// A sharded LRU cache: 2^num_shard_bits shards, each a mutex over a hash map and an LRU list.
pub struct LruCache<V> {
    shards: Box<[Mutex<Shard<V>>]>,
    shard_bits: u32,
    capacity: usize,
    strict: bool,
}

impl<V: Send + Sync> LruCache<V> {
    /// A cache of `capacity` bytes in 2^`num_shard_bits` shards (at most 2^20, as the option).
    pub fn new(capacity: usize, num_shard_bits: u32, strict_capacity_limit: bool) -> Self {
        let shard_bits = num_shard_bits.min(20);
        let n = 1usize << shard_bits;
        let per_shard = capacity.div_ceil(n);
        let shards = (0..n).map(|_| Mutex::new(Shard::new(per_shard))).collect();
        LruCache { shards, shard_bits, capacity, strict: strict_capacity_limit }
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
}

impl<V: Send + Sync> Cache<V> for LruCache<V> {
    fn lookup(&self, key: CacheKey) -> Option<Arc<V>> {
        self.shard(key).lock().lookup(key)
    }
    fn insert(&self, key: CacheKey, value: Arc<V>, charge: usize) {
        self.shard(key).lock().insert(key, value, charge, self.strict);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn key_hash_spreads_aligned_offsets() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<KeyHasher>::default();
        let mut buckets = std::collections::HashSet::new();
        for i in 0..1024u64 {
            buckets.insert(b.hash_one((7u64, i * 4096)) & 1023);
        }
        assert!(buckets.len() > 500, "{} distinct low-bit buckets", buckets.len());
    }

    #[test]
    fn lru_order_and_capacity() {
        let c: LruCache<u32> = LruCache::new(3, 0, false);
        for i in 0..3 {
            c.insert((i, 0), Arc::new(i as u32), 1);
        }
        assert_eq!(c.lookup((0, 0)).as_deref(), Some(&0)); // 0 is now most recent
        c.insert((3, 0), Arc::new(3), 1); // evicts 1
        assert!(c.lookup((1, 0)).is_none());
        assert!(c.lookup((0, 0)).is_some());
        assert!(c.lookup((2, 0)).is_some());
        assert_eq!(c.usage(), 3);
        c.insert((4, 0), Arc::new(4), 2); // evicts 3 then 0 (2 was touched after 0)
        assert!(c.lookup((3, 0)).is_none());
        assert!(c.lookup((0, 0)).is_none());
        assert_eq!(c.lookup((2, 0)).as_deref(), Some(&2));
        assert_eq!(c.usage(), 3);
        c.erase((2, 0));
        assert_eq!(c.usage(), 2);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn replace_and_strict_limit() {
        let c: LruCache<u32> = LruCache::new(10, 0, true);
        c.insert((1, 1), Arc::new(1), 4);
        c.insert((1, 1), Arc::new(2), 6);
        assert_eq!(c.usage(), 6);
        assert_eq!(c.lookup((1, 1)).as_deref(), Some(&2));
        c.insert((2, 2), Arc::new(3), 11);
        assert!(c.lookup((2, 2)).is_none(), "strict limit refuses oversized entries");
        let loose: LruCache<u32> = LruCache::new(10, 0, false);
        loose.insert((2, 2), Arc::new(3), 11);
        assert!(loose.lookup((2, 2)).is_some());
    }

    #[test]
    fn evicted_values_stay_alive_for_holders() {
        let c: LruCache<Vec<u8>> = LruCache::new(1, 0, false);
        c.insert((1, 0), Arc::new(vec![1, 2, 3]), 1);
        let held = c.lookup((1, 0)).unwrap();
        c.insert((2, 0), Arc::new(vec![4]), 1);
        assert!(c.lookup((1, 0)).is_none());
        assert_eq!(*held, vec![1, 2, 3]);
    }

    #[test]
    fn matches_a_model() {
        // One shard so the order is global; compare against a Vec-based LRU model.
        let c: LruCache<u64> = LruCache::new(50, 0, false);
        let mut model: Vec<(u64, usize)> = Vec::new(); // (key, charge), most recent last
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for _ in 0..20_000 {
            let k = rng.gen_range(0..40u64);
            match rng.gen_range(0..3) {
                0 => {
                    let charge = rng.gen_range(1..8);
                    c.insert((k, 0), Arc::new(k), charge);
                    model.retain(|e| e.0 != k);
                    model.push((k, charge));
                    while model.iter().map(|e| e.1).sum::<usize>() > 50 && model.len() > 1 {
                        model.remove(0);
                    }
                }
                1 => {
                    let got = c.lookup((k, 0)).map(|v| *v);
                    let pos = model.iter().position(|e| e.0 == k);
                    assert_eq!(got, pos.map(|_| k));
                    if let Some(p) = pos {
                        let e = model.remove(p);
                        model.push(e);
                    }
                }
                _ => {
                    c.erase((k, 0));
                    model.retain(|e| e.0 != k);
                }
            }
            assert_eq!(c.usage(), model.iter().map(|e| e.1).sum::<usize>());
        }
    }

    #[test]
    fn concurrent_hammering() {
        let c: Arc<LruCache<u64>> = Arc::new(LruCache::new(1000, 4, false));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                    for _ in 0..50_000 {
                        let k = rng.gen_range(0..2000u64);
                        if rng.gen_bool(0.5) {
                            c.insert((k, k), Arc::new(k), rng.gen_range(1..10));
                        } else if let Some(v) = c.lookup((k, k)) {
                            assert_eq!(*v, k);
                        }
                        if k % 97 == 0 {
                            c.erase((k, k));
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Each of 16 shards holds at most ceil(1000/16) = 63 (an entry is at most 9).
        assert!(c.usage() <= 16 * 63, "usage {}", c.usage());
    }
}
