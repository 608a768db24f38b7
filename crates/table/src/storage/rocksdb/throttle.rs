//! The capped device under RocksDB: the callbacks through which `throttle_fs.cc`'s file system
//! waits on a Talus [`Throttle`] (the one type that caps Talus's `ThrottledFs` and the tools'
//! SQLite VFS), and the handle [`super::RocksDb::open`] passes to the shim. The [`Throttle`] is
//! held by the database handle ([`super::DbHandle`]) and dropped only after RocksDB closed, so
//! the pointer the C++ side keeps stays valid.

use std::ffi::c_void;
use std::sync::Arc;

use talus::fs::throttle::{IoLimits, Throttle, MAX_IO_BYTES};

use super::ffi::ThrottleHandle;

/// Waits for a read of `bytes` (one read IO per started [`MAX_IO_BYTES`], at least one).
///
/// # Safety
/// `t` points at a live [`Throttle`].
unsafe extern "C" fn read(t: *const c_void, bytes: u64) {
    (*t.cast::<Throttle>()).wait_read(bytes)
}

/// Waits for `ios` write IOs and `bytes` written bytes.
///
/// # Safety
/// `t` points at a live [`Throttle`].
unsafe extern "C" fn write(t: *const c_void, ios: u64, bytes: u64) {
    (*t.cast::<Throttle>()).wait_write(ios, bytes)
}

/// A throttle for `limits`, or none when no cap is set (then RocksDB keeps its default Env and
/// nothing is counted or waits).
pub(super) fn for_limits(limits: IoLimits) -> Option<Arc<Throttle>> {
    (!limits.is_unlimited()).then(|| Arc::new(Throttle::new(limits)))
}

/// The shim's handle of `t` (valid as long as `t` is).
pub(super) fn handle(t: &Arc<Throttle>) -> ThrottleHandle {
    ThrottleHandle { throttle: Arc::as_ptr(t).cast(), read, write, max_io_bytes: MAX_IO_BYTES }
}
