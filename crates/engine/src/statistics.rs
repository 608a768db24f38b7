//! RocksDB's ticker and histogram statistics (`Options::statistics`), printed in RocksDB's
//! `STATISTICS:` text by `Db::property("rocksdb.options-statistics")`. The counters kept here
//! count only once a database of the process was opened with `Options::statistics` (a
//! process-wide switch, never turned off again): off, a get or write pays one relaxed load.
//!
//! Two sources. Counters the database already keeps per instance ([`crate::db`]'s `DbStats`:
//! bytes and keys written, WAL syncs, stall time, flush and compaction bytes) are read from
//! there when the text is built, at no cost to the hot path. The read-path tickers (block cache
//! hits and misses by role, `bloom.filter.useful`, keys and bytes read) and the histograms
//! (`db.get.micros`, `db.write.micros`, `compaction.times.micros`) are counted here, into
//! per-thread shards of relaxed atomics (no shared cache line is written per operation; only
//! the owning thread writes its shard, with plain loads and stores, no locked adds) that the
//! reader sums. Those are process-wide, as a `Statistics` object shared by every database
//! of the process is in RocksDB: with several databases open they count all of them (the
//! tools open one). Called by `perf.rs` (cache and filter hooks), `Db::get_opt`, `Db::write`
//! and the compaction job; takes one mutex only when a thread records its first event.

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;

/// Tickers counted here (the rest come from the database's own counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ticker {
    BlockCacheMiss,
    BlockCacheHit,
    DataMiss,
    DataHit,
    IndexMiss,
    IndexHit,
    FilterMiss,
    FilterHit,
    BloomUseful,
    KeysRead,
    BytesRead,
    IoThrottleWaitMicros,
}

const TICKERS: usize = 12;

/// RocksDB's names, in [`Ticker`] order.
const TICKER_NAMES: [&str; TICKERS] = [
    "rocksdb.block.cache.miss",
    "rocksdb.block.cache.hit",
    "rocksdb.block.cache.data.miss",
    "rocksdb.block.cache.data.hit",
    "rocksdb.block.cache.index.miss",
    "rocksdb.block.cache.index.hit",
    "rocksdb.block.cache.filter.miss",
    "rocksdb.block.cache.filter.hit",
    "rocksdb.bloom.filter.useful",
    "rocksdb.number.keys.read",
    "rocksdb.bytes.read",
    "talus.io.throttle.wait.micros",
];

/// Histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hist {
    Get,
    Write,
    Compaction,
    IoThrottle,
}

const HISTS: usize = 4;
const HIST_NAMES: [&str; HISTS] = [
    "rocksdb.db.get.micros",
    "rocksdb.db.write.micros",
    "rocksdb.compaction.times.micros",
    "talus.io.throttle.micros",
];

/// Buckets: values 0-3 exactly, then four per power of two (relative error under 25%).
const BUCKETS: usize = 256;

fn bucket(v: u64) -> usize {
    if v < 4 {
        return v as usize;
    }
    let lz = 63 - v.leading_zeros() as usize;
    (lz * 4 + ((v >> (lz - 2)) & 3) as usize).min(BUCKETS - 1)
}

/// The smallest value of bucket `b` (buckets 4 to 7 are never used: 4 is bucket 8).
fn bucket_low(b: usize) -> u64 {
    if b < 4 {
        return b as u64;
    }
    if b < 8 {
        return 4;
    }
    let lz = b / 4;
    (1u64 << lz) | (((b % 4) as u64) << (lz - 2))
}

struct HistShard {
    buckets: [AtomicU64; BUCKETS],
    sum: AtomicU64,
    max: AtomicU64,
}

struct Shard {
    tickers: [AtomicU64; TICKERS],
    hists: [HistShard; HISTS],
}

impl Shard {
    fn new() -> Shard {
        let hist = || HistShard {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        };
        Shard {
            tickers: std::array::from_fn(|_| AtomicU64::new(0)),
            hists: [hist(), hist(), hist(), hist()],
        }
    }
}

static SHARDS: Mutex<Vec<Arc<Shard>>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: Arc<Shard> = {
        let s = Arc::new(Shard::new());
        SHARDS.lock().push(s.clone());
        s
    };
}

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns counting on for the process (`Db::open` with `Options::statistics`).
pub(crate) fn enable() {
    ENABLED.store(true, Relaxed);
}

/// True once a database of the process was opened with `Options::statistics`.
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// A start time for a latency histogram, if counting is on.
#[inline]
pub(crate) fn start() -> Option<std::time::Instant> {
    enabled().then(std::time::Instant::now)
}

/// Adds `n` to a counter of this thread's shard. Only the owning thread writes its shard
/// (readers only load), so a plain load and store is enough: no locked read-modify-write.
#[inline]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl HistShard {
    /// Records `v` (the owning thread only: see [`bump`]).
    #[inline]
    fn add(&self, v: u64) {
        bump(&self.buckets[bucket(v)], 1);
        bump(&self.sum, v);
        if v > self.max.load(Relaxed) {
            self.max.store(v, Relaxed);
        }
    }
}

/// Adds `n` to `t`.
#[inline]
pub(crate) fn add(t: Ticker, n: u64) {
    if !enabled() {
        return;
    }
    let _ = MINE.try_with(|s| bump(&s.tickers[t as usize], n));
}

/// Records `v` (microseconds) in histogram `h`.
#[inline]
pub(crate) fn record(h: Hist, v: u64) {
    if !enabled() {
        return;
    }
    let _ = MINE.try_with(|s| s.hists[h as usize].add(v));
}

/// One point read started at `t0` (from [`start`]) that found a value of `found` bytes:
/// `number.keys.read`, `bytes.read` and `db.get.micros` with one thread-local access (three
/// separate [`add`]/[`record`] calls cost a point read about 30 more instructions).
#[inline]
pub(crate) fn count_get(t0: std::time::Instant, found: Option<usize>) {
    let micros = micros_since(t0);
    let _ = MINE.try_with(|s| {
        bump(&s.tickers[Ticker::KeysRead as usize], 1);
        if let Some(n) = found {
            bump(&s.tickers[Ticker::BytesRead as usize], n as u64);
        }
        s.hists[Hist::Get as usize].add(micros);
    });
}

/// Microseconds since `t0`, for [`record`].
#[inline]
pub(crate) fn micros_since(t0: std::time::Instant) -> u64 {
    t0.elapsed().as_micros() as u64
}

/// A histogram's summed buckets.
pub(crate) struct HistSnap {
    buckets: Vec<u64>,
    /// Sum of the values.
    pub sum: u64,
    /// Largest value.
    pub max: u64,
}

impl HistSnap {
    /// Number of values.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The `p`th percentile (0-100), interpolated within its bucket, as RocksDB's.
    pub fn percentile(&self, p: f64) -> f64 {
        let count = self.count();
        if count == 0 {
            return 0.0;
        }
        let threshold = count as f64 * p / 100.0;
        let mut cum = 0u64;
        for (b, &n) in self.buckets.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let before = cum;
            cum += n;
            if cum as f64 >= threshold {
                let lo = bucket_low(b) as f64;
                let hi = if b + 1 < BUCKETS { bucket_low(b + 1) as f64 } else { lo };
                let hi = hi.min(self.max as f64).max(lo);
                let frac = (threshold - before as f64) / n as f64;
                return lo + (hi - lo) * frac.clamp(0.0, 1.0);
            }
        }
        self.max as f64
    }
}

/// Current value of ticker `t`, summed over the threads.
pub(crate) fn ticker(t: Ticker) -> u64 {
    SHARDS.lock().iter().map(|s| s.tickers[t as usize].load(Relaxed)).sum()
}

/// Histogram `h`, summed over the threads.
pub(crate) fn histogram(h: Hist) -> HistSnap {
    let shards = SHARDS.lock();
    let mut out = HistSnap { buckets: vec![0; BUCKETS], sum: 0, max: 0 };
    for s in shards.iter() {
        let hs = &s.hists[h as usize];
        for (o, b) in out.buckets.iter_mut().zip(hs.buckets.iter()) {
            *o += b.load(Relaxed);
        }
        out.sum += hs.sum.load(Relaxed);
        out.max = out.max.max(hs.max.load(Relaxed));
    }
    out
}

/// RocksDB's `Statistics::ToString` text: `name COUNT : n` per ticker (the database's own
/// `extra` tickers merged in, sorted by name), then `name P50 : .. P95 : .. P99 : .. P100 : ..
/// COUNT : n SUM : s` per histogram.
pub(crate) fn render(extra: &[(&str, u64)]) -> String {
    let mut tickers: Vec<(&str, u64)> =
        TICKER_NAMES.iter().enumerate().map(|(i, n)| (*n, ticker(ALL_TICKERS[i]))).collect();
    tickers.extend_from_slice(extra);
    tickers.sort_by(|a, b| a.0.cmp(b.0));
    let mut s = String::with_capacity(4096);
    for (name, v) in tickers {
        let _ = writeln!(s, "{name} COUNT : {v}");
    }
    for (i, name) in HIST_NAMES.iter().enumerate() {
        let h = histogram(ALL_HISTS[i]);
        let _ = writeln!(
            s,
            "{name} P50 : {:.6} P95 : {:.6} P99 : {:.6} P100 : {:.6} COUNT : {} SUM : {}",
            h.percentile(50.0),
            h.percentile(95.0),
            h.percentile(99.0),
            h.max as f64,
            h.count(),
            h.sum
        );
    }
    s
}

const ALL_TICKERS: [Ticker; TICKERS] = [
    Ticker::BlockCacheMiss,
    Ticker::BlockCacheHit,
    Ticker::DataMiss,
    Ticker::DataHit,
    Ticker::IndexMiss,
    Ticker::IndexHit,
    Ticker::FilterMiss,
    Ticker::FilterHit,
    Ticker::BloomUseful,
    Ticker::KeysRead,
    Ticker::BytesRead,
    Ticker::IoThrottleWaitMicros,
];
const ALL_HISTS: [Hist; HISTS] = [Hist::Get, Hist::Write, Hist::Compaction, Hist::IoThrottle];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_cover_their_values() {
        let mut last = 0;
        for v in [0u64, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 100, 1000, 123_456, u64::MAX / 2] {
            let b = bucket(v);
            assert!(b >= last, "{v}");
            assert!(bucket_low(b) <= v, "{v}: bucket {b} starts at {}", bucket_low(b));
            if b + 1 < BUCKETS {
                assert!(bucket_low(b + 1) > v, "{v}");
            }
            last = b;
        }
    }

    #[test]
    fn percentiles_and_text() {
        // Its own thread: a fresh shard, but other tests' threads record too, so compare
        // differences of this histogram only through a private snapshot.
        let h = HistSnap {
            buckets: {
                let mut b = vec![0; BUCKETS];
                for v in 1..=100u64 {
                    b[bucket(v)] += 1;
                }
                b
            },
            sum: 5050,
            max: 100,
        };
        assert_eq!(h.count(), 100);
        let p50 = h.percentile(50.0);
        assert!((40.0..=64.0).contains(&p50), "{p50}");
        assert!(h.percentile(99.0) <= 100.0);
        // Counting is off until a database is opened with `Options::statistics`.
        enable();
        let before = ticker(Ticker::KeysRead);
        std::thread::spawn(|| add(Ticker::KeysRead, 7)).join().unwrap();
        assert!(ticker(Ticker::KeysRead) >= before + 7);
        let text = render(&[("rocksdb.bytes.written", 5)]);
        assert!(text.contains("rocksdb.bytes.written COUNT : 5\n"), "{text}");
        assert!(text.contains("rocksdb.db.get.micros P50 : "), "{text}");
    }
}
