//! Stress tests of `HyperClockCache`, its growing variant `AutoHyperClockCache` (tables grow
//! and drain while other threads insert, look up and erase) and, for comparison, `LruCache`,
//! from many threads:
//! inserts, lookups, erases and replacements under eviction pressure.
//!
//! Checks:
//! * every value returned is intact (its key and a magic word match) for as long as the caller
//!   holds it, even after the cache erased or replaced it: each thread keeps a ring of returned
//!   handles (and of handles to values it inserted) and re-checks them before letting go;
//! * no value is dropped twice or leaked: a global count of values created and dropped must match
//!   exactly once the cache is empty (after erasing everything, and again after dropping it);
//! * usage returns to zero after erasing every key;
//! * entries held outside the cache (pinned) are never evicted under pressure, and the pinned
//!   usage drops to zero with the last handle;
//! * usage stays within capacity: exactly with `strict_capacity_limit`, else within a slack of one
//!   in-flight insert per thread and shard (`threads * max_charge * shards`), sampled by a monitor thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use talus::cache::{
    AutoHyperClockCache, Cache, CacheHandle, CacheKey, HyperClockCache, LruCache, Priority,
};

const ALIVE: u64 = 0xA11C_E5A1_1CE5_A11C;
const DEAD: u64 = 0xDEAD_DEAD_DEAD_DEAD;

/// Counts creations and drops per test (tests run in parallel, so each test has its own).
#[derive(Default)]
struct Counters {
    created: AtomicUsize,
    dropped: AtomicUsize,
}

struct Tracked {
    key: CacheKey,
    magic: u64,
    counters: Arc<Counters>,
}

impl Tracked {
    fn new(key: CacheKey, counters: &Arc<Counters>) -> Tracked {
        counters.created.fetch_add(1, Ordering::SeqCst);
        Tracked { key, magic: ALIVE, counters: Arc::clone(counters) }
    }

    fn check(&self, key: CacheKey) {
        assert_eq!(self.magic, ALIVE, "value for {key:?} used after drop");
        assert_eq!(self.key, key, "lookup returned another key's value");
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        assert_eq!(self.magic, ALIVE, "value for {:?} dropped twice", self.key);
        self.magic = DEAD;
        self.counters.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

struct Config {
    threads: u64,
    ops: u64,
    keys: u64,
    max_charge: usize,
    capacity: usize,
    strict: bool,
    /// Shards of the cache: the monitor sums shards read at different instants, so a thread's
    /// one in-flight insert can be seen once per shard.
    shards: usize,
}

fn hammer(cache: Arc<dyn Cache<Tracked>>, cfg: &Config) {
    let counters = Arc::new(Counters::default());
    let done = Arc::new(AtomicBool::new(false));
    let max_seen = Arc::new(AtomicUsize::new(0));
    let monitor = {
        let (cache, done, max_seen) =
            (Arc::clone(&cache), Arc::clone(&done), Arc::clone(&max_seen));
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                max_seen.fetch_max(cache.usage(), Ordering::SeqCst);
                std::thread::yield_now();
            }
        })
    };
    let workers: Vec<_> = (0..cfg.threads)
        .map(|t| {
            let (cache, counters) = (Arc::clone(&cache), Arc::clone(&counters));
            let (ops, keys, max_charge) = (cfg.ops, cfg.keys, cfg.max_charge);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                let mut held: Vec<(CacheKey, CacheHandle<Tracked>)> = Vec::new();
                let mut hits = 0u64;
                for i in 0..ops {
                    // Skewed keys: a hot set gets most of the traffic.
                    let k = if rng.gen_bool(0.7) {
                        rng.gen_range(0..keys / 16)
                    } else {
                        rng.gen_range(0..keys)
                    };
                    let key = (k % 7, k);
                    match rng.gen_range(0..100) {
                        0..=59 => match cache.lookup(key) {
                            Some(v) => {
                                v.check(key);
                                hits += 1;
                                if held.len() < 32 {
                                    held.push((key, v));
                                } else {
                                    let slot = (i % 32) as usize;
                                    let (old_key, old) =
                                        std::mem::replace(&mut held[slot], (key, v));
                                    old.check(old_key);
                                }
                            }
                            None => {
                                let charge = rng.gen_range(1..=max_charge);
                                cache.insert(key, Tracked::new(key, &counters), charge);
                            }
                        },
                        60..=89 => {
                            let charge = rng.gen_range(1..=max_charge);
                            let v = Tracked::new(key, &counters);
                            if rng.gen_bool(0.1) {
                                // Keep a handle to the inserted value (the value itself if
                                // the cache refused it).
                                let v = cache
                                    .insert_and_hold(key, v, charge, Priority::Low)
                                    .unwrap_or_else(CacheHandle::new);
                                held.push((key, v));
                                if held.len() > 64 {
                                    let (old_key, old) = held.swap_remove(0);
                                    old.check(old_key);
                                }
                            } else {
                                cache.insert(key, v, charge);
                            }
                        }
                        _ => cache.erase(key),
                    }
                }
                for (key, v) in &held {
                    v.check(*key);
                }
                hits
            })
        })
        .collect();
    let hits: u64 = workers.into_iter().map(|w| w.join().expect("worker panicked")).sum();
    done.store(true, Ordering::SeqCst);
    monitor.join().expect("monitor panicked");

    assert!(hits > 0, "the workload never hit");
    let max_seen = max_seen.load(Ordering::SeqCst);
    let limit = if cfg.strict {
        cfg.capacity
    } else {
        cfg.capacity + cfg.threads as usize * cfg.max_charge * cfg.shards
    };
    assert!(max_seen <= limit, "usage peaked at {max_seen}, limit {limit}");
    assert!(cache.usage() <= limit);

    for k in 0..cfg.keys {
        cache.erase((k % 7, k));
    }
    assert_eq!(cache.usage(), 0, "usage after erasing every key");
    let (created, dropped) =
        (counters.created.load(Ordering::SeqCst), counters.dropped.load(Ordering::SeqCst));
    assert_eq!(created, dropped, "every value freed exactly once, none leaked");
    drop(cache);
    assert_eq!(counters.dropped.load(Ordering::SeqCst), created);
}

fn threads() -> u64 {
    8
}

#[test]
fn clock_cache_under_eviction_pressure() {
    let cfg = Config {
        threads: threads(),
        ops: 200_000,
        keys: 20_000,
        max_charge: 16,
        capacity: 16 * 1024,
        strict: false,
        shards: 4,
    };
    hammer(Arc::new(HyperClockCache::new(cfg.capacity, 8, 2, cfg.strict)), &cfg);
}

#[test]
fn clock_cache_strict_limit() {
    let cfg = Config {
        threads: threads(),
        ops: 200_000,
        keys: 20_000,
        max_charge: 16,
        capacity: 16 * 1024,
        strict: true,
        shards: 4,
    };
    hammer(Arc::new(HyperClockCache::new(cfg.capacity, 8, 2, cfg.strict)), &cfg);
}

#[test]
fn clock_cache_tiny_table_full_of_contention() {
    // One shard of 32 slots (27 usable): every operation contends on the same few words, the table is
    // always at its occupancy limit, and eviction often meets referenced entries.
    let cfg = Config {
        threads: threads(),
        ops: 100_000,
        keys: 256,
        max_charge: 4,
        capacity: 64,
        strict: false,
        shards: 1,
    };
    hammer(Arc::new(HyperClockCache::new(cfg.capacity, 4, 0, cfg.strict)), &cfg);
}

#[test]
fn clock_cache_without_eviction_pressure() {
    let cfg = Config {
        threads: threads(),
        ops: 100_000,
        keys: 2_000,
        max_charge: 16,
        capacity: 1 << 20,
        strict: false,
        shards: 8,
    };
    hammer(Arc::new(HyperClockCache::new(cfg.capacity, 16, 3, cfg.strict)), &cfg);
}

#[test]
fn auto_clock_cache_under_eviction_pressure() {
    // Starts at 16 slots per shard: grows while filling, then drains its old tables.
    let cfg = Config {
        threads: threads(),
        ops: 200_000,
        keys: 20_000,
        max_charge: 16,
        capacity: 16 * 1024,
        strict: false,
        shards: 4,
    };
    hammer(Arc::new(AutoHyperClockCache::new(cfg.capacity, 2, cfg.strict)), &cfg);
}

#[test]
fn auto_clock_cache_strict_limit() {
    let cfg = Config {
        threads: threads(),
        ops: 200_000,
        keys: 20_000,
        max_charge: 16,
        capacity: 16 * 1024,
        strict: true,
        shards: 4,
    };
    hammer(Arc::new(AutoHyperClockCache::new(cfg.capacity, 2, cfg.strict)), &cfg);
}

#[test]
fn auto_clock_cache_grows_under_concurrent_inserts() {
    // No eviction pressure: 20k keys of at most 512 bytes fit in 64 MiB, so every shard grows
    // from 16 slots through many generations while 8 threads insert, look up and erase.
    let cfg = Config {
        threads: threads(),
        ops: 100_000,
        keys: 20_000,
        max_charge: 512,
        capacity: 64 << 20,
        strict: false,
        shards: 2,
    };
    let cache = Arc::new(AutoHyperClockCache::new(cfg.capacity, 1, cfg.strict));
    hammer(Arc::clone(&cache) as Arc<dyn Cache<Tracked>>, &cfg);
    assert!(cache.table_address_count() >= 4096, "grew: {}", cache.table_address_count());
}

/// Charges shrink over time (4096 down to 32 bytes), so the projected entry count keeps rising
/// and every shard grows several times, with older tables draining, while 8 threads insert,
/// replace, look up and erase. Each thread owns its keys, so after it replaces a key a lookup
/// must return the new value or nothing, never an older copy left in an older table.
#[test]
fn auto_clock_cache_replaces_across_generations_while_growing() {
    const OPS: u64 = 40_000;
    let counters = Arc::new(Counters::default());
    let cache = Arc::new(AutoHyperClockCache::new(8 << 20, 1, false));
    let workers: Vec<_> = (0..threads())
        .map(|t| {
            let (cache, counters) = (Arc::clone(&cache), Arc::clone(&counters));
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(500 + t);
                for i in 0..OPS {
                    let charge = 4096usize >> (i * 8 / OPS);
                    let key = (t, i);
                    cache.insert(key, Tracked::new(key, &counters), charge);
                    let old = (t, rng.gen_range(0..=i));
                    if let Some(v) = cache.lookup(old) {
                        v.check(old);
                    }
                    // Replace an earlier key: no older copy may be found afterwards.
                    let again = (t, i / 2);
                    let newer = Tracked::new(again, &counters);
                    let newer = cache
                        .insert_and_hold(again, newer, charge, Priority::Low)
                        .unwrap_or_else(CacheHandle::new);
                    if let Some(v) = cache.lookup(again) {
                        assert!(
                            CacheHandle::ptr_eq(&v, &newer),
                            "an older copy of {again:?} was found"
                        );
                    }
                    if i % 16 == 0 {
                        cache.erase((t, rng.gen_range(0..=i)));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked");
    }
    assert!(cache.table_address_count() >= 2 * 4096, "grew: {}", cache.table_address_count());
    for t in 0..threads() {
        for i in 0..OPS {
            cache.erase((t, i));
        }
    }
    assert_eq!((cache.usage(), cache.len()), (0, 0), "accounting after erasing every key");
    let created = counters.created.load(Ordering::SeqCst);
    assert_eq!(counters.dropped.load(Ordering::SeqCst), created, "every value freed once");
    drop(cache);
    assert_eq!(counters.dropped.load(Ordering::SeqCst), created);
}

#[test]
fn lru_cache_same_workload() {
    let cfg = Config {
        threads: threads(),
        ops: 100_000,
        keys: 20_000,
        max_charge: 16,
        capacity: 16 * 1024,
        strict: false,
        shards: 1,
    };
    // The LRU evicts per shard, so its slack is per shard: give it one shard.
    hammer(Arc::new(LruCache::new(cfg.capacity, 0, cfg.strict)), &cfg);
}

/// Entries held outside the cache are pinned: under eviction pressure from 8 threads (inserts,
/// lookups, erases of other keys) every pinned entry stays findable and is the same value; the
/// pinned usage covers them; once every handle drops and everything is erased, usage is zero and
/// every value was freed exactly once.
fn pinned_entries_survive(cache: Arc<dyn Cache<Tracked>>, capacity: usize) {
    let counters = Arc::new(Counters::default());
    let threads = 8u64;
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (cache, counters) = (Arc::clone(&cache), Arc::clone(&counters));
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(100 + t);
                let pins: Vec<(CacheKey, CacheHandle<Tracked>)> = (0..8u64)
                    .map(|j| {
                        let key = (1_000_000 + t, j);
                        let v = Tracked::new(key, &counters);
                        let held = cache.insert_and_hold(key, v, 4, Priority::Low);
                        (key, held.unwrap_or_else(|_| panic!("pin {key:?} refused")))
                    })
                    .collect();
                for i in 0..40_000u64 {
                    let key = (t % 3, rng.gen_range(0..5_000u64));
                    match rng.gen_range(0..10) {
                        0..=5 => {
                            let v = Tracked::new(key, &counters);
                            cache.insert(key, v, rng.gen_range(1..=16));
                        }
                        6..=8 => {
                            if let Some(v) = cache.lookup(key) {
                                v.check(key);
                            }
                        }
                        _ => cache.erase(key),
                    }
                    if i % 1000 == 0 {
                        for (k, v) in &pins {
                            let got = cache.lookup(*k).expect("a pinned entry was evicted");
                            assert!(CacheHandle::ptr_eq(&got, v), "pinned entry replaced");
                        }
                    }
                }
                pins
            })
        })
        .collect();
    let pins: Vec<_> =
        workers.into_iter().flat_map(|w| w.join().expect("worker panicked")).collect();
    assert!(cache.pinned_usage() >= pins.len() * 4, "pinned usage {}", cache.pinned_usage());
    assert!(cache.usage() <= capacity + pins.len() * 4 + threads as usize * 16 * 4);
    drop(pins);
    assert_eq!(cache.pinned_usage(), 0, "no pins once every handle dropped");
    for t in 0..threads {
        for j in 0..8 {
            cache.erase((1_000_000 + t, j));
        }
    }
    for s in 0..3 {
        for k in 0..5_000 {
            cache.erase((s, k));
        }
    }
    assert_eq!(cache.usage(), 0);
    assert_eq!(counters.created.load(Ordering::SeqCst), counters.dropped.load(Ordering::SeqCst));
}

#[test]
fn clock_cache_pinned_entries_survive_eviction() {
    pinned_entries_survive(Arc::new(HyperClockCache::new(8 * 1024, 8, 2, false)), 8 * 1024);
}

#[test]
fn auto_clock_cache_pinned_entries_survive_eviction() {
    // The growing tables stop at `capacity / MIN_AVG_ENTRY_CHARGE` entries' worth of slots (16
    // per shard for 8 KiB, fewer than the 16 pins per shard). With 64 KiB: 64 slots per shard,
    // reached through two growths, so pins sit in old tables while those drain, and the slots
    // (not the bytes) are what evicts.
    let cache = AutoHyperClockCache::new(64 * 1024, 2, false);
    pinned_entries_survive(Arc::new(cache), 64 * 1024);
}

#[test]
fn lru_cache_pinned_entries_survive_eviction() {
    pinned_entries_survive(Arc::new(LruCache::new(8 * 1024, 2, false)), 8 * 1024);
}

/// The engine reads through the clock cache: a small cache (constant eviction) and a large one
/// must both return every value, from several reader threads, across flush and compaction;
/// with `estimated_entry_charge` 0 (the growing cache, the default) and 4096 (fixed).
#[test]
fn db_reads_through_clock_cache() {
    use talus::options::CacheType;
    use talus::{Db, Options};
    for (capacity, estimated_entry_charge) in [(16 << 10, 0), (8 << 20, 0), (16 << 10, 4096)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            block_cache_capacity: capacity,
            block_cache_num_shard_bits: 1,
            estimated_entry_charge,
            cache_type: CacheType::parse("hyper_clock_cache").expect("known name"),
            ..Default::default()
        };
        let db = Arc::new(Db::open(dir.path(), opts).expect("open"));
        let key = |i: u32| format!("key{:06}", i * 7919 % 5000);
        for i in 0..5000u32 {
            db.put(key(i), format!("value-{i}-{}", "x".repeat((i % 50) as usize))).expect("put");
        }
        db.flush().expect("flush");
        db.compact_range(None, None).expect("compact");
        let readers: Vec<_> = (0..4u32)
            .map(|t| {
                let db = Arc::clone(&db);
                std::thread::spawn(move || {
                    for round in 0..3u32 {
                        for i in (t..5000).step_by(3 + round as usize) {
                            let want = format!("value-{i}-{}", "x".repeat((i % 50) as usize));
                            let got = db.get(key(i)).expect("get");
                            assert_eq!(got.as_deref(), Some(want.as_bytes()), "key {}", key(i));
                        }
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().expect("reader panicked");
        }
        assert_eq!(db.get(b"absent").expect("get"), None);
    }
}
