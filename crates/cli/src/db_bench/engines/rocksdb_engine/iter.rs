//! RocksDB iterators through the C API for db_bench's `--engine=rocksdb`: one per
//! `Engine::iter`, destroyed before the engine (it borrows it).

use std::ffi::c_char;

use librocksdb_sys as ffi;

use super::super::{EResult, EngineIter};
use super::{check, RocksEngine};

/// A RocksDB iterator; `valid` is cached after every move (RocksDB's `Valid()` is a field read).
pub(super) struct RocksIter<'a> {
    pub(super) it: *mut ffi::rocksdb_iterator_t,
    pub(super) valid: bool,
    pub(super) _db: std::marker::PhantomData<&'a RocksEngine>,
}

impl RocksIter<'_> {
    fn moved(&mut self) {
        // SAFETY: live iterator.
        self.valid = unsafe { ffi::rocksdb_iter_valid(self.it) } != 0;
    }

    /// The key or value (`get`: `rocksdb_iter_key` or `rocksdb_iter_value`) at a valid position,
    /// else empty.
    fn slice(
        &self,
        get: unsafe extern "C" fn(*const ffi::rocksdb_iterator_t, *mut usize) -> *const c_char,
    ) -> &[u8] {
        if !self.valid {
            return &[];
        }
        let mut n = 0usize;
        // SAFETY: a valid, live iterator; the bytes stay until the iterator moves, which needs
        // `&mut self`, so they outlive the returned borrow of `self`.
        unsafe {
            let p = get(self.it, &mut n);
            std::slice::from_raw_parts(p.cast(), n)
        }
    }
}

impl Drop for RocksIter<'_> {
    fn drop(&mut self) {
        // SAFETY: created in `RocksEngine::iter`, destroyed only here, before the database closes
        // (the borrow of the engine).
        unsafe { ffi::rocksdb_iter_destroy(self.it) }
    }
}

impl EngineIter for RocksIter<'_> {
    fn seek(&mut self, key: &[u8]) {
        // SAFETY: live iterator; RocksDB does not keep the key.
        unsafe { ffi::rocksdb_iter_seek(self.it, key.as_ptr().cast(), key.len()) };
        self.moved();
    }
    fn seek_to_first(&mut self) {
        // SAFETY: live iterator.
        unsafe { ffi::rocksdb_iter_seek_to_first(self.it) };
        self.moved();
    }
    fn seek_to_last(&mut self) {
        // SAFETY: live iterator.
        unsafe { ffi::rocksdb_iter_seek_to_last(self.it) };
        self.moved();
    }
    fn next(&mut self) {
        if self.valid {
            // SAFETY: live, valid iterator.
            unsafe { ffi::rocksdb_iter_next(self.it) };
            self.moved();
        }
    }
    fn prev(&mut self) {
        if self.valid {
            // SAFETY: live, valid iterator.
            unsafe { ffi::rocksdb_iter_prev(self.it) };
            self.moved();
        }
    }
    fn valid(&self) -> bool {
        self.valid
    }
    fn key(&self) -> &[u8] {
        self.slice(ffi::rocksdb_iter_key)
    }
    fn value(&self) -> &[u8] {
        self.slice(ffi::rocksdb_iter_value)
    }
    fn status(&self) -> EResult<()> {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live iterator.
        unsafe { ffi::rocksdb_iter_get_error(self.it, &mut err) };
        check(err)
    }
}
