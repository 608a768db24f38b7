//! The synchronization primitives of the lock-free structures (the memtable skiplist, the
//! clock cache's tables, the write groups' `GroupEvent`): std's atomics and `parking_lot`'s
//! mutex and condition variable in every normal build, loom's under `--cfg loom`, so that the
//! loom tests beside those structures model-check their protocols (every interleaving of a
//! small scenario, and every allowed reordering of the atomics' memory orderings). Nothing else
//! in the crate uses this module.
//!
//! Run the model checks with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p talus --lib loom`.
//!
//! [`UnsafeCell`] has loom's closure API in both builds (`with`, `with_mut`), so that under
//! loom every access to a cell's contents is checked against the others for data races.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, MutexGuard};
#[cfg(not(loom))]
pub(crate) use parking_lot::{Condvar, MutexGuard};

/// Waits on `cv`, releasing `g` meanwhile, and returns the guard (loom's API by value).
#[cfg(not(loom))]
pub(crate) fn cv_wait<'a, T>(cv: &Condvar, mut g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(&mut g);
    g
}

/// Waits on `cv`, releasing `g` meanwhile, and returns the guard (a poisoned lock is taken
/// over).
#[cfg(loom)]
pub(crate) fn cv_wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(g).unwrap_or_else(|e| e.into_inner())
}

/// A busy-wait hint (loom: a yield, so that the model lets the awaited thread run).
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's closure API.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(v: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(v))
    }

    /// Calls `f` with a shared pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Calls `f` with a mutable pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// The skiplist's writer mutex: `parking_lot`'s, or loom's (whose `lock` cannot fail either:
/// a poisoned lock is taken over).
#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

#[cfg(loom)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(v: T) -> Self {
        Mutex(loom::sync::Mutex::new(v))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
