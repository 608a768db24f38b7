//! [`validate`]: the range and name checks of db_bench's flag values, run by [`super::parse`]
//! (unless `--help`) before the caller touches the database directory. Pure; the error names
//! the flag.

use super::{compression_list, Flags, BENCHMARKS, ENGINES};

fn range(name: &str, v: i64, lo: i64, hi: i64) -> Result<(), String> {
    if v < lo || v > hi {
        return Err(format!("invalid value {v} for flag --{name}: must be between {lo} and {hi}"));
    }
    Ok(())
}

/// Checks ranges and names; the error names the flag.
pub fn validate(f: &Flags) -> Result<(), String> {
    range("num", f.num, 1, i64::MAX / 2)?;
    range("reads", f.reads, -1, i64::MAX / 2)?;
    range("writes", f.writes, -1, i64::MAX / 2)?;
    range("deletes", f.deletes, -1, i64::MAX / 2)?;
    range("duration", f.duration, 0, i64::MAX / 2_000_000)?;
    range("ops_between_duration_checks", f.ops_between_duration_checks, 1, i64::MAX)?;
    range("threads", f.threads, 1, 4096)?;
    range("key_size", f.key_size, 1, 1 << 20)?;
    range("value_size", f.value_size, 0, 64 << 20)?;
    range("batch_size", f.batch_size, 1, 1 << 20)?;
    range("seek_nexts", f.seek_nexts, 0, i64::MAX)?;
    range("readwritepercent", f.readwritepercent, 0, 100)?;
    range("mergereadpercent", f.mergereadpercent, 0, 100)?;
    range("merge_keys", f.merge_keys, -1, i64::MAX / 2)?;
    if f.merge_keys == 0 {
        return Err("invalid value 0 for flag --merge_keys: -1 (--num) or at least 1".into());
    }
    if !f.merge_operator.is_empty() && talus::merge::builtin_by_name(&f.merge_operator).is_none() {
        let names: Vec<String> =
            talus::merge::BUILTIN_NAMES.iter().map(|(n, nick)| format!("{nick} ({n})")).collect();
        return Err(format!(
            "invalid value {:?} for flag --merge_operator: one of {}",
            f.merge_operator,
            names.join(", ")
        ));
    }
    range("transaction_sets", f.transaction_sets.min(i64::MAX as u64) as i64, 1, 9999)?;
    if f.readonly && (f.transaction_db || f.optimistic_transaction_db) {
        return Err("Cannot use readonly flag with transaction_db".into());
    }
    range("cache_size", f.cache_size, -1, i64::MAX)?;
    talus::ChecksumType::from_rocksdb_id(f.checksum_type).ok_or_else(|| {
        format!(
            "invalid value {} for flag --checksum_type: 1 (kCRC32c) or 4 (kXXH3)",
            f.checksum_type
        )
    })?;
    talus::WalRecoveryMode::parse(&f.wal_recovery_mode).map_err(|e| e.to_string())?;
    range(
        "cache_numshardbits",
        f.cache_numshardbits,
        -1,
        talus::options::MAX_CACHE_SHARD_BITS.into(),
    )?;
    range("perf_level", f.perf_level, 0, 5)?;
    range("wal_bytes_per_sync", f.wal_bytes_per_sync, -1, i64::MAX)?;
    range("metadata_block_size", f.metadata_block_size, 1, 1 << 30)?;
    if f.compaction_readahead_size > 1 << 30 {
        return Err(format!(
            "invalid value {} for flag --compaction_readahead_size: must be at most 1 GiB",
            f.compaction_readahead_size
        ));
    }
    if !(0.0..=1.0).contains(&f.cache_high_pri_pool_ratio) {
        return Err(format!(
            "invalid value {} for flag --cache_high_pri_pool_ratio: must be between 0 and 1",
            f.cache_high_pri_pool_ratio
        ));
    }
    range("bloom_bits", f.bloom_bits, -1, 100)?;
    range("block_size", f.block_size, 1, 1 << 30)?;
    range("write_buffer_size", f.write_buffer_size, 4096, i64::MAX)?;
    range("max_write_buffer_number", f.max_write_buffer_number, 2, 1 << 16)?;
    range("level0_file_num_compaction_trigger", f.level0_file_num_compaction_trigger, 1, i64::MAX)?;
    range("level0_slowdown_writes_trigger", f.level0_slowdown_writes_trigger, 0, i64::MAX)?;
    range("level0_stop_writes_trigger", f.level0_stop_writes_trigger, 0, i64::MAX)?;
    range("num_levels", f.num_levels, 1, 64)?;
    range("compaction_style", f.compaction_style, 0, 1)?;
    range("max_background_jobs", f.max_background_jobs, 1, 1024)?;
    range("compaction_thread_nice", f.compaction_thread_nice, -1, 19)?;
    range("stats_per_interval", f.stats_per_interval, 0, i64::MAX)?;
    if f.open_files == 0 || f.open_files < -1 {
        return Err(format!(
            "invalid value {} for flag --open_files: -1 or positive",
            f.open_files
        ));
    }
    if !(f.compression_ratio > 0.0 && f.compression_ratio <= 1.0) {
        return Err(format!(
            "invalid value {} for flag --compression_ratio: must be in (0, 1]",
            f.compression_ratio
        ));
    }
    if f.read_random_exp_range < 0.0 {
        return Err("invalid value for flag --read_random_exp_range: must not be negative".into());
    }
    if f.max_bytes_for_level_base == 0 {
        return Err("invalid value 0 for flag --max_bytes_for_level_base: must be positive".into());
    }
    if f.max_bytes_for_level_multiplier <= 1.0 {
        return Err("invalid value for flag --max_bytes_for_level_multiplier: must be > 1".into());
    }
    if f.target_file_size_base == 0 {
        return Err("invalid value 0 for flag --target_file_size_base: must be positive".into());
    }
    for c in compression_list(&f.compression_per_level).chain(
        Some(f.bottommost_compression.as_str())
            .filter(|c| !c.is_empty() && *c != "kDisableCompressionOption"),
    ) {
        crate::options::engine::compression("compression_per_level", c)?;
    }
    range("min_level_to_compress", f.min_level_to_compress, -1, 64)?;
    range("estimated_entry_charge", f.estimated_entry_charge, -1, 1 << 30)?;
    talus::CompressionType::parse(&f.compression_type).map_err(|_| {
        format!(
            "invalid value {:?} for flag --compression_type: expected none, snappy, lz4 or zstd",
            f.compression_type
        )
    })?;
    talus::options::CacheType::parse(&f.cache_type).map_err(|_| {
        format!(
            "invalid value {:?} for flag --cache_type: expected lru_cache or hyper_clock_cache",
            f.cache_type
        )
    })?;
    if !ENGINES.contains(&f.engine.as_str()) {
        return Err(format!(
            "invalid value {:?} for flag --engine: expected talus, memory or rocksdb",
            f.engine
        ));
    }
    if f.engine == "rocksdb" && !cfg!(feature = "rocksdb") {
        return Err("flag --engine=rocksdb: this binary was built without the `rocksdb` feature \
                    (cargo build -p talus-cli --release --features rocksdb)"
            .into());
    }
    for b in f.benchmarks.split(',').filter(|b| !b.is_empty()) {
        if !BENCHMARKS.contains(&b) {
            return Err(format!("invalid value for flag --benchmarks: unknown benchmark '{b}'"));
        }
    }
    Ok(())
}
