//! A clock shard's byte account ([`Account`]): the usage counter every table of the shard
//! charges (one table for the fixed cache, the generations of an automatic shard), and the hint
//! that the shard is over capacity, each alone on its cache line.
//!
//! The counter is written by every insert, eviction, erase and free. The hint is written only
//! when it changes: set by an insert whose eviction could not bring usage back to capacity
//! (everything it passed was referenced), cleared by the first insert or release that finds
//! usage within capacity. Every handle release reads it (`table/owner.rs`): while it is set, the
//! release of an entry's last reference frees the entry (RocksDB's LRU rule on release; its
//! clock cache frees nothing on release and waits for the next insert). It is a hint: a
//! release checks usage itself before freeing anything, and one that races the insert setting
//! it may miss it (that entry then waits for the shard's next insert, as in RocksDB).

use std::ops::Deref;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crossbeam::utils::CachePadded;

use crate::sync::AtomicUsize;

/// See the module documentation. Dereferences to the usage counter (bytes charged).
pub(in crate::cache::clock) struct Account {
    bytes: CachePadded<AtomicUsize>,
    /// 1 when over capacity (a `usize`: the atomics `crate::sync` switches to loom's).
    over: CachePadded<AtomicUsize>,
}

impl Account {
    /// Whether an insert left the shard over capacity (a hint; see the module documentation).
    #[inline]
    pub(in crate::cache::clock) fn over(&self) -> bool {
        self.over.load(Relaxed) != 0
    }

    /// Sets the hint, writing its line only if it changes.
    #[inline]
    pub(in crate::cache::clock) fn set_over(&self, over: bool) {
        if self.over() != over {
            self.over.store(usize::from(over), Relaxed);
        }
    }
}

impl Deref for Account {
    type Target = AtomicUsize;

    fn deref(&self) -> &AtomicUsize {
        &self.bytes
    }
}

/// A shard's account, shared by its tables.
pub(in crate::cache::clock) type Usage = Arc<Account>;

/// A new account at zero bytes, not over capacity.
pub(in crate::cache::clock) fn new_usage() -> Usage {
    Arc::new(Account {
        bytes: CachePadded::new(AtomicUsize::new(0)),
        over: CachePadded::new(AtomicUsize::new(0)),
    })
}
