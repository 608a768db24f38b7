//! `Db`'s write methods: single operations (with or without [`WriteOptions`]) and batches.
//! Each builds a [`WriteBatch`] and commits it through the write path (`write.rs`).

use super::key_range::KeyRange;
use super::Db;
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::options::WriteOptions;

impl Db {
    /// Sets `key` to `value` (default [`WriteOptions`]: not synced).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// Sets `key` to `value` under `opts` (e.g. `sync: true`: the WAL is fsynced before this
    /// returns).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let synced = talus::WriteOptions { sync: true, ..Default::default() };
    /// db.put_opt(b"k", b"v", &synced).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b, opts)
    }

    /// Merges the operand `value` into `key` (RocksDB's `Merge`; default [`WriteOptions`]):
    /// reads see the key's value combined with its operands by
    /// [`crate::Options::merge_operator`]. Without an operator: [`crate::Error::NotSupported`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options {
    ///     create_if_missing: true,
    ///     merge_operator: talus::merge::builtin_by_name("uint64add"),
    ///     ..Default::default()
    /// };
    /// let db = talus::Db::open(dir.path(), opts).unwrap();
    /// db.merge(b"hits", 1u64.to_le_bytes()).unwrap();
    /// db.merge(b"hits", 2u64.to_le_bytes()).unwrap();
    /// assert_eq!(db.get(b"hits").unwrap(), Some(3u64.to_le_bytes().to_vec()));
    /// ```
    pub fn merge(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.merge_opt(key, value, &WriteOptions::default())
    }

    /// [`Db::merge`] under `opts`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let opts = talus::Options { create_if_missing: true, merge_operator: talus::merge::builtin_by_name("stringappend"), ..Default::default() };
    /// # let db = talus::Db::open(dir.path(), opts).unwrap();
    /// let synced = talus::WriteOptions { sync: true, ..Default::default() };
    /// db.put(b"k", b"a").unwrap();
    /// db.merge_opt(b"k", b"b", &synced).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"a,b"[..]));
    /// ```
    pub fn merge_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        b.merge(key, value);
        self.write(b, opts)
    }

    /// Deletes `key` (default [`WriteOptions`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.delete(b"k").unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// Deletes `key` under `opts`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.delete_opt(b"k", &talus::WriteOptions { sync: true, ..Default::default() }).unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, opts: &WriteOptions) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b, opts)
    }

    /// Deletes every key in `range` (any [`KeyRange`] with an end: `a..b`, `a..=b`, `..b`,
    /// ...; default [`WriteOptions`]). A start after the end is `InvalidArgument`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// for k in [&b"a"[..], b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// db.delete_range(&b"a"[..]..&b"c"[..]).unwrap();
    /// assert_eq!(db.get(b"b").unwrap(), None);
    /// assert!(db.get(b"c").unwrap().is_some());
    /// // A start after the end is refused (an empty range, start == end, deletes nothing).
    /// assert!(matches!(db.delete_range(b"z"..b"a"), Err(talus::Error::InvalidArgument(_))));
    /// // Any range with an end: inclusive, open at the start.
    /// db.delete_range(..=b"c").unwrap();
    /// assert!(db.get(b"c").unwrap().is_none());
    /// assert!(matches!(db.delete_range(b"a"..), Err(talus::Error::InvalidArgument(_))));
    /// ```
    pub fn delete_range(&self, range: impl KeyRange) -> Result<()> {
        self.delete_range_opt(range, &WriteOptions::default())
    }

    /// [`Db::delete_range`] under `opts`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"v").unwrap();
    /// let synced = talus::WriteOptions { sync: true, ..Default::default() };
    /// db.delete_range_opt(&b"a"[..]..&b"b"[..], &synced).unwrap();
    /// assert_eq!(db.get(b"a").unwrap(), None);
    /// ```
    pub fn delete_range_opt(&self, range: impl KeyRange, opts: &WriteOptions) -> Result<()> {
        let (start, end) = range.key_bounds();
        // The engine deletes [begin, end): other bounds become that form.
        let (begin, end) = match super::iter::bounds_of(start, end) {
            (begin, Some(end)) => (begin.unwrap_or_default(), end),
            (_, None) => {
                return Err(crate::Error::InvalidArgument(
                    "delete_range: the range needs an end (no key sorts after every key)".into(),
                ))
            }
        };
        if begin > end {
            return Err(crate::Error::InvalidArgument(format!(
                "delete_range: the start {:?} sorts after the end {:?}",
                crate::key::EscapedBytes(&begin),
                crate::key::EscapedBytes(&end)
            )));
        }
        let mut b = WriteBatch::new();
        b.delete_range(begin, end);
        self.write(b, opts)
    }

    /// Makes every write acknowledged before this call durable (RocksDB's `SyncWAL`): syncs
    /// the WAL, and the WALs a memtable switch left unsynced, as a `sync: true` write would,
    /// without writing anything. Writes made meanwhile wait for the sync (they append to the
    /// WAL it holds). A failed sync makes the database read-only (the background error).
    ///
    /// A writer that makes many unsynced writes and needs them durable only now and then (a
    /// Raft log's appends: `talus-raft` syncs once per group of appends) calls this instead
    /// of syncing each write.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// db.sync_wal().unwrap(); // both writes are durable now
    /// ```
    pub fn sync_wal(&self) -> Result<()> {
        self.inner().sync_wal_now()
    }

    /// Applies a batch atomically: readers see all of it or none of it. With `sync`, the WAL
    /// is fsynced before this returns.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let mut b = talus::WriteBatch::new();
    /// b.put(b"a", b"1");
    /// b.delete(b"b");
    /// db.write(b, &talus::WriteOptions::default()).unwrap();
    /// assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    /// ```
    pub fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        use crate::statistics as st;
        let t0 = st::start();
        let r = self.inner().write(batch, opts);
        if let Some(t0) = t0 {
            st::record(st::Hist::Write, st::micros_since(t0));
        }
        r
    }
}
