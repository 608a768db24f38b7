//! The blob cache (RocksDB's `blob_cache` option): uncompressed blob values kept in a
//! [`crate::cache::Cache`] by (blob file number, offset of the stored value), so a second read of a value
//! reads no file. Values are cached only when the option names a cache (as in RocksDB; the
//! block cache is not used for blobs). With `prepopulate_blob_cache = FlushOnly` a flush inserts
//! each value it writes to a blob file (RocksDB's `PrepopulateBlobCache::kFlushOnly`).
//!
//! Who calls: [`super::reader::BlobSource`] on every blob read, and `db/blob_outputs.rs` at
//! flush. Holds no lock of its own (the cache's shards lock inside); counts RocksDB's
//! `rocksdb.blobdb.cache.*` tickers.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub use crate::options::{BlobCacheRef, PrepopulateBlobCache};

/// RocksDB's blob cache tickers.
#[derive(Debug, Default)]
pub struct BlobCacheStats {
    /// Lookups that found nothing (`rocksdb.blobdb.cache.miss`).
    pub miss: AtomicU64,
    /// Lookups that found the value (`rocksdb.blobdb.cache.hit`).
    pub hit: AtomicU64,
    /// Values inserted (`rocksdb.blobdb.cache.add`).
    pub add: AtomicU64,
    /// Inserts the cache refused (`rocksdb.blobdb.cache.add.failures`).
    pub add_failures: AtomicU64,
    /// Bytes of values found (`rocksdb.blobdb.cache.bytes.read`).
    pub bytes_read: AtomicU64,
    /// Bytes of values inserted (`rocksdb.blobdb.cache.bytes.write`).
    pub bytes_write: AtomicU64,
}

impl BlobCacheStats {
    /// The tickers by RocksDB's names.
    pub fn tickers(&self) -> [(&'static str, u64); 6] {
        let g = |a: &AtomicU64| a.load(Relaxed);
        [
            ("rocksdb.blobdb.cache.miss", g(&self.miss)),
            ("rocksdb.blobdb.cache.hit", g(&self.hit)),
            ("rocksdb.blobdb.cache.add", g(&self.add)),
            ("rocksdb.blobdb.cache.add.failures", g(&self.add_failures)),
            ("rocksdb.blobdb.cache.bytes.read", g(&self.bytes_read)),
            ("rocksdb.blobdb.cache.bytes.write", g(&self.bytes_write)),
        ]
    }
}

/// A database's view of its blob cache: the cache (if any), the database's key space in it,
/// and its tickers.
#[derive(Default)]
pub struct BlobCache {
    cache: Option<BlobCacheRef>,
    /// This instance's id, in the key's top bits: one cache may serve several databases (or
    /// several opens of one), whose blob file numbers repeat.
    id: u64,
    /// The tickers.
    pub stats: BlobCacheStats,
}

/// Bits of the key's first word that hold the blob file number; the rest hold the instance id.
const FILE_BITS: u32 = 40;

/// Instance ids, process-wide.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl BlobCache {
    /// Caches in `cache`; `None` caches nothing and counts nothing.
    pub fn new(cache: Option<BlobCacheRef>) -> BlobCache {
        let id = NEXT_ID.fetch_add(1, Relaxed) & ((1 << (64 - FILE_BITS)) - 1);
        BlobCache { cache, id, stats: BlobCacheStats::default() }
    }

    /// The cache key of `offset` in blob file `file`; `None` (not cached) for a file number
    /// too large to share the word with the id.
    fn key(&self, file: u64, offset: u64) -> Option<(u64, u64)> {
        (file < 1 << FILE_BITS).then_some(((self.id << FILE_BITS) | file, offset))
    }

    /// True when a cache is set.
    pub fn enabled(&self) -> bool {
        self.cache.is_some()
    }

    /// The cached value at `offset` of blob file `file`, counting a hit or a miss.
    pub fn lookup(&self, file: u64, offset: u64) -> Option<Vec<u8>> {
        let cache = self.cache.as_ref()?;
        match self.key(file, offset).and_then(|k| cache.lookup(k)) {
            Some(h) => {
                self.stats.hit.fetch_add(1, Relaxed);
                self.stats.bytes_read.fetch_add(h.len() as u64, Relaxed);
                Some(h.to_vec())
            }
            None => {
                self.stats.miss.fetch_add(1, Relaxed);
                None
            }
        }
    }

    /// Inserts `value` for `offset` of blob file `file`, charged its length.
    pub fn insert(&self, file: u64, offset: u64, value: &[u8]) {
        let (Some(cache), Some(key)) = (self.cache.as_ref(), self.key(file, offset)) else {
            return;
        };
        let len = value.len();
        if cache.insert(key, value.to_vec(), len) {
            self.stats.add.fetch_add(1, Relaxed);
            self.stats.bytes_write.fetch_add(len as u64, Relaxed);
        } else {
            self.stats.add_failures.fetch_add(1, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cache::LruCache;

    #[test]
    fn hits_after_insert_and_counts_tickers() {
        let c = BlobCache::new(Some(Arc::new(LruCache::new(1 << 20, 0, false))));
        assert_eq!(c.lookup(7, 40), None);
        c.insert(7, 40, b"value");
        assert_eq!(c.lookup(7, 40).as_deref(), Some(&b"value"[..]));
        assert_eq!(c.lookup(7, 41), None);
        let t = c.stats.tickers();
        assert_eq!(t[0], ("rocksdb.blobdb.cache.miss", 2));
        assert_eq!(t[1], ("rocksdb.blobdb.cache.hit", 1));
        assert_eq!(t[2], ("rocksdb.blobdb.cache.add", 1));
        assert_eq!(t[4], ("rocksdb.blobdb.cache.bytes.read", 5));
        assert_eq!(t[5], ("rocksdb.blobdb.cache.bytes.write", 5));
    }

    #[test]
    fn databases_sharing_a_cache_do_not_see_each_others_values() {
        let shared: BlobCacheRef = Arc::new(LruCache::new(1 << 20, 0, false));
        let (a, b) = (BlobCache::new(Some(shared.clone())), BlobCache::new(Some(shared)));
        a.insert(5, 100, b"from a");
        assert_eq!(b.lookup(5, 100), None);
        b.insert(5, 100, b"from b");
        assert_eq!(a.lookup(5, 100).as_deref(), Some(&b"from a"[..]));
        assert_eq!(b.lookup(5, 100).as_deref(), Some(&b"from b"[..]));
    }

    #[test]
    fn without_a_cache_nothing_is_kept_or_counted() {
        let c = BlobCache::new(None);
        c.insert(1, 2, b"v");
        assert_eq!(c.lookup(1, 2), None);
        assert!(c.stats.tickers().iter().all(|&(_, n)| n == 0));
    }
}
