//! A capped device for SQLite: a VFS that forwards every call to SQLite's default VFS and makes
//! reads, writes, syncs and truncates wait on a [`Throttle`], the token buckets a capped Talus
//! database uses (`talus::fs::throttle`), so the tools' `--io_limit_*` hold `--engine=sqlite`
//! to the same device as `--engine=talus`.
//!
//! What counts, as for Talus's buffered files (`docs/design/throttle.md`): `xRead` is its bytes
//! and one read IO per started 256 KiB; `xWrite`'s bytes are charged at once and its IOs when
//! the file's bytes go to the device: at `xSync` (plus one IO for the cache flush) and at
//! `xClose`, one per started 256 KiB since the last such point; `xTruncate` is one write IO, as
//! is a delete that syncs the directory. The WAL index (shared memory) is not IO.
//!
//! Who calls: [`super::sqlite::open_connection`] opens its connection through [`vfs_for`] when
//! the tool's `io_limits` set a cap. One VFS is registered per distinct set of caps in a process
//! and never unregistered (SQLite keeps its pointer); every connection with those caps shares
//! its throttle, as one device. Locks: the registry's mutex while looking up or registering;
//! SQLite serializes the calls on one file, so a file's own state needs none.

use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::{Arc, Mutex};

use rusqlite::ffi;
use talus::fs::throttle::{IoLimits, Throttle, MAX_IO_BYTES};

/// A registered VFS: its caps, name and throttle.
struct Registered {
    limits: IoLimits,
    name: String,
    throttle: Arc<Throttle>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// What a registered VFS's `pAppData` points at (leaked with the VFS).
struct VfsState {
    inner: *mut ffi::sqlite3_vfs,
    throttle: Arc<Throttle>,
}

/// The name of the VFS that holds connections to `limits` (registered on first use), and its
/// throttle (its counts: `Throttle::stats`).
pub fn vfs_for(limits: IoLimits) -> Result<(String, Arc<Throttle>), String> {
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = reg.iter().find(|r| r.limits == limits) {
        return Ok((r.name.clone(), r.throttle.clone()));
    }
    let name = format!("talus-throttle-{}", reg.len());
    let zname = CString::new(name.clone()).map_err(|e| format!("sqlite VFS name: {e}"))?;
    let throttle = Arc::new(Throttle::new(limits));
    // SAFETY: sqlite3_vfs_find initializes SQLite and returns the default VFS, which lives for
    // the process. The VFS, its name and its state are leaked: SQLite keeps pointers to them
    // for as long as the process runs (a registered VFS is never unregistered here).
    unsafe {
        let default = ffi::sqlite3_vfs_find(null());
        if default.is_null() {
            return Err("sqlite: no default VFS to wrap".into());
        }
        let d = *default;
        let state =
            Box::into_raw(Box::new(VfsState { inner: default, throttle: throttle.clone() }));
        let vfs = Box::into_raw(Box::new(ffi::sqlite3_vfs {
            szOsFile: std::mem::size_of::<TFile>() as c_int + d.szOsFile,
            pNext: null_mut(),
            zName: zname.into_raw(),
            pAppData: state.cast(),
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            ..d
        }));
        let rc = ffi::sqlite3_vfs_register(vfs, 0);
        if rc != ffi::SQLITE_OK {
            return Err(format!("sqlite: registering the throttled VFS failed ({rc})"));
        }
    }
    reg.push(Registered { limits, name: name.clone(), throttle: throttle.clone() });
    Ok((name, throttle))
}

/// A file of the throttled VFS: SQLite's file header, the throttle, and the default VFS's file
/// right after this struct (`szOsFile` makes room for both).
#[repr(C)]
struct TFile {
    base: ffi::sqlite3_file,
    throttle: *const Throttle,
    /// Bytes written since they last went to the device (sync, close).
    unsent: u64,
}

/// The default VFS's file inside `f`.
unsafe fn inner(f: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    f.cast::<u8>().add(std::mem::size_of::<TFile>()).cast()
}

/// The default VFS's file inside `f` and its methods.
unsafe fn im(
    f: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let i = inner(f);
    (i, &*(*i).pMethods)
}

unsafe fn tfile<'a>(f: *mut ffi::sqlite3_file) -> &'a mut TFile {
    &mut *f.cast::<TFile>()
}

/// Charges the write IOs of the bytes not yet sent to the device, plus `extra`.
unsafe fn send(f: *mut ffi::sqlite3_file, extra: u64) {
    let t = tfile(f);
    let ios = t.unsent.div_ceil(MAX_IO_BYTES) + extra;
    t.unsent = 0;
    (*t.throttle).wait_write(ios, 0);
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let st = &*(*vfs).pAppData.cast::<VfsState>();
    let Some(open) = (*st.inner).xOpen else { return ffi::SQLITE_ERROR };
    let i = inner(file);
    (*i).pMethods = null();
    let rc = open(st.inner, name, i, flags, out_flags);
    let t = file.cast::<TFile>();
    // SQLite calls xClose whenever pMethods is set, even after a failed open: wrap exactly when
    // the default VFS set its own.
    (*t).base.pMethods = if (*i).pMethods.is_null() { null() } else { &METHODS };
    (*t).throttle = Arc::as_ptr(&st.throttle);
    (*t).unsent = 0;
    rc
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let st = &*(*vfs).pAppData.cast::<VfsState>();
    let Some(delete) = (*st.inner).xDelete else { return ffi::SQLITE_IOERR_DELETE };
    if sync_dir != 0 {
        st.throttle.wait_write(1, 0);
    }
    delete(st.inner, name, sync_dir)
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    send(f, 0);
    let (i, m) = im(f);
    m.xClose.map_or(ffi::SQLITE_OK, |c| c(i))
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    n: c_int,
    off: i64,
) -> c_int {
    (*tfile(f).throttle).wait_read(n.max(0) as u64);
    let (i, m) = im(f);
    m.xRead.map_or(ffi::SQLITE_IOERR_READ, |r| r(i, buf, n, off))
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    n: c_int,
    off: i64,
) -> c_int {
    let t = tfile(f);
    let bytes = n.max(0) as u64;
    (*t.throttle).wait_write(0, bytes);
    t.unsent += bytes;
    let (i, m) = im(f);
    m.xWrite.map_or(ffi::SQLITE_IOERR_WRITE, |w| w(i, buf, n, off))
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: i64) -> c_int {
    (*tfile(f).throttle).wait_write(1, 0);
    let (i, m) = im(f);
    m.xTruncate.map_or(ffi::SQLITE_IOERR_TRUNCATE, |t| t(i, size))
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    send(f, 1);
    let (i, m) = im(f);
    m.xSync.map_or(ffi::SQLITE_IOERR_FSYNC, |s| s(i, flags))
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    let (i, m) = im(f);
    m.xFileSize.map_or(ffi::SQLITE_IOERR_FSTAT, |s| s(i, size))
}

unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (i, m) = im(f);
    m.xLock.map_or(ffi::SQLITE_IOERR_LOCK, |l| l(i, level))
}

unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (i, m) = im(f);
    m.xUnlock.map_or(ffi::SQLITE_IOERR_UNLOCK, |l| l(i, level))
}

unsafe extern "C" fn x_check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let (i, m) = im(f);
    m.xCheckReservedLock.map_or(ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, |c| c(i, out))
}

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let (i, m) = im(f);
    m.xFileControl.map_or(ffi::SQLITE_NOTFOUND, |c| c(i, op, arg))
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = im(f);
    m.xSectorSize.map_or(4096, |s| s(i))
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = im(f);
    m.xDeviceCharacteristics.map_or(0, |d| d(i))
}

unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    page: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (i, m) = im(f);
    match m.xShmMap {
        Some(s) if m.iVersion >= 2 => s(i, page, size, extend, out),
        _ => ffi::SQLITE_IOERR_SHMMAP,
    }
}

unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    off: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let (i, m) = im(f);
    match m.xShmLock {
        Some(s) if m.iVersion >= 2 => s(i, off, n, flags),
        _ => ffi::SQLITE_IOERR_SHMLOCK,
    }
}

unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    let (i, m) = im(f);
    if let (Some(s), true) = (m.xShmBarrier, m.iVersion >= 2) {
        s(i);
    }
}

unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (i, m) = im(f);
    match m.xShmUnmap {
        Some(s) if m.iVersion >= 2 => s(i, delete),
        _ => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    off: i64,
    n: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (i, m) = im(f);
    match m.xFetch {
        // A mapped page is read by a page fault, not a call: charge what was mapped as a read
        // (nothing mapped: SQLite falls back to xRead, which is charged there).
        Some(x) if m.iVersion >= 3 => {
            let rc = x(i, off, n, out);
            if rc == ffi::SQLITE_OK && !(*out).is_null() {
                (*tfile(f).throttle).wait_read(n.max(0) as u64);
            }
            rc
        }
        // No mapping: SQLite falls back to xRead.
        _ => {
            *out = null_mut();
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn x_unfetch(f: *mut ffi::sqlite3_file, off: i64, p: *mut c_void) -> c_int {
    let (i, m) = im(f);
    match m.xUnfetch {
        Some(x) if m.iVersion >= 3 => x(i, off, p),
        _ => ffi::SQLITE_OK,
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

#[cfg(test)]
mod tests;
