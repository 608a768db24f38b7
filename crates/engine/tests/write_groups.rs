//! Write groups under concurrency (`db/write_group.rs`): pipelined stages, members inserting in
//! parallel, hand-offs by spinning or by blocking. With several writer threads, small memtables
//! (switches during the pipeline) and every combination of `allow_concurrent_memtable_write`
//! and `enable_write_thread_adaptive_yield`:
//! - each writer's writes become visible in the order it made them, and a batch all at once
//!   (a reader that sees a writer's k-th write sees its earlier ones, at a snapshot too);
//! - after the writers finish, every write is there, and again after a reopen (WAL, memtables
//!   and SSTs agree);
//! - the sequence numbers handed out cover the writes exactly (no gap, no reuse).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use talus::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

const WRITERS: u32 = 4;
const PER_WRITER: u32 = 1500;
/// Puts per write: enough that a group of two has the entries to insert in parallel (the write
/// path's threshold is 32).
const PUTS: u32 = 24;

fn key(w: u32, i: u32) -> Vec<u8> {
    format!("w{w}-{i:06}").into_bytes()
}

/// Writer `w`'s i-th write: a batch of its key i and a counter key holding i (so a reader can
/// tell how far it got and check all of that is visible).
fn write(db: &Db, w: u32, i: u32, sync: bool) {
    // The counter first: a batch seen in part would show the counter without its key.
    let mut b = WriteBatch::new();
    b.put(format!("count{w}"), i.to_le_bytes());
    for j in 0..PUTS - 2 {
        b.put(format!("f{w}-{:03}-{i:06}", j * 37 % 101), [j as u8; 16]);
    }
    b.put(key(w, i), i.to_le_bytes());
    db.write(b, &WriteOptions { sync, ..Default::default() }).unwrap();
}

fn counter(db: &Db, w: u32, ro: &ReadOptions) -> Option<u32> {
    db.get_opt(format!("count{w}"), ro)
        .unwrap()
        .map(|v| u32::from_le_bytes(v[..4].try_into().unwrap()))
}

fn run(concurrent: bool, adaptive: bool) {
    let ctx = format!("concurrent={concurrent} adaptive={adaptive}");
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        allow_concurrent_memtable_write: concurrent,
        enable_write_thread_adaptive_yield: adaptive,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let db = db.clone();
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    write(&db, w, i, i % 97 == 0);
                }
            });
        }
        for _ in 0..2 {
            let (db, stop, ctx) = (db.clone(), stop.clone(), ctx.clone());
            s.spawn(move || {
                let mut round = 0u32;
                while !stop.load(Ordering::Acquire) {
                    round += 1;
                    let snap = db.snapshot();
                    let ro = ReadOptions { snapshot: Some(snap), ..Default::default() };
                    for w in 0..WRITERS {
                        let Some(c) = counter(&db, w, &ro) else { continue };
                        // Every earlier write of w, and this one (the same batch), is visible.
                        for i in [c, c / 2, c.saturating_sub(1), (c * 7 + round) % (c + 1)] {
                            let got = db.get_opt(key(w, i), &ro).unwrap();
                            assert_eq!(
                                got.as_deref(),
                                Some(&i.to_le_bytes()[..]),
                                "{ctx}: w{w} {i} <= {c}"
                            );
                        }
                        // A later write of w is not (the counter was read at the snapshot).
                        assert_eq!(
                            db.get_opt(key(w, c + 1), &ro).unwrap(),
                            None,
                            "{ctx}: w{w} {c}+1"
                        );
                    }
                }
            });
        }
        // The writers are the first WRITERS threads; stop the readers when they are done.
        s.spawn(|| {
            let ro = ReadOptions::default();
            while (0..WRITERS).any(|w| counter(&db, w, &ro) != Some(PER_WRITER - 1)) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            stop.store(true, Ordering::Release);
        });
    });
    let check = |db: &Db, when: &str| {
        for w in 0..WRITERS {
            for i in 0..PER_WRITER {
                assert_eq!(
                    db.get(key(w, i)).unwrap().as_deref(),
                    Some(&i.to_le_bytes()[..]),
                    "{ctx} {when}"
                );
            }
        }
    };
    check(&db, "before reopen");
    // PUTS puts per write: the sequence numbers end exactly there.
    assert_eq!(db.snapshot().sequence(), u64::from(PUTS * WRITERS * PER_WRITER), "{ctx}");
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db, "after reopen");
}

#[test]
fn writers_in_groups_publish_in_order_and_lose_nothing() {
    for (concurrent, adaptive) in [(true, true), (true, false), (false, true), (false, false)] {
        run(concurrent, adaptive);
    }
}
