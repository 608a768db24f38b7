//! Unit tests of the automatic clock cache: growth, lookups in older generations, erase and
//! replace across generations, draining and retiring, and exact accounting. The
//! multi-threaded stress test is in `tests/clock_cache.rs`.

use std::sync::Arc;

use super::*;

fn one_shard(capacity: usize, strict: bool) -> AutoHyperClockCache<u64> {
    AutoHyperClockCache::new(capacity, 0, strict)
}

#[test]
fn grows_and_finds_entries_in_old_generations() {
    let c = one_shard(1 << 30, false);
    assert_eq!(c.table_address_count(), 16);
    for i in 0..1000u64 {
        c.insert((i, 1), i, 1000);
    }
    // The newest table has 1024 slots; the entries placed before it are in the older ones.
    assert!(c.table_address_count() >= 2000, "slots {}", c.table_address_count());
    assert!(c.max_generations() > 1, "no eviction yet: older tables are still there");
    assert_eq!((c.len(), c.usage()), (1000, 1_000_000), "nothing evicted below capacity");
    for i in 0..1000u64 {
        assert_eq!(c.lookup((i, 1)).as_deref(), Some(&i), "key {i}");
    }
    assert!(c.lookup((5000, 1)).is_none());
}

#[test]
fn replace_and_erase_reach_every_generation() {
    let c = one_shard(1 << 30, false);
    c.insert((1, 1), 1, 10); // in the first (16-slot) table
    for i in 100..300u64 {
        c.insert((i, 0), i, 10);
    }
    assert!(c.max_generations() > 1);
    c.insert((1, 1), 2, 30); // goes into the newest table, hides the old copy
    assert_eq!(c.lookup((1, 1)).as_deref(), Some(&2));
    assert_eq!((c.len(), c.usage()), (201, 200 * 10 + 30));
    c.erase((1, 1));
    assert!(c.lookup((1, 1)).is_none());
    c.erase((100, 0)); // in an old table
    assert!(c.lookup((100, 0)).is_none());
    assert_eq!((c.len(), c.usage()), (199, 199 * 10));
    for i in 101..300u64 {
        c.erase((i, 0));
    }
    assert_eq!((c.len(), c.usage()), (0, 0));
}

#[test]
fn eviction_drains_and_retires_old_generations() {
    // 100 KB of 1 KB entries: grows while filling, then evicts; the old tables drain.
    let c = one_shard(100_000, false);
    for i in 0..100u64 {
        c.insert((i, 0), i, 1000);
    }
    assert!(c.max_generations() > 1);
    for i in 100..2000u64 {
        c.insert((i, 0), i, 1000);
        assert!(c.usage() <= 100_000, "usage {} at {i}", c.usage());
    }
    assert_eq!(c.max_generations(), 1, "drained tables are retired");
    assert_eq!(c.usage(), c.len() * 1000);
    // The survivor table is sized for about 100 entries, not for the 16 it started with.
    assert!((128..=256).contains(&c.table_address_count()), "{}", c.table_address_count());
}

#[test]
fn held_entries_survive_draining_and_accounting_returns_to_zero() {
    let c: AutoHyperClockCache<Vec<u8>> = AutoHyperClockCache::new(50_000, 0, false);
    c.insert((0, 0), vec![7; 3], 1000);
    let held = c.lookup((0, 0)).expect("just inserted");
    for i in 1..500u64 {
        c.insert((i, 0), vec![1], 1000);
    }
    assert_eq!(c.lookup((0, 0)).as_deref(), Some(&vec![7; 3]), "pinned entries stay");
    assert_eq!(c.pinned_usage(), 1000);
    drop(held);
    assert_eq!(c.pinned_usage(), 0);
    for i in 0..500u64 {
        c.erase((i, 0));
    }
    assert_eq!((c.len(), c.usage()), (0, 0));
}

#[test]
fn strict_limit_refuses_what_cannot_fit() {
    let c = one_shard(10_000, true);
    let held: Vec<_> = (0..10u64)
        .map(|i| {
            c.insert((i, 0), i, 1000);
            c.lookup((i, 0)).expect("fits")
        })
        .collect();
    c.insert((99, 0), 99, 1000);
    assert!(c.lookup((99, 0)).is_none(), "every entry pinned: refused");
    assert_eq!(c.usage(), 10_000);
    drop(held);
    c.insert((99, 0), 99, 1000);
    assert_eq!(c.lookup((99, 0)).as_deref(), Some(&99));
    // The clock frees whole steps of slots, so it may evict more than the one entry needed.
    assert!(c.usage() <= 10_000 && c.usage() == c.len() * 1000, "{}", c.usage());
}

#[test]
fn small_entries_stop_growth_at_the_minimum_average_charge() {
    // 45 KB shard: at most 45_000 / 450 / 0.7 = 143 entries' worth, so 256 slots.
    let c = one_shard(45_000, false);
    for i in 0..5000u64 {
        c.insert((i, 0), i, 1);
    }
    let newest_max = 256;
    assert!(c.table_address_count() < 2 * newest_max, "{}", c.table_address_count());
    assert!(c.len() <= newest_max, "evicts by occupancy: {}", c.len());
    assert_eq!(c.usage(), c.len());
}

#[test]
fn dropping_the_cache_frees_every_value() {
    let v = Arc::new(5u64);
    let c: AutoHyperClockCache<Arc<u64>> = AutoHyperClockCache::new(1 << 20, 0, false);
    for i in 0..300u64 {
        c.insert((i, 0), Arc::clone(&v), 10);
    }
    assert_eq!(Arc::strong_count(&v), 301);
    drop(c);
    assert_eq!(Arc::strong_count(&v), 1);
}

#[test]
fn settles_on_one_table_sized_like_the_fixed_one() {
    // 4 MiB of 1 KiB entries, random keys: 4096 entries need 8192 slots at the 84% limit (the
    // fixed table sized with `estimated_entry_charge = 1024` also has 8192). The smaller
    // tables it grew through drain and are retired.
    let c = one_shard(4 << 20, false);
    let mut x = 1u64;
    for i in 0..20_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        c.insert(((x >> 33) % 100_000, 0), i, 1024);
    }
    let gens = c.shards[0].generations_for_test();
    assert_eq!((gens.len(), gens[0].0), (1, 8192), "{gens:?}");
    // The clock frees whole steps of slots, so a few bytes may stay unused.
    assert!((4090..=4096).contains(&gens[0].1), "{gens:?}");
    assert_eq!(c.usage(), c.len() * 1024);
}

#[test]
fn full_metadata_charge_adds_the_slot() {
    let slot = std::mem::size_of::<crate::cache::clock::table::Slot<u64>>();
    let c = one_shard(1 << 20, false).with_metadata_charge_policy(MetadataChargePolicy::FullCharge);
    assert!(c.insert((1, 0), 1, 500));
    let h = c.insert_and_hold((2, 0), 2, 500, Priority::Low).ok().unwrap();
    assert_eq!(c.usage(), 2 * (500 + slot));
    drop(h);
    c.erase((1, 0));
    c.erase((2, 0));
    assert_eq!(c.usage(), 0);
}
