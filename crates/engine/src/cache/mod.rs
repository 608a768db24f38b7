//! Caches: the block cache (trait [`Cache`], sharded LRU) and the table cache of open SST
//! readers.
//!
//! [`lru`] holds the sharded LRU ([`LruCache`]), [`clock`] the lock-free
//! [`HyperClockCache`], [`table_cache`] the [`TableCache`]. Every
//! implementation is shared between threads (`Send + Sync`) and never holds a lock across IO.

use std::sync::Arc;

pub mod clock;
pub mod lru;
pub mod table_cache;

pub use clock::HyperClockCache;
pub use lru::LruCache;
pub use table_cache::TableCache;

/// Key of a cached block: (file number, block offset).
pub type CacheKey = (u64, u64);

/// A concurrent cache of `Arc<V>` values charged by size.
pub trait Cache<V: Send + Sync>: Send + Sync {
    /// Looks a key up, marking it recently used.
    fn lookup(&self, key: CacheKey) -> Option<Arc<V>>;
    /// Inserts (or replaces) a value with the given charge; may evict others. With
    /// `strict_capacity_limit`, a value that cannot fit is not inserted.
    fn insert(&self, key: CacheKey, value: Arc<V>, charge: usize);
    /// Removes a key.
    fn erase(&self, key: CacheKey);
    /// Bytes charged by the entries held.
    fn usage(&self) -> usize;
    /// The configured capacity.
    fn capacity(&self) -> usize;
}
