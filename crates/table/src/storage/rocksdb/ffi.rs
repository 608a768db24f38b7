//! The C++ shim's functions (`shim.cc`, compiled by crates/table/build.rs), the callbacks that
//! copy RocksDB's bytes into Rust buffers, and RocksDB's status texts mapped onto
//! [`talus::Error`]'s kinds.

use std::ffi::{c_char, c_int, c_long, c_void, CStr};

// Linked for its static RocksDB library, which the shim calls.
use librocksdb_sys as _;

/// Appends `n` bytes at `p` to the buffer `out`.
pub(super) type FillFn = unsafe extern "C" fn(out: *mut c_void, p: *const c_char, n: usize);
/// Appends one iterator entry to the buffer `out`.
pub(super) type EntryFn = unsafe extern "C" fn(
    out: *mut c_void,
    k: *const c_char,
    kl: usize,
    v: *const c_char,
    vl: usize,
);
/// Stores MultiGet value `i` in the buffer `out`.
pub(super) type SlotFn =
    unsafe extern "C" fn(out: *mut c_void, i: usize, p: *const c_char, n: usize);

/// `talus_tbl_throttle` (throttle_fs.h): a Talus `Throttle` and the callbacks that wait on it.
#[repr(C)]
pub(super) struct ThrottleHandle {
    pub throttle: *const c_void,
    pub read: unsafe extern "C" fn(throttle: *const c_void, bytes: u64),
    pub write: unsafe extern "C" fn(throttle: *const c_void, ios: u64, bytes: u64),
    pub max_io_bytes: u64,
}

extern "C" {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn talus_tbl_prepare(
        db_opts: *const c_char,
        cf_opts: *const c_char,
        table_opts: *const c_char,
        cache_type: c_int,
        cache_capacity: usize,
        shard_bits: c_int,
        strict_capacity: u8,
        high_pri_ratio: f64,
        estimated_entry_charge: usize,
        charge_metadata: u8,
        rate_bytes_per_sec: i64,
        statistics: u8,
        throttle: *const ThrottleHandle,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    pub(super) fn talus_tbl_prepared_free(p: *mut c_void);
    pub(super) fn talus_tbl_options_text(p: *mut c_void, err: *mut *mut c_char) -> *mut c_char;
    pub(super) fn talus_tbl_open(
        p: *mut c_void,
        path: *const c_char,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    pub(super) fn talus_tbl_close(h: *mut c_void) -> *mut c_char;
    pub(super) fn talus_tbl_batch_new() -> *mut c_void;
    pub(super) fn talus_tbl_batch_free(b: *mut c_void);
    pub(super) fn talus_tbl_batch_add(
        b: *mut c_void,
        op: c_int,
        k: *const c_char,
        kl: usize,
        v: *const c_char,
        vl: usize,
    ) -> *mut c_char;
    pub(super) fn talus_tbl_write(
        h: *mut c_void,
        b: *mut c_void,
        sync: u8,
        disable_wal: u8,
    ) -> *mut c_char;
    pub(super) fn talus_tbl_snapshot(h: *mut c_void) -> *const c_void;
    pub(super) fn talus_tbl_snapshot_release(h: *mut c_void, snap: *const c_void);
    pub(super) fn talus_tbl_readopts_new(snap: *const c_void, fill_cache: u8) -> *mut c_void;
    pub(super) fn talus_tbl_readopts_free(ro: *mut c_void);
    pub(super) fn talus_tbl_get(
        h: *mut c_void,
        ro: *const c_void,
        k: *const c_char,
        kl: usize,
        out: *mut c_void,
        fill: FillFn,
        err: *mut *mut c_char,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub(super) fn talus_tbl_multi_get(
        h: *mut c_void,
        ro: *const c_void,
        n: usize,
        keys: *const *const c_char,
        lens: *const usize,
        out: *mut c_void,
        slot: SlotFn,
        found: *mut c_int,
        errs: *mut *mut c_char,
    );
    #[allow(clippy::too_many_arguments)]
    pub(super) fn talus_tbl_iter_new(
        h: *mut c_void,
        snap: *const c_void,
        fill_cache: u8,
        lo: *const c_char,
        lol: usize,
        hi: *const c_char,
        hil: usize,
        reverse: u8,
    ) -> *mut c_void;
    pub(super) fn talus_tbl_iter_free(it: *mut c_void);
    pub(super) fn talus_tbl_iter_fill(
        it: *mut c_void,
        max_entries: usize,
        max_bytes: usize,
        out: *mut c_void,
        entry: EntryFn,
        err: *mut *mut c_char,
    ) -> c_long;
    pub(super) fn talus_tbl_sst_open(
        h: *mut c_void,
        path: *const c_char,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    pub(super) fn talus_tbl_sst_put(
        w: *mut c_void,
        k: *const c_char,
        kl: usize,
        v: *const c_char,
        vl: usize,
    ) -> *mut c_char;
    pub(super) fn talus_tbl_sst_size(w: *mut c_void) -> u64;
    pub(super) fn talus_tbl_sst_finish(w: *mut c_void) -> *mut c_char;
    pub(super) fn talus_tbl_sst_free(w: *mut c_void);
    pub(super) fn talus_tbl_ingest(
        h: *mut c_void,
        paths: *const *const c_char,
        n: usize,
    ) -> *mut c_char;
    pub(super) fn talus_tbl_flush(h: *mut c_void) -> *mut c_char;
    pub(super) fn talus_tbl_compact(h: *mut c_void) -> *mut c_char;
    pub(super) fn talus_tbl_property(h: *mut c_void, name: *const c_char) -> *mut c_char;
    pub(super) fn talus_tbl_statistics(h: *mut c_void) -> *mut c_char;
}

/// `fill` for a `Vec<u8>`: replaces its contents with the bytes.
///
/// # Safety
/// `out` is a live `Vec<u8>`, `p` points at `n` readable bytes.
pub(super) unsafe extern "C" fn fill_vec(out: *mut c_void, p: *const c_char, n: usize) {
    let v = &mut *out.cast::<Vec<u8>>();
    v.clear();
    v.extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), n));
}

/// `slot` for a `Vec<Option<Vec<u8>>>` of the keys' length: stores value `i`.
///
/// # Safety
/// `out` is a live `Vec<Option<Vec<u8>>>` longer than `i`, `p` points at `n` readable bytes.
pub(super) unsafe extern "C" fn fill_slot(out: *mut c_void, i: usize, p: *const c_char, n: usize) {
    let v = &mut *out.cast::<Vec<Option<Vec<u8>>>>();
    if let Some(s) = v.get_mut(i) {
        *s = Some(std::slice::from_raw_parts(p.cast::<u8>(), n).to_vec());
    }
}

/// The text of a malloc'd C string, which is freed.
pub(super) fn take_string(s: *mut c_char) -> String {
    // SAFETY: `s` is a non-null NUL-terminated string malloc'd by the shim, owned by us.
    unsafe {
        let t = CStr::from_ptr(s).to_string_lossy().into_owned();
        libc_free(s.cast());
        t
    }
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

/// RocksDB's `Status::ToString()` as a [`talus::Error`] of the same kind.
pub(super) fn status_error(what: &str, text: String) -> talus::Error {
    let kind = |p: &str| text.strip_prefix(p).map(|r| r.trim().to_string());
    if let Some(d) = kind("Corruption:") {
        talus::Error::corruption("rocksdb", 0, format!("{what}: {d}"))
    } else if let Some(d) = kind("Invalid argument:") {
        talus::Error::InvalidArgument(format!("{what}: {d}"))
    } else if let Some(d) = kind("Not implemented:") {
        talus::Error::NotSupported(format!("{what}: {d}"))
    } else if let Some(d) = kind("Resource busy:").or_else(|| kind("Operation failed. Try again.:"))
    {
        talus::Error::Busy(format!("{what}: {d}"))
    } else if let Some(d) = kind("NotFound:") {
        talus::Error::NotFound(format!("{what}: {d}"))
    } else {
        talus::Error::io(format!("rocksdb: {what}"), std::io::Error::other(text))
    }
}

/// `Ok` for a null error string, else the error (the string is freed).
pub(super) fn check(what: &str, e: *mut c_char) -> talus::Result<()> {
    if e.is_null() {
        Ok(())
    } else {
        Err(status_error(what, take_string(e)))
    }
}
