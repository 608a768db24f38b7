//! [`GroupEvent`]: where the threads of write groups wait for each other's progress (a member's
//! inserts, an earlier group's publication, the groups in flight draining; `write_group.rs`).
//! A waiter spins and yields as [`spin_until`] does, then blocks on a condition variable;
//! whoever makes progress calls [`GroupEvent::notify`] after making it visible.
//!
//! Contract: a waiter whose condition was made true before a `notify` returns (it never sleeps
//! through it). `notify` takes the mutex and wakes the sleepers only if a waiter is blocked or
//! about to block (a count, Dekker-style: the waiter counts itself, then looks at its
//! condition; the notifier made its progress visible, then looks at the count; a `SeqCst`
//! fence on each side, so at least one of them sees the other's write). When no one is
//! blocked, the count saves a mutex round trip per group on a line the other writer's thread
//! also takes (32 instructions per put for a lone writer, callgrind); RocksDB's
//! `WriteThread::SetState` likewise takes a writer's mutex only when the writer is blocked. The protocol is model-checked
//! (`group_event/loom_tests.rs`).
//!
//! Lock: the event's mutex is a leaf, held only to block or to wake.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::write_queue::spin_until;
use crate::sync::{cv_wait, fence, AtomicUsize, Condvar, Mutex};

pub(crate) struct GroupEvent {
    m: Mutex<()>,
    cv: Condvar,
    /// Waiters that counted themselves in [`GroupEvent::block_until`] and have not left it.
    waiters: AtomicUsize,
}

impl Default for GroupEvent {
    fn default() -> Self {
        GroupEvent { m: Mutex::new(()), cv: Condvar::new(), waiters: AtomicUsize::new(0) }
    }
}

impl GroupEvent {
    /// Returns once `cond` holds (`max_yield`: how long to spin and yield first).
    pub fn wait(&self, max_yield: Duration, cond: impl Fn() -> bool) {
        if spin_until(max_yield, &cond) {
            return;
        }
        self.block_until(cond);
    }

    /// Blocks until `cond` holds and a `notify` (or none needed) says so.
    fn block_until(&self, cond: impl Fn() -> bool) {
        let mut g = self.m.lock();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // Orders the count before the condition's loads (module doc): a notifier that finds
        // no waiter made its progress visible to the loads below.
        fence(Ordering::SeqCst);
        while !cond() {
            g = cv_wait(&self.cv, g);
        }
        // Relaxed: a notifier that still sees the count only takes the mutex for nothing.
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        drop(g);
    }

    /// Wakes the waiters (after the progress they wait for is visible): takes the mutex only if
    /// one may be blocked.
    pub fn notify(&self) {
        // Orders the caller's progress before the count's load (module doc).
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        // A counted waiter holds the mutex from counting itself until it sleeps: taking it
        // here means the waiter sleeps already (this wakes it) or has not yet looked at its
        // condition (it will see the progress).
        let _g = self.m.lock();
        self.cv.notify_all();
    }
}

#[cfg(loom)]
#[path = "group_event/loom_tests.rs"]
mod loom_tests;
