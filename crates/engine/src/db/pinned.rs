//! [`PinnedSlice`]: a value returned without copying (RocksDB's `PinnableSlice`).
//!
//! A point lookup finds its value either in a memtable's arena or in an SST data block. The
//! slice refers to it in place and holds what keeps it valid: a reference on the memtable, or a
//! handle on the data block (which pins the block-cache entry, so the cache does not evict it
//! while the slice lives). A value merged from operands (see [`crate::MergeOperator`]) exists
//! nowhere else and is owned by the slice. Holding many slices for long therefore holds memory: a pinned block
//! counts against the cache's capacity, a pinned memtable stays in memory after its flush.

use std::fmt;
use std::ops::Deref;

use crate::memtable::MemValue;
use crate::sst::BlockSlice;

/// A value read without copying; dereferences to `&[u8]`. See [`crate::Db::get_pinned`].
pub struct PinnedSlice(Pinned);

enum Pinned {
    Mem(MemValue),
    Block(BlockSlice),
    Owned(Vec<u8>),
}

impl PinnedSlice {
    pub(crate) fn mem(v: MemValue) -> PinnedSlice {
        PinnedSlice(Pinned::Mem(v))
    }

    pub(crate) fn block(v: BlockSlice) -> PinnedSlice {
        PinnedSlice(Pinned::Block(v))
    }

    pub(crate) fn owned(v: Vec<u8>) -> PinnedSlice {
        PinnedSlice(Pinned::Owned(v))
    }
}

impl Deref for PinnedSlice {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Pinned::Mem(v) => v,
            Pinned::Block(v) => v,
            Pinned::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for PinnedSlice {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq<[u8]> for PinnedSlice {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[u8]> for PinnedSlice {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

impl fmt::Debug for PinnedSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let where_ = match self.0 {
            Pinned::Mem(_) => "memtable",
            Pinned::Block(_) => "block",
            Pinned::Owned(_) => "merged",
        };
        write!(f, "PinnedSlice({where_}, {:?})", &**self)
    }
}
