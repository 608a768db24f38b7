//! Running one benchmark on N threads over one shared engine (RocksDB's `RunBenchmark`): the
//! threads start together behind a barrier, each times itself, and their [`Stats`] are merged
//! into the result line. Also the op-count/time budget ([`Duration`]) and the pacing rate limiter
//! for `--benchmark_write_rate_limit`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use parking_lot::Mutex;

use super::engines::Engine;
use super::keygen::Rng64;
use super::report::{now_micros, ReportConfig, Stats};
use super::workloads::Method;

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
    /// Read skew.
    pub exp_range: f64,
    /// Seed base.
    pub seed_base: u64,
    /// Bytes/s for writers, 0 = unlimited.
    pub write_rate_limit: u64,
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

/// Paces callers to `bytes_per_sec` (requests are served in order; the first is free).
pub struct RateLimiter {
    micros_per_byte: f64,
    next_free: Mutex<u64>,
}

impl RateLimiter {
    /// A limiter for `bytes_per_sec` (> 0).
    pub fn new(bytes_per_sec: u64) -> Self {
        RateLimiter { micros_per_byte: 1e6 / bytes_per_sec.max(1) as f64, next_free: Mutex::new(0) }
    }

    /// Blocks until `bytes` may be written.
    pub fn request(&self, bytes: u64) {
        let now = now_micros();
        let wait = {
            let mut next = self.next_free.lock();
            let start = (*next).max(now);
            *next = start + (bytes as f64 * self.micros_per_byte) as u64;
            start - now
        };
        if wait > 0 {
            std::thread::sleep(std::time::Duration::from_micros(wait));
        }
    }
}

/// Runs `method` on `n` threads; returns the merged stats (already reported on stdout).
pub fn run_benchmark(
    shared: &Shared<'_>,
    cfg: ReportConfig,
    thread_counter: &mut u64,
    n: usize,
    name: &str,
    method: Method,
) -> Result<Stats, String> {
    let barrier = Barrier::new(n);
    let mut states = Vec::with_capacity(n);
    for tid in 0..n {
        *thread_counter += 1;
        let seed = shared.params.seed_base.wrapping_add(*thread_counter);
        states.push(ThreadState { tid, rng: Rng64::new(seed), stats: Stats::new(cfg) });
    }
    let perf = std::sync::Mutex::new(talus::PerfContext::default());
    let results: Vec<Result<Stats, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .into_iter()
            .map(|mut st| {
                let barrier = &barrier;
                let perf = &perf;
                s.spawn(move || {
                    shared.engine.thread_init();
                    barrier.wait();
                    talus::perf::reset();
                    st.stats.start(st.tid as i64);
                    let r = super::workloads::run(method, shared, &mut st);
                    st.stats.stop();
                    perf.lock().unwrap_or_else(|e| e.into_inner()).add(&talus::perf_context());
                    shared.num_done.fetch_add(1, Ordering::AcqRel);
                    if r.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    r.map(|()| st.stats)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Err(format!("{name}: a benchmark thread panicked")))
            })
            .collect()
    });
    // As RocksDB: a fresh Stats made now (its start and finish are "now"), merged with every
    // thread's; the span becomes [earliest start, now] and the excluded writer is skipped.
    let mut merged = Stats::new(cfg);
    for r in results {
        merged.merge(&r.map_err(|e| format!("{name}: {e}"))?);
    }
    let line = merged.report(name);
    print!("{line}");
    if talus::perf::perf_level() == talus::PerfLevel::EnableCount {
        // RocksDB prints each thread's context; this is their sum.
        let ctx = perf.into_inner().unwrap_or_else(|e| e.into_inner());
        println!("PERF_CONTEXT:\n{ctx}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limiter_paces() {
        let l = RateLimiter::new(1_000_000); // 1 byte per microsecond
        let t = std::time::Instant::now();
        for _ in 0..5 {
            l.request(20_000);
        }
        // The first request is free; four more cost 20 ms each.
        let ms = t.elapsed().as_millis();
        assert!((75..1000).contains(&ms), "{ms} ms");
    }
}
