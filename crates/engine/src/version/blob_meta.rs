//! What the MANIFEST knows of blob files: RocksDB's `BlobFileAddition` (a new blob file: its
//! number, record count and bytes, checksum) and `BlobFileGarbage` (records of a blob file no
//! SST references any more), their tag encodings (`docs/format/manifest.md`, tags 400 and 401;
//! tag 402 is an SST's oldest blob file, beside its tag 7), and the per-file state a
//! [`super::Version`] holds. Pure values; no IO.

use crate::coding::{put_varint32, put_varint64, Decoder};

/// Tag: a blob file added (RocksDB's `kBlobFileAddition`).
pub const TAG_BLOB_FILE_ADDITION: u32 = 400;
/// Tag: garbage counted in a blob file (RocksDB's `kBlobFileGarbage`).
pub const TAG_BLOB_FILE_GARBAGE: u32 = 401;
/// Tag: the oldest blob file a new file (tag 7, same edit) references: varint64 file number,
/// varint64 blob file number (RocksDB keeps it as `kOldestBlobFileNumber` inside `kNewFile4`;
/// Talus's tag 7 has no custom fields, so it is a field of its own; manifest version 3).
pub const TAG_OLDEST_BLOB_FILE: u32 = 402;

/// A blob file added to the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileAddition {
    /// The blob file's number (`NNNNNN.blob`).
    pub number: u64,
    /// Records in it.
    pub blob_count: u64,
    /// Bytes of its records (headers, keys, stored values).
    pub blob_bytes: u64,
    /// Masked crc32c of the whole file.
    pub checksum: u32,
    /// The file's size in bytes.
    pub file_size: u64,
}

/// Records of a blob file that became garbage (no SST references them any more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileGarbage {
    /// The blob file's number.
    pub number: u64,
    /// Records that became garbage.
    pub garbage_count: u64,
    /// Their bytes.
    pub garbage_bytes: u64,
}

/// A live blob file in a version: its addition and the garbage counted so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileMeta {
    /// What the file holds.
    pub addition: BlobFileAddition,
    /// Records no SST references.
    pub garbage_count: u64,
    /// Their bytes.
    pub garbage_bytes: u64,
}

impl BlobFileMeta {
    /// True when every record is garbage: the file can be dropped.
    pub fn all_garbage(&self) -> bool {
        self.garbage_count >= self.addition.blob_count
            && self.garbage_bytes >= self.addition.blob_bytes
    }
}

impl BlobFileAddition {
    /// Appends the tagged record.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        put_varint32(dst, TAG_BLOB_FILE_ADDITION);
        put_varint64(dst, self.number);
        put_varint64(dst, self.blob_count);
        put_varint64(dst, self.blob_bytes);
        put_varint64(dst, self.file_size);
        dst.extend_from_slice(&self.checksum.to_le_bytes());
    }

    /// Decodes the fields after the tag.
    pub fn decode(d: &mut Decoder<'_>) -> Option<BlobFileAddition> {
        Some(BlobFileAddition {
            number: d.varint64()?,
            blob_count: d.varint64()?,
            blob_bytes: d.varint64()?,
            file_size: d.varint64()?,
            checksum: d.fixed32()?,
        })
    }
}

impl BlobFileGarbage {
    /// Appends the tagged record.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        put_varint32(dst, TAG_BLOB_FILE_GARBAGE);
        put_varint64(dst, self.number);
        put_varint64(dst, self.garbage_count);
        put_varint64(dst, self.garbage_bytes);
    }

    /// Decodes the fields after the tag.
    pub fn decode(d: &mut Decoder<'_>) -> Option<BlobFileGarbage> {
        Some(BlobFileGarbage {
            number: d.varint64()?,
            garbage_count: d.varint64()?,
            garbage_bytes: d.varint64()?,
        })
    }
}
