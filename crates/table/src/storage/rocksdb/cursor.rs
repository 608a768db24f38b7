//! [`RocksCursor`]: a RocksDB iterator walked in C++ (`talus_tbl_iter_fill`), many entries per
//! call, buffered here. Each fill hands over 4 entries at first, doubling to 256 (and at most
//! 256 KiB of keys and values), so a scan the caller stops after a few rows reads few ahead,
//! and a long one makes one foreign call per 256 entries instead of three per entry (next,
//! key, value) as RocksDB's C API would.
//!
//! Owns the iterator, the snapshot it reads (held so it outlives the iterator) and a reference
//! to the database (closed only after the last cursor).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::ffi::*;
use super::{DbHandle, RocksSnapshot};
use crate::storage::{Cursor, SResult};

const FIRST_FILL: usize = 4;
const MAX_FILL: usize = 256;
const MAX_FILL_BYTES: usize = 256 << 10;

/// The entries of one fill: their bytes and `(offset, key length, value length)` each.
#[derive(Default)]
struct Entries {
    data: Vec<u8>,
    spans: Vec<(usize, usize, usize)>,
}

/// `entry` for [`Entries`].
///
/// # Safety
/// `out` is a live `Entries`; `k`/`v` point at `kl`/`vl` readable bytes.
unsafe extern "C" fn push_entry(
    out: *mut c_void,
    k: *const c_char,
    kl: usize,
    v: *const c_char,
    vl: usize,
) {
    let e = &mut *out.cast::<Entries>();
    let at = e.data.len();
    e.data.extend_from_slice(std::slice::from_raw_parts(k.cast::<u8>(), kl));
    e.data.extend_from_slice(std::slice::from_raw_parts(v.cast::<u8>(), vl));
    e.spans.push((at, kl, vl));
}

/// A RocksDB iterator read through a buffer of entries.
pub struct RocksCursor {
    it: *mut c_void,
    buf: Entries,
    pos: usize,
    next_fill: usize,
    /// The iterator reported its end: no more fills.
    done: bool,
    err: Option<String>,
    _snapshot: Option<RocksSnapshot>,
    _db: Arc<DbHandle>,
}

// SAFETY: the iterator is used by one thread at a time (the cursor is not `Sync`); RocksDB
// iterators may move between threads.
unsafe impl Send for RocksCursor {}

impl RocksCursor {
    pub(super) fn new(
        it: *mut c_void,
        snapshot: Option<RocksSnapshot>,
        db: Arc<DbHandle>,
    ) -> RocksCursor {
        let mut c = RocksCursor {
            it,
            buf: Entries::default(),
            pos: 0,
            next_fill: FIRST_FILL,
            done: false,
            err: None,
            _snapshot: snapshot,
            _db: db,
        };
        c.fill();
        c
    }

    fn fill(&mut self) {
        self.buf.data.clear();
        self.buf.spans.clear();
        self.pos = 0;
        if self.done {
            return;
        }
        let want = self.next_fill;
        self.next_fill = (self.next_fill * 2).min(MAX_FILL);
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live iterator; `buf` outlives the call, which appends to it through
        // `push_entry` only.
        let n = unsafe {
            talus_tbl_iter_fill(
                self.it,
                want,
                MAX_FILL_BYTES,
                (&mut self.buf as *mut Entries).cast(),
                push_entry,
                &mut err,
            )
        };
        if n < 0 {
            self.done = true;
            self.err =
                Some(if err.is_null() { "iterator failed".into() } else { take_string(err) });
        } else if (n as usize) < want && self.buf.data.len() < MAX_FILL_BYTES {
            self.done = true;
        }
    }

    fn span(&self) -> Option<&(usize, usize, usize)> {
        self.buf.spans.get(self.pos)
    }
}

impl Drop for RocksCursor {
    fn drop(&mut self) {
        // SAFETY: created by `talus_tbl_iter_new`, freed only here, before the snapshot and the
        // database (fields dropped after this).
        unsafe { talus_tbl_iter_free(self.it) }
    }
}

impl Cursor for RocksCursor {
    #[inline]
    fn valid(&self) -> bool {
        self.pos < self.buf.spans.len()
    }
    fn key(&self) -> &[u8] {
        match self.span() {
            Some(&(at, kl, _)) => self.buf.data.get(at..at + kl).unwrap_or(&[]),
            None => &[],
        }
    }
    fn value(&self) -> &[u8] {
        match self.span() {
            Some(&(at, kl, vl)) => self.buf.data.get(at + kl..at + kl + vl).unwrap_or(&[]),
            None => &[],
        }
    }
    fn advance(&mut self) {
        if self.pos < self.buf.spans.len() {
            self.pos += 1;
        }
        if self.pos == self.buf.spans.len() {
            self.fill();
        }
    }
    fn status(&self) -> SResult<()> {
        match &self.err {
            None => Ok(()),
            Some(e) => Err(status_error("iterator", e.clone())),
        }
    }
}
