//! Partitioned index and filters (format version 3 with crc32c block checksums, 4 with XXH3):
//! answers equal to the model and to the same table unpartitioned, under every placement of the
//! top level; partitions fetched through the block cache like data blocks; version checks.

use super::*;
use crate::coding::mask_crc;
use crate::perf;
use crate::sst::format::{Footer, FOOTER_LEN};
use crate::sst::reader::{MultiGetKey, TableReaderOptions};

fn popts(block_size: usize, meta: usize, filters: bool) -> TableBuilderOptions {
    TableBuilderOptions {
        block_size,
        block_restart_interval: 4,
        block_size_deviation: 10,
        bloom_bits_per_key: 10,
        compression: CompressionType::Lz4,
        compression_level: crate::DEFAULT_COMPRESSION_LEVEL,
        checksum: ChecksumType::Xxh3,
        partitioned_index: true,
        partition_filters: filters,
        metadata_block_size: meta,
    }
}

fn open_with(bytes: Vec<u8>, o: TableReaderOptions) -> TableReader {
    TableReader::open_with(Arc::new(MemRandom(bytes)), 7, "mem.sst".into(), o).unwrap()
}

fn footer_version(bytes: &[u8]) -> u32 {
    let f = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..], "t", 0).unwrap();
    f.version
}

/// Every placement of the top level: held, cached and evictable, cached and pinned; with and
/// without a cache.
fn placements(cache: &Arc<dyn Cache<Block>>) -> Vec<TableReaderOptions> {
    let with = |cif: bool, pin_top: bool| TableReaderOptions {
        block_cache: Some(Arc::clone(cache)),
        cache_index_and_filter_blocks: cif,
        pin_top_level_index_and_filter: pin_top,
        ..Default::default()
    };
    vec![TableReaderOptions::default(), with(false, false), with(true, false), with(true, true)]
}

#[test]
fn partitioned_tables_answer_as_the_model_under_every_placement() {
    let mut rng = StdRng::seed_from_u64(31);
    let entries = random_entries(&mut rng, 4000);
    let (plain, _) = build(opts(256, CompressionType::Lz4), &entries, &[]);
    let (bytes, props) = build(popts(256, 256, true), &entries, &[]);
    assert_eq!(footer_version(&plain), 4, "XXH3 checksums: version 4, partitioned or not");
    assert_eq!(footer_version(&bytes), 4);
    let crc = |o: TableBuilderOptions| TableBuilderOptions { checksum: ChecksumType::Crc32c, ..o };
    let crc_plain = build(crc(opts(256, CompressionType::Lz4)), &entries, &[]).0;
    assert_eq!(footer_version(&crc_plain), 2, "unpartitioned crc32c tables stay version 2");
    assert_eq!(footer_version(&build(crc(popts(256, 256, true)), &entries, &[]).0), 3);
    assert!(props.partitioned_index);
    assert!(props.index_partitions > 5, "{props:?}");
    assert!(props.filter_partitions > 2, "{props:?}");
    assert!(props.top_level_index_size > 0 && props.top_level_index_size < props.index_size);
    let plain = Arc::new(open(plain, None).unwrap());
    // A small cache (one shard): partitions and data blocks are evicted while readers run.
    let cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(16 << 10, 0, false));
    for o in placements(&cache) {
        let r = Arc::new(open_with(bytes.clone(), o));
        assert_eq!(r.properties(), &props);
        assert!(r.has_partitioned_filter());
        r.verify_checksums().unwrap();
        assert_eq!(r.data_block_handles().unwrap(), plain.data_block_handles().unwrap());
        assert_eq!(r.index_partition_handles().unwrap().len() as u64, props.index_partitions);
        assert_eq!(r.filter_partition_handles().unwrap().len() as u64, props.filter_partitions);
        for _ in 0..3000 {
            let uk = if rng.gen_bool(0.7) {
                key::user_key(&entries[rng.gen_range(0..entries.len())].0).to_vec()
            } else {
                (0..rng.gen_range(0..12)).map(|_| b"abcd\xff"[rng.gen_range(0..5)]).collect()
            };
            let seq = rng.gen_range(0..1100);
            let want = model_get(&entries, &uk, seq);
            assert_eq!(r.get(&uk, seq, true).unwrap(), want);
            assert_eq!(r.get(&uk, seq, false).unwrap(), want);
            if want.is_some() {
                assert!(r.may_contain(&uk));
            }
        }
        for (k, _) in entries.iter().step_by(97) {
            let (a, b) = (r.approximate_offset_of(k), plain.approximate_offset_of(k));
            assert_eq!(a, b);
        }
        check_equivalent(r.iter(true).as_mut(), &entries, &mut rng, 3000);
        check_equivalent(r.iter(false).as_mut(), &entries, &mut rng, 1000);
        // MultiGet over sorted distinct user keys gives what get gives.
        let mut uks: Vec<Vec<u8>> =
            entries.iter().step_by(5).map(|e| key::user_key(&e.0).to_vec()).collect();
        uks.push(b"zzz".to_vec());
        uks.sort();
        uks.dedup();
        let mut keys: Vec<MultiGetKey<'_>> = uks
            .iter()
            .map(|u| MultiGetKey {
                user_key: u,
                hash: crate::sst::filter::filter_hash(u),
                found: None,
                error: None,
            })
            .collect();
        r.multi_get(&mut keys, 700, true).unwrap();
        for k in &keys {
            assert!(k.error.is_none());
            assert_eq!(k.found, model_get(&entries, k.user_key, 700), "{:?}", k.user_key);
        }
    }
    // Blocks held while a read runs (a MultiGet batch holds its data blocks) may leave the
    // cache over capacity; with every reader gone, the next insert evicts down to it (the LRU's
    // contract: eviction at insert).
    assert_eq!(cache.pinned_usage(), 0, "nothing stays held once the readers are gone");
    let empty = Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0], "t".into(), 0).unwrap();
    cache.insert_with_priority((u64::MAX, 0), empty, 64, crate::cache::Priority::Low);
    assert!(cache.usage() <= cache.capacity(), "usage {} > {}", cache.usage(), cache.capacity());
}

#[test]
fn absent_keys_are_filtered_by_their_partition() {
    let entries: Vec<_> = (0..5000u32)
        .map(|i| {
            (
                key::make_internal_key(format!("k{:06}", i * 2).as_bytes(), 1, ValueKind::Put),
                vec![7; 8],
            )
        })
        .collect();
    let (bytes, props) = build(popts(512, 512, true), &entries, &[]);
    assert!(props.filter_partitions >= 8, "{props:?}");
    let r = open(bytes, None).unwrap();
    perf::reset();
    let mut absent_passed = 0;
    for i in 0..5000u32 {
        let odd = format!("k{:06}", i * 2 + 1);
        if r.may_contain(odd.as_bytes()) {
            absent_passed += 1;
        }
        assert!(r.may_contain(format!("k{:06}", i * 2).as_bytes()));
    }
    assert!(absent_passed < 150, "false positives {absent_passed} of 5000");
    // Past the last key: no partition can hold it.
    assert!(!r.may_contain(b"zzzz"));
    let c = perf::perf_context();
    // One partition read per probe, except the two keys past the last partition.
    assert_eq!(c.filter_block_read_count, 9_999, "{c}");
}

#[test]
fn partitions_are_cached_like_data_blocks_and_counted_by_role() {
    let mut rng = StdRng::seed_from_u64(8);
    let entries = random_entries(&mut rng, 3000);
    let (bytes, props) = build(popts(256, 256, true), &entries, &[]);
    let cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(64 << 20, 1, false));
    let o = TableReaderOptions {
        block_cache: Some(Arc::clone(&cache)),
        cache_index_and_filter_blocks: true,
        pin_top_level_index_and_filter: true,
        ..Default::default()
    };
    let r = open_with(bytes, o);
    let top_usage = cache.usage();
    assert!(top_usage > 0, "the top levels are in the cache");
    assert!(cache.pinned_usage() >= top_usage, "and pinned");
    let (k, _) = &entries[1234];
    let p = key::parse_internal_key(k).unwrap();
    perf::reset();
    r.get(p.user_key, p.seq, true).unwrap().unwrap();
    let first = perf::perf_context();
    assert_eq!(first.filter_block_read_count, 1, "{first}");
    assert_eq!(first.index_block_read_count, 1, "{first}");
    assert!(first.data_block_read_count >= 1, "{first}");
    assert_eq!(
        first.block_read_byte,
        first.data_block_read_byte + first.index_block_read_byte + first.filter_block_read_byte
    );
    assert_eq!(first.file_read_count, first.block_read_count);
    perf::reset();
    r.get(p.user_key, p.seq, true).unwrap().unwrap();
    let second = perf::perf_context();
    assert_eq!(second.block_read_count, 0, "all from the cache: {second}");
    assert!(second.block_cache_index_hit_count >= 1 && second.block_cache_filter_hit_count >= 1);
    // Unpinned partitions can be evicted: the cache holds what was read, and nothing more.
    assert!(cache.usage() > top_usage);
    assert!(
        cache.usage()
            < top_usage + props.index_size as usize + props.filter_size as usize + (64 << 10)
    );
}

#[test]
fn a_partitioned_table_claiming_an_old_version_is_corruption() {
    let mut rng = StdRng::seed_from_u64(4);
    let entries = random_entries(&mut rng, 500);
    let o = TableBuilderOptions { checksum: ChecksumType::Crc32c, ..popts(256, 128, true) };
    let (mut bytes, _) = build(o, &entries, &[]);
    let n = bytes.len();
    // Rewrite the footer as version 2 with a valid checksum: a version-2 reader would take the
    // top-level index for the index; this one must refuse it.
    bytes[n - 16..n - 12].copy_from_slice(&2u32.to_le_bytes());
    let crc = mask_crc(crc32c::crc32c(&bytes[n - FOOTER_LEN..n - 12]));
    bytes[n - 12..n - 8].copy_from_slice(&crc.to_le_bytes());
    let e = match open(bytes, None) {
        Err(e) => e,
        Ok(_) => panic!("opened a partitioned table claiming version 2"),
    };
    assert!(e.is_corruption() && e.to_string().contains("format_version 2"), "{e}");
}

#[test]
fn every_bit_flip_in_a_partitioned_table_is_caught_or_harmless() {
    let entries: Vec<_> = (0..60u32)
        .map(|i| {
            (
                key::make_internal_key(format!("k{i:03}").as_bytes(), 2, ValueKind::Put),
                vec![b'v'; 6],
            )
        })
        .collect();
    for checksum in ChecksumType::ALL {
        let o = TableBuilderOptions { checksum, ..popts(64, 40, true) };
        every_bit_flip_in(o, &entries);
    }
}

fn every_bit_flip_in(o: TableBuilderOptions, entries: &[(Vec<u8>, Vec<u8>)]) {
    let (bytes, props) = build(o, entries, &[]);
    assert!(props.index_partitions > 2 && props.filter_partitions > 1, "{props:?}");
    for bit in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        let r = match open(b, None) {
            Ok(r) => Arc::new(r),
            Err(e) => {
                assert!(e.is_corruption(), "bit {bit}: {e}");
                continue;
            }
        };
        if let Err(e) = r.verify_checksums() {
            assert!(e.is_corruption(), "bit {bit}: {e}");
            continue;
        }
        // Checksums all pass: every answer must be right.
        for (k, v) in entries {
            let p = key::parse_internal_key(k).unwrap();
            match r.get(p.user_key, p.seq, false) {
                Ok(got) => assert_eq!(got, Some((p.kind, p.seq, v.clone())), "bit {bit}"),
                Err(e) => assert!(e.is_corruption(), "bit {bit}: {e}"),
            }
        }
    }
}
