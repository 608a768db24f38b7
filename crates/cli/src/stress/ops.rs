//! The workload threads of `talus stress`: random puts (merge operands with `--use_merge`),
//! deletes, delete_ranges, batches, gets,
//! iterators (forward, backward, zigzag; bounded or not), snapshot reads, flushes, range
//! compactions, ingestions of external SSTs (`ingest.rs`), and checkpoints and backups
//! (`copy.rs`) over keys `0..max_key`, each read checked against the expected state.
//!
//! Locking: every write takes the per-key locks of the keys it touches in ascending order
//! (so no two threads write one key at once and none deadlock), sets their pending bits, writes,
//! and commits them in the expected state before unlocking. Reads take the locks of the keys
//! they check, so what they read must match the expected state exactly; iterators and snapshot
//! reads record the expected state and take a snapshot under the locks, release them, and then
//! read through the snapshot while other threads write. The first failure stops every thread.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{Db, RawIter, ReadOptions, Snapshot, WriteBatch, WriteOptions};

use super::config::Config;
use super::expected::ExpectedState;
use super::families::Families;
use super::value::{check_value, key_bytes, key_id, make_value};
use super::Failure;

pub mod copy;
pub mod ingest;

/// Op kinds, in the order of `Config::mix` and then the extra ones.
const NAMES: [&str; 13] = [
    "gets",
    "puts",
    "deletes",
    "delranges",
    "batches",
    "iters",
    "snapshots",
    "verifies",
    "flushes",
    "compactions",
    "ingests",
    "checkpoints",
    "backups",
];
const VERIFY: usize = 7;
const FLUSH: usize = 8;
const COMPACT: usize = 9;
const INGEST: usize = 10;
const CHECKPOINT: usize = 11;
const BACKUP: usize = 12;

/// How many of each op the threads ran.
#[derive(Default)]
pub struct Counts([AtomicU64; 13]);

impl Counts {
    fn add(&self, op: usize) {
        if let Some(c) = self.0.get(op) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// Operations of every kind.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
    /// `gets=N puts=N ...`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = NAMES
            .iter()
            .zip(&self.0)
            .map(|(n, c)| format!("{n}={}", c.load(Ordering::Relaxed)))
            .collect();
        parts.join(" ")
    }
}

/// Runs `cfg.threads` workload threads until `ops_per_thread`, `duration` or a failure.
pub fn run_threads(
    db: &Db,
    fams: &Families,
    exp: &ExpectedState,
    cfg: &Config,
) -> Result<Counts, Failure> {
    let counts = Counts::default();
    let stop = AtomicBool::new(false);
    let first_failure: Mutex<Option<Failure>> = Mutex::new(None);
    let deadline = Instant::now() + Duration::from_secs(cfg.duration);
    let running = AtomicUsize::new(cfg.threads);
    let copies = copy::Copies::new(super::copies::scratch_dir(&cfg.expected_state));
    std::thread::scope(|s| {
        // Progress four times a second, so the crash driver knows how much a killed run did.
        s.spawn(|| {
            let mut last = Instant::now();
            while running.load(Ordering::Acquire) > 0 {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= Duration::from_millis(250) {
                    last = Instant::now();
                    println!("stress: progress ops={} {}", counts.total(), counts.line());
                }
            }
        });
        for t in 0..cfg.threads {
            let w = Worker {
                db,
                fams,
                exp,
                cfg,
                counts: &counts,
                copies: &copies,
                rng: StdRng::seed_from_u64(cfg.seed.wrapping_mul(1_000_003).wrapping_add(t as u64)),
                thread: t,
                buf: Vec::new(),
                snaps: Vec::new(),
                cursor: cfg.max_key * t as u64 / cfg.threads as u64,
                wopts: WriteOptions { sync: cfg.sync, disable_wal: cfg.disable_wal },
            };
            let (stop, first_failure, running) = (&stop, &first_failure, &running);
            s.spawn(move || {
                if let Err(f) = w.run(stop, deadline) {
                    stop.store(true, Ordering::Release);
                    let mut ff = first_failure.lock().unwrap_or_else(|p| p.into_inner());
                    ff.get_or_insert(f);
                }
                running.fetch_sub(1, Ordering::AcqRel);
            });
        }
    });
    match first_failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(f) => Err(f),
        None => Ok(counts),
    }
}

/// Snapshot reads to check later: the expected value of each key when the snapshot was taken.
struct SnapCheck {
    snap: Snapshot,
    keys: Vec<(u64, Option<u32>)>,
    due: u64,
}

struct Worker<'a> {
    db: &'a Db,
    /// The run's column families: which family each key lives in.
    fams: &'a Families,
    exp: &'a ExpectedState,
    cfg: &'a Config,
    counts: &'a Counts,
    /// The checkpoints' and backups' scratch directory and backup engine.
    copies: &'a copy::Copies,
    rng: StdRng,
    /// This worker's thread index (names its ingestion files apart from the others').
    thread: usize,
    /// Reused value buffer.
    buf: Vec<u8>,
    snaps: Vec<SnapCheck>,
    /// Next key of the periodic verification.
    cursor: u64,
    wopts: WriteOptions,
}

fn db_err(what: &str, e: talus::Error) -> Failure {
    Failure::Db(format!("{what}: {e}"))
}

impl Worker<'_> {
    fn run(mut self, stop: &AtomicBool, deadline: Instant) -> Result<(), Failure> {
        let mut i = 0u64;
        while i < self.cfg.ops_per_thread && !stop.load(Ordering::Acquire) {
            if i.is_multiple_of(64) && Instant::now() >= deadline {
                break;
            }
            self.check_due_snapshots(i, false)?;
            if self.cfg.verify_every > 0 && i % self.cfg.verify_every == self.cfg.verify_every - 1 {
                self.verify_chunk()?;
            }
            if one_in(&mut self.rng, self.cfg.flush_one_in) {
                self.db.flush().map_err(|e| db_err("flush", e))?;
                self.counts.add(FLUSH);
            }
            if one_in(&mut self.rng, self.cfg.compact_range_one_in) {
                let (a, b) = self.range(self.cfg.max_key.min(2000));
                self.db
                    .compact_range(Some(&key_bytes(a)), Some(&key_bytes(b)))
                    .map_err(|e| db_err("compact_range", e))?;
                self.counts.add(COMPACT);
            }
            if one_in(&mut self.rng, self.cfg.ingest_one_in) {
                self.ingest(i)?;
                self.counts.add(INGEST);
            }
            if one_in(&mut self.rng, self.cfg.checkpoint_one_in) {
                self.checkpoint(i)?;
                self.counts.add(CHECKPOINT);
            }
            if one_in(&mut self.rng, self.cfg.backup_one_in) {
                self.backup(i)?;
                self.counts.add(BACKUP);
            }
            let mut pick = self.rng.gen_range(0..100u32);
            let mut op = 0;
            while op < 6 && pick >= self.cfg.mix[op] {
                pick -= self.cfg.mix[op];
                op += 1;
            }
            match op {
                0 => {
                    let k = self.key();
                    let _g = self.exp.lock(k);
                    self.check_key(k, "get")?;
                }
                1 | 2 => {
                    let k = self.key();
                    self.write(&[k], Some(op == 1))?;
                }
                3 => {
                    let (a, b) = self.range(self.cfg.max_delrange);
                    let keys: Vec<u64> = (a..b).collect();
                    self.write(&keys, None)?;
                }
                4 => {
                    let n = self.rng.gen_range(2..=8);
                    let mut keys: Vec<u64> = (0..n).map(|_| self.key()).collect();
                    keys.sort_unstable();
                    keys.dedup();
                    self.write(&keys, Some(true))?;
                }
                5 => self.iterate()?,
                _ => self.take_snapshot(i)?,
            }
            self.counts.add(op);
            i += 1;
        }
        self.check_due_snapshots(u64::MAX, true)
    }

    fn key(&mut self) -> u64 {
        self.rng.gen_range(0..self.cfg.max_key)
    }

    /// A random range `[a, b)` of 1 to `max_len` keys.
    fn range(&mut self, max_len: u64) -> (u64, u64) {
        let a = self.key();
        let len = self.rng.gen_range(1..=max_len.max(1));
        (a, (a + len).min(self.cfg.max_key))
    }

    /// Writes `keys` (sorted, distinct) in one batch: `kind` Some(true) puts, Some(false)
    /// deletes, Some(true) with several keys a random put/delete mix, None one delete_range over
    /// the contiguous `keys`.
    fn write(&mut self, keys: &[u64], kind: Option<bool>) -> Result<(), Failure> {
        let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else { return Ok(()) };
        let _guards = lock_all(self.exp, keys);
        let mut batch = WriteBatch::new();
        match kind {
            None => {
                for &k in keys {
                    self.exp.begin(k, false).map_err(Failure::Db)?;
                }
                self.fams.delete_range(&mut batch, first, last + 1);
            }
            Some(put) => {
                for &k in keys {
                    let put = if keys.len() > 1 { self.rng.gen_bool(0.7) } else { put };
                    self.exp.begin(k, put).map_err(Failure::Db)?;
                    if put {
                        let v = self.exp.get(k).version().wrapping_add(1);
                        make_value(k, v, self.exp.value_size_max(), &mut self.buf);
                        self.fams.put(&mut batch, k, &self.buf, self.cfg.use_merge);
                    } else {
                        self.fams.delete(&mut batch, k);
                    }
                }
            }
        }
        self.db.write(batch, &self.wopts).map_err(|e| db_err("write", e))?;
        for &k in keys {
            self.exp.commit(k).map_err(Failure::Db)?;
        }
        Ok(())
    }

    /// Reads `k` (caller holds its lock) and compares with the expected state.
    fn check_key(&self, k: u64, what: &str) -> Result<(), Failure> {
        let slot = self.exp.get(k);
        let got =
            self.fams.get(self.db, k, &ReadOptions::default()).map_err(|e| db_err(what, e))?;
        let observed = self.decode(k, got.as_deref(), what)?;
        if observed != slot.value() {
            return Err(Failure::Verify(format!(
                "{what} key {k}: expected {:?} (version {}), found {observed:?}",
                slot.value(),
                slot.version()
            )));
        }
        Ok(())
    }

    fn decode(&self, k: u64, v: Option<&[u8]>, what: &str) -> Result<Option<u32>, Failure> {
        v.map(|v| check_value(k, v, self.exp.value_size_max()))
            .transpose()
            .map_err(|e| Failure::Verify(format!("{what} key {k}: bad value: {e}")))
    }

    /// Verifies the next 256 keys of this thread's rotating cursor, one lock at a time.
    fn verify_chunk(&mut self) -> Result<(), Failure> {
        for _ in 0..256.min(self.cfg.max_key) {
            let k = self.cursor;
            self.cursor = (self.cursor + 1) % self.cfg.max_key;
            let _g = self.exp.lock(k);
            self.check_key(k, "periodic verification")?;
        }
        self.counts.add(VERIFY);
        Ok(())
    }

    /// Records the expected values of a few keys and a snapshot, to be read back later.
    fn take_snapshot(&mut self, now: u64) -> Result<(), Failure> {
        let n = self.rng.gen_range(1..=4);
        let mut keys: Vec<u64> = (0..n).map(|_| self.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        let guards = lock_all(self.exp, &keys);
        let keys: Vec<(u64, Option<u32>)> =
            keys.iter().map(|&k| (k, self.exp.get(k).value())).collect();
        let snap = self.db.snapshot();
        drop(guards);
        let due = now + self.rng.gen_range(10..200);
        self.snaps.push(SnapCheck { snap, keys, due });
        Ok(())
    }

    fn check_due_snapshots(&mut self, now: u64, all: bool) -> Result<(), Failure> {
        while let Some(pos) = self.snaps.iter().position(|s| all || s.due <= now) {
            let s = self.snaps.swap_remove(pos);
            let opts = ReadOptions { snapshot: Some(s.snap.clone()), ..ReadOptions::default() };
            for &(k, want) in &s.keys {
                let got = self.fams.get(self.db, k, &opts).map_err(|e| db_err("get", e))?;
                let observed = self.decode(k, got.as_deref(), "snapshot get")?;
                if observed != want {
                    return Err(Failure::Verify(format!(
                        "snapshot {:?} get key {k}: expected {want:?} (as when it was taken), \
                         found {observed:?}",
                        s.snap
                    )));
                }
            }
        }
        Ok(())
    }

    /// Iterates over a random range of the family of its first key through a snapshot taken
    /// under the range's locks.
    fn iterate(&mut self) -> Result<(), Failure> {
        let (a, b) = self.range(100);
        let family = a % self.fams.count();
        let keys: Vec<u64> = (a..b).collect();
        let guards = lock_all(self.exp, &keys);
        let want: Vec<(u64, u32)> = keys
            .iter()
            .filter(|&&k| self.fams.holds(family, k))
            .filter_map(|&k| self.exp.get(k).value().map(|v| (k, v)))
            .collect();
        let snap = self.db.snapshot();
        drop(guards);
        let bounded = self.rng.gen_bool(0.5);
        let opts = ReadOptions {
            snapshot: Some(snap),
            iterate_lower_bound: bounded.then(|| key_bytes(a).to_vec()),
            iterate_upper_bound: bounded.then(|| key_bytes(b).to_vec()),
            ..ReadOptions::default()
        };
        let mut it =
            self.fams.raw_iter(self.db, family, &opts).map_err(|e| db_err("iterator", e))?;
        let mode = self.rng.gen_range(0..3);
        let what = ["forward scan", "backward scan", "zigzag"][mode];
        let ctx = Ctx { a, b, bounded, what, want: &want, snap: opts.snapshot.as_ref() };
        match mode {
            0 => {
                if bounded {
                    it.seek_to_first()
                } else {
                    it.seek(&key_bytes(a))
                }
                for idx in 0..=want.len() {
                    if !ctx.check_at(self, &it, idx as i64)? {
                        break;
                    }
                    it.next();
                }
            }
            1 => {
                if bounded {
                    it.seek_to_last()
                } else {
                    it.seek_for_prev(&key_bytes(b - 1))
                }
                for idx in (-1..want.len() as i64).rev() {
                    if !ctx.check_at(self, &it, idx)? {
                        break;
                    }
                    it.prev();
                }
            }
            _ => {
                let t = self.rng.gen_range(a..b);
                it.seek(&key_bytes(t));
                let mut idx = want.partition_point(|&(k, _)| k < t) as i64;
                for _ in 0..20 {
                    if !ctx.check_at(self, &it, idx)? {
                        break;
                    }
                    if self.rng.gen_bool(0.5) {
                        it.next();
                        idx += 1;
                    } else {
                        it.prev();
                        idx -= 1;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What an iterator over keys `[a, b)` must show.
struct Ctx<'a> {
    a: u64,
    b: u64,
    bounded: bool,
    what: &'static str,
    /// Keys present in `[a, b)` at the snapshot, with their versions, ascending.
    want: &'a [(u64, u32)],
    snap: Option<&'a Snapshot>,
}

impl Ctx<'_> {
    /// Checks that `it` is at `want[idx]`, or, for `idx` -1 or `want.len()`, that it has left
    /// the range (invalid if bounded). Returns whether the walk may go on.
    fn check_at(&self, w: &Worker<'_>, it: &RawIter, idx: i64) -> Result<bool, Failure> {
        let at = it.valid().then(|| key_id(it.key()));
        let inside = usize::try_from(idx).ok().and_then(|i| self.want.get(i));
        let fail = |detail: String| {
            Failure::Verify(format!(
                "{} over keys [{}, {}) (bounded: {}, {:?}), position {idx} of {:?}: {detail}",
                self.what, self.a, self.b, self.bounded, self.snap, self.want
            ))
        };
        if !it.valid() {
            it.status().map_err(|e| db_err(self.what, e))?;
        }
        match (inside, at) {
            (Some(&(k, v)), Some(Some(got))) if got == k => {
                let ver = w.decode(k, Some(it.value()), self.what)?;
                if ver != Some(v) {
                    return Err(fail(format!("key {k}: version {ver:?}, expected {v}")));
                }
                Ok(true)
            }
            (Some(&(k, _)), _) => Err(fail(format!("expected key {k}, found {at:?}"))),
            (None, None) => Ok(false),
            (None, Some(_)) if self.bounded => {
                Err(fail(format!("found {at:?} outside the bounds")))
            }
            (None, Some(Some(got))) if got >= self.b && idx >= 0 => Ok(false),
            (None, Some(Some(got))) if got < self.a && idx < 0 => Ok(false),
            (None, Some(_)) => Err(fail(format!("expected to leave the range, found {at:?}"))),
        }
    }
}

/// Takes the locks of `keys` (ascending) in order.
fn lock_all<'a>(exp: &'a ExpectedState, keys: &[u64]) -> Vec<MutexGuard<'a, ()>> {
    keys.iter().map(|&k| exp.lock(k)).collect()
}

fn one_in(rng: &mut StdRng, n: u64) -> bool {
    n > 0 && rng.gen_range(0..n) == 0
}
