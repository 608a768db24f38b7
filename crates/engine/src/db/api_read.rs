//! `Db`'s read methods: point lookups (copying, or pinned in place), MultiGet, snapshots and
//! the iterators. Each loads the current SuperVersion, then the sequence number to read at
//! (RocksDB's order; see [`Db::get_opt`]), and reads through `read.rs`.

use crate::statistics as st;

use super::cf_data::ColumnFamilyData;
use super::iter::{bounds_of, prefix_end, Iter, RangeIter, RawIter};
use super::key_range::KeyRange;
use super::pinned::PinnedSlice;
use super::snapshot::Snapshot;
use super::Db;
use crate::error::{Error, Result};
use crate::options::ReadOptions;

impl Db {
    /// The value of `key`, if any, copied out (see [`Db::get_pinned`] for no copy).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    /// assert_eq!(db.get(b"missing").unwrap(), None);
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` under `opts` (snapshot, cache policy).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"old").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"new").unwrap();
    /// let at_snap = talus::ReadOptions { snapshot: Some(snap), ..Default::default() };
    /// assert_eq!(db.get_opt(b"k", &at_snap).unwrap(), Some(b"old".to_vec()));
    /// ```
    pub fn get_opt(&self, key: impl AsRef<[u8]>, opts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.get_in_family(&self.inner().default_cf, key.as_ref(), opts)
    }

    /// [`Db::get_opt`] in family `cf`.
    pub(super) fn get_in_family(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let inner = self.inner();
        // The SuperVersion first, then the sequence number (RocksDB's order): every entry in the
        // SuperVersion's memtables and files was published before it was installed, so `seq`
        // reads the newest of them, and a version a flush or compaction dropped (shadowed by a
        // newer one in the same snapshot stripe) is never needed. Writes that land in a newer
        // memtable after the load are not seen: the read sees the prefix up to the switch.
        let t0 = st::start();
        let sv = cf.super_version.load();
        let seq = inner.read_sequence(opts)?;
        let r = inner.get_in(&sv, key, seq, opts.fill_cache);
        if let Some(t0) = t0 {
            st::count_get(t0, r.as_ref().ok().and_then(|v| v.as_ref().map(Vec::len)));
        }
        r
    }

    /// The value of `key`, if any, without copying it (RocksDB's `PinnableSlice`): the
    /// [`PinnedSlice`] refers to the value in the memtable or in the cached data block, and
    /// keeps that memtable or block alive (a pinned cache entry is not evicted) while it lives.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"in the memtable").unwrap();
    /// assert_eq!(&*db.get_pinned(b"k").unwrap().unwrap(), b"in the memtable");
    /// db.flush().unwrap();
    /// let v = db.get_pinned(b"k").unwrap().unwrap(); // now in a data block
    /// assert_eq!(&v[..], b"in the memtable");
    /// ```
    pub fn get_pinned(&self, key: impl AsRef<[u8]>) -> Result<Option<PinnedSlice>> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// [`Db::get_pinned`] under `opts` (snapshot, cache policy).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let no_fill = talus::ReadOptions { fill_cache: false, ..Default::default() };
    /// assert_eq!(db.get_pinned_opt(b"k", &no_fill).unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn get_pinned_opt(
        &self,
        key: impl AsRef<[u8]>,
        opts: &ReadOptions,
    ) -> Result<Option<PinnedSlice>> {
        self.get_pinned_in_family(&self.inner().default_cf, key.as_ref(), opts)
    }

    /// [`Db::get_pinned_opt`] in family `cf`.
    pub(super) fn get_pinned_in_family(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        opts: &ReadOptions,
    ) -> Result<Option<PinnedSlice>> {
        let inner = self.inner();
        // SuperVersion, then sequence: see `get_opt`.
        let t0 = st::start();
        let sv = cf.super_version.load();
        let seq = inner.read_sequence(opts)?;
        let r = inner.get_pinned_in(&sv, key, seq, opts.fill_cache);
        if let Some(t0) = t0 {
            st::count_get(t0, r.as_ref().ok().and_then(|v| v.as_ref().map(|v| v.len())));
        }
        r
    }

    /// The values of several keys, read from one consistent view (one sequence number), in
    /// the order of `keys`. Batched: the keys are sorted, and each table file gets the keys in
    /// its range at once (one filter fetch, the needed data blocks read together).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let got = db.multi_get(&[&b"a"[..], b"b"], &talus::ReadOptions::default());
    /// assert_eq!(got[0].as_ref().unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(got[1].as_ref().unwrap(), &None);
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_in_family(&self.inner().default_cf, keys, opts)
    }

    /// [`Db::multi_get`] in family `cf`.
    pub(super) fn multi_get_in_family<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamilyData,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let inner = self.inner();
        // SuperVersion, then sequence: see `get_opt`.
        let sv = cf.super_version.load_full();
        match inner.read_sequence(opts) {
            Ok(seq) => inner.multi_get_in(&sv, keys, seq, opts.fill_cache),
            Err(e) => {
                let msg = e.to_string();
                keys.iter().map(|_| Err(Error::InvalidArgument(msg.clone()))).collect()
            }
        }
    }

    /// A snapshot of the current state: reads through it (`ReadOptions::snapshot`) see the
    /// database as it is now, and compaction keeps what it needs until it is dropped.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let old = talus::ReadOptions { snapshot: Some(snap), ..Default::default() };
    /// assert_eq!(db.get_opt(b"k", &old).unwrap(), None);
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        let inner = self.inner();
        inner.snapshots.register_current(|| inner.visible_sequence())
    }

    /// An owning iterator over `(key, value)` pairs within the bounds of `opts`: forward with
    /// `next`, backward with `next_back`. Each item is two allocations; [`Db::range`] makes
    /// one.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let keys: Vec<Vec<u8>> =
    ///     db.iter(&talus::ReadOptions::default()).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
    /// ```
    pub fn iter(&self, opts: &ReadOptions) -> Iter {
        Iter::new(self.raw_iter(opts))
    }

    /// A raw cursor (not positioned: call a `seek*` first).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iter(&talus::ReadOptions::default());
    /// it.seek_to_first();
    /// assert_eq!(it.key(), b"a");
    /// ```
    pub fn raw_iter(&self, opts: &ReadOptions) -> RawIter {
        self.raw_iter_in_family(&self.inner().default_cf, opts)
    }

    /// [`Db::raw_iter`] over family `cf`.
    pub(super) fn raw_iter_in_family(&self, cf: &ColumnFamilyData, opts: &ReadOptions) -> RawIter {
        let inner = self.inner().clone();
        // The SuperVersion pins the memtables and the files the iterator reads (compaction
        // writes new files and never changes old ones), so no snapshot needs registering: the
        // iterator reads at the sequence number current now (read after the SuperVersion: see
        // `get_opt`).
        let sv = cf.super_version.load_full();
        // A foreign snapshot: an iterator that never positions and reports the refusal.
        let (seq, refused) = match inner.read_sequence(opts) {
            Ok(seq) => (seq, None),
            Err(e) => (0, Some(e.to_string())),
        };
        let it = inner.new_db_iterator(&sv, opts, seq);
        RawIter::new(it, sv, opts.snapshot.clone(), inner, refused)
    }

    /// The entries whose keys lie in `range` (any [`KeyRange`]: `a..b`, `a..=b`, `a..`, `..b`,
    /// `..`, a pair of `Bound`s), double-ended; each item a [`crate::KeyValue`] (one
    /// allocation).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// for k in [&b"a"[..], b"b", b"c", b"d"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let keys: Vec<Vec<u8>> = db.range(b"b"..b"d").map(|kv| kv.unwrap().key().to_vec()).collect();
    /// assert_eq!(keys, [b"b".to_vec(), b"c".to_vec()]);
    /// let last = db.range(..).next_back().unwrap().unwrap();
    /// assert_eq!(last.key(), b"d");
    /// assert_eq!(db.range("c"..).count(), 2);
    /// ```
    pub fn range(&self, range: impl KeyRange) -> RangeIter {
        self.range_opt(range, &ReadOptions::default())
    }

    /// [`Db::range`] under `opts` (a snapshot, cache policy, ...); `range` replaces the
    /// options' `iterate_lower_bound` and `iterate_upper_bound`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let then = talus::ReadOptions { snapshot: Some(db.snapshot()), ..Default::default() };
    /// db.put(b"b", b"2").unwrap();
    /// assert_eq!(db.range_opt(.., &then).count(), 1);
    /// assert_eq!(db.range(..).count(), 2);
    /// ```
    pub fn range_opt(&self, range: impl KeyRange, opts: &ReadOptions) -> RangeIter {
        let (start, end) = range.key_bounds();
        let (lower, upper) = bounds_of(start, end);
        let opts =
            ReadOptions { iterate_lower_bound: lower, iterate_upper_bound: upper, ..opts.clone() };
        RangeIter::new(self.raw_iter(&opts))
    }

    /// The entries whose keys start with `prefix`, double-ended (see [`Db::range`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// for k in [&b"user:1"[..], b"user:2", b"users", b"v"] {
    ///     db.put(k, b"x").unwrap();
    /// }
    /// let n = db.prefix(b"user:").count();
    /// assert_eq!(n, 2);
    /// assert_eq!(db.prefix(b"user:").next_back().unwrap().unwrap().key(), b"user:2");
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> RangeIter {
        self.prefix_opt(prefix, &ReadOptions::default())
    }

    /// [`Db::prefix`] under `opts` (a snapshot, ...); the prefix replaces the options' bounds.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"user:1", b"x").unwrap();
    /// let then = talus::ReadOptions { snapshot: Some(db.snapshot()), ..Default::default() };
    /// db.put(b"user:2", b"x").unwrap();
    /// assert_eq!(db.prefix_opt(b"user:", &then).count(), 1);
    /// ```
    pub fn prefix_opt(&self, prefix: impl AsRef<[u8]>, opts: &ReadOptions) -> RangeIter {
        let prefix = prefix.as_ref();
        let opts = ReadOptions {
            iterate_lower_bound: Some(prefix.to_vec()),
            iterate_upper_bound: prefix_end(prefix),
            ..opts.clone()
        };
        RangeIter::new(self.raw_iter(&opts))
    }
}
