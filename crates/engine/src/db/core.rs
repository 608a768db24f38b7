//! The shared state behind a [`crate::Db`] handle.
//!
//! Locks, in the order they may be taken (never the reverse):
//! 1. the write queue (`write::WriteQueue`), held only to join, lead or leave a group;
//! 2. `wal`: the open WAL writer, used only by the write-group leader;
//! 3. `versions`: the VersionSet; held across MANIFEST writes (one background job at a time);
//! 4. `state`: memtables, job flags, the current version; never held across IO.
//!
//! Readers take none of them: they load the current [`SuperVersion`] from `super_version`
//! (an `ArcSwap`) and the published sequence number from `last_sequence`.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use super::info_log::InfoLog;
use super::snapshot::SnapshotList;
use super::stats::DbStats;
use super::write::WriteQueue;
use super::write_controller::WriteController;
use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::fs::{FileLock, Fs};
use crate::iter::range_del::FragmentedTombstones;
use crate::key::SequenceNumber;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::{Version, VersionSet};
use crate::wal::LogWriter;

/// What a reader needs: the memtables and the files, captured together.
pub(crate) struct SuperVersion {
    /// The active memtable.
    pub mem: Arc<MemTable>,
    /// Immutable memtables, newest first, each with its fragmented range tombstones.
    pub imms: Vec<(Arc<MemTable>, Arc<FragmentedTombstones>)>,
    /// The files.
    pub version: Arc<Version>,
}

/// An immutable memtable waiting to be flushed, with the WAL that holds its writes.
pub(crate) struct Imm {
    pub mem: Arc<MemTable>,
    pub log_number: u64,
    pub tombstones: Arc<FragmentedTombstones>,
}

/// Mutable state under `DbInner::state`.
pub(crate) struct DbState {
    pub mem: Arc<MemTable>,
    pub mem_log_number: u64,
    /// Oldest first.
    pub imms: VecDeque<Imm>,
    pub current: Arc<Version>,
    pub flush_running: bool,
    pub compactions_running: usize,
    pub manual_compaction: bool,
    /// Files that are inputs of a running compaction.
    pub compacting: HashSet<u64>,
    /// File numbers being written by running jobs (not yet in a version).
    pub pending_outputs: HashSet<u64>,
    /// Set when a background job fails; writes are refused until resumed.
    pub bg_error: Option<Error>,
    pub shutting_down: bool,
    /// Round-robin compaction cursor per level (largest user key last compacted).
    pub compact_cursor: Vec<Vec<u8>>,
    /// Test hook: no new automatic compaction starts while set (flushes still run).
    pub compactions_paused: bool,
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
    pub super_version: ArcSwap<SuperVersion>,
    /// The last sequence number visible to readers.
    pub last_sequence: AtomicU64,
    pub snapshots: Arc<SnapshotList>,
    pub table_cache: Arc<TableCache>,
    pub writers: WriteQueue,
    pub wal: Mutex<Option<ActiveWal>>,
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

    /// Builds and publishes a SuperVersion from `st`. Called with the state lock held.
    pub fn install_super_version(&self, st: &DbState) {
        let imms = st.imms.iter().rev().map(|i| (i.mem.clone(), i.tombstones.clone())).collect();
        self.super_version.store(Arc::new(SuperVersion {
            mem: st.mem.clone(),
            imms,
            version: st.current.clone(),
        }));
        self.write_controller.recalculate(&self.opts, st, &self.stats);
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
