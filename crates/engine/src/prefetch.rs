//! CPU cache hints: [`prefetch`] one cache line, [`prefetch_range`] and [`prefetch_slice`] the
//! lines of a slice.
//!
//! A hint asks the CPU to start loading a line so that a later read finds it in its caches; it
//! never faults, reads nothing the program can see and changes no memory, so any address is
//! allowed (a stale or null one costs a wasted hint at most). On other architectures than
//! x86-64 they do nothing. Callers: the memtable skiplist's search (the next node on a level),
//! block seeks (the restart interval about to be scanned) and the index search array (the
//! window about to be searched). No state, no locks.

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
    if let Some(part) = data.get(from..to.min(data.len())) {
        prefetch_slice(part);
    }
}

/// Hints every 64-byte line that holds part of `s`.
#[inline]
pub(crate) fn prefetch_slice<T>(s: &[T]) {
    if s.is_empty() {
        return;
    }
    let start = s.as_ptr().cast::<u8>();
    let end = start.wrapping_add(std::mem::size_of_val(s));
    // The line holding the first byte, then every line after it that starts before the end.
    let mut line = start.wrapping_sub(start as usize & 63);
    while line < end {
        prefetch(line);
        line = line.wrapping_add(64);
    }
}
