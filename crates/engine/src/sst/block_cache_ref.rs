//! [`BlockCacheRef`]'s typed side: the options hold a block cache object type-erased (they
//! name no SST type, so `options` stays below `sst` in the module graph); this module, which
//! owns [`Block`], makes one from an `Arc<dyn Cache<Block>>` and gives it back. Called by users
//! (`BlockCacheRef::new`) and by the open and the properties (`BlockCacheRef::cache`); no lock.

use std::sync::Arc;

use super::Block;
use crate::cache::Cache;
use crate::options::BlockCacheRef;

/// The shared block cache type a [`BlockCacheRef`] carries.
pub type SharedBlockCache = Arc<dyn Cache<Block>>;

impl BlockCacheRef {
    /// A block cache object for `Options::block_cache` (RocksDB's
    /// `BlockBasedTableOptions::block_cache`).
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use talus::cache::LruCache;
    /// use talus::options::BlockCacheRef;
    /// let cache = BlockCacheRef::new(Arc::new(LruCache::new(1 << 20, 0, false)));
    /// let opts = talus::Options { block_cache: Some(cache.clone()), ..Default::default() };
    /// assert_eq!(cache.cache().usage(), 0);
    /// # drop(opts);
    /// ```
    pub fn new(cache: SharedBlockCache) -> Self {
        BlockCacheRef::erased(Arc::new(cache))
    }

    /// The cache this object was made from.
    pub fn cache(&self) -> &SharedBlockCache {
        match self.any().downcast_ref::<SharedBlockCache>() {
            Some(cache) => cache,
            // `erased` is crate-private and called by `new` alone.
            None => unreachable!("a BlockCacheRef is made by BlockCacheRef::new"),
        }
    }

    /// Whether `self` and `other` are the same cache object.
    pub fn same_cache(&self, other: &BlockCacheRef) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(self.cache()), Arc::as_ptr(other.cache()))
    }
}
