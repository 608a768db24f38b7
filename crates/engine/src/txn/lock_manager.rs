//! Row locks of pessimistic transactions (RocksDB's `PointLockManager`): shared or exclusive
//! locks on single keys, held until the transaction ends, with a wait bounded by a timeout,
//! deadlock detection (`deadlock.rs`) and the stealing of an expired holder's locks.
//!
//! The lock table is split into stripes by a hash of the key; each stripe is a map from key to
//! its holders under one mutex, with a condition variable its waiters sleep on. A release
//! wakes the stripe's waiters, which try again. A transaction's state ([`TxnState`]) lives in
//! the locks it holds, so a waiter can see that a holder expired and take the lock from it:
//! the holder's state then turns `Expired` (once it began committing, it cannot expire).
//!
//! Who calls: [`crate::Transaction`] (locking as it reads for update and writes, unlocking at
//! the end or on a savepoint rollback) and [`crate::TransactionDb`]'s writes outside a
//! transaction. Locks: a stripe's mutex, then (with deadlock detection) the wait-for graph's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use smallvec::SmallVec;

use super::deadlock::{DeadlockDetector, DeadlockPath};
use crate::error::{Error, Result};
use crate::key::EscapedBytes;

const ACTIVE: u8 = 0;
const COMMITTING: u8 = 1;
const EXPIRED: u8 = 2;

/// A pessimistic transaction's identity and state, shared with the locks it holds.
#[derive(Debug)]
pub(crate) struct TxnState {
    pub id: u64,
    state: AtomicU8,
    expires_at: Option<Instant>,
}

impl TxnState {
    pub fn new(id: u64, expiration: Option<Duration>) -> TxnState {
        let expires_at = expiration.and_then(|d| Instant::now().checked_add(d));
        TxnState { id, state: AtomicU8::new(ACTIVE), expires_at }
    }

    /// If this transaction's time is up and it is not committing, marks it expired (its locks
    /// may be taken); true if it is expired.
    fn try_expire(&self, now: Instant) -> bool {
        if self.expires_at.is_none_or(|t| now < t) {
            return false;
        }
        match self.state.compare_exchange(ACTIVE, EXPIRED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(s) => s == EXPIRED,
        }
    }

    /// Starts the commit: from now on no lock can be taken from this transaction.
    /// [`Error::Expired`] if its time is up (whether or not a lock was taken).
    pub fn begin_commit(&self) -> Result<()> {
        if self.try_expire(Instant::now()) {
            return Err(expired(self.id));
        }
        match self.state.compare_exchange(ACTIVE, COMMITTING, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(()),
            Err(_) => Err(expired(self.id)),
        }
    }
}

fn expired(id: u64) -> Error {
    Error::Expired(format!(
        "transaction {id} ran past its expiration; its locks may have been taken, nothing was \
         written"
    ))
}

/// Who holds one key's lock.
struct LockInfo {
    exclusive: bool,
    holders: SmallVec<[Arc<TxnState>; 1]>,
}

#[derive(Default)]
struct Stripe {
    map: Mutex<HashMap<Vec<u8>, LockInfo>>,
    cv: Condvar,
    waiters: AtomicUsize,
}

/// A lock request.
pub(crate) struct LockRequest<'a> {
    pub txn: &'a Arc<TxnState>,
    pub key: &'a [u8],
    pub exclusive: bool,
    /// `Duration::ZERO`: do not wait; `Duration::MAX`: wait forever.
    pub timeout: Duration,
    /// `Some(depth)`: detect deadlocks before waiting.
    pub deadlock_depth: Option<usize>,
}

/// Why a lock was not granted now.
enum Refusal {
    /// Held by these transactions; the earliest of their expirations, if any.
    Blocked(SmallVec<[u64; 2]>, Option<Instant>),
    Failed(Error),
}

/// The lock table.
pub(crate) struct LockManager {
    stripes: Box<[Stripe]>,
    num_locks: AtomicUsize,
    max_locks: Option<usize>,
    pub deadlocks: DeadlockDetector,
}

impl LockManager {
    pub fn new(num_stripes: usize, max_locks: Option<usize>, max_deadlocks: usize) -> Self {
        LockManager {
            stripes: (0..num_stripes.max(1)).map(|_| Stripe::default()).collect(),
            num_locks: AtomicUsize::new(0),
            max_locks,
            deadlocks: DeadlockDetector::new(max_deadlocks),
        }
    }

    fn stripe(&self, key: &[u8]) -> &Stripe {
        let h = xxhash_rust::xxh3::xxh3_64(key) as usize;
        &self.stripes[h % self.stripes.len()]
    }

    /// Takes the lock of `r.key` for `r.txn`, waiting up to `r.timeout`:
    /// [`Error::TimedOut`] past it, [`Error::Deadlock`] if the wait would close a cycle,
    /// [`Error::Busy`] past `max_num_locks`.
    pub fn lock(&self, r: &LockRequest<'_>) -> Result<()> {
        let stripe = self.stripe(r.key);
        let mut map = stripe.map.lock();
        let mut deadline: Option<Option<Instant>> = None;
        let mut registered = false;
        let result = loop {
            let (holders, expiry) = match self.try_acquire(&mut map, r) {
                Ok(()) => break Ok(()),
                Err(Refusal::Failed(e)) => break Err(e),
                Err(Refusal::Blocked(h, e)) => (h, e),
            };
            if r.timeout.is_zero() {
                break Err(timed_out(r.key, &holders));
            }
            // `None` inside: no deadline (wait forever).
            let until = *deadline.get_or_insert_with(|| Instant::now().checked_add(r.timeout));
            if let Some(depth) = r.deadlock_depth {
                registered = true;
                if let Err(p) =
                    self.deadlocks.begin_wait(r.txn.id, &holders, r.key, r.exclusive, depth)
                {
                    registered = false;
                    break Err(deadlock(&p));
                }
            }
            // Wake at the deadline, or when a holder expires (to take its lock), or when woken.
            let wake = match (until, expiry) {
                (Some(u), Some(e)) => Some(u.min(e)),
                (u, e) => u.or(e),
            };
            stripe.waiters.fetch_add(1, Ordering::AcqRel);
            match wake {
                Some(t) => {
                    stripe.cv.wait_until(&mut map, t);
                }
                None => stripe.cv.wait(&mut map),
            }
            stripe.waiters.fetch_sub(1, Ordering::AcqRel);
            if until.is_some_and(|u| Instant::now() >= u) {
                // One last try at the deadline.
                break match self.try_acquire(&mut map, r) {
                    Ok(()) => Ok(()),
                    Err(Refusal::Failed(e)) => Err(e),
                    Err(Refusal::Blocked(h, _)) => Err(timed_out(r.key, &h)),
                };
            }
        };
        drop(map);
        if registered {
            self.deadlocks.end_wait(r.txn.id);
        }
        result
    }

    fn try_acquire(
        &self,
        map: &mut HashMap<Vec<u8>, LockInfo>,
        r: &LockRequest<'_>,
    ) -> Result<(), Refusal> {
        let id = r.txn.id;
        let Some(li) = map.get_mut(r.key) else {
            if let Some(max) = self.max_locks {
                if self.num_locks.load(Ordering::Acquire) >= max {
                    return Err(Refusal::Failed(Error::Busy(format!(
                        "failed to acquire the lock of {:?}: max_num_locks ({max}) keys are locked",
                        EscapedBytes(r.key)
                    ))));
                }
            }
            let mut holders = SmallVec::new();
            holders.push(Arc::clone(r.txn));
            map.insert(r.key.to_vec(), LockInfo { exclusive: r.exclusive, holders });
            self.num_locks.fetch_add(1, Ordering::AcqRel);
            return Ok(());
        };
        let mine = li.holders.iter().any(|h| h.id == id);
        if mine && (!r.exclusive || li.exclusive || li.holders.len() == 1) {
            li.exclusive |= r.exclusive;
            return Ok(());
        }
        if !mine && !r.exclusive && !li.exclusive {
            li.holders.push(Arc::clone(r.txn));
            return Ok(());
        }
        // Others hold it incompatibly: take it from those that expired.
        if li.holders.iter().any(|h| h.id != id && h.expires_at.is_some()) {
            let now = Instant::now();
            li.holders.retain(|h| h.id == id || !h.try_expire(now));
            if li.holders.is_empty() {
                li.exclusive = r.exclusive;
                li.holders.push(Arc::clone(r.txn));
                return Ok(());
            }
            if mine && li.holders.len() == 1 {
                li.exclusive |= r.exclusive;
                return Ok(());
            }
            if !mine && !r.exclusive && !li.exclusive {
                li.holders.push(Arc::clone(r.txn));
                return Ok(());
            }
        }
        let others = li.holders.iter().filter(|h| h.id != id);
        let expiry = others.clone().filter_map(|h| h.expires_at).min();
        Err(Refusal::Blocked(others.map(|h| h.id).collect(), expiry))
    }

    /// Releases `txn`'s locks of `keys` (a key it does not hold is skipped: its lock may have
    /// been taken after it expired).
    pub fn unlock<'a>(&self, txn: u64, keys: impl IntoIterator<Item = &'a [u8]>) {
        for key in keys {
            let stripe = self.stripe(key);
            let mut map = stripe.map.lock();
            if let Some(li) = map.get_mut(key) {
                li.holders.retain(|h| h.id != txn);
                if li.holders.is_empty() {
                    map.remove(key);
                    self.num_locks.fetch_sub(1, Ordering::AcqRel);
                }
            }
            let waiting = stripe.waiters.load(Ordering::Acquire) > 0;
            drop(map);
            if waiting {
                stripe.cv.notify_all();
            }
        }
    }

    /// Keys locked now.
    pub fn num_locks(&self) -> usize {
        self.num_locks.load(Ordering::Acquire)
    }
}

fn timed_out(key: &[u8], holders: &[u64]) -> Error {
    Error::TimedOut(format!(
        "timeout waiting to lock key {:?} (held by transaction {holders:?})",
        EscapedBytes(key)
    ))
}

fn deadlock(p: &DeadlockPath) -> Error {
    Error::Deadlock(p.to_string())
}

#[cfg(test)]
#[path = "lock_manager_tests.rs"]
mod tests;
