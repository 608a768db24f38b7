//! `Db`'s per-family calls (RocksDB's `*_cf` overloads, rust-rocksdb's names): writes through
//! a one-operation batch naming the family, and reads, iterators, flush and manual compaction
//! of one family. Each resolves the handle first (`DbInner::family`: a handle of another
//! database is `InvalidArgument`), then runs the same code as the `default` methods. A write
//! to a dropped family is refused by the write path, which knows the live families
//! (`write_mems.rs`: `InvalidArgument`).

use super::iter::{bounds_of, prefix_end, Iter, RangeIter, RawIter};
use super::key_range::KeyRange;
use super::pinned::PinnedSlice;
use super::Db;
use crate::batch::WriteBatch;
use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::options::{ReadOptions, WriteOptions};

impl Db {
    /// Sets `key` to `value` in family `cf`.
    pub fn put_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.put_cf_opt(cf, key, value, &WriteOptions::default())
    }

    /// [`Db::put_cf`] under `opts`.
    pub fn put_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.inner().family(cf)?;
        let mut b = WriteBatch::new();
        b.put_cf(cf, key, value);
        self.write(b, opts)
    }

    /// Deletes `key` from family `cf`.
    pub fn delete_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_cf_opt(cf, key, &WriteOptions::default())
    }

    /// [`Db::delete_cf`] under `opts`.
    pub fn delete_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.inner().family(cf)?;
        let mut b = WriteBatch::new();
        b.delete_cf(cf, key);
        self.write(b, opts)
    }

    /// Merges the operand `value` into `key` of family `cf` (the family's merge operator;
    /// without one: `NotSupported`).
    pub fn merge_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.merge_cf_opt(cf, key, value, &WriteOptions::default())
    }

    /// [`Db::merge_cf`] under `opts`.
    pub fn merge_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.inner().family(cf)?;
        let mut b = WriteBatch::new();
        b.merge_cf(cf, key, value);
        self.write(b, opts)
    }

    /// Deletes every key of family `cf` in `[begin, end)`; `begin > end` is `InvalidArgument`.
    pub fn delete_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.delete_range_cf_opt(cf, begin, end, &WriteOptions::default())
    }

    /// [`Db::delete_range_cf`] under `opts`.
    pub fn delete_range_cf_opt(
        &self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.inner().family(cf)?;
        let (begin, end) = (begin.as_ref(), end.as_ref());
        if begin > end {
            return Err(Error::InvalidArgument(format!(
                "delete_range_cf: begin {begin:?} is after end {end:?}"
            )));
        }
        let mut b = WriteBatch::new();
        b.delete_range_cf(cf, begin, end);
        self.write(b, opts)
    }

    /// The value of `key` in family `cf`, if any.
    pub fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`Db::get_cf`] under `opts` (a snapshot, cache policy).
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let data = self.inner().family(cf)?;
        self.get_in_family(&data, key.as_ref(), opts)
    }

    /// [`Db::get_pinned`] in family `cf`.
    pub fn get_pinned_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<PinnedSlice>> {
        self.get_pinned_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`Db::get_pinned_opt`] in family `cf`.
    pub fn get_pinned_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        opts: &ReadOptions,
    ) -> Result<Option<PinnedSlice>> {
        let data = self.inner().family(cf)?;
        self.get_pinned_in_family(&data, key.as_ref(), opts)
    }

    /// [`Db::multi_get`] in family `cf`.
    pub fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        match self.inner().family(cf) {
            Ok(data) => self.multi_get_in_family(&data, keys, opts),
            Err(e) => {
                let msg = e.to_string();
                keys.iter().map(|_| Err(Error::InvalidArgument(msg.clone()))).collect()
            }
        }
    }

    /// [`Db::raw_iter`] over family `cf`.
    pub fn raw_iter_cf(&self, cf: &ColumnFamily, opts: &ReadOptions) -> Result<RawIter> {
        let data = self.inner().family(cf)?;
        Ok(self.raw_iter_in_family(&data, opts))
    }

    /// [`Db::iter`] over family `cf`.
    pub fn iter_cf(&self, cf: &ColumnFamily, opts: &ReadOptions) -> Result<Iter> {
        Ok(Iter::new(self.raw_iter_cf(cf, opts)?))
    }

    /// [`Db::range`] over family `cf`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let cf = db.create_column_family("c", &talus::Options::default()).unwrap();
    /// for k in [&b"a"[..], b"b", b"c"] {
    ///     db.put_cf(&cf, k, b"v").unwrap();
    /// }
    /// let n = db.range_cf(&cf, b"b"..).unwrap().count();
    /// assert_eq!(n, 2);
    /// ```
    pub fn range_cf(&self, cf: &ColumnFamily, range: impl KeyRange) -> Result<RangeIter> {
        self.range_cf_opt(cf, range, &ReadOptions::default())
    }

    /// [`Db::range_opt`] over family `cf`.
    pub fn range_cf_opt(
        &self,
        cf: &ColumnFamily,
        range: impl KeyRange,
        opts: &ReadOptions,
    ) -> Result<RangeIter> {
        let (start, end) = range.key_bounds();
        let (lower, upper) = bounds_of(start, end);
        let opts =
            ReadOptions { iterate_lower_bound: lower, iterate_upper_bound: upper, ..opts.clone() };
        Ok(RangeIter::new(self.raw_iter_cf(cf, &opts)?))
    }

    /// [`Db::prefix`] over family `cf`.
    pub fn prefix_cf(&self, cf: &ColumnFamily, prefix: impl AsRef<[u8]>) -> Result<RangeIter> {
        let prefix = prefix.as_ref();
        let opts = ReadOptions {
            iterate_lower_bound: Some(prefix.to_vec()),
            iterate_upper_bound: prefix_end(prefix),
            ..Default::default()
        };
        Ok(RangeIter::new(self.raw_iter_cf(cf, &opts)?))
    }

    /// Flushes family `cf`'s memtable (RocksDB's `Flush` with a family) and waits for every
    /// immutable memtable to be flushed. With `Options::atomic_flush` every family that holds
    /// writes is switched with it (so this is [`Db::flush`]).
    pub fn flush_cf(&self, cf: &ColumnFamily) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        let id = inner.family(cf)?.id;
        inner.flush_families(|f| f == id)
    }

    /// [`Db::compact_range`] of family `cf`.
    pub fn compact_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        let data = inner.family(cf)?;
        self.flush_cf(cf)?;
        inner.compact_range(&data, begin, end)
    }

    /// [`Db::property`] of family `cf` (RocksDB's `GetProperty` with a family): the per-family
    /// names (`talus.num-files-at-level<N>`, `talus.estimate-num-keys`,
    /// `talus.cur-size-active-mem-table`, `talus.num-immutable-mem-table`,
    /// `talus.estimate-pending-compaction-bytes`, `talus.levelstats`, `talus.stats`,
    /// `talus.cfstats`, `talus.total-sst-files-size`, `talus.estimate-live-data-size`, the blob
    /// file ones, ...) answer for that family; the database-wide ones (the WAL, caches,
    /// snapshots, jobs, `talus.dbstats`) are the same for every family. `None` for an unknown
    /// name or a handle of another database.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let cf = db.create_column_family("c", &talus::Options::default()).unwrap();
    /// db.put_cf(&cf, b"k1", b"v").unwrap();
    /// db.put_cf(&cf, b"k2", b"v").unwrap();
    /// assert_eq!(db.property_int_cf(&cf, "rocksdb.estimate-num-keys"), Some(2));
    /// assert_eq!(db.property_int("rocksdb.estimate-num-keys"), Some(0), "default's");
    /// assert!(db.property_cf(&cf, "rocksdb.cfstats").unwrap().contains("Compaction Stats [c]"));
    /// ```
    pub fn property_cf(&self, cf: &ColumnFamily, name: &str) -> Option<String> {
        let inner = self.inner();
        let data = inner.family(cf).ok()?;
        inner.property_of(&data, name)
    }

    /// [`Db::property_cf`] as a number (RocksDB's `GetIntProperty` with a family): `None` for
    /// an unknown name or one whose value is not a number.
    pub fn property_int_cf(&self, cf: &ColumnFamily, name: &str) -> Option<u64> {
        self.property_cf(cf, name)?.trim().parse().ok()
    }

    /// [`Db::property`] as a number (RocksDB's `GetIntProperty`): `default`'s value of a
    /// per-family name. `None` for an unknown name or one whose value is not a number.
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.property(name)?.trim().parse().ok()
    }

    /// [`Db::ingest_external_file`] into family `cf` (RocksDB's `IngestExternalFile` with a
    /// family): the same checks against that family's memtables (an overlap flushes) and
    /// levels, the same sequence numbers, the files recorded in that family's version with one
    /// MANIFEST edit. `InvalidArgument` for a dropped family or a handle of another database.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let cf = db.create_column_family("bulk", &talus::Options::default()).unwrap();
    /// let outside = tempfile::tempdir().unwrap();
    /// let path = outside.path().join("bulk.sst");
    /// let mut w = talus::SstFileWriter::open(&path, db.options()).unwrap();
    /// w.put(b"a", b"1").unwrap();
    /// w.finish().unwrap();
    /// db.ingest_external_file_cf(&cf, &[&path], &talus::IngestOptions::default()).unwrap();
    /// assert_eq!(db.get_cf(&cf, b"a").unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(db.get(b"a").unwrap(), None);
    /// ```
    pub fn ingest_external_file_cf(
        &self,
        cf: &ColumnFamily,
        paths: &[impl AsRef<std::path::Path>],
        opts: &crate::IngestOptions,
    ) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        let data = inner.family(cf)?;
        let paths: Vec<std::path::PathBuf> =
            paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        inner.ingest_external_files(&data, &paths, opts)
    }
}
