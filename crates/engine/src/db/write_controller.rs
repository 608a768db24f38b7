//! The write controller: decides from the shape of the tree whether writes run freely, are
//! delayed to a byte rate, or stop, as RocksDB's `WriteController` and
//! `ColumnFamilyData::RecalculateWriteStallConditions` do.
//!
//! Conditions, first match wins (RocksDB's order):
//! 1. stop: `max_write_buffer_number` immutable memtables wait for flush;
//! 2. stop: L0 holds `level0_stop_writes_trigger` files;
//! 3. stop: pending compaction bytes reach `hard_pending_compaction_bytes_limit`;
//! 4. delay: `max_write_buffer_number > 3` and writes go to the last allowed memtable;
//! 5. delay: L0 holds `level0_slowdown_writes_trigger` files;
//! 6. delay: pending compaction bytes reach `soft_pending_compaction_bytes_limit`.
//!
//! The L0 and pending-bytes conditions are off with `disable_auto_compactions` (nothing would
//! ever lift them). A delay is a token bucket refilled every millisecond at the delayed write
//! rate, which starts at `delayed_write_rate`, drops to 60% near the stop trigger, by 20% on each
//! recalculation while the compaction debt does not shrink, and climbs back (by 1/0.8, up to
//! the maximum) while it does.
//!
//! Who calls: [`WriteController::recalculate`] runs on every SuperVersion install (flush,
//! compaction, memtable switch) with the state lock held; the write-group leader calls
//! [`WriteController::delay`] and [`WriteController::is_stopped`] in `make_room_for_write`.
//! Its own mutex is a leaf lock (nothing is taken while it is held). Each recalculation that
//! finds a stall counts it by cause in [`DbStats`], like RocksDB's `Stalls(count)`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::stats::{DbStats, StallCause};
use crate::compaction::picker_for;
use crate::options::Options;
use crate::version::Version;

/// Lowest rate a delay slows to (RocksDB's `kMinWriteRate`).
const MIN_WRITE_RATE: u64 = 16 * 1024;
/// The bucket is refilled at most this often.
const REFILL: Duration = Duration::from_millis(1);

/// Whether writes may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    /// No stall.
    Normal,
    /// Writes are delayed to the delayed write rate.
    Delayed,
    /// Writes wait until a flush or compaction lifts the condition.
    Stopped,
}

struct Ctl {
    condition: Condition,
    cause: Option<StallCause>,
    max_rate: u64,
    rate: u64,
    credit: u64,
    next_refill: Option<Instant>,
    pending_bytes: u64,
}

/// See the module documentation.
pub(crate) struct WriteController {
    ctl: Mutex<Ctl>,
    /// `ctl.condition` as a [`Condition`] discriminant, written with it under the lock: the
    /// write path's per-write checks (`is_stopped`, `needs_delay`) read it without the lock.
    condition: AtomicU8,
}

/// What one column family's shape asks of writers: the condition, its cause, and the L0 count
/// and pending compaction bytes it was judged on.
pub(crate) struct Shape {
    pub cond: Condition,
    pub cause: Option<StallCause>,
    l0: usize,
    pending: u64,
}

impl Shape {
    /// Judges the current version `v` of a family with options `opts` and `imms` immutable
    /// memtables (the module doc's list).
    pub fn of(opts: &Options, v: &Version, imms: usize) -> Shape {
        // Universal compaction counts sorted runs against the L0 triggers, as RocksDB does.
        let picker = picker_for(opts);
        let l0 = picker.l0_trigger_count(v);
        let auto = !opts.disable_auto_compactions;
        let pending = picker.pending_compaction_bytes(v, opts);
        let mwbn = opts.max_write_buffer_number;
        let hard = opts.hard_pending_compaction_bytes_limit;
        let soft = opts.soft_pending_compaction_bytes_limit;
        use Condition::*;
        use StallCause::*;
        let (cond, cause) = if imms >= mwbn {
            (Stopped, Some(MemtableStop))
        } else if auto && l0 >= opts.level0_stop_writes_trigger {
            (Stopped, Some(L0Stop))
        } else if auto && hard > 0 && pending >= hard {
            (Stopped, Some(PendingStop))
        } else if mwbn > 3 && imms + 1 >= mwbn && imms >= 2 {
            (Delayed, Some(MemtableSlowdown))
        } else if auto && l0 >= opts.level0_slowdown_writes_trigger {
            (Delayed, Some(L0Slowdown))
        } else if auto && soft > 0 && pending >= soft {
            (Delayed, Some(PendingSlowdown))
        } else {
            (Normal, None)
        };
        Shape { cond, cause, l0, pending }
    }

    /// How severe the condition is: stopped above delayed above normal (the write controller
    /// follows the family whose shape is the most severe, as RocksDB's conditions are the
    /// worst over its families).
    pub fn severity(&self) -> u8 {
        self.cond as u8
    }
}

impl WriteController {
    /// A controller whose delays run at most at `delayed_write_rate` bytes per second.
    pub fn new(delayed_write_rate: u64) -> Self {
        let max_rate = delayed_write_rate.max(1);
        WriteController {
            ctl: Mutex::new(Ctl {
                condition: Condition::Normal,
                cause: None,
                max_rate,
                rate: max_rate,
                credit: 0,
                next_refill: None,
                pending_bytes: 0,
            }),
            condition: AtomicU8::new(Condition::Normal as u8),
        }
    }

    /// Sets the condition from `shape` ([`Shape::of`] the family writers follow, whose options
    /// are `opts`) and whether a compaction has an L0 input (the caller holds the state lock
    /// they come from). Counts a stall by cause if there is one.
    pub fn recalculate(&self, opts: &Options, shape: Shape, l0_compacting: bool, stats: &DbStats) {
        let Shape { cond, cause, l0, pending } = shape;
        let hard = opts.hard_pending_compaction_bytes_limit;
        use Condition::*;
        use StallCause::*;
        if let Some(c) = cause {
            stats.count_stall(c);
            if l0_compacting && c == L0Slowdown {
                stats.count_stall(L0SlowdownWithCompaction);
            }
            if l0_compacting && c == L0Stop {
                stats.count_stall(L0StopWithCompaction);
            }
        }
        let mut ctl = self.ctl.lock();
        let prev_pending = std::mem::replace(&mut ctl.pending_bytes, pending);
        let was_delayed = ctl.condition == Delayed;
        match cond {
            Delayed => {
                let near_stop = (cause == Some(L0Slowdown)
                    && l0 + 2 >= opts.level0_stop_writes_trigger)
                    || (cause == Some(PendingSlowdown) && hard > 0 && pending >= hard / 4 * 3);
                let mut rate = if was_delayed { ctl.rate } else { ctl.max_rate };
                if near_stop {
                    rate = (rate as f64 * 0.6) as u64;
                } else if was_delayed && prev_pending > 0 && prev_pending <= pending {
                    rate = (rate as f64 * 0.8) as u64;
                } else if prev_pending > pending {
                    rate = ((rate as f64 / 0.8) as u64).min(ctl.max_rate);
                }
                ctl.rate = rate.max(MIN_WRITE_RATE.min(ctl.max_rate));
            }
            Normal => ctl.rate = ctl.max_rate,
            Stopped => {}
        }
        ctl.condition = cond;
        ctl.cause = cause;
        self.condition.store(cond as u8, Ordering::Release);
    }

    /// True while writes must wait.
    pub fn is_stopped(&self) -> bool {
        self.condition.load(Ordering::Acquire) == Condition::Stopped as u8
    }

    /// True while writes are delayed.
    pub fn needs_delay(&self) -> bool {
        self.condition.load(Ordering::Acquire) == Condition::Delayed as u8
    }

    /// The current condition and its cause.
    pub fn condition(&self) -> (Condition, Option<StallCause>) {
        let c = self.ctl.lock();
        (c.condition, c.cause)
    }

    /// The rate delayed writes currently run at (bytes per second).
    pub fn delayed_write_rate(&self) -> u64 {
        self.ctl.lock().rate
    }

    /// How long a write of `bytes` must wait before it may go on (zero unless delayed): the
    /// token bucket of RocksDB's `WriteController::GetDelay`.
    pub fn delay(&self, now: Instant, bytes: u64) -> Duration {
        let mut c = self.ctl.lock();
        if c.condition != Condition::Delayed {
            return Duration::ZERO;
        }
        if c.credit >= bytes {
            c.credit -= bytes;
            return Duration::ZERO;
        }
        let next = *c.next_refill.get_or_insert(now);
        if next <= now {
            let elapsed = now.duration_since(next) + REFILL;
            c.credit += (elapsed.as_secs_f64() * c.rate as f64).ceil() as u64;
            c.next_refill = Some(now + REFILL);
            if c.credit >= bytes {
                c.credit -= bytes;
                return Duration::ZERO;
            }
        }
        let over = bytes - c.credit;
        let needed = Duration::from_secs_f64(over as f64 / c.rate as f64);
        c.credit = 0;
        let next = c.next_refill.unwrap_or(now) + needed;
        c.next_refill = Some(next);
        next.saturating_duration_since(now).max(REFILL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delayed(rate: u64) -> WriteController {
        let wc = WriteController::new(rate);
        wc.ctl.lock().condition = Condition::Delayed;
        wc.condition.store(Condition::Delayed as u8, Ordering::Release);
        wc
    }

    #[test]
    fn no_delay_unless_delayed() {
        let wc = WriteController::new(1000);
        assert_eq!(wc.delay(Instant::now(), 1 << 30), Duration::ZERO);
    }

    #[test]
    fn token_bucket_paces_to_the_rate() {
        // 1 MB/s: writing 10 MB in 100 KB pieces must be told to wait about 10 s in total.
        let wc = delayed(1 << 20);
        let start = Instant::now();
        let mut now = start;
        for _ in 0..100 {
            let d = wc.delay(now, 100 << 10);
            now += d;
        }
        let total = now.duration_since(start).as_secs_f64();
        assert!((9.0..=10.5).contains(&total), "waited {total} s");
    }

    #[test]
    fn small_writes_use_credit() {
        let wc = delayed(1 << 20);
        let now = Instant::now();
        // The first call refills one period (about 1 KB at 1 MB/s): a 100-byte write fits.
        assert_eq!(wc.delay(now, 100), Duration::ZERO);
        assert_eq!(wc.delay(now, 100), Duration::ZERO);
        // A write larger than the credit waits at least one refill period.
        assert!(wc.delay(now, 1 << 20) >= REFILL);
    }

    #[test]
    fn writes_slow_then_stop_then_resume() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;

        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            create_if_missing: true,
            write_buffer_size: 1 << 20,
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 3,
            level0_stop_writes_trigger: 5,
            delayed_write_rate: 200 << 10,
            ..Default::default()
        };
        let db = crate::Db::open(dir.path(), opts).unwrap();
        db.inner().state.lock().compactions_paused = true;
        let wc = &db.inner().write_controller;
        let value = vec![b'x'; 1000];
        let fill = |n: u32| {
            let t = Instant::now();
            for i in 0..n {
                db.put(format!("k{i:05}"), &value).unwrap();
            }
            t.elapsed()
        };
        for _ in 0..2 {
            fill(10);
            db.flush().unwrap();
        }
        assert_eq!(wc.condition(), (Condition::Normal, None));
        let fast = fill(64);

        fill(10);
        db.flush().unwrap();
        assert_eq!(wc.condition(), (Condition::Delayed, Some(StallCause::L0Slowdown)));
        let rate = wc.delayed_write_rate();
        assert!(rate < 200 << 10, "near the stop trigger the rate drops: {rate}");
        let slow = fill(64);
        let expect = Duration::from_secs_f64(64.0 * 1000.0 / rate as f64);
        assert!(slow >= expect / 2, "64 KB took {slow:?} at {rate} B/s (free: {fast:?})");
        assert_eq!(db.property("talus.actual-delayed-write-rate").unwrap(), rate.to_string());

        for _ in 0..2 {
            fill(1);
            db.flush().unwrap();
        }
        assert_eq!(wc.condition(), (Condition::Stopped, Some(StallCause::L0Stop)));
        assert_eq!(db.property("talus.is-write-stopped").unwrap(), "1");
        let done = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, done) = (db.clone(), done.clone());
            std::thread::spawn(move || {
                db.put("late", "write").unwrap();
                done.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!done.load(Ordering::SeqCst), "a write went through a stop");

        // Let compaction catch up: L0 drains and the writer goes on.
        db.inner().state.lock().compactions_paused = false;
        db.inner().bg_cv.notify_all();
        writer.join().unwrap();
        assert!(done.load(Ordering::SeqCst));
        assert_eq!(wc.condition(), (Condition::Normal, None));
        assert_eq!(db.get("late").unwrap().as_deref(), Some(&b"write"[..]));
        let text = db.property("talus.stats").unwrap();
        let stalls = text.lines().find(|l| l.starts_with("Stalls(count)")).unwrap();
        let count = |name: &str| -> u64 {
            let i = stalls.find(&format!(" {name},")).unwrap();
            stalls[..i].rsplit(' ').next().unwrap().parse().unwrap()
        };
        assert!(count("level0_slowdown") >= 1, "{stalls}");
        assert!(count("level0_numfiles") >= 1, "{stalls}");
        assert!(!text.contains("Cumulative stall: 00:00:0.000"), "{text}");
    }
}
