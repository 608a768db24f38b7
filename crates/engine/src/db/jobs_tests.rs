//! The job registry gives every mark back when a job fails or panics part-way.
//!
//! A file system that fails or panics when a table file is created (after the job registered
//! its inputs and reserved its output number) stands in for a compaction that dies half-way.

use std::path::Path;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, SequentialFile, StdFs, WritableFile};
use crate::{Db, Options};

const OFF: u8 = 0;
const FAIL: u8 = 1;
const PANIC_ONCE: u8 = 2;

/// `StdFs`, except that creating a `.sst` fails or panics while armed.
#[derive(Default)]
struct SstTrap {
    mode: AtomicU8,
    panics: AtomicUsize,
}

impl Fs for SstTrap {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if path.extension().is_some_and(|e| e == "sst") {
            match self.mode.load(Ordering::SeqCst) {
                FAIL => {
                    let e = std::io::Error::other("injected: no table files today");
                    return Err(Error::io(path.display().to_string(), e));
                }
                PANIC_ONCE => {
                    self.mode.store(OFF, Ordering::SeqCst);
                    self.panics.fetch_add(1, Ordering::SeqCst);
                    panic!("injected: a job dies while creating {}", path.display());
                }
                _ => {}
            }
        }
        StdFs.create(path)
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        StdFs.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        StdFs.open_sequential(path)
    }
    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        StdFs.list_dir(dir)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        StdFs.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        StdFs.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        StdFs.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        StdFs.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        StdFs.sync_dir(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        StdFs.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        StdFs.lock(path)
    }
}

/// A database on `trap` with two overlapping L0 files (keys 0..200, the second half rewritten).
fn two_l0_files(dir: &Path, trap: &Arc<SstTrap>, auto: bool) -> Db {
    two_l0_files_jobs(dir, trap, auto, 3)
}

/// As [`two_l0_files`], with `jobs` background jobs (3: two compaction threads; 2: one).
fn two_l0_files_jobs(dir: &Path, trap: &Arc<SstTrap>, auto: bool, jobs: usize) -> Db {
    let opts = Options {
        create_if_missing: true,
        fs: trap.clone(),
        disable_auto_compactions: !auto,
        level0_file_num_compaction_trigger: 2,
        max_background_jobs: jobs,
        ..Default::default()
    };
    let db = Db::open(dir, opts).unwrap();
    db.inner().state.lock().compactions_paused = true;
    for round in 0..2u32 {
        for i in (round * 100)..200 {
            db.put(format!("k{i:04}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("2"));
    db
}

fn check_data(db: &Db) {
    for i in 0..200u32 {
        let want = if i < 100 { "v0" } else { "v1" };
        assert_eq!(db.get(format!("k{i:04}")).unwrap().as_deref(), Some(want.as_bytes()), "{i}");
    }
}

fn idle(db: &Db) -> bool {
    db.inner().state.lock().jobs.is_idle()
}

/// `compact_range` on another thread, or `None` if it does not return within 30 s (a leaked
/// manual slot or running count makes it wait forever).
fn compact_in_time(db: &Db) -> Option<Result<()>> {
    let (tx, rx) = mpsc::channel();
    let db2 = db.clone();
    std::thread::spawn(move || {
        let _ = tx.send(db2.compact_range(None, None));
    });
    rx.recv_timeout(Duration::from_secs(30)).ok()
}

#[test]
fn a_manual_compaction_that_panics_part_way_leaves_nothing_registered() {
    let dir = tempfile::tempdir().unwrap();
    let trap = Arc::new(SstTrap::default());
    let db = two_l0_files(dir.path(), &trap, false);
    trap.mode.store(PANIC_ONCE, Ordering::SeqCst);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.compact_range(None, None)));
    assert!(r.is_err(), "the injected panic did not happen");
    assert_eq!(trap.panics.load(Ordering::SeqCst), 1);
    assert!(idle(&db), "a mark of the panicked compaction is still registered");
    // Before the registry, the manual slot stayed taken: this waited forever.
    let again = compact_in_time(&db).expect("compact_range hangs after a panicked one");
    again.unwrap();
    assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("0"));
    assert!(idle(&db));
    check_data(&db);
}

#[test]
fn a_manual_compaction_that_fails_leaves_nothing_registered() {
    let dir = tempfile::tempdir().unwrap();
    let trap = Arc::new(SstTrap::default());
    let db = two_l0_files(dir.path(), &trap, false);
    trap.mode.store(FAIL, Ordering::SeqCst);
    let e = db.compact_range(None, None).unwrap_err();
    assert!(e.to_string().contains("no table files today"), "{e}");
    assert!(idle(&db), "a mark of the failed compaction is still registered");
    // The failure is a background error: the inputs stay live and reads go on.
    check_data(&db);
    assert!(matches!(db.put("x", "y"), Err(Error::BackgroundError(_))));
    drop(db);
    // Reopened with the cause gone, the same compaction runs.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check_data(&db);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("0"));
    check_data(&db);
}

/// A background compaction on a database with `jobs` background jobs panics once: the same
/// files compact (before the registry their "compacting" marks leaked for good), every mark is
/// given back, the data is whole, and writes and flushes go on.
fn a_background_compaction_panics_once(jobs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let trap = Arc::new(SstTrap::default());
    let db = two_l0_files_jobs(dir.path(), &trap, true, jobs);
    trap.mode.store(PANIC_ONCE, Ordering::SeqCst);
    db.inner().state.lock().compactions_paused = false;
    db.inner().bg_cv.notify_all();
    let deadline = Instant::now() + Duration::from_secs(30);
    while db.property("talus.num-files-at-level0").as_deref() != Some("0") {
        assert!(Instant::now() < deadline, "the files of the panicked compaction stay stuck");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(trap.panics.load(Ordering::SeqCst), 1);
    while !idle(&db) {
        assert!(Instant::now() < deadline, "a mark is still registered");
        std::thread::sleep(Duration::from_millis(10));
    }
    check_data(&db);
    db.put("after", "panic").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"panic"[..]));
}

/// Two compaction threads: either may pick the files again after the panic.
#[test]
fn a_background_compaction_that_panics_leaves_nothing_registered() {
    a_background_compaction_panics_once(3);
}

/// Regression: a compaction that panicked took its thread down; with one compaction thread
/// (`max_background_jobs = 2`) no compaction ran again until reopen. Now the thread survives
/// the panic, pauses, and picks the same files again.
#[test]
fn the_only_compaction_thread_survives_a_panic() {
    a_background_compaction_panics_once(2);
}
