//! [`RocksDb`]: the table layer's [`Storage`] on RocksDB 10.4.2 (cargo feature `rocksdb`), the
//! same `librocksdb-sys` source db_bench's `--engine=rocksdb` builds, called through a C++ shim
//! (`shim.cc`): batches are `rocksdb::WriteBatch`es, gets read into a `PinnableSlice`, MultiGet
//! is RocksDB's batched one, iterators walk in C++ many entries per call (`cursor.rs`),
//! snapshots, `SstFileWriter` and `IngestExternalFile` for index builds, flush and compaction.
//!
//! Options: [`RocksDb::open`] takes Talus's [`talus::Options`] and passes every option by its
//! RocksDB name (`options.rs`), then compares the OPTIONS text RocksDB makes of them with the
//! one Talus would write (`options_diff`), before anything is opened: a difference not in the
//! caller's accepted list is refused and nothing is written. A directory Talus wrote is refused
//! too ([`crate::TableError::OtherEngine`]).
//!
//! Device caps (`io_limit_*`, docs/design/throttle.md): RocksDB opens every file through a
//! file system (`throttle_fs.cc`) that waits on a Talus `Throttle` of those caps, counted as
//! Talus's `ThrottledFs` counts ([`RocksDb::io_throttle`] reads the counts back).
//!
//! Differences from the Talus backend, by design: `ingest_behind` always answers "refused"
//! (RocksDB ingests behind only with `allow_ingest_behind`, which reserves the last level for
//! ingested files and changes compaction), so index builds take the catch-up path; scratch
//! files go through the standard file system.
//!
//! Ownership: the database closes when the last of its handles goes (the [`RocksDb`], its
//! snapshots, read views, cursors and SST writers each hold an `Arc` of it).

mod cursor;
mod ffi;
pub mod options;
mod throttle;

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::throttle::{Throttle, ThrottleStats};
use talus::fs::{Fs, StdFs};
use talus::WriteOptions;

pub use cursor::RocksCursor;
use ffi::*;
pub use options::{rocks_options, RocksOptions};

use super::options_diff::{compare, OptionsReport};
use super::size::live_dir_size;
use super::{Batch, LiveSize, Range, SResult, SstWriter, Storage, Walk};
use crate::error::{Result, TableError};

fn c_string(what: &str, s: &[u8]) -> SResult<CString> {
    CString::new(s).map_err(|_| talus::Error::InvalidArgument(format!("{what}: a NUL byte")))
}

fn c_path(p: &Path) -> SResult<CString> {
    c_string(&p.display().to_string(), p.as_os_str().as_encoded_bytes())
}

/// The open database; closed when the last `Arc` of it goes. `throttle`, which RocksDB's file
/// system points at, is dropped after the close (a field drops after `drop` ran).
pub(crate) struct DbHandle {
    h: *mut c_void,
    throttle: Option<Arc<Throttle>>,
}

// SAFETY: RocksDB's `DB` may be used from any thread.
unsafe impl Send for DbHandle {}
unsafe impl Sync for DbHandle {}

impl Drop for DbHandle {
    fn drop(&mut self) {
        // SAFETY: opened by `talus_tbl_open`; every snapshot, read view, iterator and writer
        // holds an Arc of this handle, so none is left. A close error has nowhere to go.
        let e = unsafe { talus_tbl_close(self.h) };
        if !e.is_null() {
            drop(take_string(e));
        }
    }
}

struct SnapInner {
    db: Arc<DbHandle>,
    snap: *const c_void,
}

// SAFETY: a RocksDB snapshot is an immutable object the DB releases under its own lock.
unsafe impl Send for SnapInner {}
unsafe impl Sync for SnapInner {}

impl Drop for SnapInner {
    fn drop(&mut self) {
        // SAFETY: taken from this database, released once.
        unsafe { talus_tbl_snapshot_release(self.db.h, self.snap) }
    }
}

/// A RocksDB snapshot, released when the last clone goes.
#[derive(Clone)]
pub struct RocksSnapshot(Arc<SnapInner>);

/// A `rocksdb::ReadOptions` at a snapshot or the latest state, made once per read view.
pub struct RocksReadOptions {
    ro: *mut c_void,
    _snapshot: Option<RocksSnapshot>,
}

// SAFETY: the C++ object is only read after creation.
unsafe impl Send for RocksReadOptions {}
unsafe impl Sync for RocksReadOptions {}

impl Drop for RocksReadOptions {
    fn drop(&mut self) {
        // SAFETY: made by `talus_tbl_readopts_new`, freed once, before its snapshot.
        unsafe { talus_tbl_readopts_free(self.ro) }
    }
}

/// A `rocksdb::WriteBatch`, made at the first operation. An operation RocksDB refuses (none
/// does for the table layer's sizes) is kept and reported by the write.
#[derive(Default)]
pub struct RocksBatch {
    b: Option<std::ptr::NonNull<c_void>>,
    count: u32,
    err: Option<String>,
}

// SAFETY: the batch is owned by one thread at a time.
unsafe impl Send for RocksBatch {}

impl RocksBatch {
    fn add(&mut self, op: c_int, k: &[u8], v: &[u8]) {
        let b = match self.b {
            Some(b) => b,
            None => {
                // SAFETY: a new batch, freed in drop.
                let Some(b) = std::ptr::NonNull::new(unsafe { talus_tbl_batch_new() }) else {
                    self.err.get_or_insert_with(|| "no memory for a write batch".into());
                    return;
                };
                self.b = Some(b);
                b
            }
        };
        // SAFETY: live batch; the slices outlive the call (RocksDB copies them).
        let e = unsafe {
            talus_tbl_batch_add(
                b.as_ptr(),
                op,
                k.as_ptr().cast(),
                k.len(),
                v.as_ptr().cast(),
                v.len(),
            )
        };
        if !e.is_null() {
            let t = take_string(e);
            self.err.get_or_insert(t);
        }
        self.count += 1;
    }
}

impl Drop for RocksBatch {
    fn drop(&mut self) {
        if let Some(b) = self.b {
            // SAFETY: made by `talus_tbl_batch_new`, freed once.
            unsafe { talus_tbl_batch_free(b.as_ptr()) }
        }
    }
}

impl Batch for RocksBatch {
    fn put(&mut self, key: &[u8], value: &[u8]) {
        self.add(0, key, value)
    }
    fn delete(&mut self, key: &[u8]) {
        self.add(1, key, &[])
    }
    fn delete_range(&mut self, begin: &[u8], end: &[u8]) {
        self.add(2, begin, end)
    }
    fn count(&self) -> u32 {
        self.count
    }
}

/// A `rocksdb::SstFileWriter` with the database's options.
pub struct RocksSstWriter {
    w: *mut c_void,
    _db: Arc<DbHandle>,
}

// SAFETY: used by one thread at a time.
unsafe impl Send for RocksSstWriter {}

impl Drop for RocksSstWriter {
    fn drop(&mut self) {
        // SAFETY: made by `talus_tbl_sst_open`, freed once.
        unsafe { talus_tbl_sst_free(self.w) }
    }
}

impl SstWriter for RocksSstWriter {
    fn put(&mut self, key: &[u8], value: &[u8]) -> SResult<()> {
        // SAFETY: live writer; the slices outlive the call.
        check("SstFileWriter::Put", unsafe {
            talus_tbl_sst_put(
                self.w,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        })
    }
    fn file_size(&self) -> u64 {
        // SAFETY: live writer.
        unsafe { talus_tbl_sst_size(self.w) }
    }
    fn finish(self) -> SResult<()> {
        // SAFETY: live writer; freed by drop after.
        check("SstFileWriter::Finish", unsafe { talus_tbl_sst_finish(self.w) })
    }
}

/// RocksDB under the table layer; see the module doc.
pub struct RocksDb {
    db: Arc<DbHandle>,
    path: PathBuf,
    report: OptionsReport,
}

impl std::fmt::Debug for RocksDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RocksDb({})", self.path.display())
    }
}

/// Prepared options (C++), freed on drop.
struct Prepared(*mut c_void);

impl Drop for Prepared {
    fn drop(&mut self) {
        // SAFETY: made by `talus_tbl_prepare`, freed once.
        unsafe { talus_tbl_prepared_free(self.0) }
    }
}

fn prepare(r: &RocksOptions, throttle: Option<&Arc<Throttle>>) -> SResult<Prepared> {
    let (db, cf, table) = (
        c_string("db", r.db.as_bytes())?,
        c_string("cf", r.cf.as_bytes())?,
        c_string("table", r.table.as_bytes())?,
    );
    let handle = throttle.map(throttle::handle);
    let handle_ptr = handle.as_ref().map_or(std::ptr::null(), |h| h as *const ThrottleHandle);
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings that outlive the call; RocksDB copies what it keeps. The
    // throttle handle is copied; the throttle it names outlives every file (see `DbHandle`).
    let p = unsafe {
        talus_tbl_prepare(
            db.as_ptr(),
            cf.as_ptr(),
            table.as_ptr(),
            r.cache_type,
            r.cache_capacity,
            r.shard_bits,
            u8::from(r.strict_capacity),
            r.high_pri_ratio,
            r.estimated_entry_charge,
            u8::from(r.charge_metadata),
            r.rate_bytes_per_sec,
            u8::from(r.statistics),
            handle_ptr,
            &mut err,
        )
    };
    check("options", err)?;
    if p.is_null() {
        return Err(talus::Error::InvalidArgument("options: RocksDB made none".into()));
    }
    Ok(Prepared(p))
}

fn options_text(p: &Prepared) -> SResult<String> {
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: live prepared options.
    let t = unsafe { talus_tbl_options_text(p.0, &mut err) };
    check("options text", err)?;
    if t.is_null() {
        return Err(talus::Error::InvalidArgument("options text: none".into()));
    }
    Ok(take_string(t))
}

impl RocksDb {
    /// Opens the RocksDB database at `path` with Talus's options `o` (every option by its
    /// RocksDB name, `o.create_if_missing` included). Refused, with nothing written: a
    /// directory another engine wrote ([`TableError::OtherEngine`]), an option RocksDB cannot
    /// take, and options whose RocksDB values differ from Talus's unless `accept` names them
    /// (`InvalidArgument` listing each difference).
    pub fn open(path: &Path, o: &talus::Options, accept: &[String]) -> Result<RocksDb> {
        super::refuse_other_engine(path, Self::NAME)?;
        let r = rocks_options(o);
        let throttle = throttle::for_limits(r.io_limits);
        let prepared = prepare(&r, throttle.as_ref())?;
        let talus = talus::options_file::render(o);
        let rocksdb = options_text(&prepared)?;
        let comparison = compare(&talus, &rocksdb, accept);
        let refused = comparison.refused();
        if !refused.is_empty() {
            let lines: Vec<String> = comparison
                .lines("talus", "rocksdb")
                .into_iter()
                .filter(|l| !l.ends_with("(accepted)"))
                .collect();
            return Err(TableError::Engine(talus::Error::InvalidArgument(format!(
                "RocksDB would run with options that differ from Talus's ({} of {} compared; \
                 accept them by name to run anyway):\n{}",
                refused.len(),
                comparison.compared,
                lines.join("\n")
            ))));
        }
        let cpath = c_path(path)?;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live prepared options (copied by the open) and path.
        let h = unsafe { talus_tbl_open(prepared.0, cpath.as_ptr(), &mut err) };
        check(&format!("open {}", path.display()), err)?;
        if h.is_null() {
            return Err(TableError::Engine(talus::Error::InvalidArgument(format!(
                "open {}: RocksDB returned no database",
                path.display()
            ))));
        }
        Ok(RocksDb {
            db: Arc::new(DbHandle { h, throttle }),
            path: path.to_path_buf(),
            report: OptionsReport { talus, rocksdb, comparison },
        })
    }

    /// What the device caps counted and waited since open (`io_limit_*`; none without caps).
    pub fn io_throttle(&self) -> Option<ThrottleStats> {
        self.db.throttle.as_ref().map(|t| t.stats())
    }

    /// The device caps' throttle (none without caps), shared with RocksDB's file system: its
    /// counts stay readable after the database closed.
    pub fn throttle(&self) -> Option<&Arc<Throttle>> {
        self.db.throttle.as_ref()
    }

    /// The options comparison made at open.
    pub fn options_report(&self) -> &OptionsReport {
        &self.report
    }

    fn h(&self) -> *mut c_void {
        self.db.h
    }
}

impl Storage for RocksDb {
    const NAME: &'static str = "rocksdb";
    type Snapshot = RocksSnapshot;
    type ReadOptions = RocksReadOptions;
    type Batch = RocksBatch;
    type Cursor = RocksCursor;
    type SstWriter = RocksSstWriter;

    fn read_options(&self, snapshot: Option<&RocksSnapshot>) -> RocksReadOptions {
        let snap = snapshot.map_or(std::ptr::null(), |s| s.0.snap);
        // SAFETY: the snapshot (if any) is held by the read view, so it outlives it.
        let ro = unsafe { talus_tbl_readopts_new(snap, 1) };
        RocksReadOptions { ro, _snapshot: snapshot.cloned() }
    }

    #[inline(never)]
    fn get_at(&self, key: &[u8], ro: &RocksReadOptions) -> SResult<Option<Vec<u8>>> {
        let mut out: Vec<u8> = Vec::new();
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live database and read view; `out` is a Vec filled only by `fill_vec`.
        let r = unsafe {
            talus_tbl_get(
                self.h(),
                ro.ro,
                key.as_ptr().cast(),
                key.len(),
                (&mut out as *mut Vec<u8>).cast(),
                fill_vec,
                &mut err,
            )
        };
        match r {
            1 => Ok(Some(out)),
            0 => Ok(None),
            _ => check("Get", err).and(Err(talus::Error::Busy("Get failed".into()))),
        }
    }

    #[inline(never)]
    fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        ro: &RocksReadOptions,
    ) -> Vec<SResult<Option<Vec<u8>>>> {
        let n = keys.len();
        let ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ref().as_ptr().cast()).collect();
        let lens: Vec<usize> = keys.iter().map(|k| k.as_ref().len()).collect();
        let mut vals: Vec<Option<Vec<u8>>> = vec![None; n];
        let mut found: Vec<c_int> = vec![0; n];
        let mut errs: Vec<*mut c_char> = vec![std::ptr::null_mut(); n];
        // SAFETY: n keys, n slots for values, found flags and errors; `vals` is filled only by
        // `fill_slot`, within its length.
        unsafe {
            talus_tbl_multi_get(
                self.h(),
                ro.ro,
                n,
                ptrs.as_ptr(),
                lens.as_ptr(),
                (&mut vals as *mut Vec<Option<Vec<u8>>>).cast(),
                fill_slot,
                found.as_mut_ptr(),
                errs.as_mut_ptr(),
            )
        };
        vals.into_iter()
            .zip(found)
            .zip(errs)
            .map(|((v, f), e)| match f {
                1 => Ok(v),
                0 => Ok(None),
                _ => check("MultiGet", e).and(Err(talus::Error::Busy("MultiGet failed".into()))),
            })
            .collect()
    }

    #[inline(never)]
    fn write_batch(&self, batch: RocksBatch, wo: &WriteOptions) -> SResult<()> {
        if let Some(e) = &batch.err {
            return Err(status_error("WriteBatch", e.clone()));
        }
        let Some(b) = batch.b else { return Ok(()) };
        // SAFETY: live database and batch.
        check("Write", unsafe {
            talus_tbl_write(self.h(), b.as_ptr(), u8::from(wo.sync), u8::from(wo.disable_wal))
        })
    }

    fn take_snapshot(&self) -> RocksSnapshot {
        // SAFETY: live database; released by the last clone's drop.
        let snap = unsafe { talus_tbl_snapshot(self.h()) };
        RocksSnapshot(Arc::new(SnapInner { db: self.db.clone(), snap }))
    }

    fn cursor(&self, range: Range<'_, Self>, walk: Walk) -> RocksCursor {
        let snap = range.snapshot.map_or(std::ptr::null(), |s| s.0.snap);
        // SAFETY: live database; the bounds are copied by the shim; the snapshot is held by
        // the cursor, so it outlives the iterator.
        let it = unsafe {
            talus_tbl_iter_new(
                self.h(),
                snap,
                u8::from(range.fill_cache),
                range.lower.as_ptr().cast(),
                range.lower.len(),
                range.upper.as_ptr().cast(),
                range.upper.len(),
                u8::from(walk == Walk::Reverse),
            )
        };
        RocksCursor::new(it, range.snapshot.cloned(), self.db.clone())
    }

    fn dir(&self) -> &Path {
        &self.path
    }

    fn instance(&self) -> usize {
        Arc::as_ptr(&self.db) as usize
    }

    fn scratch_fs(&self) -> Arc<dyn Fs> {
        Arc::new(StdFs)
    }

    fn sst_writer(&self, path: &Path) -> SResult<RocksSstWriter> {
        let cpath = c_path(path)?;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live database; the path is read during the call.
        let w = unsafe { talus_tbl_sst_open(self.h(), cpath.as_ptr(), &mut err) };
        check("SstFileWriter::Open", err)?;
        Ok(RocksSstWriter { w, _db: self.db.clone() })
    }

    fn ingest_behind(&self, _paths: &[PathBuf]) -> SResult<bool> {
        Ok(false)
    }

    fn ingest(&self, paths: &[PathBuf]) -> SResult<()> {
        let cs: Vec<CString> = paths.iter().map(|p| c_path(p)).collect::<SResult<_>>()?;
        let ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live database; `n` NUL-terminated paths that outlive the call.
        check("IngestExternalFile", unsafe {
            talus_tbl_ingest(self.h(), ptrs.as_ptr(), ptrs.len())
        })
    }

    fn flush_all(&self) -> SResult<()> {
        // SAFETY: live database.
        check("Flush", unsafe { talus_tbl_flush(self.h()) })
    }

    fn compact_all(&self) -> SResult<()> {
        // SAFETY: live database.
        check("CompactRange", unsafe { talus_tbl_compact(self.h()) })
    }

    fn live_size(&self) -> LiveSize {
        live_dir_size(&self.path, &Default::default())
    }

    fn property(&self, name: &str) -> Option<String> {
        // SAFETY (both): live database; the results are malloc'd or null.
        let v = if name == "rocksdb.options-statistics" {
            unsafe { talus_tbl_statistics(self.h()) }
        } else {
            let c = CString::new(name).ok()?;
            unsafe { talus_tbl_property(self.h(), c.as_ptr()) }
        };
        let text = (!v.is_null()).then(|| take_string(v))?;
        match (&self.db.throttle, name) {
            // The throttle's waits in Talus's ticker's name, so the tools' interval files show
            // them for RocksDB as for Talus.
            (Some(t), "rocksdb.options-statistics") => Some(format!(
                "{text}talus.io.throttle.wait.micros COUNT : {}\n",
                t.stats().wait_micros
            )),
            _ => Some(text),
        }
    }
}
