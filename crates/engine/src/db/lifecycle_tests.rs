//! Starting and stopping a handle: what a failed start leaves behind.

use std::sync::Arc;

use super::{open, spawn_background, start_threads, Db};
use crate::options::Options;

/// Regression: when a background thread failed to start, `Db::open` returned the error but
/// the threads already started kept running, each holding the database (and its LOCK), so the
/// database could not be opened again in this process.
#[test]
fn a_thread_that_fails_to_start_stops_the_others_and_releases_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, max_background_jobs: 3, ..Default::default() };
    let inner = open::open(dir.path(), opts.clone(), &[], open::Access::ReadWrite).unwrap();
    let roles = super::background::thread_roles(&opts);
    assert_eq!(roles.len(), 3, "one flush thread and two compaction threads");
    let mut spawn = |i, role, inner| match i {
        2 => Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "no more threads")),
        _ => spawn_background(i, role, inner),
    };
    let e = start_threads(&inner, &roles, &mut spawn).unwrap_err();
    assert!(e.to_string().contains("no more threads"), "{e}");
    assert_eq!(Arc::strong_count(&inner), 1, "a started thread still holds the database");
    drop(inner);
    let db = Db::open(dir.path(), opts).expect("the LOCK was released");
    db.close().unwrap();
}

/// The nice values of this process's threads named `prefix*`, from `/proc/self/task`.
#[cfg(target_os = "linux")]
fn nice_of_threads(prefix: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(prefix) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        // Fields after the command's closing parenthesis start at field 3; nice is field 19.
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        out.push(rest.split_whitespace().nth(16).unwrap().parse().unwrap());
    }
    out
}

/// Compaction threads lower their own priority to `compaction_thread_nice`; the flush thread
/// (and the caller's thread) keep theirs. Other tests' databases run beside this one, at the
/// default nice (0 more than the runner's), so the check looks for threads 7 below the runner's,
/// which only this test asks for.
#[cfg(target_os = "linux")]
#[test]
fn compaction_threads_run_at_their_nice_value_and_the_flush_thread_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        max_background_jobs: 4,
        compaction_thread_nice: 7,
        ..Default::default()
    };
    let roles = super::background::thread_roles(&opts);
    assert_eq!(roles.iter().filter(|r| **r == super::background::Role::Compaction).count(), 3);
    // Relative to this thread's nice (the test runner's, 0 unless it was started niced).
    // SAFETY: getpriority(PRIO_PROCESS, 0) reads this thread's nice value.
    let ours = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let want = (ours + 7).min(19);
    let db = Db::open(dir.path(), opts).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while nice_of_threads("talus-compact").iter().filter(|n| **n == want).count() < 3 {
        assert!(std::time::Instant::now() < deadline, "{:?}", nice_of_threads("talus-compact"));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(!nice_of_threads("talus-flush").contains(&want), "a flush thread was lowered");
    db.close().unwrap();
    let bad = Options { compaction_thread_nice: 20, ..Options::default() };
    assert!(Db::open(dir.path(), bad).is_err(), "nice 20 is out of range");
}
