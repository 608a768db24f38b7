//! [`DbHandle`]: an open database as the binding holds it, the list of the objects made from it
//! (its children: iterators, snapshots, catalogs, tables, transactions), and the close that
//! empties them all.
//!
//! Who holds it, through an `Arc`: the `talus.DB` object, the objects that make further
//! children (a snapshot its iterators, a catalog its tables and transactions), a bound
//! `WriteBatch` (it writes through it) and a `Table` (for its `repr`). Every method here runs
//! with the GIL released.
//!
//! A child is made by [`DbHandle::adopt`] under the database's read lock and registered (a weak
//! reference) before that lock is released; [`DbHandle::close`] takes the database out under
//! its write lock, so every child made before is in the list and none is made after. It then
//! empties each child's slot (dropping the engine objects that keep the database's files and
//! LOCK alive) and closes the database (`talus::Db::close`: waits for background jobs, flushes
//! the WAL). When it returns, nothing of the binding holds the database.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use pyo3::PyResult;

use crate::errors;
use crate::slot::{Close, Slot};

/// Children registered before the list is pruned of dead ones for the first time.
const FIRST_PRUNE: usize = 64;

/// An open database and its children.
pub(crate) struct DbHandle {
    db: Slot<talus::Db>,
    children: Mutex<Children>,
    /// The directory, for `repr` and errors.
    pub(crate) path: PathBuf,
    /// Opened with `read_only=True`.
    pub(crate) read_only: bool,
}

/// The weak references to a database's children.
struct Children {
    list: Vec<Weak<dyn Close>>,
    prune_at: usize,
}

impl DbHandle {
    /// Wraps an open database.
    pub(crate) fn new(db: talus::Db, path: PathBuf, read_only: bool) -> DbHandle {
        DbHandle {
            db: Slot::new(db, "the database"),
            children: Mutex::new(Children { list: Vec::new(), prune_at: FIRST_PRUNE }),
            path,
            read_only,
        }
    }

    /// `f(&db)` while the database is open (calls run side by side; a close waits for them),
    /// else `talus.Closed`.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&talus::Db) -> R) -> PyResult<R> {
        self.db.read(f)
    }

    /// True once closed (lock-free).
    pub(crate) fn is_closed(&self) -> bool {
        self.db.is_closed()
    }

    /// Makes a child (a [`Slot`] or [`crate::slot::CursorSlot`]) with `make` under the
    /// database's read lock and registers it, so a close of the database empties it.
    pub(crate) fn adopt<S: Close + 'static>(
        &self,
        make: impl FnOnce(&talus::Db) -> PyResult<S>,
    ) -> PyResult<Arc<S>> {
        self.db.read(|db| {
            let slot = Arc::new(make(db)?);
            let as_close: Arc<dyn Close> = slot.clone();
            let mut c = self.children.lock();
            if c.list.len() >= c.prune_at {
                c.list.retain(|w| w.strong_count() > 0);
                c.prune_at = (c.list.len() * 2).max(FIRST_PRUNE);
            }
            c.list.push(Arc::downgrade(&as_close));
            Ok(slot)
        })?
    }

    /// Closes the database and every child (see the module doc). Closing twice is `Ok`.
    pub(crate) fn close(&self) -> PyResult<()> {
        let (db, children) =
            self.db.close_with(|db| (db, std::mem::take(&mut self.children.lock().list)));
        for child in children.iter().filter_map(Weak::upgrade) {
            child.close();
        }
        match db {
            Some(db) => db.close().map_err(errors::engine),
            None => Ok(()),
        }
    }
}
