//! Honest capacity (issue 36, item 5): a cache holds at most its capacity, plus what is pinned
//! (entries with a handle out), plus one entry per shard (an insert that found nothing else to
//! evict: everything referenced, or the entry alone larger than the room left). Once every
//! handle is dropped, nothing is pinned: the cache holds at most its capacity plus one entry
//! per shard. Released blocks must not stay charged above capacity until the next insert
//! (before: 16.7 MB held in a 14.4 MB LRU after a db_bench read burst).
//!
//! For each cache type (LRU, fixed and automatic hyper clock), a property test runs random
//! sequences of inserts (with and without a handle), lookups (keeping the handle), releases
//! and erases, one thread, checking the bound after every operation and after releasing all
//! handles; and a named regression test for the read burst.

use std::collections::VecDeque;

use proptest::prelude::*;
use talus::cache::{
    AutoHyperClockCache, Cache, CacheHandle, HyperClockCache, LruCache, MetadataChargePolicy,
    Priority,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lru,
    Fixed,
    Auto,
}

const KINDS: [Kind; 3] = [Kind::Lru, Kind::Fixed, Kind::Auto];
const MAX_CHARGE: usize = 40;

fn build(kind: Kind, capacity: usize, shard_bits: u32) -> Box<dyn Cache<u64>> {
    match kind {
        Kind::Lru => Box::new(LruCache::with_high_pri_pool(capacity, shard_bits, false, 0.5)),
        // Tables sized for entries of 8 bytes: room for more entries than the capacity holds,
        // so that bytes, not slots, bind (slots binding evicts below capacity anyway).
        Kind::Fixed => Box::new(HyperClockCache::new(capacity, 8, shard_bits, false)),
        Kind::Auto => {
            Box::new(AutoHyperClockCache::with_min_avg_entry_charge(capacity, shard_bits, false, 8))
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        key: u64,
        charge: usize,
    },
    InsertAndHold {
        key: u64,
        charge: usize,
    },
    Lookup {
        key: u64,
    },
    /// Drops the `i`-th oldest held handle (modulo how many are held).
    Release {
        i: usize,
    },
    Erase {
        key: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u64..24;
    let charge = 1usize..=MAX_CHARGE;
    prop_oneof![
        3 => (key.clone(), charge.clone()).prop_map(|(key, charge)| Op::Insert { key, charge }),
        2 => (key.clone(), charge).prop_map(|(key, charge)| Op::InsertAndHold { key, charge }),
        4 => key.clone().prop_map(|key| Op::Lookup { key }),
        4 => (0usize..64).prop_map(|i| Op::Release { i }),
        1 => key.prop_map(|key| Op::Erase { key }),
    ]
}

/// The bound: capacity (each shard's share rounded up), pinned bytes, one entry per shard.
fn check(cache: &dyn Cache<u64>, shards: usize, when: &str) {
    let per_shard = cache.capacity().div_ceil(shards);
    let (usage, pinned) = (cache.usage(), cache.pinned_usage());
    let bound = per_shard * shards + pinned + shards * MAX_CHARGE;
    assert!(
        usage <= bound,
        "{} {when}: usage {usage} > capacity {} + pinned {pinned} + {shards} x {MAX_CHARGE}",
        cache.name(),
        cache.capacity(),
    );
}

/// Runs `ops`, checking the bound after each, then drops every handle and checks that nothing
/// pinned is left to excuse an excess.
fn run(kind: Kind, capacity: usize, shard_bits: u32, ops: &[Op]) {
    let cache = build(kind, capacity, shard_bits);
    let shards = 1usize << shard_bits;
    let mut held: VecDeque<CacheHandle<u64>> = VecDeque::new();
    for (n, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { key, charge } => {
                cache.insert((key, 0), key, charge);
            }
            Op::InsertAndHold { key, charge } => {
                if let Ok(h) = cache.insert_and_hold((key, 0), key, charge, Priority::Low) {
                    held.push_back(h);
                }
            }
            Op::Lookup { key } => {
                if let Some(h) = cache.lookup((key, 0)) {
                    assert_eq!(*h, key);
                    held.push_back(h);
                }
            }
            Op::Release { i } => {
                if !held.is_empty() {
                    let i = i % held.len();
                    held.remove(i);
                }
            }
            Op::Erase { key } => cache.erase((key, 0)),
        }
        check(cache.as_ref(), shards, &format!("after op {n} ({op:?})"));
    }
    held.clear();
    assert_eq!(cache.pinned_usage(), 0);
    let per_shard = capacity.div_ceil(shards);
    assert!(
        cache.usage() <= per_shard * shards + shards * MAX_CHARGE,
        "{} after releasing every handle: usage {} > capacity {capacity} + {shards} x {MAX_CHARGE}",
        cache.name(),
        cache.usage(),
    );
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    // Shrunk failures become named tests below, not files.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn lru_never_holds_more_than_capacity_pinned_and_one_entry_per_shard(
        capacity in 10usize..400,
        shard_bits in 0u32..3,
        ops in prop::collection::vec(op(), 1..300),
    ) {
        run(Kind::Lru, capacity, shard_bits, &ops);
    }

    #[test]
    fn hyper_clock_never_holds_more_than_capacity_pinned_and_one_entry_per_shard(
        capacity in 10usize..400,
        shard_bits in 0u32..3,
        ops in prop::collection::vec(op(), 1..300),
    ) {
        run(Kind::Fixed, capacity, shard_bits, &ops);
    }

    #[test]
    fn auto_hyper_clock_never_holds_more_than_capacity_pinned_and_one_entry_per_shard(
        capacity in 10usize..400,
        shard_bits in 0u32..3,
        ops in prop::collection::vec(op(), 1..300),
    ) {
        run(Kind::Auto, capacity, shard_bits, &ops);
    }
}

/// Issue 13's note, in small: a read burst pins blocks while misses insert more, taking the
/// cache over capacity by the pinned blocks; once the reads are done (handles dropped) the
/// cache must be back within capacity, without waiting for another insert. Before item 5 every
/// type kept the released blocks: usage stayed at 1.4x capacity here. (Four misses: the
/// automatic clock cache sizes its table by bytes, 16 slots for ten entries of this charge,
/// and refuses a fifteenth entry when all fourteen it may hold are pinned.)
#[test]
fn released_read_burst_leaves_no_excess() {
    for kind in KINDS {
        let cache = build(kind, 1000, 0);
        // Fill to capacity, then pin it all (the burst's hits).
        for k in 0..10 {
            cache.insert((k, 0), k, 100);
        }
        let mut burst: Vec<_> = (0..10).filter_map(|k| cache.lookup((k, 0))).collect();
        assert_eq!(burst.len(), 10, "{kind:?}: all resident");
        // The burst's misses: nothing is evictable, so each goes in over capacity.
        for k in 10..14 {
            let held = cache.insert_and_hold((k, 0), k, 100, Priority::Low);
            burst.push(held.unwrap_or_else(|_| panic!("{kind:?}: key {k} refused, not strict")));
        }
        assert_eq!(cache.usage(), 1400, "{kind:?}: over capacity by the pinned blocks");
        drop(burst);
        assert!(cache.usage() <= 1000, "{kind:?}: {} held after the burst", cache.usage());
        // What is left is the most recently released (a later insert evicts as usual).
        cache.insert((99, 0), 99, 100);
        assert!(cache.usage() <= 1000, "{kind:?}: {}", cache.usage());
    }
}

/// The hint that a shard is over capacity does not outlive the excess: once usage is back
/// within capacity, releases leave their entries cached.
#[test]
fn releases_within_capacity_keep_their_entries() {
    for kind in KINDS {
        let cache = build(kind, 1000, 0);
        // 11 pinned entries of 100: over by one until an entry is let go.
        let pinned: Vec<_> = (0..11)
            .map(|k| cache.insert_and_hold((k, 0), k, 100, Priority::Low).expect("not strict"))
            .collect();
        assert_eq!(cache.usage(), 1100, "{kind:?}");
        let mut pinned = pinned.into_iter();
        drop(pinned.next());
        assert_eq!(cache.usage(), 1000, "{kind:?}: the first release freed its entry");
        drop(pinned);
        assert_eq!(cache.usage(), 1000, "{kind:?}: later ones kept theirs");
        let resident = (1..11).filter(|&k| cache.lookup((k, 0)).is_some()).count();
        assert_eq!(resident, 10, "{kind:?}: released within capacity, kept");
    }
}

/// Under RocksDB's default charge policy too (each entry also charged its node or slot).
#[test]
fn full_charge_read_burst_leaves_no_excess() {
    let full = MetadataChargePolicy::FullCharge;
    let caches: [Box<dyn Cache<u64>>; 3] = [
        Box::new(LruCache::new(10_000, 0, false).with_metadata_charge_policy(full)),
        Box::new(HyperClockCache::with_metadata_charge_policy(10_000, 8, 0, false, full)),
        Box::new(
            AutoHyperClockCache::with_min_avg_entry_charge(10_000, 0, false, 8)
                .with_metadata_charge_policy(full),
        ),
    ];
    for cache in caches {
        let burst: Vec<_> = (0..40)
            .map(|k| cache.insert_and_hold((k, 0), k, 500, Priority::Low).expect("not strict"))
            .collect();
        assert!(cache.usage() > 10_000, "{}: over while pinned", cache.name());
        drop(burst);
        assert!(cache.usage() <= 10_000, "{}: {} after the burst", cache.name(), cache.usage());
    }
}
