//! What the threads of one benchmark share ([`Shared`]: the engine, the [`Params`], the pacing
//! [`RateLimiter`] for `--benchmark_write_rate_limit`) and what each owns ([`ThreadState`]: its
//! random generator and [`Stats`]), with the op-count/time budget ([`Duration`]). Used by the
//! runner (`runner.rs`) and the workloads (`workloads.rs`), which import it and not each other.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::engines::Engine;
use super::keygen::Rng64;
use super::report::{now_micros, Stats};

/// Per-benchmark numbers, resolved from the flags as RocksDB's `Run` does.
#[derive(Clone, Debug)]
pub struct Params {
    /// `--num` as given.
    pub flag_num: u64,
    /// Keys to write in fill benchmarks (may differ from `flag_num`).
    pub num: u64,
    /// Read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Delete operations.
    pub deletes: u64,
    /// Operations in readrandomwriterandom (the larger of reads and writes).
    pub readwrites: u64,
    /// Keys per batch.
    pub batch: u64,
    /// Key size.
    pub key_size: usize,
    /// Value size.
    pub value_size: usize,
    /// Seconds budget (0: count budget).
    pub duration: u64,
    /// Ops between time checks.
    pub ops_between_duration_checks: u64,
    /// Next() calls per seek.
    pub seek_nexts: u64,
    /// Reads in readrandomwriterandom, percent.
    pub readwritepercent: u64,
    /// Distinct keys of the merge benchmarks (`--merge_keys`, -1 resolved to `--num`).
    pub merge_keys: u64,
    /// Merges in readrandommergerandom, percent.
    pub mergereadpercent: u64,
    /// Read skew.
    pub exp_range: f64,
    /// Seed base.
    pub seed_base: u64,
    /// Bytes/s for writers, 0 = unlimited.
    pub write_rate_limit: u64,
    /// Keys per randomtransaction transaction (`--transaction_sets`).
    pub transaction_sets: u64,
}

/// State shared by the threads of one benchmark run.
pub struct Shared<'a> {
    /// The engine under test.
    pub engine: &'a dyn Engine,
    /// The numbers.
    pub params: &'a Params,
    /// RocksDB's `RandomGenerator` data.
    pub values: Arc<[u8]>,
    /// Threads that finished (the *whilewriting writer stops when all readers are done).
    pub num_done: AtomicUsize,
    /// Threads in this run.
    pub total: usize,
    /// Set when a thread failed: everyone stops at the next budget check.
    pub abort: AtomicBool,
    /// Paces the fill benchmarks' writes (`--benchmark_write_rate_limit`).
    pub write_limiter: Option<RateLimiter>,
}

/// One benchmark thread's state.
pub struct ThreadState {
    /// 0..n-1.
    pub tid: usize,
    /// The thread's generator, seeded `seed_base + global thread counter`.
    pub rng: Rng64,
    /// Its counters.
    pub stats: Stats,
}

/// An operation budget: a count, or seconds when `--duration` is set (RocksDB's `Duration`).
pub struct Duration<'a> {
    max_seconds: u64,
    max_ops: u64,
    ops: u64,
    granularity: u64,
    start: u64,
    abort: &'a AtomicBool,
}

impl<'a> Duration<'a> {
    /// A budget of `max_ops` operations, or `max_seconds` if non-zero.
    pub fn new(shared: &'a Shared<'_>, max_seconds: u64, max_ops: u64) -> Self {
        Duration {
            max_seconds,
            max_ops,
            ops: 0,
            granularity: shared.params.ops_between_duration_checks.max(1),
            start: now_micros(),
            abort: &shared.abort,
        }
    }

    /// Accounts `increment` more operations; true once the budget is spent.
    #[inline]
    pub fn done(&mut self, increment: u64) -> bool {
        let increment = increment.max(1);
        let prev = self.ops;
        self.ops += increment;
        if self.ops / self.granularity != prev / self.granularity {
            if self.abort.load(Ordering::Relaxed) {
                return true;
            }
            if self.max_seconds > 0 && (now_micros() - self.start) / 1_000_000 >= self.max_seconds {
                return true;
            }
        }
        if self.max_seconds > 0 {
            false
        } else {
            self.ops > self.max_ops
        }
    }
}

/// How often the write budget is refilled (RocksDB's `rate_limiter_refill_period_us` default).
const REFILL_PERIOD_MICROS: u64 = 100_000;

/// Paces writers to `bytes_per_sec` as RocksDB's db_bench does (`NewGenericRateLimiter(rate)`,
/// 100 ms refill period): a budget of a tenth of a second's bytes is granted each period, and a
/// request that finds it spent sleeps until the next refill. Writers thus run in bursts and
/// sleep about ten times a second, not once per write (a sleep per write woke the writer of
/// `readwhilewriting` some 17,000 times a second, taking a core from the readers each time).
pub struct RateLimiter {
    bytes_per_period: u64,
    bucket: Mutex<Bucket>,
}

struct Bucket {
    /// Bytes left in this period.
    available: u64,
    /// When the next refill is due (`now_micros` time; 0: at the first request).
    next_refill: u64,
}

impl RateLimiter {
    /// A limiter for `bytes_per_sec` (> 0).
    pub fn new(bytes_per_sec: u64) -> Self {
        let bytes_per_period = (bytes_per_sec.max(1) * REFILL_PERIOD_MICROS / 1_000_000).max(1);
        RateLimiter {
            bytes_per_period,
            bucket: Mutex::new(Bucket { available: 0, next_refill: 0 }),
        }
    }

    /// Blocks until `bytes` may be written (a request larger than a period's budget takes
    /// several periods).
    pub fn request(&self, bytes: u64) {
        let mut remaining = bytes;
        loop {
            let now = now_micros();
            let until = {
                let mut b = self.bucket.lock();
                if now >= b.next_refill {
                    // A new period: its budget, nothing carried over (as RocksDB's refill).
                    b.available = self.bytes_per_period;
                    b.next_refill = now + REFILL_PERIOD_MICROS;
                }
                if b.available >= remaining {
                    b.available -= remaining;
                    return;
                }
                remaining -= b.available;
                b.available = 0;
                b.next_refill
            };
            std::thread::sleep(std::time::Duration::from_micros(until.saturating_sub(now)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limiter_paces_in_refill_periods() {
        let l = RateLimiter::new(1_000_000); // 100,000 bytes per 100 ms period
        let t = std::time::Instant::now();
        // The first period's budget is granted at once: five requests, no wait.
        for _ in 0..5 {
            l.request(20_000);
        }
        assert!(t.elapsed().as_millis() < 50, "{:?}", t.elapsed());
        // 260,000 bytes more need three more periods.
        for _ in 0..13 {
            l.request(20_000);
        }
        let ms = t.elapsed().as_millis();
        assert!((250..2000).contains(&ms), "{ms} ms");
        // A request larger than a period's budget spans periods.
        let t = std::time::Instant::now();
        l.request(250_000);
        let ms = t.elapsed().as_millis();
        assert!((150..2000).contains(&ms), "{ms} ms");
    }
}
