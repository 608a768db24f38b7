//! Data and index blocks: prefix-compressed entries with restart points.
//!
//! STUB: interface fixed by the skeleton.

/// A decoded (uncompressed) block, shared through the block cache.
pub struct Block {}

impl Block {
    /// Bytes charged to the cache for this block.
    pub fn charge(&self) -> usize {
        todo!()
    }
}
