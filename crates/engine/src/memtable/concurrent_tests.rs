//! Several writers inserting at once (`insert_batch_concurrent`, the members of a write group),
//! one inserting serially beside them (`insert_batch`: plain stores whenever no concurrent
//! insert is linking, its splice reused between its own inserts), and readers iterating
//! meanwhile: every entry lands, each level stays sorted and a sublist of the one below, and
//! readers always see sorted entries whose values match their keys.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::key::{compare_internal, InternalKey};

/// Readers iterating `mem` until `done`: entries sorted, each value its key's sequence.
fn spawn_readers(mem: &Arc<MemTable>, done: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..2)
        .map(|_| {
            let (mem, done) = (Arc::clone(mem), Arc::clone(done));
            std::thread::spawn(move || {
                while !done.load(AtomicOrdering::Acquire) {
                    let mut it = mem.iter();
                    it.seek_to_first();
                    let mut prev: Option<Vec<u8>> = None;
                    while it.valid() {
                        let k = it.key().to_vec();
                        let p = parse_internal_key(&k).expect("well-formed key");
                        assert_eq!(it.value(), p.seq.to_le_bytes().as_slice(), "torn entry");
                        if let Some(pk) = &prev {
                            assert_eq!(compare_internal(pk, &k), Ordering::Less, "unsorted");
                        }
                        prev = Some(k);
                        it.next();
                    }
                }
            })
        })
        .collect()
}

/// Every level sorted and a sublist of the one below, and exactly `want` at level 0.
fn check_whole(mem: &Arc<MemTable>, want: &BTreeSet<InternalKey>, round: u64) {
    assert_eq!(mem.list.check_levels(compare_internal), want.len(), "round {round}");
    let mut it = mem.iter();
    it.seek_to_first();
    for k in want {
        assert!(it.valid(), "round {round}: entries missing");
        assert_eq!(it.key(), k.0.as_slice(), "round {round}");
        it.next();
    }
    assert!(!it.valid());
    assert_eq!(mem.num_entries(), want.len() as u64);
}

/// A serial writer of ascending keys (its splice fits every time no concurrent insert reset
/// it) interleaved with two concurrent writers of keys between its keys, in bursts, so that the
/// serial writer alternates between linking alone and beside them: it must never link alone
/// while another links, nor from a splice their links made stale.
/// Joins the writers (each returns the keys it inserted), stops and joins the readers, then
/// checks the list holds exactly those keys.
fn join_and_check(
    mem: &Arc<MemTable>,
    writers: Vec<std::thread::JoinHandle<Vec<InternalKey>>>,
    done: &AtomicBool,
    readers: Vec<std::thread::JoinHandle<()>>,
    round: u64,
) {
    let mut want: BTreeSet<InternalKey> = BTreeSet::new();
    for t in writers {
        want.extend(t.join().expect("writer panicked"));
    }
    done.store(true, AtomicOrdering::Release);
    for r in readers {
        r.join().expect("reader panicked");
    }
    check_whole(mem, &want, round);
}

#[test]
fn lone_inserts_between_concurrent_bursts_keep_the_list_whole() {
    for round in 0..4u64 {
        let mem = Arc::new(MemTable::new());
        let done = Arc::new(AtomicBool::new(false));
        let readers = spawn_readers(&mem, &done);
        let n = 3000u64;
        let threads: Vec<_> = (0..3u64)
            .map(|w| {
                let mem = Arc::clone(&mem);
                std::thread::spawn(move || {
                    let mut rng = StdRng::seed_from_u64(round * 10 + w);
                    let mut keys = Vec::new();
                    for i in 0..n {
                        let seq = 1 + i * 3 + w;
                        // Writer 0: k<i>0 ascending; 1 and 2: k<i>1, k<i>2 (right after it).
                        let k = format!("k{i:06}{w}").into_bytes();
                        let mut batch = WriteBatch::new();
                        batch.put(&k, seq.to_le_bytes());
                        keys.push(InternalKey::new(&k, seq, ValueKind::Put));
                        if w == 0 {
                            mem.insert_batch(&batch, seq);
                        } else {
                            mem.insert_batch_concurrent(&batch, seq);
                            if rng.gen_range(0..8) == 0 {
                                std::thread::yield_now();
                            }
                        }
                    }
                    keys
                })
            })
            .collect();
        join_and_check(&mem, threads, &done, readers, round);
    }
}

#[test]
fn concurrent_writers_and_readers_keep_the_list_whole_and_sorted() {
    for round in 0..4u64 {
        let mem = Arc::new(MemTable::new());
        let done = Arc::new(AtomicBool::new(false));
        let (writers, batches, per_batch) = (4u64, 300u64, 8u64);
        let readers = spawn_readers(&mem, &done);
        // Writer `w` owns sequences w*batches*per_batch+1.. (as a group's members own
        // consecutive ranges); keys collide across writers (different sequences).
        let threads: Vec<_> = (0..=writers)
            .map(|w| {
                let mem = Arc::clone(&mem);
                std::thread::spawn(move || {
                    let mut rng = StdRng::seed_from_u64(round * 100 + w);
                    let mut keys = Vec::new();
                    for b in 0..batches {
                        let first = 1 + (w * batches + b) * per_batch;
                        let mut batch = WriteBatch::new();
                        for i in 0..per_batch {
                            let k = format!("k{:05}", rng.gen_range(0..2000u32)).into_bytes();
                            batch.put(&k, (first + i).to_le_bytes());
                            keys.push(InternalKey::new(&k, first + i, ValueKind::Put));
                        }
                        // The last "writer" inserts serially, as a lone leader would.
                        if w == writers {
                            mem.insert_batch(&batch, first);
                        } else {
                            mem.insert_batch_concurrent(&batch, first);
                        }
                    }
                    keys
                })
            })
            .collect();
        join_and_check(&mem, threads, &done, readers, round);
    }
}
