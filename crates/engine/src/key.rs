//! Internal keys: `user_key ++ fixed64_le((seq << 8) | kind)`.
//!
//! Every layer below the public API (memtable, SST, compaction, iterators) orders entries by
//! internal key: user key ascending (bytewise), then sequence number descending, then kind
//! descending. The trailer is little-endian, so comparison decodes it rather than comparing bytes.

use std::cmp::Ordering;

/// A write's sequence number (56 bits are usable).
pub type SequenceNumber = u64;

/// The largest sequence number an entry can carry.
pub const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// Bytes of the trailer appended to every user key.
pub const TRAILER_LEN: usize = 8;

/// What an entry is. The numeric values are on disk (WAL, SST); never renumber them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum ValueKind {
    /// A point deletion (tombstone).
    Delete = 0,
    /// A value.
    Put = 1,
    /// Reserved for merge operands.
    Merge = 2,
    /// Reserved: a single deletion.
    SingleDelete = 7,
    /// A range deletion `[user_key, value)`.
    RangeDelete = 15,
    /// Reserved for blob references.
    BlobIndex = 17,
}

impl ValueKind {
    /// Decodes a kind byte; `None` for unknown values.
    pub fn from_u8(b: u8) -> Option<ValueKind> {
        Some(match b {
            0 => ValueKind::Delete,
            1 => ValueKind::Put,
            2 => ValueKind::Merge,
            7 => ValueKind::SingleDelete,
            15 => ValueKind::RangeDelete,
            17 => ValueKind::BlobIndex,
            _ => return None,
        })
    }
}

/// The kind used when seeking: the highest kind value, so a seek key sorts before every entry
/// with the same user key and sequence.
pub const KIND_FOR_SEEK: ValueKind = ValueKind::BlobIndex;

/// Packs sequence and kind into the 8-byte trailer value.
#[inline]
pub fn pack_trailer(seq: SequenceNumber, kind: ValueKind) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE);
    (seq << 8) | kind as u64
}

/// Appends `user_key ++ trailer` to `dst`.
#[inline]
pub fn append_internal_key(
    dst: &mut Vec<u8>,
    user_key: &[u8],
    seq: SequenceNumber,
    kind: ValueKind,
) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// Builds an internal key.
#[inline]
pub fn make_internal_key(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    append_internal_key(&mut v, user_key, seq, kind);
    v
}

/// The user-key part of an internal key. Callers guarantee `ikey.len() >= 8` (keys that came
/// from disk are validated by [`parse_internal_key`] first); shorter input yields an empty key.
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    ikey.get(..ikey.len().wrapping_sub(TRAILER_LEN)).unwrap_or(&[])
}

/// The packed trailer of an internal key (0 if the key is too short).
#[inline]
pub fn trailer(ikey: &[u8]) -> u64 {
    let n = ikey.len();
    if n < TRAILER_LEN {
        return 0;
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&ikey[n - TRAILER_LEN..]);
    u64::from_le_bytes(b)
}

/// The sequence number of an internal key.
#[inline]
pub fn sequence(ikey: &[u8]) -> SequenceNumber {
    trailer(ikey) >> 8
}

/// A decoded internal key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// The sequence number.
    pub seq: SequenceNumber,
    /// The entry kind.
    pub kind: ValueKind,
}

/// Decodes an internal key; `None` if it is shorter than the trailer or its kind is unknown.
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    if ikey.len() < TRAILER_LEN {
        return None;
    }
    let t = trailer(ikey);
    let kind = ValueKind::from_u8((t & 0xff) as u8)?;
    Some(ParsedKey { user_key: user_key(ikey), seq: t >> 8, kind })
}

/// Orders user keys bytewise. Same result as `a.cmp(b)`; keys that differ in their first
/// eight bytes (most keys of a block, once their common prefix is short) are told apart by one
/// big-endian integer comparison instead of a `memcmp` call.
#[inline(always)]
pub fn compare_user_keys(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
        return a[8..].cmp(&b[8..]);
    }
    a.cmp(b)
}

/// Orders internal keys: user key ascending, then trailer (sequence, kind) descending.
#[inline]
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    match compare_user_keys(user_key(a), user_key(b)) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        o => o,
    }
}

/// A seek key that sorts before every entry of `user_key` visible at `seq`.
#[inline]
pub fn seek_key(user_key: &[u8], seq: SequenceNumber) -> Vec<u8> {
    make_internal_key(user_key, seq, KIND_FOR_SEEK)
}

/// Calls `f` with [`seek_key`]`(user_key, seq)`, built on the stack when it fits in 64 bytes
/// (a point read builds one per table it probes).
#[inline]
pub fn with_seek_key<R>(user_key: &[u8], seq: SequenceNumber, f: impl FnOnce(&[u8]) -> R) -> R {
    let n = user_key.len() + TRAILER_LEN;
    let mut stack = [0u8; 64];
    match stack.get_mut(..n) {
        Some(buf) => {
            buf[..user_key.len()].copy_from_slice(user_key);
            buf[user_key.len()..].copy_from_slice(&pack_trailer(seq, KIND_FOR_SEEK).to_le_bytes());
            f(buf)
        }
        None => f(&seek_key(user_key, seq)),
    }
}

/// An owned internal key with [`compare_internal`] ordering.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct InternalKey(pub Vec<u8>);

impl InternalKey {
    /// Builds one from parts.
    pub fn new(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Self {
        InternalKey(make_internal_key(user_key, seq, kind))
    }
    /// The encoded bytes.
    pub fn encoded(&self) -> &[u8] {
        &self.0
    }
    /// The user-key part.
    pub fn user_key(&self) -> &[u8] {
        user_key(&self.0)
    }
}

impl Ord for InternalKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_internal(&self.0, &other.0)
    }
}

impl PartialOrd for InternalKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for InternalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match parse_internal_key(&self.0) {
            Some(p) => write!(f, "{:?}@{}:{:?}", EscapedBytes(p.user_key), p.seq, p.kind),
            None => write!(f, "bad-ikey({:?})", EscapedBytes(&self.0)),
        }
    }
}

/// Formats bytes as printable ASCII with `\xNN` escapes.
pub struct EscapedBytes<'a>(pub &'a [u8]);

impl std::fmt::Debug for EscapedBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for &b in self.0 {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_seek_key_matches_seek_key() {
        for len in [0usize, 1, 55, 56, 57, 200] {
            let uk = vec![7u8; len];
            with_seek_key(&uk, 42, |k| assert_eq!(k, seek_key(&uk, 42).as_slice()));
        }
    }

    #[test]
    fn compare_user_keys_is_bytewise() {
        let keys: [&[u8]; 12] = [
            b"",
            b"a",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefgh\x00",
            b"abcdefgi",
            b"abcdefgh\xff\x01",
            b"\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\x00\x00\x00\x00\x00\x00\x00\x01zz",
            b"\x00\x00\x00\x00\x00\x00\x00\x01z",
            b"\x80",
            b"\x7f\xff\xff\xff\xff\xff\xff\xff\xff",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(compare_user_keys(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn order_is_user_key_then_newest_first() {
        let a1 = make_internal_key(b"a", 1, ValueKind::Put);
        let a2 = make_internal_key(b"a", 2, ValueKind::Put);
        let b1 = make_internal_key(b"b", 1, ValueKind::Put);
        assert_eq!(compare_internal(&a2, &a1), Ordering::Less);
        assert_eq!(compare_internal(&a1, &b1), Ordering::Less);
        let seek = seek_key(b"a", 2);
        assert_eq!(compare_internal(&seek, &a2), Ordering::Less);
        assert_eq!(compare_internal(&seek, &a1), Ordering::Less);
        let p = parse_internal_key(&a2).unwrap();
        assert_eq!((p.user_key, p.seq, p.kind), (&b"a"[..], 2, ValueKind::Put));
    }

    #[test]
    fn short_or_unknown_keys_do_not_parse() {
        assert!(parse_internal_key(b"abc").is_none());
        let mut k = make_internal_key(b"a", 1, ValueKind::Put);
        let n = k.len();
        k[n - 8] = 99;
        assert!(parse_internal_key(&k).is_none());
    }
}
