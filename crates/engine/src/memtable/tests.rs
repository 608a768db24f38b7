//! Memtable tests: a `BTreeMap` model, concurrent readers, range tombstones, accounting.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::iter::VecIterator;
use crate::key::{compare_internal, make_internal_key, seek_key, InternalKey};

fn random_key(rng: &mut StdRng, space: u32) -> Vec<u8> {
    let n = rng.gen_range(0..space);
    // Variable lengths and a shared prefix exercise prefix ordering ("k1" < "k10" < "k2").
    format!("k{n}").into_bytes()
}

/// Fills a memtable and a model with the same random entries; returns the max sequence.
fn fill(mem: &MemTable, model: &mut BTreeMap<InternalKey, Vec<u8>>, rng: &mut StdRng, n: u64) {
    for seq in 1..=n {
        let key = random_key(rng, 300);
        let kind = if rng.gen_bool(0.2) { ValueKind::Delete } else { ValueKind::Put };
        let vlen =
            if rng.gen_bool(0.01) { rng.gen_range(0..200_000) } else { rng.gen_range(0..40) };
        let value: Vec<u8> = (0..vlen).map(|i| (i as u64 ^ seq) as u8).collect();
        mem.add(seq, kind, &key, &value);
        model.insert(InternalKey::new(&key, seq, kind), value);
    }
}

fn model_get(
    model: &BTreeMap<InternalKey, Vec<u8>>,
    key: &[u8],
    seq: u64,
) -> Option<(ValueKind, u64, Vec<u8>)> {
    let start = InternalKey(seek_key(key, seq));
    let (k, v) = model.range(start..).next()?;
    let p = parse_internal_key(&k.0)?;
    (p.user_key == key).then(|| (p.kind, p.seq, v.clone()))
}

#[test]
fn random_inserts_match_model() {
    let mut rng = StdRng::seed_from_u64(1);
    let mem = Arc::new(MemTable::new());
    let mut model = BTreeMap::new();
    let n = 5000;
    fill(&mem, &mut model, &mut rng, n);
    assert_eq!(mem.num_entries(), n);
    let deletes = model.keys().filter(|k| k.0[k.0.len() - 8] == 0).count() as u64;
    assert_eq!(mem.num_deletes(), deletes);

    // Point lookups at several snapshots, including keys never written.
    for _ in 0..3000 {
        let key = random_key(&mut rng, 330);
        let seq = rng.gen_range(0..=n + 1);
        let got = mem.get(&key, seq).map(|(k, s, v)| (k, s, v.to_vec()));
        assert_eq!(got, model_get(&model, &key, seq), "key {key:?} seq {seq}");
    }

    // Full iteration both ways.
    let want: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.0.clone(), v.clone())).collect();
    let mut it = mem.iter();
    let mut got = Vec::new();
    it.seek_to_first();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert!(got == want, "forward iteration differs");
    got.clear();
    it.seek_to_last();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    got.reverse();
    assert!(got == want, "backward iteration differs");

    // Random seeks and steps against the reference iterator.
    let mut reference = VecIterator::new(want);
    for _ in 0..2000 {
        let key = random_key(&mut rng, 330);
        let target = make_internal_key(&key, rng.gen_range(0..=n + 1), ValueKind::Put);
        match rng.gen_range(0..6) {
            0 => {
                it.seek(&target);
                reference.seek(&target);
            }
            1 => {
                it.seek_for_prev(&target);
                reference.seek_for_prev(&target);
            }
            2 if reference.valid() => {
                it.next();
                reference.next();
            }
            3 if reference.valid() => {
                it.prev();
                reference.prev();
            }
            4 => {
                it.seek_to_first();
                reference.seek_to_first();
            }
            _ => {
                it.seek_to_last();
                reference.seek_to_last();
            }
        }
        assert_eq!(it.valid(), reference.valid());
        if it.valid() {
            assert_eq!(it.key(), reference.key());
            assert_eq!(it.value(), reference.value());
        }
    }
    assert!(it.status().is_ok());
}

/// Inserts in runs that hit and miss the last insert's splice (ascending, descending, the same
/// user key again, random), checking every level of the list and lookups against a model.
#[test]
fn splice_hits_and_misses_keep_every_level_sorted() {
    let mut rng = StdRng::seed_from_u64(7);
    let mem = Arc::new(MemTable::new());
    let mut model = BTreeMap::new();
    let mut seq = 0u64;
    let mut put = |k: u32, model: &mut BTreeMap<InternalKey, Vec<u8>>| {
        seq += 1;
        let key = format!("{k:08}").into_bytes();
        let value = seq.to_le_bytes().to_vec();
        mem.add(seq, ValueKind::Put, &key, &value);
        model.insert(InternalKey::new(&key, seq, ValueKind::Put), value);
    };
    for round in 0..40u32 {
        let base = rng.gen_range(0..100_000u32);
        let len = rng.gen_range(1..200u32);
        match round % 4 {
            0 => (0..len).for_each(|i| put(base + i, &mut model)),
            1 => (0..len).rev().for_each(|i| put(base + i, &mut model)),
            2 => (0..len).for_each(|_| put(base, &mut model)),
            _ => (0..len).for_each(|_| put(rng.gen_range(0..100_000), &mut model)),
        }
    }
    assert_eq!(mem.list.check_levels(compare_internal), model.len());
    let got: Vec<Vec<u8>> = {
        let mut it = mem.iter();
        it.seek_to_first();
        let mut v = Vec::new();
        while it.valid() {
            v.push(it.key().to_vec());
            it.next();
        }
        v
    };
    assert!(got.iter().eq(model.keys().map(|k| &k.0)));
    for k in model.keys().step_by(7) {
        let p = parse_internal_key(&k.0).unwrap();
        let (_, s, _) = mem.get(p.user_key, MAX_SEQUENCE).unwrap();
        let newest = model_get(&model, p.user_key, MAX_SEQUENCE).unwrap();
        assert_eq!(s, newest.1);
    }
}

#[test]
fn empty_memtable_and_edge_keys() {
    let mem = Arc::new(MemTable::new());
    assert!(mem.is_empty());
    assert_eq!(mem.get(b"a", MAX_SEQUENCE), None);
    let mut it = mem.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"short"); // shorter than a trailer: must not panic
    assert!(!it.valid());

    mem.add(5, ValueKind::Put, b"", b"empty key");
    mem.add(6, ValueKind::Put, b"a", b"");
    mem.add(7, ValueKind::Delete, b"a", b"");
    assert_eq!(mem.get(b"", 5), Some((ValueKind::Put, 5, &b"empty key"[..])));
    assert_eq!(mem.get(b"", 4), None);
    assert_eq!(mem.get(b"a", 6), Some((ValueKind::Put, 6, &b""[..])));
    assert_eq!(mem.get(b"a", u64::MAX), Some((ValueKind::Delete, 7, &b""[..])));
    it.seek(b"xy");
    it.seek_to_last();
    assert_eq!(it.key(), make_internal_key(b"a", 6, ValueKind::Put).as_slice());
    it.prev();
    it.prev();
    assert_eq!(it.key(), make_internal_key(b"", 5, ValueKind::Put).as_slice());
    it.prev();
    assert!(!it.valid());
}

#[test]
fn range_tombstones_and_accounting() {
    let mem = MemTable::new();
    assert!(!mem.has_range_tombstones());
    assert!(mem.range_tombstones().is_empty());
    let base = mem.approximate_memory_usage();
    mem.add(1, ValueKind::Put, b"a", b"1");
    let after_put = mem.approximate_memory_usage();
    assert!(after_put > base);
    mem.add(2, ValueKind::RangeDelete, b"a", b"m");
    mem.add(3, ValueKind::RangeDelete, b"c", b"z");
    mem.add(4, ValueKind::SingleDelete, b"q", b"");
    assert!(mem.has_range_tombstones());
    assert!(mem.approximate_memory_usage() > after_put);
    let ts = mem.range_tombstones();
    assert_eq!(ts.len(), 2);
    assert_eq!(
        (ts[0].start.as_slice(), ts[0].end.as_slice(), ts[0].seq),
        (&b"a"[..], &b"m"[..], 2)
    );
    assert_eq!(
        (ts[1].start.as_slice(), ts[1].end.as_slice(), ts[1].seq),
        (&b"c"[..], &b"z"[..], 3)
    );
    assert_eq!(mem.num_entries(), 4);
    assert_eq!(mem.num_deletes(), 3);
    // Range tombstones are not point entries.
    assert_eq!(mem.get(b"c", 10), None);
    assert_eq!(mem.get(b"a", 10), Some((ValueKind::Put, 1, &b"1"[..])));

    // A big value lands in its own chunk and is accounted for.
    let big = vec![7u8; 3 << 20];
    mem.add(5, ValueKind::Put, b"big", &big);
    assert!(mem.approximate_memory_usage() >= after_put + big.len());
    assert_eq!(mem.get(b"big", 5).map(|e| e.2.len()), Some(big.len()));
}

#[test]
fn concurrent_readers_see_sorted_prefixes() {
    let mem = Arc::new(MemTable::new());
    let done = Arc::new(AtomicBool::new(false));
    let n: u64 = 20_000;
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let mem = Arc::clone(&mem);
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + r);
                let mut rounds = 0;
                while !done.load(AtomicOrdering::Acquire) || rounds < 3 {
                    rounds += 1;
                    let mut it = mem.iter();
                    let mut prev: Option<Vec<u8>> = None;
                    let mut count = 0u64;
                    let forward = rng.gen_bool(0.5);
                    if forward {
                        it.seek_to_first();
                    } else {
                        it.seek_to_last();
                    }
                    while it.valid() {
                        let k = it.key();
                        let p = parse_internal_key(k).expect("well-formed key");
                        // The value is derived from the key: a torn read would show.
                        assert_eq!(it.value(), p.seq.to_le_bytes().as_slice());
                        if let Some(pk) = &prev {
                            let o = compare_internal(pk, k);
                            let want = if forward { Ordering::Less } else { Ordering::Greater };
                            assert_eq!(o, want, "order broken");
                        }
                        prev = Some(k.to_vec());
                        count += 1;
                        if forward {
                            it.next()
                        } else {
                            it.prev()
                        }
                    }
                    assert!(count <= n);
                    // Every entry whose add finished is visible to get.
                    let seq = rng.gen_range(1..=n);
                    let key = format!("key{:06}", seq * 7919 % n);
                    if let Some((kind, s, v)) = mem.get(key.as_bytes(), MAX_SEQUENCE) {
                        assert_eq!(kind, ValueKind::Put);
                        assert_eq!(v, s.to_le_bytes().as_slice());
                    }
                }
            })
        })
        .collect();
    for seq in 1..=n {
        let key = format!("key{:06}", seq * 7919 % n);
        mem.add(seq, ValueKind::Put, key.as_bytes(), &seq.to_le_bytes());
    }
    done.store(true, AtomicOrdering::Release);
    for r in readers {
        r.join().expect("reader panicked");
    }
    let mut it = mem.iter();
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    assert_eq!(count, n);
}

/// A micro benchmark: `cargo test -p talus --release --lib memtable::tests::bench -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn bench_insert_get_scan() {
    let n: u64 = 200_000;
    let mut rng = StdRng::seed_from_u64(3);
    let keys: Vec<Vec<u8>> =
        (0..n).map(|_| format!("user{:016}", rng.gen::<u64>()).into_bytes()).collect();
    let value = [b'v'; 100];
    let mem = Arc::new(MemTable::new());
    let t = std::time::Instant::now();
    for (i, k) in keys.iter().enumerate() {
        mem.add(i as u64 + 1, ValueKind::Put, k, &value);
    }
    let insert = t.elapsed();
    let t = std::time::Instant::now();
    let mut found = 0;
    for k in &keys {
        found += usize::from(mem.get(k, MAX_SEQUENCE).is_some());
    }
    let get = t.elapsed();
    assert_eq!(found as u64, n);
    let t = std::time::Instant::now();
    let mut it = mem.iter();
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    let scan = t.elapsed();
    assert_eq!(count, n);
    // Calibration on a shared machine: the same keys into a BTreeMap.
    let t = std::time::Instant::now();
    let mut model = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        model.insert(InternalKey::new(k, i as u64 + 1, ValueKind::Put), value);
    }
    let btree = t.elapsed();
    let per = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
    println!("BTreeMap<InternalKey> insert {:.0} ns/op", per(btree));
    println!(
        "{n} entries, {} MiB: insert {:.0} ns/op, get {:.0} ns/op, scan {:.1} ns/entry",
        mem.approximate_memory_usage() >> 20,
        per(insert),
        per(get),
        per(scan)
    );
}

/// The node prefix orders keys whenever it differs, including short keys and zero bytes.
#[test]
fn key_prefix_order_agrees_with_bytewise_order() {
    use super::skiplist::key_prefix;
    let mut rng = StdRng::seed_from_u64(3);
    let alphabet = [0u8, 1, 0x7f, 0x80, 0xff];
    let keys: Vec<Vec<u8>> = (0..400)
        .map(|_| {
            let len = rng.gen_range(0..12);
            (0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect()
        })
        .collect();
    let mut decided = 0;
    for a in &keys {
        for b in &keys {
            match key_prefix(a).cmp(&key_prefix(b)) {
                Ordering::Equal => {}
                o => {
                    decided += 1;
                    assert_eq!(o, a.cmp(b), "{a:?} vs {b:?}");
                }
            }
        }
    }
    assert!(decided > 100_000, "{decided}");
}

/// A node's prefix as a search reads it from the entry (an 8-byte load, masked past a short user
/// key) equals `key_prefix` of its user key, whatever the trailer's bytes; and every level of the
/// list is sorted after inserts whose keys share prefixes or are shorter than 8 bytes.
#[test]
fn node_prefix_from_the_entry_equals_key_prefix() {
    use super::skiplist::{key_prefix, SkipList};
    let list = SkipList::new();
    let mut rng = StdRng::seed_from_u64(5);
    let alphabet = [0u8, 1, 0x7f, 0x80, 0xff];
    for i in 0..3000u64 {
        let len = rng.gen_range(0..13);
        let user: Vec<u8> = (0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect();
        // Sequences with non-zero bytes everywhere, so an unmasked load would show them.
        let seq = 0x00ff_ffff_ffff_0000 | i;
        let ikey = make_internal_key(&user, seq, ValueKind::Put);
        list.insert(
            key_prefix(&user),
            ikey.len(),
            |dst| dst.copy_from_slice(&ikey),
            |n| compare_internal(n, &ikey),
            b"v",
        );
    }
    let mut n = list.first();
    let mut seen = 0;
    while let Some(node) = n {
        let user = &list.key(node)[..list.key(node).len() - 8];
        assert_eq!(list.prefix_of(node), key_prefix(user), "{user:?}");
        seen += 1;
        n = list.next_of(node);
    }
    assert_eq!(seen, 3000);
    assert_eq!(list.check_levels(compare_internal), 3000);
}

/// The cached fragmented tombstones follow every add: a reader after an add sees the new
/// tombstone (never the form built before it), and readers between adds share one build.
#[test]
fn fragmented_range_tombstones_follow_adds() {
    let mem = MemTable::new();
    assert!(mem.fragmented_range_tombstones().is_none());
    mem.add(1, ValueKind::Put, b"k", b"v");
    assert!(mem.fragmented_range_tombstones().is_none());
    mem.add(2, ValueKind::RangeDelete, b"a", b"c");
    let first = mem.fragmented_range_tombstones().expect("one tombstone");
    assert_eq!(first.max_covering_seq(b"b", 10), 2);
    assert_eq!(first.max_covering_seq(b"k", 10), 0);
    let again = mem.fragmented_range_tombstones().expect("one tombstone");
    assert!(Arc::ptr_eq(&first, &again), "a second read shares the first build");
    mem.add(3, ValueKind::RangeDelete, b"j", b"m");
    let second = mem.fragmented_range_tombstones().expect("two tombstones");
    assert!(!Arc::ptr_eq(&first, &second), "an add invalidates the cached form");
    assert_eq!(second.max_covering_seq(b"k", 10), 3);
    assert_eq!(second.max_covering_seq(b"k", 2), 0, "the read sequence still filters");
    assert_eq!(second.to_tombstones().len(), 2);
}

/// Readers racing a writer of range tombstones: once a tombstone's `add` has returned (and
/// its sequence is published below), every later lookup sees it.
#[test]
fn fragmented_range_tombstones_under_concurrent_adds() {
    let mem = Arc::new(MemTable::new());
    let published = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (mem, published, done) = (mem.clone(), published.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(AtomicOrdering::Acquire) {
                    let seq = published.load(AtomicOrdering::Acquire);
                    if seq == 0 {
                        continue;
                    }
                    let t = mem.fragmented_range_tombstones().expect("published tombstones");
                    let key = format!("k{seq:05}x");
                    assert_eq!(t.max_covering_seq(key.as_bytes(), seq), seq, "tombstone {seq}");
                }
            })
        })
        .collect();
    for seq in 1..=2000u64 {
        let (start, end) = (format!("k{seq:05}"), format!("k{seq:05}z"));
        mem.add(seq, ValueKind::RangeDelete, start.as_bytes(), end.as_bytes());
        published.store(seq, AtomicOrdering::Release);
    }
    done.store(true, AtomicOrdering::Release);
    for r in readers {
        r.join().expect("reader");
    }
}
