//! Decides which values of a flush or compaction output go to blob files, and writes them.
//!
//! [`BlobSeparator::separate`] takes each output entry: a `Put` whose value is at least
//! `min_blob_size` bytes is appended to the current blob file and becomes a `BlobIndex` entry
//! (same user key and sequence) with the encoded index as its value; anything else passes
//! through. A blob file is finished when it reaches `blob_file_size`; [`BlobSeparator::finish`]
//! finishes the last one and returns every file's MANIFEST record. Who calls: `db/flush.rs`
//! (and `db/blob_outputs.rs` for file numbers). Owned by one job; no locks.

use std::path::Path;

use super::format::{BlobIndex, FOOTER_LEN, HEADER_LEN};
use super::writer::BlobFileWriter;
use crate::error::Result;
use crate::filename::blob_path;
use crate::fs::Fs;
use crate::key::{append_internal_key, parse_internal_key, ValueKind};
use crate::options::CompressionType;
use crate::version::blob_meta::BlobFileAddition;

/// Where a job's output entries go: `(internal key, value)` into the table being written.
pub type AddEntry<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// What decides the separation (from `Options`).
#[derive(Debug, Clone, Copy)]
pub struct SeparationPolicy {
    /// Values at least this long are separated.
    pub min_blob_size: u64,
    /// A blob file is finished once it is at least this large.
    pub blob_file_size: u64,
    /// How blob records are compressed.
    pub compression: CompressionType,
    /// The compression level.
    pub compression_level: i32,
    /// Blob files are written with `O_DIRECT` (`use_direct_io_for_flush_and_compaction`, as
    /// the SSTs of the same jobs).
    pub direct_write: bool,
}

impl SeparationPolicy {
    /// The separation a job writing at `level` applies under `o`, or `None` when values stay
    /// inline (blob files off, or a compaction into a level above `blob_file_starting_level`).
    pub fn for_level(o: &crate::options::Options, level: usize) -> Option<SeparationPolicy> {
        (o.enable_blob_files && level >= o.blob_file_starting_level).then_some(SeparationPolicy {
            min_blob_size: o.min_blob_size,
            blob_file_size: o.blob_file_size,
            compression: o.blob_compression_type,
            compression_level: o.compression_level,
            direct_write: o.use_direct_io_for_flush_and_compaction,
        })
    }
}

/// Writes the separated values of one job.
pub struct BlobSeparator<'a> {
    fs: &'a dyn Fs,
    dir: &'a Path,
    policy: SeparationPolicy,
    current: Option<BlobFileWriter>,
    finished: Vec<BlobFileAddition>,
    /// Numbers of every file created (for [`Self::abandon`]).
    created: Vec<u64>,
    out_key: Vec<u8>,
    out_value: Vec<u8>,
    bytes_written: u64,
}

impl<'a> BlobSeparator<'a> {
    /// A separator writing blob files into `dir`.
    pub fn new(fs: &'a dyn Fs, dir: &'a Path, policy: SeparationPolicy) -> BlobSeparator<'a> {
        BlobSeparator {
            fs,
            dir,
            policy,
            current: None,
            finished: Vec::new(),
            created: Vec::new(),
            out_key: Vec::new(),
            out_value: Vec::new(),
            bytes_written: 0,
        }
    }

    /// Separates `value` of internal key `ikey` if the policy says so: then true, and
    /// [`Self::key`]/[`Self::value`] hold the `BlobIndex` entry to write instead. `new_number`
    /// gives a new blob file's number (registered so that no deletion takes the file).
    pub fn separate(
        &mut self,
        ikey: &[u8],
        value: &[u8],
        new_number: &mut dyn FnMut() -> u64,
    ) -> Result<bool> {
        if (value.len() as u64) < self.policy.min_blob_size {
            return Ok(false);
        }
        let Some(p) = parse_internal_key(ikey) else { return Ok(false) };
        if p.kind != ValueKind::Put {
            return Ok(false);
        }
        let writer = match &mut self.current {
            Some(w) => w,
            None => {
                let number = new_number();
                let path = blob_path(self.dir, number);
                self.created.push(number);
                let file = crate::fs::direct::create(self.fs, &path, self.policy.direct_write)?;
                // The whole file counts (as RocksDB's blob tickers and `Wblob` count it): its
                // header now, and its footer, which `finish` always writes.
                self.bytes_written += (HEADER_LEN + FOOTER_LEN) as u64;
                self.current.insert(BlobFileWriter::new(
                    file,
                    number,
                    self.policy.compression,
                    self.policy.compression_level,
                )?)
            }
        };
        let before = writer.file_size();
        let index: BlobIndex = writer.add(p.user_key, value)?;
        self.bytes_written += writer.file_size() - before;
        self.out_key.clear();
        append_internal_key(&mut self.out_key, p.user_key, p.seq, ValueKind::BlobIndex);
        self.out_value.clear();
        index.encode(&mut self.out_value);
        if writer.file_size() >= self.policy.blob_file_size {
            self.finish_current()?;
        }
        Ok(true)
    }

    /// The internal key of the last separated entry.
    pub fn key(&self) -> &[u8] {
        &self.out_key
    }

    /// The encoded blob index of the last separated entry.
    pub fn value(&self) -> &[u8] {
        &self.out_value
    }

    /// Bytes of the blob files written so far (headers, records, and the footers of the
    /// files once finished).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(w) = self.current.take() {
            self.finished.push(w.finish()?);
        }
        Ok(())
    }

    /// Finishes the open blob file; returns the records of every file written.
    pub fn finish(mut self) -> Result<Vec<BlobFileAddition>> {
        self.finish_current()?;
        Ok(self.finished)
    }

    /// Gives up the job's blob files (it failed or the database is closing): closes the open
    /// one and removes every file created, so a failed job leaves none behind (as its SSTs).
    pub fn abandon(mut self) {
        drop(self.current.take());
        for &n in &self.created {
            let _ = self.fs.remove_file(&blob_path(self.dir, n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;

    #[test]
    fn separation_starts_at_the_configured_level() {
        let o = Options {
            enable_blob_files: true,
            blob_file_starting_level: 2,
            min_blob_size: 10,
            ..Default::default()
        };
        assert!(SeparationPolicy::for_level(&o, 1).is_none());
        assert_eq!(SeparationPolicy::for_level(&o, 2).map(|p| p.min_blob_size), Some(10));
        assert!(SeparationPolicy::for_level(&Options::default(), 5).is_none());
    }

    #[test]
    fn an_abandoned_separator_removes_every_file_it_created() {
        use crate::fs::fault::SimFs;
        use crate::key::InternalKey;
        let fs = SimFs::new();
        let dir = std::path::Path::new("/");
        // Files of about one value each: the first is finished, the second open.
        let o = Options {
            enable_blob_files: true,
            min_blob_size: 10,
            blob_file_size: 100,
            ..Default::default()
        };
        let mut sep =
            BlobSeparator::new(fs.as_ref(), dir, SeparationPolicy::for_level(&o, 0).unwrap());
        let mut next = 7u64;
        for (i, k) in [b"a", b"b"].iter().enumerate() {
            let ikey = InternalKey::new(*k, i as u64 + 1, ValueKind::Put);
            assert!(sep
                .separate(ikey.encoded(), &[1u8; 200], &mut || {
                    next += 1;
                    next
                })
                .unwrap());
        }
        assert!(fs.contents("/000008.blob").is_some() && fs.contents("/000009.blob").is_some());
        sep.abandon();
        assert_eq!(fs.files(), Vec::<std::path::PathBuf>::new());
    }

    #[test]
    fn direct_io_options_reach_the_blob_files() {
        use crate::fs::fault::SimFs;
        use crate::key::InternalKey;
        let fs = SimFs::new();
        let dir = std::path::Path::new("/");
        let o = |direct| Options {
            enable_blob_files: true,
            min_blob_size: 10,
            use_direct_io_for_flush_and_compaction: direct,
            ..Default::default()
        };
        let ikey = InternalKey::new(b"k", 1, ValueKind::Put);
        let value = [7u8; 1001];
        let write = |direct: bool, number: u64| -> Result<Vec<BlobFileAddition>> {
            let policy = SeparationPolicy::for_level(&o(direct), 0).unwrap();
            let mut sep = BlobSeparator::new(fs.as_ref(), dir, policy);
            assert!(sep.separate(ikey.encoded(), &value, &mut || number)?);
            sep.finish()
        };
        // Direct writes through the simulated file system's alignment checks: the file has
        // exactly its real length, and reads back with direct reads.
        let added = write(true, 5).unwrap();
        assert_eq!(fs.contents("/000005.blob").map(|c| c.len() as u64), Some(added[0].file_size));
        let r = super::super::reader::BlobFileReader::open(fs.as_ref(), dir, 5, true).unwrap();
        assert_eq!(r.footer().blob_count, 1);
        // Without direct IO in the file system, only the direct paths fail.
        fs.set_direct_io_supported(false);
        assert!(write(true, 6).is_err());
        assert!(super::super::reader::BlobFileReader::open(fs.as_ref(), dir, 5, true).is_err());
        write(false, 7).unwrap();
        super::super::reader::BlobFileReader::open(fs.as_ref(), dir, 7, false).unwrap();
    }
}
