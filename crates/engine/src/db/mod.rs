//! The database: the public [`Db`] handle and its iterators, over the shared state in
//! [`core::DbInner`].
//!
//! Submodules, one concern each: `open` (open and recovery; with `open_checks`, `replay`,
//! `open_commit` and `options_file`), `destroy` (`destroy_db`), `write` (write queue and group
//! commit), `read` (point lookups and iterators), `flush`, `compact` (running compactions),
//! `background` (threads and obsolete-file deletion), `snapshot`, `properties`, `stats`,
//! `info_log`.
//!
//! Lifecycle of a handle: [`Db::open`] (or [`Db::open_read_only`]) builds the shared state,
//! then starts the background threads; if one fails to start, the ones started are stopped
//! and joined and the LOCK is released before the error is returned. [`Db::close`] (or dropping
//! the last handle) stops and joins them and flushes the WAL; `close` reports a failure of that
//! flush, `Drop` can only log it.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::options::Options;

mod alive_wals;
mod api_cf;
mod api_read;
mod api_write;
mod background;
mod blob_outputs;
pub(crate) mod cf_data;
pub(crate) mod checkpoint;
mod column_family;
mod compact;
mod conflict;
pub(crate) mod core;
mod destroy;
pub(crate) mod flush;
mod group_event;
mod info_log;
mod ingest;
mod iter;
mod jobs;
mod key_range;
mod open;
mod open_checks;
mod open_commit;
mod open_families;
mod options_file;
mod pinned;
mod properties;
mod properties_cf;
mod read;
mod replay;
mod replay_mems;
mod snapshot;
mod stats;
mod write;
mod write_controller;
mod write_group;
mod write_mems;
mod write_queue;

pub use destroy::destroy_db;
pub use ingest::IngestOptions;
pub use iter::{Iter, KeyValue, RangeIter, RawIter};
pub use key_range::KeyRange;
pub use pinned::PinnedSlice;
pub use replay::{RecoveryReport, WalLoss, WalLossKind};
pub use snapshot::Snapshot;

use self::background::Role;
use self::core::DbInner;

/// Stops the background threads when the last [`Db`] handle is dropped (or at [`Db::close`]).
struct DbHandle {
    inner: Arc<DbInner>,
    threads: parking_lot::Mutex<Vec<std::thread::JoinHandle<()>>>,
    closed: std::sync::atomic::AtomicBool,
}

impl DbHandle {
    fn new(inner: Arc<DbInner>, threads: Vec<std::thread::JoinHandle<()>>) -> DbHandle {
        DbHandle {
            inner,
            threads: parking_lot::Mutex::new(threads),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Users of the database besides the caller's handle: other `Db` clones (counted on the
    /// handle's `Arc`), and iterators (each holds `inner`; so do the background threads until
    /// they are joined, subtracted here). Exact when both are 0: no one is left who could make
    /// a new one.
    fn other_users(self: &Arc<Self>) -> (usize, usize) {
        let handles = Arc::strong_count(self) - 1;
        let threads =
            if self.closed.load(Ordering::Acquire) { 0 } else { self.threads.lock().len() };
        let iterators = Arc::strong_count(&self.inner).saturating_sub(1 + threads);
        (handles, iterators)
    }

    /// Stops and joins the background threads and flushes the WAL, once (a second call
    /// returns `Ok`). Returns the WAL flush's error.
    fn shut_down(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        shut_down(&self.inner, &mut self.threads.lock())
    }
}

/// Tells the background threads to stop, joins `threads`, and flushes the WAL.
fn shut_down(inner: &DbInner, threads: &mut Vec<std::thread::JoinHandle<()>>) -> Result<()> {
    inner.shutting_down.store(true, Ordering::Release);
    {
        let mut st = inner.state.lock();
        st.shutting_down = true;
    }
    inner.bg_cv.notify_all();
    inner.done_cv.notify_all();
    for t in threads.drain(..) {
        let _ = t.join();
    }
    let flushed = match inner.wal.lock().as_mut() {
        Some(w) => w.writer.flush(),
        None => Ok(()),
    };
    if let Err(e) = &flushed {
        inner.info_log.log(&format!("[ERROR] flushing the WAL at close failed: {e}"));
    }
    // The WAL made ahead for the next switch was never written: remove it (a leftover, as
    // after a crash, replays as empty).
    if let Some((number, file)) = inner.next_wal.lock().take() {
        drop(file);
        let _ = inner.fs.remove_file(&crate::filename::wal_path(&inner.path, number));
    }
    inner.info_log.log("database closed");
    flushed
}

impl Drop for DbHandle {
    fn drop(&mut self) {
        // Nobody to report a failed WAL flush to; `Db::close` returns it.
        let _ = self.shut_down();
    }
}

/// Starts one background thread per role in `roles` with `spawn`. If one fails to start, the
/// ones already started are stopped and joined before the error is returned, so nothing keeps
/// `inner` (and its LOCK) alive.
fn start_threads(
    inner: &Arc<DbInner>,
    roles: &[Role],
    spawn: &mut dyn FnMut(
        usize,
        Role,
        Arc<DbInner>,
    ) -> std::io::Result<std::thread::JoinHandle<()>>,
) -> Result<Vec<std::thread::JoinHandle<()>>> {
    let mut threads = Vec::with_capacity(roles.len());
    for (i, &role) in roles.iter().enumerate() {
        match spawn(i, role, inner.clone()) {
            Ok(t) => threads.push(t),
            Err(e) => {
                let _ = shut_down(inner, &mut threads);
                let n = roles.len();
                return Err(Error::io(format!("starting background thread {i} of {n}"), e));
            }
        }
    }
    inner.bg_cv.notify_all();
    Ok(threads)
}

/// Starts background thread `i`, named by its role and `i` (`talus-flush-0`,
/// `talus-compact-1`, ...).
fn spawn_background(
    i: usize,
    role: Role,
    inner: Arc<DbInner>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let name = match role {
        Role::Flush => format!("talus-flush-{i}"),
        Role::Compaction => format!("talus-compact-{i}"),
    };
    std::thread::Builder::new().name(name).spawn(move || inner.background_loop(role))
}

/// A database handle. Cheap to clone (an `Arc` inside) and `Send + Sync`; the database closes
/// when the last handle is dropped (iterators keep its files readable until they are dropped).
#[derive(Clone)]
pub struct Db {
    handle: Arc<DbHandle>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({})", self.handle.inner.path.display())
    }
}

impl Db {
    /// Opens (or with `create_if_missing`, creates) the database in `path`.
    ///
    /// Fails with [`Error::Locked`] if another handle or process has it open, with
    /// [`Error::InvalidArgument`] naming the option if an option is out of range, the path if
    /// it is not a directory or holds another engine's (RocksDB's) database. A failed open
    /// leaves the directory as it found it (see `docs/design/recovery.md`).
    ///
    /// ```
    /// use talus::{Db, Error, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options { create_if_missing: true, ..Default::default() };
    /// let db = Db::open(dir.path(), opts.clone()).unwrap();
    /// // One handle per directory: a second open is refused while the first lives.
    /// assert!(matches!(Db::open(dir.path(), opts), Err(Error::Locked(_))));
    /// # drop(db);
    /// ```
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        Db::open_cf(path, options, [])
    }

    /// Opens the database in `path` with the column families `families` (RocksDB's `DB::Open`
    /// with column family descriptors): every family the database has must be named (else
    /// `InvalidArgument` naming the others, nothing changed); a named family it lacks is
    /// created when `options.create_missing_column_families` is set, else refused. `default`
    /// is always opened with `options` (naming it is allowed; its descriptor's options are
    /// not used). Handles: [`Db::cf_handle`].
    ///
    /// ```
    /// use talus::{ColumnFamilyDescriptor, Db, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options {
    ///     create_if_missing: true,
    ///     create_missing_column_families: true,
    ///     ..Default::default()
    /// };
    /// let db = Db::open_cf(dir.path(), opts.clone(), [ColumnFamilyDescriptor::new("users", opts.clone())]).unwrap();
    /// let users = db.cf_handle("users").unwrap();
    /// db.put_cf(&users, b"k", b"v").unwrap();
    /// assert_eq!(db.get_cf(&users, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn open_cf(
        path: impl AsRef<Path>,
        options: Options,
        families: impl IntoIterator<Item = crate::ColumnFamilyDescriptor>,
    ) -> Result<Db> {
        let families: Vec<_> = families.into_iter().collect();
        let roles = background::thread_roles(&options);
        let inner = open::open(path.as_ref(), options, &families, open::Access::ReadWrite)?;
        let threads = start_threads(&inner, &roles, &mut spawn_background)?;
        // The WAL the first memtable switch takes, made now (later ones are made by the flush
        // thread after each switch): the directory holds it when `open` returns.
        inner.prepare_wal();
        Ok(Db { handle: Arc::new(DbHandle::new(inner, threads)) })
    }

    /// Opens the database in `path` for reading only (RocksDB's `OpenForReadOnly`): no LOCK is
    /// taken or written, no MANIFEST or LOG is written, no file is created or deleted; the WALs
    /// are replayed into memory only. Works on a read-only file system and on a full disk, and
    /// beside a process that has the database open for writing (reads then see the state of
    /// this open). Writes, `flush`, `compact_range` and ingestion fail with
    /// [`Error::NotSupported`]. `create_if_missing` and `error_if_exists` are ignored; a missing
    /// database is [`Error::NotFound`].
    ///
    /// ```
    /// use talus::{Db, Error, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options { create_if_missing: true, ..Default::default() };
    /// Db::open(dir.path(), opts.clone()).unwrap().put(b"k", b"v").unwrap();
    /// let ro = Db::open_read_only(dir.path(), opts).unwrap();
    /// assert_eq!(ro.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// assert!(matches!(ro.put(b"k", b"w"), Err(Error::NotSupported(_))));
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        Db::open_cf_read_only(path, options, [])
    }

    /// [`Db::open_read_only`] with the column families `families` (RocksDB's
    /// `OpenForReadOnly` with descriptors): a subset of the database's families may be named;
    /// a name it lacks is `InvalidArgument`.
    pub fn open_cf_read_only(
        path: impl AsRef<Path>,
        options: Options,
        families: impl IntoIterator<Item = crate::ColumnFamilyDescriptor>,
    ) -> Result<Db> {
        let families: Vec<_> = families.into_iter().collect();
        let inner = open::open(path.as_ref(), options, &families, open::Access::ReadOnly)?;
        Ok(Db { handle: Arc::new(DbHandle::new(inner, Vec::new())) })
    }

    /// Closes the database: waits for running background jobs and stops the threads, then
    /// flushes the WAL to the operating system and releases the LOCK. Returns that flush's
    /// error (dropping the last handle does the same but cannot report it).
    ///
    /// Only the last user can close: while other clones of this handle or iterators made from
    /// it live, `close` fails with [`Error::Busy`] naming how many, and closes nothing (the
    /// database stays open for them and closes when the last of them is dropped). Snapshots do
    /// not hold the database open.
    ///
    /// ```
    /// use talus::{Db, Error, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let other = db.clone();
    /// assert!(matches!(db.close(), Err(Error::Busy(_))));
    /// other.close().unwrap();
    /// ```
    pub fn close(self) -> Result<()> {
        let (handles, iterators) = self.handle.other_users();
        if handles + iterators > 0 {
            return Err(Error::Busy(format!(
                "cannot close {}: {handles} other Db handle(s) and {iterators} iterator(s) \
                 still use it (it closes, and its LOCK is released, when the last is dropped)",
                self.handle.inner.path.display()
            )));
        }
        self.handle.shut_down()
    }

    /// What WAL recovery dropped when this handle was opened (empty if nothing): which WALs,
    /// where, how many bytes, write batches and operations, and under which name a damaged WAL
    /// was kept. The same text is the property `talus.recovery-report` and went to the LOG.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// // A clean open drops nothing.
    /// assert!(db.recovery_report().wals.is_empty());
    /// ```
    pub fn recovery_report(&self) -> RecoveryReport {
        self.inner().recovery_report.lock().clone()
    }

    fn inner(&self) -> &Arc<DbInner> {
        &self.handle.inner
    }

    /// Flushes the active memtable to an SST file and waits for every immutable memtable to be
    /// flushed.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap();
    /// assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("1"));
    /// ```
    pub fn flush(&self) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        inner.flush_families(|_| true)
    }

    /// Flushes, then compacts every file overlapping `[begin, end]` (`None`: unbounded) down to
    /// the last non-empty level.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.compact_range(None, None).unwrap();
    /// assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("0"));
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner().check_writable()?;
        self.flush()?;
        let inner = self.inner();
        inner.compact_range(&inner.default_cf, begin, end)
    }

    /// Ingests external SST files written by [`crate::SstFileWriter`] (RocksDB's
    /// `IngestExternalFile`): the files must not overlap each other; each is moved or copied
    /// into the database, placed in the lowest level where it overlaps nothing at that level or
    /// above (else L0, with a new sequence number), and all become visible at once with one
    /// MANIFEST edit. See [`IngestOptions`] and `db/ingest.rs`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let outside = tempfile::tempdir().unwrap();
    /// let path = outside.path().join("bulk.sst");
    /// let mut w = talus::SstFileWriter::open(&path, db.options()).unwrap();
    /// w.put(b"a", b"1").unwrap();
    /// w.put(b"b", b"2").unwrap();
    /// w.finish().unwrap();
    /// db.ingest_external_file(&[&path], &talus::IngestOptions::default()).unwrap();
    /// assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    /// ```
    pub fn ingest_external_file(
        &self,
        paths: &[impl AsRef<Path>],
        opts: &IngestOptions,
    ) -> Result<()> {
        self.inner().check_writable()?;
        let paths: Vec<std::path::PathBuf> =
            paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        let inner = self.inner();
        inner.ingest_external_files(&inner.default_cf, &paths, opts)
    }

    /// A named property: `talus.stats`, `talus.num-files-at-level<N>`,
    /// `talus.estimate-num-keys`, `talus.cur-size-all-mem-tables`, … (`rocksdb.` works too).
    /// The per-family ones are the `default` family's, as RocksDB's `GetProperty` without a
    /// family; [`Db::property_cf`] asks another family.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.property("rocksdb.estimate-num-keys").as_deref(), Some("1"));
    /// assert!(db.property("talus.stats").unwrap().contains("Compaction Stats"));
    /// assert_eq!(db.property("no.such.property"), None);
    /// // The WAL files held open, each with the bytes written to it (not its preallocated length).
    /// let wal = db.property("talus.wal-files-written").unwrap();
    /// let written: u64 = wal.lines().filter_map(|l| l.split(' ').nth(1)?.parse::<u64>().ok()).sum();
    /// assert!(written > 0 && written < 4096, "{wal}");
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        self.inner().property(name)
    }

    /// The options the database was opened with (its file system, table and compaction
    /// settings), e.g. for writing external files with [`crate::SstFileWriter`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// assert!(db.options().create_if_missing);
    /// ```
    pub fn options(&self) -> &Options {
        &self.handle.inner.opts
    }

    /// What the device caps (`Options::io_limits`) charged and made wait so far; `None` when
    /// the database has no caps.
    ///
    /// ```
    /// use talus::fs::throttle::IoLimits;
    /// let dir = tempfile::tempdir().unwrap();
    /// let limits = IoLimits { write_iops: 1000, ..Default::default() };
    /// let opts = talus::Options { create_if_missing: true, io_limits: limits, ..Default::default() };
    /// let db = talus::Db::open(dir.path(), opts).unwrap();
    /// db.put_opt(b"k", b"v", &talus::WriteOptions { sync: true, ..Default::default() }).unwrap();
    /// assert!(db.io_throttle().unwrap().write_ios >= 2, "the WAL's bytes and its sync");
    /// ```
    pub fn io_throttle(&self) -> Option<crate::fs::throttle::ThrottleStats> {
        self.options().fs.throttle().map(|t| t.stats())
    }

    /// The database directory.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// assert_eq!(db.path(), dir.path());
    /// ```
    pub fn path(&self) -> &Path {
        &self.handle.inner.path
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod lifecycle_tests;
