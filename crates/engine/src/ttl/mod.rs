//! [`DbWithTtl`]: a database whose values expire (RocksDB's `DBWithTTL`).
//!
//! Every value and merge operand written through it carries the time it was written, a 4-byte
//! suffix (`docs/format/ttl.md`); reads strip it. A compaction drops a value older than the TTL
//! (turning it into a deletion, as a compaction filter's `Remove` does): until a compaction
//! reaches it, an expired value is still read, as in RocksDB. The user's merge operator and
//! compaction filter are wrapped (`layers.rs`) so that they never see the suffix; merging
//! stamps the result with the time of the merge.
//!
//! Who calls: applications, instead of [`Db`]. A database opened with a TTL must always be
//! opened with one (a plain [`Db`] reads its values with their suffixes, and a `DbWithTtl`
//! reports a value without one as corruption). Every column family's values are stamped; each
//! family has its own TTL (`families.rs`: RocksDB's `OpenWithTTL` with a TTL per family,
//! `CreateColumnFamilyWithTtl`). Locks: the small map of the families' TTLs (each TTL an
//! atomic, shared with that family's filter).

use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use crate::batch::{BatchOp, WriteBatch};
use crate::db::{Db, Iter, KeyRange};
use crate::error::Result;
use crate::options::{Options, ReadOptions, WriteOptions};

mod families;
mod layers;

pub use layers::{append_ts, is_stale, strip_checked, system_clock, Clock, MIN_TIMESTAMP, TS_LEN};

/// A database whose values expire `ttl` seconds after they were written (RocksDB's
/// `DBWithTTL`; a `ttl` of 0 or less never expires). See the module documentation.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let opts = talus::Options { create_if_missing: true, ..Default::default() };
/// let db = talus::DbWithTtl::open(dir.path(), opts, 3600).unwrap();
/// db.put(b"session", b"token").unwrap();
/// assert_eq!(db.get(b"session").unwrap().as_deref(), Some(&b"token"[..]));
/// // The stored value carries its write time.
/// assert_eq!(db.db().get(b"session").unwrap().unwrap().len(), 5 + talus::ttl::TS_LEN);
/// ```
pub struct DbWithTtl {
    db: Db,
    /// `default`'s TTL.
    ttl: Arc<AtomicI32>,
    clock: Clock,
    /// The TTL of each other family, by id (shared with its compaction filter).
    family_ttls: families::FamilyTtls,
}

impl std::fmt::Debug for DbWithTtl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DbWithTtl({:?}, ttl {})", self.db, self.ttl())
    }
}

impl DbWithTtl {
    /// Opens (or creates) the database in `path` with values expiring after `ttl` seconds,
    /// on the system clock. `opts.merge_operator` and `opts.compaction_filter` are wrapped.
    pub fn open(path: impl AsRef<Path>, opts: Options, ttl: i32) -> Result<DbWithTtl> {
        Self::open_with_clock(path, opts, ttl, system_clock())
    }

    /// [`DbWithTtl::open`] with `clock` giving the current Unix time in seconds (tests).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicI64, Ordering};
    /// use std::sync::Arc;
    /// let now = Arc::new(AtomicI64::new(1_700_000_000));
    /// let t = now.clone();
    /// let clock: talus::ttl::Clock = Arc::new(move || t.load(Ordering::Relaxed));
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options { create_if_missing: true, ..Default::default() };
    /// let db = talus::DbWithTtl::open_with_clock(dir.path(), opts, 10, clock).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// now.store(1_700_000_011, Ordering::Relaxed);
    /// // Expired, but read until a compaction drops it.
    /// assert!(db.get(b"k").unwrap().is_some());
    /// db.compact_range(None, None).unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn open_with_clock(
        path: impl AsRef<Path>,
        opts: Options,
        ttl: i32,
        clock: Clock,
    ) -> Result<DbWithTtl> {
        let (opts, ttl) = Self::wrap(opts, ttl, &clock);
        let db = Db::open(path, opts)?;
        Ok(DbWithTtl { db, ttl, clock, family_ttls: Default::default() })
    }

    /// Opens the database in `path` for reading only ([`Db::open_read_only`]).
    pub fn open_read_only(path: impl AsRef<Path>, opts: Options, ttl: i32) -> Result<DbWithTtl> {
        let clock = system_clock();
        let (opts, ttl) = Self::wrap(opts, ttl, &clock);
        let db = Db::open_read_only(path, opts)?;
        Ok(DbWithTtl { db, ttl, clock, family_ttls: Default::default() })
    }

    /// `opts` with the TTL layers around its merge operator and compaction filter.
    fn wrap(mut opts: Options, ttl: i32, clock: &Clock) -> (Options, Arc<AtomicI32>) {
        let ttl = Arc::new(AtomicI32::new(ttl));
        opts.merge_operator = opts.merge_operator.take().map(|user| {
            Arc::new(layers::TtlMergeOperator { user, clock: clock.clone() }) as Arc<_>
        });
        opts.compaction_filter = Some(Arc::new(layers::TtlCompactionFilter {
            ttl: ttl.clone(),
            clock: clock.clone(),
            user: opts.compaction_filter.take(),
        }));
        (opts, ttl)
    }

    /// The database underneath: its values carry their timestamps.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The TTL in seconds.
    pub fn ttl(&self) -> i32 {
        self.ttl.load(Ordering::Relaxed)
    }

    /// Changes the TTL for the compactions that start from now on (RocksDB's `SetTtl`).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::DbWithTtl::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }, 60).unwrap();
    /// db.set_ttl(120);
    /// assert_eq!(db.ttl(), 120);
    /// ```
    pub fn set_ttl(&self, ttl: i32) {
        self.ttl.store(ttl, Ordering::Relaxed);
    }

    fn now(&self) -> i64 {
        (self.clock)()
    }

    /// Sets `key` to `value`, stamped with the current time.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// [`DbWithTtl::put`] under `opts`.
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.db.put_opt(key, append_ts(value.as_ref(), self.now()), opts)
    }

    /// Merges `operand` into `key` (the database's merge operator sees it without its stamp).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options {
    ///     create_if_missing: true,
    ///     merge_operator: talus::merge::builtin_by_name("stringappend"),
    ///     ..Default::default()
    /// };
    /// let db = talus::DbWithTtl::open(dir.path(), opts, 3600).unwrap();
    /// db.put(b"k", b"a").unwrap();
    /// db.merge(b"k", b"b").unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"a,b"[..]));
    /// ```
    pub fn merge(&self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.db.merge(key, append_ts(operand.as_ref(), self.now()))
    }

    /// Deletes `key`.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.db.delete(key)
    }

    /// Deletes every key in `range` ([`Db::delete_range`]).
    pub fn delete_range(&self, range: impl KeyRange) -> Result<()> {
        self.db.delete_range(range)
    }

    /// Applies `batch` atomically, its values and operands stamped with the current time
    /// (RocksDB's `DBWithTTLImpl::Write` rewrites the batch the same way), each record in its
    /// own column family.
    pub fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        batch.status()?;
        let now = self.now();
        let mut stamped =
            WriteBatch::with_capacity(batch.size_in_bytes() + 4 * batch.count() as usize);
        for (cf, op) in batch.iter_cf() {
            match op {
                BatchOp::Put(k, v) => stamped.push_op(cf, BatchOp::Put(k, &append_ts(v, now))),
                BatchOp::Merge(k, v) => stamped.push_op(cf, BatchOp::Merge(k, &append_ts(v, now))),
                op => stamped.push_op(cf, op),
            }
        }
        stamped.keep_handles_of(&batch);
        self.db.write(stamped, opts)
    }

    /// The value of `key`, without its timestamp; a stored value without a valid one is
    /// corruption.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// [`DbWithTtl::get`] under `opts`.
    pub fn get_opt(&self, key: impl AsRef<[u8]>, opts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        match self.db.get_pinned_opt(key, opts)? {
            Some(v) => Ok(Some(strip_checked(&v)?.to_vec())),
            None => Ok(None),
        }
    }

    /// The values of `keys` ([`Db::multi_get`]), without their timestamps.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.db
            .multi_get(keys, opts)
            .into_iter()
            .map(|r| {
                r.and_then(|v| match v {
                    Some(v) => Ok(Some(strip_checked(&v)?.to_vec())),
                    None => Ok(None),
                })
            })
            .collect()
    }

    /// An iterator over `(key, value)` pairs within the bounds of `opts`, values without their
    /// timestamps (a value without a valid one is an `Err` item).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::DbWithTtl::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }, 60).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let all: Vec<_> = db.iter(&Default::default()).map(|kv| kv.unwrap()).collect();
    /// assert_eq!(all, [(b"a".to_vec(), b"1".to_vec()), (b"b".to_vec(), b"2".to_vec())]);
    /// let last = db.iter(&Default::default()).next_back().unwrap().unwrap();
    /// assert_eq!(last.1, b"2");
    /// ```
    pub fn iter(&self, opts: &ReadOptions) -> TtlIter {
        TtlIter(self.db.iter(opts))
    }

    /// A snapshot ([`Db::snapshot`]).
    pub fn snapshot(&self) -> crate::Snapshot {
        self.db.snapshot()
    }

    /// Flushes the memtables ([`Db::flush`]).
    pub fn flush(&self) -> Result<()> {
        self.db.flush()
    }

    /// Compacts `[begin, end]` ([`Db::compact_range`]), dropping expired values.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.db.compact_range(begin, end)
    }

    /// Closes the database ([`Db::close`]).
    pub fn close(self) -> Result<()> {
        self.db.close()
    }
}

/// [`DbWithTtl::iter`]'s iterator: [`Iter`] with the timestamps stripped.
pub struct TtlIter(Iter);

/// A stored pair with the value's timestamp stripped (checked).
fn strip_pair((k, mut v): (Vec<u8>, Vec<u8>)) -> Result<(Vec<u8>, Vec<u8>)> {
    let n = strip_checked(&v)?.len();
    v.truncate(n);
    Ok((k, v))
}

impl Iterator for TtlIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|r| r.and_then(strip_pair))
    }
}

impl DoubleEndedIterator for TtlIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|r| r.and_then(strip_pair))
    }
}
