//! Randomized table shapes (restart interval, block size, compression, filter, checksum) and
//! concurrent readers sharing one table and one block cache.

use super::*;

#[test]
fn random_shapes_match_the_model() {
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let partitioned_index = rng.gen_bool(0.5);
        let o = TableBuilderOptions {
            block_size: rng.gen_range(1..3000),
            block_restart_interval: rng.gen_range(1..20),
            block_size_deviation: [0, 10, 50, 100][rng.gen_range(0..4)],
            bloom_bits_per_key: rng.gen_range(0..16),
            compression: ALL_COMPRESSIONS[rng.gen_range(0..4)],
            compression_level: [crate::DEFAULT_COMPRESSION_LEVEL, 1, 19, -5][rng.gen_range(0..4)],
            partitioned_index,
            partition_filters: partitioned_index && rng.gen_bool(0.7),
            metadata_block_size: rng.gen_range(1..600),
            checksum: ChecksumType::ALL[rng.gen_range(0..2)],
        };
        let n = rng.gen_range(1..600);
        let entries = random_entries(&mut rng, n);
        let (bytes, props) = build(o.clone(), &entries, &[]);
        assert_eq!(props.num_entries, entries.len() as u64, "{o:?}");
        let r = Arc::new(open(bytes, None).unwrap());
        assert_eq!(r.checksum_type(), o.checksum);
        r.verify_checksums().unwrap();
        for (k, v) in entries.iter().step_by(3) {
            let p = key::parse_internal_key(k).unwrap();
            let got = r.get(p.user_key, p.seq, false).unwrap();
            assert_eq!(got, Some((p.kind, p.seq, v.clone())), "{o:?}");
        }
        check_equivalent(r.iter(false).as_mut(), &entries, &mut rng, 1500);
    }
}

#[test]
fn readers_are_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TableReader>();
    assert_send_sync::<Block>();

    let mut rng = StdRng::seed_from_u64(77);
    let entries = Arc::new(random_entries(&mut rng, 3000));
    let (bytes, _) = build(opts(512, CompressionType::Lz4), &entries, &[]);
    // A small cache so that blocks are evicted while other threads hold them.
    let cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(8 << 10, 2, false));
    let r = Arc::new(open(bytes, Some(Arc::clone(&cache))).unwrap());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (r, entries) = (Arc::clone(&r), Arc::clone(&entries));
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(t);
                for _ in 0..2000 {
                    let (k, v) = &entries[rng.gen_range(0..entries.len())];
                    let p = key::parse_internal_key(k).unwrap();
                    let got = r.get(p.user_key, p.seq, true).unwrap().unwrap();
                    assert_eq!(got.2, *v);
                }
                let mut it = r.iter(true);
                it.seek_to_first();
                let mut n = 0;
                while it.valid() {
                    assert_eq!(it.key(), entries[n].0.as_slice());
                    n += 1;
                    it.next();
                }
                assert_eq!(n, entries.len());
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(cache.usage() <= cache.capacity() + 4 * 2048);
}
