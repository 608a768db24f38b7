//! Reads values out of blob files: [`BlobFileReader`] (one open file, header and footer checked
//! at open) and [`BlobSource`] (the database's open blob files by number, opened on first use).
//!
//! Who calls: the read path (`db/read.rs`, `iter/db_iter.rs` through [`BlobSource::get`]) and
//! compactions that rewrite blobs. Locks: `BlobSource` holds its map's mutex only to look up or
//! insert a reader, never across IO. Every failure (a missing or truncated file, an index past
//! the end, a checksum mismatch) is `Error::Corruption` naming the file and offset.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;

use super::format::RECORD_HEADER_LEN;
use super::format::{
    check_record_parts, BlobFooter, BlobHeader, BlobIndex, FOOTER_LEN, HEADER_LEN,
};
use crate::error::{Error, Result};
use crate::filename::{blob_name, blob_path};
use crate::fs::{Fs, RandomAccessFile};
use crate::options::CompressionType;

/// One open blob file.
pub struct BlobFileReader {
    file: Arc<dyn RandomAccessFile>,
    name: String,
    size: u64,
    footer: BlobFooter,
}

impl BlobFileReader {
    /// Opens blob file `number` in `dir` (with `O_DIRECT` if `direct`: RocksDB's
    /// `use_direct_reads` applies to blob files too), checking its header and footer.
    pub fn open(fs: &dyn Fs, dir: &Path, number: u64, direct: bool) -> Result<BlobFileReader> {
        let name = blob_name(number);
        let path = blob_path(dir, number);
        if !fs.exists(&path) {
            return Err(Error::corruption(&name, 0, "blob file is missing"));
        }
        let file = crate::fs::direct::open_random(fs, &path, direct)?;
        let size = file.size();
        if size < (HEADER_LEN + FOOTER_LEN) as u64 {
            return Err(Error::corruption(
                &name,
                0,
                format!("blob file truncated to {size} bytes"),
            ));
        }
        let header = file.read_vec_at(0, HEADER_LEN)?;
        BlobHeader::decode(&header).map_err(|e| Error::corruption(&name, 0, e))?;
        let at = size - FOOTER_LEN as u64;
        let footer = file.read_vec_at(at, FOOTER_LEN)?;
        let footer = BlobFooter::decode(&footer).map_err(|e| Error::corruption(&name, at, e))?;
        Ok(BlobFileReader { file, name, size, footer })
    }

    /// The file's footer.
    pub fn footer(&self) -> BlobFooter {
        self.footer
    }

    /// The value of `key` that `index` points to, checked and decompressed.
    pub fn get(&self, key: &[u8], index: &BlobIndex) -> Result<Vec<u8>> {
        let corrupt = |at: u64, what: String| Error::corruption(&self.name, at, what);
        let back = (RECORD_HEADER_LEN + key.len()) as u64;
        let end = index.offset.checked_add(index.size);
        let data_end = self.size - FOOTER_LEN as u64;
        if index.offset < HEADER_LEN as u64 + back || end.is_none_or(|e| e > data_end) {
            return Err(corrupt(
                index.offset,
                format!(
                    "blob index (offset {}, size {}) is outside the file's records (it holds \
                     {} bytes)",
                    index.offset, index.size, self.size
                ),
            ));
        }
        let start = index.offset - back;
        let size = usize::try_from(index.size)
            .map_err(|_| corrupt(start, "blob record too large".into()))?;
        // One read of exactly the record: its header and key into a small buffer, the stored
        // value into the buffer that is returned (uncompressed: no copy after the read).
        let mut head = [0u8; RECORD_HEADER_LEN + 64];
        let mut long_head = Vec::new();
        let head: &mut [u8] = match head.get_mut(..back as usize) {
            Some(h) => h,
            None => {
                long_head.resize(back as usize, 0);
                &mut long_head
            }
        };
        let stored = self.file.read_split_at(start, head, size)?;
        crate::perf::file_read(back + index.size);
        check_record_parts(head, &stored, key).map_err(|e| corrupt(start, e))?;
        match index.compression {
            CompressionType::None => Ok(stored),
            c => crate::sst::compression::decompress(c, &stored)
                .map_err(|e| corrupt(index.offset, format!("blob value: {e}"))),
        }
    }
}

/// The database's blob files, opened on first use and kept open.
pub struct BlobSource {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    /// Files are read with `O_DIRECT` (`use_direct_reads`).
    direct_reads: bool,
    open: Mutex<HashMap<u64, Arc<BlobFileReader>>>,
    /// RocksDB's blob tickers for this database.
    pub stats: BlobStats,
    /// The blob cache (`Options::blob_cache`) and its tickers.
    pub cache: super::cache::BlobCache,
}

/// RocksDB's blob tickers (`rocksdb.blobdb.*`), counted per database.
#[derive(Debug, Default)]
pub struct BlobStats {
    /// Bytes appended to blob files (flushes and compactions).
    pub bytes_written: AtomicU64,
    /// Bytes read from blob files (reads and garbage collection).
    pub bytes_read: AtomicU64,
    /// Values garbage collection relocated.
    pub gc_keys_relocated: AtomicU64,
    /// Their bytes.
    pub gc_bytes_relocated: AtomicU64,
}

impl BlobStats {
    /// The tickers by RocksDB's names.
    pub fn tickers(&self) -> [(&'static str, u64); 4] {
        let g = |a: &AtomicU64| a.load(Relaxed);
        [
            ("rocksdb.blobdb.blob.file.bytes.written", g(&self.bytes_written)),
            ("rocksdb.blobdb.blob.file.bytes.read", g(&self.bytes_read)),
            ("rocksdb.blobdb.gc.num.keys.relocated", g(&self.gc_keys_relocated)),
            ("rocksdb.blobdb.gc.bytes.relocated", g(&self.gc_bytes_relocated)),
        ]
    }
}

impl BlobSource {
    /// Blob files of the database in `dir`, read through `cache` when it is set, with
    /// `O_DIRECT` when `direct_reads`.
    pub fn new(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        cache: Option<super::cache::BlobCacheRef>,
        direct_reads: bool,
    ) -> BlobSource {
        BlobSource {
            fs,
            dir,
            direct_reads,
            open: Mutex::new(HashMap::new()),
            stats: BlobStats::default(),
            cache: super::cache::BlobCache::new(cache),
        }
    }

    /// The reader of blob file `number`, opening it if needed.
    pub fn reader(&self, number: u64) -> Result<Arc<BlobFileReader>> {
        if let Some(r) = self.open.lock().get(&number) {
            return Ok(Arc::clone(r));
        }
        let r =
            Arc::new(BlobFileReader::open(self.fs.as_ref(), &self.dir, number, self.direct_reads)?);
        self.open.lock().insert(number, Arc::clone(&r));
        Ok(r)
    }

    /// The value a `BlobIndex` entry of user key `key` holds (`encoded` is the entry's value).
    pub fn get(&self, key: &[u8], encoded: &[u8]) -> Result<Vec<u8>> {
        let index = BlobIndex::decode(encoded).map_err(|e| {
            Error::corruption("<blob index>", 0, format!("{e} (key of {} bytes)", key.len()))
        })?;
        self.read(key, &index)
    }

    /// The value of `key` that `index` points to: from the blob cache when it holds it, else
    /// read from the file (and inserted into the cache).
    pub fn read(&self, key: &[u8], index: &BlobIndex) -> Result<Vec<u8>> {
        self.read_filling(key, index, true)
    }

    /// As [`BlobSource::read`], inserting into the blob cache only when `fill_cache` (a
    /// compaction's reads do not fill it, as RocksDB's do not).
    pub fn read_filling(&self, key: &[u8], index: &BlobIndex, fill_cache: bool) -> Result<Vec<u8>> {
        if let Some(v) = self.cache.lookup(index.file_number, index.offset) {
            return Ok(v);
        }
        let v = self.reader(index.file_number)?.get(key, index)?;
        let record = (super::format::RECORD_HEADER_LEN + key.len()) as u64 + index.size;
        self.stats.bytes_read.fetch_add(record, Relaxed);
        if fill_cache {
            self.cache.insert(index.file_number, index.offset, &v);
        }
        Ok(v)
    }

    /// Forgets blob file `number` (deleted).
    pub fn evict(&self, number: u64) {
        self.open.lock().remove(&number);
    }
}

impl crate::iter::BlobValues for BlobSource {
    fn blob_value(&self, key: &[u8], index: &[u8]) -> Result<Vec<u8>> {
        self.get(key, index)
    }
}
