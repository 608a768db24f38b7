//! Caches: the block cache (trait [`Cache`], sharded LRU) and the table cache of open SST
//! readers.
//!
//! STUB: interface fixed by the skeleton.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Result;
use crate::fs::Fs;
use crate::sst::{Block, TableReader};

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

/// A sharded LRU cache: 2^num_shard_bits shards, each a mutex over a hash map and an LRU list.
pub struct LruCache<V> {
    _v: std::marker::PhantomData<V>,
}

impl<V: Send + Sync> LruCache<V> {
    /// A cache of `capacity` bytes in 2^`num_shard_bits` shards.
    pub fn new(capacity: usize, num_shard_bits: u32, strict_capacity_limit: bool) -> Self {
        let _ = (capacity, num_shard_bits, strict_capacity_limit);
        todo!()
    }
}

impl<V: Send + Sync> Cache<V> for LruCache<V> {
    fn lookup(&self, _key: CacheKey) -> Option<Arc<V>> {
        todo!()
    }
    fn insert(&self, _key: CacheKey, _value: Arc<V>, _charge: usize) {
        todo!()
    }
    fn erase(&self, _key: CacheKey) {
        todo!()
    }
    fn usage(&self) -> usize {
        todo!()
    }
    fn capacity(&self) -> usize {
        todo!()
    }
}

/// Open SST readers by file number, bounded by `max_open_files`.
pub struct TableCache {}

impl TableCache {
    /// A table cache for the database in `db_path`; `capacity` readers (`None`: unbounded).
    pub fn new(
        db_path: PathBuf,
        fs: Arc<dyn Fs>,
        block_cache: Option<Arc<dyn Cache<Block>>>,
        capacity: Option<usize>,
    ) -> Self {
        let _ = (db_path, fs, block_cache, capacity);
        todo!()
    }
    /// The reader of SST `file_number`, opening it if needed.
    pub fn get(&self, file_number: u64) -> Result<Arc<TableReader>> {
        let _ = file_number;
        todo!()
    }
    /// Drops the reader of a deleted file.
    pub fn evict(&self, file_number: u64) {
        let _ = file_number;
        todo!()
    }
}
