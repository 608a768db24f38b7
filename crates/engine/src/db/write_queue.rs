//! The queue of writers waiting to commit (`write.rs` runs it): each writer's batch, its
//! options, the flags its leader sets (`leading`, `has_work`, `done`) and the slot the leader
//! fills with the result; and how a writer waits for them.
//!
//! Waiting: a writer first spins and then yields for up to `write_thread_max_yield_usec`
//! (RocksDB's `enable_write_thread_adaptive_yield`: a hand-off between two writers then costs no
//! system call), and only then blocks on its condition variable under the queue mutex. Whoever
//! sets a writer's flag does so holding the queue mutex and notifies it, so a blocked writer
//! never misses one.
//!
//! Lock: the queue mutex is the first in the order (`core.rs`), held only to join, take a group,
//! leave it, hand out work or results; a writer's own `batch`/`work`/`result` mutexes are leaf
//! locks.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::write_mems::WriteMems;
use crate::batch::WriteBatch;
use crate::error::Result;

/// One writer in the queue.
pub(crate) struct Writer {
    pub batch: Mutex<Option<WriteBatch>>,
    pub sync: bool,
    pub disable_wal: bool,
    /// Its group has committed; `result` holds the outcome.
    pub done: AtomicBool,
    /// It is at the front of the queue: it leads the next group.
    pub leading: AtomicBool,
    /// Its leader handed it `work`: insert its own batch into the memtable.
    pub has_work: AtomicBool,
    pub work: Mutex<Option<MemberWork>>,
    pub result: Mutex<Option<Result<()>>>,
    pub cv: Condvar,
}

impl Writer {
    /// A writer of `batch` (`None`: a `with_write_lock` holder, never grouped).
    pub fn new(batch: Option<WriteBatch>, sync: bool, disable_wal: bool) -> Writer {
        Writer {
            batch: Mutex::new(batch),
            sync,
            disable_wal,
            done: AtomicBool::new(false),
            leading: AtomicBool::new(false),
            has_work: AtomicBool::new(false),
            work: Mutex::new(None),
            result: Mutex::new(None),
            cv: Condvar::new(),
        }
    }
}

/// A group member's share of the memtable inserts (`allow_concurrent_memtable_write`): its own
/// batch into `mems` (its families' memtables) from sequence `first_seq`, then one off
/// `pending`.
pub(crate) struct MemberWork {
    pub mems: Arc<WriteMems>,
    pub first_seq: u64,
    pub pending: Arc<AtomicUsize>,
}

/// Writers waiting to commit, front first.
pub(crate) struct WriteQueue {
    pub q: Mutex<VecDeque<Arc<Writer>>>,
    /// How long a writer spins and yields before it blocks (zero: it spins briefly, then
    /// blocks).
    pub max_yield: Duration,
}

impl WriteQueue {
    /// A queue whose writers spin and yield for up to `max_yield` before blocking.
    pub fn new(max_yield: Duration) -> WriteQueue {
        WriteQueue { q: Mutex::new(VecDeque::new()), max_yield }
    }

    /// Adds `w` at the back; it leads at once if the queue was empty.
    pub fn push(&self, w: &Arc<Writer>) {
        let mut q = self.q.lock();
        if q.is_empty() {
            w.leading.store(true, Ordering::Release);
        }
        q.push_back(Arc::clone(w));
    }

    /// Returns once `cond(w)` holds (see the module doc).
    pub fn wait(&self, w: &Writer, cond: impl Fn(&Writer) -> bool) {
        if spin_until(self.max_yield, || cond(w)) {
            return;
        }
        let mut q = self.q.lock();
        while !cond(w) {
            w.cv.wait(&mut q);
        }
    }

    /// Sets `flag` of `w` and wakes it.
    fn signal(&self, w: &Writer, flag: impl FnOnce(&Writer)) {
        let _q = self.q.lock();
        flag(w);
        w.cv.notify_one();
    }

    /// Hands `work` to member `w` of the leader's group.
    pub fn assign(&self, w: &Writer, work: MemberWork) {
        *w.work.lock() = Some(work);
        self.signal(w, |w| w.has_work.store(true, Ordering::Release));
    }

    /// Removes the `n` writers at the front (the leader's group, the leader first) and makes the
    /// new front the next leader. The group's members still wait for `done`.
    pub fn pop_group(&self, n: usize) {
        let mut q = self.q.lock();
        for _ in 0..n {
            q.pop_front();
        }
        if let Some(front) = q.front() {
            front.leading.store(true, Ordering::Release);
            front.cv.notify_one();
        }
    }

    /// Completes the members of a group (every writer of `group` but `leader`) with `result`.
    pub fn complete(&self, group: &[Arc<Writer>], leader: &Arc<Writer>, result: &Result<()>) {
        if group.len() < 2 {
            // The leader alone: no one to complete (and the queue mutex not taken).
            return;
        }
        let _q = self.q.lock();
        for m in group.iter().filter(|m| !Arc::ptr_eq(m, leader)) {
            *m.result.lock() = Some(match result {
                Ok(()) => Ok(()),
                Err(e) => Err(e.duplicate()),
            });
            m.done.store(true, Ordering::Release);
            m.cv.notify_one();
        }
    }
}

/// Spins briefly, then yields, until `cond` holds or `max` has passed; true if it holds. As
/// RocksDB's adaptive yield: a yield that took longer than [`SLOW_YIELD`] (other threads want
/// the core: each further yield may cost a whole time slice) ends the yielding, and the caller
/// blocks instead; and while yielding keeps failing, it is skipped (see [`YieldCredit`]).
pub(crate) fn spin_until(max: Duration, cond: impl Fn() -> bool) -> bool {
    for _ in 0..200 {
        if cond() {
            return true;
        }
        std::hint::spin_loop();
    }
    if max.is_zero() || !CREDIT.may_yield() {
        return cond();
    }
    let start = Instant::now();
    loop {
        let before = Instant::now();
        std::thread::yield_now();
        let now = Instant::now();
        let slow = now.duration_since(before) > SLOW_YIELD;
        if let Some((holds, paid)) = after_yield(slow, cond(), now.duration_since(start) >= max) {
            CREDIT.record(paid);
            return holds;
        }
    }
}

/// After one yield of a yield phase (`slow`: it took longer than [`SLOW_YIELD`]; `holds`: the
/// condition holds now; `expired`: the phase's time is up): `None` to yield again, or the end
/// of the phase, `Some((holds, paid))`, `paid` telling [`CREDIT`] whether yielding paid off. A
/// slow yield gave the core away for a time slice: it did not pay even if the condition holds
/// by now (blocking would have been woken as it came to hold).
fn after_yield(slow: bool, holds: bool, expired: bool) -> Option<(bool, bool)> {
    if holds {
        Some((true, !slow))
    } else if slow || expired {
        Some((false, false))
    } else {
        None
    }
}

/// Whether yielding has been paying off lately (process-wide): +1 for a yield phase that saw
/// its condition with fast yields only, -8 for one that gave up or whose last yield was slow
/// (on a loaded machine each such yield cost a time slice, and counting it a success kept two
/// writers yielding: `fillrandom --threads=2` at 1 KiB ran at 52K puts/s with one involuntary
/// context switch per put in some runs, 124K with 600 in all in others); below zero, yield
/// phases are skipped but for one in 256, which keeps measuring (RocksDB's `yield_credit`).
struct YieldCredit {
    credit: std::sync::atomic::AtomicI32,
    tries: AtomicUsize,
}

static CREDIT: YieldCredit =
    YieldCredit { credit: std::sync::atomic::AtomicI32::new(0), tries: AtomicUsize::new(0) };

impl YieldCredit {
    fn may_yield(&self) -> bool {
        self.credit.load(Ordering::Relaxed) >= 0
            || self.tries.fetch_add(1, Ordering::Relaxed).is_multiple_of(256)
    }

    fn record(&self, worked: bool) {
        let c = self.credit.load(Ordering::Relaxed);
        let next = if worked { (c + 1).min(64) } else { (c - 8).max(-64) };
        self.credit.store(next, Ordering::Relaxed);
    }
}

/// A yield longer than this means other threads want the core (RocksDB's
/// `write_thread_slow_yield_usec` default).
const SLOW_YIELD: Duration = Duration::from_micros(3);

#[cfg(test)]
mod tests {
    use super::after_yield;

    #[test]
    fn a_slow_yield_never_counts_as_paying_off() {
        assert_eq!(after_yield(false, true, false), Some((true, true)));
        assert_eq!(after_yield(true, true, false), Some((true, false)), "held, but slow");
        assert_eq!(after_yield(true, false, false), Some((false, false)));
        assert_eq!(after_yield(false, false, true), Some((false, false)));
        assert_eq!(after_yield(false, false, false), None);
    }
}
