//! An arena-allocated, lock-free-for-readers skiplist of memtable entries (LevelDB's `SkipList`,
//! RocksDB's `InlineSkipList`).
//!
//! # Layout
//! Each node is one arena allocation; a node pointer points at its entry, the links lie before
//! it (link `level` at `node - (level + 1) * 16`; RocksDB's `InlineSkipList` puts its 8-byte
//! links there too):
//!
//! ```text
//! link[height - 1] | ... | link[0] | entry
//! link  = next: node pointer | prefix: u64 (of `next`; u64::MAX while `next` is null)
//! entry = internal_key_len: varint32 | internal key | value_len: varint32 | value
//! ```
//!
//! Neither the height nor the entry's length is stored: a search reaches level `l` of a node only
//! through a level-`l` link, and the entry's varints give its length. So a node costs its links
//! and its entry (RocksDB's: 8-byte links and the entry): 8 bytes more per link than RocksDB's,
//! 10.7 bytes per node on average (1.33 links).
//!
//! A prefix is the first 8 bytes of a user key, big-endian, zero-padded ([`key_prefix`]). If
//! two prefixes differ they order the keys; only equal prefixes need the full comparison, so a
//! search mostly compares integers instead of decoding and `memcmp`ing entries. A node's own
//! prefix is read from its entry ([`node_prefix`], one load from the cache line the search
//! loaded for the node's links).
//!
//! # Links
//! A link carries its next node's prefix so that a search can tell "the next node on this level
//! sorts after the target, go down" from the node it stands on, without reading the next node: a
//! memory miss saved per level (the last node compared on each level is one the search does not
//! move to). A reader loads `next` (Acquire), then `prefix`; the writer stores `prefix`, then
//! `next` (Release). So the prefix a reader loads is the one stored with the `next` it loaded or
//! a later one; and every later store on that link is of a node inserted before the current next,
//! whose prefix is no greater. A loaded prefix is therefore at most the prefix of the loaded
//! `next`: "loaded prefix > target's" proves the next node sorts after the target. The search
//! moves right only on the node's own prefix or key, never on a link's.
//!
//! The head node has [`MAX_HEIGHT`] links and an empty entry. Entries are ordered by
//! [`crate::key::compare_internal`].
//!
//! # Concurrency
//! Writers (`insert.rs`): [`SkipList::insert`] holds the writer mutex (which owns the arena)
//! throughout, so `insert`s are serialized, and links with plain stores when no
//! [`SkipList::insert_concurrent`] is linking (the `linking` count), with compare-and-swap
//! otherwise; several `insert_concurrent` calls (the members of a write group) hold it only to
//! allocate, and link in parallel with compare-and-swap. Readers take no lock. A node is
//! fully written (links, entry) before it is published; each link is published with a
//! `Release` store and read with an `Acquire` load, so a reader that sees a node sees all of its
//! contents. Nodes are never modified (except their links, atomically), moved or freed before the
//! list is dropped, so a [`NodePtr`] obtained from a list stays valid as long as that list lives.
//!
//! The links and the writer mutex come from `crate::sync`, so that under `--cfg loom` the
//! insert/search protocol is model-checked (`memtable/skiplist/loom_tests.rs`).
//!
//! The node's bytes (links, entry) and their unsafe accessors are in `node.rs`.

use std::cmp::Ordering;
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering as AtomicOrdering;

use super::arena::Arena;
use crate::sync::{AtomicUsize, Mutex};

mod insert;
mod node;

use node::{init_links, link, node_key, node_prefix, node_value, Node, LINK};

/// The tallest node.
pub(super) const MAX_HEIGHT: usize = 12;

/// The first 8 bytes of `user_key` as a big-endian integer, zero-padded. For any two user keys,
/// `key_prefix(a) < key_prefix(b)` implies `a < b` (bytewise); equal prefixes decide nothing.
#[inline]
pub(super) fn key_prefix(user_key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = user_key.len().min(8);
    b[..n].copy_from_slice(&user_key[..n]);
    u64::from_be_bytes(b)
}

/// A published node of a [`SkipList`] (never the head). Only the list creates these; using one
/// with a list other than the one that returned it is a logic error the module never commits
/// (the memtable iterator holds an `Arc` of the very memtable it got its nodes from).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct NodePtr(NonNull<Node>);

// SAFETY: a `NodePtr` is only an address; it is dereferenced only through `&SkipList` methods,
// which are safe to call from any thread (see the `Sync` impl of `SkipList`).
unsafe impl Send for NodePtr {}
// SAFETY: as above.
unsafe impl Sync for NodePtr {}

/// State only the writer touches.
struct Writer {
    arena: Arena,
    rng: u64,
    /// The splice of the last insert: at every level, the last node before the inserted key
    /// (the inserted node itself at the levels it has). Exact while only `insert`s alone have
    /// linked since (any other link resets it to the head, see `insert.rs`). A key that falls between `splice[0]` and its successor is linked with no search
    /// (RocksDB's `InlineSkipList` splice): sequential inserts cost two key comparisons.
    splice: [*const Node; MAX_HEIGHT],
}

/// The skiplist. See the module documentation.
pub(super) struct SkipList {
    head: NonNull<Node>,
    /// Height of the tallest node so far (>= 1). Read `Relaxed`: a stale value only makes a
    /// search start lower or meet null links at the top, both harmless.
    max_height: AtomicUsize,
    writer: Mutex<Writer>,
    /// Arena bytes in use, refreshed by the writer after each insert.
    memory: AtomicUsize,
    /// `insert_concurrent` calls between their allocation (incremented under the writer mutex)
    /// and their last link (decremented, `Release`). An `insert` that reads 0 under the mutex
    /// is the only writer until it returns, and links with plain stores (`insert.rs`).
    linking: AtomicUsize,
}

// SAFETY: the list owns its arena (and so every node). Shared mutation happens only through
// atomics (links, max height, memory) or under the writer mutex (arena, rng); node bytes other
// than links are written once, before the node is published with a Release store.
unsafe impl Send for SkipList {}
// SAFETY: as above; readers only perform Acquire loads and read immutable node bytes.
unsafe impl Sync for SkipList {}

impl SkipList {
    /// An empty list (allocates the head node).
    pub(super) fn new() -> Self {
        let mut arena = Arena::new();
        // Links and an empty entry (two zero varints: the arena's memory is zeroed).
        let base = arena.allocate(MAX_HEIGHT * LINK + 2);
        // SAFETY: fresh, exclusively owned, zeroed, 8-aligned allocation with room for the links
        // before the node and the empty entry after it.
        let head = unsafe {
            let node = base.as_ptr().add(MAX_HEIGHT * LINK).cast::<Node>();
            init_links(node, MAX_HEIGHT);
            NonNull::new_unchecked(node)
        };
        let memory = AtomicUsize::new(arena.memory_usage());
        SkipList {
            head,
            max_height: AtomicUsize::new(1),
            writer: Mutex::new(Writer {
                arena,
                rng: 0x2545_f491_4f6c_dd1d,
                splice: [head.as_ptr().cast_const(); MAX_HEIGHT],
            }),
            memory,
            linking: AtomicUsize::new(0),
        }
    }

    /// Arena bytes in use.
    pub(super) fn memory_usage(&self) -> usize {
        self.memory.load(AtomicOrdering::Relaxed)
    }

    #[inline]
    fn next(&self, node: *const Node, level: usize) -> *const Node {
        // SAFETY: every node reachable from the head belongs to this live list, and searches
        // only ask for levels below the node's height (a node is reached at level `l` only
        // through a level-`l` link, and only nodes of height > l are linked there).
        unsafe { link(node, level).next.load(AtomicOrdering::Acquire) }
    }

    #[inline]
    fn key_at(&self, node: *const Node) -> &[u8] {
        // SAFETY: `node` is a published node of this list (or the head), valid while `self` is.
        unsafe { node_key(node) }
    }

    /// The internal key of `n`.
    #[inline]
    pub(super) fn key(&self, n: NodePtr) -> &[u8] {
        self.key_at(n.0.as_ptr())
    }

    /// The value of `n`.
    #[inline]
    pub(super) fn value(&self, n: NodePtr) -> &[u8] {
        // SAFETY: `n` is a published node of this list (see `NodePtr`).
        unsafe { node_value(n.0.as_ptr()) }
    }

    /// The node after `n`.
    #[inline]
    pub(super) fn next_of(&self, n: NodePtr) -> Option<NodePtr> {
        NonNull::new(self.next(n.0.as_ptr(), 0).cast_mut()).map(NodePtr)
    }

    fn wrap(&self, p: *const Node) -> Option<NodePtr> {
        if ptr::eq(p, self.head.as_ptr()) {
            return None;
        }
        NonNull::new(p.cast_mut()).map(NodePtr)
    }

    /// The last node whose key is `< target` (or `<= target` if `inclusive`), where
    /// `cmp(node_key)` orders a node key against the target; the head if none. Fills `prev`
    /// with the last such node of every level when given.
    #[inline]
    fn find_before(
        &self,
        prefix: Option<u64>,
        cmp: impl Fn(&[u8]) -> Ordering,
        inclusive: bool,
        mut prev: Option<&mut [*const Node; MAX_HEIGHT]>,
    ) -> (*const Node, *const Node) {
        let mut x: *const Node = self.head.as_ptr();
        let mut level = self.max_height.load(AtomicOrdering::Relaxed).clamp(1, MAX_HEIGHT) - 1;
        loop {
            // SAFETY: as in `next`.
            let lk = unsafe { link(x, level) };
            let next = lk.next.load(AtomicOrdering::Acquire);
            // A link's prefix is at most its node's (loaded after the node, see "Links"): above
            // the target's, the node sorts after the target without being read.
            let after = prefix.is_some_and(|p| lk.prefix.load(AtomicOrdering::Relaxed) > p);
            if !next.is_null() && !after {
                // Start fetching the node after `next` on this level while `next` is compared
                // (RocksDB's InlineSkipList does the same): when the search moves right, that
                // node's memory miss has overlapped this comparison's.
                crate::prefetch::prefetch(self.next(next, level).cast::<u8>());
                let o = self.order(next, prefix, &cmp);
                if o == Ordering::Less || (inclusive && o == Ordering::Equal) {
                    x = next;
                    continue;
                }
            }
            if let Some(p) = prev.as_deref_mut() {
                if let Some(slot) = p.get_mut(level) {
                    *slot = x;
                }
            }
            if level == 0 {
                // `next` is the node this search compared and found not before the target (or
                // null). Return it rather than reloading `x`'s link: a node inserted after `x`
                // meanwhile may sort before the target (e.g. a newer version of the same user key),
                // and a point read must not see it.
                return (x, next);
            }
            level -= 1;
        }
    }

    /// How `node` orders against the target: by prefix (the target's, when known) if they
    /// differ, else by `cmp(node_key)`.
    #[inline]
    fn order(
        &self,
        node: *const Node,
        prefix: Option<u64>,
        cmp: &impl Fn(&[u8]) -> Ordering,
    ) -> Ordering {
        if let Some(p) = prefix {
            // SAFETY: `node` is a published node of this list, valid while `self` is; its
            // entry was written before it was published.
            let np = unsafe { node_prefix(node) };
            if np != p {
                return np.cmp(&p);
            }
        }
        cmp(self.key_at(node))
    }

    /// The first node with key `>= target` (`cmp(node_key)` orders a node key against it;
    /// `prefix` is [`key_prefix`] of the target's user key, if the caller has it).
    pub(super) fn seek_ge(
        &self,
        prefix: Option<u64>,
        cmp: impl Fn(&[u8]) -> Ordering,
    ) -> Option<NodePtr> {
        let (_, at_or_after) = self.find_before(prefix, cmp, false, None);
        NonNull::new(at_or_after.cast_mut()).map(NodePtr)
    }

    /// The last node with key `< target`.
    pub(super) fn seek_lt(
        &self,
        prefix: Option<u64>,
        cmp: impl Fn(&[u8]) -> Ordering,
    ) -> Option<NodePtr> {
        self.wrap(self.find_before(prefix, cmp, false, None).0)
    }

    /// The last node with key `<= target`.
    pub(super) fn seek_le(
        &self,
        prefix: Option<u64>,
        cmp: impl Fn(&[u8]) -> Ordering,
    ) -> Option<NodePtr> {
        self.wrap(self.find_before(prefix, cmp, true, None).0)
    }

    /// The first node.
    pub(super) fn first(&self) -> Option<NodePtr> {
        NonNull::new(self.next(self.head.as_ptr(), 0).cast_mut()).map(NodePtr)
    }

    /// The last node.
    pub(super) fn last(&self) -> Option<NodePtr> {
        self.seek_le(None, |_| Ordering::Less)
    }

    /// [`key_prefix`] of `n`'s user key as a search reads it from the entry (test support).
    #[cfg(test)]
    pub(super) fn prefix_of(&self, n: NodePtr) -> u64 {
        // SAFETY: `n` is a published node of this list (see `NodePtr`).
        unsafe { node_prefix(n.0.as_ptr()) }
    }

    /// Checks every level: keys strictly increasing and each level a sublist of the one below
    /// (test support). Returns the number of nodes at level 0.
    #[cfg(test)]
    pub(super) fn check_levels(&self, cmp: impl Fn(&[u8], &[u8]) -> Ordering) -> usize {
        let mut below: Vec<*const Node> = Vec::new();
        let mut count = 0;
        for level in 0..MAX_HEIGHT {
            let mut nodes = Vec::new();
            let mut x = self.next(self.head.as_ptr(), level);
            while !x.is_null() {
                nodes.push(x);
                x = self.next(x, level);
            }
            for w in nodes.windows(2) {
                assert_eq!(
                    cmp(self.key_at(w[0]), self.key_at(w[1])),
                    Ordering::Less,
                    "level {level}"
                );
            }
            if level == 0 {
                count = nodes.len();
            } else {
                let set: std::collections::HashSet<_> = below.iter().collect();
                assert!(nodes.iter().all(|n| set.contains(n)), "level {level} not a sublist");
            }
            below = nodes;
        }
        count
    }
}

#[cfg(loom)]
mod loom_tests;
