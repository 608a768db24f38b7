//! One shard of the [`LruCache`](super::LruCache): a hash map from key to value and node, and
//! index-based doubly linked LRU lists in a slab of nodes. Everything here runs under the
//! shard's mutex (`lru/entry.rs`: [`Home`](super::entry::Home)); nothing here locks, allocates
//! per lookup or frees a value its holders still use (eviction drops the cache's reference).
//!
//! The value sits in the map beside the node's index, so a lookup reaches the value and the
//! node each straight from the map: on a cache cold in the CPU caches, their two memory misses
//! overlap instead of following each other. The pools, the eviction order and pinning are
//! described in the parent module.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::entry::Entry;
use crate::cache::{CacheKey, Priority};

const NIL: usize = usize::MAX;
const HIGH: usize = 0;
const LOW: usize = 1;

/// A cheap multiplicative hasher for the `(u64, u64)` keys (SipHash is not needed: keys are not
/// attacker-chosen).
#[derive(Default)]
pub(super) struct KeyHasher(u64);

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

/// What the map holds for a key: an entry inserted through [`Cache`](crate::cache::Cache),
/// whose handles release into the shard ([`Entry`]), or a value shared as a bare `Arc`
/// ([`LruCache::insert_shared`](super::LruCache::insert_shared), the table cache's readers).
pub(super) enum Stored<V> {
    Handled(Arc<Entry<V>>),
    Shared(Arc<V>),
}

impl<V> Stored<V> {
    /// Held outside the cache too (a handle, a shared `Arc`): eviction passes over it.
    fn pinned(&self) -> bool {
        match self {
            Stored::Handled(e) => Arc::strong_count(e) > 1,
            Stored::Shared(v) => Arc::strong_count(v) > 1,
        }
    }

    pub(super) fn value(&self) -> &V {
        match self {
            Stored::Handled(e) => &e.value,
            Stored::Shared(v) => v,
        }
    }
}

impl<V> Clone for Stored<V> {
    fn clone(&self) -> Self {
        match self {
            Stored::Handled(e) => Stored::Handled(Arc::clone(e)),
            Stored::Shared(v) => Stored::Shared(Arc::clone(v)),
        }
    }
}

/// A map entry: the value and the index of its node.
pub(super) struct Slot<V> {
    node: usize,
    value: Stored<V>,
}

type KeyMap<V> = HashMap<CacheKey, Slot<V>, BuildHasherDefault<KeyHasher>>;

/// An entry's place in the LRU lists (its value is in the map).
pub(super) struct Node {
    key: CacheKey,
    charge: usize,
    prev: usize,
    next: usize,
    /// `HIGH` or `LOW`: the list the node is on.
    pool: usize,
    high_pri: bool,
    hit: bool,
}

pub(super) struct Shard<V> {
    map: KeyMap<V>,
    nodes: Vec<Node>,
    free: Vec<usize>,
    /// Most recently used of each list (`HIGH`, `LOW`).
    head: [usize; 2],
    /// Least recently used of each list.
    tail: [usize; 2],
    pub(super) usage: usize,
    pub(super) high_usage: usize,
    pub(super) capacity: usize,
    high_capacity: usize,
    use_high_pool: bool,
}

impl<V> Shard<V> {
    pub(super) fn new(capacity: usize, high_pri_pool_ratio: f64) -> Self {
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

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the entries charge more than the capacity (pinned ones, or one larger than
    /// the shard): then a handle's last release frees its entry (`lru/entry.rs`).
    pub(super) fn over_capacity(&self) -> bool {
        self.usage > self.capacity
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

    /// Takes node `i`'s entry out of the lists and the map, returning what the map held.
    fn remove_slot(&mut self, i: usize) -> Option<Stored<V>> {
        self.unlink(i);
        let n = self.nodes.get_mut(i)?;
        self.usage -= n.charge;
        n.charge = 0;
        self.free.push(i);
        self.map.remove(&n.key).map(|s| s.value)
    }

    fn pinned(&self, i: usize) -> bool {
        self.nodes.get(i).and_then(|n| self.map.get(&n.key)).is_some_and(|s| s.value.pinned())
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

    /// Finds `key`, marks it most recently used and returns a clone of what the map holds.
    pub(super) fn lookup(&mut self, key: CacheKey) -> Option<Stored<V>> {
        let slot = self.map.get(&key)?;
        let (i, value) = (slot.node, slot.value.clone());
        self.unlink(i);
        if let Some(n) = self.nodes.get_mut(i) {
            n.hit = true;
        }
        let pool = self.pool_for(i);
        self.push_front(i, pool);
        self.maintain_pool();
        Some(value)
    }

    /// Inserts (or replaces) `value`; evicts unpinned entries until the shard fits. With
    /// `strict`, refuses (returns false) an entry that cannot fit after evicting.
    pub(super) fn insert(
        &mut self,
        key: CacheKey,
        value: Stored<V>,
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

    pub(super) fn erase(&mut self, key: CacheKey) {
        if let Some(i) = self.map.get(&key).map(|s| s.node) {
            self.remove_slot(i);
        }
    }

    /// RocksDB's `LRUCacheShard::Release` rule: when the shard is over capacity and the entry
    /// `e` of `key` is still the cache's and held by nobody but the cache and the releasing
    /// handle (`strong_count == 2`: the caller has not dropped its clone yet), takes it out and
    /// returns the cache's reference (for the caller to drop after unlocking).
    pub(super) fn evict_released(&mut self, key: CacheKey, e: &Arc<Entry<V>>) -> Option<Stored<V>> {
        if !self.over_capacity() {
            return None;
        }
        let i = match self.map.get(&key) {
            Some(Slot { node, value: Stored::Handled(held) })
                if Arc::ptr_eq(held, e) && Arc::strong_count(e) == 2 =>
            {
                *node
            }
            _ => return None,
        };
        self.remove_slot(i)
    }

    /// Empties the shard, handing back what it held (dropped by the caller, outside the lock:
    /// a value's last reference may go with it).
    pub(super) fn take_all(&mut self) -> (KeyMap<V>, Vec<Node>) {
        self.free.clear();
        self.head = [NIL; 2];
        self.tail = [NIL; 2];
        self.usage = 0;
        self.high_usage = 0;
        (std::mem::take(&mut self.map), std::mem::take(&mut self.nodes))
    }

    pub(super) fn for_each(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for s in self.map.values() {
            if let Some(n) = self.nodes.get(s.node) {
                f(s.value.value(), n.charge, s.value.pinned());
            }
        }
    }
}
