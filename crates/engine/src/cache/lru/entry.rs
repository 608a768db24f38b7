//! An [`LruCache`](super::LruCache) entry, its shard ([`Home`]) and the handle that releases
//! into it ([`LruRef`]).
//!
//! An entry inserted through [`Cache`](crate::cache::Cache) is an `Arc<Entry>`: its value, its
//! key and a reference to its shard. A handle is one more clone of that `Arc` (a lookup takes
//! it under the shard's lock, one atomic increment), so the value lives as long as a handle
//! does, whatever the cache does meanwhile. Each entry keeps its shard alive (the `Arc<Home>`,
//! taken once per insert, not per lookup), so a handle can always reach it on release.
//!
//! # Release
//!
//! Dropping a handle reads its shard's `over` flag (a relaxed load of a line written only when
//! the shard crosses its capacity) and drops the `Arc`: no lock, no write to a shared line
//! beyond the entry's count. When the flag is set, the release locks the shard (as RocksDB's
//! `LRUCacheShard::Release` always does) and, if the shard is still over capacity and the
//! handle is the entry's last one outside the cache, takes the entry out: blocks released
//! after a read burst do not leave the cache holding more than its capacity. Otherwise it
//! gives its reference up under the lock, so that of two handles on one entry released at
//! once, the second sees that it holds the last. The value is dropped after the lock is let
//! go. `over` is a hint kept under the shard's lock ([`Home::sync_over`] after every insert,
//! erase and such release); the shard's own usage decides. A release racing the insert that
//! pushes the shard over capacity may miss the flag: that entry then stays until the shard's
//! next insert evicts it.
//!
//! Locks: a release takes its shard's mutex only while the flag is set; nothing here takes
//! another lock or calls out while holding it.

use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crossbeam::utils::CachePadded;
use parking_lot::Mutex;

use super::shard::Shard;
use crate::cache::CacheKey;

/// A shard: its lists and map under one mutex, and whether it is over capacity (on a line of
/// its own: every release reads it, every lookup writes the mutex's line).
pub(super) struct Home<V> {
    pub(super) shard: Mutex<Shard<V>>,
    over: CachePadded<AtomicBool>,
}

impl<V> Home<V> {
    pub(super) fn new(shard: Shard<V>) -> Self {
        Home { shard: Mutex::new(shard), over: CachePadded::new(AtomicBool::new(false)) }
    }

    /// Brings the `over` flag in line with the shard (the caller holds its lock); writes the
    /// line only when the flag changes.
    pub(super) fn sync_over(&self, shard: &Shard<V>) {
        let over = shard.over_capacity();
        if self.over.load(Relaxed) != over {
            self.over.store(over, Relaxed);
        }
    }
}

/// An entry inserted through [`Cache`](crate::cache::Cache).
pub(super) struct Entry<V> {
    pub(super) home: Arc<Home<V>>,
    pub(super) key: CacheKey,
    pub(super) value: V,
}

/// A handle on an [`Entry`]: see the module documentation.
pub(in crate::cache) struct LruRef<V>(pub(super) ManuallyDrop<Arc<Entry<V>>>);

impl<V> LruRef<V> {
    pub(super) fn new(entry: Arc<Entry<V>>) -> Self {
        LruRef(ManuallyDrop::new(entry))
    }

    /// The entry's value.
    #[inline]
    pub(in crate::cache) fn value(&self) -> &V {
        &self.0.value
    }

    /// True if both handles are on the same entry.
    pub(in crate::cache) fn same_entry(&self, other: &LruRef<V>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<V> Clone for LruRef<V> {
    fn clone(&self) -> Self {
        LruRef::new(Arc::clone(&self.0))
    }
}

impl<V> Drop for LruRef<V> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `drop` runs once and the field is not used after this.
        let e = unsafe { ManuallyDrop::take(&mut self.0) };
        if e.home.over.load(Relaxed) {
            release_over_capacity(e);
        }
    }
}

/// The release of a handle while its shard is over capacity: under the shard's lock, frees the
/// entry if the cache and this handle are its only holders, or else gives the reference up
/// there (so that of two handles released at once, the second sees it holds the last one).
/// The value itself is never dropped under the lock: the cache's reference goes there, ours
/// after it.
#[cold]
fn release_over_capacity<V>(e: Arc<Entry<V>>) {
    let home = Arc::clone(&e.home);
    let mut shard = home.shard.lock();
    let freed = shard.evict_released(e.key, &e);
    home.sync_over(&shard);
    if freed.is_none() && Arc::strong_count(&e) > 1 {
        // Not the last reference: a decrement, which another release may be waiting to see.
        drop(e);
        drop(shard);
    } else {
        drop(shard);
        drop((freed, e));
    }
}
