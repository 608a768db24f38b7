//! [`KeyRange`]: the key ranges [`super::Db::range`], [`super::Db::range_opt`] and
//! [`super::Db::delete_range`] take: `..`, `a..b`, `a..=b`, `a..`, `..b`, `..=b` and
//! `(Bound, Bound)` pairs, over any key type that is `AsRef<[u8]>` (`&[u8]`, `&[u8; N]`,
//! `Vec<u8>`, `&str`, ...). A trait of its own rather than `RangeBounds<K>`, so that `..` needs
//! no type annotation (`RangeFull` names no key type). Both ends of one range have one type,
//! as Rust's range syntax requires: `b"a"..b"bb"` (arrays of two lengths) is a type error
//! before any API sees it; write `&b"a"[..]..&b"bb"[..]`.

use std::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// A range of keys (see the module doc).
pub trait KeyRange {
    /// The range's start and end.
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>);
}

impl KeyRange for RangeFull {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Unbounded, Bound::Unbounded)
    }
}

impl<K: AsRef<[u8]>> KeyRange for Range<K> {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Included(self.start.as_ref()), Bound::Excluded(self.end.as_ref()))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeInclusive<K> {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Included(self.start().as_ref()), Bound::Included(self.end().as_ref()))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeFrom<K> {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Included(self.start.as_ref()), Bound::Unbounded)
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeTo<K> {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Unbounded, Bound::Excluded(self.end.as_ref()))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeToInclusive<K> {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Unbounded, Bound::Included(self.end.as_ref()))
    }
}

impl<K: AsRef<[u8]>> KeyRange for (Bound<K>, Bound<K>) {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (self.0.as_ref().map(|k| k.as_ref()), self.1.as_ref().map(|k| k.as_ref()))
    }
}

impl<R: KeyRange + ?Sized> KeyRange for &R {
    fn key_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (**self).key_bounds()
    }
}
