//! Writes one blob file (`format.rs`): the header at creation, a record per value, the footer
//! at `finish`, which syncs the file and returns what the MANIFEST records of it.
//!
//! Who calls: `separate.rs` (flush and compaction outputs). Owned by one job; no locks. On an
//! error the file is left for the caller to delete (its number is a pending output until then).

use super::format::{encode_record, BlobFooter, BlobHeader, BlobIndex, HEADER_LEN};
use crate::error::Result;
use crate::fs::WritableFile;
use crate::options::CompressionType;
use crate::sst::compression::BlockCompressor;
use crate::version::blob_meta::BlobFileAddition;

/// A blob file being written.
pub struct BlobFileWriter {
    file: Box<dyn WritableFile>,
    number: u64,
    compression: CompressionType,
    compressor: BlockCompressor,
    /// Bytes appended so far (the next record's offset).
    offset: u64,
    count: u64,
    record_bytes: u64,
    /// crc32c of every byte written (the MANIFEST's file checksum).
    crc: u32,
    buf: Vec<u8>,
}

impl BlobFileWriter {
    /// Starts blob file `number` in `file`, writing its header.
    pub fn new(
        mut file: Box<dyn WritableFile>,
        number: u64,
        compression: CompressionType,
        compression_level: i32,
    ) -> Result<BlobFileWriter> {
        let header = BlobHeader { compression }.encode();
        file.append(&header)?;
        Ok(BlobFileWriter {
            file,
            number,
            compression,
            compressor: BlockCompressor::new(compression_level),
            offset: HEADER_LEN as u64,
            count: 0,
            record_bytes: 0,
            crc: crc32c::crc32c(&header),
            buf: Vec::new(),
        })
    }

    /// The file's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written so far.
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Appends `value` of user key `key`; returns the index that finds it.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<BlobIndex> {
        let (stored, compression) = match self.compressor.compress(self.compression, value) {
            Some(c) if self.compression != CompressionType::None => (c, self.compression),
            _ => (value, CompressionType::None),
        };
        self.buf.clear();
        let value_at = encode_record(&mut self.buf, key, stored);
        let index = BlobIndex {
            file_number: self.number,
            offset: self.offset + value_at as u64,
            size: stored.len() as u64,
            compression,
        };
        self.file.append(&self.buf)?;
        self.crc = crc32c::crc32c_append(self.crc, &self.buf);
        self.offset += self.buf.len() as u64;
        self.record_bytes += self.buf.len() as u64;
        self.count += 1;
        Ok(index)
    }

    /// Writes the footer and syncs; returns the file's MANIFEST record.
    pub fn finish(mut self) -> Result<BlobFileAddition> {
        let footer = BlobFooter { blob_count: self.count, blob_bytes: self.record_bytes }.encode();
        self.file.append(&footer)?;
        self.crc = crc32c::crc32c_append(self.crc, &footer);
        self.file.flush()?;
        self.file.sync()?;
        Ok(BlobFileAddition {
            number: self.number,
            blob_count: self.count,
            blob_bytes: self.record_bytes,
            checksum: crate::coding::mask_crc(self.crc),
            file_size: self.offset + footer.len() as u64,
        })
    }
}
