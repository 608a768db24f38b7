//! `talus cache_bench`: RocksDB 10's `cache_bench` (cache/cache_bench_tool.cc) for the Talus
//! block caches: the same flags with the same defaults, the same workload and the same
//! summary lines, so that one command line runs on both:
//!
//! ```text
//! talus cache_bench --cache_type=hyper_clock_cache --threads=2 --ops_per_thread=1000000 --seed=1
//! Complete in 0.512 s; Rough parallel ops/sec = 3906250
//! Thread ops/sec = 1953125
//! ```
//!
//! Flags (RocksDB 10's defaults): `--cache_type=lru_cache|hyper_clock_cache|
//! fixed_hyper_clock_cache|auto_hyper_clock_cache`, `--cache_size=1073741824`,
//! `--num_shard_bits=-1` (automatic: capacity / 512 KiB shards for the LRU, / 32 MiB for the
//! clock caches, at most 64), `--threads=16`, `--ops_per_thread=2000000`, `--value_bytes=8192`,
//! `--value_bytes_estimate=0`, `--resident_ratio=0.25`, `--skew=5`, `--degenerate_hash_bits=0`,
//! `--populate_cache=true`, `--pinned_ratio=0.25`, `--lookup_insert_percent=82`,
//! `--insert_percent=2`, `--blind_insert_percent=5`, `--lookup_percent=10`,
//! `--erase_percent=1`, `--lean=false`, `--histograms=true`, `--seed=0` (0: the process id, as
//! RocksDB). Talus only: `--skewed` (a log-uniform key draw; RocksDB 10.4.2 has no such flag).
//!
//! The cache types resolve as RocksDB 10's: `hyper_clock_cache` and `fixed_hyper_clock_cache`
//! are the fixed [`HyperClockCache`] with `estimated_entry_charge = value_bytes_estimate` (or
//! `value_bytes` when that is 0); `auto_hyper_clock_cache` is the growing
//! [`AutoHyperClockCache`], its `min_avg_entry_charge` set by `value_bytes_estimate` when > 0.
//!
//! Each thread runs `ops_per_thread` operations: keys drawn as RocksDB does (the minimum of
//! `skew + 1` uniform draws scaled to `max_key = cache_size / resident_ratio / value_bytes`),
//! the operation by the percentages; it keeps the handles of its lookups and inserts in a
//! queue of `cache_size * pinned_ratio / value_bytes / threads` and releases the oldest beyond
//! that (RocksDB's pinned handles). A hit hashes the value (unless `--lean`); an insert
//! allocates and fills `value_bytes`. Population (before the timed run) inserts absent keys
//! until the entry count stops growing, as RocksDB 10. The inserts follow each RocksDB cache's
//! rule for a key already present: the clock caches keep the present entry
//! ([`Cache::insert_if_absent`], RocksDB's `BaseClockTable::Insert`), the LRU replaces it.
//!
//! Differences: each op is timed with `Instant` (RocksDB: `StopWatchNano`); keys are `(k, 0)`
//! pairs (RocksDB: 16 bytes hashed). The random generator is RocksDB's (`mt19937_64`, see
//! `workload::Rng`), so keys, operations and value bytes cost both tools the same draws.
//!
//! The flags are parsed in `flags.rs`; keys, operations and values are drawn in `workload.rs`.

mod flags;
mod workload;

use std::collections::VecDeque;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use talus::cache::{
    AutoHyperClockCache, Cache, CacheHandle, HyperClockCache, LruCache, MetadataChargePolicy,
    Priority,
};

use crate::db_bench::histogram::Histogram;
use crate::options::Parsed;
use flags::{parse, Flags, Kind, SPEC};
use workload::{hash_value, Op, Rng, Workload};

type Value = Vec<u8>;

/// Runs `cache_bench`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let mut p = Parsed::parse(args);
    if p.flag("help") {
        println!(
            "usage: talus cache_bench [--{}=N ...] [--skewed] [--populate_cache=false] [--lean]",
            SPEC.values.join("=N] [--")
        );
        return 0;
    }
    let flags = match p.check(&SPEC).and_then(|()| parse(&p)) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cache_bench: {e}");
            return 1;
        }
    };
    bench(&flags);
    0
}

/// RocksDB's `GetDefaultCacheShardBits`: one shard per `min_shard_size` bytes, at most 64.
fn default_shard_bits(capacity: u64, min_shard_size: u64) -> u32 {
    let mut shards = capacity / min_shard_size;
    let mut bits = 0;
    while shards > 1 && bits < 6 {
        shards >>= 1;
        bits += 1;
    }
    bits
}

/// The cache under test, with the counts cache_bench prints.
enum Built {
    Lru(Arc<LruCache<Value>>),
    Fixed(Arc<HyperClockCache<Value>>),
    Auto(Arc<AutoHyperClockCache<Value>>),
}

impl Built {
    fn new(f: &Flags) -> Built {
        let size = f.cache_size as usize;
        // RocksDB's default `metadata_charge_policy`: entries are charged their slot or node.
        let full = MetadataChargePolicy::FullCharge;
        let clock_bits = f.num_shard_bits.unwrap_or(default_shard_bits(f.cache_size, 32 << 20));
        match f.kind {
            Kind::Lru => {
                let bits = f.num_shard_bits.unwrap_or(default_shard_bits(f.cache_size, 512 << 10));
                // RocksDB's cache_bench: high_pri_pool_ratio 0.5.
                let lru = LruCache::with_high_pri_pool(size, bits, false, 0.5);
                Built::Lru(Arc::new(lru.with_metadata_charge_policy(full)))
            }
            Kind::FixedClock => {
                let est = match f.value_bytes_estimate {
                    0 => f.value_bytes,
                    e => e,
                };
                let est = est as usize;
                Built::Fixed(Arc::new(HyperClockCache::with_metadata_charge_policy(
                    size, est, clock_bits, false, full,
                )))
            }
            Kind::AutoClock => Built::Auto(Arc::new(
                match f.value_bytes_estimate {
                    0 => AutoHyperClockCache::new(size, clock_bits, false),
                    e => AutoHyperClockCache::with_min_avg_entry_charge(
                        size, clock_bits, false, e as usize,
                    ),
                }
                .with_metadata_charge_policy(full),
            )),
        }
    }

    fn cache(&self) -> Arc<dyn Cache<Value>> {
        match self {
            Built::Lru(c) => Arc::clone(c) as Arc<dyn Cache<Value>>,
            Built::Fixed(c) => Arc::clone(c) as Arc<dyn Cache<Value>>,
            Built::Auto(c) => Arc::clone(c) as Arc<dyn Cache<Value>>,
        }
    }

    /// Entries held (RocksDB's `GetOccupancyCount`).
    fn occupancy(&self) -> usize {
        match self {
            Built::Lru(c) => c.len(),
            Built::Fixed(c) => c.len(),
            Built::Auto(c) => c.len(),
        }
    }

    /// Slots (RocksDB's `GetTableAddressCount`; the LRU: its entries).
    fn table_address_count(&self) -> usize {
        match self {
            Built::Lru(c) => c.len(),
            Built::Fixed(c) => c.table_address_count(),
            Built::Auto(c) => c.table_address_count(),
        }
    }
}

struct ThreadResult {
    duration: Duration,
    hist: Histogram,
    result: u64,
    hits: u64,
    misses: u64,
    pinned: usize,
}

/// Inserts `key`, returning a handle to the new entry (or to the value, if the cache refused it
/// or, with `keep_present`, kept an entry already present: RocksDB's detached handle).
fn insert_and_hold(
    cache: &dyn Cache<Value>,
    w: &Workload,
    key: talus::cache::CacheKey,
    rng: &mut Rng,
    keep_present: bool,
) -> CacheHandle<Value> {
    let v = w.value(rng);
    let charge = w.flags.value_bytes as usize;
    let r = if keep_present {
        cache.insert_and_hold_if_absent(key, v, charge, Priority::Low)
    } else {
        cache.insert_and_hold(key, v, charge, Priority::Low)
    };
    r.unwrap_or_else(CacheHandle::new)
}

fn operate(cache: &dyn Cache<Value>, w: &Workload, tid: u32) -> ThreadResult {
    let f = &w.flags;
    let mut rng = Rng::new(f.seed.wrapping_add(1).wrapping_add(u64::from(tid)));
    let mut hist = Histogram::default();
    let (mut result, mut hits, mut misses) = (0u64, 0u64, 0u64);
    let total_pins =
        ((f.cache_size as f64 * f.pinned_ratio) / f64::from(f.value_bytes) + 0.999_999) as usize;
    let pin_count = (total_pins + tid as usize) / f.threads as usize;
    let mut pinned: VecDeque<CacheHandle<Value>> = VecDeque::with_capacity(pin_count + 1);
    // RocksDB's clock caches never replace: an `Insert` of a key already present keeps that
    // entry and frees (or detaches) the new value; its LRU cache replaces. The same rule per
    // cache type here. After a lookup that missed, a plain insert: the key was just absent (a
    // racing insert of it is resolved by replacement here, by a detached handle in RocksDB).
    let keep_present = f.kind != Kind::Lru;
    let start = Instant::now();
    for _ in 0..f.ops_per_thread {
        let key = w.key(&mut rng);
        let op = w.op(rng.next());
        let t = f.histograms.then(Instant::now);
        match op {
            Op::LookupInsert => match cache.lookup(key) {
                Some(h) => {
                    hits += 1;
                    if !f.lean {
                        result = result.wrapping_add(hash_value(&h));
                    }
                    pinned.push_back(h);
                }
                None => {
                    misses += 1;
                    pinned.push_back(insert_and_hold(cache, w, key, &mut rng, false));
                }
            },
            Op::Insert => pinned.push_back(insert_and_hold(cache, w, key, &mut rng, keep_present)),
            Op::BlindInsert => {
                let v = w.value(&mut rng);
                if keep_present {
                    cache.insert_if_absent(key, v, f.value_bytes as usize);
                } else {
                    cache.insert(key, v, f.value_bytes as usize);
                }
            }
            Op::Lookup => match cache.lookup(key) {
                Some(h) => {
                    hits += 1;
                    if !f.lean {
                        result = result.wrapping_add(hash_value(&h));
                    }
                    pinned.push_back(h);
                }
                None => misses += 1,
            },
            Op::Erase => cache.erase(key),
        }
        if let Some(t) = t {
            hist.add(t.elapsed().as_nanos() as u64);
        }
        while pinned.len() > pin_count {
            pinned.pop_front();
        }
    }
    let still_pinned = pinned.len();
    drop(pinned);
    ThreadResult { duration: start.elapsed(), hist, result, hits, misses, pinned: still_pinned }
}

/// RocksDB 10's population: insert absent keys until the entry count stops growing (100
/// inserts without a new maximum) or absent keys get hard to find (100 present in a row).
fn populate(built: &Built, cache: &dyn Cache<Value>, w: &Workload) {
    let mut rng = Rng::new(w.flags.seed);
    let (mut max_occ, mut since_max, mut since_absent) = (0usize, 0usize, 0usize);
    while since_max < 100 && since_absent < 100 {
        let key = w.key(&mut rng);
        if cache.lookup(key).is_some() {
            since_absent += 1;
            continue;
        }
        since_absent = 0;
        cache.insert(key, w.value(&mut rng), w.flags.value_bytes as usize);
        let occ = built.occupancy();
        if occ > max_occ {
            max_occ = occ;
            since_max = 0;
        } else {
            since_max += 1;
        }
    }
    println!(
        "Population complete ({max_occ} entries, {} average charge)",
        w.flags.cache_size as f64 / max_occ.max(1) as f64
    );
}

fn bench(f: &Flags) {
    let built = Built::new(f);
    let cache = built.cache();
    let w = Arc::new(Workload::new(f));
    if f.populate_cache {
        populate(&built, cache.as_ref(), &w);
    }
    print_env(f, &w, cache.name(), &built);

    let barrier = Arc::new(Barrier::new(f.threads as usize + 1));
    let workers: Vec<_> = (0..f.threads)
        .map(|tid| {
            let (cache, w, barrier) = (Arc::clone(&cache), Arc::clone(&w), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait(); // all threads ready
                barrier.wait(); // start time taken
                operate(cache.as_ref(), &w, tid)
            })
        })
        .collect();
    // As RocksDB: wait until every thread is ready, take the start time, then release them.
    barrier.wait();
    let start = Instant::now();
    barrier.wait();
    let results: Vec<ThreadResult> =
        workers.into_iter().map(|h| h.join().expect("cache_bench thread panicked")).collect();
    let elapsed = start.elapsed().as_secs_f64();
    report(f, &built, cache.as_ref(), &results, elapsed);
}

fn report(
    f: &Flags,
    built: &Built,
    cache: &dyn Cache<Value>,
    results: &[ThreadResult],
    elapsed: f64,
) {
    let total_ops = f64::from(f.threads) * f.ops_per_thread as f64;
    println!(
        "Complete in {elapsed:.3} s; Rough parallel ops/sec = {}",
        (total_ops / elapsed) as u64
    );
    let thread_secs: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
    println!("Thread ops/sec = {}", (total_ops / thread_secs) as u64);
    let (hits, misses) = results.iter().fold((0, 0), |(h, m), r| (h + r.hits, m + r.misses));
    println!("Lookup hit ratio: {}", hits as f64 / (hits + misses).max(1) as f64);
    let (occ, slots) = (built.occupancy(), built.table_address_count());
    println!("Final load factor: {} ({occ} / {slots})", occ as f64 / slots.max(1) as f64);
    println!("Final pinned count: {}", results.iter().map(|r| r.pinned).sum::<usize>());

    let mut hist = Histogram::default();
    let mut sink = 0u64;
    for r in results {
        hist.merge(&r.hist);
        sink = sink.wrapping_add(r.result);
    }
    if let Built::Auto(auto) = built {
        println!("Auto table          : at most {} generations per shard", auto.max_generations());
    }
    if f.histograms {
        // RocksDB's cache_bench prints its HistogramImpl the same way.
        println!("\nOperation latency (ns):");
        print!("{}", hist.to_rocksdb_string());
    }
    println!(
        "\nCache usage: {} of {} bytes (checksum {:x})",
        cache.usage(),
        cache.capacity(),
        sink & 0xff
    );
}

fn print_env(f: &Flags, w: &Workload, name: &str, built: &Built) {
    println!("----------------------------");
    println!("Talus cache_bench   : {}", env!("CARGO_PKG_VERSION"));
    if cfg!(debug_assertions) {
        println!("WARNING: Assertions are enabled; benchmarks unnecessarily slow");
    }
    let bits = match built {
        Built::Lru(_) => f.num_shard_bits.unwrap_or(default_shard_bits(f.cache_size, 512 << 10)),
        _ => f.num_shard_bits.unwrap_or(default_shard_bits(f.cache_size, 32 << 20)),
    };
    println!(
        "Cache type          : {}\nCache impl name     : {name}\nNumber of threads   : {}\n\
         Ops per thread      : {}\nCache size          : {} bytes\nNum shard bits      : {bits}\n\
         Max key             : {}\nResident ratio      : {}\nSkew degree         : {}\n\
         Populate cache      : {}\nLookup+Insert pct   : {}%\nInsert percentage   : {}%\n\
         Lookup percentage   : {}%\nErase percentage    : {}%\nSeed                : {}",
        f.cache_type,
        f.threads,
        f.ops_per_thread,
        f.cache_size,
        w.max_key,
        f.resident_ratio,
        f.skew,
        u8::from(f.populate_cache),
        f.lookup_insert_percent,
        f.insert_percent,
        f.lookup_percent,
        f.erase_percent,
        f.seed
    );
    println!("----------------------------");
}

#[cfg(test)]
mod tests;
