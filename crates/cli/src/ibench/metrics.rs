//! Counters the driver threads bump and the reporter reads: response-time histograms, per-step
//! totals, per-interval maxima, and process-wide resource snapshots (/proc/self/io, getrusage,
//! VmHWM).
//!
//! [`StepCounters`] is shared by the step's threads through an `Arc`; everything in it is an
//! atomic (relaxed: the reporter needs no ordering beyond eventual visibility), so recording a
//! response time is a few atomic adds and no lock. The error slot is a mutex touched only on
//! failure.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Upper bounds (µs) of the histogram buckets; one more bucket holds everything above.
pub const BUCKET_BOUNDS_US: [u64; 9] =
    [256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000];
/// Bucket names, in order, as used in CSV columns and output.
pub const BUCKET_NAMES: [&str; 10] =
    ["le256us", "le1ms", "le4ms", "le16ms", "le64ms", "le256ms", "le1s", "le4s", "le16s", "gt16s"];

/// A response-time histogram with the benchmark's buckets.
#[derive(Default)]
pub struct Hist {
    buckets: [AtomicU64; 10],
    max_us: AtomicU64,
    count: AtomicU64,
}

impl Hist {
    /// Records one response time.
    pub fn record(&self, us: u64) {
        let i = BUCKET_BOUNDS_US.iter().position(|&b| us <= b).unwrap_or(BUCKET_BOUNDS_US.len());
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Relaxed);
        }
        self.max_us.fetch_max(us, Relaxed);
        self.count.fetch_add(1, Relaxed);
    }

    /// The bucket counts and the maximum (µs).
    pub fn snapshot(&self) -> ([u64; 10], u64) {
        (std::array::from_fn(|i| self.buckets[i].load(Relaxed)), self.max_us.load(Relaxed))
    }
}

/// Everything one step's threads count.
#[derive(Default)]
pub struct StepCounters {
    /// Rows inserted.
    pub inserts: AtomicU64,
    /// Rows inserted by each client (index: the client); empty from `default()`.
    pub client_inserts: Vec<AtomicU64>,
    /// Rows deleted.
    pub deletes: AtomicU64,
    /// Queries done.
    pub queries: AtomicU64,
    /// Rows the queries returned.
    pub rows_queried: AtomicU64,
    /// Insert commit response times.
    pub insert_hist: Hist,
    /// Query response times.
    pub query_hist: Hist,
    /// Largest insert commit time since the reporter last looked (µs).
    pub interval_max_insert_us: AtomicU64,
    /// Largest query time since the reporter last looked (µs).
    pub interval_max_query_us: AtomicU64,
    /// Set to stop the step's threads (deadline reached or an error).
    pub stop: AtomicBool,
    /// The first error a thread hit.
    pub error: parking_lot::Mutex<Option<String>>,
}

impl StepCounters {
    /// Counters for a step of `clients` clients.
    pub fn new(clients: usize) -> StepCounters {
        StepCounters {
            client_inserts: (0..clients).map(|_| AtomicU64::new(0)).collect(),
            ..StepCounters::default()
        }
    }

    /// Records a commit by `client` of `rows` inserted and `deleted` deleted rows that took
    /// `us`.
    pub fn record_commit(&self, client: usize, rows: u64, deleted: u64, us: u64) {
        self.insert_hist.record(us);
        self.interval_max_insert_us.fetch_max(us, Relaxed);
        self.inserts.fetch_add(rows, Relaxed);
        if let Some(c) = self.client_inserts.get(client) {
            c.fetch_add(rows, Relaxed);
        }
        self.deletes.fetch_add(deleted, Relaxed);
    }

    /// Records a query that returned `rows` and took `us`.
    pub fn record_query(&self, rows: u64, us: u64) {
        self.query_hist.record(us);
        self.interval_max_query_us.fetch_max(us, Relaxed);
        self.queries.fetch_add(1, Relaxed);
        self.rows_queried.fetch_add(rows, Relaxed);
    }

    /// Keeps the first error and stops the step.
    pub fn fail(&self, e: String) {
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
        self.stop.store(true, Relaxed);
    }

    /// True once the step should stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

/// Process-wide resource counters at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcSnap {
    /// /proc/self/io.
    pub io: crate::procio::ProcIo,
    /// User + system CPU time, µs.
    pub cpu_us: u64,
}

fn field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl ProcSnap {
    /// Reads /proc/self/io and getrusage (zeros where unavailable).
    pub fn now() -> ProcSnap {
        ProcSnap { io: crate::procio::ProcIo::now(), cpu_us: cpu_us() }
    }
}

/// User + system CPU of the whole process, µs.
fn cpu_us() -> u64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer is always allowed.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Peak resident set size of the process (VmHWM), KiB.
pub fn peak_rss_kb() -> u64 {
    field(&std::fs::read_to_string("/proc/self/status").unwrap_or_default(), "VmHWM")
}

/// Resident set size of the process now (VmRSS), KiB.
pub fn rss_kb() -> u64 {
    field(&std::fs::read_to_string("/proc/self/status").unwrap_or_default(), "VmRSS")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_at_the_bounds() {
        let h = Hist::default();
        for us in [0, 256, 257, 1000, 1001, 16_000_000, 16_000_001, 99_000_000] {
            h.record(us);
        }
        let (b, max) = h.snapshot();
        assert_eq!(b, [2, 2, 1, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(max, 99_000_000);
    }

    #[test]
    fn commits_count_per_client_and_in_total() {
        let c = StepCounters::new(2);
        c.record_commit(0, 10, 3, 5);
        c.record_commit(1, 4, 0, 5);
        c.record_commit(1, 4, 1, 5);
        c.record_commit(7, 1, 0, 5); // no such client: counted in the total only
        let per: Vec<u64> = c.client_inserts.iter().map(|a| a.load(Relaxed)).collect();
        assert_eq!(per, [10, 8]);
        assert_eq!(c.inserts.load(Relaxed), 19);
        assert_eq!(c.deletes.load(Relaxed), 4);
    }

    #[test]
    fn proc_counters_move() {
        let a = ProcSnap::now();
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let _ = std::fs::read_to_string("/proc/self/status");
        let b = ProcSnap::now();
        assert!(b.io.syscr > a.io.syscr, "{a:?} {b:?}");
        assert!(b.cpu_us >= a.cpu_us);
        assert!(peak_rss_kb() >= rss_kb() && rss_kb() > 0);
    }
}
