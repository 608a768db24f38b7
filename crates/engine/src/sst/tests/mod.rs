//! Table tests: builder + reader round trips against a model, iterator equivalence with
//! `VecIterator`, snapshots across block boundaries, caches, corruption, and the golden layout.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::cache::{Cache, LruCache};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::{InternalIterator, VecIterator};
use crate::key::{self, InternalKey, ValueKind};
use crate::options::{ChecksumType, CompressionType};

use super::{Block, TableBuilder, TableBuilderOptions, TableProperties, TableReader};

mod corruption;
mod flush_policy;
mod golden;
mod partitioned;
mod random;

/// An in-memory writable file whose bytes stay readable through the shared buffer.
pub(crate) struct MemWritable(pub(crate) Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.lock().unwrap().len() as u64
    }
}

/// An in-memory random-access file.
pub(crate) struct MemRandom(pub(crate) Vec<u8>);

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = offset as usize;
        match self.0.get(start..start + buf.len()) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(Error::io(
                "mem read",
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "short"),
            )),
        }
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

pub(crate) fn opts(block_size: usize, compression: CompressionType) -> TableBuilderOptions {
    TableBuilderOptions {
        block_size,
        block_restart_interval: 4,
        bloom_bits_per_key: 10,
        compression,
        ..Default::default()
    }
}

/// Builds a table in memory from sorted `entries` and `tombstones`.
pub(crate) fn build(
    o: TableBuilderOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
    tombstones: &[RangeTombstone],
) -> (Vec<u8>, TableProperties) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(o, Box::new(MemWritable(Arc::clone(&buf))), "mem.sst".into());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    for t in tombstones {
        b.add_range_tombstone(t).unwrap();
    }
    let props = b.finish().unwrap();
    let bytes = buf.lock().unwrap().clone();
    assert_eq!(props.file_size, bytes.len() as u64);
    (bytes, props)
}

pub(crate) fn open(bytes: Vec<u8>, cache: Option<Arc<dyn Cache<Block>>>) -> Result<TableReader> {
    TableReader::open(Arc::new(MemRandom(bytes)), 7, "mem.sst".into(), cache)
}

/// Random sorted entries: user keys with shared prefixes, 1-3 versions each, puts and deletes,
/// at most one entry per (user key, sequence).
pub(crate) fn random_entries(rng: &mut StdRng, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut m: BTreeMap<InternalKey, Vec<u8>> = BTreeMap::new();
    while m.len() < n {
        let len = rng.gen_range(1..12);
        let uk: Vec<u8> = (0..len).map(|_| b"abcd\xff"[rng.gen_range(0..5)]).collect();
        for _ in 0..rng.gen_range(1..4) {
            let seq = rng.gen_range(1..1000);
            let kind = if rng.gen_bool(0.2) { ValueKind::Delete } else { ValueKind::Put };
            let vlen = if kind == ValueKind::Delete { 0 } else { rng.gen_range(0..40) };
            let v: Vec<u8> = (0..vlen).map(|_| rng.gen_range(b'a'..=b'e')).collect();
            // One entry per (user key, seq), as in a real table.
            m.remove(&InternalKey::new(&uk, seq, ValueKind::Put));
            m.remove(&InternalKey::new(&uk, seq, ValueKind::Delete));
            m.insert(InternalKey::new(&uk, seq, kind), v);
        }
    }
    m.into_iter().map(|(k, v)| (k.0, v)).collect()
}

/// Drives `it` and `model` with the same random operations and compares every position.
pub(crate) fn check_equivalent(
    it: &mut dyn InternalIterator,
    entries: &[(Vec<u8>, Vec<u8>)],
    rng: &mut StdRng,
    ops: usize,
) {
    let mut model = VecIterator::new(entries.to_vec());
    let random_target = |rng: &mut StdRng| -> Vec<u8> {
        if !entries.is_empty() && rng.gen_bool(0.5) {
            let (k, _) = &entries[rng.gen_range(0..entries.len())];
            let uk = key::user_key(k);
            key::make_internal_key(uk, rng.gen_range(0..1100), ValueKind::Put)
        } else {
            let len = rng.gen_range(0..12);
            let uk: Vec<u8> = (0..len).map(|_| b"abcde\xff"[rng.gen_range(0..6)]).collect();
            key::make_internal_key(&uk, rng.gen_range(0..1100), ValueKind::Put)
        }
    };
    for step in 0..ops {
        match rng.gen_range(0..8) {
            0 => {
                it.seek_to_first();
                model.seek_to_first();
            }
            1 => {
                it.seek_to_last();
                model.seek_to_last();
            }
            2 => {
                let t = random_target(rng);
                it.seek(&t);
                model.seek(&t);
            }
            3 => {
                let t = random_target(rng);
                it.seek_for_prev(&t);
                model.seek_for_prev(&t);
            }
            4 | 5 => {
                if model.valid() {
                    it.next();
                    model.next();
                }
            }
            _ => {
                if model.valid() {
                    it.prev();
                    model.prev();
                }
            }
        }
        assert_eq!(it.valid(), model.valid(), "step {step}");
        it.status().unwrap();
        if model.valid() {
            assert_eq!(it.key(), model.key(), "step {step}");
            assert_eq!(it.value(), model.value(), "step {step}");
        }
    }
}

/// What `get(uk, seq)` must return according to the sorted entries.
fn model_get(
    entries: &[(Vec<u8>, Vec<u8>)],
    uk: &[u8],
    seq: u64,
) -> Option<(ValueKind, u64, Vec<u8>)> {
    let target = key::seek_key(uk, seq);
    let i = entries.partition_point(|e| key::compare_internal(&e.0, &target).is_lt());
    let (k, v) = entries.get(i)?;
    let p = key::parse_internal_key(k).unwrap();
    (p.user_key == uk).then(|| (p.kind, p.seq, v.clone()))
}

const ALL_COMPRESSIONS: [CompressionType; 4] =
    [CompressionType::None, CompressionType::Snappy, CompressionType::Lz4, CompressionType::Zstd];

#[test]
fn round_trip_every_compression() {
    for (ci, &c) in ALL_COMPRESSIONS.iter().enumerate() {
        let mut rng = StdRng::seed_from_u64(ci as u64);
        let entries = random_entries(&mut rng, 2000);
        let (bytes, props) = build(opts(512, c), &entries, &[]);
        let r = Arc::new(open(bytes, None).unwrap());
        assert_eq!(r.properties(), &props);
        assert_eq!(props.num_entries, entries.len() as u64);
        assert!(props.num_data_blocks > 10);
        assert_eq!(props.smallest_point_key, entries[0].0);
        assert_eq!(props.largest_point_key, entries.last().unwrap().0);
        assert_eq!(props.compression, Some(c));
        let dels = entries.iter().filter(|e| key::trailer(&e.0) & 0xff == 0).count();
        assert_eq!(props.num_deletions, dels as u64);
        r.verify_checksums().unwrap();
        let handles = r.data_block_handles().unwrap();
        assert_eq!(handles.len() as u64, props.num_data_blocks);
        assert!(handles.windows(2).all(|w| w[0].offset + w[0].size + 5 == w[1].offset));
        assert!(r.has_filter());

        // Full scans both ways.
        let mut it = r.iter(false);
        it.seek_to_first();
        for (k, v) in &entries {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()));
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in entries.iter().rev() {
            assert_eq!(it.key(), k.as_slice());
            it.prev();
        }
        assert!(!it.valid());
        it.status().unwrap();

        // Point lookups at random snapshots, present and absent keys.
        for _ in 0..3000 {
            let uk = if rng.gen_bool(0.7) {
                key::user_key(&entries[rng.gen_range(0..entries.len())].0).to_vec()
            } else {
                (0..rng.gen_range(0..12)).map(|_| b"abcde"[rng.gen_range(0..5)]).collect()
            };
            let seq = rng.gen_range(0..1100);
            assert_eq!(r.get(&uk, seq, true).unwrap(), model_get(&entries, &uk, seq), "{c:?}");
        }
        for (k, _) in entries.iter().step_by(7) {
            assert!(r.may_contain(key::user_key(k)));
        }
        check_equivalent(r.iter(true).as_mut(), &entries, &mut rng, 3000);
    }
}

#[test]
fn compression_actually_shrinks_data() {
    let entries: Vec<_> = (0..3000u32)
        .map(|i| {
            (
                key::make_internal_key(format!("key{i:08}").as_bytes(), 1, ValueKind::Put),
                vec![b'x'; 100],
            )
        })
        .collect();
    let (_, none) = build(opts(4096, CompressionType::None), &entries, &[]);
    for c in [CompressionType::Snappy, CompressionType::Lz4, CompressionType::Zstd] {
        let (bytes, p) = build(opts(4096, c), &entries, &[]);
        assert!(p.data_size * 2 < none.data_size, "{c:?}: {} vs {}", p.data_size, none.data_size);
        let r = open(bytes, None).unwrap();
        let got = r.get(b"key00001234", 5, false).unwrap().unwrap();
        assert_eq!(got, (ValueKind::Put, 1, vec![b'x'; 100]));
    }
}

#[test]
fn snapshots_across_block_boundaries() {
    // One user key with 200 versions spans many tiny blocks.
    let mut entries = vec![(key::make_internal_key(b"a", 5, ValueKind::Put), b"a5".to_vec())];
    for seq in (1..=200u64).rev() {
        let kind = if seq % 10 == 0 { ValueKind::Delete } else { ValueKind::Put };
        entries.push((key::make_internal_key(b"k", seq * 2, kind), seq.to_le_bytes().to_vec()));
    }
    entries.push((key::make_internal_key(b"z", 1, ValueKind::Put), b"z1".to_vec()));
    let (bytes, props) = build(opts(64, CompressionType::None), &entries, &[]);
    assert!(props.num_data_blocks > 20);
    let r = Arc::new(open(bytes, None).unwrap());
    for snap in 0..=405u64 {
        assert_eq!(r.get(b"k", snap, false).unwrap(), model_get(&entries, b"k", snap), "{snap}");
    }
    assert_eq!(r.get(b"k", 1, false).unwrap(), None);
    assert_eq!(r.get(b"a", 4, false).unwrap(), None);
    assert_eq!(r.get(b"z", 1, false).unwrap().unwrap().2, b"z1");
    let mut rng = StdRng::seed_from_u64(3);
    check_equivalent(r.iter(false).as_mut(), &entries, &mut rng, 5000);
}

#[test]
fn range_tombstones_and_seq_range() {
    let entries = vec![
        (key::make_internal_key(b"b", 10, ValueKind::Put), b"v".to_vec()),
        (key::make_internal_key(b"c", 11, ValueKind::Delete), Vec::new()),
    ];
    let ts = vec![
        RangeTombstone { start: b"m".to_vec(), end: b"q".to_vec(), seq: 50 },
        RangeTombstone { start: b"a".to_vec(), end: b"d".to_vec(), seq: 3 },
        RangeTombstone { start: b"c".to_vec(), end: b"n".to_vec(), seq: 20 },
    ];
    let (bytes, props) = build(opts(4096, CompressionType::Lz4), &entries, &ts);
    assert_eq!((props.smallest_seq, props.largest_seq), (3, 50));
    assert_eq!(props.num_range_deletions, 3);
    assert_eq!(props.num_deletions, 1);
    let r = open(bytes, None).unwrap();
    let want = FragmentedTombstones::new(ts.clone());
    assert_eq!(r.range_tombstones().to_tombstones(), want.to_tombstones());
    assert!(r.range_tombstones().covers(b"b", 2, 100));
    assert!(!r.range_tombstones().covers(b"b", 10, 100));

    // A table holding only tombstones.
    let (bytes, props) = build(opts(4096, CompressionType::None), &[], &ts);
    assert_eq!(props.num_entries, 0);
    assert!(props.smallest_point_key.is_empty());
    let r = Arc::new(open(bytes, None).unwrap());
    assert_eq!(r.range_tombstones().len(), 3);
    let mut it = r.iter(false);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    assert_eq!(r.get(b"b", 100, false).unwrap(), None);

    // A table holding nothing at all.
    let (bytes, props) = build(opts(4096, CompressionType::None), &[], &[]);
    assert_eq!((props.smallest_seq, props.largest_seq), (0, 0));
    open(bytes, None).unwrap().verify_checksums().unwrap();
}

#[test]
fn block_cache_is_filled_only_when_asked() {
    let mut rng = StdRng::seed_from_u64(9);
    let entries = random_entries(&mut rng, 500);
    let (bytes, props) = build(opts(256, CompressionType::Snappy), &entries, &[]);
    let cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(1 << 30, 2, false));
    let r = Arc::new(open(bytes, Some(Arc::clone(&cache))).unwrap());
    let uk = key::user_key(&entries[100].0).to_vec();
    r.get(&uk, 2000, false).unwrap().unwrap();
    assert_eq!(cache.usage(), 0);
    r.get(&uk, 2000, true).unwrap().unwrap();
    assert!(cache.usage() > 0);
    let mut it = r.iter(true);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, entries.len());
    // Every data block is now cached; reads are served from the cache.
    let usage = cache.usage();
    assert!(usage > props.num_data_blocks as usize * 64);
    check_equivalent(r.iter(true).as_mut(), &entries, &mut rng, 1000);
    assert_eq!(cache.usage(), usage);
}

#[test]
fn builder_rejects_out_of_order_and_malformed_keys() {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(
        opts(4096, CompressionType::None),
        Box::new(MemWritable(buf)),
        "x.sst".into(),
    );
    b.add(&key::make_internal_key(b"b", 5, ValueKind::Put), b"").unwrap();
    assert!(b.add(&key::make_internal_key(b"a", 5, ValueKind::Put), b"").is_err());
    assert!(b.add(&key::make_internal_key(b"b", 5, ValueKind::Put), b"").is_err());
    assert!(b.add(b"short", b"").is_err());
    b.add(&key::make_internal_key(b"b", 4, ValueKind::Put), b"").unwrap();
    assert_eq!(b.num_entries(), 2);
    assert!(b.file_size_estimate() > 0);
}

#[test]
fn separators_are_between_keys() {
    use super::builder::{shortest_separator, shortest_successor};
    let mut rng = StdRng::seed_from_u64(5);
    let entries = random_entries(&mut rng, 3000);
    for w in entries.windows(2) {
        let s = shortest_separator(&w[0].0, &w[1].0);
        assert!(key::compare_internal(&w[0].0, &s).is_le());
        assert!(key::compare_internal(&s, &w[1].0).is_lt());
    }
    for (k, _) in &entries {
        assert!(key::compare_internal(k, &shortest_successor(k)).is_le());
    }
    let a = key::make_internal_key(b"abc", 1, ValueKind::Put);
    let b = key::make_internal_key(b"abx", 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), b"abd");
    // The differing byte can't grow (0x56 + 1 is the limit's byte): a later byte grows instead.
    let a = key::make_internal_key(&[0x12, 0x34, 0x56, 0x78, 0x9a], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x12, 0x34, 0x57, 0x00], 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), &[0x12, 0x34, 0x56, 0x79]);
    let a = key::make_internal_key(&[0x12, 0xff, 0xff, 0x01], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x13, 0x00], 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), &[0x12, 0xff, 0xff, 0x02]);
    // Nothing shorter: a prefix of the next key, or only 0xff bytes after the difference.
    let a = key::make_internal_key(b"ab", 1, ValueKind::Put);
    let b = key::make_internal_key(b"abc", 1, ValueKind::Put);
    assert_eq!(shortest_separator(&a, &b), a);
    let a = key::make_internal_key(&[0x01, 0xff], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x02], 1, ValueKind::Put);
    assert_eq!(shortest_separator(&a, &b), a);
    // Exhaustively over short keys from a small alphabet.
    let alphabet = [0u8, 1, 2, 0xfe, 0xff];
    let mut keys: Vec<Vec<u8>> = vec![vec![]];
    for len in 1..=3 {
        let mut k = vec![0usize; len];
        loop {
            keys.push(k.iter().map(|&i| alphabet[i]).collect());
            let mut j = 0;
            while j < len && k[j] == alphabet.len() - 1 {
                k[j] = 0;
                j += 1;
            }
            if j == len {
                break;
            }
            k[j] += 1;
        }
    }
    keys.sort();
    for (i, ua) in keys.iter().enumerate() {
        for ub in &keys[i + 1..] {
            let a = key::make_internal_key(ua, 7, ValueKind::Put);
            let b = key::make_internal_key(ub, 9, ValueKind::Put);
            let s = shortest_separator(&a, &b);
            assert!(key::compare_internal(&a, &s).is_le(), "{ua:?} {ub:?}");
            assert!(key::compare_internal(&s, &b).is_lt(), "{ua:?} {ub:?}");
            assert!(key::user_key(&s).len() <= ua.len(), "{ua:?} {ub:?}");
        }
    }
}

#[test]
fn approximate_offsets_increase() {
    let mut rng = StdRng::seed_from_u64(11);
    let entries = random_entries(&mut rng, 1000);
    let (bytes, props) = build(opts(256, CompressionType::None), &entries, &[]);
    let r = open(bytes, None).unwrap();
    let mut last = 0;
    for (k, _) in &entries {
        let off = r.approximate_offset_of(k);
        assert!(off >= last && off < props.data_size);
        last = off;
    }
    let past = key::make_internal_key(
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        0,
        ValueKind::Put,
    );
    assert_eq!(r.approximate_offset_of(&past), props.data_size);
}

/// The index has user keys (format version 2) unless some user key's versions span two data
/// blocks; either way every version is found by `get`, `seek` and `seek_for_prev`.
#[test]
fn index_key_form_follows_block_boundaries() {
    // One version per user key, tiny blocks: user-key index.
    let single: Vec<(Vec<u8>, Vec<u8>)> = (0..300u32)
        .map(|i| {
            (key::make_internal_key(format!("k{i:04}").as_bytes(), 5, ValueKind::Put), vec![1; 20])
        })
        .collect();
    // Forty versions of one user key in the middle: they cannot share one 64-byte block.
    let mut spanning = single.clone();
    spanning.retain(|(k, _)| key::user_key(k) != b"k0150");
    for seq in 1..=40u64 {
        spanning.push((
            key::make_internal_key(b"k0150", seq, ValueKind::Put),
            seq.to_le_bytes().to_vec(),
        ));
    }
    spanning.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    for (entries, user_keys) in [(&single, true), (&spanning, false)] {
        let (bytes, props) = build(opts(64, CompressionType::None), entries, &[]);
        assert_eq!(props.index_key_is_user_key, user_keys);
        assert!(props.num_data_blocks > 50);
        let r = Arc::new(open(bytes, None).unwrap());
        for (k, v) in entries.iter() {
            let p = key::parse_internal_key(k).unwrap();
            let got = r.get(p.user_key, p.seq, false).unwrap();
            assert_eq!(got, Some((p.kind, p.seq, v.clone())), "{:?}@{}", p.user_key, p.seq);
            let mut it = r.iter(false);
            it.seek(k);
            assert!(it.valid() && it.key() == k.as_slice());
            it.seek_for_prev(k);
            assert!(it.valid() && it.key() == k.as_slice());
        }
        assert_eq!(r.get(b"k0150x", 99, false).unwrap(), None);
        let entries_back = r.index_entries().unwrap();
        assert_eq!(entries_back.len() as u64, props.num_data_blocks);
        assert!(entries_back.iter().all(|(sep, _)| key::parse_internal_key(sep).is_some()));
    }
}
