//! [`RocksBackend`]: the store's [`Backend`] on RocksDB 10.4.2 through its C API
//! (`librocksdb-sys`, the `rocksdb` feature; the same source tree talus-cli's `--engine=rocksdb`
//! builds): batches are `rocksdb_writebatch`es (`sync`, `disableWAL` from [`Durability`]),
//! `sync_wal` is `FlushWAL(true)`, snapshots are RocksDB snapshots, tables are written by its
//! `SstFileWriter` and installed by `IngestExternalFile` (files moved in). RocksDB runs with
//! its default options (and `create_if_missing`), as Talus does with its own. Snapshot files go
//! through the standard file system.
//!
//! Ownership: the handle closes when the last `Arc` of it goes (snapshots hold one).

use std::ffi::{c_char, CString};
use std::path::Path;
use std::ptr;
use std::sync::Arc;

use librocksdb_sys as ffi;
use talus::fs::{Fs, StdFs};
use talus::{Error, Result};

use super::{Backend, Batch, Durability, Op, ScanFn};

struct Handle {
    db: *mut ffi::rocksdb_t,
    options: *mut ffi::rocksdb_options_t,
}

// SAFETY: a RocksDB `DB` and its options may be used from any thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: opened by `rocksdb_open`; every snapshot holds an Arc of this handle, so none
        // is left; closed and destroyed once.
        unsafe {
            ffi::rocksdb_close(self.db);
            ffi::rocksdb_options_destroy(self.options);
        }
    }
}

/// A RocksDB read view.
pub struct RocksSnap {
    h: Arc<Handle>,
    snap: *const ffi::rocksdb_snapshot_t,
}

// SAFETY: a RocksDB snapshot is immutable; the DB releases it under its own lock.
unsafe impl Send for RocksSnap {}
unsafe impl Sync for RocksSnap {}

impl Drop for RocksSnap {
    fn drop(&mut self) {
        // SAFETY: taken from this database, released once.
        unsafe { ffi::rocksdb_release_snapshot(self.h.db, self.snap) }
    }
}

/// A RocksDB database as the Raft store's engine.
pub struct RocksBackend {
    h: Arc<Handle>,
    fs: StdFs,
}

/// Turns a RocksDB error string (malloc'ed by RocksDB) into an error, freeing it.
fn check(err: *mut c_char, what: &str) -> Result<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a NUL-terminated string RocksDB allocated; copied, then freed once.
    let msg = unsafe { std::ffi::CStr::from_ptr(err) }.to_string_lossy().into_owned();
    unsafe { ffi::rocksdb_free(err.cast()) };
    Err(Error::io(what.to_string(), std::io::Error::other(format!("rocksdb: {msg}"))))
}

fn c_path(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::InvalidArgument(format!("{}: a NUL byte in the path", p.display())))
}

/// Read options at `snap` (or the latest), with an upper bound the caller keeps alive.
struct ReadOpts(*mut ffi::rocksdb_readoptions_t);

impl ReadOpts {
    fn new(snap: Option<&RocksSnap>) -> ReadOpts {
        // SAFETY: a fresh options object, destroyed in Drop; the snapshot outlives its use.
        unsafe {
            let o = ffi::rocksdb_readoptions_create();
            if let Some(s) = snap {
                ffi::rocksdb_readoptions_set_snapshot(o, s.snap);
            }
            ReadOpts(o)
        }
    }
}

impl Drop for ReadOpts {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        unsafe { ffi::rocksdb_readoptions_destroy(self.0) }
    }
}

/// An iterator over `[start, end)`, destroyed on drop (before its read options).
struct Iter {
    it: *mut ffi::rocksdb_iterator_t,
    _opts: ReadOpts,
    _end: Vec<u8>,
}

impl Iter {
    fn new(h: &Handle, snap: Option<&RocksSnap>, end: &[u8]) -> Iter {
        let opts = ReadOpts::new(snap);
        let end = end.to_vec();
        // SAFETY: `end` lives in the returned Iter, as long as the options that point to it.
        let it = unsafe {
            ffi::rocksdb_readoptions_set_iterate_upper_bound(
                opts.0,
                end.as_ptr().cast(),
                end.len(),
            );
            ffi::rocksdb_create_iterator(h.db, opts.0)
        };
        Iter { it, _opts: opts, _end: end }
    }
    fn valid(&self) -> bool {
        // SAFETY: a live iterator.
        unsafe { ffi::rocksdb_iter_valid(self.it) != 0 }
    }
    fn key(&self) -> &[u8] {
        let mut n = 0;
        // SAFETY: valid iterator; the slice lives until the next move, which needs `&mut`.
        unsafe { std::slice::from_raw_parts(ffi::rocksdb_iter_key(self.it, &mut n).cast(), n) }
    }
    fn value(&self) -> &[u8] {
        let mut n = 0;
        // SAFETY: as `key`.
        unsafe { std::slice::from_raw_parts(ffi::rocksdb_iter_value(self.it, &mut n).cast(), n) }
    }
    fn status(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: a live iterator; `err` receives a string we free in `check`.
        unsafe { ffi::rocksdb_iter_get_error(self.it, &mut err) };
        check(err, "rocksdb iterator")
    }
}

impl Drop for Iter {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, before `_opts`.
        unsafe { ffi::rocksdb_iter_destroy(self.it) }
    }
}

impl RocksBackend {
    /// Opens (creating if missing) the RocksDB database in `dir` with RocksDB's defaults.
    pub fn open(dir: &Path) -> Result<RocksBackend> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let path = c_path(dir)?;
        let mut err = ptr::null_mut();
        // SAFETY: options created here and owned by the Handle; `path` is NUL-terminated.
        unsafe {
            let options = ffi::rocksdb_options_create();
            ffi::rocksdb_options_set_create_if_missing(options, 1);
            let db = ffi::rocksdb_open(options, path.as_ptr(), &mut err);
            if let Err(e) = check(err, &format!("opening {}", dir.display())) {
                ffi::rocksdb_options_destroy(options);
                return Err(e);
            }
            Ok(RocksBackend { h: Arc::new(Handle { db, options }), fs: StdFs })
        }
    }
}

impl Backend for RocksBackend {
    type Snap = RocksSnap;

    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn tag(&self) -> u8 {
        2
    }

    fn write(&self, batch: &Batch, durability: Durability) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: batch and options created and destroyed here; the slices outlive the calls.
        unsafe {
            let b = ffi::rocksdb_writebatch_create();
            for op in batch.ops() {
                match op {
                    Op::Put(k, v) => ffi::rocksdb_writebatch_put(
                        b,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    ),
                    Op::Delete(k) => ffi::rocksdb_writebatch_delete(b, k.as_ptr().cast(), k.len()),
                    Op::DeleteRange(s, e) => ffi::rocksdb_writebatch_delete_range(
                        b,
                        s.as_ptr().cast(),
                        s.len(),
                        e.as_ptr().cast(),
                        e.len(),
                    ),
                }
            }
            let w = ffi::rocksdb_writeoptions_create();
            ffi::rocksdb_writeoptions_set_sync(w, u8::from(durability == Durability::Synced));
            ffi::rocksdb_writeoptions_disable_WAL(w, i32::from(durability == Durability::Unlogged));
            ffi::rocksdb_write(self.h.db, w, b, &mut err);
            ffi::rocksdb_writeoptions_destroy(w);
            ffi::rocksdb_writebatch_destroy(b);
        }
        check(err, "rocksdb write")
    }

    fn sync_wal(&self) -> Result<()> {
        let mut err = ptr::null_mut();
        // SAFETY: a live database.
        unsafe { ffi::rocksdb_flush_wal(self.h.db, 1, &mut err) };
        check(err, "rocksdb FlushWAL(sync)")
    }

    fn get(&self, snap: Option<&RocksSnap>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let opts = ReadOpts::new(snap);
        let mut err = ptr::null_mut();
        let mut len = 0;
        // SAFETY: a live database; the value RocksDB returns is copied, then freed once.
        let v = unsafe {
            ffi::rocksdb_get(self.h.db, opts.0, key.as_ptr().cast(), key.len(), &mut len, &mut err)
        };
        check(err, "rocksdb get")?;
        if v.is_null() {
            return Ok(None);
        }
        // SAFETY: `v` points to `len` bytes RocksDB allocated.
        let out = unsafe { std::slice::from_raw_parts(v.cast::<u8>(), len) }.to_vec();
        unsafe { ffi::rocksdb_free(v.cast()) };
        Ok(Some(out))
    }

    fn snapshot(&self) -> RocksSnap {
        // SAFETY: a live database; released by RocksSnap's Drop.
        let snap = unsafe { ffi::rocksdb_create_snapshot(self.h.db) };
        RocksSnap { h: self.h.clone(), snap }
    }

    fn scan(
        &self,
        snap: Option<&RocksSnap>,
        start: &[u8],
        end: &[u8],
        f: &mut ScanFn<'_>,
    ) -> Result<()> {
        let it = Iter::new(&self.h, snap, end);
        // SAFETY: a live iterator.
        unsafe { ffi::rocksdb_iter_seek(it.it, start.as_ptr().cast(), start.len()) };
        while it.valid() {
            if !f(it.key(), it.value())? {
                break;
            }
            // SAFETY: a valid iterator.
            unsafe { ffi::rocksdb_iter_next(it.it) };
        }
        it.status()
    }

    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let it = Iter::new(&self.h, None, end);
        // SAFETY: a live iterator; the upper bound makes the last entry the last before `end`.
        unsafe { ffi::rocksdb_iter_seek_to_last(it.it) };
        let found = it.valid() && it.key() >= start;
        let r = found.then(|| (it.key().to_vec(), it.value().to_vec()));
        it.status()?;
        Ok(r)
    }

    fn write_table(
        &self,
        snap: &RocksSnap,
        head: &[(&[u8], &[u8])],
        start: &[u8],
        end: &[u8],
        path: &Path,
    ) -> Result<u64> {
        let p = c_path(path)?;
        let mut err = ptr::null_mut();
        let mut n = 0u64;
        // SAFETY: the writer and its env options are created and destroyed here.
        unsafe {
            let env = ffi::rocksdb_envoptions_create();
            let w = ffi::rocksdb_sstfilewriter_create(env, self.h.options);
            let mut res = {
                ffi::rocksdb_sstfilewriter_open(w, p.as_ptr(), &mut err);
                check(err, "rocksdb SstFileWriter::Open")
            };
            let mut put = |k: &[u8], v: &[u8]| -> Result<bool> {
                let mut err = ptr::null_mut();
                ffi::rocksdb_sstfilewriter_put(
                    w,
                    k.as_ptr().cast(),
                    k.len(),
                    v.as_ptr().cast(),
                    v.len(),
                    &mut err,
                );
                n += 1;
                check(err, "rocksdb SstFileWriter::Put").map(|()| true)
            };
            if res.is_ok() {
                res = head.iter().try_for_each(|(k, v)| put(k, v).map(|_| ()));
            }
            if res.is_ok() {
                res = self.scan(Some(snap), start, end, &mut put);
            }
            if res.is_ok() {
                let mut err = ptr::null_mut();
                ffi::rocksdb_sstfilewriter_finish(w, &mut err);
                res = check(err, "rocksdb SstFileWriter::Finish");
            }
            ffi::rocksdb_sstfilewriter_destroy(w);
            ffi::rocksdb_envoptions_destroy(env);
            res?;
        }
        // RocksDB's SstFileWriter::Finish syncs the file's data; make sure, as Talus's does.
        let f = std::fs::File::open(path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        f.sync_all().map_err(|e| Error::io(format!("syncing {}", path.display()), e))?;
        Ok(n)
    }

    fn ingest(&self, path: &Path) -> Result<()> {
        let p = c_path(path)?;
        let list = [p.as_ptr()];
        let mut err = ptr::null_mut();
        // SAFETY: options created and destroyed here; `list` outlives the call.
        unsafe {
            let o = ffi::rocksdb_ingestexternalfileoptions_create();
            ffi::rocksdb_ingestexternalfileoptions_set_move_files(o, 1);
            ffi::rocksdb_ingest_external_file(self.h.db, list.as_ptr(), 1, o, &mut err);
            ffi::rocksdb_ingestexternalfileoptions_destroy(o);
        }
        check(err, "rocksdb IngestExternalFile")
    }

    fn fs(&self) -> &dyn Fs {
        &self.fs
    }
}
