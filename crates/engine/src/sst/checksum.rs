//! Block checksums: the `checksum: fixed32` of every block trailer.
//! Formulas: `docs/format/sst.md`, "Block trailer".
//!
//! # Contract
//!
//! * The kind is a property of the file, not of the options: a writer picks it from
//!   [`ChecksumType`] (`Options::checksum`) and records it as the footer's format version (1-3:
//!   [`ChecksumType::Crc32c`], 4: [`ChecksumType::Xxh3`]); a reader takes it from the footer
//!   (`format::Footer::checksum_type`) once at open and passes it to every block it verifies.
//! * [`block_checksum`] is a pure function of `(kind, stored bytes, type byte, offset)`: no IO,
//!   no allocation, no locks, no dynamic dispatch (one `match` on the kind, inlined into the
//!   caller). Who calls: `format::put_trailer` (the builder, once per block written) and
//!   `format::decode_block` (every read of a block: reader, readahead, MultiGet, tools).
//! * Both kinds detect every change of the type byte alone (crc32c: a burst of at most 8 bits;
//!   XXH3: `t -> t * 0x9E3779B1 mod 2^32` is a bijection, the multiplier being odd). XXH3 also
//!   detects every move of a block to an offset less than 2^32 away (the offset's term is
//!   `lower32(offset) * 0x7F4A7C15 mod 2^32`, odd again); crc32c detects a move with
//!   probability 1 - 2^-32, as any other damage.
//! * The footer's own checksum is masked crc32c in every version ([`mask_crc`], LevelDB's mask
//!   in `crate::coding`, which the WAL uses too).

use crate::coding::mask_crc;
use crate::options::ChecksumType;

/// XXH3 trailers: the compression type byte is multiplied by this (odd; `lower32` of the
/// product) before it is mixed in.
pub const XXH3_TYPE_MULTIPLIER: u64 = 0x9E37_79B1;
/// XXH3 trailers: the block's offset is multiplied by this (mod 2^64, odd; `lower32` of the
/// product) before it is mixed in.
pub const XXH3_OFFSET_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// The checksum stored in the trailer of `block` (its stored, possibly compressed bytes), whose
/// trailer's type byte is `type_byte`, at file offset `offset`, in a file of checksum `kind`.
#[inline]
pub fn block_checksum(kind: ChecksumType, block: &[u8], type_byte: u8, offset: u64) -> u32 {
    match kind {
        ChecksumType::Crc32c => crc32c_block_checksum(block, type_byte, offset),
        ChecksumType::Xxh3 => xxh3_block_checksum(block, type_byte, offset),
    }
}

/// Format versions 1-3: `mask(crc32c(block ++ [type_byte] ++ fixed64_le(offset)))`.
#[inline]
pub fn crc32c_block_checksum(block: &[u8], type_byte: u8, offset: u64) -> u32 {
    let crc = crc32c::crc32c(block);
    let crc = crc32c::crc32c_append(crc, &[type_byte]);
    mask_crc(crc32c::crc32c_append(crc, &offset.to_le_bytes()))
}

/// Format version 4: `lower32(xxh3_64(block)) ^ lower32(type_byte * 0x9E3779B1) ^
/// lower32(offset * 0x9E3779B97F4A7C15 mod 2^64)` (seedless XXH3-64, default secret; no mask).
#[inline]
pub fn xxh3_block_checksum(block: &[u8], type_byte: u8, offset: u64) -> u32 {
    let hash = xxhash_rust::xxh3::xxh3_64(block) as u32;
    let ty = u64::from(type_byte).wrapping_mul(XXH3_TYPE_MULTIPLIER) as u32;
    let at = offset.wrapping_mul(XXH3_OFFSET_MULTIPLIER) as u32;
    hash ^ ty ^ at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins both kinds for fixed inputs: a change of formula, constant or library version that
    /// would change the bytes on disk fails here.
    #[test]
    fn block_checksum_is_pinned() {
        // XXH3_64bits of the empty input with the default secret (xxHash's published value).
        assert_eq!(xxhash_rust::xxh3::xxh3_64(b""), 0x2D06_8005_38D3_94C2);
        let block = b"talus block checksum";
        let v4 = block_checksum(ChecksumType::Xxh3, block, 7, 123_456_789);
        assert_eq!(v4, 0x7b79_c2a1, "got {v4:#010x}");
        let h = xxhash_rust::xxh3::xxh3_64(block) as u32;
        assert_eq!(
            v4,
            h ^ (7u32.wrapping_mul(0x9E37_79B1)) ^ 123_456_789u32.wrapping_mul(0x7F4A_7C15)
        );
        let v1 = block_checksum(ChecksumType::Crc32c, block, 7, 123_456_789);
        assert_eq!(v1, 0x3863_7856, "got {v1:#010x}");
        // The empty block at offset 0, type 0: the hash of nothing, unmodified.
        assert_eq!(block_checksum(ChecksumType::Xxh3, b"", 0, 0), 0x38D3_94C2);
    }

    /// Every other type byte, and every nearby offset, gives another XXH3 trailer checksum.
    #[test]
    fn xxh3_detects_any_type_byte_and_nearby_offset_change() {
        let block = [0xa5u8; 100];
        let base = xxh3_block_checksum(&block, 4, 1 << 20);
        for t in (0..=255u8).filter(|&t| t != 4) {
            assert_ne!(xxh3_block_checksum(&block, t, 1 << 20), base, "type {t}");
        }
        for d in (1..5000u64).chain([1 << 31, (1 << 32) - 1]) {
            assert_ne!(xxh3_block_checksum(&block, 4, (1 << 20) + d), base, "offset +{d}");
        }
        // An offset 2^32 further gives the same value (the property stops there).
        assert_eq!(xxh3_block_checksum(&block, 4, (1 << 20) + (1 << 32)), base);
    }
}
