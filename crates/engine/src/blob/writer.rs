//! Writes one blob file (`format.rs`): the header at creation, a record per value, the footer
//! at `finish`, which syncs the file and returns what the MANIFEST records of it.
//!
//! Each value is hashed once (the record's crc32c of key and stored value) and copied once into
//! the file's buffer: the record's 16-byte header, the key and the value go to the file as three
//! parts (no record assembled first), and the whole-file crc32c the MANIFEST records is combined
//! from the records' crcs (`file_crc.rs`) rather than hashed over the bytes again.
//!
//! Writeback: every [`WRITEBACK_BYTES`] appended, the writer asks the kernel to start writing
//! the file's dirty pages to the device ([`WritableFile::start_writeback`], Linux
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)`; nothing for direct writes, which have no dirty
//! pages). A flush's blob file is most of its bytes, and `finish` syncs it: without this the
//! device started on a 16 MiB file only at that sync, and the flush waited for all of it after
//! its CPU work, where now the device writes while the flush copies, and the sync waits for the
//! last MiB or so. No durability promise rests on it (the sync in `finish` is the one).
//!
//! Who calls: `separate.rs` (flush and compaction outputs). Owned by one job; no locks. On an
//! error the file is left for the caller to delete (its number is a pending output until then).

use super::file_crc::FileCrc;
use super::format::{encode_record_header, BlobFooter, BlobHeader, BlobIndex, HEADER_LEN};
use crate::error::Result;
use crate::fs::WritableFile;
use crate::options::CompressionType;
use crate::sst::compression::BlockCompressor;
use crate::version::blob_meta::BlobFileAddition;

/// Bytes appended between two writeback starts (RocksDB's advice for `bytes_per_sync`).
pub const WRITEBACK_BYTES: u64 = 1 << 20;

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
    crc: FileCrc,
    /// `offset` at the last writeback start.
    written_back: u64,
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
            crc: FileCrc::new(&header),
            written_back: 0,
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
        let (header, body_crc) = encode_record_header(key, stored);
        let value_at = (header.len() + key.len()) as u64;
        let index = BlobIndex {
            file_number: self.number,
            offset: self.offset + value_at,
            size: stored.len() as u64,
            compression,
        };
        self.file.append_parts(&[&header, key, stored])?;
        self.crc.append(&header);
        let body_len = (key.len() + stored.len()) as u64;
        self.crc.append_crc(body_crc, body_len);
        let len = header.len() as u64 + body_len;
        self.offset += len;
        self.record_bytes += len;
        self.count += 1;
        if self.offset - self.written_back >= WRITEBACK_BYTES {
            self.file.start_writeback()?;
            self.written_back = self.offset;
        }
        Ok(index)
    }

    /// Writes the footer and syncs; returns the file's MANIFEST record.
    pub fn finish(mut self) -> Result<BlobFileAddition> {
        let footer = BlobFooter { blob_count: self.count, blob_bytes: self.record_bytes }.encode();
        self.file.append(&footer)?;
        self.crc.append(&footer);
        self.file.flush()?;
        self.file.sync()?;
        Ok(BlobFileAddition {
            number: self.number,
            blob_count: self.count,
            blob_bytes: self.record_bytes,
            checksum: crate::coding::mask_crc(self.crc.value()),
            file_size: self.offset + footer.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::format::FOOTER_LEN;
    use std::sync::{Arc, Mutex};

    /// A file that keeps its bytes and counts writeback starts.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<(Vec<u8>, Vec<u64>)>>);

    impl WritableFile for Recorder {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            self.0.lock().unwrap().0.extend_from_slice(data);
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn size(&self) -> u64 {
            self.0.lock().unwrap().0.len() as u64
        }
        fn start_writeback(&mut self) -> Result<()> {
            let mut g = self.0.lock().unwrap();
            let at = g.0.len() as u64;
            g.1.push(at);
            Ok(())
        }
    }

    #[test]
    fn the_file_checksum_is_the_crc_of_every_byte_and_writeback_starts_every_mib() {
        let rec = Recorder::default();
        let mut w =
            BlobFileWriter::new(Box::new(rec.clone()), 9, CompressionType::None, 0).unwrap();
        // Values of several sizes (the combined crc's cached power changes), 3 MiB in all.
        let mut total = 0u64;
        let mut i = 0u32;
        while total < 3 << 20 {
            let len = [4096usize, 4096, 1000, 16_384, 33][i as usize % 5];
            let value: Vec<u8> = (0..len as u32).map(|j| (j ^ i).wrapping_mul(31) as u8).collect();
            let key = format!("key{i:06}");
            let index = w.add(key.as_bytes(), &value).unwrap();
            let bytes = rec.0.lock().unwrap().0.clone();
            let at = index.offset as usize;
            assert_eq!(&bytes[at..at + len], &value[..]);
            total += value.len() as u64;
            i += 1;
        }
        let added = w.finish().unwrap();
        let (bytes, starts) = rec.0.lock().unwrap().clone();
        assert_eq!(added.file_size, bytes.len() as u64);
        assert_eq!(added.checksum, crate::coding::mask_crc(crc32c::crc32c(&bytes)));
        // A start once a MiB is appended after the one before (within a record's length),
        // and less than a MiB left unstarted at the end.
        assert!(starts.len() >= 2, "{starts:?}");
        let mut last = 0;
        for &s in &starts {
            assert!(s - last >= WRITEBACK_BYTES && s - last < WRITEBACK_BYTES + 20_000, "{s}");
            last = s;
        }
        assert!((bytes.len() as u64) - last < WRITEBACK_BYTES + FOOTER_LEN as u64);
    }
}
