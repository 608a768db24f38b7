//! A small per-thread pool of block-sized read buffers.
//!
//! A point read that misses the block cache reads one block (about `block_size` bytes) into a
//! new buffer, and the block it evicts frees one of about the same size. Such buffers (4 KiB and
//! up) are past glibc's per-thread cache, so each costs a trip through the arena's bins, under
//! its lock (`_int_malloc` / `_int_free`: 9-10% of a 64 MiB-cache readrandom's samples, in
//! Talus and RocksDB alike). [`take`] hands out a buffer a block released on this thread before
//! (its capacity within an eighth above the length asked for, so the cache's charge, which is the
//! capacity, stays honest), and [`give`] keeps a released buffer for the next read instead of
//! freeing it.
//!
//! Contract: at most [`MAX_BUFFERS`] buffers of [`MIN_CAPACITY`]..=[`MAX_CAPACITY`] bytes per
//! thread, freed when the thread exits; anything else goes to the allocator as before. Callers:
//! `std_fs`'s `pread` (takes), `sst::Block`'s drop and the decompression path (give). No lock;
//! a thread-local `RefCell`, never borrowed across a call out of this module.

use std::cell::RefCell;

/// Buffers kept per thread.
pub const MAX_BUFFERS: usize = 16;
/// Smallest capacity kept (smaller ones are cheap for the allocator's thread cache).
pub const MIN_CAPACITY: usize = 1024;
/// Largest capacity kept.
pub const MAX_CAPACITY: usize = 256 * 1024;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer with capacity for at least `len` bytes: one released on this thread if one
/// fits (capacity in `len ..= len + len / 8`), else a new allocation.
pub fn take(len: usize) -> Vec<u8> {
    if (MIN_CAPACITY..=MAX_CAPACITY).contains(&len) {
        let hit = POOL
            .try_with(|p| {
                let mut p = p.try_borrow_mut().ok()?;
                let i = p.iter().rposition(|b| (len..=len + len / 8).contains(&b.capacity()))?;
                Some(p.swap_remove(i))
            })
            .ok()
            .flatten();
        if let Some(b) = hit {
            return b;
        }
    }
    Vec::with_capacity(len)
}

/// Keeps `buf` for a later [`take`] on this thread, or frees it (full pool, a size not kept, or
/// a thread that is exiting).
pub fn give(mut buf: Vec<u8>) {
    let cap = buf.capacity();
    if !(MIN_CAPACITY..=MAX_CAPACITY + MAX_CAPACITY / 8).contains(&cap) {
        return;
    }
    buf.clear();
    let _ = POOL.try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            if p.len() < MAX_BUFFERS {
                p.push(buf);
            }
        }
    });
}

/// Buffers held by this thread's pool.
#[cfg(test)]
fn pooled() -> usize {
    POOL.try_with(|p| p.borrow().len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_buffer_is_taken_back_when_it_fits() {
        std::thread::spawn(|| {
            let b = Vec::<u8>::with_capacity(4200);
            let ptr = b.as_ptr();
            give(b);
            assert_eq!(pooled(), 1);
            // Too large a buffer for 3000 bytes (4200 > 3000 + 375): a new one.
            let other = take(3000);
            assert_ne!(other.as_ptr(), ptr);
            assert_eq!(pooled(), 1);
            let again = take(4100);
            assert_eq!(again.as_ptr(), ptr, "the pooled buffer");
            assert!(again.is_empty() && again.capacity() >= 4100);
            assert_eq!(pooled(), 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn sizes_outside_the_range_and_a_full_pool_go_to_the_allocator() {
        std::thread::spawn(|| {
            give(Vec::with_capacity(100));
            give(Vec::with_capacity(MAX_CAPACITY * 2));
            assert_eq!(pooled(), 0);
            for _ in 0..MAX_BUFFERS + 5 {
                give(Vec::with_capacity(8192));
            }
            assert_eq!(pooled(), MAX_BUFFERS);
            let small = take(100);
            assert!(small.capacity() >= 100);
            assert_eq!(pooled(), MAX_BUFFERS, "small requests never use the pool");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_taken_buffer_is_empty_even_if_it_was_given_full() {
        std::thread::spawn(|| {
            give(vec![7u8; 5000]);
            let b = take(5000);
            assert!(b.is_empty());
            assert!(b.capacity() >= 5000);
        })
        .join()
        .unwrap();
    }
}
