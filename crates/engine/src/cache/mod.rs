//! The block cache: trait [`Cache`], generic over what it holds (the table cache of open SST
//! readers is `crate::version::table_cache`, the per-role entry stats `crate::sst::cache_stats`:
//! this module knows nothing of tables, so it sits below `sst` and `version`).
//!
//! [`lru`] holds the sharded LRU ([`LruCache`]), [`clock`] the lock-free
//! [`HyperClockCache`] and its growing variant [`AutoHyperClockCache`]. Every
//! implementation is shared between threads (`Send + Sync`) and never holds a lock across IO.
//!
//! Handles and pinning: a lookup returns a [`CacheHandle`], which reads the value where the
//! cache keeps it (for the clock cache, in the table slot itself) and holds the entry until it
//! is dropped. An entry with a live handle (e.g. an iterator's current data block, or the index
//! and filter blocks a table reader pins) is *pinned*: never evicted, as RocksDB never evicts
//! a referenced handle. So every block reachable through the cache stays charged to it while
//! it is alive, and usage can exceed capacity only by pinned entries, plus one entry per shard
//! (an insert that found nothing unpinned to evict, or an entry larger than the room left;
//! without `strict_capacity_limit`). While a shard is over capacity, releasing an entry's last
//! handle frees that entry (RocksDB's LRU rule, which Talus's clock caches follow too), so once
//! a burst of reads lets its blocks go the cache is back within capacity, without waiting for
//! the next insert (`tests/cache_capacity.rs`). Erasing or replacing a pinned entry hides it
//! from lookups at once; it is uncharged at once and its holders keep the value (the clock
//! cache frees its slot with the last handle).
//!
//! # Memory accounting (block cache)
//!
//! A block's charge is its decoded bytes (`Vec` capacity) plus the `Block` header
//! ([`crate::sst::Block::charge`]), plus, under [`MetadataChargePolicy::FullCharge`] (the block
//! cache's default, as RocksDB's), the cache's own bytes for the entry: LRU its node, the `Arc`
//! counts and a hash-map slot; clock its table slot (128 bytes for a `Block`). Not charged even
//! then: the clock table's empty slots (it is sized for a load factor of 0.7, so about 183 bytes
//! of table per entry when the estimate is right, see [`clock`]) and the LRU map's spare
//! buckets. With
//! `cache_index_and_filter_blocks` the index and filter blocks are charged like data blocks,
//! so the memory of blocks is the capacity plus that per-entry overhead, plus what is
//! pinned beyond the capacity, plus blocks held by running reads after the cache dropped them
//! (erased or replaced). Without it each open table reader holds its index and filter outside
//! the cache, uncharged (RocksDB's default). Table readers themselves (properties, range
//! tombstones, the file handle) are never charged.

pub mod clock;
mod handle;
pub mod lru;

pub use clock::{AutoHyperClockCache, HyperClockCache};
pub use handle::CacheHandle;
pub use lru::LruCache;

/// What an entry is charged beyond the caller's charge (RocksDB's `CacheMetadataChargePolicy`).
/// The caches' constructors charge the caller's numbers only ([`DontCharge`]); the block cache
/// and `talus cache_bench` use [`FullCharge`], RocksDB's default, so that the same capacity
/// holds the same number of entries in both engines.
///
/// [`DontCharge`]: MetadataChargePolicy::DontCharge
/// [`FullCharge`]: MetadataChargePolicy::FullCharge
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetadataChargePolicy {
    /// Only the caller's charge (`kDontChargeCacheMetadata`).
    #[default]
    DontCharge,
    /// The caller's charge plus the cache's own bytes per entry (`kFullChargeCacheMetadata`):
    /// the clock cache's table slot, the LRU cache's node, `Arc` counts and hash-map slot.
    FullCharge,
}

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

/// A concurrent cache of values charged by size, handing out [`CacheHandle`]s.
pub trait Cache<V: Send + Sync>: Send + Sync {
    /// Looks a key up, marking it recently used; the handle pins the entry while it lives.
    fn lookup(&self, key: CacheKey) -> Option<CacheHandle<V>>;
    /// Inserts (or replaces) a value with the given charge; may evict others. With
    /// `strict_capacity_limit`, a value that cannot fit is not inserted. Returns whether it was.
    fn insert(&self, key: CacheKey, value: V, charge: usize) -> bool {
        self.insert_with_priority(key, value, charge, Priority::Low)
    }
    /// As [`Cache::insert`], with a priority.
    fn insert_with_priority(&self, key: CacheKey, value: V, charge: usize, pri: Priority) -> bool;
    /// As [`Cache::insert_with_priority`], returning a handle to the new entry (RocksDB's
    /// `Insert` with a handle out-parameter), or the value back if it was not inserted.
    fn insert_and_hold(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V>;
    /// As [`Cache::insert`], but a key already present keeps its entry, which counts as used
    /// (as a lookup), and `value` is dropped: returns whether `value` was inserted. This is
    /// what RocksDB's clock cache does on every `Insert` (`BaseClockTable::Insert`: "abort if
    /// we find an existing entry for the key"), where its LRU cache replaces. Not atomic with
    /// other inserts: an entry another thread inserts after the check is replaced as by
    /// [`Cache::insert`]. For keys that name immutable bytes (the block cache's) both keep the
    /// same bytes; this one skips the second placement and frees the new copy at once.
    fn insert_if_absent(&self, key: CacheKey, value: V, charge: usize) -> bool {
        if self.lookup(key).is_some() {
            return false;
        }
        self.insert(key, value, charge)
    }
    /// As [`Cache::insert_and_hold`] under the rule of [`Cache::insert_if_absent`]: a key
    /// already present keeps its entry and `value` comes back as `Err` (RocksDB's clock cache
    /// then hands out a detached handle to it, as [`CacheHandle::new`] makes).
    fn insert_and_hold_if_absent(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<CacheHandle<V>, V> {
        if self.lookup(key).is_some() {
            return Err(value);
        }
        self.insert_and_hold(key, value, charge, pri)
    }
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
    /// Calls `f(value, charge, pinned)` for every entry held (RocksDB's `ApplyToAllEntries`),
    /// one shard at a time; entries inserted or evicted meanwhile may or may not be seen. `f`
    /// must not call back into the cache. An entry is *pinned* when a handle to it is held
    /// (outside the cache and this visit): eviction skips it until the holders let go.
    fn for_each_entry(&self, f: &mut dyn FnMut(&V, usize, bool));
    /// Bytes charged by pinned entries.
    fn pinned_usage(&self) -> usize {
        let mut pinned = 0;
        self.for_each_entry(&mut |_, charge, is_pinned| {
            if is_pinned {
                pinned += charge;
            }
        });
        pinned
    }
}
