//! [`CacheHandle`]: what a cache lookup returns, and what block readers hold.
//!
//! A handle into the clock cache is a reference on the entry's slot (the value lives in the
//! slot; `clock/table/owner.rs`): a hit costs one atomic on the slot's word and its release one
//! more, on the same cache line, with no allocation and no reference count elsewhere (RocksDB's
//! `Cache::Handle`). A handle from the LRU cache is a clone of the entry's `Arc`, whose release
//! may free the entry when its shard is over capacity (`lru/entry.rs`). One made for a value
//! that is not cached ([`CacheHandle::new`]: a block read with `fill_cache = false`, or refused
//! by a full cache) is an `Arc`. Either way the value stays valid and unchanged for as long as
//! the handle lives, and an entry with a live handle is pinned: the cache does not evict it.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::clock::SlotRef;
use super::lru::LruRef;

/// A shared, read-only reference to a cached (or uncached) value; see the module documentation.
pub struct CacheHandle<V>(Inner<V>);

enum Inner<V> {
    Shared(Arc<V>),
    Slot(SlotRef<V>),
    Lru(LruRef<V>),
}

impl<V> CacheHandle<V> {
    /// A handle to a value held by no cache.
    pub fn new(value: V) -> Self {
        CacheHandle(Inner::Shared(Arc::new(value)))
    }

    /// A handle sharing `value`.
    pub fn from_arc(value: Arc<V>) -> Self {
        CacheHandle(Inner::Shared(value))
    }

    pub(super) fn from_slot(slot: SlotRef<V>) -> Self {
        CacheHandle(Inner::Slot(slot))
    }

    pub(super) fn from_lru(entry: LruRef<V>) -> Self {
        CacheHandle(Inner::Lru(entry))
    }

    /// True if both handles refer to the same value (the same cache entry, or the same `Arc`).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        match (&a.0, &b.0) {
            (Inner::Shared(x), Inner::Shared(y)) => Arc::ptr_eq(x, y),
            (Inner::Slot(x), Inner::Slot(y)) => x.same_slot(y),
            (Inner::Lru(x), Inner::Lru(y)) => x.same_entry(y),
            _ => false,
        }
    }
}

impl<V> Deref for CacheHandle<V> {
    type Target = V;

    #[inline]
    fn deref(&self) -> &V {
        match &self.0 {
            Inner::Shared(v) => v,
            Inner::Slot(s) => s.value(),
            Inner::Lru(e) => e.value(),
        }
    }
}

impl<V> Clone for CacheHandle<V> {
    fn clone(&self) -> Self {
        CacheHandle(match &self.0 {
            Inner::Shared(v) => Inner::Shared(Arc::clone(v)),
            Inner::Slot(s) => Inner::Slot(s.clone()),
            Inner::Lru(e) => Inner::Lru(e.clone()),
        })
    }
}

impl<V: fmt::Debug> fmt::Debug for CacheHandle<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CacheHandle").field(&**self).finish()
    }
}
