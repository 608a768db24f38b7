//! The fixed parts of the SST format: block handles, the per-block trailer (compression type and
//! checksum covering the block's offset), the footer, and reading one block back from a file.
//! Byte layout: `docs/format/sst.md` (format_version 4 for tables with XXH3 block checksums;
//! with crc32c ones, 3 for tables with a partitioned index or filter and 2 for the others;
//! version 1 files are read too). The footer's version names the block checksum
//! ([`Footer::checksum_type`]); the checksums themselves are in [`super::checksum`].
//!
//! Everything decoded here comes from disk and is checked: a short read, a bad checksum, a
//! handle pointing outside the file or a failed decompression is `Error::Corruption` naming the
//! file and the offset of the unit that failed.

use crate::coding::{
    decode_fixed32, decode_fixed64, get_varint64, mask_crc, put_fixed32, put_varint64,
};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::options::{ChecksumType, CompressionType};

use super::checksum::block_checksum;
use super::compression;

/// Bytes after every block: `compression_type: u8 | checksum: fixed32`.
pub const BLOCK_TRAILER_LEN: usize = 5;
/// Bytes of the footer at the end of every file.
pub const FOOTER_LEN: usize = 56;
/// Bytes of the footer holding the two handles (zero-padded).
pub const FOOTER_HANDLES_LEN: usize = 40;
/// The footer's magic number ("TALUS_ST" read as a big-endian u64).
pub const TABLE_MAGIC: u64 = 0x5441_4c55_535f_5354;
/// The newest format version this code writes and reads (4: XXH3 block checksums, and
/// everything version 3 allows). Tables with crc32c block checksums are written as version 3
/// (partitioned index or filters) or 2 (neither).
pub const FORMAT_VERSION: u32 = 4;
/// The oldest version this code reads (version 1 differs only in always having internal keys in
/// the index block).
pub const MIN_FORMAT_VERSION: u32 = 1;
/// The first version that may hold a partitioned index or filter (every later one may too).
pub const PARTITIONED_FORMAT_VERSION: u32 = 3;
/// The first version whose block trailers carry XXH3 checksums (earlier ones: crc32c).
pub const XXH3_FORMAT_VERSION: u32 = 4;
/// Largest encoding of a [`BlockHandle`].
pub const MAX_HANDLE_LEN: usize = 20;

/// The version a new table is written as: 4 with XXH3 block checksums; with crc32c ones, 3 if
/// it has a partitioned index or filter, else 2 (so a reader that knows only version 2 refuses
/// exactly the files it would misread).
pub fn format_version_for(checksum: ChecksumType, partitioned: bool) -> u32 {
    match checksum {
        ChecksumType::Xxh3 => XXH3_FORMAT_VERSION,
        ChecksumType::Crc32c if partitioned => PARTITIONED_FORMAT_VERSION,
        ChecksumType::Crc32c => 2,
    }
}

/// Where a block lives: its offset and its size without the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Byte offset of the block in the file.
    pub offset: u64,
    /// Bytes of the (possibly compressed) block, trailer excluded.
    pub size: u64,
}

impl BlockHandle {
    /// Appends `offset: varint64 | size: varint64`.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// The encoded handle.
    pub fn encoded(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(MAX_HANDLE_LEN);
        self.encode_to(&mut v);
        v
    }

    /// Decodes a handle at the start of `src`: `(handle, bytes used)`.
    pub fn decode(src: &[u8]) -> Option<(BlockHandle, usize)> {
        let (offset, a) = get_varint64(src)?;
        let (size, b) = get_varint64(src.get(a..)?)?;
        Some((BlockHandle { offset, size }, a + b))
    }

    /// Offset just past the block's trailer, if it does not overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset.checked_add(self.size)?.checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Handle of the meta-index block.
    pub metaindex: BlockHandle,
    /// Handle of the index block (of the top-level index if it is partitioned).
    pub index: BlockHandle,
    /// The file's format version.
    pub version: u32,
}

impl Footer {
    /// The block checksum of every block of the file: XXH3 from version 4 on, else crc32c.
    #[inline]
    pub fn checksum_type(&self) -> ChecksumType {
        if self.version >= XXH3_FORMAT_VERSION {
            ChecksumType::Xxh3
        } else {
            ChecksumType::Crc32c
        }
    }

    /// The 56 footer bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(FOOTER_LEN);
        self.metaindex.encode_to(&mut v);
        self.index.encode_to(&mut v);
        v.resize(FOOTER_HANDLES_LEN, 0);
        put_fixed32(&mut v, self.version);
        let crc = mask_crc(crc32c::crc32c(&v));
        put_fixed32(&mut v, crc);
        v.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        v
    }

    /// Decodes the footer bytes found at `offset` of `file`.
    pub fn decode(src: &[u8], file: &str, offset: u64) -> Result<Footer> {
        let bad = |d: &str| Error::corruption(file, offset, format!("footer: {d}"));
        if src.len() != FOOTER_LEN {
            return Err(bad("wrong length"));
        }
        let magic = src.get(48..).and_then(decode_fixed64).ok_or_else(|| bad("short"))?;
        if magic != TABLE_MAGIC {
            return Err(bad("bad magic number (not a Talus SST)"));
        }
        let body = src.get(..44).ok_or_else(|| bad("short"))?;
        let stored = src.get(44..).and_then(decode_fixed32).ok_or_else(|| bad("short"))?;
        if mask_crc(crc32c::crc32c(body)) != stored {
            return Err(bad("checksum mismatch"));
        }
        let version = src.get(40..).and_then(decode_fixed32).ok_or_else(|| bad("short"))?;
        if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(bad(&format!("unsupported format_version {version}")));
        }
        let handles = src.get(..FOOTER_HANDLES_LEN).ok_or_else(|| bad("short"))?;
        let (metaindex, n) = BlockHandle::decode(handles).ok_or_else(|| bad("bad handle"))?;
        let rest = handles.get(n..).ok_or_else(|| bad("bad handle"))?;
        let (index, _) = BlockHandle::decode(rest).ok_or_else(|| bad("bad handle"))?;
        Ok(Footer { metaindex, index, version })
    }
}

/// The end (trailer included) of the block at `handle` in a file of `file_size` bytes named
/// `name`; `Corruption` if it overflows or passes the end of the file.
pub fn checked_end(file_size: u64, name: &str, handle: BlockHandle) -> Result<u64> {
    let bad = |d: String| Error::corruption(name, handle.offset, d);
    let end = handle.end_with_trailer().ok_or_else(|| bad("block handle overflows".into()))?;
    if end > file_size {
        return Err(bad(format!(
            "block handle (size {}) extends past the end of the file ({file_size} bytes)",
            handle.size
        )));
    }
    Ok(end)
}

/// Reads the block at `handle` of a file whose footer names block checksum `checksum`,
/// verifies its trailer and returns the uncompressed bytes.
pub fn read_block(
    file: &dyn RandomAccessFile,
    name: &str,
    handle: BlockHandle,
    checksum: ChecksumType,
) -> Result<Vec<u8>> {
    checked_end(file.size(), name, handle)?;
    let buf = file.read_vec_at(handle.offset, (handle.size as usize) + BLOCK_TRAILER_LEN)?;
    decode_block(buf, name, handle, checksum)
}

/// Verifies (with the file's block checksum `checksum`, [`Footer::checksum_type`]) and
/// uncompresses `buf`, the `handle.size + BLOCK_TRAILER_LEN` bytes stored at `handle` (read by
/// the caller, e.g. several blocks in one read).
pub fn decode_block(
    mut buf: Vec<u8>,
    name: &str,
    handle: BlockHandle,
    checksum: ChecksumType,
) -> Result<Vec<u8>> {
    let bad = |d: String| Error::corruption(name, handle.offset, d);
    let n = handle.size as usize;
    let (type_byte, stored) = match (buf.get(n), buf.get(n + 1..).and_then(decode_fixed32)) {
        (Some(&t), Some(c)) => (t, c),
        _ => return Err(bad("short block trailer".into())),
    };
    let body = buf.get(..n).unwrap_or(&[]);
    if block_checksum(checksum, body, type_byte, handle.offset) != stored {
        return Err(bad("block checksum mismatch".into()));
    }
    let ctype = CompressionType::from_u8(type_byte)
        .ok_or_else(|| bad(format!("unknown compression type {type_byte}")))?;
    if ctype == CompressionType::None {
        buf.truncate(n);
        return Ok(buf);
    }
    let out = compression::decompress(ctype, body).map_err(bad);
    // The stored bytes are done with: their buffer serves the next read (`fs::buf_pool`).
    crate::fs::buf_pool::give(buf);
    out
}

/// Appends the trailer of `block` (stored with `ctype` at `offset`, in a file of block checksum
/// `checksum`) to `dst`.
pub fn put_trailer(
    dst: &mut Vec<u8>,
    block: &[u8],
    ctype: CompressionType,
    offset: u64,
    checksum: ChecksumType,
) {
    let t = ctype as u8;
    dst.push(t);
    put_fixed32(dst, block_checksum(checksum, block, t, offset));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_corruption() {
        let f = Footer {
            metaindex: BlockHandle { offset: 1000, size: 50 },
            index: BlockHandle { offset: 900, size: 95 },
            version: 3,
        };
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&bytes, "t", 0).unwrap(), f);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(Footer::decode(&b, "t", 0).unwrap_err().is_corruption(), "byte {i}");
        }
        let v4 = Footer { version: 4, ..f };
        assert_eq!(Footer::decode(&v4.encode(), "t", 0).unwrap(), v4);
        for bad in [0, 5] {
            let e = Footer::decode(&Footer { version: bad, ..f }.encode(), "t", 0).unwrap_err();
            assert!(e.to_string().contains(&format!("unsupported format_version {bad}")), "{e}");
        }
    }

    #[test]
    fn the_version_names_the_block_checksum() {
        let f = |version| Footer {
            metaindex: BlockHandle::default(),
            index: BlockHandle::default(),
            version,
        };
        for v in 1..=3 {
            assert_eq!(f(v).checksum_type(), ChecksumType::Crc32c, "{v}");
        }
        assert_eq!(f(4).checksum_type(), ChecksumType::Xxh3);
        assert_eq!(format_version_for(ChecksumType::Crc32c, false), 2);
        assert_eq!(format_version_for(ChecksumType::Crc32c, true), 3);
        assert_eq!(format_version_for(ChecksumType::Xxh3, false), 4);
        assert_eq!(format_version_for(ChecksumType::Xxh3, true), 4);
        assert_eq!(FORMAT_VERSION, XXH3_FORMAT_VERSION);
    }

    #[test]
    fn handle_round_trip() {
        for &(o, s) in &[(0u64, 0u64), (1, 127), (u64::MAX, u64::MAX), (1 << 40, 4096)] {
            let h = BlockHandle { offset: o, size: s };
            let e = h.encoded();
            assert!(e.len() <= MAX_HANDLE_LEN);
            assert_eq!(BlockHandle::decode(&e), Some((h, e.len())));
        }
        assert_eq!(BlockHandle::decode(&[0x80]), None);
    }
}
