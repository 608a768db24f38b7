//! Tests of `talus cache_bench`: flag parsing (RocksDB 10's names and defaults), the key
//! generator and the workload loop on every cache, and the latency histogram.

use super::*;

fn flags(args: &[&str]) -> Result<Flags, String> {
    let mut p = Parsed::parse(args);
    p.check(&SPEC)?;
    parse(&p)
}

#[test]
fn parses_rocksdb_flags_and_defaults() {
    let f = flags(&[]).unwrap();
    assert_eq!((f.threads, f.value_bytes, f.cache_size), (16, 8192, 1 << 30));
    assert_eq!((f.lookup_insert_percent, f.blind_insert_percent), (82, 5));
    assert_eq!((f.num_shard_bits, f.pinned_ratio), (None, 0.25));
    assert!(f.populate_cache && !f.skewed && f.histograms);
    assert_eq!(f.kind, Kind::Lru);
    let f =
        flags(&["--cache_type=hyper_clock_cache", "--populate_cache=false", "--skewed"]).unwrap();
    assert_eq!(f.kind, Kind::FixedClock, "hyper_clock_cache is the fixed one, as RocksDB 10");
    assert!(!f.populate_cache && f.skewed);
    assert_eq!(flags(&["--cache_type=auto_hyper_clock_cache"]).unwrap().kind, Kind::AutoClock);
    assert_eq!(flags(&["--cache_type=fixed_hyper_clock_cache"]).unwrap().kind, Kind::FixedClock);
    assert_eq!(flags(&["--value_bytes_estimate=4096"]).unwrap().value_bytes_estimate, 4096);
    assert_eq!(flags(&["--num_shard_bits=3"]).unwrap().num_shard_bits, Some(3));
    assert_eq!(flags(&["--seed=7", "--degenerate_hash_bits=5"]).unwrap().seed, 7);
    assert!(flags(&["--lookup_percent=50"]).unwrap_err().contains("add to 100"));
    assert!(flags(&["--cache_type=fifo"]).is_err());
    assert!(flags(&["--bogus=1"]).unwrap_err().contains("bogus"));
    // RocksDB's automatic shard counts: 256 MiB is 512 LRU shards (capped at 64) and 8 clock
    // shards.
    assert_eq!(default_shard_bits(256 << 20, 512 << 10), 6);
    assert_eq!(default_shard_bits(256 << 20, 32 << 20), 3);
    assert_eq!(default_shard_bits(1 << 20, 32 << 20), 0);
}

#[test]
fn keys_stay_in_range_and_ops_run_on_every_cache() {
    for args in [&["--skewed"][..], &[], &["--degenerate_hash_bits=6"]] {
        let mut f = flags(args).unwrap();
        (f.cache_size, f.value_bytes, f.ops_per_thread, f.threads) = (65536, 64, 2000, 2);
        let w = Workload::new(&f);
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            let k = w.key(&mut rng);
            assert!(f.degenerate_hash_bits > 0 || k.0 <= w.max_key);
        }
        for kind in [Kind::Lru, Kind::FixedClock, Kind::AutoClock] {
            f.kind = kind;
            let w = Workload::new(&f);
            let built = Built::new(&f);
            let cache = built.cache();
            populate(&built, cache.as_ref(), &w);
            let r = operate(cache.as_ref(), &w, 0);
            assert_eq!(r.hist.count(), 2000);
            assert!(r.hits > 0, "{kind:?} {args:?}");
            // 64 KiB * 0.25 / 64 bytes = 256 pins over 2 threads.
            assert_eq!(r.pinned, 128);
            assert!(cache.usage() <= 65536 + 128 * 64 * 2, "{kind:?}: {}", cache.usage());
        }
    }
}

#[test]
fn degenerate_keys_share_their_low_hash_bits() {
    let mut f = flags(&["--degenerate_hash_bits=8"]).unwrap();
    (f.cache_size, f.value_bytes) = (1 << 20, 64);
    let w = Workload::new(&f);
    let mut rng = Rng::new(5);
    let keys: std::collections::HashSet<_> = (0..1000).map(|_| w.key(&mut rng)).collect();
    assert!(keys.len() > 500, "distinct keys: {}", keys.len());
    // All collide in a 256-slot table: every one starts probing at the same slot.
    let c: HyperClockCache<u64> = HyperClockCache::new(1 << 20, 4096, 0, false);
    assert_eq!(c.table_address_count(), 512);
    for (i, k) in keys.iter().take(100).enumerate() {
        c.insert(*k, i as u64, 1);
    }
    for (i, k) in keys.iter().take(100).enumerate() {
        assert_eq!(c.lookup(*k).as_deref(), Some(&(i as u64)));
    }
}
