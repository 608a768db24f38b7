//! A bump allocator for memtable nodes.
//!
//! The arena hands out 8-byte-aligned byte ranges carved from big chunks (16 KiB for the
//! first, doubling up to 1 MiB; an allocation larger than a quarter of the chunk size gets a
//! dedicated chunk of its own, and the chunks grow as they would have), so inserting a key costs
//! no heap allocation of its own. A range's first bytes, as many as the caller asks
//! ([`Arena::allocate_zeroing`]: a node's links, its key), are zeroed; the rest is
//! uninitialized, for the caller to write before anything reads it (a value's bytes: zeroing
//! them before the copy overwrote them was 12-15% of a 4-16 KiB put's instructions, session 52). Memory is
//! never freed or moved until the arena is dropped: a pointer returned by [`Arena::allocate`]
//! stays valid for the arena's whole life, which is what lets skiplist readers follow links
//! without locks.
//!
//! Full-size chunks come from, and go back to, a [`ChunkPool`] (`chunk_pool.rs`: a flushed
//! memtable's memory is reused instead of returned to the system allocator); a pooled chunk
//! holds its last arena's bytes, and a fresh one is uninitialized (`alloc`), so the zeroing is
//! done per range.
//!
//! Only the memtable's writer calls `allocate` (`&mut self`, reached through the writer mutex);
//! readers never touch the arena itself, only the bytes it handed out.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use super::chunk_pool::{ChunkPool, POOL};

/// Alignment of every allocation (enough for the atomic links of a node).
pub(super) const ALIGN: usize = 8;
const MIN_CHUNK: usize = 16 << 10;
/// The full chunk size (the chunks a [`ChunkPool`] keeps).
pub(super) const MAX_CHUNK: usize = 1 << 20;

/// The bump allocator. See the module documentation.
pub(super) struct Arena {
    /// Every chunk allocated, freed on drop.
    chunks: Vec<(NonNull<u8>, Layout)>,
    /// The chunk being bumped (null before the first allocation).
    cur: *mut u8,
    cur_len: usize,
    cur_used: usize,
    next_chunk: usize,
    /// Bytes of all chunks.
    reserved: usize,
    /// Where full-size chunks come from and go back to.
    pool: &'static ChunkPool,
}

// SAFETY: the arena exclusively owns its chunks (like a `Vec<Box<[u8]>>`); the raw pointers are
// not shared with other threads through the arena itself, so moving it to another thread is sound.
unsafe impl Send for Arena {}

impl Arena {
    /// An empty arena (allocates nothing until the first call) on the process-wide pool.
    pub(super) fn new() -> Self {
        Arena::with_pool(&POOL)
    }

    /// An empty arena whose full-size chunks come from and go back to `pool`.
    pub(super) fn with_pool(pool: &'static ChunkPool) -> Self {
        Arena {
            pool,
            chunks: Vec::new(),
            cur: std::ptr::null_mut(),
            cur_len: 0,
            cur_used: 0,
            next_chunk: MIN_CHUNK,
            reserved: 0,
        }
    }

    /// Returns `size` zeroed bytes aligned to [`ALIGN`] ([`Arena::allocate_zeroing`] with
    /// every byte zeroed).
    pub(super) fn allocate(&mut self, size: usize) -> NonNull<u8> {
        self.allocate_zeroing(size, size)
    }

    /// Returns `size` bytes aligned to [`ALIGN`], valid (never moved or freed) until the arena
    /// is dropped, of which the first `zeroed` (at most `size`) are zero and the rest
    /// uninitialized. Panics only if the global allocator fails or `size` overflows a `Layout`.
    pub(super) fn allocate_zeroing(&mut self, size: usize, zeroed: usize) -> NonNull<u8> {
        let zeroed = zeroed.min(size);
        let size = size.max(1).next_multiple_of(ALIGN);
        let p = self.bump(size);
        // SAFETY: `p` starts `size >= zeroed` bytes handed out for the first time, so nothing
        // else refers to them.
        unsafe { std::ptr::write_bytes(p.as_ptr(), 0, zeroed) };
        p
    }

    /// `size` (a multiple of [`ALIGN`]) uninitialized bytes from the current chunk, a new one,
    /// or (a big entry) a dedicated one.
    fn bump(&mut self, size: usize) -> NonNull<u8> {
        if size <= self.cur_len - self.cur_used {
            // SAFETY: `cur` is the start of a live chunk of `cur_len` bytes and
            // `cur_used + size <= cur_len`, so the result stays inside that chunk.
            let p = unsafe { self.cur.add(self.cur_used) };
            self.cur_used += size;
            // SAFETY: derived from a non-null chunk pointer by an in-bounds offset.
            return unsafe { NonNull::new_unchecked(p) };
        }
        if size > self.next_chunk / 4 {
            // A big entry gets its own chunk; the current chunk keeps serving small ones. The
            // chunks still grow, so that entries of 4-256 KiB soon fit full-size (pooled)
            // chunks instead of each taking a heap allocation of its own.
            self.next_chunk = (self.next_chunk * 2).min(MAX_CHUNK);
            return self.new_chunk(size);
        }
        let chunk_size = self.next_chunk;
        self.next_chunk = (self.next_chunk * 2).min(MAX_CHUNK);
        let pooled = if chunk_size == MAX_CHUNK { self.pool.take() } else { None };
        let p = match pooled {
            Some(p) => {
                self.chunks.push((p, chunk_layout(MAX_CHUNK)));
                self.reserved += MAX_CHUNK;
                p
            }
            None => self.new_chunk(chunk_size),
        };
        self.cur = p.as_ptr();
        self.cur_len = chunk_size;
        self.cur_used = size;
        p
    }

    /// A fresh (uninitialized) chunk of `size` bytes from the global allocator.
    fn new_chunk(&mut self, size: usize) -> NonNull<u8> {
        let layout = chunk_layout(size);
        // SAFETY: `layout` has a non-zero size (callers pass at least ALIGN bytes).
        let p = unsafe { alloc(layout) };
        let Some(p) = NonNull::new(p) else { handle_alloc_error(layout) };
        self.chunks.push((p, layout));
        self.reserved += size;
        p
    }

    /// Bytes in use: every chunk except the unused tail of the current one.
    pub(super) fn memory_usage(&self) -> usize {
        self.reserved - (self.cur_len - self.cur_used)
    }

    /// Bytes of all chunks obtained from the system allocator.
    #[cfg(test)]
    pub(super) fn reserved(&self) -> usize {
        self.reserved
    }
}

/// The layout of a chunk of `size` bytes.
fn chunk_layout(size: usize) -> Layout {
    match Layout::from_size_align(size, ALIGN) {
        Ok(l) => l,
        Err(_) => panic!("memtable arena: allocation of {size} bytes is too large"),
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &(p, layout) in &self.chunks {
            if layout.size() == MAX_CHUNK {
                // SAFETY: `p` came from the global allocator with `layout` (`alloc`, or a pool
                // whose chunks all did), the arena is dropping so nothing refers to its
                // bytes any more, and it is given up exactly once.
                unsafe { self.pool.give(p, layout) };
            } else {
                // SAFETY: `p` was returned by `alloc(layout)` and is freed exactly once.
                unsafe { dealloc(p.as_ptr(), layout) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_stable() {
        let mut a = Arena::new();
        let mut got: Vec<(usize, usize)> = Vec::new();
        let sizes = [1usize, 7, 8, 9, 100, 5000, 4096, 300_000, 3, 70_000, 1, 2_000_000];
        for (i, &s) in sizes.iter().cycle().take(400).enumerate() {
            let p = a.allocate(s);
            assert_eq!(p.as_ptr() as usize % ALIGN, 0);
            // SAFETY: `p` points to at least `s` bytes owned by the arena.
            let bytes = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), s) };
            assert!(bytes.iter().all(|&b| b == 0), "allocation not zeroed");
            bytes.fill(i as u8);
            got.push((p.as_ptr() as usize, s));
        }
        // No two allocations overlap, and earlier contents were not disturbed.
        let mut sorted = got.clone();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlap");
        }
        for (i, &(p, s)) in got.iter().enumerate() {
            // SAFETY: as above; the arena is still alive.
            let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, s) };
            assert!(bytes.iter().all(|&b| b == i as u8));
        }
        assert!(a.memory_usage() <= a.reserved());
        let total: usize = got.iter().map(|g| g.1).sum();
        assert!(a.memory_usage() >= total);
    }

    /// Allocates `n` ranges of `size` bytes, checking each is zeroed, then dirtying it.
    fn fill(a: &mut Arena, n: usize, size: usize) {
        for _ in 0..n {
            let p = a.allocate(size);
            // SAFETY: `p` points to `size` bytes the arena handed out and keeps alive.
            let bytes = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
            assert!(bytes.iter().all(|&b| b == 0), "allocation not zeroed");
            bytes.fill(0xAB);
        }
    }

    /// A dropped arena's full-size chunks go to the pool (up to its cap; the rest are freed),
    /// and the next arena takes them, still handing out zeroed ranges (fails without the
    /// zeroing: the chunks come back full of 0xAB).
    #[test]
    fn pooled_chunks_are_reused_and_hand_out_zeroed_ranges() {
        static POOL: ChunkPool = ChunkPool::new(3);
        let mut a = Arena::with_pool(&POOL);
        // 16 KiB + ... + 512 KiB of growing chunks, then five full ones.
        fill(&mut a, 6000, 1000);
        let full = a.chunks.iter().filter(|(_, l)| l.size() == MAX_CHUNK).count();
        assert!(full >= 4, "{full} full chunks");
        drop(a);
        assert_eq!(POOL.len(), 3, "capped at 3; the others freed");
        let mut b = Arena::with_pool(&POOL);
        fill(&mut b, 6000, 1000);
        // A range that starts a chunk, and odd sizes across a pooled chunk.
        for size in [8, 24, 1000, 200_000, 40] {
            fill(&mut b, 50, size);
        }
        assert_eq!(POOL.len(), 0, "every pooled chunk taken");
        drop(b);
        assert_eq!(POOL.len(), 3);
    }

    /// `allocate_zeroing` zeroes the asked prefix even in a reused (dirty) chunk (fails
    /// without the per-range zeroing: the pooled chunk comes back full of 0xAB).
    #[test]
    fn a_dirty_chunk_hands_out_zeroed_prefixes() {
        static POOL: ChunkPool = ChunkPool::new(8);
        let mut a = Arena::with_pool(&POOL);
        fill(&mut a, 6000, 1000);
        drop(a);
        assert!(POOL.len() > 0);
        let mut b = Arena::with_pool(&POOL);
        for _ in 0..6000 {
            let p = b.allocate_zeroing(1000, 40);
            // SAFETY: `p` points to 1000 bytes the arena handed out; the first 40 are zeroed.
            let head = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), 40) };
            assert!(head.iter().all(|&x| x == 0), "prefix not zeroed");
            // SAFETY: as above: the caller writes the rest before reading it.
            unsafe { std::ptr::write_bytes(p.as_ptr(), 0xCD, 1000) };
        }
    }

    /// Entries too big for the current chunk size still grow the chunks, so 16 KiB entries
    /// soon share full-size chunks instead of taking a heap allocation each (they did: every
    /// one was its own chunk).
    #[test]
    fn big_entries_grow_the_chunks() {
        let mut a = Arena::new();
        for _ in 0..1000 {
            a.allocate_zeroing(16 << 10, 16);
        }
        assert!(a.chunks.len() < 40, "{} chunks for 1000 entries", a.chunks.len());
    }

    #[test]
    fn usage_grows_without_counting_the_free_tail() {
        let mut a = Arena::new();
        assert_eq!(a.memory_usage(), 0);
        a.allocate(10);
        assert_eq!(a.memory_usage(), 16);
        assert_eq!(a.reserved(), MIN_CHUNK);
        a.allocate(MIN_CHUNK); // big: dedicated chunk
        assert_eq!(a.memory_usage(), 16 + MIN_CHUNK);
        a.allocate(8);
        assert_eq!(a.memory_usage(), 24 + MIN_CHUNK);
    }
}
