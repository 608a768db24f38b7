use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::*;

fn txn(id: u64) -> Arc<TxnState> {
    Arc::new(TxnState::new(id, None))
}

fn req<'a>(t: &'a Arc<TxnState>, key: &'a [u8], exclusive: bool, ms: u64) -> LockRequest<'a> {
    LockRequest { txn: t, key, exclusive, timeout: Duration::from_millis(ms), deadlock_depth: None }
}

#[test]
fn shared_locks_share_exclusive_ones_do_not() {
    let m = LockManager::new(4, None, 5);
    let (a, b, c) = (txn(1), txn(2), txn(3));
    m.lock(&req(&a, b"k", false, 0)).unwrap();
    m.lock(&req(&b, b"k", false, 0)).unwrap();
    assert!(matches!(m.lock(&req(&c, b"k", true, 0)), Err(Error::TimedOut(_))));
    // Upgrade refused while another shares it, granted once alone.
    assert!(matches!(m.lock(&req(&a, b"k", true, 0)), Err(Error::TimedOut(_))));
    m.unlock(2, [&b"k"[..]]);
    m.lock(&req(&a, b"k", true, 0)).unwrap();
    assert!(matches!(m.lock(&req(&b, b"k", false, 0)), Err(Error::TimedOut(_))));
    // Re-locking what one holds is free, shared or not.
    m.lock(&req(&a, b"k", false, 0)).unwrap();
    assert_eq!(m.num_locks(), 1);
    m.unlock(1, [&b"k"[..]]);
    assert_eq!(m.num_locks(), 0);
    // Unlocking what one does not hold is harmless.
    m.unlock(9, [&b"k"[..]]);
}

#[test]
fn timeout_is_honoured_and_a_release_wakes_the_waiter() {
    let m = Arc::new(LockManager::new(1, None, 5));
    let a = txn(1);
    m.lock(&req(&a, b"k", true, 0)).unwrap();
    let t0 = Instant::now();
    let b = txn(2);
    let e = m.lock(&req(&b, b"k", true, 50)).unwrap_err();
    assert!(matches!(e, Error::TimedOut(_)), "{e}");
    assert!(e.to_string().contains("held by transaction [1]"), "{e}");
    assert!(t0.elapsed() >= Duration::from_millis(50));
    let m2 = m.clone();
    let waiter = thread::spawn(move || {
        let b = txn(2);
        let t0 = Instant::now();
        m2.lock(&req(&b, b"k", true, 10_000)).map(|()| t0.elapsed())
    });
    thread::sleep(Duration::from_millis(30));
    m.unlock(1, [&b"k"[..]]);
    let waited = waiter.join().unwrap().unwrap();
    assert!(waited < Duration::from_secs(5), "woken by the release, not the timeout: {waited:?}");
}

#[test]
fn max_num_locks_is_busy() {
    let m = LockManager::new(2, Some(2), 5);
    let a = txn(1);
    m.lock(&req(&a, b"x", true, 0)).unwrap();
    m.lock(&req(&a, b"y", true, 0)).unwrap();
    assert!(matches!(m.lock(&req(&a, b"z", true, 0)), Err(Error::Busy(_))));
    m.unlock(1, [&b"x"[..]]);
    m.lock(&req(&a, b"z", true, 0)).unwrap();
}

#[test]
fn an_expired_holder_loses_its_lock_and_its_commit() {
    let m = LockManager::new(1, None, 5);
    let old = Arc::new(TxnState::new(1, Some(Duration::from_millis(20))));
    m.lock(&req(&old, b"k", true, 0)).unwrap();
    let b = txn(2);
    // Not expired yet: refused at once.
    assert!(m.lock(&req(&b, b"k", true, 0)).is_err());
    // A waiter wakes when the holder expires and takes the lock.
    let t0 = Instant::now();
    m.lock(&req(&b, b"k", true, 5_000)).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(4));
    assert!(matches!(old.begin_commit(), Err(Error::Expired(_))));
    // The expired holder's unlock leaves the new holder's lock alone.
    m.unlock(1, [&b"k"[..]]);
    let c = txn(3);
    assert!(m.lock(&req(&c, b"k", true, 0)).is_err());
    // A committing holder cannot expire.
    let busy = Arc::new(TxnState::new(4, Some(Duration::from_millis(1))));
    m.lock(&req(&busy, b"j", true, 0)).unwrap();
    thread::sleep(Duration::from_millis(5));
    // Its own commit after expiry fails, even though nobody took a lock.
    assert!(matches!(busy.begin_commit(), Err(Error::Expired(_))));
    let fresh = Arc::new(TxnState::new(5, Some(Duration::from_secs(60))));
    fresh.begin_commit().unwrap();
}

#[test]
fn deadlock_is_refused_for_the_waiter_that_closes_the_cycle() {
    let m = Arc::new(LockManager::new(4, None, 5));
    let (a, b) = (txn(1), txn(2));
    m.lock(&req(&a, b"a", true, 0)).unwrap();
    m.lock(&req(&b, b"b", true, 0)).unwrap();
    let m2 = m.clone();
    let a2 = a.clone();
    // 1 waits for b (held by 2), with detection.
    let first = thread::spawn(move || {
        let r = LockRequest {
            txn: &a2,
            key: b"b",
            exclusive: true,
            timeout: Duration::from_secs(10),
            deadlock_depth: Some(50),
        };
        m2.lock(&r)
    });
    // Let it register its wait, then close the cycle.
    let t0 = Instant::now();
    while !m.deadlocks.is_waiting(1) {
        assert!(t0.elapsed() < Duration::from_secs(10), "the first waiter never waited");
        thread::sleep(Duration::from_millis(1));
    }
    let r = LockRequest {
        txn: &b,
        key: b"a",
        exclusive: true,
        timeout: Duration::from_secs(10),
        deadlock_depth: Some(50),
    };
    match m.lock(&r) {
        Err(Error::Deadlock(msg)) => {
            assert!(msg.contains("transaction 2 waits for exclusive lock on a"), "{msg}")
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    assert_eq!(m.deadlocks.history().len(), 1);
    // 2 gives up (rolls back): 1 gets b.
    m.unlock(2, [&b"b"[..]]);
    first.join().unwrap().unwrap();
}
