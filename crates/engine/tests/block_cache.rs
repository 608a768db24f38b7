//! The block cache as the engine uses it: index and filter blocks in the cache
//! (`cache_index_and_filter_blocks`, L0 pinning), the cache properties and per-role entry
//! stats, the perf context of point lookups, and batched MultiGet against per-key Get.

use rand::{Rng, SeedableRng};
use talus::options::CacheType;
use talus::{perf_context, Db, Options, ReadOptions};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat(40)).into_bytes()
}

/// A DB with `files` L0 files of `per_file` keys each (auto compaction off).
fn build(opts: Options, files: u64, per_file: u64) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { create_if_missing: true, ..opts }).unwrap();
    for f in 0..files {
        for i in 0..per_file {
            let k = i * files + f;
            db.put(key(k), value(k)).unwrap();
        }
        db.flush().unwrap();
    }
    (dir, db)
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().parse().unwrap()
}

fn base(cache_type: CacheType, capacity: usize) -> Options {
    Options {
        disable_auto_compactions: true,
        block_size: 512,
        block_cache_capacity: capacity,
        block_cache_num_shard_bits: 0,
        cache_type,
        ..Default::default()
    }
}

#[test]
fn index_and_filter_blocks_live_in_the_cache_within_capacity() {
    for cache_type in [CacheType::LruCache, CacheType::HyperClockCache] {
        let cap = 64 << 10;
        let opts = Options { cache_index_and_filter_blocks: true, ..base(cache_type, cap) };
        let (_dir, db) = build(opts, 8, 2000);
        // Every file's index and filter were inserted at open (flush opens nothing, so read).
        for i in (0..16_000).step_by(7) {
            assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "{cache_type:?}");
            assert!(prop(&db, "talus.block-cache-usage") <= cap as u64, "{cache_type:?}");
        }
        assert_eq!(prop(&db, "talus.block-cache-capacity"), cap as u64);
        assert_eq!(prop(&db, "talus.block-cache-pinned-usage"), 0, "nothing pinned");
        let stats = db.property("talus.block-cache-entry-stats").unwrap();
        assert!(stats.contains("DataBlock("), "{stats}");
        assert!(stats.contains("IndexBlock(") || stats.contains("FilterBlock("), "{stats}");
        assert!(db.property("talus.stats").unwrap().contains("Block cache entry stats"));
    }
}

#[test]
fn pinned_l0_index_and_filter_blocks_stay_and_never_miss() {
    let opts = Options {
        cache_index_and_filter_blocks: true,
        pin_l0_filter_and_index_blocks_in_cache: true,
        ..base(CacheType::LruCache, 16 << 10)
    };
    let (_dir, db) = build(opts, 4, 2000);
    for i in 0..8000 {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)));
    }
    let pinned = prop(&db, "talus.block-cache-pinned-usage");
    let stats = db.property("talus.block-cache-entry-stats").unwrap();
    assert!(pinned > 0, "{stats}");
    assert!(stats.contains("IndexBlock(4,") && stats.contains("FilterBlock(4,"), "{stats}");
    // Under eviction pressure from data blocks the pinned blocks never miss.
    talus::perf::reset();
    for i in (0..8000).rev() {
        db.get(key(i)).unwrap();
    }
    let ctx = perf_context();
    assert_eq!(ctx.block_cache_index_miss_count, 0, "{ctx}");
    assert_eq!(ctx.block_cache_filter_miss_count, 0, "{ctx}");
    assert!(ctx.block_cache_data_miss_count > 0, "{ctx}");
}

#[test]
fn perf_context_counts_a_point_lookup() {
    let opts =
        Options { cache_index_and_filter_blocks: true, ..base(CacheType::LruCache, 1 << 20) };
    let (_dir, db) = build(opts, 2, 500);
    db.put(b"in-memtable", b"v").unwrap();
    talus::perf::reset();
    assert_eq!(db.get(b"in-memtable").unwrap().as_deref(), Some(&b"v"[..]));
    let c = perf_context();
    assert_eq!((c.get_from_memtable_count, c.get_from_memtable_hit_count), (1, 1));
    assert_eq!(c.block_read_count, 0);

    // key(1) is in the newer file only (keys alternate between the two files).
    talus::perf::reset();
    assert_eq!(db.get(key(1)).unwrap(), Some(value(1)));
    let first = perf_context();
    assert_eq!(first.get_from_table_count, 1, "{first}");
    assert_eq!(first.bloom_filter_checked, 1, "{first}");
    assert_eq!(first.block_cache_data_miss_count, 1, "{first}");
    assert!(first.block_read_count >= 1 && first.block_read_byte >= 64, "{first}");
    talus::perf::reset();
    db.get(key(1)).unwrap();
    let second = perf_context();
    assert_eq!(second.block_read_count, 0, "{second}");
    assert_eq!(second.block_cache_data_hit_count, 1, "{second}");
    assert_eq!(second.block_cache_index_hit_count, 1, "{second}");
    assert_eq!(second.block_cache_filter_hit_count, 1, "{second}");

    // A key in neither file's filter: the filters say no, no data block is read.
    talus::perf::reset();
    let mut useful = 0;
    for i in 0..200 {
        db.get(format!("key{i:08}zz").as_bytes()).unwrap();
        useful = perf_context().bloom_filter_useful;
    }
    let c = perf_context();
    assert!(useful > 150, "{c}");
    assert!(c.block_cache_data_miss_count + c.block_cache_data_hit_count < 50, "{c}");
}

#[test]
fn multi_get_matches_get_in_caller_order_and_at_a_snapshot() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for cache_type in [CacheType::LruCache, CacheType::HyperClockCache] {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            create_if_missing: true,
            write_buffer_size: 16 << 10,
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 64 << 10,
            target_file_size_base: 16 << 10,
            block_size: 256,
            block_cache_capacity: 32 << 10,
            cache_index_and_filter_blocks: rng.gen_bool(0.5),
            cache_type,
            ..Default::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        let mut snap = None;
        for round in 0..6 {
            for _ in 0..3000 {
                let k = rng.gen_range(0..4000u64);
                match rng.gen_range(0..20) {
                    0..=14 => db.put(key(k), value(k + round)).unwrap(),
                    15..=18 => db.delete(key(k)).unwrap(),
                    _ => db.delete_range(key(k)..key(k + rng.gen_range(1..30))).unwrap(),
                }
            }
            if round == 2 {
                snap = Some(db.snapshot());
            }
            // Batches with duplicates, absent keys and any order.
            for _ in 0..20 {
                let n = rng.gen_range(1..64);
                let keys: Vec<Vec<u8>> = (0..n).map(|_| key(rng.gen_range(0..4100u64))).collect();
                for ro in [
                    ReadOptions::default(),
                    ReadOptions { snapshot: snap.clone(), ..Default::default() },
                ] {
                    let got = db.multi_get(&keys, &ro);
                    assert_eq!(got.len(), keys.len());
                    for (k, g) in keys.iter().zip(got) {
                        assert_eq!(
                            g.unwrap(),
                            db.get_opt(k, &ro).unwrap(),
                            "{cache_type:?} round {round}"
                        );
                    }
                }
            }
        }
        db.compact_range(None, None).unwrap();
        let keys: Vec<Vec<u8>> = (0..4000).rev().map(key).collect();
        talus::perf::reset();
        let got = db.multi_get(&keys, &ReadOptions::default());
        let c = perf_context();
        assert_eq!(c.multiget_key_count, 4000);
        // Keys sharing a block share one fetch: far fewer block fetches than keys.
        let fetches = c.block_cache_data_hit_count + c.block_cache_data_miss_count;
        assert!(fetches < 2000, "{c}");
        for (k, g) in keys.iter().zip(got) {
            assert_eq!(g.unwrap(), db.get(k).unwrap());
        }
    }
}

#[test]
fn multi_get_reports_a_bad_block_only_for_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, block_size: 512, ..Default::default() };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..2000 {
            db.put(key(i), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let mut bytes = std::fs::read(&sst).unwrap();
    for b in &mut bytes[3000..3010] {
        *b ^= 0xff;
    }
    std::fs::write(&sst, bytes).unwrap();
    let db = Db::open(dir.path(), Options { create_if_missing: false, ..opts }).unwrap();
    let keys: Vec<Vec<u8>> = (0..2000).map(key).collect();
    let got = db.multi_get(&keys, &ReadOptions::default());
    let (mut bad, mut good) = (0, 0);
    for (k, g) in keys.iter().zip(got) {
        match (g, db.get(k)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b);
                good += 1;
            }
            (Err(a), Err(b)) => {
                assert!(a.is_corruption() && b.is_corruption(), "{a} / {b}");
                bad += 1;
            }
            (a, b) => panic!("multi_get {a:?} but get {b:?}"),
        }
    }
    assert!(bad > 0 && bad < 20, "{bad} keys failed");
    assert!(good > 1900);
}
