//! [`Storage`] for [`talus::Db`]: each method is the engine call the table layer made before
//! the trait existed (`get_opt`, `multi_get`, `write`, `raw_iter`, `SstFileWriter`,
//! `ingest_external_file` with `move_files`), so the Talus path costs what it did. Read views
//! are `talus::ReadOptions`; a cursor is a `RawIter` and the direction it walks.
//!
//! Also [`open_talus`], the tools' opener: refuses a RocksDB directory before `Db::open`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::Fs;
use talus::{Db, IngestOptions, RawIter, ReadOptions, Snapshot, SstFileWriter, WriteBatch};

use super::size::{live_dir_size, parse_written};
use super::{Batch, Cursor, LiveSize, Range, SResult, SstWriter, Storage, Walk};

/// Opens the Talus database at `path` with `opts`, after refusing a directory another engine
/// wrote ([`crate::TableError::OtherEngine`]; nothing is written then).
pub fn open_talus(path: &Path, opts: talus::Options) -> crate::Result<Db> {
    super::refuse_other_engine(path, <Db as Storage>::NAME)?;
    Ok(Db::open(path, opts)?)
}

impl Batch for WriteBatch {
    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8]) {
        WriteBatch::put(self, key, value)
    }
    #[inline]
    fn delete(&mut self, key: &[u8]) {
        WriteBatch::delete(self, key)
    }
    fn delete_range(&mut self, begin: &[u8], end: &[u8]) {
        WriteBatch::delete_range(self, begin, end)
    }
    #[inline]
    fn count(&self) -> u32 {
        WriteBatch::count(self)
    }
    #[inline]
    fn is_empty(&self) -> bool {
        WriteBatch::is_empty(self)
    }
}

/// A `RawIter` walking one way.
pub struct TalusCursor {
    it: RawIter,
    walk: Walk,
}

impl Cursor for TalusCursor {
    #[inline]
    fn valid(&self) -> bool {
        self.it.valid()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        self.it.key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        self.it.value()
    }
    #[inline]
    fn advance(&mut self) {
        match self.walk {
            Walk::Forward => self.it.next(),
            Walk::Reverse => self.it.prev(),
        }
    }
    fn status(&self) -> SResult<()> {
        self.it.status()
    }
}

impl SstWriter for SstFileWriter {
    fn put(&mut self, key: &[u8], value: &[u8]) -> SResult<()> {
        SstFileWriter::put(self, key, value)
    }
    fn file_size(&self) -> u64 {
        self.file_size_estimate()
    }
    fn finish(self) -> SResult<()> {
        SstFileWriter::finish(self).map(|_| ())
    }
}

/// Ingests, moving the files into the DB (copying if they cannot be renamed there).
fn ingest(db: &Db, paths: &[PathBuf], o: &IngestOptions) -> talus::Result<()> {
    match db.ingest_external_file(paths, o) {
        Err(talus::Error::Io { .. }) if o.move_files => {
            db.ingest_external_file(paths, &IngestOptions { move_files: false, ..o.clone() })
        }
        r => r,
    }
}

impl Storage for Db {
    const NAME: &'static str = "talus";
    type Snapshot = Snapshot;
    type ReadOptions = ReadOptions;
    type Batch = WriteBatch;
    type Cursor = TalusCursor;
    type SstWriter = SstFileWriter;

    fn read_options(&self, snapshot: Option<&Snapshot>) -> ReadOptions {
        ReadOptions { snapshot: snapshot.cloned(), ..ReadOptions::default() }
    }

    #[inline(never)]
    fn get_at(&self, key: &[u8], ro: &ReadOptions) -> SResult<Option<Vec<u8>>> {
        self.get_opt(key, ro)
    }

    #[inline(never)]
    fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        ro: &ReadOptions,
    ) -> Vec<SResult<Option<Vec<u8>>>> {
        self.multi_get(keys, ro)
    }

    #[inline(never)]
    fn write_batch(&self, batch: WriteBatch, wo: &talus::WriteOptions) -> SResult<()> {
        self.write(batch, wo)
    }

    fn take_snapshot(&self) -> Snapshot {
        self.snapshot()
    }

    fn cursor(&self, range: Range<'_, Self>, walk: Walk) -> TalusCursor {
        let ro = ReadOptions {
            snapshot: range.snapshot.cloned(),
            iterate_lower_bound: Some(range.lower),
            iterate_upper_bound: Some(range.upper),
            fill_cache: range.fill_cache,
            ..ReadOptions::default()
        };
        let mut it = self.raw_iter(&ro);
        match walk {
            Walk::Forward => it.seek_to_first(),
            Walk::Reverse => it.seek_to_last(),
        }
        TalusCursor { it, walk }
    }

    fn dir(&self) -> &Path {
        self.path()
    }

    fn instance(&self) -> usize {
        // The options live in the shared handle: one address per open database.
        std::ptr::from_ref(self.options()) as usize
    }

    fn scratch_fs(&self) -> Arc<dyn Fs> {
        self.options().fs.clone()
    }

    fn sst_writer(&self, path: &Path) -> SResult<SstFileWriter> {
        SstFileWriter::open(path, self.options())
    }

    fn ingest_behind(&self, paths: &[PathBuf]) -> SResult<bool> {
        let o = IngestOptions { move_files: true, ingest_behind: true, ..Default::default() };
        match ingest(self, paths, &o) {
            Ok(()) => Ok(true),
            Err(talus::Error::InvalidArgument(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn ingest(&self, paths: &[PathBuf]) -> SResult<()> {
        ingest(self, paths, &IngestOptions { move_files: true, ..Default::default() })
    }

    fn flush_all(&self) -> SResult<()> {
        self.flush()
    }

    fn compact_all(&self) -> SResult<()> {
        self.compact_range(None, None)
    }

    fn live_size(&self) -> LiveSize {
        let written = self.property("talus.wal-files-written").unwrap_or_default();
        live_dir_size(self.path(), &parse_written(&written))
    }

    fn property(&self, name: &str) -> Option<String> {
        Db::property(self, name)
    }
}
