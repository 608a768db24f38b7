//! Opening a database, read-write or read-only.
//!
//! The rule: **an open either succeeds or leaves the directory as it found it.** So an open
//! first only reads: it checks the path (`open_checks.rs`: a directory, not another engine's
//! database), takes the LOCK (read-write only; the one file an open of an existing database may
//! create and leave, empty; a failed creation removes it, and its directory, again),
//! loads the MANIFEST into memory ([`VersionSet::load`]), checks that every live SST is there
//! with its recorded size, and replays the WALs (`replay.rs`): a read-only open into memtables
//! it keeps; a read-write open to check them and measure what recovery drops, keeping the data
//! only if it fits in one write buffer. The info log buffers its lines meanwhile. Any error so
//! far returns with nothing written.
//!
//! Then a read-only open installs the replayed memtables and is done: no LOCK, no MANIFEST, no
//! WAL, no LOG, nothing deleted. A read-write open commits (`open_commit.rs`): the replayed
//! data goes to L0 SSTs (replayed a second time, one write buffer at a time, if it did not fit
//! in one), a new WAL is created, damaged WALs are renamed `NNNNNN.log.corrupt`, and one new
//! MANIFEST (a snapshot plus the open's edit) is made current; a failure before CURRENT names it
//! undoes every one of those steps. Only after the commit does the open rotate the
//! LOG, write the OPTIONS file and delete obsolete files. Background threads are started by
//! `Db::open` (`mod.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use super::cf_data::CfState;
use super::core::{DbInner, DbState, Imm};
use super::info_log::InfoLog;
use super::jobs::Jobs;
use super::open_checks::{self, Found};
use super::open_families::{self, FamilyPlan, OpenFamily};
use super::replay::{replay_wals, Replayed, WalFile};
use super::replay_mems::FamilyMemtables;
use super::snapshot::SnapshotList;
use super::stats::DbStats;
use super::write_controller::WriteController;
use super::write_queue::WriteQueue;
use crate::batch::WriteBatch;
use crate::cache::{AutoHyperClockCache, Cache, HyperClockCache, LruCache};
use crate::column_family::{ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_ID};
use crate::error::{Error, Result};
use crate::filename::{
    blob_name, blob_path, current_path, lock_path, parse_file_name, table_name, table_path,
    FileType,
};
use crate::fs::{FileLock, Fs};
use crate::memtable::MemTable;
use crate::options::{CacheType, Options};
use crate::sst::Block;
use crate::version::TableCache;
use crate::version::{Version, VersionSet};

/// How a database is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// `Db::open`: takes the LOCK, may create the database, writes.
    ReadWrite,
    /// `Db::open_read_only`: writes nothing at all.
    ReadOnly,
}

/// Opens the database in `path`; returns the shared state (background threads not started).
/// `families`: the column families named (`Db::open_cf`; empty for `Db::open`).
pub(crate) fn open(
    path: &Path,
    mut opts: Options,
    families: &[ColumnFamilyDescriptor],
    access: Access,
) -> Result<Arc<DbInner>> {
    let notes = opts.sanitize();
    opts.validate()?;
    // A capped device: every file operation from here on goes through the throttle.
    opts.fs = crate::fs::throttle::apply(opts.fs.clone(), opts.io_limits)?;
    if opts.statistics {
        crate::statistics::enable();
    }
    let fs = opts.fs.clone();
    let read_only = access == Access::ReadOnly;
    let found = open_checks::inspect(fs.as_ref(), path)?;
    open_checks::check_create(found, path, &opts, read_only)?;
    if found == Found::Database || read_only {
        return open_found(path, opts, families, read_only, found, &notes);
    }
    // A creation: if it fails, every file it made goes again (the directory, the LOCK, and, if
    // the failure came after CURRENT's rename, the new database, which holds no data), so a
    // failed creation leaves the path as it was. (The LOCK is unlinked just after the failed
    // open released it: a process that locked it in that instant would lose it; nothing else
    // can be racing to create a database in a directory no database is in yet.)
    let made_dir = found == Found::Nothing;
    let before: Vec<String> = if made_dir { Vec::new() } else { fs.list_dir(path)? };
    if made_dir {
        fs.create_dir_all(path)?;
    }
    let result = open_found(path, opts, families, read_only, found, &notes);
    if result.is_err() {
        undo_creation(fs.as_ref(), path, &before, made_dir);
    }
    result
}

/// Removes what a failed creation made in `path`: the engine's files not in `before` (CURRENT
/// first, the LOCK last), and the directory if it was made and is empty. Best effort.
fn undo_creation(fs: &dyn Fs, path: &Path, before: &[String], made_dir: bool) {
    let Ok(now) = fs.list_dir(path) else { return };
    let mut made: Vec<String> =
        now.into_iter().filter(|n| !before.contains(n) && parse_file_name(n).is_some()).collect();
    made.sort_by_key(|n| match parse_file_name(n) {
        Some(FileType::Current) => 0,
        Some(FileType::Lock) => 2,
        _ => 1,
    });
    for n in made {
        let _ = fs.remove_file(&path.join(n));
    }
    if made_dir && fs.list_dir(path).is_ok_and(|n| n.is_empty()) {
        let _ = fs.remove_dir(path);
    }
}

/// [`open`] once the path is checked (and a new database's directory made); `notes` are the
/// options' sanitizer's LOG lines.
fn open_found(
    path: &Path,
    opts: Options,
    families: &[ColumnFamilyDescriptor],
    read_only: bool,
    found: Found,
    notes: &[String],
) -> Result<Arc<DbInner>> {
    let fs = opts.fs.clone();
    let lock = if read_only { None } else { Some(fs.lock(&lock_path(path))?) };
    // Probe a file that is there: the LOCK just taken, or CURRENT for a read-only open.
    let probe = if read_only { current_path(path) } else { lock_path(path) };
    check_direct_io(fs.as_ref(), &probe, &opts)?;
    let info_log = InfoLog::buffered();
    info_log.log(&format!("Talus {} opening {}", env!("CARGO_PKG_VERSION"), path.display()));
    info_log.log(&format!("Options: {:?}", opts));
    for n in notes {
        info_log.log(n);
    }
    let mut versions = match found {
        Found::Database => {
            let vs = VersionSet::load(path, fs.clone(), opts.num_levels)?;
            for f in vs.families().values() {
                check_live_files(fs.as_ref(), path, &f.current)?;
            }
            vs
        }
        Found::Nothing | Found::EmptyDir { .. } => {
            VersionSet::new_empty(path, fs.clone(), opts.num_levels)
        }
    };
    let plan = open_families::plan(&versions, &opts, families, read_only)?;
    // Each family opened gets its own level count (RocksDB's per-family `num_levels`).
    for f in &plan.open {
        versions.set_family_levels(f.id, f.opts.num_levels)?;
        if let Some(cache) = super::open_families::own_block_cache(&opts, &f.opts) {
            versions.set_family_block_cache(f.id, cache);
        }
    }
    let wals = wals_to_replay(fs.as_ref(), path, &mut versions)?;
    let (mode, start, log_number) =
        (opts.wal_recovery_mode, versions.last_sequence(), versions.log_number());
    // A read-only open keeps every replayed batch. A read-write one keeps them only while they
    // fit in one write buffer (the usual case: the WAL of the memtable that was active); beyond
    // that it keeps nothing and the commit replays the WALs again, flushing as it goes, so the
    // memory recovery needs stays one write buffer.
    let mut mems = Some(replay_memtables(&versions, &plan));
    let mut sink = |wal: u64, batch: &WriteBatch| {
        for (id, full) in mems.as_mut().map(|m| m.insert(wal, batch)).unwrap_or_default() {
            match mems.as_mut() {
                Some(m) if read_only => m.keep(id, full),
                _ => mems = None,
            }
        }
        Ok(())
    };
    let replayed = replay_wals(fs.as_ref(), path, &wals, mode, start, log_number, &mut sink)?;
    let mems = mems.map(FamilyMemtables::finish);
    let inner = Arc::new(new_inner(path, opts, lock, versions, info_log, read_only, &plan.open));
    if read_only {
        inner.install_read_only(mems.unwrap_or_default(), replayed);
        inner.info_log.attach(None);
    } else {
        inner.commit_open(&wals, replayed, mems, &plan)?;
        crate::kill_point::kill_point!("open.committed");
        inner.info_log.attach(super::info_log::rotate_and_create(inner.fs.as_ref(), path));
        inner.write_options_file();
        inner.delete_obsolete_files();
    }
    inner.table_cache.preload(&inner.default_cf.super_version.load().version);
    Ok(inner)
}

/// Empty replay memtables for the families `plan` opens, each with its log number and write
/// buffer size.
pub(super) fn replay_memtables(vs: &VersionSet, plan: &FamilyPlan) -> FamilyMemtables {
    FamilyMemtables::new(
        plan.open
            .iter()
            .map(|f| (f.id, vs.log_number_of(f.id).unwrap_or(0), f.opts.write_buffer_size)),
    )
}

/// Numbers databases opened in this process ([`DbInner::instance`]).
static INSTANCES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The WALs to replay (numbered at or above the MANIFEST's log number, ascending), after making
/// sure new file numbers are above every file present, kept damaged WALs included.
fn wals_to_replay(fs: &dyn Fs, path: &Path, versions: &mut VersionSet) -> Result<Vec<WalFile>> {
    let mut wals: BTreeMap<u64, WalFile> = BTreeMap::new();
    for name in fs.list_dir(path)? {
        let (n, corrupt_name) = match parse_file_name(&name) {
            Some(FileType::Wal(n)) => (n, false),
            Some(FileType::CorruptWal(n)) => (n, true),
            Some(FileType::Table(n))
            | Some(FileType::Blob(n))
            | Some(FileType::Manifest(n))
            | Some(FileType::Options(n)) => {
                versions.mark_file_number_used(n);
                continue;
            }
            _ => continue,
        };
        versions.mark_file_number_used(n);
        if n >= versions.log_number() {
            // Both names for one number: the plain WAL is the one a crash left.
            let e = wals.entry(n).or_insert(WalFile { number: n, corrupt_name });
            e.corrupt_name &= corrupt_name;
        }
    }
    Ok(wals.into_values().collect())
}

/// Refuses `use_direct_reads` / `use_direct_io_for_flush_and_compaction` on a file system that
/// cannot open files with direct IO (probing `existing`, a file of the database), before anything
/// is written: an `InvalidArgument` naming the option, as RocksDB refuses them.
fn check_direct_io(fs: &dyn Fs, existing: &Path, opts: &Options) -> Result<()> {
    let option = if opts.use_direct_reads {
        "use_direct_reads"
    } else if opts.use_direct_io_for_flush_and_compaction {
        "use_direct_io_for_flush_and_compaction"
    } else {
        return Ok(());
    };
    crate::fs::direct::check_supported(fs, existing, option)
}

/// Every SST and blob file the MANIFEST names must exist with the recorded size (RocksDB checks
/// the same for SSTs at open): a missing or resized file is `Corruption` naming it, found before
/// anything is replayed or written rather than at the first read.
fn check_live_files(fs: &dyn Fs, dir: &Path, v: &Version) -> Result<()> {
    for level in 0..v.num_levels() {
        for f in v.level_files(level) {
            check_live_file(fs, &table_name(f.number), &table_path(dir, f.number), f.file_size)?;
        }
    }
    for (&n, m) in v.blob_files.iter() {
        check_live_file(fs, &blob_name(n), &blob_path(dir, n), m.addition.file_size)?;
    }
    Ok(())
}

fn check_live_file(fs: &dyn Fs, name: &str, path: &Path, recorded: u64) -> Result<()> {
    if !fs.exists(path) {
        return Err(Error::corruption(name, 0, "named by the MANIFEST but missing"));
    }
    let size = fs.file_size(path)?;
    if size != recorded {
        return Err(Error::corruption(
            name,
            size.min(recorded),
            format!("{size} bytes, the MANIFEST recorded {recorded}"),
        ));
    }
    Ok(())
}

/// The shared state around `versions`, with an empty memtable and no WAL.
fn new_inner(
    path: &Path,
    opts: Options,
    lock: Option<Box<dyn FileLock>>,
    versions: VersionSet,
    info_log: InfoLog,
    read_only: bool,
    families: &[OpenFamily],
) -> DbInner {
    let fs = opts.fs.clone();
    let (cap, bits, strict) = (
        opts.block_cache_capacity,
        opts.block_cache_num_shard_bits,
        opts.block_cache_strict_capacity_limit,
    );
    let policy = opts.block_cache_metadata_charge_policy;
    let block_cache: Option<Arc<dyn Cache<Block>>> = match opts.cache_type {
        _ if opts.no_block_cache => None,
        _ if opts.block_cache.is_some() => opts.block_cache.as_ref().map(|c| Arc::clone(c.cache())),
        CacheType::LruCache => Some(Arc::new(
            LruCache::with_high_pri_pool(cap, bits, strict, opts.high_pri_pool_ratio)
                .with_metadata_charge_policy(policy),
        )),
        CacheType::HyperClockCache if opts.estimated_entry_charge == 0 => Some(Arc::new(
            AutoHyperClockCache::new(cap, bits, strict).with_metadata_charge_policy(policy),
        )),
        CacheType::HyperClockCache => {
            let est = opts.estimated_entry_charge;
            Some(Arc::new(HyperClockCache::with_metadata_charge_policy(
                cap, est, bits, strict, policy,
            )))
        }
    };
    let table_capacity =
        if opts.max_open_files < 0 { None } else { Some(opts.max_open_files as usize) };
    let table_cache = Arc::new(TableCache::with_options(
        path.to_path_buf(),
        fs.clone(),
        crate::version::table_cache::TableCacheOptions {
            block_cache,
            capacity: table_capacity,
            cache_index_and_filter_blocks: opts.cache_index_and_filter_blocks,
            pin_l0: opts.pin_l0_filter_and_index_blocks_in_cache,
            pin_top_level_index_and_filter: opts.pin_top_level_index_and_filter,
            use_direct_reads: opts.use_direct_reads,
        },
    ));
    // The database-wide per-level counters cover the deepest family opened.
    let num_levels = families.iter().map(|f| f.opts.num_levels).fold(opts.num_levels, usize::max);
    let instance = INSTANCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut cfs = BTreeMap::new();
    for f in families {
        let current = versions.current_of(f.id).unwrap_or_else(|| versions.current());
        let state = CfState::new(f.id, f.name.clone(), f.opts.clone(), instance, current);
        cfs.insert(f.id, state);
    }
    let default_cf = match cfs.get(&DEFAULT_COLUMN_FAMILY_ID) {
        Some(d) => d.data.clone(),
        None => unreachable!("an open plan opens `default` first"),
    };
    let mems = Arc::new(super::core::write_mems_of(&cfs));
    let state = DbState {
        mems: Arc::clone(&mems),
        cfs,
        jobs: Jobs::new(),
        compaction_turn: 0,
        bg_error: None,
        shutting_down: false,
        compactions_paused: false,
        wal_wanted: false,
        alive_wals: Default::default(),
    };
    let write_mems = ArcSwap::new(mems);
    let last_seq = versions.last_sequence();
    let blobs = Arc::new(crate::blob::reader::BlobSource::new(
        Arc::clone(&fs),
        path.to_path_buf(),
        opts.blob_cache.clone(),
        opts.use_direct_reads,
    ));
    DbInner {
        path: path.to_path_buf(),
        fs,
        _lock: lock,
        read_only,
        state: Mutex::new(state),
        bg_cv: Condvar::new(),
        done_cv: Condvar::new(),
        versions: Mutex::new(versions),
        default_cf,
        instance,
        write_mems,
        last_sequence: AtomicU64::new(last_seq),
        allocated_sequence: AtomicU64::new(last_seq),
        inflight_groups: std::sync::atomic::AtomicUsize::new(0),
        group_event: Default::default(),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        blobs,
        writers: WriteQueue::new(if opts.enable_write_thread_adaptive_yield {
            std::time::Duration::from_micros(opts.write_thread_max_yield_usec)
        } else {
            std::time::Duration::ZERO
        }),
        wal: Mutex::new(None),
        next_wal: Mutex::new(None),
        wal_dir_unsynced: AtomicBool::new(false),
        stats: DbStats::new(num_levels),
        write_controller: WriteController::new(opts.delayed_write_rate),
        rate_limiter: (opts.rate_limiter_bytes_per_sec > 0).then(|| {
            Arc::new(crate::fs::rate_limiter::RateLimiter::new(opts.rate_limiter_bytes_per_sec))
        }),
        info_log,
        shutting_down: AtomicBool::new(false),
        recovery_report: Mutex::new(Default::default()),
        obsolete_lock: Mutex::new(()),
        opts,
    }
}

impl DbInner {
    /// Read-only: makes the replayed memtables readable (the newest is the "active" one, which
    /// nothing writes to), and publishes the sequence number and the report.
    fn install_read_only(&self, families: Vec<(u32, Vec<Arc<MemTable>>)>, replayed: Replayed) {
        let Replayed { last_sequence, report } = replayed;
        if !report.is_empty() {
            self.info_log.log(&format!("[WARN] WAL recovery:\n{report}"));
        }
        *self.recovery_report.lock() = report;
        let mut st = self.state.lock();
        let mut retired = Vec::new();
        for (id, mut mems) in families {
            let Some(cf) = st.cf_mut(id) else { continue };
            if let Some(newest) = mems.pop() {
                cf.mem = newest;
            }
            for mem in mems {
                let tombstones = mem.fragmented_range_tombstones().unwrap_or_default();
                cf.imms.push_back(Imm { mem, log_number: 0, tombstones });
            }
            retired.extend(self.install_super_version(&st, id));
        }
        self.last_sequence.store(last_sequence, std::sync::atomic::Ordering::Release);
        drop(st);
        drop(retired);
    }
}
