//! Runs one benchmark step: the client threads, the interval reporter, and the summary.
//!
//! Called by [`super::run`] once per step with the shared backend. Threads are scoped to the
//! step: per client one loader (l.i0, l.i1), per table one index builder (l.x) or checksummer
//! (check), or per client one rate-limited writer plus one query thread running flat out (q
//! steps). All share one [`StepCounters`]; the first error stops every thread and is returned.
//! The reporter prints a line per interval and keeps the rows for `--results`.
//!
//! Row ids: each table has one [`IdRange`] behind a lock, shared by the clients writing it (one
//! each, or all of them with `--shared_table`); a writer takes the next `k` ids and the range of
//! old ids its commit deletes under the lock, then makes and writes its rows outside it.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::backend::{Checksum, IbenchBackend, Session};
use super::config::{Config, Step};
use super::metrics::{peak_rss_kb, rss_kb, ProcSnap, StepCounters};
use super::pagecache::PageCacheDropper;
use super::schema::{index_specs, Purchase, RowGen};
use super::summary::{p95_from_below, IntervalRow, Summary, P95_WINDOW_S};

/// Rows each query returns.
pub const QUERY_LIMIT: usize = 10;

/// What a step produced besides its summary.
#[derive(Default)]
pub struct StepOutput {
    /// The interval rows.
    pub intervals: Vec<IntervalRow>,
    /// The checksums (the check step).
    pub checksums: Vec<Checksum>,
}

/// Runs `step`; returns its summary and output. `pagecache` (if the page cache of the
/// database is being measured and dropped) gives the step's residency.
pub fn run_step(
    cfg: &Config,
    backend: &dyn IbenchBackend,
    step: Step,
    salt: u64,
    pagecache: Option<&PageCacheDropper>,
) -> Result<(Summary, StepOutput), String> {
    let counters = StepCounters::new(cfg.clients);
    let ids: Vec<Mutex<Option<IdRange>>> = (0..cfg.tables()).map(|_| Mutex::new(None)).collect();
    let sums: Mutex<Vec<(usize, Vec<Checksum>)>> = Mutex::new(Vec::new());
    let specs = index_specs(cfg.secondary_indexes, cfg.unique_index);
    if step == Step::LoadI0 {
        for t in 0..cfg.tables() {
            backend.create_table(t)?;
        }
    }
    let finished = AtomicBool::new(false);
    if let Some(p) = pagecache {
        p.take();
    }
    // Peak RSS of this step, not of the process: reset VmHWM (Linux 4.0+; where it fails the
    // column is the process peak).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let peak_vsz = std::sync::atomic::AtomicU64::new(vsz_kb());
    let before = ProcSnap::now();
    let reads_before = backend.point_reads();
    let dev_before = backend.device_reads();
    let start = Instant::now();
    let (intervals, windows) = std::thread::scope(|s| {
        let reporter =
            s.spawn(|| report_intervals(cfg, backend, &step.name(), &counters, &finished, start));
        s.spawn(|| {
            while !finished.load(Relaxed) {
                peak_vsz.fetch_max(vsz_kb(), Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut workers = Vec::new();
        for c in 0..cfg.clients {
            let w = Writer { cfg, backend, client: c, ids: &ids[cfg.table_of(c)], salt };
            let counters = &counters;
            let (specs, sums) = (&specs, &sums);
            let first_of_table = cfg.table_of(c) == c;
            match step {
                Step::LoadI0 => workers.push(s.spawn(move || w.load(cfg.num, 0, counters))),
                Step::LoadI1 => {
                    workers.push(s.spawn(move || {
                        w.load(cfg.num_i1, u64::from(cfg.delete_per_insert), counters)
                    }))
                }
                Step::LoadI2 => workers
                    .push(s.spawn(move || w.load(cfg.num_i2, cfg.deletes_per_insert_i2, counters))),
                Step::CreateIndexes if first_of_table => {
                    workers.push(s.spawn(move || backend.create_indexes(c, specs)))
                }
                Step::Check if first_of_table => workers.push(s.spawn(move || {
                    let r = backend.checksum(c, specs)?;
                    sums.lock().push((c, r));
                    Ok(())
                })),
                Step::CreateIndexes | Step::Check => {}
                Step::Query(rate) => {
                    workers.push(s.spawn(move || w.paced(rate, counters)));
                    workers.push(s.spawn(move || query_loop(cfg, backend, c, salt, counters)));
                }
            }
        }
        if let Step::Query(_) = step {
            let deadline = start + Duration::from_secs_f64(cfg.seconds);
            while !counters.stopped() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20).min(deadline - Instant::now()));
            }
            counters.stop.store(true, Relaxed);
        }
        for w in workers {
            match w.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => counters.fail(e),
                Err(_) => counters.fail("a client thread panicked".into()),
            }
        }
        finished.store(true, Relaxed);
        reporter.join().unwrap_or_default()
    });
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = counters.error.lock().take() {
        return Err(format!("step {}: {e}", step.name()));
    }
    let after = ProcSnap::now();
    let io = after.io.since(&before.io);
    let stats_text = backend.stats_text();
    let engine_stats = stats_text.as_deref().map(super::engine_stats::parse).unwrap_or_default();
    let summary = Summary {
        step: step.name(),
        engine: cfg.engine.name().into(),
        secs,
        inserts: counters.inserts.load(Relaxed),
        deletes: counters.deletes.load(Relaxed),
        queries: counters.queries.load(Relaxed),
        insert_hist: counters.insert_hist.snapshot(),
        query_hist: counters.query_hist.snapshot(),
        syscr: io.syscr,
        rchar: io.rchar,
        wchar: io.wchar,
        read_bytes: io.read_bytes,
        write_bytes: io.write_bytes,
        cpu_us: after.cpu_us.saturating_sub(before.cpu_us),
        point_reads: match (reads_before, backend.point_reads()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        db_bytes: backend.disk_size(),
        peak_rss_kb: peak_rss_kb(),
        rss_kb: rss_kb(),
        peak_vsz_kb: peak_vsz.load(Relaxed).max(vsz_kb()),
        cache_bytes: cfg.cache_size,
        stats_text,
        engine_stats,
        ips_p95: p95_from_below(&windows),
        device_reads: match (dev_before, backend.device_reads()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        page_cache: pagecache.map(|p| {
            let r = p.take();
            (r.max_bytes, r.avg_bytes)
        }),
    };
    let mut sums = sums.into_inner();
    sums.sort_by_key(|(t, _)| *t);
    let checksums = sums.into_iter().flat_map(|(_, c)| c).collect();
    Ok((summary, StepOutput { intervals, checksums }))
}

/// Virtual size of the process now (VmSize), KiB.
fn vsz_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Where a table's next row ids come from and which old rows a write deletes.
struct IdRange {
    /// Smallest id still in the table.
    lo: i64,
    /// Next id to insert.
    next: i64,
}

impl IdRange {
    fn of(s: &mut dyn Session) -> Result<IdRange, String> {
        Ok(match s.pk_bounds()? {
            Some((lo, hi)) => IdRange { lo, next: hi + 1 },
            None => IdRange { lo: 1, next: 1 },
        })
    }

    /// Takes `k` new ids and the range of old ids to delete with them (empty unless
    /// `deletes_per_insert`): `(first new id, deleted range)`.
    fn take(&mut self, k: u64, deletes_per_insert: u64) -> (i64, std::ops::Range<i64>) {
        let first = self.next;
        self.next += k as i64;
        let del = if deletes_per_insert > 0 {
            let end = (self.lo + (k * deletes_per_insert) as i64).min(first);
            let r = self.lo..end.max(self.lo);
            self.lo = r.end;
            r
        } else {
            self.lo..self.lo
        };
        (first, del)
    }
}

/// One client's writes: its session's table, that table's ids, the row generator.
struct Writer<'a> {
    cfg: &'a Config,
    backend: &'a dyn IbenchBackend,
    client: usize,
    ids: &'a Mutex<Option<IdRange>>,
    salt: u64,
}

impl Writer<'_> {
    fn session(&self, concurrent: usize) -> Result<Box<dyn Session>, String> {
        self.backend.session(self.cfg.table_of(self.client), concurrent)
    }

    /// The next `k` rows for `s`'s table and the old ids to delete with them.
    fn batch(
        &self,
        s: &mut dyn Session,
        gen: &RowGen,
        k: u64,
        deletes_per_insert: u64,
    ) -> Result<(Vec<Purchase>, std::ops::Range<i64>), String> {
        let (first, del) = {
            let mut ids = self.ids.lock();
            if ids.is_none() {
                *ids = Some(IdRange::of(s)?);
            }
            match ids.as_mut() {
                Some(r) => r.take(k, deletes_per_insert),
                None => return Err("no id range".into()),
            }
        };
        Ok(((0..k as i64).map(|i| gen.row(first + i)).collect(), del))
    }

    fn load(&self, n: u64, deletes_per_insert: u64, counters: &StepCounters) -> Result<(), String> {
        let mut s = self.session(self.cfg.clients)?;
        let gen = RowGen::new(self.cfg, self.client, self.salt);
        let mut done = 0;
        while done < n && !counters.stopped() {
            let k = (self.cfg.rows_per_commit as u64).min(n - done);
            let (rows, del) = self.batch(s.as_mut(), &gen, k, deletes_per_insert)?;
            timed_write(s.as_mut(), self.client, &rows, del, counters)?;
            done += k;
        }
        Ok(())
    }

    /// Inserts `rate` rows/s in commits of `rate/10` rows (at least 1, at most
    /// --rows_per_commit), each commit scheduled on a fixed timeline so a slow commit is caught
    /// up, not skipped.
    fn paced(&self, rate: u32, counters: &StepCounters) -> Result<(), String> {
        let mut s = self.session(2 * self.cfg.clients)?;
        let gen = RowGen::new(self.cfg, self.client, self.salt);
        let batch = (u64::from(rate) / 10).clamp(1, self.cfg.rows_per_commit as u64);
        let deletes = u64::from(self.cfg.delete_per_insert);
        let start = Instant::now();
        let mut written = 0u64;
        while !counters.stopped() {
            let due = start + Duration::from_secs_f64(written as f64 / f64::from(rate));
            let now = Instant::now();
            if due > now {
                std::thread::sleep((due - now).min(Duration::from_millis(50)));
                continue;
            }
            let (rows, del) = self.batch(s.as_mut(), &gen, batch, deletes)?;
            timed_write(s.as_mut(), self.client, &rows, del, counters)?;
            written += batch;
        }
        Ok(())
    }
}

fn timed_write(
    s: &mut dyn Session,
    client: usize,
    rows: &[Purchase],
    del: std::ops::Range<i64>,
    counters: &StepCounters,
) -> Result<(), String> {
    let deleted = (del.end - del.start).max(0) as u64;
    let t = Instant::now();
    s.write(rows, del)?;
    counters.record_commit(client, rows.len() as u64, deleted, t.elapsed().as_micros() as u64);
    Ok(())
}

fn query_loop(
    cfg: &Config,
    backend: &dyn IbenchBackend,
    client: usize,
    salt: u64,
    counters: &StepCounters,
) -> Result<(), String> {
    let mut s = backend.session(cfg.table_of(client), 2 * cfg.clients)?;
    let mut gen = RowGen::new(cfg, client, salt ^ 0x5155_4552_5900);
    while !counters.stopped() {
        let (index, start) = gen.query();
        let t = Instant::now();
        let n = s.query(index, start, QUERY_LIMIT)?;
        counters.record_query(n as u64, t.elapsed().as_micros() as u64);
    }
    Ok(())
}

/// Prints one line per interval until `finished`; returns the rows and the inserts/s of each
/// complete [`P95_WINDOW_S`]-second window (for `ips_p95`).
fn report_intervals(
    cfg: &Config,
    backend: &dyn IbenchBackend,
    step: &str,
    counters: &StepCounters,
    finished: &AtomicBool,
    start: Instant,
) -> (Vec<IntervalRow>, Vec<f64>) {
    println!(
        "{step}: {:>8} {:>10} {:>10} {:>12} {:>12}",
        "secs", "ips", "qps", "max_ins_ms", "max_q_ms"
    );
    let interval = Duration::from_secs_f64(cfg.interval);
    let mut rows = Vec::new();
    let (last_i, last_q, last_d) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let mut last_client = vec![0u64; counters.client_inserts.len()];
    let mut last_t = start;
    let engine_state = || crate::engine_state::sample(&|name: &str| backend.property(name));
    let mut last_state = engine_state();
    let mut tick = start + interval;
    let (mut windows, mut window_start, mut window_ins) = (Vec::new(), start, 0u64);
    loop {
        let done = finished.load(Relaxed);
        let now = Instant::now();
        if !done && now < tick {
            std::thread::sleep((tick - now).min(Duration::from_millis(20)));
            continue;
        }
        let ins = counters.inserts.load(Relaxed);
        let q = counters.queries.load(Relaxed);
        let d = counters.deletes.load(Relaxed);
        let client: Vec<u64> = counters.client_inserts.iter().map(|c| c.load(Relaxed)).collect();
        let in_window = now.duration_since(window_start).as_secs_f64();
        if in_window >= P95_WINDOW_S {
            windows.push((ins - window_ins) as f64 / in_window);
            (window_start, window_ins) = (now, ins);
        }
        let dt = now.duration_since(last_t).as_secs_f64();
        // The last, partial interval counts only if it is at least half an interval long (a
        // sliver after the deadline would show a false dip) or the step was shorter than one
        // interval (so a short step still has a point).
        if !done || (dt > 0.001 && (dt >= 0.5 * cfg.interval || rows.is_empty())) {
            let row = IntervalRow {
                elapsed_s: now.duration_since(start).as_secs_f64(),
                ips: (ins - last_i.swap(ins, Relaxed)) as f64 / dt.max(1e-9),
                qps: (q - last_q.swap(q, Relaxed)) as f64 / dt.max(1e-9),
                max_insert_ms: counters.interval_max_insert_us.swap(0, Relaxed) as f64 / 1000.0,
                max_query_ms: counters.interval_max_query_us.swap(0, Relaxed) as f64 / 1000.0,
                dps: (d - last_d.swap(d, Relaxed)) as f64 / dt.max(1e-9),
                client_ips: client
                    .iter()
                    .zip(&last_client)
                    .map(|(n, last)| n.saturating_sub(*last) as f64 / dt.max(1e-9))
                    .collect(),
                engine: {
                    let now_state = engine_state();
                    let cols = crate::engine_state::between(&last_state, &now_state);
                    last_state = now_state;
                    cols
                },
            };
            println!(
                "{step}: {:>8.1} {:>10.0} {:>10.0} {:>12.3} {:>12.3}",
                row.elapsed_s, row.ips, row.qps, row.max_insert_ms, row.max_query_ms
            );
            rows.push(row);
            last_client = client;
        }
        if done {
            break;
        }
        last_t = now;
        tick += interval;
    }
    (rows, windows)
}
