//! Tests of `talus cache_bench`: flag parsing, the key generator and the workload loop on
//! every cache, and the latency histogram.

use super::*;

fn flags(args: &[&str]) -> Result<Flags, String> {
    let p = Parsed::parse(args);
    p.check(&SPEC)?;
    parse(&p)
}

#[test]
fn parses_rocksdb_flags_and_defaults() {
    let f = flags(&[]).unwrap();
    assert_eq!((f.threads, f.value_bytes, f.cache_size), (16, 8192, 1 << 30));
    assert!(f.populate_cache && !f.skewed);
    let f =
        flags(&["--cache_type=hyper_clock_cache", "--populate_cache=false", "--skewed"]).unwrap();
    assert_eq!(f.cache_type, CacheType::HyperClockCache);
    assert!(!f.populate_cache && f.skewed);
    assert_eq!(f.value_bytes_estimate, 0, "auto by default");
    assert_eq!(flags(&["--value_bytes_estimate=4096"]).unwrap().value_bytes_estimate, 4096);
    assert!(flags(&["--lookup_percent=50"]).unwrap_err().contains("add to 100"));
    assert!(flags(&["--cache_type=fifo"]).is_err());
    assert!(flags(&["--bogus=1"]).unwrap_err().contains("bogus"));
}

#[test]
fn keys_stay_in_range_and_ops_run() {
    for skewed in [false, true] {
        let mut f = flags(&["--cache_size=65536", "--value_bytes=64"]).unwrap();
        f.skewed = skewed;
        f.ops_per_thread = 2000;
        let w = Workload::new(&f);
        let mut rng = Rng(3);
        for _ in 0..10_000 {
            assert!(w.key(&mut rng).0 <= w.max_key);
        }
        let cache = HyperClockCache::new(65536, 64, 2, false);
        let r = operate(&cache, &w, 0);
        assert_eq!(r.hist.count, 2000);
        assert!(cache.usage() <= 65536 + 64);
        let auto = AutoHyperClockCache::new(65536, 2, false);
        let r = operate(&auto, &w, 0);
        assert_eq!(r.hist.count, 2000);
        assert!(auto.usage() <= 65536 + 64);
    }
}

#[test]
fn histogram_percentiles_bracket_samples() {
    let mut h = Histogram::new();
    for ns in 1..=1000u64 {
        h.add(ns);
    }
    let p50 = h.percentile(50.0);
    assert!((500..=640).contains(&p50), "p50 {p50}");
    assert_eq!(h.percentile(100.0), 1000);
    assert_eq!(Histogram::bucket(7), 11);
    assert!(Histogram::bound(Histogram::bucket(1234)) >= 1234);
}
