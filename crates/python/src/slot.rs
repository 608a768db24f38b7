//! [`Slot`]: one engine object held by a Python object, that a close can take away while
//! other threads use it; [`Close`]: what closing a database does to each object made from it.
//!
//! A slot is a `parking_lot::RwLock<Option<T>>`. A call runs its closure on `&T` (read lock;
//! calls run side by side) or `&mut T` (write lock), or fails with `talus.Closed` naming the
//! object once the slot is empty. [`Slot::close_with`] takes the value out under the write
//! lock, so it waits for the calls in flight and no call starts on a value being dropped.
//! [`CursorSlot`] is the same around a `Mutex`, for the engine's cursors (`Send`, not `Sync`:
//! only one call at a time may use one).
//!
//! Contract (checked by reading, kept by every caller in this crate):
//! - A slot's lock is taken only with the GIL released (inside `Python::detach`), and no code
//!   holding one waits for the GIL: the two never wait on each other. [`Slot::is_closed`] reads
//!   an atomic flag and may be called with the GIL held.
//! - Lock order: a database's slot, then its children list (`handle.rs`), then one child's
//!   slot; a transaction's slot may be held while a table's slot is read. Closing holds at most
//!   one child's slot at a time, so it waits on no cycle.
//! - Never re-entered: a closure run under a slot's lock does not lock the same slot again
//!   (a waiting writer would block the second read).

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, RwLock};
use pyo3::PyResult;

use crate::errors;

/// An engine object that a close can take away; see the module doc.
pub(crate) struct Slot<T> {
    value: RwLock<Option<T>>,
    closed: AtomicBool,
    what: &'static str,
}

impl<T> Slot<T> {
    /// A slot holding `value`; `what` names it in `talus.Closed` messages ("the database").
    pub(crate) fn new(value: T, what: &'static str) -> Slot<T> {
        Slot { value: RwLock::new(Some(value)), closed: AtomicBool::new(false), what }
    }

    /// `f(&value)` under the read lock, or `talus.Closed`. GIL released.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&T) -> R) -> PyResult<R> {
        match &*self.value.read() {
            Some(v) => Ok(f(v)),
            None => Err(errors::closed(self.what)),
        }
    }

    /// `f(&mut value)` under the write lock, or `talus.Closed`. GIL released.
    pub(crate) fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> PyResult<R> {
        match &mut *self.value.write() {
            Some(v) => Ok(f(v)),
            None => Err(errors::closed(self.what)),
        }
    }

    /// Empties the slot under the write lock (after the calls in flight) and runs `f` on what
    /// it held (`None` if it was already empty) before the lock is released. GIL released.
    pub(crate) fn close_with<R>(&self, f: impl FnOnce(Option<T>) -> R) -> R {
        let mut g = self.value.write();
        self.closed.store(true, Ordering::Release);
        f(g.take())
    }

    /// Takes the value out (closing the slot); `talus.Closed` if it was already empty.
    pub(crate) fn take(&self) -> PyResult<T> {
        self.close_with(|v| v.ok_or_else(|| errors::closed(self.what)))
    }

    /// True once the slot was emptied (lock-free; may be called with the GIL held).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// A [`Slot`] for a value that is `Send` but not `Sync` (an engine cursor): one call at a
/// time, under a mutex. Same contract as [`Slot`].
pub(crate) struct CursorSlot<T> {
    value: Mutex<Option<T>>,
    closed: AtomicBool,
    what: &'static str,
}

impl<T> CursorSlot<T> {
    /// A slot holding `value`; `what` names it in `talus.Closed` messages.
    pub(crate) fn new(value: T, what: &'static str) -> CursorSlot<T> {
        CursorSlot { value: Mutex::new(Some(value)), closed: AtomicBool::new(false), what }
    }

    /// `f(&mut value)` under the mutex, or `talus.Closed`. GIL released.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> PyResult<R> {
        match &mut *self.value.lock() {
            Some(v) => Ok(f(v)),
            None => Err(errors::closed(self.what)),
        }
    }

    /// True once the slot was emptied (lock-free; may be called with the GIL held).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// `talus.Closed` naming this slot's object.
    pub(crate) fn closed_error(&self) -> pyo3::PyErr {
        errors::closed(self.what)
    }
}

/// Something a database's close must empty.
pub(crate) trait Close: Send + Sync {
    /// Empties it (waiting for its calls in flight) and drops what it held. GIL released.
    fn close(&self);
}

impl<T: Send + Sync> Close for Slot<T> {
    fn close(&self) {
        drop(self.close_with(|v| v));
    }
}

impl<T: Send> Close for CursorSlot<T> {
    fn close(&self) {
        let taken = {
            let mut g = self.value.lock();
            self.closed.store(true, Ordering::Release);
            g.take()
        };
        drop(taken);
    }
}
