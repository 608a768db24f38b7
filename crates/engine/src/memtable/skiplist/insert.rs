//! Inserting into the skiplist, by one writer ([`SkipList::insert`], with the last insert's
//! splice) or by several at once ([`SkipList::insert_concurrent`], RocksDB's
//! `InlineSkipList::InsertConcurrently`, for the members of a write group inserting their own
//! batches in parallel: `allow_concurrent_memtable_write`).
//!
//! # Protocol
//! A node is allocated (the arena and the height generator under the writer mutex: a few
//! instructions), its entry written, then linked level by level from level 0 up, in one of two
//! ways:
//!
//! - **Alone** (RocksDB's `Insert`, as before write groups ran in parallel): `insert` holds the
//!   writer mutex throughout; when it finds no concurrent inserter linking
//!   ([`SkipList`]'s `linking` count is 0, loaded `Acquire` under the mutex), none can start
//!   before it returns (each must take the mutex to allocate first), so it is the only writer:
//!   it finds the exact predecessor at every level (the last insert's splice when the key
//!   falls right after it, else a search), points the node's links at their successors, then
//!   stores each predecessor's link prefix (the new key's) and `next` (`Release`) with plain
//!   stores. No compare-and-swap, no second walk.
//! - **Beside other writers**: at each level the writer walks right from its candidate
//!   predecessor `p` while `p`'s next node sorts before the new key, so `p < key < n` (`n` =
//!   `p`'s next, or null) holds when it links; it points the new node's link at `n`, lowers
//!   `p`'s link prefix to the new key's (`fetch_min`), and swings `p`'s link from `n` to the
//!   node with a compare-and-swap (`Release`). A failed swap means another writer linked a node
//!   after `p` meanwhile: the walk resumes from `p`. Keys are unique (internal keys carry
//!   distinct sequence numbers), so two writers never tie. `insert_concurrent` always links so,
//!   counted in `linking` from its allocation (under the mutex) to its last link (the decrement
//!   is `Release`, so the `insert` that next reads 0 sees its links); `insert` links so when it
//!   finds the count above 0.
//!
//! A link's prefix is changed only before the store or swap that publishes a node of that
//! prefix after it: lowered with `fetch_min` beside other writers (so a writer whose swap then
//! fails, or one that loaded an older `next`, never raises it past a node linked meanwhile), or
//! stored by a writer alone (no other writer between its load of `next` and its store). So a
//! reader that loads `next` and then the prefix gets at most the prefix of the node it loaded,
//! the one invariant searches rely on ("Links" in [`super`]). Level 0 is linked first, so a node is
//! in the full list before any express lane points at it, and each level stays a sublist of the
//! one below.
//!
//! The splice (the predecessors of the last insert at every level) is exact only while nothing
//! but `insert`s alone linked since it was taken: `insert_concurrent` resets it to the head
//! (under the mutex, at its allocation) and so does an `insert` that linked beside other
//! writers. A splice of head pointers is exact for any key below the first node (each level
//! is a sublist of level 0) and otherwise fails [`SkipList::splice_fits`], which sends the
//! insert to a full search.

use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering as AtomicOrdering;

use super::node::{init_links, link, Node, LINK};
use super::{SkipList, MAX_HEIGHT};
use crate::coding::{encode_varint32, varint_len};
use std::cmp::Ordering;

/// One node in `BRANCHING` grows a level taller (a power of two).
const BRANCHING: u64 = 4;

fn random_height(rng: &mut u64) -> usize {
    let mut h = 1;
    while h < MAX_HEIGHT {
        // xorshift64
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        if *rng & (BRANCHING - 1) != 0 {
            break;
        }
        h += 1;
    }
    h
}

impl SkipList {
    /// Inserts the entry `ikey -> value` (`ikey` has `key_len` bytes). `cmp(node_key)` must
    /// order a node key against `ikey` exactly as [`crate::key::compare_internal`] would.
    /// `write_key` writes the bytes of `ikey` (lets the memtable assemble
    /// `user_key ++ trailer` in place, with no temporary buffer). Holds the writer mutex
    /// throughout; alone (no `insert_concurrent` linking), links with plain stores from the
    /// last insert's splice (sequential keys link with two comparisons), else with
    /// compare-and-swap (see the module doc).
    ///
    /// Panics if the key or value is 4 GiB or longer (a caller bug: batches never get there).
    pub(in crate::memtable) fn insert(
        &self,
        prefix: u64,
        key_len: usize,
        write_key: impl FnOnce(&mut [u8]),
        cmp: impl Fn(&[u8]) -> Ordering,
        value: &[u8],
    ) {
        let mut guard = self.writer.lock();
        let w = &mut *guard;
        // Acquire: the links of every concurrent inserter that has finished are visible.
        let alone = self.linking.load(AtomicOrdering::Acquire) == 0;
        // Worked on in place (no copy of the array in and out).
        let prev = &mut w.splice;
        if !self.splice_fits(prev[0], prefix, &cmp) {
            *prev = [self.head.as_ptr(); MAX_HEIGHT];
            self.find_before(Some(prefix), &cmp, false, Some(&mut *prev));
        }
        let height = random_height(&mut w.rng);
        self.raise_height(height);
        let node = self.new_node(&mut w.arena, height, key_len, write_key, value);
        self.memory.store(w.arena.memory_usage(), AtomicOrdering::Relaxed);
        if alone {
            // SAFETY: `prev` holds the exact predecessors of the key at every level below
            // `height` (a fitting splice or a search, with no other writer since), each the
            // head or a published node of height > its level; `node` is unpublished. It is left
            // as the next splice.
            unsafe { Self::link_alone(node, height, prefix, prev) };
        } else {
            self.link_node(node, height, prefix, &cmp, prev);
            // Concurrent links may have made `prev` inexact above level 0.
            *prev = [self.head.as_ptr(); MAX_HEIGHT];
        }
    }

    /// [`SkipList::insert`] for a writer that may run beside other `insert_concurrent` (and
    /// `insert`) calls: the writer mutex is held only to allocate (and to count this writer in
    /// `linking`); the search starts at the head. Resets the single writer's splice, which
    /// these links may make stale.
    pub(in crate::memtable) fn insert_concurrent(
        &self,
        prefix: u64,
        key_len: usize,
        write_key: impl FnOnce(&mut [u8]),
        cmp: impl Fn(&[u8]) -> Ordering,
        value: &[u8],
    ) {
        let (node, height) = self.begin_concurrent(None, key_len, value.len());
        // SAFETY: `node` was allocated for this height and entry size, is owned by this list
        // and not yet visible to any reader.
        let node = unsafe { Self::fill_node(node, height, key_len, write_key, value) };
        self.finish_concurrent(node, height, prefix, &cmp);
    }

    /// The first half of [`SkipList::insert_concurrent`], under the writer mutex: resets the
    /// splice, counts the writer in `linking`, picks the height (`height`, in tests) and
    /// allocates the node.
    fn begin_concurrent(
        &self,
        height: Option<usize>,
        key_len: usize,
        value_len: usize,
    ) -> (NonNull<u8>, usize) {
        let mut w = self.writer.lock();
        w.splice = [self.head.as_ptr(); MAX_HEIGHT];
        self.linking.fetch_add(1, AtomicOrdering::Relaxed);
        let height = height.unwrap_or_else(|| random_height(&mut w.rng));
        let base = self.allocate(&mut w.arena, height, key_len, value_len);
        self.memory.store(w.arena.memory_usage(), AtomicOrdering::Relaxed);
        (base, height)
    }

    /// The second half of [`SkipList::insert_concurrent`]: links the filled `node` with
    /// compare-and-swap from a search at the head, then leaves `linking`.
    fn finish_concurrent(
        &self,
        node: *mut Node,
        height: usize,
        prefix: u64,
        cmp: &impl Fn(&[u8]) -> Ordering,
    ) {
        self.raise_height(height);
        let mut prev: [*const Node; MAX_HEIGHT] = [self.head.as_ptr(); MAX_HEIGHT];
        self.find_before(Some(prefix), cmp, false, Some(&mut prev));
        self.link_node(node, height, prefix, cmp, &mut prev);
        // Release: an `insert` that reads the count after this sees every link above.
        self.linking.fetch_sub(1, AtomicOrdering::Release);
    }

    /// Links `node` (of `height`, key prefix `prefix`) after `prev[level]` at every level with
    /// plain stores, each level's successor link and prefix copied into the node first; leaves
    /// `node` in `prev` at its levels (the next splice).
    ///
    /// # Safety
    /// No other writer may link meanwhile; `prev[level]` (level < `height`) must be the last
    /// node of that level before the key (or the head); `node` must be a filled, unpublished
    /// node of `height` links.
    unsafe fn link_alone(
        node: *mut Node,
        height: usize,
        prefix: u64,
        prev: &mut [*const Node; MAX_HEIGHT],
    ) {
        for (level, &p) in prev.iter().enumerate().take(height) {
            // SAFETY: by the contract; `p` has a link at `level`, `node` has `height` links.
            let (from, to) = unsafe { (link(p, level), link(node, level)) };
            // Relaxed: only this writer stores links now.
            to.next.store(from.next.load(AtomicOrdering::Relaxed), AtomicOrdering::Relaxed);
            to.prefix.store(from.prefix.load(AtomicOrdering::Relaxed), AtomicOrdering::Relaxed);
        }
        for (level, &p) in prev.iter().enumerate().take(height) {
            // SAFETY: as above. The prefix goes first: a reader that sees the new node through
            // the Release store sees its prefix or a later, lower one ("Links"). The Release
            // store also publishes the node's contents written above (level 0 first).
            let from = unsafe { link(p, level) };
            from.prefix.store(prefix, AtomicOrdering::Relaxed);
            from.next.store(node, AtomicOrdering::Release);
        }
        for slot in prev.iter_mut().take(height) {
            *slot = node;
        }
    }

    /// Makes `height` the list's height if it is taller (`prev` holds the head for the new
    /// levels: every search of an insert starts from the head there).
    fn raise_height(&self, height: usize) {
        self.max_height.fetch_max(height, AtomicOrdering::Relaxed);
    }

    /// Allocates the bytes of a node of `height` links and an entry of the given lengths:
    /// zeroed but for the value's bytes (the last `value_len`), which [`SkipList::fill_node`]
    /// copies in (zeroing them first cost 12-15% of a 4-16 KiB put's instructions).
    fn allocate(
        &self,
        arena: &mut super::Arena,
        height: usize,
        key_len: usize,
        value_len: usize,
    ) -> NonNull<u8> {
        let klen = u32::try_from(key_len).expect("memtable key longer than 4 GiB");
        let vlen = u32::try_from(value_len).expect("memtable value longer than 4 GiB");
        let entry_len =
            varint_len(u64::from(klen)) + key_len + varint_len(u64::from(vlen)) + value_len;
        let size = height * LINK + entry_len;
        arena.allocate_zeroing(size, size - value_len)
    }

    /// Allocates and fills a node (see [`SkipList::fill_node`]).
    fn new_node(
        &self,
        arena: &mut super::Arena,
        height: usize,
        key_len: usize,
        write_key: impl FnOnce(&mut [u8]),
        value: &[u8],
    ) -> *mut Node {
        let base = self.allocate(arena, height, key_len, value.len());
        // SAFETY: as in `insert_concurrent`.
        unsafe { Self::fill_node(base, height, key_len, write_key, value) }
    }

    /// Constructs the node's links (null) and writes its entry; returns the node pointer.
    ///
    /// # Safety
    /// `base` must be a fresh 8-aligned allocation of [`SkipList::allocate`]'s size for these
    /// lengths (zeroed but for the value's bytes), exclusively owned and not yet published.
    unsafe fn fill_node(
        base: NonNull<u8>,
        height: usize,
        key_len: usize,
        write_key: impl FnOnce(&mut [u8]),
        value: &[u8],
    ) -> *mut Node {
        let (klen, vlen) = (key_len as u32, value.len() as u32);
        let entry_len =
            varint_len(u64::from(klen)) + key_len + varint_len(u64::from(vlen)) + value.len();
        let head_len = entry_len - value.len();
        // SAFETY: by the contract we may write all of the allocation: the links, then the entry,
        // exactly its last `entry_len` bytes, of which the first `head_len` (lengths and key)
        // are zeroed, so initialized bytes.
        let (node_ptr, e) = unsafe {
            let node_ptr = base.as_ptr().add(height * LINK).cast::<Node>();
            init_links(node_ptr, height);
            let e = std::slice::from_raw_parts_mut(node_ptr.cast::<u8>(), head_len);
            (node_ptr, e)
        };
        let mut pos = encode_varint32(e, klen);
        if let Some(k) = e.get_mut(pos..pos + key_len) {
            write_key(k);
        }
        pos += key_len;
        pos += encode_varint32(e.get_mut(pos..).unwrap_or_default(), vlen);
        debug_assert_eq!(pos, head_len);
        // SAFETY: the value's bytes are the allocation's last `value.len()` bytes of the entry
        // (from `head_len`), ours to write and apart from `value`, which lives elsewhere.
        unsafe {
            std::ptr::copy_nonoverlapping(
                value.as_ptr(),
                node_ptr.cast::<u8>().add(head_len),
                value.len(),
            )
        };
        node_ptr
    }

    /// Links `node` (of `height`, key prefix `prefix`) at every level from 0 up, starting each
    /// level's walk at `prev[level]` (a node before the key, or the head); leaves `node` in
    /// `prev` at its levels (the next splice). See the module doc.
    fn link_node(
        &self,
        node: *mut Node,
        height: usize,
        prefix: u64,
        cmp: &impl Fn(&[u8]) -> Ordering,
        prev: &mut [*const Node; MAX_HEIGHT],
    ) {
        for (level, slot) in prev.iter_mut().enumerate().take(height) {
            let mut p = *slot;
            loop {
                // SAFETY: `p` is the head or a published node reached at this level (so its
                // height exceeds `level`); `node` has `height > level` links.
                let (from, to) = unsafe { (link(p, level), link(node, level)) };
                let n = from.next.load(AtomicOrdering::Acquire);
                let hint = from.prefix.load(AtomicOrdering::Relaxed);
                if !n.is_null() && hint <= prefix && self.order(n, Some(prefix), cmp).is_lt() {
                    p = n;
                    continue;
                }
                to.next.store(n, AtomicOrdering::Relaxed);
                // At most `n`'s prefix: loaded after `n`, and link prefixes only decrease.
                to.prefix.store(hint, AtomicOrdering::Relaxed);
                from.prefix.fetch_min(prefix, AtomicOrdering::Relaxed);
                // Release: publishes the node's entry and links written above.
                let swung = from.next.compare_exchange(
                    n,
                    node,
                    AtomicOrdering::Release,
                    AtomicOrdering::Relaxed,
                );
                if swung.is_ok() {
                    break;
                }
            }
            *slot = node;
        }
    }

    /// True if the target `cmp` orders against falls right after `before` at level 0, so the
    /// last insert's splice (whose level-0 node is `before`) is a good start at every level.
    #[inline]
    fn splice_fits(
        &self,
        before: *const Node,
        prefix: u64,
        cmp: &impl Fn(&[u8]) -> Ordering,
    ) -> bool {
        if !ptr::eq(before, self.head.as_ptr())
            && self.order(before, Some(prefix), cmp) != Ordering::Less
        {
            return false;
        }
        // SAFETY: `before` is the head or a published node of this list (height >= 1).
        let lk = unsafe { link(before, 0) };
        let after = lk.next.load(AtomicOrdering::Acquire);
        // The link's prefix is at most `after`'s: above the target's, `after` sorts after it.
        after.is_null()
            || lk.prefix.load(AtomicOrdering::Relaxed) > prefix
            || self.order(after, Some(prefix), cmp) == Ordering::Greater
    }
}

#[cfg(all(test, not(loom)))]
#[path = "insert_tests.rs"]
mod tests;
