//! Blob files in compactions: the garbage a compaction makes in blob files (RocksDB's
//! `BlobGarbageMeter`: per blob file, the blob indexes read from the inputs minus those
//! written to the outputs), and the relocation of live values out of the oldest blob files
//! (RocksDB's garbage collection: `enable_blob_garbage_collection`, with the files below the
//! `blob_garbage_collection_age_cutoff` fraction, oldest first, relocated).
//!
//! Who calls: `compaction::job` (one [`BlobCompaction`] per job, the input wrapped in a
//! [`BlobInflow`]). The inflow counter is shared by the two through a mutex taken once per blob
//! index read. A compaction only moves forward through its input (seek to first, then next),
//! so each input entry is counted once; a subcompaction's input is bounded before it is
//! wrapped, so entries are counted by the one subcompaction that owns them.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use parking_lot::Mutex;

use super::format::{BlobIndex, RECORD_HEADER_LEN};
use super::reader::BlobSource;
use super::separate::{AddEntry, BlobSeparator};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{append_internal_key, parse_internal_key, ValueKind};
use crate::version::blob_meta::{BlobFileAddition, BlobFileGarbage};

/// The garbage collection cutoff of a compaction (RocksDB's
/// `ComputeBlobGarbageCollectionCutoffFileNumber`): blob indexes into files numbered below the
/// returned number are relocated. `numbers` are the `n` live blob files' numbers, ascending; the
/// oldest `floor(age_cutoff * n)` files are collected (rounded down as RocksDB does: with fewer
/// than `1 / age_cutoff` files none is), all of them (`u64::MAX`) when that is every file; 0
/// (none) when there are no blob files.
pub fn gc_cutoff_file_number(
    mut numbers: impl Iterator<Item = u64>,
    n: usize,
    age_cutoff: f64,
) -> u64 {
    // `as` saturates: a NaN or negative cutoff (refused by the options' check) collects none.
    let index = (age_cutoff * n as f64) as usize;
    if n == 0 {
        return 0; // no blob file is old
    }
    if index >= n {
        return u64::MAX;
    }
    numbers.nth(index).unwrap_or(u64::MAX)
}

/// Records and bytes per blob file number.
type Flow = BTreeMap<u64, (u64, u64)>;

fn count(flow: &mut Flow, user_key_len: usize, index: &BlobIndex) {
    let e = flow.entry(index.file_number).or_default();
    e.0 += 1;
    e.1 += (RECORD_HEADER_LEN + user_key_len) as u64 + index.size;
}

/// Wraps a compaction's input, counting every blob index it is positioned on.
pub struct BlobInflow {
    inner: Box<dyn InternalIterator>,
    flow: Arc<Mutex<Flow>>,
}

impl BlobInflow {
    /// Wraps `inner`; the counts go to `flow`.
    pub fn new(inner: Box<dyn InternalIterator>, flow: Arc<Mutex<Flow>>) -> BlobInflow {
        BlobInflow { inner, flow }
    }

    fn count_current(&mut self) {
        if !self.inner.valid() {
            return;
        }
        let Some(p) = parse_internal_key(self.inner.key()) else { return };
        if p.kind == ValueKind::BlobIndex {
            // An undecodable index is reported when the job maps the entry.
            if let Ok(index) = BlobIndex::decode(self.inner.value()) {
                count(&mut self.flow.lock(), p.user_key.len(), &index);
            }
        }
    }
}

impl InternalIterator for BlobInflow {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.count_current();
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.count_current();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.count_current();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
        self.count_current();
    }
    fn next(&mut self) {
        self.inner.next();
        self.count_current();
    }
    fn prev(&mut self) {
        self.inner.prev();
        self.count_current();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

/// What a compaction does with values and blob indexes on their way to an output.
pub struct BlobCompaction<'a> {
    source: &'a BlobSource,
    /// Separates values at this output level (`None`: values stay inline).
    sep: Option<BlobSeparator<'a>>,
    /// Blob indexes into files numbered below this are relocated (0: no garbage collection).
    gc_cutoff: u64,
    inflow: Arc<Mutex<Flow>>,
    outflow: Flow,
    key: Vec<u8>,
    value: Vec<u8>,
    /// Values read back from old blob files (RocksDB's `BLOB_DB_GC_NUM_KEYS_RELOCATED`).
    pub relocated: u64,
    /// Their bytes.
    pub relocated_bytes: u64,
    /// Bytes of the records read back (record headers, keys and stored values).
    bytes_read: u64,
}

/// What a compaction leaves for the MANIFEST.
#[derive(Debug, Default)]
pub struct BlobJobOutput {
    /// New blob files.
    pub additions: Vec<BlobFileAddition>,
    /// Garbage counted in the inputs' blob files.
    pub garbage: Vec<BlobFileGarbage>,
    /// Bytes written to new blob files.
    pub bytes_written: u64,
    /// Bytes of the records garbage collection read from blob files (the compaction stats'
    /// `Rblob(GB)`).
    pub bytes_read: u64,
    /// Values relocated by garbage collection, and their bytes.
    pub relocated: (u64, u64),
}

impl<'a> BlobCompaction<'a> {
    /// A job reading blobs from `source`, separating with `sep`, relocating blob indexes into
    /// files numbered below `gc_cutoff`; returns it and the input wrapper that feeds its
    /// inflow counts.
    pub fn new(
        source: &'a BlobSource,
        sep: Option<BlobSeparator<'a>>,
        gc_cutoff: u64,
        input: Box<dyn InternalIterator>,
    ) -> (BlobCompaction<'a>, Box<dyn InternalIterator>) {
        let inflow = Arc::new(Mutex::new(Flow::new()));
        let wrapped = Box::new(BlobInflow::new(input, Arc::clone(&inflow)));
        let job = BlobCompaction {
            source,
            sep,
            gc_cutoff,
            inflow,
            outflow: Flow::new(),
            key: Vec::new(),
            value: Vec::new(),
            relocated: 0,
            relocated_bytes: 0,
            bytes_read: 0,
        };
        (job, wrapped)
    }

    /// Writes the output entry `ikey`/`value` through `add`: a put separated if the level
    /// separates it, a blob index kept (counted as still referenced) or, when garbage
    /// collection takes its file, its value read and written again (separated or inline).
    pub fn add(
        &mut self,
        ikey: &[u8],
        value: &[u8],
        new_number: &mut dyn FnMut() -> u64,
        add: &mut AddEntry<'_>,
    ) -> Result<()> {
        let Some(p) = parse_internal_key(ikey) else { return add(ikey, value) };
        match p.kind {
            ValueKind::Put => {
                if let Some(s) = &mut self.sep {
                    if s.separate(ikey, value, new_number)? {
                        return add(s.key(), s.value());
                    }
                }
                add(ikey, value)
            }
            ValueKind::BlobIndex => {
                let index = BlobIndex::decode(value).map_err(|e| {
                    Error::corruption("compaction input", 0, format!("{e} (a blob index)"))
                })?;
                if index.file_number >= self.gc_cutoff {
                    count(&mut self.outflow, p.user_key.len(), &index);
                    return add(ikey, value);
                }
                let v = self.source.read_filling(p.user_key, &index, false)?;
                self.bytes_read += (RECORD_HEADER_LEN + p.user_key.len()) as u64 + index.size;
                self.relocated += 1;
                self.relocated_bytes += v.len() as u64;
                self.key.clear();
                append_internal_key(&mut self.key, p.user_key, p.seq, ValueKind::Put);
                if let Some(s) = &mut self.sep {
                    if s.separate(&self.key, &v, new_number)? {
                        return add(s.key(), s.value());
                    }
                }
                self.value = v;
                add(&self.key, &self.value)
            }
            _ => add(ikey, value),
        }
    }

    /// Gives up: removes the blob files this job created (`BlobSeparator::abandon`).
    pub fn abandon(self) {
        if let Some(s) = self.sep {
            s.abandon();
        }
    }

    /// Finishes the last blob file; returns the new files and the garbage counted.
    pub fn finish(self) -> Result<BlobJobOutput> {
        let mut out = BlobJobOutput {
            relocated: (self.relocated, self.relocated_bytes),
            bytes_read: self.bytes_read,
            ..Default::default()
        };
        if let Some(s) = self.sep {
            out.bytes_written = s.bytes_written();
            out.additions = s.finish()?;
        }
        let stats = &self.source.stats;
        stats.bytes_written.fetch_add(out.bytes_written, Relaxed);
        stats.gc_keys_relocated.fetch_add(self.relocated, Relaxed);
        stats.gc_bytes_relocated.fetch_add(self.relocated_bytes, Relaxed);
        let inflow = std::mem::take(&mut *self.inflow.lock());
        for (number, (n_in, b_in)) in inflow {
            let (n_out, b_out) = self.outflow.get(&number).copied().unwrap_or_default();
            if n_in > n_out {
                out.garbage.push(BlobFileGarbage {
                    number,
                    garbage_count: n_in - n_out,
                    garbage_bytes: b_in.saturating_sub(b_out),
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod cutoff_tests {
    use super::gc_cutoff_file_number as cutoff;

    #[test]
    fn the_cutoff_collects_the_oldest_fraction_rounded_down_as_rocksdb() {
        let files = |n: u64| (0..n).map(|i| 10 + 3 * i);
        // 0.25 of 3 files is 0.75: RocksDB collects none (the first file is the cutoff).
        assert_eq!(cutoff(files(3), 3, 0.25), 10);
        assert_eq!(cutoff(files(4), 4, 0.25), 13, "one of four");
        assert_eq!(cutoff(files(7), 7, 0.25), 13, "1.75 rounds down to one");
        assert_eq!(cutoff(files(8), 8, 0.25), 16, "two of eight");
        assert_eq!(cutoff(files(5), 5, 1.0), u64::MAX, "all");
        assert_eq!(cutoff(files(5), 5, 0.0), 10, "none");
        assert_eq!(cutoff(files(0), 0, 0.25), 0, "no blob files");
        assert_eq!(cutoff(files(0), 0, 1.0), 0, "no blob files");
    }
}
