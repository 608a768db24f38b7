//! Model checks (loom) of the slot protocol: every interleaving of small scenarios of
//! lookups, handle releases, inserts, erases, evictions and the table's drop, with every
//! reordering the atomics' orderings allow. Each scenario checks that a handle reads the value
//! it was given, that every value is dropped exactly once (no leak, no double drop, no drop
//! while a handle is out: loom's `UnsafeCell` flags a write racing a read), and that usage
//! returns to the charges of the visible entries.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p talus --lib loom`

use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc as StdArc;

use loom::sync::Arc;
use loom::thread;

use super::*;

/// A value that counts its drops and remembers what it is.
struct Val {
    id: u64,
    drops: StdArc<StdAtomicUsize>,
}

impl Drop for Val {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
    }
}

fn val(id: u64, drops: &StdArc<StdAtomicUsize>) -> Val {
    Val { id, drops: StdArc::clone(drops) }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(f);
}

fn h(k: u64) -> u64 {
    hash_key((k, 0))
}

/// 4 slots; charges of 1 against `capacity`.
fn table(capacity: usize) -> ClockTable<Val> {
    ClockTable::new(capacity, 2, false)
}

/// Inserts with CLOCK countdown 0, so that one look of the hand evicts an unreferenced entry
/// (keeps the eviction scenarios small).
fn insert(t: &ClockTable<Val>, k: u64, v: Val) -> bool {
    t.insert(h(k), (k, 0), v, 1, 0, false).is_ok()
}

fn lookup_id(t: &ClockTable<Val>, k: u64) -> Option<u64> {
    t.lookup(h(k), (k, 0)).map(|r| r.value().id)
}

/// Usage equals the number of visible entries (each charged 1).
fn check_usage(t: &ClockTable<Val>) {
    let mut visible = 0;
    t.for_each(&mut |_, _, _| visible += 1);
    assert_eq!(t.usage(), visible);
}

#[test]
fn loom_lookup_races_an_evicting_insert() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = Arc::new(table(1));
        assert!(insert(&t, 1, val(1, &drops)));
        let reader = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                if let Some(r) = t.lookup(h(1), (1, 0)) {
                    assert_eq!(r.value().id, 1, "a handle reads its own entry");
                }
            })
        };
        // Capacity 1: this insert evicts key 1 unless the reader holds it.
        assert!(insert(&t, 2, val(2, &drops)));
        reader.join().expect("reader");
        check_usage(&t);
        let t = Arc::try_unwrap(t).unwrap_or_else(|_| panic!("one owner left"));
        drop(t);
        assert_eq!(drops.load(SeqCst), 2, "each value dropped exactly once");
    });
}

#[test]
fn loom_release_races_an_erase() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = Arc::new(table(4));
        assert!(insert(&t, 1, val(1, &drops)));
        let held = t.lookup(h(1), (1, 0)).expect("present");
        let holder = thread::spawn(move || {
            assert_eq!(held.value().id, 1);
            drop(held);
        });
        t.erase(h(1), (1, 0), None);
        assert_eq!(lookup_id(&t, 1), None, "erased");
        holder.join().expect("holder");
        // Whoever let go last freed it: once, and it is uncharged.
        assert_eq!(drops.load(SeqCst), 1);
        assert_eq!((t.usage(), t.occupancy()), (0, 0));
    });
}

#[test]
fn loom_two_inserts_of_one_key_and_a_reader() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = Arc::new(table(4));
        let writers: Vec<_> = [10u64, 20]
            .into_iter()
            .map(|id| {
                let (t, drops) = (Arc::clone(&t), StdArc::clone(&drops));
                thread::spawn(move || assert!(insert(&t, 7, val(id, &drops))))
            })
            .collect();
        if let Some(id) = lookup_id(&t, 7) {
            assert!(id == 10 || id == 20, "a value some insert wrote");
        }
        for w in writers {
            w.join().expect("writer");
        }
        // At most one copy stays visible (racing inserts may hide each other: a miss, never a
        // wrong value), and nothing else is charged.
        let mut seen = 0;
        t.for_each(&mut |v, _, _| {
            assert_eq!(v.id % 10, 0);
            seen += 1;
        });
        assert!(seen <= 1, "{seen} copies visible");
        check_usage(&t);
        assert_eq!(drops.load(SeqCst), 2 - seen);
    });
}

#[test]
fn loom_handle_outlives_its_table() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = table(4);
        assert!(insert(&t, 1, val(1, &drops)));
        assert!(insert(&t, 2, val(2, &drops)));
        let held = t.lookup(h(1), (1, 0)).expect("present");
        let holder = thread::spawn(move || {
            assert_eq!(held.value().id, 1, "readable after the cache is gone");
            drop(held);
        });
        // Erase the held entry and drop the table while the handle may still be out.
        t.erase(h(1), (1, 0), None);
        drop(t);
        holder.join().expect("holder");
        assert_eq!(drops.load(SeqCst), 2, "every value dropped once, the held one last");
    });
}

#[test]
fn loom_release_races_the_tables_drop() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = table(4);
        assert!(insert(&t, 1, val(1, &drops)));
        let a = t.lookup(h(1), (1, 0)).expect("present");
        let b = a.clone();
        let holder = thread::spawn(move || drop(a));
        let dropper = thread::spawn(move || drop(t));
        assert_eq!(b.value().id, 1);
        drop(b);
        holder.join().expect("holder");
        dropper.join().expect("dropper");
        assert_eq!(drops.load(SeqCst), 1);
    });
}

#[test]
fn loom_held_entry_is_not_evicted() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let t = Arc::new(table(1));
        assert!(insert(&t, 1, val(1, &drops)));
        let held = t.lookup(h(1), (1, 0)).expect("present");
        let inserter = {
            let (t, drops) = (Arc::clone(&t), StdArc::clone(&drops));
            thread::spawn(move || {
                insert(&t, 2, val(2, &drops));
            })
        };
        assert_eq!(lookup_id(&t, 1), Some(1), "pinned: still visible");
        assert_eq!(held.value().id, 1);
        inserter.join().expect("inserter");
        assert_eq!(lookup_id(&t, 1), Some(1), "pinned through the eviction");
        drop(held);
        check_usage(&t);
    });
}

/// Capacity 1 with key 1 held, then key 2 inserted: over capacity with nothing evictable, so
/// the account's hint is set and key 1's last release frees it.
fn over_capacity_table(drops: &StdArc<StdAtomicUsize>) -> (ClockTable<Val>, SlotRef<Val>) {
    let t = table(1);
    assert!(insert(&t, 1, val(1, drops)));
    let held = t.lookup(h(1), (1, 0)).expect("present");
    assert!(insert(&t, 2, val(2, drops)));
    assert!(t.usage.over(), "an insert that could not evict set the hint");
    (t, held)
}

#[test]
fn loom_release_over_capacity_races_a_lookup() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let (t, held) = over_capacity_table(&drops);
        let t = Arc::new(t);
        let reader = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                if let Some(r) = t.lookup(h(1), (1, 0)) {
                    assert_eq!(r.value().id, 1, "a handle reads its own entry");
                }
            })
        };
        drop(held);
        reader.join().expect("reader");
        // Whichever release of key 1 came last freed it: back within capacity, key 2 left.
        check_usage(&t);
        assert_eq!((lookup_id(&t, 1), lookup_id(&t, 2)), (None, Some(2)));
        assert!(!t.usage.over(), "the hint is cleared");
        let t = Arc::try_unwrap(t).unwrap_or_else(|_| panic!("one owner left"));
        drop(t);
        assert_eq!(drops.load(SeqCst), 2, "each value dropped exactly once");
    });
}

#[test]
fn loom_release_over_capacity_races_an_erase() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let (t, held) = over_capacity_table(&drops);
        let t = Arc::new(t);
        let eraser = {
            let t = Arc::clone(&t);
            thread::spawn(move || t.erase(h(1), (1, 0), None))
        };
        drop(held);
        eraser.join().expect("eraser");
        assert_eq!(lookup_id(&t, 1), None, "erased or freed");
        check_usage(&t);
        assert_eq!(drops.load(SeqCst), 1, "key 1 freed once");
    });
}

#[test]
fn loom_release_over_capacity_races_the_tables_drop() {
    model(|| {
        let drops = StdArc::new(StdAtomicUsize::new(0));
        let (t, held) = over_capacity_table(&drops);
        let holder = thread::spawn(move || {
            assert_eq!(held.value().id, 1);
            drop(held);
        });
        drop(t);
        holder.join().expect("holder");
        assert_eq!(drops.load(SeqCst), 2, "every value dropped once");
    });
}
