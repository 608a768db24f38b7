//! Opening a database: lock, MANIFEST recovery, WAL replay by recovery mode, the first flush,
//! and the start of the background threads.
//!
//! Replay: WALs numbered at or above the MANIFEST's log number are replayed in order into a
//! memtable (flushed to L0 whenever it fills, and at the end), then one VersionEdit records the
//! new L0 files and the new WAL's number, and the old WALs become obsolete. What a recovery mode
//! does with a bad record is in `docs/design/recovery.md`.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use super::core::{DbInner, DbState, SuperVersion};
use super::info_log::InfoLog;
use super::snapshot::SnapshotList;
use super::stats::DbStats;
use super::write::{insert_into_memtable, WriteQueue};
use super::write_controller::WriteController;
use crate::batch::WriteBatch;
use crate::cache::{AutoHyperClockCache, Cache, HyperClockCache, LruCache, TableCache};
use crate::error::{Error, Result};
use crate::filename::{
    current_path, lock_path, parse_file_name, table_name, table_path, wal_path, FileType,
};
use crate::memtable::MemTable;
use crate::options::{CacheType, Options, WalRecoveryMode};
use crate::sst::Block;
use crate::version::{Version, VersionEdit, VersionSet};
use crate::wal::{LogReader, LogWriter, ReadOutcome};

/// Opens the database in `path`; returns the shared state (background threads not started).
pub(crate) fn open(path: &Path, opts: Options) -> Result<Arc<DbInner>> {
    opts.validate()?;
    let fs = opts.fs.clone();
    let exists = fs.exists(&current_path(path));
    if !exists && !opts.create_if_missing {
        return Err(Error::InvalidArgument(format!(
            "{}: does not exist (create_if_missing is false)",
            path.display()
        )));
    }
    if !exists && fs.exists(path) {
        // A missing CURRENT beside a MANIFEST or table files is damage, not a new database:
        // creating one here would delete the old files as obsolete.
        let names = fs.list_dir(path)?;
        if let Some(name) = names.iter().find(|n| {
            matches!(parse_file_name(n), Some(FileType::Manifest(_)) | Some(FileType::Table(_)))
        }) {
            return Err(Error::corruption(
                current_path(path).display(),
                0,
                format!("CURRENT is missing but {name} exists; refusing to create a new database over it"),
            ));
        }
    }
    if exists && opts.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "{}: exists (error_if_exists is true)",
            path.display()
        )));
    }
    fs.create_dir_all(path)?;
    let lock = fs.lock(&lock_path(path))?;
    check_direct_io(fs.as_ref(), &lock_path(path), &opts)?;
    let info_log = InfoLog::new(open_info_log(&opts, path));
    info_log.log(&format!("Talus {} opening {}", env!("CARGO_PKG_VERSION"), path.display()));
    info_log.log(&format!("Options: {:?}", opts));
    let mut versions = if exists {
        let vs = VersionSet::recover(path, fs.clone(), opts.num_levels)?;
        check_live_files(fs.as_ref(), path, &vs.current())?;
        vs
    } else {
        VersionSet::create(path, fs.clone(), opts.num_levels)?
    };

    // Find the WALs to replay and make sure new file numbers are above every file present.
    let mut wals = Vec::new();
    for name in fs.list_dir(path)? {
        match parse_file_name(&name) {
            Some(FileType::Wal(n)) => {
                versions.mark_file_number_used(n);
                if n >= versions.log_number() {
                    wals.push(n);
                }
            }
            Some(FileType::Table(n)) | Some(FileType::Manifest(n)) | Some(FileType::Options(n)) => {
                versions.mark_file_number_used(n)
            }
            _ => {}
        }
    }
    wals.sort_unstable();

    let (cap, bits, strict) = (
        opts.block_cache_capacity,
        opts.block_cache_num_shard_bits,
        opts.block_cache_strict_capacity_limit,
    );
    let block_cache: Arc<dyn Cache<Block>> = match opts.cache_type {
        CacheType::LruCache => {
            Arc::new(LruCache::with_high_pri_pool(cap, bits, strict, opts.high_pri_pool_ratio))
        }
        CacheType::HyperClockCache if opts.estimated_entry_charge == 0 => {
            Arc::new(AutoHyperClockCache::new(cap, bits, strict))
        }
        CacheType::HyperClockCache => {
            Arc::new(HyperClockCache::new(cap, opts.estimated_entry_charge, bits, strict))
        }
    };
    let table_capacity =
        if opts.max_open_files < 0 { None } else { Some(opts.max_open_files as usize) };
    let table_cache = Arc::new(TableCache::with_options(
        path.to_path_buf(),
        fs.clone(),
        crate::cache::table_cache::TableCacheOptions {
            block_cache: Some(block_cache),
            capacity: table_capacity,
            cache_index_and_filter_blocks: opts.cache_index_and_filter_blocks,
            pin_l0: opts.pin_l0_filter_and_index_blocks_in_cache,
            pin_top_level_index_and_filter: opts.pin_top_level_index_and_filter,
            use_direct_reads: opts.use_direct_reads,
        },
    ));
    let current = versions.current();
    let num_levels = opts.num_levels;
    let mem = Arc::new(MemTable::new());
    let state = DbState {
        mem: mem.clone(),
        mem_log_number: 0,
        imms: VecDeque::new(),
        current: current.clone(),
        flush_running: false,
        compactions_running: 0,
        manual_compaction: false,
        compacting: HashSet::new(),
        pending_outputs: HashSet::new(),
        bg_error: None,
        shutting_down: false,
        compact_cursor: vec![Vec::new(); num_levels],
        compactions_paused: false,
    };
    let last_seq = versions.last_sequence();
    let inner = Arc::new(DbInner {
        path: path.to_path_buf(),
        fs: fs.clone(),
        _lock: lock,
        state: Mutex::new(state),
        bg_cv: Condvar::new(),
        done_cv: Condvar::new(),
        versions: Mutex::new(versions),
        super_version: ArcSwap::new(Arc::new(SuperVersion {
            mem,
            imms: Vec::new(),
            version: current,
        })),
        last_sequence: AtomicU64::new(last_seq),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        writers: WriteQueue::default(),
        wal: Mutex::new(None),
        wal_dir_unsynced: AtomicBool::new(false),
        stats: DbStats::new(num_levels),
        write_controller: WriteController::new(opts.delayed_write_rate),
        rate_limiter: (opts.rate_limiter_bytes_per_sec > 0).then(|| {
            Arc::new(crate::fs::rate_limiter::RateLimiter::new(opts.rate_limiter_bytes_per_sec))
        }),
        info_log,
        shutting_down: AtomicBool::new(false),
        recovery_report: Mutex::new(String::new()),
        obsolete_lock: Mutex::new(()),
        opts,
    });
    inner.recover_wals(&wals)?;
    inner.write_options_file();
    inner.delete_obsolete_files();
    Ok(inner)
}

/// Refuses `use_direct_reads` / `use_direct_io_for_flush_and_compaction` on a file system that
/// cannot open files with direct IO (probing the LOCK file just taken), before anything is
/// written: an `InvalidArgument` naming the option, as RocksDB refuses them.
fn check_direct_io(fs: &dyn crate::fs::Fs, lock: &Path, opts: &Options) -> Result<()> {
    let option = if opts.use_direct_reads {
        "use_direct_reads"
    } else if opts.use_direct_io_for_flush_and_compaction {
        "use_direct_io_for_flush_and_compaction"
    } else {
        return Ok(());
    };
    crate::fs::direct::check_supported(fs, lock, option)
}

/// Every SST the MANIFEST names must exist with the recorded size (RocksDB checks the same at
/// open): a missing or resized file is `Corruption` naming it, found before anything is replayed
/// or deleted rather than at the first read.
fn check_live_files(fs: &dyn crate::fs::Fs, dir: &Path, v: &Version) -> Result<()> {
    for level in 0..v.num_levels() {
        for f in v.level_files(level) {
            let (name, path) = (table_name(f.number), table_path(dir, f.number));
            if !fs.exists(&path) {
                return Err(Error::corruption(&name, 0, "named by the MANIFEST but missing"));
            }
            let size = fs.file_size(&path)?;
            if size != f.file_size {
                return Err(Error::corruption(
                    &name,
                    size.min(f.file_size),
                    format!("{size} bytes, the MANIFEST recorded {}", f.file_size),
                ));
            }
        }
    }
    Ok(())
}

fn open_info_log(opts: &Options, path: &Path) -> Option<Box<dyn crate::fs::WritableFile>> {
    let log = path.join("LOG");
    if opts.fs.exists(&log) {
        let _ = opts.fs.rename(&log, &path.join("LOG.old"));
    }
    opts.fs.create(&log).ok()
}

impl DbInner {
    /// Replays `wals` (ascending), writes what they held to L0, and starts a new WAL.
    fn recover_wals(&self, wals: &[u64]) -> Result<()> {
        let mode = self.opts.wal_recovery_mode;
        let mut edit = VersionEdit::default();
        let mut mem = Arc::new(MemTable::new());
        let mut max_seq = self.visible_sequence();
        let mut report = String::new();
        let mut stop = false;
        for (i, &n) in wals.iter().enumerate() {
            if stop {
                report.push_str(&format!("skipped {:06}.log after an earlier corruption; ", n));
                continue;
            }
            let name = format!("{n:06}.log");
            let file = self.fs.open_sequential(&wal_path(&self.path, n))?;
            let mut reader = LogReader::new(file, name.clone());
            let is_last = i + 1 == wals.len();
            loop {
                match reader.read_record()? {
                    ReadOutcome::Eof => break,
                    ReadOutcome::Record(data, offset) => {
                        let batch = match WriteBatch::from_data(data, &name, offset) {
                            Ok(b) => b,
                            Err(e) => match mode {
                                WalRecoveryMode::SkipAnyCorruptedRecords => {
                                    report.push_str(&format!(
                                        "skipped bad batch in {name} at {offset}; "
                                    ));
                                    continue;
                                }
                                WalRecoveryMode::PointInTimeRecovery => {
                                    report.push_str(&format!(
                                        "stopped at bad batch in {name} at {offset}: {e}; "
                                    ));
                                    stop = true;
                                    break;
                                }
                                _ => return Err(e),
                            },
                        };
                        let first = batch.sequence();
                        insert_into_memtable(&mem, &batch, first);
                        let last = first + u64::from(batch.count()).saturating_sub(1);
                        max_seq = max_seq.max(last);
                        if mem.approximate_memory_usage() >= self.opts.write_buffer_size {
                            let number = self.versions.lock().new_file_number();
                            if let Some(m) = self.write_level0_table(&mem, number)? {
                                edit.new_files.push((0, m));
                            }
                            mem = Arc::new(MemTable::new());
                        }
                    }
                    ReadOutcome::Corrupt { offset, bytes, reason, at_tail } => {
                        let what = format!("{bytes} bytes at offset {offset} of {name} ({reason})");
                        match mode {
                            WalRecoveryMode::AbsoluteConsistency => {
                                return Err(Error::corruption(&name, offset, reason));
                            }
                            WalRecoveryMode::TolerateCorruptedTailRecords => {
                                if at_tail && is_last {
                                    report.push_str(&format!("dropped torn tail: {what}; "));
                                    break;
                                }
                                return Err(Error::corruption(&name, offset, reason));
                            }
                            WalRecoveryMode::PointInTimeRecovery => {
                                report.push_str(&format!("stopped replay, dropped {what}; "));
                                stop = true;
                                break;
                            }
                            WalRecoveryMode::SkipAnyCorruptedRecords => {
                                report.push_str(&format!("skipped {what}; "));
                            }
                        }
                    }
                }
            }
        }
        if !mem.is_empty() || mem.has_range_tombstones() {
            let number = self.versions.lock().new_file_number();
            if let Some(m) = self.write_level0_table(&mem, number)? {
                edit.new_files.push((0, m));
            }
        }
        if !edit.new_files.is_empty() {
            self.fs.sync_dir(&self.path)?;
        }
        // The new WAL.
        let log_number = self.versions.lock().new_file_number();
        let file = self.fs.create(&wal_path(&self.path, log_number))?;
        self.fs.sync_dir(&self.path)?;
        *self.wal.lock() = Some(LogWriter::new(file));
        edit.log_number = Some(log_number);
        let mut vs = self.versions.lock();
        vs.set_last_sequence(max_seq);
        vs.log_and_apply(edit)?;
        let current = vs.current();
        drop(vs);
        self.last_sequence.store(max_seq, std::sync::atomic::Ordering::Release);
        let mut st = self.state.lock();
        st.mem_log_number = log_number;
        st.current = current;
        self.install_super_version(&st);
        drop(st);
        if !report.is_empty() {
            self.info_log.log(&format!("[WARN] WAL recovery ({mode:?}): {report}"));
        }
        *self.recovery_report.lock() = report;
        Ok(())
    }

    /// Writes `OPTIONS-NNNNNN` (an ini-style dump of the options, as RocksDB's) and removes
    /// older ones. Advisory: failures are logged, not returned.
    fn write_options_file(&self) {
        let n = self.versions.lock().new_file_number();
        let o = &self.opts;
        let text = format!(
            "[Version]\n  talus_version={}\n\n[DBOptions]\n  create_if_missing={}\n  paranoid_checks={}\n  max_open_files={}\n  max_background_jobs={}\n  wal_recovery_mode={:?}\n\n[CFOptions \"default\"]\n  write_buffer_size={}\n  max_write_buffer_number={}\n  level0_file_num_compaction_trigger={}\n  level0_slowdown_writes_trigger={}\n  level0_stop_writes_trigger={}\n  max_bytes_for_level_base={}\n  max_bytes_for_level_multiplier={}\n  target_file_size_base={}\n  num_levels={}\n  compaction_style={:?}\n  compression={}\n  disable_auto_compactions={}\n\n[TableOptions/BlockBasedTable \"default\"]\n  block_size={}\n  block_restart_interval={}\n  bloom_bits_per_key={}\n  block_cache_capacity={}\n",
            env!("CARGO_PKG_VERSION"),
            o.create_if_missing,
            o.paranoid_checks,
            o.max_open_files,
            o.max_background_jobs,
            o.wal_recovery_mode,
            o.write_buffer_size,
            o.max_write_buffer_number,
            o.level0_file_num_compaction_trigger,
            o.level0_slowdown_writes_trigger,
            o.level0_stop_writes_trigger,
            o.max_bytes_for_level_base,
            o.max_bytes_for_level_multiplier,
            o.target_file_size_base,
            o.num_levels,
            o.compaction_style,
            o.compression.name(),
            o.disable_auto_compactions,
            o.block_size,
            o.block_restart_interval,
            o.bloom_bits_per_key,
            o.block_cache_capacity,
        );
        let name = crate::filename::options_name(n);
        if let Err(e) =
            crate::fs::write_file_atomic(self.fs.as_ref(), &self.path, &name, text.as_bytes())
        {
            self.info_log.log(&format!("[WARN] could not write {name}: {e}"));
            return;
        }
        if let Ok(names) = self.fs.list_dir(&self.path) {
            for old in names {
                if let Some(FileType::Options(m)) = parse_file_name(&old) {
                    if m < n {
                        let _ = self.fs.remove_file(&self.path.join(old));
                    }
                }
            }
        }
    }
}
