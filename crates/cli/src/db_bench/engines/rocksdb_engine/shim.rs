//! The C++ shim's functions (`shim.cc`, compiled by crates/cli/build.rs) and the handling of the
//! malloc'd error strings it and RocksDB's C API return.

use std::ffi::{c_char, c_int, c_void, CStr};

use librocksdb_sys as ffi;

use super::super::EResult;

extern "C" {
    pub(super) fn talus_rdb_new(
        db: *mut ffi::rocksdb_t,
        sync: u8,
        disable_wal: u8,
        verify_checksums: u8,
        name: *mut *mut c_char,
    ) -> *mut c_void;
    pub(super) fn talus_rdb_free(h: *mut c_void);
    pub(super) fn talus_rdb_batch_clear();
    pub(super) fn talus_rdb_batch_add(
        del: u8,
        k: *const c_char,
        kl: usize,
        v: *const c_char,
        vl: usize,
    ) -> *mut c_char;
    pub(super) fn talus_rdb_batch_write(h: *mut c_void) -> *mut c_char;
    pub(super) fn talus_rdb_put(
        h: *mut c_void,
        k: *const c_char,
        kl: usize,
        v: *const c_char,
        vl: usize,
    ) -> *mut c_char;
    pub(super) fn talus_rdb_get(
        h: *mut c_void,
        k: *const c_char,
        kl: usize,
        vl: *mut usize,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(super) fn talus_rdb_seek(
        h: *mut c_void,
        k: *const c_char,
        kl: usize,
        nexts: u64,
        buf: *mut c_char,
        buf_len: usize,
        bytes: *mut u64,
        err: *mut *mut c_char,
    ) -> c_int;
}

/// Takes a malloc'd C string (an error message of RocksDB's C API or of the shim): `Err` with it,
/// `Ok` for null.
pub(super) fn check(e: *mut c_char) -> EResult<()> {
    if e.is_null() {
        return Ok(());
    }
    Err(take_string(e))
}

/// The text of a malloc'd C string, which is freed.
pub(super) fn take_string(s: *mut c_char) -> String {
    // SAFETY: `s` is a non-null NUL-terminated string malloc'd by RocksDB or the shim, owned by us.
    unsafe {
        let t = CStr::from_ptr(s).to_string_lossy().into_owned();
        libc::free(s.cast());
        t
    }
}
