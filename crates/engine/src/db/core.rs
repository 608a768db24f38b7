//! The shared state behind a [`crate::Db`] handle.
//!
//! Locks, in the order they may be taken (never the reverse):
//! 1. the write queue (`write_queue::WriteQueue`), held only to join, lead or leave a group;
//! 2. `wal`: the open WAL writer, used only by the write-group leader;
//! 3. `versions`: the VersionSet; held across MANIFEST writes (one background job at a time);
//! 4. `state`: memtables, job flags, the current version; never held across IO.
//!
//! Readers take none of them: they load the current [`SuperVersion`] from their family's
//! `super_version` (an `ArcSwap`, `cf_data.rs`) and the published sequence number from
//! `last_sequence`.
//!
//! Column families: each family's memtables and version are a [`CfState`] in
//! `DbState::cfs` (`cf_data.rs`); everything here is shared by all of them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

pub(crate) use super::cf_data::{CfState, ColumnFamilyData, Imm, SuperVersion};
use super::info_log::InfoLog;
use super::jobs::{CompactionGuard, FlushGuard, JobHost, Jobs, ManualGuard, OutputGuard};
use super::snapshot::SnapshotList;
use super::stats::DbStats;
use super::write_controller::{Shape, WriteController};
use super::write_mems::WriteMems;
use super::write_queue::WriteQueue;
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::compaction::Compaction;
use crate::error::{Error, Result};
use crate::fs::{FileLock, Fs, WritableFile};
use crate::key::SequenceNumber;
use crate::options::Options;
use crate::version::TableCache;
use crate::version::VersionSet;
use crate::wal::LogWriter;

/// Mutable state under `DbInner::state`.
pub(crate) struct DbState {
    /// The live column families by id (`default`, 0, always): memtables and current version.
    pub cfs: BTreeMap<u32, CfState>,
    /// Running jobs (flush, compactions, manual slot, pending outputs): `jobs.rs`.
    pub jobs: Jobs,
    /// Set when a background job fails; writes are refused until resumed.
    pub bg_error: Option<Error>,
    pub shutting_down: bool,
    /// The family the last automatic compaction was picked from: the next pick starts after
    /// it, so families take turns (`background.rs`).
    pub compaction_turn: u32,
    /// Test hook: no new automatic compaction starts while set (flushes still run).
    pub compactions_paused: bool,
    /// Set by each memtable switch: the next WAL should be made ahead; the flush thread clears
    /// it and makes one (`Db::open` makes the first).
    pub wal_wanted: bool,
    /// The WALs before the active one that some family still needs, and their bytes
    /// (`alive_wals.rs`): what `max_total_wal_size` bounds.
    pub alive_wals: super::alive_wals::AliveWals,
    /// The families' active memtables as the write path inserts into them: the same
    /// [`WriteMems`] as `DbInner::write_mems`, which a write group's leader takes here when it
    /// has made room (`write.rs`), replaced with it by [`DbInner::publish_write_mems`].
    pub mems: Arc<WriteMems>,
}

impl DbState {
    /// The `default` family's state.
    pub fn default_cf(&self) -> &CfState {
        match self.cfs.get(&DEFAULT_COLUMN_FAMILY_ID) {
            Some(cf) => cf,
            None => unreachable!("the default column family is always live"),
        }
    }

    /// Family `id`'s state, if it is live.
    pub fn cf(&self, id: u32) -> Option<&CfState> {
        self.cfs.get(&id)
    }

    /// Family `id`'s state, to change, if it is live.
    pub fn cf_mut(&mut self, id: u32) -> Option<&mut CfState> {
        self.cfs.get_mut(&id)
    }

    /// The oldest WAL holding writes not yet flushed, over every family: WALs below it are
    /// obsolete (RocksDB's `MinLogNumberToKeep`).
    pub fn min_log_number(&self) -> u64 {
        self.cfs.values().map(CfState::min_log_number).min().unwrap_or(0)
    }

    /// True when some family has an immutable memtable waiting for a flush.
    pub fn has_imms(&self) -> bool {
        self.cfs.values().any(|cf| !cf.imms.is_empty())
    }
}

pub(crate) struct DbInner {
    pub path: PathBuf,
    pub opts: Options,
    pub fs: Arc<dyn Fs>,
    /// The LOCK, held for the handle's life (`None` when opened read-only).
    pub _lock: Option<Box<dyn FileLock>>,
    /// Opened with `Db::open_read_only`: no WAL, no background threads, writes refused.
    pub read_only: bool,
    pub state: Mutex<DbState>,
    /// Background threads wait here for work.
    pub bg_cv: Condvar,
    /// Writers (stalls), `flush()` and `compact_range()` wait here for jobs to finish.
    pub done_cv: Condvar,
    pub versions: Mutex<VersionSet>,
    /// The `default` family (also in `DbState::cfs`), which the plain `Db` methods read.
    pub default_cf: Arc<ColumnFamilyData>,
    /// This database's number among those opened in the process: a family handle carries it,
    /// so a handle of another database is refused.
    pub instance: u64,
    /// The active memtable of every live family, as a write group inserts into them
    /// (`write_mems.rs`); replaced under the state lock by [`DbInner::publish_write_mems`]
    /// whenever a family's active memtable changes, loaded by write-group leaders.
    pub write_mems: ArcSwap<WriteMems>,
    /// The last sequence number visible to readers.
    pub last_sequence: AtomicU64,
    /// The last sequence number handed to a write group (by stage one, `write_group.rs`);
    /// ahead of `last_sequence` while groups are in flight.
    pub allocated_sequence: AtomicU64,
    /// Write groups between their WAL record and their publication (`write_group.rs`).
    pub inflight_groups: std::sync::atomic::AtomicUsize,
    /// Where write groups wait for each other (`write_group.rs`).
    pub group_event: super::group_event::GroupEvent,
    pub snapshots: Arc<SnapshotList>,
    pub table_cache: Arc<TableCache>,
    /// The open blob files (`blob::reader`).
    pub blobs: Arc<crate::blob::reader::BlobSource>,
    pub writers: WriteQueue,
    pub wal: Mutex<Option<ActiveWal>>,
    /// The next WAL (its number and file), created and preallocated by the flush thread ahead
    /// of the memtable switch that takes it (`write.rs`); a leaf lock.
    pub next_wal: Mutex<Option<(u64, Box<dyn WritableFile>)>>,
    /// Set (under `wal`) when a memtable switch created the current WAL without syncing the
    /// directory; the first synced write to it syncs the directory first.
    pub wal_dir_unsynced: AtomicBool,
    pub stats: DbStats,
    /// Decides write stalls; recalculated on every SuperVersion install.
    pub write_controller: WriteController,
    /// Charges flush and compaction writes (`rate_limiter_bytes_per_sec`), if set.
    pub rate_limiter: Option<Arc<crate::fs::rate_limiter::RateLimiter>>,
    pub info_log: InfoLog,
    pub shutting_down: AtomicBool,
    /// Serializes obsolete-file deletion.
    pub obsolete_lock: Mutex<()>,
    /// What WAL recovery dropped at open (`Db::recovery_report`, `talus.recovery-report`).
    pub recovery_report: Mutex<super::replay::RecoveryReport>,
}

impl DbInner {
    /// The sequence number reads see when no snapshot is given.
    pub fn visible_sequence(&self) -> SequenceNumber {
        self.last_sequence.load(Ordering::Acquire)
    }

    /// Builds and publishes family `cf`'s SuperVersion from `st`. Called with the state lock
    /// held. Returns the one it replaced, for the caller to drop after releasing the lock: it
    /// may be the last holder of a flushed memtable, whose 64 MiB of arena took milliseconds to
    /// free (writers waited for the state lock meanwhile). `None` if the family is not live.
    #[must_use = "drop the replaced SuperVersion after releasing the state lock"]
    pub fn install_super_version(&self, st: &DbState, cf: u32) -> Option<Arc<SuperVersion>> {
        let family = st.cfs.get(&cf)?;
        let retired = family.data.super_version.swap(Arc::new(family.super_version()));
        // Writers follow the family whose shape is the most severe (the first such, `default`
        // when none stalls): one write path and one WAL serve all of them, as in RocksDB.
        // Each family's shape is judged once.
        let shape_of = |c: &CfState| Shape::of(&c.data.opts, &c.current, c.imms.len());
        let mut worst = st.default_cf();
        let mut shape = shape_of(worst);
        for c in st.cfs.values().filter(|c| c.data.id != DEFAULT_COLUMN_FAMILY_ID) {
            let s = shape_of(c);
            if s.severity() > shape.severity() {
                (worst, shape) = (c, s);
            }
        }
        let v = &worst.current;
        let l0_compacting = v.level_files(0).iter().any(|f| st.jobs.is_compacting(f.number));
        self.write_controller.recalculate(&worst.data.opts, shape, l0_compacting, &self.stats);
        // The new shape may lift a write stop: writers waiting in `make_room_for_write` look
        // again now, not when the job that installed this ends (a flush still closes its old
        // WAL after installing: milliseconds of munmap and truncate).
        self.done_cv.notify_all();
        Some(retired)
    }

    /// Publishes the active memtables of the live families in `st` for write groups (called
    /// with the state lock held, after any change of a family's active memtable).
    pub fn publish_write_mems(&self, st: &mut DbState) {
        let mems = Arc::new(write_mems_of(&st.cfs));
        st.mems = Arc::clone(&mems);
        self.write_mems.store(mems);
    }

    /// `NotSupported` on a read-only handle (RocksDB's message), for every call that writes.
    pub fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::NotSupported(format!(
                "{}: not supported in read-only mode (the database was opened with \
                 open_read_only)",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Fails with the stored background error, if any.
    pub fn check_bg_error(st: &DbState) -> Result<()> {
        match &st.bg_error {
            Some(e) => Err(Error::BackgroundError(Box::new(e.duplicate()))),
            None => Ok(()),
        }
    }

    /// Records a background failure: the database turns read-only.
    pub fn set_bg_error(&self, st: &mut DbState, e: Error) {
        self.info_log.log(&format!("[ERROR] background error, database is now read-only: {e}"));
        if st.bg_error.is_none() {
            st.bg_error = Some(e);
        }
        self.done_cv.notify_all();
    }
}

impl JobHost for DbInner {
    fn with_jobs(&self, f: &mut dyn FnMut(&mut Jobs)) {
        f(&mut self.state.lock().jobs);
    }

    fn job_ended(&self) {
        self.done_cv.notify_all();
        self.bg_cv.notify_all();
    }
}

/// Job guards (`jobs.rs`) for this database.
impl DbInner {
    /// Takes the flush mark, unless a flush runs already.
    pub fn begin_flush(&self, st: &mut DbState) -> Option<FlushGuard<'_>> {
        st.jobs.begin_flush(self)
    }

    /// Registers `c` as running: counts it and marks its inputs busy.
    pub fn begin_compaction(&self, st: &mut DbState, c: &Compaction) -> CompactionGuard<'_> {
        st.jobs.begin_compaction(self, c)
    }

    /// Takes the manual-compaction slot, waiting until no compaction (manual or automatic)
    /// runs; no automatic compaction starts while it is held. Fails with the background error
    /// if one is set while waiting. The one wait loop of `compact_range` and ingestion.
    pub fn begin_manual(&self) -> Result<ManualGuard<'_>> {
        let mut st = self.state.lock();
        loop {
            if let Some(g) = st.jobs.try_begin_manual(self) {
                return Ok(g);
            }
            DbInner::check_bg_error(&st)?;
            self.done_cv.wait(&mut st);
        }
    }

    /// A new file number, registered as a pending output (kept from obsolete-file deletion)
    /// until the guard is dropped. Takes `versions`, then `state`, one after the other.
    pub fn reserve_output(&self) -> OutputGuard<'_> {
        let number = self.versions.lock().new_file_number();
        self.state.lock().jobs.add_output(self, number)
    }
}

/// The WAL being appended to (under `DbInner::wal`), and the WALs before it that a memtable
/// switch closed without syncing.
pub(crate) struct ActiveWal {
    /// The writer.
    pub writer: LogWriter,
    /// Its file number.
    pub number: u64,
    /// The last sequence number appended to it (0: none yet): the next WAL's
    /// `PredecessorWal::last_seq`.
    pub last_seq: SequenceNumber,
    /// Earlier WALs closed at memtable switches and not yet synced, oldest first. Synced before
    /// the first synced write to this WAL, so a synced write never survives a power loss that
    /// cut an earlier write; dropped unsynced once their memtables are flushed. Recovery
    /// detects a cut one through the next WAL's predecessor record (`replay.rs`).
    pub unsynced: Vec<(u64, LogWriter)>,
}

impl ActiveWal {
    /// A new, empty WAL `number`.
    pub fn new(writer: LogWriter, number: u64) -> ActiveWal {
        ActiveWal { writer, number, last_seq: 0, unsynced: Vec::new() }
    }
}

/// The [`WriteMems`] of `cfs`' active memtables.
pub(crate) fn write_mems_of(cfs: &BTreeMap<u32, CfState>) -> WriteMems {
    WriteMems::new(cfs.iter().map(|(&id, c)| {
        (id, &c.mem, c.data.opts.merge_operator.is_some(), c.data.opts.write_buffer_size)
    }))
}
