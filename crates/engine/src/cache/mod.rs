//! Caches: the block cache (trait [`Cache`], sharded LRU) and the table cache of open SST
//! readers.
//!
//! [`lru`] holds the sharded LRU ([`LruCache`]), [`clock`] the lock-free
//! [`HyperClockCache`] and its growing variant [`AutoHyperClockCache`], [`table_cache`] the [`TableCache`]. Every
//! implementation is shared between threads (`Send + Sync`) and never holds a lock across IO.
//!
//! Pinning: values are `Arc<V>`; an entry whose value is also held outside the cache
//! (`Arc::strong_count > 1`, e.g. an iterator's current data block, or the index and filter
//! blocks a table reader pins) is never evicted, as RocksDB never evicts a referenced handle.
//! So every block reachable through the cache stays charged to it while it is alive, and
//! usage can exceed capacity only by pinned entries (without `strict_capacity_limit`).
//!
//! # Memory accounting (block cache)
//!
//! A block's charge is its decoded bytes (`Vec` capacity) plus the `Block` header
//! ([`crate::sst::Block::charge`]). Not charged, per entry: the `Arc` header (16 bytes) and the
//! cache's own metadata: LRU 64 bytes of node plus about 28 bytes of hash-map slot; clock
//! 48 bytes per slot at a load factor of 0.7 (see [`clock`]). With
//! `cache_index_and_filter_blocks` the index and filter blocks are charged like data blocks,
//! so the memory of blocks is the capacity plus that per-entry overhead, plus what is
//! pinned beyond the capacity, plus blocks held by running reads after the cache dropped them
//! (erased or replaced). Without it each open table reader holds its index and filter outside
//! the cache, uncharged (RocksDB's default). Table readers themselves (properties, range
//! tombstones, the file handle) are never charged.

use std::sync::Arc;

pub mod clock;
pub mod entry_stats;
pub mod lru;
pub mod table_cache;

pub use clock::{AutoHyperClockCache, HyperClockCache};
pub use entry_stats::BlockCacheStats;
pub use lru::LruCache;
pub use table_cache::TableCache;

/// Key of a cached block: (file number, block offset).
pub type CacheKey = (u64, u64);

/// Insertion priority (RocksDB's `Cache::Priority`): index and filter blocks go in `High`.
/// The LRU keeps high-priority entries in its high-priority pool (`high_pri_pool_ratio`); the
/// clock cache starts them with a higher countdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Index and filter blocks.
    High,
    /// Data blocks.
    Low,
}

/// A concurrent cache of `Arc<V>` values charged by size.
pub trait Cache<V: Send + Sync>: Send + Sync {
    /// Looks a key up, marking it recently used.
    fn lookup(&self, key: CacheKey) -> Option<Arc<V>>;
    /// Inserts (or replaces) a value with the given charge; may evict others. With
    /// `strict_capacity_limit`, a value that cannot fit is not inserted.
    fn insert(&self, key: CacheKey, value: Arc<V>, charge: usize) {
        self.insert_with_priority(key, value, charge, Priority::Low);
    }
    /// As [`Cache::insert`], with a priority.
    fn insert_with_priority(&self, key: CacheKey, value: Arc<V>, charge: usize, pri: Priority);
    /// Removes a key.
    fn erase(&self, key: CacheKey);
    /// Bytes charged by the entries held.
    fn usage(&self) -> usize;
    /// The configured capacity.
    fn capacity(&self) -> usize;
    /// The implementation's name in stats (RocksDB's: `LRUCache`, `HyperClockCache`).
    fn name(&self) -> &'static str {
        "Cache"
    }
    /// Calls `f(value, charge)` for every entry held (RocksDB's `ApplyToAllEntries`), one
    /// shard at a time; entries inserted or evicted meanwhile may or may not be seen. `f` must
    /// not call back into the cache. An entry is *pinned* when
    /// `Arc::strong_count(value) > 1`: someone outside the cache holds it, and eviction skips
    /// it until they let go.
    fn for_each_entry(&self, f: &mut dyn FnMut(&Arc<V>, usize));
    /// Bytes charged by pinned entries (held outside the cache as well).
    fn pinned_usage(&self) -> usize {
        let mut pinned = 0;
        self.for_each_entry(&mut |v, charge| {
            if Arc::strong_count(v) > 1 {
                pinned += charge;
            }
        });
        pinned
    }
}
