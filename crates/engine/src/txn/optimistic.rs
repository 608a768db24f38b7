//! [`OptimisticTransactionDb`]: transactions that take no lock until they commit, and then
//! check that no key they read for update or wrote was written since they first did
//! ([`Error::Busy`] if one was). RocksDB's `OptimisticTransactionDB` with its default
//! `kValidateParallel` policy.
//!
//! The commit and its locks are in `occ_commit.rs`.
//!
//! Who calls: users.

use std::sync::Arc;

use super::occ_commit::OccShared;
use super::options::{OptimisticTransactionDbOptions, OptimisticTransactionOptions};
use super::transaction::{Mode, Transaction};
use crate::db::Db;
use crate::error::Result;
use crate::options::{Options, WriteOptions};

/// A database whose transactions are optimistic (RocksDB's `OptimisticTransactionDB`). Cheap to
/// clone; [`OptimisticTransactionDb::db`] is the database itself, for reads and for writes
/// outside transactions.
///
/// ```
/// use talus::{Error, OptimisticTransactionDb, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let opts = Options { create_if_missing: true, ..Default::default() };
/// let db = OptimisticTransactionDb::open(dir.path(), opts).unwrap();
/// let mut t1 = db.begin();
/// let mut t2 = db.begin();
/// assert_eq!(t1.get_for_update(b"n").unwrap(), None);
/// t1.put(b"n", b"1").unwrap();
/// t2.put(b"n", b"2").unwrap();
/// t2.commit().unwrap();
/// // t1 read n for update before t2 wrote it: its commit fails and writes nothing.
/// assert!(matches!(t1.commit(), Err(Error::Busy(_))));
/// assert_eq!(db.db().get(b"n").unwrap().as_deref(), Some(&b"2"[..]));
/// ```
#[derive(Clone)]
pub struct OptimisticTransactionDb {
    db: Db,
    shared: Arc<OccShared>,
}

impl std::fmt::Debug for OptimisticTransactionDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OptimisticTransactionDb({:?})", self.db)
    }
}

impl OptimisticTransactionDb {
    /// Opens the database in `path` (as [`Db::open`]) for optimistic transactions.
    pub fn open(path: impl AsRef<std::path::Path>, options: Options) -> Result<Self> {
        Self::open_with(path, options, OptimisticTransactionDbOptions::default())
    }

    /// [`OptimisticTransactionDb::open`] with `occ` options.
    pub fn open_with(
        path: impl AsRef<std::path::Path>,
        options: Options,
        occ: OptimisticTransactionDbOptions,
    ) -> Result<Self> {
        occ.validate()?;
        Self::from_db(Db::open(path, options)?, occ)
    }

    /// Makes optimistic transactions over an open database. Transactions of two
    /// `OptimisticTransactionDb`s over one database check each other's commits as writes
    /// outside a transaction (no common commit locks): make one and clone it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let otx = talus::OptimisticTransactionDb::from_db(db.clone(), Default::default()).unwrap();
    /// let mut t = otx.begin();
    /// t.put(b"k", b"v").unwrap();
    /// t.commit().unwrap();
    /// assert!(db.get(b"k").unwrap().is_some());
    /// ```
    pub fn from_db(db: Db, occ: OptimisticTransactionDbOptions) -> Result<Self> {
        occ.validate()?;
        Ok(OptimisticTransactionDb { db, shared: Arc::new(OccShared::new(occ.occ_lock_buckets)) })
    }

    /// The database: reads, and writes outside transactions.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Starts a transaction with default options (unsynced commit, no snapshot).
    pub fn begin(&self) -> Transaction {
        self.begin_transaction(&WriteOptions::default(), &OptimisticTransactionOptions::default())
    }

    /// Starts a transaction whose commit writes with `wo`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::OptimisticTransactionDb::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// use talus::{OptimisticTransactionOptions, WriteOptions};
    /// db.db().put(b"k", b"old").unwrap();
    /// let snap = OptimisticTransactionOptions { set_snapshot: true };
    /// let t = db.begin_transaction(&WriteOptions { sync: true, ..Default::default() }, &snap);
    /// db.db().put(b"k", b"new").unwrap();
    /// // Reads through the transaction's read options see its snapshot.
    /// assert_eq!(t.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    /// ```
    pub fn begin_transaction(
        &self,
        wo: &WriteOptions,
        opts: &OptimisticTransactionOptions,
    ) -> Transaction {
        let mut t =
            Transaction::new(self.db.clone(), Mode::Optimistic(Arc::clone(&self.shared)), *wo);
        if opts.set_snapshot {
            t.set_snapshot();
        }
        t
    }
}
