//! Builder + reader round trips against the model: every compression (and that it shrinks
//! data), snapshots across block boundaries, range tombstones and sequence ranges, and a block
//! cache filled only when asked.

use super::*;

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

/// The zstd level is the writer's choice (`compression_level`): level 1 and level 19 write
/// different bytes of different sizes, and both read back with nothing recorded about the
/// level (a reader never needs it).
#[test]
fn zstd_levels_1_and_19_differ_in_size_and_both_read_back() {
    // Text-like values: repetitive enough that a higher level finds more to share.
    let mut rng = StdRng::seed_from_u64(19);
    let words = ["alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta "];
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..3000u32)
        .map(|i| {
            let k = key::make_internal_key(format!("key{i:08}").as_bytes(), 1, ValueKind::Put);
            let v: String = (0..40).map(|_| words[rng.gen_range(0..words.len())]).collect();
            (k, v.into_bytes())
        })
        .collect();
    let mut sizes = Vec::new();
    for level in [1, 19] {
        let o = TableBuilderOptions {
            compression_level: level,
            ..opts(16 << 10, CompressionType::Zstd)
        };
        let (bytes, props) = build(o, &entries, &[]);
        sizes.push(bytes.len());
        let r = Arc::new(open(bytes, None).unwrap());
        assert_eq!(props.compression, Some(CompressionType::Zstd));
        r.verify_checksums().unwrap();
        let mut it = r.iter(false);
        it.seek_to_first();
        for (k, v) in &entries {
            assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()), "level {level}");
            it.next();
        }
        assert!(!it.valid());
    }
    assert!(
        sizes[1] < sizes[0],
        "level 19 ({}) is not smaller than level 1 ({})",
        sizes[1],
        sizes[0]
    );
}
