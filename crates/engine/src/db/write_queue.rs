//! The queue of writers waiting to commit (`write.rs` runs it): each writer's batch, its
//! options and the slot its leader fills with the result.
//!
//! Lock: the queue mutex is the first in the order (`core.rs`), held only to join, lead or
//! leave a group; a writer's own `batch`/`result` mutexes are leaf locks.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::batch::WriteBatch;
use crate::error::Result;

/// One writer in the queue.
pub(crate) struct Writer {
    pub batch: Mutex<Option<WriteBatch>>,
    pub sync: bool,
    pub disable_wal: bool,
    pub done: AtomicBool,
    pub result: Mutex<Option<Result<()>>>,
    pub cv: Condvar,
}

/// Writers waiting to commit, front first.
#[derive(Default)]
pub(crate) struct WriteQueue {
    pub q: Mutex<VecDeque<Arc<Writer>>>,
}
