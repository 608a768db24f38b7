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
    let inner = open::open(dir.path(), opts.clone(), open::Access::ReadWrite).unwrap();
    let mut spawn = |i, inner| match i {
        2 => Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "no more threads")),
        _ => spawn_background(i, inner),
    };
    let e = start_threads(&inner, 3, &mut spawn).unwrap_err();
    assert!(e.to_string().contains("no more threads"), "{e}");
    assert_eq!(Arc::strong_count(&inner), 1, "a started thread still holds the database");
    drop(inner);
    let db = Db::open(dir.path(), opts).expect("the LOCK was released");
    db.close().unwrap();
}
