//! Tests of the perf context: per-thread counters, reset, formatting, sums and deltas, and the
//! per-database read counters with their text round trip.

use super::*;

#[test]
fn counts_per_thread_resets_and_formats() {
    reset();
    cache_hit(BlockRole::Index);
    cache_miss(BlockRole::Data);
    block_read(BlockRole::Data, 4096);
    bloom_checked(false);
    bloom_checked(true);
    let c = perf_context();
    assert_eq!(c.block_cache_hit_count, 1);
    assert_eq!(c.block_cache_index_hit_count, 1);
    assert_eq!(c.block_cache_data_miss_count, 1);
    assert_eq!(c.block_read_byte, 4096);
    assert_eq!((c.bloom_filter_checked, c.bloom_filter_useful, c.bloom_sst_hit_count), (2, 1, 1));
    let s = c.to_string();
    assert!(s.starts_with("block_cache_hit_count = 1, block_cache_index_hit_count = 1"), "{s}");
    assert!(!s.contains("= 0"), "{s}");
    // Another thread has its own counters.
    let other = std::thread::spawn(|| {
        cache_hit(BlockRole::Data);
        perf_context()
    })
    .join()
    .unwrap();
    assert_eq!(other.block_cache_hit_count, 1);
    assert_eq!(other.block_cache_index_hit_count, 0);
    let mut sum = c;
    sum.add(&other);
    assert_eq!(sum.block_cache_hit_count, 2);
    assert_eq!(sum.delta(&c), other);
    reset();
    assert_eq!(perf_context(), PerfContext::default());
}

#[test]
fn read_io_stats_count_by_role_and_round_trip_as_text() {
    reset();
    let s = ReadIoStats::default();
    s.block_read(BlockRole::Data, 100);
    s.block_read(BlockRole::Filter, 30);
    s.block_read(BlockRole::Data, 50);
    s.file_read(4096);
    let snap = s.snapshot();
    assert_eq!(snap.blocks, [2, 0, 1, 0]);
    assert_eq!(snap.bytes, [150, 0, 30, 0]);
    assert_eq!((snap.file_reads, snap.file_read_bytes), (1, 4096));
    assert_eq!(ReadIoSnapshot::parse(&snap.render()), Some(snap));
    let c = perf_context();
    assert_eq!((c.data_block_read_count, c.data_block_read_byte), (2, 150));
    assert_eq!((c.filter_block_read_count, c.filter_block_read_byte), (1, 30));
    assert_eq!((c.file_read_count, c.file_read_byte), (1, 4096));
}
