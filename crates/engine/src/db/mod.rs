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

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIterator;
use crate::options::{Options, ReadOptions, WriteOptions};

mod background;
mod compact;
pub(crate) mod core;
mod destroy;
pub(crate) mod flush;
mod info_log;
mod ingest;
mod open;
mod open_checks;
mod open_commit;
mod options_file;
mod properties;
mod read;
mod replay;
mod snapshot;
mod stats;
mod write;
mod write_controller;

pub use destroy::destroy_db;
pub use ingest::IngestOptions;
pub use replay::{RecoveryReport, WalLoss, WalLossKind};
pub use snapshot::Snapshot;

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
    inner.info_log.log("database closed");
    flushed
}

impl Drop for DbHandle {
    fn drop(&mut self) {
        // Nobody to report a failed WAL flush to; `Db::close` returns it.
        let _ = self.shut_down();
    }
}

/// Starts `jobs` background threads with `spawn`. If one fails to start, the ones already
/// started are stopped and joined before the error is returned, so nothing keeps `inner` (and
/// its LOCK) alive.
fn start_threads(
    inner: &Arc<DbInner>,
    jobs: usize,
    spawn: &mut dyn FnMut(usize, Arc<DbInner>) -> std::io::Result<std::thread::JoinHandle<()>>,
) -> Result<Vec<std::thread::JoinHandle<()>>> {
    let mut threads = Vec::with_capacity(jobs);
    for i in 0..jobs {
        match spawn(i, inner.clone()) {
            Ok(t) => threads.push(t),
            Err(e) => {
                let _ = shut_down(inner, &mut threads);
                return Err(Error::io(format!("starting background thread {i} of {jobs}"), e));
            }
        }
    }
    inner.bg_cv.notify_all();
    Ok(threads)
}

fn spawn_background(i: usize, inner: Arc<DbInner>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name(format!("talus-bg-{i}")).spawn(move || inner.background_loop())
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
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let jobs = options.max_background_jobs;
        let inner = open::open(path.as_ref(), options, open::Access::ReadWrite)?;
        let threads = start_threads(&inner, jobs, &mut spawn_background)?;
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
        let inner = open::open(path.as_ref(), options, open::Access::ReadOnly)?;
        Ok(Db { handle: Arc::new(DbHandle::new(inner, Vec::new())) })
    }

    /// Closes the database: waits for running background jobs and stops the threads, then
    /// flushes the WAL to the operating system. Returns that flush's error (dropping the last
    /// handle does the same but cannot report it). Other clones of this handle stay valid for
    /// reads; their writes then fail with [`Error::Busy`]. Closing twice is `Ok`.
    ///
    /// ```
    /// use talus::{Db, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.close().unwrap();
    /// ```
    pub fn close(self) -> Result<()> {
        self.handle.shut_down()
    }

    /// What WAL recovery dropped when this handle was opened (empty if nothing): which WALs,
    /// where, how many bytes, write batches and operations, and under which name a damaged WAL
    /// was kept. The same text is the property `talus.recovery-report` and went to the LOG.
    pub fn recovery_report(&self) -> RecoveryReport {
        self.inner().recovery_report.lock().clone()
    }

    fn inner(&self) -> &Arc<DbInner> {
        &self.handle.inner
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes `key`.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes every key in `range` (`begin..end`, end exclusive).
    pub fn delete_range<K: AsRef<[u8]>>(&self, range: Range<K>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(range.start, range.end);
        self.write(b, &WriteOptions::default())
    }

    /// Applies a batch atomically. With `sync`, the WAL is fsynced before this returns.
    pub fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        let t0 = std::time::Instant::now();
        let r = self.inner().write(batch, opts);
        crate::statistics::record(
            crate::statistics::Hist::Write,
            crate::statistics::micros_since(t0),
        );
        r
    }

    /// The value of `key`, if any.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` under `opts` (snapshot, cache policy).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, opts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let inner = self.inner();
        // The SuperVersion first, then the sequence number (RocksDB's order): every entry in the
        // SuperVersion's memtables and files was published before it was installed, so `seq`
        // reads the newest of them, and a version a flush or compaction dropped (shadowed by a
        // newer one in the same snapshot stripe) is never needed. Writes that land in a newer
        // memtable after the load are not seen: the read sees the prefix up to the switch.
        let t0 = std::time::Instant::now();
        let sv = inner.super_version.load();
        let seq = inner.read_sequence(opts);
        let r = inner.get_in(&sv, key.as_ref(), seq, opts.fill_cache);
        use crate::statistics::{self as st, Hist, Ticker};
        st::add(Ticker::KeysRead, 1);
        if let Ok(Some(v)) = &r {
            st::add(Ticker::BytesRead, v.len() as u64);
        }
        st::record(Hist::Get, st::micros_since(t0));
        r
    }

    /// The values of several keys, read from one consistent view (one sequence number), in
    /// the order of `keys`. Batched: the keys are sorted, and each table file gets the keys in
    /// its range at once (one filter fetch, the needed data blocks read together).
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let inner = self.inner();
        // SuperVersion, then sequence: see `get_opt`.
        let sv = inner.super_version.load_full();
        let seq = inner.read_sequence(opts);
        inner.multi_get_in(&sv, keys, seq, opts.fill_cache)
    }

    /// A snapshot of the current state.
    pub fn snapshot(&self) -> Snapshot {
        let inner = self.inner();
        inner.snapshots.register_current(|| inner.visible_sequence())
    }

    /// An owning iterator over `(key, value)` pairs within the bounds of `opts`: forward with
    /// `next`, backward with `next_back`.
    pub fn iter(&self, opts: &ReadOptions) -> Iter {
        Iter { raw: self.raw_iter(opts), at: None, done: false, front_key: None, back_key: None }
    }

    /// A raw cursor (not positioned: call a `seek*` first).
    pub fn raw_iter(&self, opts: &ReadOptions) -> RawIter {
        let inner = self.inner().clone();
        // The SuperVersion pins the memtables and the files the iterator reads (compaction
        // writes new files and never changes old ones), so no snapshot needs registering: the
        // iterator reads at the sequence number current now (read after the SuperVersion: see
        // `get_opt`).
        let sv = inner.super_version.load_full();
        let seq = inner.read_sequence(opts);
        let it = inner.new_db_iterator(&sv, opts, seq);
        RawIter { it, _sv: sv, _snapshot: opts.snapshot.clone(), _db: inner }
    }

    /// Flushes the active memtable to an SST file and waits for every immutable memtable to be
    /// flushed.
    pub fn flush(&self) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        {
            // Switch with the write queue quiet: take a place in it as an empty-batch leader.
            let st = inner.state.lock();
            DbInner::check_bg_error(&st)?;
            let empty = st.mem.is_empty() && !st.mem.has_range_tombstones();
            drop(st);
            if !empty {
                inner.with_write_lock(|| inner.switch_memtable())?;
            }
        }
        let mut st = inner.state.lock();
        while !st.imms.is_empty() {
            DbInner::check_bg_error(&st)?;
            if st.shutting_down {
                return Err(Error::Busy("the database is closing".into()));
            }
            inner.bg_cv.notify_all();
            inner.done_cv.wait_for(&mut st, std::time::Duration::from_millis(50));
        }
        Ok(())
    }

    /// Flushes, then compacts every file overlapping `[begin, end]` (`None`: unbounded) down to
    /// the last non-empty level.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner().check_writable()?;
        self.flush()?;
        self.inner().compact_range(begin, end)
    }

    /// Ingests external SST files written by [`crate::SstFileWriter`] (RocksDB's
    /// `IngestExternalFile`): the files must not overlap each other; each is moved or copied
    /// into the database, placed in the lowest level where it overlaps nothing at that level or
    /// above (else L0, with a new sequence number), and all become visible at once with one
    /// MANIFEST edit. See [`IngestOptions`] and `db/ingest.rs`.
    pub fn ingest_external_file(
        &self,
        paths: &[impl AsRef<Path>],
        opts: &IngestOptions,
    ) -> Result<()> {
        self.inner().check_writable()?;
        let paths: Vec<std::path::PathBuf> =
            paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        self.inner().ingest_external_files(&paths, opts)
    }

    /// A named property: `talus.stats`, `talus.num-files-at-level<N>`,
    /// `talus.estimate-num-keys`, `talus.cur-size-all-mem-tables`, … (`rocksdb.` works too).
    pub fn property(&self, name: &str) -> Option<String> {
        self.inner().property(name)
    }

    /// The options the database was opened with (its file system, table and compaction
    /// settings), e.g. for writing external files with [`crate::SstFileWriter`].
    pub fn options(&self) -> &Options {
        &self.handle.inner.opts
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.handle.inner.path
    }
}

/// A cursor over the database, RocksDB-style: position with `seek*`, move with `next`/`prev`,
/// read `key`/`value` while `valid()`, check `status()` when it turns invalid.
pub struct RawIter {
    it: DbIterator,
    _sv: Arc<core::SuperVersion>,
    _snapshot: Option<Snapshot>,
    _db: Arc<DbInner>,
}

impl RawIter {
    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        self.it.valid()
    }
    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.it.seek_to_first()
    }
    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.it.seek_to_last()
    }
    /// Positions at the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.it.seek(key)
    }
    /// Positions at the last key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        self.it.seek_for_prev(key)
    }
    /// Moves forward.
    pub fn next(&mut self) {
        self.it.next()
    }
    /// Moves backward.
    pub fn prev(&mut self) {
        self.it.prev()
    }
    /// The current key.
    pub fn key(&self) -> &[u8] {
        self.it.key()
    }
    /// The current value.
    pub fn value(&self) -> &[u8] {
        self.it.value()
    }
    /// The first error met, if any.
    pub fn status(&self) -> Result<()> {
        self.it.status()
    }
}

/// An owning iterator over `(key, value)` pairs: `next` walks forward from the first key,
/// `next_back` backward from the last; the two ends never cross.
pub struct Iter {
    raw: RawIter,
    /// Which end the cursor was last moved for.
    at: Option<End>,
    done: bool,
    front_key: Option<Vec<u8>>,
    back_key: Option<Vec<u8>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

impl Iter {
    fn emit(&mut self, end: End) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if !self.raw.valid() {
            self.done = true;
            return self.raw.status().err().map(Err);
        }
        let k = self.raw.key();
        // Stop where the other end already is.
        let crossed = match end {
            End::Front => self.back_key.as_deref().is_some_and(|b| k >= b),
            End::Back => self.front_key.as_deref().is_some_and(|f| k <= f),
        };
        if crossed {
            self.done = true;
            return None;
        }
        let k = k.to_vec();
        let v = self.raw.value().to_vec();
        match end {
            End::Front => self.front_key = Some(k.clone()),
            End::Back => self.back_key = Some(k.clone()),
        }
        Some(Ok((k, v)))
    }
}

impl Iterator for Iter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match (self.at, self.front_key.as_deref()) {
            (Some(End::Front), _) => self.raw.next(),
            (_, None) => self.raw.seek_to_first(),
            (_, Some(k)) => {
                let k = k.to_vec();
                self.raw.seek(&k);
                if self.raw.valid() && self.raw.key() == k.as_slice() {
                    self.raw.next();
                }
            }
        }
        self.at = Some(End::Front);
        self.emit(End::Front)
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match (self.at, self.back_key.as_deref()) {
            (Some(End::Back), _) => self.raw.prev(),
            (_, None) => self.raw.seek_to_last(),
            (_, Some(k)) => {
                let k = k.to_vec();
                self.raw.seek_for_prev(&k);
                if self.raw.valid() && self.raw.key() == k.as_slice() {
                    self.raw.prev();
                }
            }
        }
        self.at = Some(End::Back);
        self.emit(End::Back)
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod lifecycle_tests;
