//! Unit tests of the clock cache: the single-threaded semantics (hit, miss, replace, erase,
//! eviction order, limits) and the metadata-word corner cases (overflow correction,
//! displacement rollback). The multi-threaded stress test is `tests/clock_cache.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};

use rand::{Rng, SeedableRng};

use super::table::hash_key;
use super::*;

fn one_shard(capacity: usize, est: usize, strict: bool) -> HyperClockCache<u64> {
    HyperClockCache::new(capacity, est, 0, strict)
}

fn total_displacements<V: Send + Sync>(c: &HyperClockCache<V>) -> u64 {
    c.shards.iter().map(|s| s.displacements_for_test()).sum()
}

#[test]
fn insert_lookup_erase() {
    let c = one_shard(100, 10, false);
    assert!(c.lookup((1, 2)).is_none());
    c.insert((1, 2), 12, 10);
    c.insert((3, 4), 34, 5);
    assert_eq!(c.lookup((1, 2)).as_deref(), Some(&12));
    assert_eq!(c.lookup((3, 4)).as_deref(), Some(&34));
    assert!(c.lookup((1, 4)).is_none());
    assert_eq!(c.usage(), 15);
    assert_eq!(c.len(), 2);
    c.erase((1, 2));
    assert!(c.lookup((1, 2)).is_none());
    assert_eq!(c.usage(), 5);
    c.erase((1, 2)); // absent: no-op
    c.erase((3, 4));
    assert_eq!((c.usage(), c.len()), (0, 0));
    assert_eq!(total_displacements(&c), 0);
}

#[test]
fn replace_keeps_one_entry() {
    let c = one_shard(100, 10, false);
    c.insert((7, 7), 1, 10);
    c.insert((7, 7), 2, 20);
    assert_eq!(c.lookup((7, 7)).as_deref(), Some(&2));
    assert_eq!((c.usage(), c.len()), (20, 1));
    c.erase((7, 7));
    assert!(c.lookup((7, 7)).is_none());
    assert_eq!((c.usage(), c.len()), (0, 0));
}

#[test]
fn capacity_respected_and_held_values_pinned() {
    let c: HyperClockCache<Vec<u8>> = HyperClockCache::new(1000, 100, 0, false);
    c.insert((0, 0), vec![9; 3], 100);
    let held = c.lookup((0, 0)).expect("just inserted");
    for i in 1..200u64 {
        c.insert((i, 0), vec![1; 8], 100);
        assert!(c.usage() <= 1000, "usage {} after {i}", c.usage());
    }
    assert_eq!(c.lookup((0, 0)).as_deref(), Some(&vec![9; 3]), "a held entry is not evicted");
    assert_eq!(c.pinned_usage(), 100);
    assert!(c.len() <= 10);
    drop(held);
    assert_eq!(c.pinned_usage(), 0);
    for i in 200..400u64 {
        c.insert((i, 0), vec![1; 8], 100);
    }
    assert!(c.lookup((0, 0)).is_none(), "evicted once let go");
    // An erased entry goes at once even if held; the holder keeps the value.
    c.insert((7, 7), vec![7], 100);
    let h = c.lookup((7, 7)).unwrap();
    c.erase((7, 7));
    assert!(c.lookup((7, 7)).is_none());
    assert_eq!(*h, vec![7]);
}

#[test]
fn clock_keeps_hot_entries() {
    // 64 entries fit; keys 0..32 are looked up between inserts, keys from 1000 on are not.
    let c = one_shard(64, 1, false);
    for k in 0..64u64 {
        c.insert((k, 0), k, 1);
    }
    for round in 0..200u64 {
        for k in 0..32u64 {
            let _ = c.lookup((k, 0));
        }
        c.insert((1000 + round, 0), round, 1);
    }
    let hot = (0..32u64).filter(|&k| c.lookup((k, 0)).is_some()).count();
    assert!(hot >= 28, "only {hot} of 32 hot entries survived");
    assert!(c.usage() <= 64);
}

#[test]
fn strict_limit_refuses_what_cannot_fit() {
    let c = one_shard(100, 10, true);
    c.insert((1, 0), 1, 101);
    assert!(c.lookup((1, 0)).is_none(), "larger than capacity");
    assert_eq!(c.usage(), 0);
    for k in 0..50u64 {
        c.insert((k, 1), k, 30);
        assert!(c.usage() <= 100);
    }
    assert_eq!(c.usage(), 90);
    let loose = one_shard(100, 10, false);
    loose.insert((1, 0), 1, 150);
    assert_eq!(loose.lookup((1, 0)).as_deref(), Some(&1), "non-strict takes it anyway");
    loose.insert((2, 0), 2, 10);
    assert!(loose.usage() <= 100, "the oversized entry goes at the next insert");
}

#[test]
fn occupancy_limit_evicts_when_entries_are_smaller_than_estimated() {
    // Sized for 10 entries of 100 bytes (16 slots, 14 usable); entries of 1 byte.
    let c = one_shard(1000, 100, false);
    assert_eq!(c.table_address_count(), 16);
    for k in 0..100u64 {
        c.insert((k, 0), k, 1);
        assert!(c.len() <= 14, "len {}", c.len());
    }
    assert_eq!(c.usage(), c.len());
    assert!(c.lookup((99, 0)).is_some(), "the newest entry is in");
}

#[test]
fn drop_frees_every_value() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct D;
    impl Drop for D {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    let c: HyperClockCache<D> = HyperClockCache::new(1 << 20, 64, 2, false);
    for k in 0..500u64 {
        c.insert((k, k), D, 64);
    }
    c.insert((1, 1), D, 64); // replaces: one drop now
    c.erase((2, 2)); // one drop now
    assert_eq!(DROPS.load(Ordering::SeqCst), 2);
    drop(c);
    assert_eq!(DROPS.load(Ordering::SeqCst), 501);
}

#[test]
fn counters_near_overflow_are_corrected() {
    let c = one_shard(100, 10, false);
    c.insert((5, 5), 55, 10);
    let h = hash_key((5, 5));
    let top = 1u64 << 29;
    assert!(c.shards[0].set_counters_for_test(h, (5, 5), (1 << 30) - 3));
    for _ in 0..10 {
        assert_eq!(c.lookup((5, 5)).as_deref(), Some(&55));
    }
    let (st, acq, rel) = c.shards[0].meta_for_test(h, (5, 5)).expect("present");
    assert_eq!(acq, rel, "no reference left behind");
    assert!(acq < top, "top bits cleared: {acq:#x}");
    assert_eq!(st, 0b111);
    // Still evictable and erasable with correct accounting.
    c.erase((5, 5));
    assert_eq!((c.usage(), c.len()), (0, 0));
    // A countdown above the maximum is brought down by the hand.
    c.insert((6, 6), 66, 10);
    assert!(c.shards[0].set_counters_for_test(hash_key((6, 6)), (6, 6), 1000));
    c.insert((7, 7), 77, 95); // forces eviction of (6, 6) after a few sweeps
    assert!(c.lookup((6, 6)).is_none());
}

#[test]
fn random_ops_match_a_model_without_eviction() {
    // Capacity far above what is inserted: the cache must behave as a map.
    let c: HyperClockCache<u64> = HyperClockCache::new(1 << 30, 1 << 16, 3, false);
    let mut model = std::collections::HashMap::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for i in 0..50_000u64 {
        let k = (rng.gen_range(0..300u64), rng.gen_range(0..3u64));
        match rng.gen_range(0..3) {
            0 => {
                c.insert(k, i, 1);
                model.insert(k, i);
            }
            1 => assert_eq!(c.lookup(k).as_deref(), model.get(&k), "key {k:?}"),
            _ => {
                c.erase(k);
                model.remove(&k);
            }
        }
        assert_eq!(c.usage(), model.len());
    }
    for k in model.keys() {
        c.erase(*k);
    }
    assert_eq!((c.usage(), c.len(), total_displacements(&c)), (0, 0, 0));
}

#[test]
fn key_for_hash_inverts_the_hash() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..1000 {
        let h: u64 = rng.gen();
        assert_eq!(hash_key(key_for_hash(h)), h);
    }
}

#[test]
fn full_metadata_charge_adds_the_slot_and_sizes_the_table_for_it() {
    let slot = std::mem::size_of::<table::Slot<u64>>();
    assert_eq!(slot, 64);
    // One 64 KiB shard, entries of 100 bytes: a slot per 100 * 0.7 + 64 = 134 bytes -> 490 ->
    // 512 slots (without the metadata a slot per 70 bytes -> 937 -> 1024).
    let full = MetadataChargePolicy::FullCharge;
    let c: HyperClockCache<u64> =
        HyperClockCache::with_metadata_charge_policy(64 << 10, 100, 0, false, full);
    assert_eq!(c.table_address_count(), 512);
    assert_eq!(HyperClockCache::<u64>::new(64 << 10, 100, 0, false).table_address_count(), 1024);
    assert!(c.insert((1, 0), 7, 100));
    let h = c.insert_and_hold((2, 0), 8, 100, Priority::Low).ok().unwrap();
    assert_eq!(c.usage(), 2 * (100 + slot));
    let mut charges = Vec::new();
    c.for_each_entry(&mut |_, charge, _| charges.push(charge));
    assert_eq!(charges, [100 + slot, 100 + slot]);
    drop(h);
    c.erase((1, 0));
    c.erase((2, 0));
    assert_eq!(c.usage(), 0);
    // The capacity now holds fewer entries: 64 KiB / 164 bytes.
    for k in 0..1000 {
        c.insert((k, 1), k, 100);
    }
    assert!(c.usage() <= 64 << 10);
    assert!(c.len() <= (64 << 10) / (100 + slot), "{} entries", c.len());
}

/// `insert_if_absent` and `insert_and_hold_if_absent` (RocksDB's clock-cache insert rule) on
/// every cache type: a present key keeps its entry and value, the new value comes back (or is
/// dropped), and usage is unchanged; an absent key is inserted as by `insert`.
#[test]
fn insert_if_absent_keeps_the_present_entry() {
    use crate::cache::{AutoHyperClockCache, LruCache};
    let caches: Vec<Box<dyn Cache<u64>>> = vec![
        Box::new(one_shard(1000, 10, false)),
        Box::new(AutoHyperClockCache::new(1000, 0, false)),
        Box::new(LruCache::new(1000, 0, false)),
    ];
    for c in caches {
        let name = c.name();
        assert!(c.insert_if_absent((1, 1), 10, 10), "{name}: absent key inserted");
        assert_eq!(c.lookup((1, 1)).as_deref(), Some(&10), "{name}");
        assert!(!c.insert_if_absent((1, 1), 11, 20), "{name}: present key kept");
        assert_eq!(c.lookup((1, 1)).as_deref(), Some(&10), "{name}: the first value stays");
        assert_eq!(c.usage(), 10, "{name}: the refused value is not charged");
        match c.insert_and_hold_if_absent((1, 1), 12, 30, Priority::Low) {
            Err(v) => assert_eq!(v, 12, "{name}: the new value comes back"),
            Ok(_) => panic!("{name}: a present key was replaced"),
        }
        let h = c.insert_and_hold_if_absent((2, 2), 20, 5, Priority::Low).expect("absent");
        assert_eq!(*h, 20, "{name}");
        assert_eq!(c.lookup((2, 2)).as_deref(), Some(&20), "{name}");
        assert_eq!(c.usage(), 15, "{name}");
        // Plain `insert` still replaces.
        c.insert((1, 1), 13, 10);
        assert_eq!(c.lookup((1, 1)).as_deref(), Some(&13), "{name}: insert replaces");
    }
}
