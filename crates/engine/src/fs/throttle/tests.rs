//! The throttle's accuracy and fairness: threads that ask for more than a cap get the cap
//! (within 5% over a window), each IO counted as the module doc says, and no request waits
//! longer than the ones queued before it take.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::fs::fault::SimFs;

/// Runs `threads` threads calling `op` until `window` has passed; returns the elapsed time.
fn hammer(threads: usize, window: Duration, op: impl Fn(usize) + Sync) -> Duration {
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for i in 0..threads {
            let op = &op;
            s.spawn(move || {
                while t0.elapsed() < window {
                    op(i);
                }
            });
        }
    });
    t0.elapsed()
}

/// `got` per second over `elapsed` is within 5% of `cap`.
fn near(what: &str, got: u64, elapsed: Duration, cap: u64) {
    let rate = got as f64 / elapsed.as_secs_f64();
    let err = (rate - cap as f64).abs() / cap as f64;
    assert!(err <= 0.05, "{what}: {rate:.0}/s against a cap of {cap}/s ({:.1}% off)", err * 100.0);
}

fn throttled(limits: IoLimits) -> (ThrottledFs, Arc<SimFs>) {
    let sim = SimFs::new();
    sim.create_dir_all(Path::new("/d")).unwrap();
    (ThrottledFs::new(sim.clone(), limits).unwrap(), sim)
}

/// `threads` writers each appending `chunk` bytes per call to its own file (and syncing
/// after each append if `sync`) for 3 s under `limits`; the throttle's counts and the time.
fn write_run(
    limits: IoLimits,
    threads: usize,
    chunk: usize,
    sync: bool,
) -> (ThrottleStats, Duration) {
    let (fs, _sim) = throttled(limits);
    let files: Vec<_> = (0..threads)
        .map(|i| parking_lot::Mutex::new(fs.create(Path::new(&format!("/d/{i}"))).unwrap()))
        .collect();
    let data = vec![7u8; chunk];
    let elapsed = hammer(threads, Duration::from_secs(3), |i| {
        let mut f = files[i].lock();
        f.append(&data).unwrap();
        if sync {
            f.sync().unwrap();
        }
    });
    (fs.throttle().stats(), elapsed)
}

#[test]
fn written_bytes_stay_within_five_percent_of_the_byte_cap() {
    let limits = IoLimits { write_bytes_per_sec: 8 << 20, ..Default::default() };
    let (s, elapsed) = write_run(limits, 2, 64 << 10, false);
    near("written bytes", s.write_bytes, elapsed, limits.write_bytes_per_sec);
    assert_eq!(s.write_ios, 0, "buffered bytes reach the device at sync, writeback or close");
    assert!(s.waits > 0 && s.wait_micros > 0, "{s}");
}

#[test]
fn synced_writes_stay_within_five_percent_of_the_write_iops_cap() {
    // Each synced append is 2 IOs: its bytes and the sync's cache flush.
    let limits = IoLimits { write_iops: 400, ..Default::default() };
    let (s, elapsed) = write_run(limits, 3, 100, true);
    near("write IOs", s.write_ios, elapsed, limits.write_iops);
    assert_eq!(s.write_bytes, s.write_ios / 2 * 100, "{s}");
}

#[test]
fn read_iops_and_combined_iops_caps_hold_and_large_reads_count_per_256_kib() {
    let (fs, _sim) = throttled(IoLimits { read_iops: 600, iops: 500, ..Default::default() });
    let mut w = fs.create(Path::new("/d/f")).unwrap();
    w.append(&vec![1u8; 1 << 20]).unwrap();
    w.sync().unwrap();
    drop(w);
    let f = fs.open_random(Path::new("/d/f")).unwrap();
    let before = fs.throttle().stats();
    assert_eq!((before.write_ios, before.write_bytes), (5, 1 << 20), "4 IOs of 256 KiB + a sync");
    let mut buf = vec![0u8; 600 << 10];
    f.read_exact_at(0, &mut buf).unwrap();
    assert_eq!(fs.throttle().stats().read_ios, 3, "600 KiB is 3 IOs of at most 256 KiB");
    // The combined cap (500) is the tighter one: reads get 500 IOs per second, less the
    // reservations the writes above made.
    let before = fs.throttle().stats();
    let elapsed = hammer(3, Duration::from_secs(3), |_| {
        let mut b = [0u8; 4096];
        f.read_exact_at(4096, &mut b).unwrap();
    });
    let s = fs.throttle().stats();
    near("read IOs under the combined cap", s.read_ios - before.read_ios, elapsed, 500);
}

#[test]
fn reads_and_writes_together_stay_within_five_percent_of_the_combined_byte_cap() {
    // KVM's `total_bytes_sec`: a reader and a writer share 4 MiB/s, whatever the split.
    let cap = 4 << 20;
    let (fs, _sim) = throttled(IoLimits { bytes_per_sec: cap, ..Default::default() });
    let mut w = fs.create(Path::new("/d/r")).unwrap();
    w.append(&vec![1u8; 1 << 20]).unwrap();
    drop(w);
    let r = fs.open_random(Path::new("/d/r")).unwrap();
    let w = parking_lot::Mutex::new(fs.create(Path::new("/d/w")).unwrap());
    let before = fs.throttle().stats();
    let elapsed = hammer(2, Duration::from_secs(3), |i| {
        if i == 0 {
            let mut b = vec![0u8; 32 << 10];
            r.read_exact_at(0, &mut b).unwrap();
        } else {
            w.lock().append(&[2u8; 48 << 10]).unwrap();
        }
    });
    let s = fs.throttle().stats();
    let (read, written) = (s.read_bytes - before.read_bytes, s.write_bytes - before.write_bytes);
    near("read + written bytes", read + written, elapsed, cap);
    assert!(read > cap && written > cap, "both directions got a share: {s}");
}

#[test]
fn no_request_waits_longer_than_the_queue_before_it() {
    // 100 IOs per second: a request costs 10 ms of the device; with 4 threads each waits for
    // at most the 3 others' reservations and its own, less the 100 ms burst, plus scheduling.
    let (fs, _sim) = throttled(IoLimits { write_iops: 100, ..Default::default() });
    let files: Vec<_> = (0..4)
        .map(|i| parking_lot::Mutex::new(fs.create(Path::new(&format!("/d/{i}"))).unwrap()))
        .collect();
    hammer(4, Duration::from_millis(1500), |i| {
        let mut f = files[i].lock();
        f.append(b"x").unwrap();
        f.start_writeback().unwrap();
    });
    let s = fs.throttle().stats();
    assert!(s.max_wait_micros < 100_000, "a request waited {} us: {s}", s.max_wait_micros);
}

#[test]
fn apply_wraps_once_and_refuses_nothing_to_do() {
    let sim: Arc<dyn Fs> = SimFs::new();
    let same = apply(sim.clone(), IoLimits::default()).unwrap();
    assert!(same.throttle().is_none(), "no caps, no wrapper");
    let limits = IoLimits { read_iops: 10, ..Default::default() };
    let once = apply(sim, limits).unwrap();
    let twice = apply(once.clone(), limits).unwrap();
    assert!(Arc::ptr_eq(&once, &twice), "a reopen with the handle's own options wraps again");
    let other = apply(once, IoLimits { read_iops: 20, ..Default::default() }).unwrap();
    assert_eq!(other.throttle().unwrap().limits().read_iops, 20);
    assert!(ThrottledFs::new(SimFs::new(), IoLimits::default()).is_err());
}
