//! The `rocksdb` engine (cargo feature `rocksdb`): RocksDB through its C API (`librocksdb-sys`),
//! with the same flags mapped onto RocksDB's options of the same names (`options.rs`), and the
//! per-operation put and get made in C++ as RocksDB's own db_bench makes them (`shim.cc`: a
//! reused `WriteBatch` per thread, a `PinnableSlice` per get). The `rocksdb` crate was used
//! before; its put builds a `WriteBatch` and its get allocates a slice object per call, which
//! kept this harness 5-6% behind RocksDB's db_bench on the fill steps (issue 12's calibration).
//!
//! Owns the open database (`rocksdb_t`) and the shim's handle; thread-safe as RocksDB's `DB` is.

mod iter;
mod options;
mod shim;

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::time::Duration;

use librocksdb_sys as ffi;

use super::super::flags::Flags;
use super::{EResult, Engine, EngineIter, Ops};
use iter::RocksIter;
use shim::*;

fn c_path(path: &Path) -> EResult<CString> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a path with a NUL byte", path.display()))
}

/// A RocksDB database.
pub struct RocksEngine {
    db: *mut ffi::rocksdb_t,
    /// The shim's handle: the `DB*`, one `WriteOptions` and one `ReadOptions` (RocksDB's db_bench
    /// keeps one of each).
    shim: *mut c_void,
    /// For iterators and MultiGet (RocksDB copies it into each iterator).
    ro: *mut ffi::rocksdb_readoptions_t,
    /// RocksDB's `PerfLevel` for every benchmark thread (thread-local in RocksDB; db_bench sets
    /// it in each thread from `--perf_level`, default 1 = kDisable).
    perf_level: c_int,
    /// `--subcompactions`, for `compact` (db_bench's `CompactRangeOptions::max_subcompactions`).
    subcompactions: c_int,
}

// SAFETY: RocksDB's DB, its read options (only read after open) and the shim's handle (read-only
// after creation) may be used from any thread.
unsafe impl Send for RocksEngine {}
unsafe impl Sync for RocksEngine {}

impl RocksEngine {
    /// Opens (creating unless `--use_existing_db`; read-only with `--readonly`) the database
    /// at `path`.
    pub fn open(f: &Flags, path: &Path) -> EResult<Self> {
        if let Some((name, _)) = f.engine_extra.first() {
            return Err(format!(
                "flag --{name}: engine options beyond db_bench's own flags (and --options_file, \
                 --options) are applied to --engine=talus only"
            ));
        }
        if f.wal_mmap_writes == Some(true) {
            return Err(
                "invalid value true for flag --wal_mmap_writes: RocksDB cannot map its WAL \
                        (PosixFileSystem::OptimizeForLogWrite turns use_mmap_writes off)"
                    .into(),
            );
        }
        let o = options::db_options(f)?;
        let cpath = c_path(path)?;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live options and path; RocksDB copies both.
        let db = unsafe {
            if f.readonly {
                ffi::rocksdb_open_for_read_only(o.0, cpath.as_ptr(), 0, &mut err)
            } else {
                ffi::rocksdb_open(o.0, cpath.as_ptr(), &mut err)
            }
        };
        check(err).map_err(|e| format!("opening {}: {e}", path.display()))?;
        if db.is_null() {
            return Err(format!("opening {}: RocksDB returned no database", path.display()));
        }
        let mut name: *mut c_char = std::ptr::null_mut();
        // SAFETY: `db` is open; the shim copies the options it is given.
        let shim = unsafe {
            talus_rdb_new(
                db,
                u8::from(f.sync),
                u8::from(f.disable_wal),
                u8::from(f.verify_checksum),
                &mut name,
            )
        };
        // SAFETY: created just above.
        let ro = unsafe { ffi::rocksdb_readoptions_create() };
        // SAFETY: `ro` is live.
        unsafe { ffi::rocksdb_readoptions_set_verify_checksums(ro, u8::from(f.verify_checksum)) };
        let engine = RocksEngine {
            db,
            shim,
            ro,
            perf_level: f.perf_level as c_int,
            subcompactions: f.subcompactions as c_int,
        };
        // The shim reads the `DB*` out of the C API's handle by its layout in RocksDB's db/c.cc;
        // the name the DB reports through it must be the path RocksDB was given.
        let got = if name.is_null() { String::new() } else { take_string(name) };
        if got.as_bytes() != cpath.as_bytes() {
            return Err(format!(
                "the RocksDB shim read a database named {got:?} where {} was opened: the C API's \
                 handle layout changed",
                path.display()
            ));
        }
        Ok(engine)
    }

    fn int_prop(&self, name: &str) -> u64 {
        let Ok(c) = CString::new(name) else { return 0 };
        let mut v = 0u64;
        // SAFETY: open database, NUL-terminated name.
        let r = unsafe { ffi::rocksdb_property_int(self.db, c.as_ptr(), &mut v) };
        if r == 0 {
            v
        } else {
            0
        }
    }
}

impl Drop for RocksEngine {
    fn drop(&mut self) {
        // SAFETY: each created in `open` and released only here, the shim before the database.
        unsafe {
            talus_rdb_free(self.shim);
            ffi::rocksdb_readoptions_destroy(self.ro);
            ffi::rocksdb_close(self.db);
        }
    }
}

/// Removes the database at `path` with RocksDB's `DestroyDB` (it takes the LOCK first).
pub fn destroy(path: &Path) -> EResult<()> {
    let cpath = c_path(path)?;
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: options created and destroyed here; RocksDB reads the path only during the call.
    unsafe {
        let o = ffi::rocksdb_options_create();
        ffi::rocksdb_destroy_db(o, cpath.as_ptr(), &mut err);
        ffi::rocksdb_options_destroy(o);
    }
    check(err)
}

impl Engine for RocksEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        // SAFETY: live handle; the slices outlive the call.
        check(unsafe {
            talus_rdb_put(
                self.shim,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        })
    }

    fn write(&self, ops: &Ops) -> EResult<()> {
        // SAFETY: the calling thread's batch; the slices outlive each call.
        unsafe {
            talus_rdb_batch_clear();
            for (del, k, v) in ops.iter() {
                check(talus_rdb_batch_add(
                    u8::from(del),
                    k.as_ptr().cast(),
                    k.len(),
                    v.as_ptr().cast(),
                    v.len(),
                ))?;
            }
            check(talus_rdb_batch_write(self.shim))
        }
    }

    fn get(&self, key: &[u8]) -> EResult<Option<usize>> {
        let mut len = 0usize;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live handle; the key outlives the call.
        let r =
            unsafe { talus_rdb_get(self.shim, key.as_ptr().cast(), key.len(), &mut len, &mut err) };
        match r {
            1 => Ok(Some(len)),
            0 => Ok(None),
            _ => Err(if err.is_null() { "Get failed".into() } else { take_string(err) }),
        }
    }

    fn multi_get(&self, keys: &[Vec<u8>], sizes: &mut Vec<Option<usize>>) -> EResult<()> {
        let n = keys.len();
        let ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr().cast()).collect();
        let lens: Vec<usize> = keys.iter().map(Vec::len).collect();
        let mut values: Vec<*mut c_char> = vec![std::ptr::null_mut(); n];
        let mut value_lens = vec![0usize; n];
        let mut errs: Vec<*mut c_char> = vec![std::ptr::null_mut(); n];
        // SAFETY: n keys, n slots for values, sizes and errors; each returned value and error is
        // malloc'd and freed below.
        unsafe {
            ffi::rocksdb_multi_get(
                self.db,
                self.ro,
                n,
                ptrs.as_ptr(),
                lens.as_ptr(),
                values.as_mut_ptr(),
                value_lens.as_mut_ptr(),
                errs.as_mut_ptr(),
            );
        }
        sizes.clear();
        let mut first_err = None;
        for i in 0..n {
            if !errs[i].is_null() {
                let e = take_string(errs[i]);
                first_err.get_or_insert(e);
            }
            if values[i].is_null() {
                sizes.push(None);
            } else {
                sizes.push(Some(value_lens[i]));
                // SAFETY: malloc'd by RocksDB's C API for us.
                unsafe { libc::free(values[i].cast()) };
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn iter(&self) -> Box<dyn EngineIter + '_> {
        // SAFETY: open database; RocksDB copies the read options into the iterator.
        let it = unsafe { ffi::rocksdb_create_iterator(self.db, self.ro) };
        Box::new(RocksIter { it, valid: false, _db: std::marker::PhantomData })
    }

    fn seek_scan(&self, key: &[u8], nexts: u64, buf: &mut [u8; 256]) -> EResult<(bool, u64)> {
        let mut bytes = 0u64;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live handle; the key and the buffer outlive the call, which writes at most
        // `buf.len()` bytes into the buffer.
        let r = unsafe {
            talus_rdb_seek(
                self.shim,
                key.as_ptr().cast(),
                key.len(),
                nexts,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut bytes,
                &mut err,
            )
        };
        match r {
            0 | 1 => Ok((r == 1, bytes)),
            _ => Err(if err.is_null() { "Seek failed".into() } else { take_string(err) }),
        }
    }

    fn flush(&self) -> EResult<()> {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: flush options created and destroyed here; open database.
        unsafe {
            let fo = ffi::rocksdb_flushoptions_create();
            ffi::rocksdb_flushoptions_set_wait(fo, 1);
            ffi::rocksdb_flush(self.db, fo, &mut err);
            ffi::rocksdb_flushoptions_destroy(fo);
        }
        check(err)
    }

    fn compact(&self) -> EResult<()> {
        // As RocksDB's db_bench `compact`: the bottommost level rewritten too
        // (`BottommostLevelCompaction::kForceOptimized` = 3; RocksDB's default, 1, would leave
        // it, or move files into it, so the step after would read different files) and
        // `max_subcompactions = --subcompactions`.
        // SAFETY: options created and destroyed here; open database; null bounds = every key.
        unsafe {
            let co = ffi::rocksdb_compactoptions_create();
            ffi::rocksdb_compactoptions_set_bottommost_level_compaction(co, 3);
            ffi::rocksdb_compactoptions_set_max_subcompactions(co, self.subcompactions);
            ffi::rocksdb_compact_range_opt(self.db, co, std::ptr::null(), 0, std::ptr::null(), 0);
            ffi::rocksdb_compactoptions_destroy(co);
        }
        Ok(())
    }

    fn wait_for_compaction(&self) -> EResult<()> {
        loop {
            let busy = self.int_prop("rocksdb.compaction-pending")
                + self.int_prop("rocksdb.num-running-compactions")
                + self.int_prop("rocksdb.num-running-flushes")
                + self.int_prop("rocksdb.mem-table-flush-pending");
            if busy == 0 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn property(&self, name: &str) -> Option<String> {
        let full = if name == "statistics" {
            "rocksdb.options-statistics".to_string()
        } else {
            format!("rocksdb.{name}")
        };
        let c = CString::new(full).ok()?;
        // SAFETY: open database, NUL-terminated name; the result is malloc'd or null.
        let v = unsafe { ffi::rocksdb_property_value(self.db, c.as_ptr()) };
        (!v.is_null()).then(|| take_string(v))
    }

    fn memtable_name(&self) -> &'static str {
        "SkipListFactory"
    }

    fn thread_init(&self) {
        // As RocksDB's db_bench: `SetPerfLevel(static_cast<PerfLevel>(FLAGS_perf_level))`.
        // SAFETY: sets a thread-local.
        unsafe { ffi::rocksdb_set_perf_level(self.perf_level) }
    }
}
