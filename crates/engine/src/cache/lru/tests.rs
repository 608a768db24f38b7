//! Tests of the sharded LRU: order, capacity, the high-priority pool, pinning, threads.

use super::shard::KeyHasher;
use super::*;
use crate::cache::Priority;
use rand::{Rng, SeedableRng};
use std::hash::BuildHasherDefault;

#[test]
fn key_hash_spreads_aligned_offsets() {
    use std::hash::BuildHasher;
    let b = BuildHasherDefault::<KeyHasher>::default();
    let mut buckets = std::collections::HashSet::new();
    for i in 0..1024u64 {
        buckets.insert(b.hash_one((7u64, i * 4096)) & 1023);
    }
    assert!(buckets.len() > 500, "{} distinct low-bit buckets", buckets.len());
}

#[test]
fn lru_order_and_capacity() {
    let c: LruCache<u32> = LruCache::new(3, 0, false);
    for i in 0..3 {
        c.insert((i, 0), i as u32, 1);
    }
    assert_eq!(c.lookup((0, 0)).as_deref(), Some(&0)); // 0 is now most recent
    c.insert((3, 0), 3, 1); // evicts 1
    assert!(c.lookup((1, 0)).is_none());
    assert!(c.lookup((0, 0)).is_some());
    assert!(c.lookup((2, 0)).is_some());
    assert_eq!(c.usage(), 3);
    c.insert((4, 0), 4, 2); // evicts 3 then 0 (2 was touched after 0)
    assert!(c.lookup((3, 0)).is_none());
    assert!(c.lookup((0, 0)).is_none());
    assert_eq!(c.lookup((2, 0)).as_deref(), Some(&2));
    assert_eq!(c.usage(), 3);
    c.erase((2, 0));
    assert_eq!(c.usage(), 2);
    assert_eq!(c.len(), 1);
}

#[test]
fn replace_and_strict_limit() {
    let c: LruCache<u32> = LruCache::new(10, 0, true);
    c.insert((1, 1), 1, 4);
    c.insert((1, 1), 2, 6);
    assert_eq!(c.usage(), 6);
    assert_eq!(c.lookup((1, 1)).as_deref(), Some(&2));
    c.insert((2, 2), 3, 11);
    assert!(c.lookup((2, 2)).is_none(), "strict limit refuses oversized entries");
    let loose: LruCache<u32> = LruCache::new(10, 0, false);
    loose.insert((2, 2), 3, 11);
    assert!(loose.lookup((2, 2)).is_some());
}

#[test]
fn held_values_are_pinned_until_dropped() {
    let c: LruCache<Vec<u8>> = LruCache::new(2, 0, false);
    c.insert((1, 0), vec![1, 2, 3], 1);
    let held = c.lookup((1, 0)).unwrap();
    c.insert((2, 0), vec![4], 1);
    c.insert((3, 0), vec![5], 1); // evicts 2, not the pinned 1
    assert!(c.lookup((2, 0)).is_none());
    assert_eq!(c.lookup((1, 0)).as_deref(), Some(&vec![1, 2, 3]));
    assert_eq!((c.usage(), c.pinned_usage()), (2, 1));
    // Over capacity by pinned entries only: a new entry evicts what is unpinned.
    let held3 = c.lookup((3, 0)).unwrap();
    c.insert((4, 0), vec![6], 1);
    assert_eq!(c.usage(), 3, "both pinned entries and the new one");
    drop((held, held3));
    assert_eq!(c.pinned_usage(), 0);
    c.insert((5, 0), vec![7], 1);
    assert_eq!(c.usage(), 2);
    // Strict: an insert that cannot make room past pinned entries is refused.
    let s: LruCache<u8> = LruCache::new(2, 0, true);
    s.insert((1, 0), 1, 1);
    s.insert((2, 0), 2, 1);
    let (a, b) = (s.lookup((1, 0)).unwrap(), s.lookup((2, 0)).unwrap());
    s.insert((3, 0), 3, 1);
    assert!(s.lookup((3, 0)).is_none());
    assert_eq!(s.usage(), 2);
    drop((a, b));
    s.insert((3, 0), 3, 1);
    assert!(s.lookup((3, 0)).is_some());
}

#[test]
fn high_pri_pool_protects_index_and_filter_blocks() {
    // Capacity 10, high pool 5: high-priority entries survive a scan of low-priority ones.
    let c: LruCache<u32> = LruCache::with_high_pri_pool(10, 0, false, 0.5);
    for i in 0..4 {
        c.insert_with_priority((100 + i, 0), 0, 1, Priority::High);
    }
    for i in 0..100 {
        c.insert((i, 0), 0, 1);
    }
    for i in 0..4 {
        assert!(c.lookup((100 + i, 0)).is_some(), "high-pri {i} was evicted by a scan");
    }
    assert_eq!(c.usage(), 10);
    // The pool is capped: 8 more high-priority entries push the oldest high ones to the low
    // list, where they are evicted first.
    for i in 0..8 {
        c.insert_with_priority((200 + i, 0), 0, 1, Priority::High);
    }
    assert!(c.high_pri_pool_usage() <= 5, "pool {}", c.high_pri_pool_usage());
    assert_eq!(c.usage(), 10);
    assert!(c.lookup((207, 0)).is_some());
    assert!(c.lookup((100, 0)).is_none(), "the oldest high-pri entry aged out");
    // Without a pool (ratio 0) the same scan evicts them: plain LRU.
    let plain: LruCache<u32> = LruCache::new(10, 0, false);
    for i in 0..4 {
        plain.insert_with_priority((100 + i, 0), 0, 1, Priority::High);
    }
    for i in 0..100 {
        plain.insert((i, 0), 0, 1);
    }
    assert!(plain.lookup((100, 0)).is_none());
}

#[test]
fn hit_entries_move_to_the_high_pool() {
    // RocksDB's LRU_Insert: an entry hit once goes to the high-priority pool.
    let c: LruCache<u32> = LruCache::with_high_pri_pool(4, 0, false, 0.5);
    c.insert((1, 0), 1, 1);
    assert!(c.lookup((1, 0)).is_some());
    assert_eq!(c.high_pri_pool_usage(), 1);
    for i in 10..20 {
        c.insert((i, 0), 0, 1);
    }
    assert!(c.lookup((1, 0)).is_some(), "the hit entry outlived a scan");
}

#[test]
fn matches_a_model() {
    // One shard so the order is global; compare against a Vec-based LRU model.
    let c: LruCache<u64> = LruCache::new(50, 0, false);
    let mut model: Vec<(u64, usize)> = Vec::new(); // (key, charge), most recent last
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..20_000 {
        let k = rng.gen_range(0..40u64);
        match rng.gen_range(0..3) {
            0 => {
                let charge = rng.gen_range(1..8);
                c.insert((k, 0), k, charge);
                model.retain(|e| e.0 != k);
                model.push((k, charge));
                while model.iter().map(|e| e.1).sum::<usize>() > 50 && model.len() > 1 {
                    model.remove(0);
                }
            }
            1 => {
                let got = c.lookup((k, 0)).map(|v| *v);
                let pos = model.iter().position(|e| e.0 == k);
                assert_eq!(got, pos.map(|_| k));
                if let Some(p) = pos {
                    let e = model.remove(p);
                    model.push(e);
                }
            }
            _ => {
                c.erase((k, 0));
                model.retain(|e| e.0 != k);
            }
        }
        assert_eq!(c.usage(), model.iter().map(|e| e.1).sum::<usize>());
    }
}

#[test]
fn concurrent_hammering() {
    let c: Arc<LruCache<u64>> = Arc::new(LruCache::new(1000, 4, false));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                for _ in 0..50_000 {
                    let k = rng.gen_range(0..2000u64);
                    if rng.gen_bool(0.5) {
                        c.insert((k, k), k, rng.gen_range(1..10));
                    } else if let Some(v) = c.lookup((k, k)) {
                        assert_eq!(*v, k);
                    }
                    if k % 97 == 0 {
                        c.erase((k, k));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Each of 16 shards holds at most ceil(1000/16) = 63 (an entry is at most 9).
    assert!(c.usage() <= 16 * 63, "usage {}", c.usage());
}

#[test]
fn full_metadata_charge_adds_the_node() {
    let c: LruCache<u64> = LruCache::new(1 << 20, 0, false)
        .with_metadata_charge_policy(MetadataChargePolicy::FullCharge);
    let meta = c.metadata;
    // Node (key, value, charge, links, pool, flags), Arc counts, map slot.
    assert!(meta >= 64 + 16 + 24, "{meta}");
    assert!(c.insert((1, 0), 1, 100));
    assert_eq!(c.usage(), 100 + meta);
    c.erase((1, 0));
    assert_eq!(c.usage(), 0);
    // Without the policy the charge is the caller's.
    let plain: LruCache<u64> = LruCache::new(1 << 20, 0, false);
    assert!(plain.insert((1, 0), 1, 100));
    assert_eq!(plain.usage(), 100);
}

/// Two handles on one entry released at once while the shard is over capacity: whichever goes
/// second frees the entry (while the shard is over, each release gives its reference up under
/// the shard's lock, so the second sees it holds the last one).
#[test]
fn racing_last_releases_over_capacity_free_the_entry() {
    for round in 0..500 {
        let c: LruCache<u32> = LruCache::new(1, 0, false);
        let a = c.insert_and_hold((1, 0), 1, 1, Priority::Low).expect("not strict");
        let b = c.lookup((1, 0)).expect("present");
        // Key 1 is pinned: key 2 goes in over capacity.
        c.insert((2, 0), 2, 1);
        assert_eq!(c.usage(), 2);
        let go = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                go.wait();
                drop(a);
            });
            go.wait();
            drop(b);
        });
        assert_eq!(c.usage(), 1, "round {round}: the last release freed key 1");
        assert!(c.lookup((1, 0)).is_none() && c.lookup((2, 0)).is_some());
    }
}
