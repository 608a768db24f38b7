//! Model checks (loom) of [`GroupEvent`]'s wake-up protocol: a waiter blocked on a condition
//! another thread makes true and then notifies is always woken (no lost wake-up), though
//! `notify` skips the mutex when it sees no waiter. A lost wake-up leaves every thread blocked,
//! which loom reports as a deadlock. Both tests fail with the waiter looking at its condition
//! before counting itself, and without the two `SeqCst` fences.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p talus --lib loom`

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;
use loom::thread;

use super::GroupEvent;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn loom_group_event_never_loses_a_wake_up() {
    model(|| {
        let ev = Arc::new(GroupEvent::default());
        let flag = Arc::new(AtomicBool::new(false));
        let notifier = {
            let (ev, flag) = (Arc::clone(&ev), Arc::clone(&flag));
            thread::spawn(move || {
                flag.store(true, Ordering::Release);
                ev.notify();
            })
        };
        ev.block_until(|| flag.load(Ordering::Acquire));
        notifier.join().unwrap();
    });
}

/// Two waiters on two conditions (a drain and a publication), one notifier making both true
/// one after the other, notifying after each.
#[test]
fn loom_group_event_wakes_every_waiter() {
    model(|| {
        let ev = Arc::new(GroupEvent::default());
        let a = Arc::new(AtomicBool::new(false));
        let b = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (ev, b) = (Arc::clone(&ev), Arc::clone(&b));
            thread::spawn(move || ev.block_until(|| b.load(Ordering::Acquire)))
        };
        let notifier = {
            let (ev, a, b) = (Arc::clone(&ev), Arc::clone(&a), Arc::clone(&b));
            thread::spawn(move || {
                a.store(true, Ordering::Release);
                ev.notify();
                b.store(true, Ordering::Release);
                ev.notify();
            })
        };
        ev.block_until(|| a.load(Ordering::Acquire));
        waiter.join().unwrap();
        notifier.join().unwrap();
    });
}
