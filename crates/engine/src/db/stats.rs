//! Counters the database keeps for `property("talus.stats")`: per-level compaction work,
//! flushes, writes, stalls by cause.
//!
//! Who updates: flush (`flush.rs`) through [`DbStats::record_flush`], compaction jobs
//! (`compact.rs`) through [`DbStats::record_compaction`], the write leader (`write.rs`) for the
//! write and WAL counters and stall time, and the write controller (`write_controller.rs`) for
//! the stall counts. All counters are relaxed atomics, read without locks; a reader may see one
//! job's counters half-applied, never torn values. The interval baseline (what the `Int` row and
//! the `Interval` lines subtract) sits behind its own small mutex and moves forward on each
//! `talus.stats` dump, as RocksDB's does.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use parking_lot::Mutex;

pub(crate) mod format;

/// Why writes were stalled, in the order of RocksDB's `Stalls(count)` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCause {
    /// Delayed: L0 reached `level0_slowdown_writes_trigger`.
    L0Slowdown = 0,
    /// Delayed by L0 while an L0 compaction was running (also counted in `L0Slowdown`).
    L0SlowdownWithCompaction = 1,
    /// Stopped: L0 reached `level0_stop_writes_trigger`.
    L0Stop = 2,
    /// Stopped by L0 while an L0 compaction was running (also counted in `L0Stop`).
    L0StopWithCompaction = 3,
    /// Stopped: pending compaction bytes reached `hard_pending_compaction_bytes_limit`.
    PendingStop = 4,
    /// Delayed: pending compaction bytes reached `soft_pending_compaction_bytes_limit`.
    PendingSlowdown = 5,
    /// Stopped: `max_write_buffer_number` memtables wait for flush.
    MemtableStop = 6,
    /// Delayed: writing to the last allowed memtable (`max_write_buffer_number > 3`).
    MemtableSlowdown = 7,
}

/// RocksDB's names for the causes, as printed in the `Stalls(count)` line.
pub(crate) const STALL_NAMES: [&str; 8] = [
    "level0_slowdown",
    "level0_slowdown_with_compaction",
    "level0_numfiles",
    "level0_numfiles_with_compaction",
    "stop for pending_compaction_bytes",
    "slowdown for pending_compaction_bytes",
    "memtable_compaction",
    "memtable_slowdown",
];

/// Work done at one output level (or by one kind of job).
#[derive(Default)]
pub(crate) struct LevelStats {
    pub bytes_read_input_level: AtomicU64,
    pub bytes_read_output_level: AtomicU64,
    pub bytes_written: AtomicU64,
    pub bytes_moved: AtomicU64,
    pub micros: AtomicU64,
    pub count: AtomicU64,
    pub keys_in: AtomicU64,
    pub keys_dropped: AtomicU64,
    pub blob_read: AtomicU64,
    pub blob_written: AtomicU64,
}

/// A plain copy of [`LevelStats`] (what the table prints).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LevelSnap {
    /// Bytes read from the input level (RocksDB's `Rn`).
    pub rn: u64,
    /// Bytes read from the output level (`Rnp1`).
    pub rnp1: u64,
    /// Bytes written.
    pub written: u64,
    /// Bytes moved by trivial moves.
    pub moved: u64,
    /// Wall time of the jobs.
    pub micros: u64,
    /// Number of jobs.
    pub count: u64,
    /// Entries read.
    pub keys_in: u64,
    /// Entries dropped.
    pub keys_dropped: u64,
    /// Bytes read from blob files (garbage collection; RocksDB's `Rblob`).
    pub blob_read: u64,
    /// Bytes written to blob files (RocksDB's `Wblob`; not in `written`).
    pub blob_written: u64,
}

impl LevelSnap {
    /// Field-wise sum.
    pub fn add(&mut self, o: &LevelSnap) {
        self.rn += o.rn;
        self.rnp1 += o.rnp1;
        self.written += o.written;
        self.moved += o.moved;
        self.micros += o.micros;
        self.count += o.count;
        self.keys_in += o.keys_in;
        self.keys_dropped += o.keys_dropped;
        self.blob_read += o.blob_read;
        self.blob_written += o.blob_written;
    }

    /// Field-wise difference (saturating: a baseline is never ahead of the counters).
    pub fn sub(&self, o: &LevelSnap) -> LevelSnap {
        LevelSnap {
            rn: self.rn.saturating_sub(o.rn),
            rnp1: self.rnp1.saturating_sub(o.rnp1),
            written: self.written.saturating_sub(o.written),
            moved: self.moved.saturating_sub(o.moved),
            micros: self.micros.saturating_sub(o.micros),
            count: self.count.saturating_sub(o.count),
            keys_in: self.keys_in.saturating_sub(o.keys_in),
            keys_dropped: self.keys_dropped.saturating_sub(o.keys_dropped),
            blob_read: self.blob_read.saturating_sub(o.blob_read),
            blob_written: self.blob_written.saturating_sub(o.blob_written),
        }
    }
}

impl LevelStats {
    /// Copies the counters.
    pub fn snap(&self) -> LevelSnap {
        LevelSnap {
            rn: self.bytes_read_input_level.load(Relaxed),
            rnp1: self.bytes_read_output_level.load(Relaxed),
            written: self.bytes_written.load(Relaxed),
            moved: self.bytes_moved.load(Relaxed),
            micros: self.micros.load(Relaxed),
            count: self.count.load(Relaxed),
            keys_in: self.keys_in.load(Relaxed),
            keys_dropped: self.keys_dropped.load(Relaxed),
            blob_read: self.blob_read.load(Relaxed),
            blob_written: self.blob_written.load(Relaxed),
        }
    }

    fn record(&self, s: &LevelSnap) {
        self.bytes_read_input_level.fetch_add(s.rn, Relaxed);
        self.bytes_read_output_level.fetch_add(s.rnp1, Relaxed);
        self.bytes_written.fetch_add(s.written, Relaxed);
        self.bytes_moved.fetch_add(s.moved, Relaxed);
        self.micros.fetch_add(s.micros, Relaxed);
        self.count.fetch_add(s.count, Relaxed);
        self.keys_in.fetch_add(s.keys_in, Relaxed);
        self.keys_dropped.fetch_add(s.keys_dropped, Relaxed);
        self.blob_read.fetch_add(s.blob_read, Relaxed);
        self.blob_written.fetch_add(s.blob_written, Relaxed);
    }
}

/// The DB-wide counters of the `** DB Stats **` block, copied.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DbSnap {
    /// Writers committed (`Db::write` calls).
    pub writes: u64,
    /// Keys (batch entries) committed.
    pub keys: u64,
    /// Write groups committed (one per leader).
    pub groups: u64,
    /// Bytes of the committed batches.
    pub ingest: u64,
    /// Writers that went through the WAL.
    pub wal_writes: u64,
    /// WAL fsyncs.
    pub wal_syncs: u64,
    /// Bytes appended to the WAL.
    pub wal_bytes: u64,
    /// Time writers spent stalled.
    pub stall_micros: u64,
    /// Stall counts by [`StallCause`].
    pub stalls: [u64; 8],
}

/// Baseline of the previous dump, for the interval rows.
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    /// When the previous dump was taken.
    pub at: Instant,
    /// Per-level counters then.
    pub levels: Vec<LevelSnap>,
    /// Flush counters then.
    pub flush: LevelSnap,
    /// DB counters then.
    pub db: DbSnap,
}

/// What [`DbStats::family_snaps`] returns: a family's counters at `at` and at its previous
/// dump.
pub(crate) struct FamilyDump {
    pub at: Instant,
    pub levels: Vec<LevelSnap>,
    pub flush: LevelSnap,
    pub prev: (Instant, Vec<LevelSnap>, LevelSnap),
}

/// Every counter of the database.
pub(crate) struct DbStats {
    /// When the database was opened (for `Uptime`).
    pub started: Instant,
    /// Flush and compaction work by output level (flushes count at L0).
    pub levels: Vec<LevelStats>,
    /// Flush work alone (the `High` priority row).
    pub flush: LevelStats,
    pub user_bytes_written: AtomicU64,
    pub user_writes: AtomicU64,
    pub user_keys: AtomicU64,
    pub write_groups: AtomicU64,
    pub wal_writes: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub stall_micros: AtomicU64,
    pub stalls: [AtomicU64; 8],
    /// The previous dump's counters.
    pub baseline: Mutex<Option<Baseline>>,
    /// Flush and compaction work per column family (by id), for the family's
    /// `Compaction Stats [NAME]` table (`property_cf`); `levels` and `flush` above are their sum.
    /// Updated once per job, under this small lock.
    pub families: Mutex<BTreeMap<u32, FamilyStats>>,
}

/// One column family's flush and compaction counters, with the baseline of its previous
/// `talus.stats`/`talus.cfstats` dump (RocksDB keeps the interval per family).
#[derive(Debug, Clone, Default)]
pub(crate) struct FamilyStats {
    /// Per output level (flushes count at L0).
    pub levels: Vec<LevelSnap>,
    /// Flushes alone.
    pub flush: LevelSnap,
    /// The counters at the previous dump, and when it was taken (`None`: since open).
    pub baseline: Option<(Instant, Vec<LevelSnap>, LevelSnap)>,
}

impl DbStats {
    pub fn new(num_levels: usize) -> Self {
        DbStats {
            started: Instant::now(),
            levels: (0..num_levels).map(|_| LevelStats::default()).collect(),
            flush: LevelStats::default(),
            user_bytes_written: AtomicU64::new(0),
            user_writes: AtomicU64::new(0),
            user_keys: AtomicU64::new(0),
            write_groups: AtomicU64::new(0),
            wal_writes: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            wal_syncs: AtomicU64::new(0),
            stall_micros: AtomicU64::new(0),
            stalls: Default::default(),
            baseline: Mutex::new(None),
            families: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn add(c: &AtomicU64, v: u64) {
        c.fetch_add(v, Relaxed);
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Relaxed)
    }

    /// Counts one stall of `cause`.
    pub fn count_stall(&self, cause: StallCause) {
        self.stalls[cause as usize].fetch_add(1, Relaxed);
    }

    /// Records a flush of family `cf` of `keys` entries that wrote `bytes` to its L0 table and
    /// `blob_bytes` to blob files in `micros` (RocksDB counts the memtable's entries in L0's
    /// KeyIn).
    pub fn record_flush(&self, cf: u32, bytes: u64, blob_bytes: u64, keys: u64, micros: u64) {
        let s = LevelSnap {
            written: bytes,
            blob_written: blob_bytes,
            keys_in: keys,
            micros,
            count: 1,
            ..Default::default()
        };
        self.flush.record(&s);
        if let Some(l) = self.levels.first() {
            l.record(&s);
        }
        let mut fams = self.families.lock();
        let f = fams.entry(cf).or_default();
        f.flush.add(&s);
        self.family_level(f, 0).add(&s);
    }

    /// Records a compaction (or trivial move) of family `cf` whose output went to
    /// `output_level`.
    pub fn record_compaction(&self, cf: u32, output_level: usize, s: &LevelSnap) {
        if s.moved == 0 {
            crate::statistics::record(crate::statistics::Hist::Compaction, s.micros);
        }
        // A family created after the open may have more levels than the database-wide rows.
        if let Some(l) = self.levels.get(output_level) {
            l.record(s);
        }
        let mut fams = self.families.lock();
        self.family_level(fams.entry(cf).or_default(), output_level).add(s);
    }

    /// Level `level`'s counters of family `f`, its levels made as many as the database's.
    fn family_level<'a>(&self, f: &'a mut FamilyStats, level: usize) -> &'a mut LevelSnap {
        let n = self.levels.len().max(level + 1);
        if f.levels.len() < n {
            f.levels.resize(n, LevelSnap::default());
        }
        &mut f.levels[level]
    }

    /// Family `cf`'s per-level and flush counters now, and those of its previous dump (and
    /// when that was: open, for the first), which become the current ones when `advance`.
    pub fn family_snaps(&self, cf: u32, advance: bool) -> FamilyDump {
        let mut fams = self.families.lock();
        let f = fams.entry(cf).or_default();
        let n = self.levels.len();
        let mut levels = f.levels.clone();
        levels.resize(n.max(levels.len()), LevelSnap::default());
        let prev = f.baseline.clone().unwrap_or_else(|| {
            (self.started, vec![LevelSnap::default(); levels.len()], LevelSnap::default())
        });
        let now = Instant::now();
        if advance {
            f.baseline = Some((now, levels.clone(), f.flush));
        }
        FamilyDump { at: now, levels, flush: f.flush, prev }
    }

    /// Per-level counters.
    pub fn level_snaps(&self) -> Vec<LevelSnap> {
        self.levels.iter().map(LevelStats::snap).collect()
    }

    /// The DB-wide counters.
    pub fn db_snap(&self) -> DbSnap {
        let mut stalls = [0u64; 8];
        for (d, s) in stalls.iter_mut().zip(self.stalls.iter()) {
            *d = s.load(Relaxed);
        }
        DbSnap {
            writes: Self::get(&self.user_writes),
            keys: Self::get(&self.user_keys),
            groups: Self::get(&self.write_groups),
            ingest: Self::get(&self.user_bytes_written),
            wal_writes: Self::get(&self.wal_writes),
            wal_syncs: Self::get(&self.wal_syncs),
            wal_bytes: Self::get(&self.wal_bytes),
            stall_micros: Self::get(&self.stall_micros),
            stalls,
        }
    }

    /// The tickers RocksDB's statistics read from these counters (`rocksdb.bytes.written`,
    /// ...), for [`crate::statistics::render`].
    pub fn tickers(&self) -> Vec<(&'static str, u64)> {
        let db = self.db_snap();
        let flush = self.flush.snap();
        let stall = |c: StallCause| db.stalls[c as usize];
        let mut all = LevelSnap::default();
        for l in self.level_snaps() {
            all.add(&l);
        }
        vec![
            ("rocksdb.bytes.written", db.ingest),
            ("rocksdb.number.keys.written", db.keys),
            ("rocksdb.wal.synced", db.wal_syncs),
            ("rocksdb.wal.bytes", db.wal_bytes),
            ("rocksdb.stall.micros", db.stall_micros),
            ("rocksdb.compact.read.bytes", all.rn + all.rnp1),
            ("rocksdb.compact.write.bytes", all.written.saturating_sub(flush.written)),
            ("rocksdb.flush.write.bytes", flush.written),
            // Talus's: stall events by kind (causes as in `Stalls(count)`, the
            // "with_compaction" ones counted in their parents already), so a tool sampling
            // tickers sees a stall that began and ended between two samples.
            (
                "talus.write.stops",
                stall(StallCause::L0Stop)
                    + stall(StallCause::PendingStop)
                    + stall(StallCause::MemtableStop),
            ),
            (
                "talus.write.delays",
                stall(StallCause::L0Slowdown)
                    + stall(StallCause::PendingSlowdown)
                    + stall(StallCause::MemtableSlowdown),
            ),
        ]
    }

    /// Takes the previous baseline and stores the current counters as the new one.
    pub fn advance_baseline(&self, now: Baseline) -> Baseline {
        let mut b = self.baseline.lock();
        let prev = b.take().unwrap_or_else(|| Baseline {
            at: self.started,
            levels: vec![LevelSnap::default(); self.levels.len()],
            flush: LevelSnap::default(),
            db: DbSnap::default(),
        });
        *b = Some(now);
        prev
    }
}

#[cfg(test)]
mod tests;
