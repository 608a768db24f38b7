//! `talus cache_bench`: RocksDB's `cache_bench` (cache/cache_bench_tool.cc) for the Talus block
//! caches, same flags, same workload, same summary lines, so the two can be run side by side:
//!
//! ```text
//! talus cache_bench --cache_type=hyper_clock_cache --threads=2 --ops_per_thread=1000000
//! Complete in 0.512 s; Rough parallel ops/sec = 3906250
//! Thread ops/sec = 1953125
//! ```
//!
//! Flags (RocksDB's defaults): `--cache_type=lru_cache|hyper_clock_cache|clock_cache`,
//! `--cache_size=1073741824`, `--num_shard_bits=6`, `--threads=16`, `--ops_per_thread=2000000`,
//! `--value_bytes=8192`, `--resident_ratio=0.25`, `--skew=5`, `--skewed`, `--populate_cache`
//! (default true), `--lookup_insert_percent=87`, `--insert_percent=2`, `--lookup_percent=10`,
//! `--erase_percent=1`, `--lean`. Each thread runs `ops_per_thread` operations on keys drawn as
//! RocksDB does (the minimum of `skew + 1` uniform draws scaled to `max_key = cache_size /
//! resident_ratio / value_bytes`, or with `--skewed` a log-uniform draw), holding the last
//! looked-up or inserted value until its next lookup or insert (as cache_bench holds a handle).
//! A hit hashes the value (unless `--lean`); an insert allocates and fills `value_bytes`.
//!
//! Differences: each op is timed with `Instant` (RocksDB: `StopWatchNano`), and the random
//! generator is splitmix64 (RocksDB: `mt19937_64`).
//!
//! The clock cache: `--value_bytes_estimate=N` (RocksDB 8.x's flag) with N > 0 builds the fixed
//! [`HyperClockCache`] with `estimated_entry_charge = N` (RocksDB 7.8's cache_bench always uses
//! `value_bytes`, so pass `--value_bytes_estimate=<value_bytes>` to compare with it); the
//! default 0 builds the growing [`AutoHyperClockCache`], as RocksDB 8.x does.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use talus::cache::{AutoHyperClockCache, Cache, CacheKey, HyperClockCache, LruCache};
use talus::options::CacheType;

use crate::args::{Parsed, Spec};

const SPEC: Spec<'static> = Spec {
    values: &[
        "cache_type",
        "cache_size",
        "num_shard_bits",
        "threads",
        "ops_per_thread",
        "value_bytes",
        "value_bytes_estimate",
        "resident_ratio",
        "skew",
        "lookup_insert_percent",
        "insert_percent",
        "lookup_percent",
        "erase_percent",
    ],
    flags: &["skewed", "populate_cache", "lean", "help"],
};

/// The parsed flags.
#[derive(Debug, Clone)]
struct Flags {
    cache_type: CacheType,
    cache_size: u64,
    num_shard_bits: u32,
    threads: u32,
    ops_per_thread: u64,
    value_bytes: u32,
    value_bytes_estimate: u32,
    resident_ratio: f64,
    skew: u32,
    skewed: bool,
    populate_cache: bool,
    lean: bool,
    lookup_insert_percent: u64,
    insert_percent: u64,
    lookup_percent: u64,
    erase_percent: u64,
}

type Value = Vec<u8>;

/// Runs `cache_bench`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let p = Parsed::parse(args);
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

fn parse(p: &Parsed) -> Result<Flags, String> {
    let num = |name: &str, default: u64| -> Result<u64, String> {
        Ok(p.number(name)?.unwrap_or(default))
    };
    let small = |name: &str, default: u64| -> Result<u32, String> {
        u32::try_from(num(name, default)?).map_err(|_| format!("{name} is too large"))
    };
    let cache_type = match p.value("cache_type") {
        None => CacheType::LruCache,
        Some(s) => CacheType::parse(s).map_err(|e| e.to_string())?,
    };
    let resident_ratio = match p.value("resident_ratio") {
        None => 0.25,
        Some(v) => {
            v.parse::<f64>().map_err(|_| "resident_ratio has an invalid value".to_string())?
        }
    };
    let populate_cache = match p.value("populate_cache") {
        Some(v) => v == "true" || v == "1" || v == "yes",
        None => true,
    };
    let f = Flags {
        cache_type,
        cache_size: num("cache_size", 1 << 30)?,
        num_shard_bits: small("num_shard_bits", 6)?,
        threads: small("threads", 16)?,
        ops_per_thread: num("ops_per_thread", 2_000_000)?,
        value_bytes: small("value_bytes", 8192)?,
        value_bytes_estimate: small("value_bytes_estimate", 0)?,
        resident_ratio,
        skew: small("skew", 5)?,
        skewed: p.flag("skewed"),
        populate_cache,
        lean: p.flag("lean"),
        lookup_insert_percent: num("lookup_insert_percent", 87)?,
        insert_percent: num("insert_percent", 2)?,
        lookup_percent: num("lookup_percent", 10)?,
        erase_percent: num("erase_percent", 1)?,
    };
    let total = f.lookup_insert_percent + f.insert_percent + f.lookup_percent + f.erase_percent;
    if total != 100 {
        return Err("Percentages must add to 100.".to_string());
    }
    if f.value_bytes == 0 || f.threads == 0 || f.resident_ratio.is_nan() || f.resident_ratio <= 0.0
    {
        return Err("value_bytes, threads and resident_ratio must be positive".to_string());
    }
    if f.num_shard_bits > 20 {
        return Err("num_shard_bits must be at most 20".to_string());
    }
    Ok(f)
}

/// splitmix64: small, fast, good enough for key and op selection.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// The workload shared by all threads.
struct Workload {
    flags: Flags,
    max_key: u64,
    max_log: u32,
    // Cumulative thresholds in the space of a random u64, as RocksDB.
    lookup_insert: u64,
    insert: u64,
    lookup: u64,
}

impl Workload {
    fn new(flags: &Flags) -> Workload {
        let max_key =
            (flags.cache_size as f64 / flags.resident_ratio / f64::from(flags.value_bytes)) as u64;
        let mut max_log = 0;
        if flags.skewed {
            let mut m = max_key;
            while m > 1 {
                m >>= 1;
                max_log += 1;
            }
        }
        let hundredth = u64::MAX / 100;
        let lookup_insert = hundredth * flags.lookup_insert_percent;
        let insert = lookup_insert + hundredth * flags.insert_percent;
        let lookup = insert + hundredth * flags.lookup_percent;
        Workload { flags: flags.clone(), max_key, max_log, lookup_insert, insert, lookup }
    }

    fn key(&self, rng: &mut Rng) -> CacheKey {
        let k = if self.flags.skewed {
            let log = rng.uniform(u64::from(self.max_log) + 1);
            let k = rng.uniform(1u64 << log);
            if k > self.max_key {
                k - self.max_key
            } else {
                k
            }
        } else {
            let mut raw = rng.next();
            for _ in 0..self.flags.skew {
                raw = raw.min(rng.next());
            }
            ((u128::from(raw) * u128::from(self.max_key)) >> 64) as u64
        };
        (k, 0)
    }

    fn value(&self, rng: &mut Rng) -> Arc<Value> {
        let n = self.flags.value_bytes as usize;
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&rng.next().to_le_bytes());
        }
        v.truncate(n);
        Arc::new(v)
    }
}

/// A 4-lane xxh64-style hash of the value ("do something with the data", as RocksDB's
/// `NPHash64`), so that a hit costs a pass over the value in both tools.
fn hash_value(v: &[u8]) -> u64 {
    const P1: u64 = 0x9e37_79b1_85eb_ca87;
    const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let mut acc = [P1, P2, 0, P1.wrapping_neg()];
    let mut chunks = v.chunks_exact(32);
    for c in &mut chunks {
        for (lane, w) in acc.iter_mut().zip(c.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            *lane = lane.wrapping_add(u64::from_le_bytes(b).wrapping_mul(P2)).rotate_left(31);
            *lane = lane.wrapping_mul(P1);
        }
    }
    let mut h = acc.iter().fold(v.len() as u64, |h, a| (h ^ a).rotate_left(27).wrapping_mul(P1));
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(P1);
    }
    h
}

/// Latency histogram: buckets a quarter of a power of two wide.
struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram { buckets: vec![0; 64 * 4], count: 0, sum: 0, max: 0 }
    }

    fn bucket(ns: u64) -> usize {
        if ns < 4 {
            return ns as usize;
        }
        let log = 63 - ns.leading_zeros() as usize;
        let frac = ((ns >> (log - 2)) & 3) as usize;
        log * 4 + frac
    }

    /// The upper bound of bucket `i`.
    fn bound(i: usize) -> u64 {
        if i < 4 {
            return i as u64;
        }
        let (log, frac) = (i / 4, (i % 4) as u64);
        ((4 + frac + 1) << (log - 2)).saturating_sub(1)
    }

    fn add(&mut self, ns: u64) {
        if let Some(b) = self.buckets.get_mut(Self::bucket(ns)) {
            *b += 1;
        }
        self.count += 1;
        self.sum += u128::from(ns);
        self.max = self.max.max(ns);
    }

    fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }

    fn percentile(&self, p: f64) -> u64 {
        let want = (self.count as f64 * p / 100.0).ceil() as u64;
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want && n > 0 {
                return Self::bound(i).min(self.max);
            }
        }
        self.max
    }
}

struct ThreadResult {
    duration: Duration,
    hist: Histogram,
    result: u64,
}

fn operate(cache: &dyn Cache<Value>, w: &Workload, tid: u32) -> ThreadResult {
    let mut rng = Rng(1000 + u64::from(tid));
    let mut hist = Histogram::new();
    let mut result = 0u64;
    let mut handle: Option<Arc<Value>> = None;
    let value_bytes = w.flags.value_bytes as usize;
    let start = Instant::now();
    for _ in 0..w.flags.ops_per_thread {
        let key = w.key(&mut rng);
        let op = rng.next();
        let t = Instant::now();
        if op < w.lookup_insert {
            drop(handle.take()); // release before the next operation, as cache_bench
            handle = cache.lookup(key);
            match &handle {
                Some(v) if !w.flags.lean => result = result.wrapping_add(hash_value(v)),
                Some(_) => {}
                None => {
                    let v = w.value(&mut rng);
                    cache.insert(key, Arc::clone(&v), value_bytes);
                    handle = Some(v);
                }
            }
        } else if op < w.insert {
            drop(handle.take()); // release before the next operation, as cache_bench
            let v = w.value(&mut rng);
            cache.insert(key, Arc::clone(&v), value_bytes);
            handle = Some(v);
        } else if op < w.lookup {
            drop(handle.take()); // release before the next operation, as cache_bench
            handle = cache.lookup(key);
            if let Some(v) = &handle {
                if !w.flags.lean {
                    result = result.wrapping_add(hash_value(v));
                }
            }
        } else {
            cache.erase(key);
        }
        hist.add(t.elapsed().as_nanos() as u64);
    }
    drop(handle);
    ThreadResult { duration: start.elapsed(), hist, result }
}

fn bench(f: &Flags) {
    let mut auto_cache = None;
    let cache: Arc<dyn Cache<Value>> = match f.cache_type {
        CacheType::LruCache => {
            Arc::new(LruCache::new(f.cache_size as usize, f.num_shard_bits, false))
        }
        CacheType::HyperClockCache if f.value_bytes_estimate == 0 => {
            let auto =
                Arc::new(AutoHyperClockCache::new(f.cache_size as usize, f.num_shard_bits, false));
            auto_cache = Some(Arc::clone(&auto));
            auto
        }
        CacheType::HyperClockCache => Arc::new(HyperClockCache::new(
            f.cache_size as usize,
            f.value_bytes_estimate as usize,
            f.num_shard_bits,
            false,
        )),
    };
    let w = Arc::new(Workload::new(f));
    if f.populate_cache {
        let mut rng = Rng(1);
        let mut i = 0u64;
        while i < 2 * f.cache_size {
            let key = w.key(&mut rng);
            cache.insert(key, w.value(&mut rng), f.value_bytes as usize);
            i += u64::from(f.value_bytes);
        }
        println!("Population complete");
    }
    print_env(f, &w);
    println!("Implementation      : {}", cache.name());

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

    let total_ops = f64::from(f.threads) * f.ops_per_thread as f64;
    println!(
        "Complete in {elapsed:.3} s; Rough parallel ops/sec = {}",
        (total_ops / elapsed) as u64
    );
    let thread_secs: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
    println!("Thread ops/sec = {}", (total_ops / thread_secs) as u64);

    let mut hist = Histogram::new();
    let mut sink = 0u64;
    for r in &results {
        hist.merge(&r.hist);
        sink = sink.wrapping_add(r.result);
    }
    if let Some(auto) = &auto_cache {
        println!(
            "Auto table          : {} entries, {} slots, at most {} generations per shard",
            auto.len(),
            auto.table_address_count(),
            auto.max_generations()
        );
    }
    println!("\nOperation latency (ns):");
    let avg = if hist.count == 0 { 0.0 } else { hist.sum as f64 / hist.count as f64 };
    println!("Count: {} Average: {avg:.4}  Max: {}", hist.count, hist.max);
    println!(
        "Percentiles: P50: {} P75: {} P99: {} P99.9: {} P99.99: {}",
        hist.percentile(50.0),
        hist.percentile(75.0),
        hist.percentile(99.0),
        hist.percentile(99.9),
        hist.percentile(99.99)
    );
    println!(
        "\nCache usage: {} of {} bytes (checksum {:x})",
        cache.usage(),
        cache.capacity(),
        sink & 0xff
    );
}

fn print_env(f: &Flags, w: &Workload) {
    println!("----------------------------");
    println!("Talus cache_bench   : {}", env!("CARGO_PKG_VERSION"));
    if cfg!(debug_assertions) {
        println!("WARNING: Assertions are enabled; benchmarks unnecessarily slow");
    }
    println!(
        "Cache type          : {}\nNumber of threads   : {}\nOps per thread      : {}\n\
         Cache size          : {} bytes\nNum shard bits      : {}\nMax key             : {}\n\
         Resident ratio      : {}\nSkew degree         : {}\nPopulate cache      : {}\n\
         Lookup+Insert pct   : {}%\nInsert percentage   : {}%\nLookup percentage   : {}%\n\
         Erase percentage    : {}%",
        f.cache_type.name(),
        f.threads,
        f.ops_per_thread,
        f.cache_size,
        f.num_shard_bits,
        w.max_key,
        f.resident_ratio,
        f.skew,
        u8::from(f.populate_cache),
        f.lookup_insert_percent,
        f.insert_percent,
        f.lookup_percent,
        f.erase_percent
    );
    println!("----------------------------");
}

#[cfg(test)]
mod tests;
