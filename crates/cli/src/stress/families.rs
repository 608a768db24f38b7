//! The stress test's column families (`--column_families=N`, db_stress's flag): key K lives in
//! family K % N, named as db_stress names them (`default`, then `1`, `2`, ...). Opening the
//! database names every family (creating the missing ones), and each read or write of a key
//! goes to its family; with one family every call is the plain `default` one.
//!
//! Who calls: the worker (`mod.rs`), its ops (`ops.rs`) and the verification (`verify.rs`).
//! Holds the handles only; no lock.

use std::path::Path;

use talus::{
    ColumnFamily, ColumnFamilyDescriptor, Db, Iter, Options, RawIter, ReadOptions, WriteBatch,
};

use super::value::key_bytes;

/// The handles of the run's families (see the module doc).
pub struct Families {
    /// Empty with one family; else every family, `default` first.
    handles: Vec<ColumnFamily>,
}

/// The names of the families other than `default` of an `n`-family run.
fn names(n: usize) -> Vec<String> {
    (1..n).map(|i| i.to_string()).collect()
}

impl Families {
    /// Opens (read-write) the database in `dir` with the `n` families, creating missing ones.
    pub fn open(dir: &Path, mut opts: Options, n: usize) -> talus::Result<(Db, Families)> {
        opts.create_missing_column_families = true;
        let descs: Vec<_> = names(n)
            .into_iter()
            .map(|name| ColumnFamilyDescriptor::new(name, opts.clone()))
            .collect();
        let db = Db::open_cf(dir, opts, descs)?;
        let fams = Families::of(&db, n)?;
        Ok((db, fams))
    }

    /// The handles of `db`'s `n` families.
    pub fn of(db: &Db, n: usize) -> talus::Result<Families> {
        if n <= 1 {
            return Ok(Families { handles: Vec::new() });
        }
        let mut handles = vec![db.default_column_family()];
        for name in names(n) {
            let cf = db.cf_handle(&name).ok_or_else(|| {
                talus::Error::InvalidArgument(format!("no column family {name:?}"))
            })?;
            handles.push(cf);
        }
        Ok(Families { handles })
    }

    /// How many families the run has.
    pub fn count(&self) -> u64 {
        self.handles.len().max(1) as u64
    }

    /// The family of key `k` (`None`: the plain calls, one family).
    pub fn of_key(&self, k: u64) -> Option<&ColumnFamily> {
        self.handles.get((k % self.count()) as usize)
    }

    /// Whether key `k` lives in family number `f`.
    pub fn holds(&self, f: u64, k: u64) -> bool {
        k % self.count() == f
    }

    /// Reads key `k` under `opts`.
    pub fn get(&self, db: &Db, k: u64, opts: &ReadOptions) -> talus::Result<Option<Vec<u8>>> {
        match self.of_key(k) {
            Some(cf) => db.get_cf_opt(cf, key_bytes(k), opts),
            None => db.get_opt(key_bytes(k), opts),
        }
    }

    /// Adds a put (a merge with `merge`) of key `k` to `b`.
    pub fn put(&self, b: &mut WriteBatch, k: u64, v: &[u8], merge: bool) {
        match (self.of_key(k), merge) {
            (Some(cf), true) => b.merge_cf(cf, key_bytes(k), v),
            (Some(cf), false) => b.put_cf(cf, key_bytes(k), v),
            (None, true) => b.merge(key_bytes(k), v),
            (None, false) => b.put(key_bytes(k), v),
        }
    }

    /// Adds a delete of key `k` to `b`.
    pub fn delete(&self, b: &mut WriteBatch, k: u64) {
        match self.of_key(k) {
            Some(cf) => b.delete_cf(cf, key_bytes(k)),
            None => b.delete(key_bytes(k)),
        }
    }

    /// Adds the deletion of keys `[a, end)` to `b`: one range deletion per family.
    pub fn delete_range(&self, b: &mut WriteBatch, a: u64, end: u64) {
        if self.handles.is_empty() {
            b.delete_range(key_bytes(a), key_bytes(end));
            return;
        }
        for cf in &self.handles {
            b.delete_range_cf(cf, key_bytes(a), key_bytes(end));
        }
    }

    /// An iterator of `(key, value)` over family number `f` (the whole database with one
    /// family).
    pub fn iter(&self, db: &Db, f: u64, opts: &ReadOptions) -> talus::Result<Iter> {
        match self.handles.get(f as usize) {
            Some(cf) => db.iter_cf(cf, opts),
            None => Ok(db.iter(opts)),
        }
    }

    /// A raw iterator over family number `f` (the whole database with one family).
    pub fn raw_iter(&self, db: &Db, f: u64, opts: &ReadOptions) -> talus::Result<RawIter> {
        match self.handles.get(f as usize) {
            Some(cf) => db.raw_iter_cf(cf, opts),
            None => Ok(db.raw_iter(opts)),
        }
    }
}
