//! [`Syncer`]: the thread that makes appended log entries durable, one `sync_wal` for every
//! append waiting (group commit), and then tells openraft through each append's
//! [`LogFlushed`] callback. So `RaftLogStorage::append` returns as soon as its entries are
//! written (readable), and Raft's core task never waits on an fsync.
//!
//! Ordering: callbacks complete in submission order, each after a sync that began after its
//! entries were written, so each reports only durable entries. Dropping the `Syncer` closes the
//! queue; the thread syncs and completes whatever was queued, then exits, and the drop joins it.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use openraft::storage::LogFlushed;

use crate::backend::Backend;
use crate::types::TypeConfig;

/// The sync thread and its queue.
pub struct Syncer {
    tx: Option<mpsc::Sender<LogFlushed<TypeConfig>>>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts the thread (`talus-raft-sync`) syncing `backend`.
    pub fn start<B: Backend>(backend: Arc<B>) -> std::io::Result<Syncer> {
        let (tx, rx) = mpsc::channel::<LogFlushed<TypeConfig>>();
        let thread = std::thread::Builder::new()
            .name("talus-raft-sync".into())
            .spawn(move || run(&*backend, &rx))?;
        Ok(Syncer { tx: Some(tx), thread: Some(thread) })
    }

    /// Queues `cb`, to be completed after the next sync.
    pub fn submit(&self, cb: LogFlushed<TypeConfig>) {
        match &self.tx {
            Some(tx) => {
                if let Err(mpsc::SendError(cb)) = tx.send(cb) {
                    cb.log_io_completed(Err(std::io::Error::other("the sync thread is gone")));
                }
            }
            None => cb.log_io_completed(Err(std::io::Error::other("the store is closing"))),
        }
    }
}

fn run<B: Backend>(backend: &B, rx: &mpsc::Receiver<LogFlushed<TypeConfig>>) {
    let mut waiting = Vec::new();
    while let Ok(first) = rx.recv() {
        waiting.push(first);
        waiting.extend(rx.try_iter());
        let res = backend.sync_wal();
        for cb in waiting.drain(..) {
            let r = match &res {
                Ok(()) => Ok(()),
                Err(e) => Err(std::io::Error::other(format!("syncing the log: {e}"))),
            };
            cb.log_io_completed(r);
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
