//! CPU cache hints: [`prefetch`] one cache line, [`prefetch_range`] the lines of a slice.
//!
//! A hint asks the CPU to start loading a line so that a later read finds it in its caches; it
//! never faults, reads nothing the program can see and changes no memory, so any address is
//! allowed (a stale or null one costs a wasted hint at most). On other architectures than
//! x86-64 both do nothing. Callers: the memtable skiplist's search (the next node on a level)
//! and block seeks (the restart interval about to be scanned). No state, no locks.

/// Hints the line holding `p` (ignored if null).
#[inline]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    if !p.is_null() {
        // SAFETY: `_mm_prefetch` only hints the cache: it reads no memory and cannot fault.
        unsafe { std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints every 64-byte line of `data[from..to]` (clipped to `data`).
#[inline]
pub(crate) fn prefetch_range(data: &[u8], from: usize, to: usize) {
    let mut at = from & !63;
    while at < to {
        match data.get(at) {
            Some(b) => prefetch(b),
            None => return,
        }
        at += 64;
    }
}
