//! [`ChunkPool`]: full-size memtable arena chunks kept for reuse, so that a flushed memtable's
//! memory goes to the next memtables instead of back to the system allocator.
//!
//! A 64 MiB memtable is 64 chunks of 1 MiB. Freed, glibc returned them to the kernel (trimming
//! its heap, or `munmap`), and the next memtables took fresh ones (growing the heap with
//! `mprotect`, then a page fault per 4 KiB on first touch): every step takes the process's
//! address-space lock, so the writer's insert that needed a new chunk waited while the flush
//! thread freed the old memtable (a one-put insert of 1.6-7.9 ms in a value-100 fillseq,
//! measured by timing each write group's phases). Pooled chunks need neither: the arena takes
//! one with a mutex and zeroes the part of each range its caller asks ([`super::arena`]).
//!
//! Bounded: at most `cap` chunks ([`POOL_CHUNKS`], 64 MiB, for the process-wide pool every
//! database shares); a chunk given back to a full pool is freed. The pooled memory stays with
//! the process (resident, as it was while its memtable lived) until reused or the process
//! exits. Locks: one mutex, a leaf, taken once per chunk.

use std::alloc::{dealloc, Layout};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Chunks the process-wide pool keeps (each [`super::arena::MAX_CHUNK`] bytes).
pub(super) const POOL_CHUNKS: usize = 64;

/// The pool every arena uses.
pub(super) static POOL: ChunkPool = ChunkPool::new(POOL_CHUNKS);

/// A chunk's address (a `MAX_CHUNK`-byte allocation of the chunk layout, owned by the pool).
struct Chunk(NonNull<u8>);

// SAFETY: a pooled chunk is owned by the pool alone (nothing else holds its address), like a
// `Box<[u8]>`, so it may move to whichever thread takes it.
unsafe impl Send for Chunk {}

/// See the module documentation.
pub(super) struct ChunkPool {
    cap: usize,
    chunks: Mutex<Vec<Chunk>>,
}

impl ChunkPool {
    pub(super) const fn new(cap: usize) -> ChunkPool {
        ChunkPool { cap, chunks: Mutex::new(Vec::new()) }
    }

    /// A pooled chunk (allocated with the layout every [`ChunkPool::give`] to this pool
    /// names: the arena's full-size chunk), its bytes left as its last arena wrote them;
    /// `None` if the pool is empty.
    pub(super) fn take(&self) -> Option<NonNull<u8>> {
        let mut chunks = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        chunks.pop().map(|c| c.0)
    }

    /// Keeps `p` (a chunk allocated with `layout`, which the caller gives up) for reuse, or frees
    /// it if the pool is full.
    ///
    /// # Safety
    /// `p` must have been allocated by the global allocator with `layout`, be the caller's to
    /// give up (no other reference to its bytes survives), and `layout` must be the one every
    /// `take` of this pool expects.
    pub(super) unsafe fn give(&self, p: NonNull<u8>, layout: Layout) {
        {
            let mut chunks = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
            if chunks.len() < self.cap {
                chunks.push(Chunk(p));
                return;
            }
        }
        // SAFETY: per this function's contract, `p` came from the global allocator with
        // `layout` and nothing else refers to it.
        unsafe { dealloc(p.as_ptr(), layout) };
    }

    /// Chunks pooled now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.chunks.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
