//! The blob file format (`docs/format/blob.md`, version 1) and the blob index an SST stores in
//! place of a separated value. Pure encoding and decoding; no IO.
//!
//! A blob file is a header, records, and a footer:
//! - header (16 bytes): magic `fixed32`, format version `fixed32`, compression `u8`, 3 zero
//!   bytes, masked crc32c of the 12 bytes before it;
//! - record: key length `fixed32`, stored value length `fixed32`, masked crc32c of key ++ stored
//!   value, masked crc32c of the 12 bytes before it (a 16-byte record header), then the key,
//!   then the stored (maybe compressed) value;
//! - footer (24 bytes): record count `fixed64`, record bytes `fixed64` (headers, keys and
//!   stored values: RocksDB's `total_blob_bytes`), magic `fixed32`, masked crc32c of the 20
//!   bytes before it.
//!
//! A blob index (the value of a `BlobIndex` entry) is: type `u8` (1), file number `varint64`,
//! offset of the stored value `varint64`, stored size `varint64`, compression `u8`. Decoding
//! never trusts its input: a bad byte is an error string the caller wraps in `Corruption`.

use crate::coding::{decode_fixed32, decode_fixed64, mask_crc, put_varint64, Decoder};
use crate::options::CompressionType;

/// First four bytes of a blob file (and the footer's magic): "TBLB" read as little-endian.
pub const BLOB_MAGIC: u32 = u32::from_le_bytes(*b"TBLB");
/// The format version this code writes and reads.
pub const BLOB_FORMAT_VERSION: u32 = 1;
/// Bytes of the file header.
pub const HEADER_LEN: usize = 16;
/// Bytes of a record's header (before its key).
pub const RECORD_HEADER_LEN: usize = 16;
/// Bytes of the file footer.
pub const FOOTER_LEN: usize = 24;
/// The type byte of a blob index that points into a blob file.
pub const BLOB_INDEX_TYPE_BLOB: u8 = 1;

fn masked_crc(data: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c(data))
}

/// The header of a blob file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHeader {
    /// The compression the writer was configured with (each record's index says its own).
    pub compression: CompressionType,
}

impl BlobHeader {
    /// The 16 header bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&BLOB_FORMAT_VERSION.to_le_bytes());
        b[8] = self.compression as u8;
        let crc = masked_crc(&b[0..12]);
        b[12..16].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks a header.
    pub fn decode(b: &[u8]) -> Result<BlobHeader, String> {
        let field = |at: usize| b.get(at..at + 4).and_then(decode_fixed32);
        let (Some(magic), Some(version), Some(crc)) = (field(0), field(4), field(12)) else {
            return Err(format!("blob file header truncated ({} bytes)", b.len()));
        };
        if magic != BLOB_MAGIC {
            return Err(format!("bad blob file magic {magic:#010x}"));
        }
        if crc != masked_crc(&b[0..12]) {
            return Err("blob file header checksum mismatch".into());
        }
        if version != BLOB_FORMAT_VERSION {
            return Err(format!("unsupported blob format version {version}"));
        }
        let compression = CompressionType::from_u8(b[8])
            .ok_or_else(|| format!("unknown compression type {} in blob header", b[8]))?;
        Ok(BlobHeader { compression })
    }
}

/// Appends a record for `key` with the stored value bytes `value` to `dst`; returns the offset
/// of the value within the appended bytes.
pub fn encode_record(dst: &mut Vec<u8>, key: &[u8], value: &[u8]) -> usize {
    let (header, _) = encode_record_header(key, value);
    dst.extend_from_slice(&header);
    dst.extend_from_slice(key);
    dst.extend_from_slice(value);
    RECORD_HEADER_LEN + key.len()
}

/// The header of the record for `key` with stored value bytes `value` (the key and the value
/// follow it), and the crc32c (unmasked) of `key ++ value` the header holds masked: the
/// writer's file checksum takes it instead of hashing the record again (`file_crc.rs`).
pub fn encode_record_header(key: &[u8], value: &[u8]) -> ([u8; RECORD_HEADER_LEN], u32) {
    let mut h = [0u8; RECORD_HEADER_LEN];
    h[0..4].copy_from_slice(&(key.len() as u32).to_le_bytes());
    h[4..8].copy_from_slice(&(value.len() as u32).to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(key), value);
    h[8..12].copy_from_slice(&mask_crc(crc).to_le_bytes());
    let hcrc = masked_crc(&h[0..12]);
    h[12..16].copy_from_slice(&hcrc.to_le_bytes());
    (h, crc)
}

/// A record's decoded header: the lengths of the key and stored value after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Bytes of the key.
    pub key_len: u32,
    /// Bytes of the stored (maybe compressed) value.
    pub value_len: u32,
    /// Masked crc32c of key ++ stored value.
    crc: u32,
}

impl RecordHeader {
    /// Decodes a record's first [`RECORD_HEADER_LEN`] bytes, checking their checksum.
    pub fn decode(h: &[u8]) -> Result<RecordHeader, String> {
        let (Some(key_len), Some(value_len), Some(crc), Some(hcrc)) = (
            h.get(0..4).and_then(decode_fixed32),
            h.get(4..8).and_then(decode_fixed32),
            h.get(8..12).and_then(decode_fixed32),
            h.get(12..16).and_then(decode_fixed32),
        ) else {
            return Err("blob record truncated".into());
        };
        if hcrc != masked_crc(&h[0..12]) {
            return Err("blob record header checksum mismatch".into());
        }
        Ok(RecordHeader { key_len, value_len, crc })
    }

    /// Bytes of the key and stored value after the header.
    pub fn body_len(&self) -> u64 {
        u64::from(self.key_len) + u64::from(self.value_len)
    }

    /// Checks `body` (key ++ stored value, [`RecordHeader::body_len`] bytes) against the
    /// header; returns the key and the stored value.
    pub fn check_body<'a>(&self, body: &'a [u8]) -> Result<(&'a [u8], &'a [u8]), String> {
        if body.len() as u64 != self.body_len() {
            return Err("blob record truncated".into());
        }
        if crc32c::crc32c(body) != crate::coding::unmask_crc(self.crc) {
            return Err("blob record checksum mismatch".into());
        }
        Ok(body.split_at(self.key_len as usize))
    }
}

/// Checks a whole record (`rec`: header, key, stored value) read for `key` with stored size
/// `size`; returns the stored value.
pub fn check_record<'a>(rec: &'a [u8], key: &[u8], size: u64) -> Result<&'a [u8], String> {
    let h = RecordHeader::decode(rec)?;
    if h.key_len as usize != key.len() || u64::from(h.value_len) != size {
        return Err(format!(
            "blob record holds a {}-byte key and a {}-byte value, the index expects {} and \
             {size}",
            h.key_len,
            h.value_len,
            key.len()
        ));
    }
    let body = rec.get(RECORD_HEADER_LEN..).ok_or("blob record truncated")?;
    let (stored_key, value) = h.check_body(body)?;
    if stored_key != key {
        return Err("blob record belongs to another key".into());
    }
    Ok(value)
}

/// Checks a record read in two parts for `key`: `head` (the header and key) and `stored` (the
/// stored value the index's size names). The same checks as [`check_record`].
pub fn check_record_parts(head: &[u8], stored: &[u8], key: &[u8]) -> Result<(), String> {
    let h = RecordHeader::decode(head)?;
    if h.key_len as usize != key.len() || h.value_len as usize != stored.len() {
        return Err(format!(
            "blob record holds a {}-byte key and a {}-byte value, the index expects {} and {}",
            h.key_len,
            h.value_len,
            key.len(),
            stored.len()
        ));
    }
    let stored_key = head.get(RECORD_HEADER_LEN..).ok_or("blob record truncated")?;
    if stored_key.len() != key.len() {
        return Err("blob record truncated".into());
    }
    if crc32c::crc32c_append(crc32c::crc32c(stored_key), stored) != crate::coding::unmask_crc(h.crc)
    {
        return Err("blob record checksum mismatch".into());
    }
    if stored_key != key {
        return Err("blob record belongs to another key".into());
    }
    Ok(())
}

/// The footer of a blob file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobFooter {
    /// Records in the file.
    pub blob_count: u64,
    /// Sum of the records' lengths (header, key and stored value each).
    pub blob_bytes: u64,
}

impl BlobFooter {
    /// The 24 footer bytes.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut b = [0u8; FOOTER_LEN];
        b[0..8].copy_from_slice(&self.blob_count.to_le_bytes());
        b[8..16].copy_from_slice(&self.blob_bytes.to_le_bytes());
        b[16..20].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
        let crc = masked_crc(&b[0..20]);
        b[20..24].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks a footer.
    pub fn decode(b: &[u8]) -> Result<BlobFooter, String> {
        if b.len() != FOOTER_LEN {
            return Err(format!("blob file footer truncated ({} bytes)", b.len()));
        }
        let (Some(count), Some(bytes), Some(magic), Some(crc)) = (
            decode_fixed64(&b[0..8]),
            decode_fixed64(&b[8..16]),
            decode_fixed32(&b[16..20]),
            decode_fixed32(&b[20..24]),
        ) else {
            return Err("blob file footer truncated".into());
        };
        if magic != BLOB_MAGIC {
            return Err(format!("bad blob footer magic {magic:#010x}"));
        }
        if crc != masked_crc(&b[0..20]) {
            return Err("blob file footer checksum mismatch".into());
        }
        Ok(BlobFooter { blob_count: count, blob_bytes: bytes })
    }
}

/// Where a separated value lives: the value of a `BlobIndex` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobIndex {
    /// The blob file's number.
    pub file_number: u64,
    /// Offset of the stored value in the file.
    pub offset: u64,
    /// Stored (maybe compressed) length of the value.
    pub size: u64,
    /// How the stored value is compressed.
    pub compression: CompressionType,
}

/// Lowers `oldest` (0: none yet) to the blob file `value` points into when `ikey` is a blob
/// index entry (RocksDB's `FileMetaData::UpdateBoundaries` keeps `oldest_blob_file_number` so).
/// Called for every entry a flush or compaction writes to a table: one byte compared for the
/// others. An undecodable index changes nothing (its reader reports it).
#[inline]
pub fn note_oldest_blob_file(oldest: &mut u64, ikey: &[u8], value: &[u8]) {
    if (crate::key::trailer(ikey) & 0xff) as u8 != crate::key::ValueKind::BlobIndex as u8 {
        return;
    }
    let mut d = Decoder::new(value);
    if d.u8() != Some(BLOB_INDEX_TYPE_BLOB) {
        return;
    }
    if let Some(n) = d.varint64() {
        if *oldest == 0 || n < *oldest {
            *oldest = n;
        }
    }
}

impl BlobIndex {
    /// Appends the encoded index to `dst`.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        dst.push(BLOB_INDEX_TYPE_BLOB);
        put_varint64(dst, self.file_number);
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
        dst.push(self.compression as u8);
    }

    /// Decodes an index; the whole slice must be used.
    pub fn decode(src: &[u8]) -> Result<BlobIndex, String> {
        let mut d = Decoder::new(src);
        let bad = || format!("undecodable blob index of {} bytes", src.len());
        let ty = d.u8().ok_or_else(bad)?;
        if ty != BLOB_INDEX_TYPE_BLOB {
            return Err(format!("unknown blob index type {ty}"));
        }
        let file_number = d.varint64().ok_or_else(bad)?;
        let offset = d.varint64().ok_or_else(bad)?;
        let size = d.varint64().ok_or_else(bad)?;
        let c = d.u8().ok_or_else(bad)?;
        let compression =
            CompressionType::from_u8(c).ok_or_else(|| format!("unknown compression type {c}"))?;
        if !d.is_empty() {
            return Err(bad());
        }
        Ok(BlobIndex { file_number, offset, size, compression })
    }
}

#[cfg(test)]
mod tests;
