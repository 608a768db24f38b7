//! The bytes of a skiplist node (see "Layout" and "Links" in [`super`]'s documentation): the
//! [`Link`] type, and the unsafe accessors that construct a node's links and read a link, the
//! entry's key, its user-key prefix and its value from a node pointer. Owns no memory (the
//! list's arena does) and takes no locks; called only by [`super::SkipList`], whose safety
//! comments discharge each function's `# Safety` contract.

use std::ptr;

use crate::sync::{AtomicPtr, AtomicU64};

/// A node, as the address of its entry; its links precede it in the same allocation.
#[repr(C)]
pub(super) struct Node {
    _entry: [u8; 0],
}

/// One level's link of a node: the next node on that level and a lower bound of that node's
/// [`key_prefix`](super::key_prefix) (`u64::MAX` while `next` is null). See "Links" in the
/// documentation of [`super`].
#[repr(C)]
pub(super) struct Link {
    pub(super) next: AtomicPtr<Node>,
    pub(super) prefix: AtomicU64,
}

pub(super) const LINK: usize = std::mem::size_of::<Link>();
// The arena aligns allocations to 8: the links (at the start) must not need more.
const _: () = assert!(std::mem::align_of::<Link>() <= 8 && LINK == 16);

/// Constructs the `height` null links of a freshly allocated node (they are real atomics, not
/// zeroed memory taken for them).
///
/// # Safety
/// `node` must point `height` links into an exclusively owned, 8-aligned allocation.
pub(super) unsafe fn init_links(node: *mut Node, height: usize) {
    for level in 0..height {
        // SAFETY: by the contract, link `level` lies inside the allocation, 8-aligned.
        unsafe {
            node.cast::<u8>().sub((level + 1) * LINK).cast::<Link>().write(Link {
                next: AtomicPtr::new(ptr::null_mut()),
                prefix: AtomicU64::new(u64::MAX),
            })
        };
    }
}

/// Pointer to link `level` of `node`.
///
/// # Safety
/// `node` must point to a node of a live list with `height > level`.
#[inline]
pub(super) unsafe fn link<'a>(node: *const Node, level: usize) -> &'a Link {
    // SAFETY: the links end right before the node (8-byte aligned, as the arena aligns every
    // allocation to 8 and links are 16 bytes) and `level < height` keeps us inside the node's
    // allocation.
    unsafe { &*node.cast::<u8>().sub((level + 1) * LINK).cast::<Link>() }
}

/// Decodes the varint32 at `p`: `(value, bytes)`.
///
/// # Safety
/// `p` must point to a varint32 the list wrote (at most 5 bytes, the last below 0x80) inside a
/// live node.
#[inline]
unsafe fn read_varint32(p: *const u8) -> (usize, usize) {
    let mut v = 0u32;
    for i in 0..5 {
        // SAFETY: by the contract the varint's bytes up to its last one are readable.
        let b = unsafe { *p.add(i) };
        v |= u32::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return (v as usize, i + 1);
        }
    }
    (v as usize, 5)
}

/// The internal key of `node`.
///
/// # Safety
/// `node` must point to a fully written node (or the head) of a live list; the slice must not
/// outlive it.
#[inline]
pub(super) unsafe fn node_key<'a>(node: *const Node) -> &'a [u8] {
    // SAFETY: the entry starts at the node and was written before publication; it starts with
    // the key's length as a varint, then the key (the head's entry is two zero bytes).
    unsafe {
        let start = node.cast::<u8>();
        let (klen, n) = read_varint32(start);
        std::slice::from_raw_parts(start.add(n), klen)
    }
}

/// [`key_prefix`](super::key_prefix) of `node`'s user key, read from its entry: one unaligned
/// 8-byte load, the bytes
/// past a user key shorter than 8 masked off (its internal key has 8 more bytes, its trailer, so
/// the load stays inside the key).
///
/// # Safety
/// `node` must point to a fully written node (not the head) of a live list.
#[inline]
pub(super) unsafe fn node_prefix(node: *const Node) -> u64 {
    // SAFETY: the entry starts at the node with the key's varint length, then the internal key,
    // which is at least 8 bytes (every memtable key carries its 8-byte trailer).
    let (klen, raw) = unsafe {
        let start = node.cast::<u8>();
        let (klen, n) = read_varint32(start);
        (klen, u64::from_be_bytes(ptr::read_unaligned(start.add(n).cast::<[u8; 8]>())))
    };
    let user_len = klen.saturating_sub(8);
    if user_len >= 8 {
        raw
    } else {
        // Keep the top `user_len` bytes (none when the user key is empty).
        raw & !(u64::MAX.checked_shr(8 * user_len as u32).unwrap_or(0))
    }
}

/// The value of `node`.
///
/// # Safety
/// As [`node_key`].
#[inline]
pub(super) unsafe fn node_value<'a>(node: *const Node) -> &'a [u8] {
    // SAFETY: as in `node_key`; the value's length and bytes follow the key.
    unsafe {
        let key = node_key(node);
        let after = key.as_ptr().add(key.len());
        let (vlen, n) = read_varint32(after);
        std::slice::from_raw_parts(after.add(n), vlen)
    }
}
