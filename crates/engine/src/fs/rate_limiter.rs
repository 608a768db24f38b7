//! A rate limiter for background writes (flush and compaction output, never the WAL), in the
//! manner of RocksDB's `GenericRateLimiter`: a budget of `bytes_per_sec / 10` bytes is refilled
//! every 100 ms; a writer takes what it needs from the budget or waits for the next refill.
//! Flushes ask at high priority and compactions at low: while a high-priority writer waits, low
//! ones let it go first (except one refill in ten, RocksDB's fairness, so compactions are never
//! starved).
//!
//! Who calls: [`RateLimitedFile`] wraps the output files of flushes (`db/flush.rs`) and
//! compactions (`compaction/job.rs`) and charges every append before passing it on. The
//! limiter's own mutex is a leaf lock; writers wait on its condition variable, never holding
//! another lock.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::WritableFile;
use crate::error::Result;

/// Refill period (RocksDB's default `refill_period_us`).
const REFILL_PERIOD: Duration = Duration::from_millis(100);
/// One refill in this many goes to low priority even while high-priority writers wait.
const FAIRNESS: u64 = 10;

/// Who is asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoPriority {
    /// Flushes.
    High,
    /// Compactions.
    Low,
}

struct State {
    available: u64,
    next_refill: Instant,
    refills: u64,
    high_waiting: usize,
    total_bytes: u64,
}

/// See the module documentation.
pub struct RateLimiter {
    refill_bytes: u64,
    state: Mutex<State>,
    cv: Condvar,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RateLimiter({} bytes per refill)", self.refill_bytes)
    }
}

impl RateLimiter {
    /// A limiter allowing `bytes_per_sec` (at least 10).
    pub fn new(bytes_per_sec: u64) -> Self {
        let refill_bytes = (bytes_per_sec / 10).max(1);
        RateLimiter {
            refill_bytes,
            state: Mutex::new(State {
                available: refill_bytes,
                next_refill: Instant::now() + REFILL_PERIOD,
                refills: 0,
                high_waiting: 0,
                total_bytes: 0,
            }),
            cv: Condvar::new(),
        }
    }

    /// Bytes granted so far.
    pub fn total_bytes(&self) -> u64 {
        self.state.lock().total_bytes
    }

    /// Blocks until `bytes` may be written. Requests larger than one refill are granted in
    /// refill-sized pieces.
    pub fn request(&self, mut bytes: u64, pri: IoPriority) {
        let mut st = self.state.lock();
        st.total_bytes += bytes;
        while bytes > 0 {
            let now = Instant::now();
            if now >= st.next_refill {
                st.available = self.refill_bytes;
                st.refills += 1;
                st.next_refill = now + REFILL_PERIOD;
                self.cv.notify_all();
            }
            let yield_to_high = pri == IoPriority::Low
                && st.high_waiting > 0
                && !st.refills.is_multiple_of(FAIRNESS);
            if st.available > 0 && !yield_to_high {
                let take = bytes.min(st.available);
                st.available -= take;
                bytes -= take;
                continue;
            }
            let wait = st.next_refill.saturating_duration_since(now);
            if pri == IoPriority::High {
                st.high_waiting += 1;
            }
            self.cv.wait_for(&mut st, wait.max(Duration::from_micros(100)));
            if pri == IoPriority::High {
                st.high_waiting -= 1;
            }
        }
    }
}

/// A writable file whose appends are charged to a [`RateLimiter`].
pub struct RateLimitedFile {
    inner: Box<dyn WritableFile>,
    limiter: Arc<RateLimiter>,
    pri: IoPriority,
}

impl RateLimitedFile {
    /// Wraps `inner`; with no limiter, returns `inner` unchanged.
    pub fn wrap(
        inner: Box<dyn WritableFile>,
        limiter: Option<&Arc<RateLimiter>>,
        pri: IoPriority,
    ) -> Box<dyn WritableFile> {
        match limiter {
            Some(l) => Box::new(RateLimitedFile { inner, limiter: l.clone(), pri }),
            None => inner,
        }
    }
}

impl WritableFile for RateLimitedFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.limiter.request(data.len() as u64, self.pri);
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_the_rate() {
        // 1 MB/s: 300 KB beyond the first refill's budget takes about 0.3 s.
        let l = RateLimiter::new(1 << 20);
        let t = Instant::now();
        for _ in 0..40 {
            l.request(10 << 10, IoPriority::Low);
        }
        let e = t.elapsed();
        assert!(e >= Duration::from_millis(250), "{e:?}");
        assert!(e < Duration::from_secs(2), "{e:?}");
        assert_eq!(l.total_bytes(), 400 << 10);
    }

    #[test]
    fn large_requests_are_split_and_high_priority_goes_first() {
        let l = Arc::new(RateLimiter::new(1 << 20));
        // One request of 2.5 refills completes after about two refill periods.
        let t = Instant::now();
        l.request(260 << 10, IoPriority::High);
        assert!(t.elapsed() >= Duration::from_millis(150));
        // A low-priority hog and a high-priority writer: the high one finishes first.
        let low = {
            let l = l.clone();
            std::thread::spawn(move || {
                l.request(500 << 10, IoPriority::Low);
                Instant::now()
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        l.request(150 << 10, IoPriority::High);
        let high_done = Instant::now();
        let low_done = low.join().unwrap();
        assert!(high_done < low_done);
    }

    #[test]
    fn flush_writes_are_charged() {
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::Options {
            create_if_missing: true,
            compression: crate::options::CompressionType::None,
            rate_limiter_bytes_per_sec: 1 << 20,
            ..Default::default()
        };
        let db = crate::Db::open(dir.path(), opts).unwrap();
        for i in 0..4000u32 {
            db.put(format!("key{i:08}"), [b'v'; 100]).unwrap();
        }
        let t = Instant::now();
        db.flush().unwrap();
        let e = t.elapsed().as_secs_f64();
        let bytes: f64 = db.property("talus.total-sst-files-size").unwrap().parse().unwrap();
        // About 450 KB at 1 MB/s, less the first refill's 100 KB budget.
        let expect = (bytes - 102_400.0) / 1_048_576.0;
        assert!(e >= expect * 0.8, "flushed {bytes} bytes in {e} s");
    }
}
