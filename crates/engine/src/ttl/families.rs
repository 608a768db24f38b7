//! [`DbWithTtl`]'s column families, each with its own TTL (RocksDB's `DBWithTTL::Open` with a
//! TTL per family, `CreateColumnFamilyWithTtl`, `SetTtl(cf, ttl)`): every family's options get
//! the TTL layers (`layers.rs`) around their own merge operator and compaction filter, the
//! filter reading the family's TTL from an atomic kept here by family id; writes stamp values
//! and reads strip them as `default`'s do.
//!
//! Locks: the map of TTLs, a leaf mutex held to look up or insert one atomic.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{append_ts, strip_checked, system_clock, Clock, DbWithTtl, TtlIter};
use crate::column_family::{ColumnFamily, ColumnFamilyDescriptor};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::options::{Options, ReadOptions, WriteOptions};

/// The TTL of each family other than `default`, by id.
pub(super) type FamilyTtls = Mutex<HashMap<u32, Arc<AtomicI32>>>;

impl DbWithTtl {
    /// Opens (or creates) the database in `path` with its families: `default` expiring after
    /// `ttl` seconds, each of `families` after its own (RocksDB's `DBWithTTL::Open` with
    /// column families and TTLs), on the system clock. The families are opened as
    /// [`Db::open_cf`] opens them (every live one named; `create_missing_column_families`).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options {
    ///     create_if_missing: true,
    ///     create_missing_column_families: true,
    ///     ..Default::default()
    /// };
    /// let fams = [(talus::ColumnFamilyDescriptor::new("sessions", opts.clone()), 60)];
    /// let db = talus::DbWithTtl::open_cf(dir.path(), opts, 0, fams).unwrap();
    /// let sessions = db.cf_handle("sessions").unwrap();
    /// db.put_cf(&sessions, b"s1", b"token").unwrap();
    /// assert_eq!(db.ttl_cf(&sessions), Some(60));
    /// assert_eq!(db.get_cf(&sessions, b"s1").unwrap().as_deref(), Some(&b"token"[..]));
    /// ```
    pub fn open_cf(
        path: impl AsRef<Path>,
        opts: Options,
        ttl: i32,
        families: impl IntoIterator<Item = (ColumnFamilyDescriptor, i32)>,
    ) -> Result<DbWithTtl> {
        Self::open_cf_with_clock(path, opts, ttl, families, system_clock())
    }

    /// [`DbWithTtl::open_cf`] with `clock` giving the current Unix time in seconds (tests).
    pub fn open_cf_with_clock(
        path: impl AsRef<Path>,
        opts: Options,
        ttl: i32,
        families: impl IntoIterator<Item = (ColumnFamilyDescriptor, i32)>,
        clock: Clock,
    ) -> Result<DbWithTtl> {
        let (opts, ttl) = Self::wrap(opts, ttl, &clock);
        let mut descs = Vec::new();
        let mut ttls = Vec::new();
        for (d, t) in families {
            let (options, t) = Self::wrap(d.options, t, &clock);
            ttls.push((d.name.clone(), t));
            descs.push(ColumnFamilyDescriptor { name: d.name, options });
        }
        let db = Db::open_cf(path, opts, descs)?;
        let mut map = HashMap::new();
        for (name, t) in ttls {
            if let Some(cf) = db.cf_handle(&name) {
                map.insert(cf.id(), t);
            }
        }
        Ok(DbWithTtl { db, ttl, clock, family_ttls: Mutex::new(map) })
    }

    /// Creates the column family `name` whose values expire after `ttl` seconds (RocksDB's
    /// `CreateColumnFamilyWithTtl`; [`Db::create_column_family`] otherwise).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::DbWithTtl::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }, 0).unwrap();
    /// let cache = db.create_column_family_with_ttl("cache", &talus::Options::default(), 30).unwrap();
    /// db.put_cf(&cache, b"k", b"v").unwrap();
    /// assert_eq!(db.ttl_cf(&cache), Some(30));
    /// assert_eq!(db.get(b"k").unwrap(), None, "default is another keyspace");
    /// ```
    pub fn create_column_family_with_ttl(
        &self,
        name: &str,
        opts: &Options,
        ttl: i32,
    ) -> Result<ColumnFamily> {
        let (opts, ttl) = Self::wrap(opts.clone(), ttl, &self.clock);
        let cf = self.db.create_column_family(name, &opts)?;
        self.family_ttls.lock().insert(cf.id(), ttl);
        Ok(cf)
    }

    /// Drops the column family `cf` ([`Db::drop_column_family`]).
    pub fn drop_column_family(&self, cf: &ColumnFamily) -> Result<()> {
        self.db.drop_column_family(cf)?;
        self.family_ttls.lock().remove(&cf.id());
        Ok(())
    }

    /// The handle of the live family `name` ([`Db::cf_handle`]).
    pub fn cf_handle(&self, name: &str) -> Option<ColumnFamily> {
        self.db.cf_handle(name)
    }

    /// Family `cf`'s TTL in seconds (`default`'s is [`DbWithTtl::ttl`]); `None` for a family
    /// this handle does not know (dropped, or of another database).
    pub fn ttl_cf(&self, cf: &ColumnFamily) -> Option<i32> {
        if cf.id() == crate::column_family::DEFAULT_COLUMN_FAMILY_ID {
            return Some(self.ttl());
        }
        self.family_ttls.lock().get(&cf.id()).map(|t| t.load(Ordering::Relaxed))
    }

    /// Changes family `cf`'s TTL for the compactions that start from now on (RocksDB's
    /// `SetTtl(cf, ttl)`); `InvalidArgument` for a family this handle does not know.
    pub fn set_ttl_cf(&self, cf: &ColumnFamily, ttl: i32) -> Result<()> {
        if cf.id() == crate::column_family::DEFAULT_COLUMN_FAMILY_ID {
            self.set_ttl(ttl);
            return Ok(());
        }
        match self.family_ttls.lock().get(&cf.id()) {
            Some(t) => {
                t.store(ttl, Ordering::Relaxed);
                Ok(())
            }
            None => Err(Error::InvalidArgument(format!(
                "column family {:?} is not a live family of this database",
                cf.name()
            ))),
        }
    }

    /// Sets `key` to `value` in family `cf`, stamped with the current time.
    pub fn put_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let v = append_ts(value.as_ref(), self.now());
        self.db.put_cf_opt(cf, key, v, &WriteOptions::default())
    }

    /// Merges `operand` into `key` of family `cf` (its merge operator sees it unstamped).
    pub fn merge_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.db.merge_cf(cf, key, append_ts(operand.as_ref(), self.now()))
    }

    /// Deletes `key` from family `cf`.
    pub fn delete_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        self.db.delete_cf(cf, key)
    }

    /// The value of `key` in family `cf`, without its timestamp.
    pub fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`DbWithTtl::get_cf`] under `opts`.
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.db.get_pinned_cf_opt(cf, key, opts)? {
            Some(v) => Ok(Some(strip_checked(&v)?.to_vec())),
            None => Ok(None),
        }
    }

    /// [`DbWithTtl::iter`] over family `cf`.
    pub fn iter_cf(&self, cf: &ColumnFamily, opts: &ReadOptions) -> Result<TtlIter> {
        Ok(TtlIter(self.db.iter_cf(cf, opts)?))
    }

    /// Compacts `[begin, end]` of family `cf`, dropping values older than its TTL.
    pub fn compact_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.db.compact_range_cf(cf, begin, end)
    }
}
