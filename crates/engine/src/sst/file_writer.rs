//! [`SstFileWriter`]: writes an external SST file, in the engine's normal SST format, for
//! [`crate::Db::ingest_external_file`] (RocksDB's `SstFileWriter`).
//!
//! Every entry is stored with sequence number 0 (ingestion gives the file its sequence number;
//! see `db/ingest.rs` and docs/format/sst.md, "External files"). User keys must be added in
//! strictly increasing order, and a key or value too large for the format
//! ([`crate::batch::check_entry_size`]) is refused; either is [`Error::InvalidArgument`] and the
//! writer stays usable. Single-threaded, no locks; the file goes through `Options::fs`.
//!
//! # Examples
//!
//! ```
//! use talus::{Db, IngestOptions, Options, SstFileWriter};
//! let dir = tempfile::tempdir().unwrap();
//! let opts = Options { create_if_missing: true, ..Default::default() };
//! let db = Db::open(dir.path().join("db"), opts.clone()).unwrap();
//! let path = dir.path().join("bulk.sst");
//! let mut w = SstFileWriter::open(&path, &opts).unwrap();
//! for i in 0..100u32 {
//!     w.put(format!("key{i:03}"), i.to_string()).unwrap();
//! }
//! assert!(w.put("key000", "again").is_err(), "keys must increase");
//! let info = w.finish().unwrap();
//! assert_eq!((info.entries, info.smallest_key.as_slice()), (100, &b"key000"[..]));
//! db.ingest_external_file(&[&path], &IngestOptions::default()).unwrap();
//! assert_eq!(db.get("key042").unwrap().as_deref(), Some(&b"42"[..]));
//! ```

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::key::ValueKind;
use crate::options::Options;

use super::TableBuilder;

/// What [`SstFileWriter::finish`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalSstFileInfo {
    /// The file.
    pub path: PathBuf,
    /// Its smallest user key.
    pub smallest_key: Vec<u8>,
    /// Its largest user key.
    pub largest_key: Vec<u8>,
    /// Entries (puts and deletes).
    pub entries: u64,
    /// File size in bytes.
    pub file_size: u64,
}

/// Writes one external SST file; see the module docs.
pub struct SstFileWriter {
    builder: TableBuilder,
    fs: std::sync::Arc<dyn crate::fs::Fs>,
    path: PathBuf,
    smallest: Option<Vec<u8>>,
    last: Vec<u8>,
    entries: u64,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for SstFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SstFileWriter({}, {} entries)", self.path.display(), self.entries)
    }
}

impl SstFileWriter {
    /// Creates `path` (through `opts.fs`) with the block size, bloom filter and bottommost
    /// compression of `opts`.
    pub fn open(path: impl AsRef<Path>, opts: &Options) -> Result<SstFileWriter> {
        let path = path.as_ref().to_path_buf();
        let file = opts.fs.create(&path)?;
        let topts = opts.table_builder_options(opts.num_levels.saturating_sub(1), true);
        let name = path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(SstFileWriter {
            builder: TableBuilder::new(topts, file, name),
            fs: opts.fs.clone(),
            path,
            smallest: None,
            last: Vec::new(),
            entries: 0,
            scratch: Vec::new(),
        })
    }

    fn add(&mut self, key: &[u8], value: &[u8], kind: ValueKind) -> Result<()> {
        crate::batch::check_entry_size(key.len(), value.len())?;
        if self.smallest.is_some() && key <= self.last.as_slice() {
            return Err(Error::InvalidArgument(format!(
                "{}: keys must be added in strictly increasing order",
                self.path.display()
            )));
        }
        self.scratch.clear();
        crate::key::append_internal_key(&mut self.scratch, key, 0, kind);
        self.builder.add(&self.scratch, value)?;
        if self.smallest.is_none() {
            self.smallest = Some(key.to_vec());
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.entries += 1;
        Ok(())
    }

    /// Adds `key -> value`; `key` must be greater than every key added before.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), value.as_ref(), ValueKind::Put)
    }

    /// Adds a deletion of `key` (it hides older values of `key` once ingested); `key` must be
    /// greater than every key added before.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), &[], ValueKind::Delete)
    }

    /// Adds a merge operand for `key` (RocksDB's `SstFileWriter::Merge`): once ingested it
    /// combines with older values of `key` through the database's merge operator; `key` must
    /// be greater than every key added before.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), operand.as_ref(), ValueKind::Merge)
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Approximate bytes written so far.
    pub fn file_size_estimate(&self) -> u64 {
        self.builder.file_size_estimate()
    }

    /// Writes the meta blocks and footer and syncs the file. An empty file is refused
    /// (and removed).
    pub fn finish(self) -> Result<ExternalSstFileInfo> {
        let Some(smallest) = self.smallest else {
            drop(self.builder);
            let _ = self.fs.remove_file(&self.path);
            return Err(Error::InvalidArgument(format!("{}: no entries", self.path.display())));
        };
        let props = self.builder.finish()?;
        Ok(ExternalSstFileInfo {
            path: self.path,
            smallest_key: smallest,
            largest_key: self.last,
            entries: self.entries,
            file_size: props.file_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::TableReader;

    #[test]
    fn writes_seq0_entries_in_order_and_refuses_disorder() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default();
        let p = dir.path().join("ext.sst");
        let mut w = SstFileWriter::open(&p, &opts).unwrap();
        w.put(b"a", b"1").unwrap();
        w.delete(b"b").unwrap();
        assert!(matches!(w.put(b"b", b"x"), Err(Error::InvalidArgument(_))));
        assert!(matches!(w.put(b"a0", b"x"), Err(Error::InvalidArgument(_))));
        w.put(b"c", b"3").unwrap();
        let info = w.finish().unwrap();
        assert_eq!(
            (info.smallest_key.as_slice(), info.largest_key.as_slice(), info.entries),
            (&b"a"[..], &b"c"[..], 3)
        );
        let r =
            TableReader::open(opts.fs.open_random(&p).unwrap(), 1, "ext.sst".into(), None).unwrap();
        assert_eq!(r.properties().largest_seq, 0);
        assert_eq!(r.properties().num_deletions, 1);
        assert_eq!(r.properties().file_size, info.file_size);
        assert_eq!(r.get(b"c", 0, false).unwrap(), Some((ValueKind::Put, 0, b"3".to_vec())));
        assert_eq!(r.get(b"b", 0, false).unwrap().map(|x| x.0), Some(ValueKind::Delete));
    }

    #[test]
    fn empty_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let w = SstFileWriter::open(dir.path().join("e.sst"), &Options::default()).unwrap();
        assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    }
}
