//! The throttled VFS: SQLite's own writes (the bytes its thread passes to write system calls,
//! from `/proc/thread-self/io`, a count the throttle does not make) stay within 5% of the
//! write byte cap; data written and read through it is intact and its reads are charged; one
//! VFS per set of caps.

use std::time::{Duration, Instant};

use super::*;
use crate::ibench::open_connection;

/// Bytes this thread has passed to write system calls (`wchar`).
fn thread_wchar() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    text.lines().find_map(|l| l.strip_prefix("wchar:")).and_then(|v| v.trim().parse().ok()).unwrap()
}

#[test]
fn sqlite_writes_stay_within_five_percent_of_the_write_byte_cap() {
    let cap = 2 << 20;
    let limits = IoLimits { write_bytes_per_sec: cap, ..Default::default() };
    let dir = tempfile::tempdir().unwrap();
    let c = open_connection(&dir.path().join("t.sqlite"), true, 1 << 20, false, limits).unwrap();
    c.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)").unwrap();
    let (_, throttle) = vfs_for(limits).unwrap();
    let before = (thread_wchar(), throttle.stats());
    let t0 = Instant::now();
    let mut k = 0i64;
    while t0.elapsed() < Duration::from_secs(3) {
        // Each autocommit insert appends its pages to the WAL; checkpoints copy them back.
        c.execute("INSERT INTO t VALUES (?1, randomblob(3000))", [k]).unwrap();
        k += 1;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let written = thread_wchar() - before.0;
    let s = throttle.stats();
    let rate = written as f64 / elapsed;
    let err = (rate - cap as f64).abs() / cap as f64;
    assert!(
        err <= 0.05,
        "{rate:.0} B/s written against a cap of {cap} ({:.1}% off): {s}",
        err * 100.0
    );
    // Every write goes through the VFS but the WAL index's growth (a byte per page of -shm).
    let counted = s.write_bytes - before.1.write_bytes;
    assert!(counted.abs_diff(written) <= 4096, "{counted} counted against {written} written");
    assert!(s.waits > before.1.waits, "{s}");
    drop(c);
}

#[test]
fn data_round_trips_through_the_throttled_vfs_and_its_reads_are_charged() {
    let limits = IoLimits { iops: 100_000, read_bytes_per_sec: 1 << 30, ..Default::default() };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    {
        let c = open_connection(&path, true, 1 << 20, true, limits).unwrap();
        c.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)").unwrap();
        for k in 0..500i64 {
            c.execute("INSERT INTO t VALUES (?1, ?2)", rusqlite::params![k, format!("v{k}")])
                .unwrap();
        }
    }
    let (_, throttle) = vfs_for(limits).unwrap();
    let s = throttle.stats();
    assert!(s.write_ios > 500, "synchronous=FULL syncs every commit: {s}");
    let before = throttle.stats().read_ios;
    let c = open_connection(&path, false, 1 << 20, false, limits).unwrap();
    let mut sum = 0usize;
    for k in 0..500i64 {
        let v: String = c.query_row("SELECT v FROM t WHERE k = ?1", [k], |r| r.get(0)).unwrap();
        assert_eq!(v, format!("v{k}"));
        sum += v.len();
    }
    assert!(sum > 0 && throttle.stats().read_ios > before, "{}", throttle.stats());
    drop(c);
}

#[test]
fn one_vfs_per_set_of_caps() {
    let a = IoLimits { read_iops: 7, ..Default::default() };
    let b = IoLimits { read_iops: 8, ..Default::default() };
    let (na, ta) = vfs_for(a).unwrap();
    let (na2, ta2) = vfs_for(a).unwrap();
    let (nb, _) = vfs_for(b).unwrap();
    assert!(na == na2 && Arc::ptr_eq(&ta, &ta2), "the same caps share one device");
    assert_ne!(na, nb);
    assert_eq!(ta.limits(), a);
}
