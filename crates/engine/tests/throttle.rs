//! A capped device (`Options::io_limits`, `fs::throttle`) under a whole database: point reads
//! that miss the cache are held to the read-IOPS cap within 5%, with direct reads and without,
//! and the counts are readable from the handle (`Db::io_throttle`); point reads and writes
//! together are held to the combined byte cap (`io_limit_bytes_per_sec`) within 5%, likewise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use talus::fs::fault::SimFs;
use talus::fs::throttle::IoLimits;
use talus::{Db, Options};

const KEYS: u32 = 20_000;

fn key(i: u32) -> [u8; 8] {
    (u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes()
}

/// A flushed database of `KEYS` keys on a fresh `SimFs`, and its options.
fn loaded(direct: bool) -> Options {
    let fs = SimFs::new();
    let base = Options {
        create_if_missing: true,
        block_size: 512,
        block_cache_capacity: 4096,
        use_direct_reads: direct,
        fs: fs.clone(),
        ..Default::default()
    };
    let db = Db::open("/db", base.clone()).unwrap();
    for i in 0..KEYS {
        db.put(key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    base
}

fn capped_reads(direct: bool) {
    let base = loaded(direct);
    let limits = IoLimits { read_iops: 300, ..Default::default() };
    let db = Db::open("/db", Options { io_limits: limits, ..base }).unwrap();
    assert_eq!(db.options().io_limits, limits);
    let before = db.io_throttle().expect("a capped database reports its counts");
    let t0 = Instant::now();
    let window = Duration::from_secs(3);
    std::thread::scope(|s| {
        for t in 0..2u32 {
            let db = &db;
            s.spawn(move || {
                let mut i = t * 7919;
                while t0.elapsed() < window {
                    i = (i + 104_729) % KEYS;
                    assert!(db.get(key(i)).unwrap().is_some());
                }
            });
        }
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let s = db.io_throttle().unwrap();
    let rate = (s.read_ios - before.read_ios) as f64 / elapsed;
    assert!((rate - 300.0).abs() <= 15.0, "direct={direct}: {rate:.0} read IOs/s against 300: {s}");
    assert!(s.waits > 0, "{s}");
}

#[test]
fn point_reads_are_held_to_the_read_iops_cap() {
    capped_reads(false);
}

#[test]
fn direct_point_reads_are_held_to_the_read_iops_cap() {
    capped_reads(true);
}

/// Two readers whose point reads miss the cache and a writer, under a combined byte cap: read
/// and written bytes together within 5% of the cap, both directions served.
fn capped_reads_and_writes(direct: bool) {
    let base = loaded(direct);
    let cap = 1 << 20;
    let limits = IoLimits { bytes_per_sec: cap, ..Default::default() };
    let db = Db::open("/db", Options { io_limits: limits, ..base }).unwrap();
    let before = db.io_throttle().unwrap();
    let t0 = Instant::now();
    let window = Duration::from_secs(3);
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let db = &db;
            s.spawn(move || {
                let mut i = t * 7919;
                while t0.elapsed() < window {
                    i = (i + 104_729) % KEYS;
                    if t == 2 {
                        db.put(key(i), [b'w'; 1000]).unwrap();
                    } else {
                        assert!(db.get(key(i)).unwrap().is_some());
                    }
                }
            });
        }
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let s = db.io_throttle().unwrap();
    let (read, written) = (s.read_bytes - before.read_bytes, s.write_bytes - before.write_bytes);
    let rate = (read + written) as f64 / elapsed;
    let err = (rate - cap as f64).abs() / cap as f64;
    assert!(err <= 0.05, "direct={direct}: {rate:.0} B/s against {cap}: {s}");
    assert!(read > 0 && written > 0 && s.waits > 0, "{s}");
}

#[test]
fn point_reads_and_writes_are_held_to_the_combined_byte_cap() {
    capped_reads_and_writes(false);
}

#[test]
fn direct_point_reads_and_writes_are_held_to_the_combined_byte_cap() {
    capped_reads_and_writes(true);
}

#[test]
fn an_uncapped_database_has_no_throttle() {
    let fs: Arc<SimFs> = SimFs::new();
    let db =
        Db::open("/db", Options { create_if_missing: true, fs, ..Default::default() }).unwrap();
    assert!(db.io_throttle().is_none());
}
