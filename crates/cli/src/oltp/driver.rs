//! Timed multi-threaded runs with a report every interval, shared by `talus sysbench` and
//! `talus tpcc`.
//!
//! [`run_timed`] starts `threads` workers (scoped threads); each builds its worker state (its
//! session) and then calls it in a loop until the time is up, the plan's event count is done
//! (sysbench's `--events`: a shared ticket counter, so exactly that many events start), or any
//! worker fails. Each worker thread's own CPU (`RUSAGE_THREAD`, [`super::cpu`]) from its first
//! event to its last is summed into [`Totals::worker_cpu`]. A worker
//! records each event's latency by kind and any counters (queries, retries, ...) in its own
//! [`Recorder`], behind a mutex that only it and the reporter take: the reporter (the calling
//! thread) takes each one once per interval to move the interval's part out, so recording is
//! an uncontended lock and a few adds. Latencies go into db_bench's RocksDB-style
//! [`Histogram`] (microseconds), whose percentiles the reports print.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::cpu::{self, Cpu};
use crate::db_bench::histogram::Histogram;

/// One thread's latencies and counters: the current interval's and the whole run's.
pub struct Recorder {
    interval: Vec<Histogram>,
    total: Vec<Histogram>,
    icount: Vec<u64>,
    tcount: Vec<u64>,
    /// Microseconds spent inside events.
    busy_us: u64,
    /// The thread's CPU over its loop (None: not measurable here).
    cpu: Option<Cpu>,
    /// When the thread's loop ended.
    ended: Option<Instant>,
}

impl Recorder {
    fn new(kinds: usize, counters: usize) -> Recorder {
        Recorder {
            interval: vec![Histogram::default(); kinds],
            total: vec![Histogram::default(); kinds],
            icount: vec![0; counters],
            tcount: vec![0; counters],
            busy_us: 0,
            cpu: None,
            ended: None,
        }
    }

    /// Records one event of kind `kind` that took `us` microseconds.
    pub fn event(&mut self, kind: usize, us: u64) {
        if let (Some(i), Some(t)) = (self.interval.get_mut(kind), self.total.get_mut(kind)) {
            i.add(us);
            t.add(us);
        }
        self.busy_us += us;
    }

    /// Adds `n` to counter `c`.
    pub fn add(&mut self, c: usize, n: u64) {
        if let (Some(i), Some(t)) = (self.icount.get_mut(c), self.tcount.get_mut(c)) {
            *i += n;
            *t += n;
        }
    }

    fn take_interval(&mut self, into: &mut Stats) {
        for (a, b) in into.hists.iter_mut().zip(&mut self.interval) {
            a.merge(b);
            *b = Histogram::default();
        }
        for (a, b) in into.counts.iter_mut().zip(&mut self.icount) {
            *a += *b;
            *b = 0;
        }
    }
}

/// Merged latencies per kind and counters, over an interval or the whole run.
#[derive(Clone)]
pub struct Stats {
    /// Latency (µs) per event kind.
    pub hists: Vec<Histogram>,
    /// The counters.
    pub counts: Vec<u64>,
}

impl Stats {
    fn new(kinds: usize, counters: usize) -> Stats {
        Stats { hists: vec![Histogram::default(); kinds], counts: vec![0; counters] }
    }

    /// Events of every kind.
    pub fn events(&self) -> u64 {
        self.hists.iter().map(|h| h.count()).sum()
    }

    /// All kinds' latencies in one histogram.
    pub fn all(&self) -> Histogram {
        let mut h = Histogram::default();
        for x in &self.hists {
            h.merge(x);
        }
        h
    }
}

/// One interval's report.
pub struct Interval<'a> {
    /// Seconds since the start, at the interval's end.
    pub elapsed: f64,
    /// The interval's length in seconds.
    pub secs: f64,
    /// What happened in it.
    pub stats: &'a Stats,
}

/// The whole run.
pub struct Totals {
    /// Wall seconds from start to the last worker's end.
    pub secs: f64,
    /// Everything merged.
    pub stats: Stats,
    /// Per thread: events and seconds spent in them (sysbench's "threads fairness").
    pub per_thread: Vec<(u64, f64)>,
    /// The worker threads' CPU, summed (None where a thread's CPU cannot be read).
    pub worker_cpu: Option<Cpu>,
}

/// The shape of a run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Worker threads.
    pub threads: usize,
    /// Seconds to run (0: no time limit; then `events` must be set).
    pub secs: f64,
    /// Events to run, over all threads (0: no limit; then `secs` must be set).
    pub events: u64,
    /// Seconds between interval reports (0: none).
    pub interval: f64,
    /// Event kinds (histograms).
    pub kinds: usize,
    /// Counters.
    pub counters: usize,
}

/// Runs the workers for `plan.secs` seconds or `plan.events` events, whichever ends first. `make(i)` builds thread `i`'s worker; a worker
/// call does one event and records it in the recorder it is given. `on_interval` is called on
/// the calling thread after each full interval. The first error (building or running a
/// worker) stops every thread and is returned.
pub fn run_timed<W>(
    plan: Plan,
    make: impl Fn(usize) -> Result<W, String> + Sync,
    mut on_interval: impl FnMut(&Interval<'_>),
) -> Result<Totals, String>
where
    W: FnMut(&Mutex<Recorder>) -> Result<(), String>,
{
    let recs: Vec<Mutex<Recorder>> =
        (0..plan.threads).map(|_| Mutex::new(Recorder::new(plan.kinds, plan.counters))).collect();
    let stop = AtomicBool::new(false);
    let tickets = AtomicU64::new(0);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let fail = |e: String| {
        error.lock().get_or_insert(e);
        stop.store(true, Ordering::Relaxed);
    };
    let start = Instant::now();
    // No time limit: a deadline far enough away never to come (an event count ends the run).
    let limit = if plan.secs > 0.0 { plan.secs } else { 1e9 };
    let deadline = start + Duration::from_secs_f64(limit);
    std::thread::scope(|s| {
        for (i, rec) in recs.iter().enumerate() {
            let (make, stop, fail, tickets) = (&make, &stop, &fail, &tickets);
            s.spawn(move || {
                let mut w = match make(i) {
                    Ok(w) => w,
                    Err(e) => return fail(e),
                };
                let c0 = cpu::thread();
                while !stop.load(Ordering::Relaxed) {
                    if plan.events > 0 && tickets.fetch_add(1, Ordering::Relaxed) >= plan.events {
                        // The last ticket is taken: the run ends when the events in flight do.
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                    if let Err(e) = w(rec) {
                        return fail(e);
                    }
                }
                let cpu = c0.zip(cpu::thread()).map(|(a, b)| b.since(&a));
                let mut r = rec.lock();
                r.cpu = cpu;
                r.ended = Some(Instant::now());
            });
        }
        let mut last = start;
        let mut n = 1u32;
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let tick = if plan.interval > 0.0 {
                (start + Duration::from_secs_f64(plan.interval * f64::from(n))).min(deadline)
            } else {
                deadline
            };
            if now < tick {
                std::thread::sleep((tick - now).min(Duration::from_millis(50)));
                continue;
            }
            if plan.interval > 0.0 && tick < deadline {
                let mut st = Stats::new(plan.kinds, plan.counters);
                for r in &recs {
                    r.lock().take_interval(&mut st);
                }
                let at = Instant::now();
                on_interval(&Interval {
                    elapsed: (tick - start).as_secs_f64(),
                    secs: (at - last).as_secs_f64(),
                    stats: &st,
                });
                last = at;
                n += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    // From the start to the last worker's end (the events in flight at the stop included; not
    // the reporter's wake-up after it).
    let end = recs.iter().filter_map(|r| r.lock().ended).max().unwrap_or_else(Instant::now);
    let secs = (end - start).as_secs_f64();
    if let Some(e) = error.lock().take() {
        return Err(e);
    }
    let mut stats = Stats::new(plan.kinds, plan.counters);
    let mut per_thread = Vec::new();
    let mut worker_cpu = Some(Cpu::default());
    for r in recs {
        let r = r.into_inner();
        worker_cpu = worker_cpu.zip(r.cpu).map(|(a, b)| a.plus(&b));
        let mut ev = 0;
        for (a, b) in stats.hists.iter_mut().zip(&r.total) {
            a.merge(b);
            ev += b.count();
        }
        for (a, b) in stats.counts.iter_mut().zip(&r.tcount) {
            *a += b;
        }
        per_thread.push((ev, r.busy_us as f64 / 1e6));
    }
    Ok(Totals { secs, stats, per_thread, worker_cpu })
}

/// Times `f` in microseconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_micros() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_and_totals_add_up() {
        let plan = Plan { threads: 2, secs: 0.5, events: 0, interval: 0.1, kinds: 2, counters: 1 };
        let mut seen = Vec::new();
        let t = run_timed(
            plan,
            |i| {
                Ok(move |r: &Mutex<Recorder>| {
                    std::thread::sleep(Duration::from_millis(2));
                    let mut r = r.lock();
                    r.event(i, 2000);
                    r.add(0, 3);
                    Ok(())
                })
            },
            |iv| seen.push((iv.elapsed, iv.stats.events(), iv.stats.counts[0])),
        )
        .unwrap();
        assert!((3..=5).contains(&seen.len()), "{} intervals", seen.len());
        assert!(seen.iter().all(|s| s.1 > 0 && s.2 == 3 * s.1), "{seen:?}");
        let events = t.stats.events();
        assert_eq!(t.stats.counts[0], 3 * events);
        assert_eq!(t.per_thread.iter().map(|p| p.0).sum::<u64>(), events);
        assert!(t.stats.hists[0].count() > 0 && t.stats.hists[1].count() > 0);
        assert!(seen.iter().map(|s| s.1).sum::<u64>() <= events);
    }

    #[test]
    fn an_event_count_runs_exactly_that_many_events() {
        for threads in [1, 3] {
            let plan =
                Plan { threads, secs: 0.0, events: 1000, interval: 0.0, kinds: 1, counters: 0 };
            let t = run_timed(
                plan,
                |_| {
                    Ok(move |r: &Mutex<Recorder>| {
                        r.lock().event(0, 1);
                        Ok(())
                    })
                },
                |_| {},
            )
            .unwrap();
            assert_eq!(t.stats.events(), 1000, "{threads} thread(s)");
            assert!(t.secs < 5.0, "no time limit, but the events ran out: {}", t.secs);
            if cfg!(target_os = "linux") {
                assert!(t.worker_cpu.is_some(), "RUSAGE_THREAD on Linux");
            }
        }
        // With a time limit too, whichever comes first ends the run.
        let plan =
            Plan { threads: 1, secs: 0.2, events: u64::MAX, interval: 0.0, kinds: 1, counters: 0 };
        let t0 = Instant::now();
        let t = run_timed(
            plan,
            |_| {
                Ok(|r: &Mutex<Recorder>| {
                    std::thread::sleep(Duration::from_millis(1));
                    r.lock().event(0, 1000);
                    Ok(())
                })
            },
            |_| {},
        )
        .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5) && t.stats.events() > 0);
    }

    #[test]
    fn the_first_error_stops_the_run() {
        let plan = Plan { threads: 2, secs: 30.0, events: 0, interval: 0.0, kinds: 1, counters: 0 };
        let t0 = Instant::now();
        let r = run_timed(
            plan,
            |i| {
                let mut n = 0;
                Ok(move |_: &Mutex<Recorder>| {
                    n += 1;
                    if i == 1 && n == 100 {
                        return Err("boom".to_string());
                    }
                    Ok(())
                })
            },
            |_| {},
        );
        assert_eq!(r.err().as_deref(), Some("boom"));
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}
