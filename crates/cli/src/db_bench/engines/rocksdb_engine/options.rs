//! db_bench's flags as RocksDB options, through RocksDB's C API (`librocksdb-sys`): the same
//! flags mapped onto RocksDB's options of the same names, as RocksDB's own db_bench maps them.
//!
//! Owns the C API option objects until the database is open (RocksDB copies what it keeps);
//! called once by `RocksEngine::open`.

use std::ffi::c_int;

use librocksdb_sys as ffi;
use talus::WalRecoveryMode;

use super::super::super::flags::Flags;
use super::super::EResult;

/// A `rocksdb_options_t` (DB and column-family options, the table factory set), destroyed on drop.
pub struct DbOptions(pub *mut ffi::rocksdb_options_t);

impl Drop for DbOptions {
    fn drop(&mut self) {
        // SAFETY: created by rocksdb_options_create and destroyed only here.
        unsafe { ffi::rocksdb_options_destroy(self.0) }
    }
}

/// RocksDB's `CompressionType` number of a compression name.
fn compression(name: &str) -> EResult<c_int> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "none" | "no" => 0,
        "snappy" => 1,
        "lz4" => 4,
        "zstd" => 7,
        other => return Err(format!("compression_type {other:?} is not supported")),
    })
}

/// RocksDB's number of a compression name in Talus's spelling (`kLZ4Compression`, `lz4`, ...).
fn talus_compression(name: &str) -> EResult<c_int> {
    let t = talus::CompressionType::parse(name).map_err(|e| e.to_string())?;
    compression(&format!("{t:?}"))
}

fn b(v: bool) -> u8 {
    u8::from(v)
}

/// The options for `f` (creating the database unless `--use_existing_db` or `--readonly`).
pub fn db_options(f: &Flags) -> EResult<DbOptions> {
    let recovery = match WalRecoveryMode::parse(&f.wal_recovery_mode).map_err(|e| e.to_string())? {
        WalRecoveryMode::TolerateCorruptedTailRecords => 0,
        WalRecoveryMode::AbsoluteConsistency => 1,
        WalRecoveryMode::SkipAnyCorruptedRecords => 3,
        _ => 2,
    };
    let default_compression = compression(&f.compression_type)?;
    let per_level: Vec<c_int> = crate::db_bench::flags::compression_list(&f.compression_per_level)
        .map(talus_compression)
        .collect::<Result<_, _>>()?;
    let per_level = if !per_level.is_empty() {
        per_level
    } else if f.min_level_to_compress >= 0 {
        (0..f.num_levels.max(1))
            .map(|l| if l < f.min_level_to_compress { 0 } else { default_compression })
            .collect()
    } else {
        Vec::new()
    };
    let bottommost = match f.bottommost_compression.as_str() {
        "" | "kDisableCompressionOption" => None,
        c => Some(talus_compression(c)?),
    };
    let subcompactions =
        if f.max_subcompactions > 0 { f.max_subcompactions } else { f.subcompactions };
    // SAFETY (the whole block): every pointer passed is one just created here and not yet
    // destroyed; the setters copy what they keep (the filter policy is handed over to the table
    // options, which own it from then on).
    unsafe {
        let o = DbOptions(ffi::rocksdb_options_create());
        let p = o.0;
        ffi::rocksdb_options_set_create_if_missing(p, b(!f.use_existing_db && !f.readonly));
        ffi::rocksdb_options_set_wal_recovery_mode(p, recovery);
        ffi::rocksdb_options_set_write_buffer_size(p, f.write_buffer_size as usize);
        ffi::rocksdb_options_set_max_write_buffer_number(p, f.max_write_buffer_number as c_int);
        ffi::rocksdb_options_set_level0_file_num_compaction_trigger(
            p,
            f.level0_file_num_compaction_trigger as c_int,
        );
        ffi::rocksdb_options_set_level0_slowdown_writes_trigger(
            p,
            f.level0_slowdown_writes_trigger as c_int,
        );
        ffi::rocksdb_options_set_level0_stop_writes_trigger(
            p,
            f.level0_stop_writes_trigger as c_int,
        );
        ffi::rocksdb_options_set_max_bytes_for_level_base(p, f.max_bytes_for_level_base);
        ffi::rocksdb_options_set_max_bytes_for_level_multiplier(
            p,
            f.max_bytes_for_level_multiplier,
        );
        ffi::rocksdb_options_set_target_file_size_base(p, f.target_file_size_base);
        ffi::rocksdb_options_set_num_levels(p, f.num_levels as c_int);
        ffi::rocksdb_options_set_compaction_style(p, c_int::from(f.compaction_style == 1));
        ffi::rocksdb_options_set_max_background_jobs(p, f.max_background_jobs as c_int);
        ffi::rocksdb_options_set_enable_pipelined_write(p, b(f.enable_pipelined_write));
        ffi::rocksdb_options_set_table_cache_numshardbits(p, f.table_cache_numshardbits as c_int);
        // As RocksDB's db_bench (its --dump_malloc_stats defaults to true; it creates column
        // families as needed), so the OPTIONS files of the two compare equal.
        ffi::rocksdb_options_set_dump_malloc_stats(p, 1);
        ffi::rocksdb_options_set_create_missing_column_families(p, 1);
        ffi::rocksdb_options_set_atomic_flush(p, b(f.atomic_flush));
        ffi::rocksdb_options_set_max_total_wal_size(p, f.max_total_wal_size);
        ffi::rocksdb_options_set_allow_concurrent_memtable_write(
            p,
            b(f.allow_concurrent_memtable_write),
        );
        ffi::rocksdb_options_set_enable_write_thread_adaptive_yield(
            p,
            b(f.enable_write_thread_adaptive_yield),
        );
        ffi::rocksdb_options_set_max_open_files(p, f.open_files as c_int);
        ffi::rocksdb_options_set_disable_auto_compactions(
            p,
            c_int::from(f.disable_auto_compactions),
        );
        ffi::rocksdb_options_set_compression(p, default_compression);
        if !per_level.is_empty() {
            ffi::rocksdb_options_set_compression_per_level(p, per_level.as_ptr(), per_level.len());
        }
        if let Some(c) = bottommost {
            ffi::rocksdb_options_set_bottommost_compression(p, c);
        }
        if f.compression_level != 32767 {
            ffi::rocksdb_options_set_compression_options(
                p,
                -14,
                f.compression_level as c_int,
                0,
                0,
            );
        }
        ffi::rocksdb_options_set_level_compaction_dynamic_level_bytes(
            p,
            b(f.level_compaction_dynamic_level_bytes),
        );
        if f.wal_bytes_per_sync >= 0 {
            ffi::rocksdb_options_set_wal_bytes_per_sync(p, f.wal_bytes_per_sync as u64);
        }
        if let Some(m) = f.mmap_write {
            ffi::rocksdb_options_set_allow_mmap_writes(p, b(m));
        }
        ffi::rocksdb_options_set_target_file_size_multiplier(
            p,
            f.target_file_size_multiplier as c_int,
        );
        if f.max_compaction_bytes > 0 {
            ffi::rocksdb_options_set_max_compaction_bytes(p, f.max_compaction_bytes);
        }
        ffi::rocksdb_options_set_max_subcompactions(p, subcompactions as u32);
        // delayed_write_rate is left at RocksDB's default (the C API has no setter for it).
        ffi::rocksdb_options_set_soft_pending_compaction_bytes_limit(
            p,
            f.soft_pending_compaction_bytes_limit as usize,
        );
        ffi::rocksdb_options_set_hard_pending_compaction_bytes_limit(
            p,
            f.hard_pending_compaction_bytes_limit as usize,
        );
        if f.rate_limiter_bytes_per_sec > 0 {
            let r =
                ffi::rocksdb_ratelimiter_create(f.rate_limiter_bytes_per_sec as i64, 100_000, 10);
            ffi::rocksdb_options_set_ratelimiter(p, r);
            ffi::rocksdb_ratelimiter_destroy(r);
        }
        if f.compaction_style == 1 {
            let u = ffi::rocksdb_universal_compaction_options_create();
            // Each flag set (non-zero) goes to RocksDB's option of the same name.
            type Set =
                unsafe extern "C" fn(*mut ffi::rocksdb_universal_compaction_options_t, c_int);
            let settings: [(u64, Set); 4] = [
                (f.universal_size_ratio, ffi::rocksdb_universal_compaction_options_set_size_ratio),
                (
                    f.universal_min_merge_width,
                    ffi::rocksdb_universal_compaction_options_set_min_merge_width,
                ),
                (
                    f.universal_max_merge_width,
                    ffi::rocksdb_universal_compaction_options_set_max_merge_width,
                ),
                (
                    f.universal_max_size_amplification_percent,
                    ffi::rocksdb_universal_compaction_options_set_max_size_amplification_percent,
                ),
            ];
            for (v, set) in settings {
                if v > 0 {
                    set(u, v as c_int);
                }
            }
            ffi::rocksdb_options_set_universal_compaction_options(p, u);
            ffi::rocksdb_universal_compaction_options_destroy(u);
        }
        if f.statistics {
            ffi::rocksdb_options_enable_statistics(p);
        }
        ffi::rocksdb_options_set_use_direct_reads(p, b(f.use_direct_reads));
        ffi::rocksdb_options_set_use_direct_io_for_flush_and_compaction(
            p,
            b(f.use_direct_io_for_flush_and_compaction),
        );
        ffi::rocksdb_options_compaction_readahead_size(p, f.compaction_readahead_size as usize);
        ffi::rocksdb_options_set_enable_blob_files(p, b(f.enable_blob_files));
        ffi::rocksdb_options_set_min_blob_size(p, f.min_blob_size);
        ffi::rocksdb_options_set_blob_file_size(p, f.blob_file_size);
        ffi::rocksdb_options_set_blob_compression_type(
            p,
            talus_compression(&f.blob_compression_type)?,
        );
        ffi::rocksdb_options_set_blob_file_starting_level(p, f.blob_file_starting_level as c_int);
        ffi::rocksdb_options_set_enable_blob_gc(p, b(f.enable_blob_garbage_collection));
        ffi::rocksdb_options_set_blob_gc_age_cutoff(p, f.blob_garbage_collection_age_cutoff);
        ffi::rocksdb_options_set_blob_gc_force_threshold(
            p,
            f.blob_garbage_collection_force_threshold,
        );
        if f.use_blob_cache && (!f.use_shared_block_and_blob_cache || f.cache_size <= 0) {
            let c = lru_cache(f.blob_cache_size as usize, f.blob_cache_numshardbits);
            ffi::rocksdb_options_set_blob_cache(p, c);
            ffi::rocksdb_cache_destroy(c);
        }
        ffi::rocksdb_options_set_prepopulate_blob_cache(p, f.prepopulate_blob_cache as c_int);
        set_table_options(p, f);
        Ok(o)
    }
}

/// A new LRU cache of `capacity` bytes, with `2^shard_bits` shards (RocksDB's choice when
/// negative). The caller owns it (`rocksdb_cache_destroy`).
///
/// # Safety
/// Calls into RocksDB's C API only; no pointer of the caller's is read.
unsafe fn lru_cache(capacity: usize, shard_bits: i64) -> *mut ffi::rocksdb_cache_t {
    let co = ffi::rocksdb_lru_cache_options_create();
    ffi::rocksdb_lru_cache_options_set_capacity(co, capacity);
    if shard_bits >= 0 {
        ffi::rocksdb_lru_cache_options_set_num_shard_bits(co, shard_bits as c_int);
    }
    let c = ffi::rocksdb_cache_create_lru_opts(co);
    ffi::rocksdb_lru_cache_options_destroy(co);
    c
}

/// The block-based table factory for `f`, set on `p`.
///
/// # Safety
/// `p` must be a live `rocksdb_options_t`.
unsafe fn set_table_options(p: *mut ffi::rocksdb_options_t, f: &Flags) {
    let t = ffi::rocksdb_block_based_options_create();
    ffi::rocksdb_block_based_options_set_block_size(t, f.block_size as usize);
    // RocksDB's ChecksumType number, as db_bench passes it (flags/validate.rs allows 1 and 4).
    ffi::rocksdb_block_based_options_set_checksum(t, f.checksum_type as std::ffi::c_char);
    // As RocksDB's db_bench: either partition flag selects kTwoLevelIndexSearch (2).
    if f.partition_index || f.partition_index_and_filters {
        ffi::rocksdb_block_based_options_set_index_type(t, 2);
    }
    ffi::rocksdb_block_based_options_set_partition_filters(t, b(f.partition_index_and_filters));
    ffi::rocksdb_block_based_options_set_metadata_block_size(t, f.metadata_block_size as u64);
    ffi::rocksdb_block_based_options_set_pin_top_level_index_and_filter(
        t,
        b(f.pin_top_level_index_and_filter),
    );
    ffi::rocksdb_block_based_options_set_cache_index_and_filter_blocks(
        t,
        b(f.cache_index_and_filter_blocks),
    );
    ffi::rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(
        t,
        b(f.pin_l0_filter_and_index_blocks_in_cache),
    );
    if f.bloom_bits > 0 {
        // Owned by the table options from here on.
        let policy = ffi::rocksdb_filterpolicy_create_bloom_full(f.bloom_bits as f64);
        ffi::rocksdb_block_based_options_set_filter_policy(t, policy);
    }
    if f.cache_size > 0 {
        let cache = if f.cache_type.ends_with("hyper_clock_cache") || f.cache_type == "clock_cache"
        {
            // As RocksDB 10's db_bench: the fixed table sized for blocks of `block_size`, or
            // with `auto_hyper_clock_cache` the automatic (growing) one.
            let estimate = if f.estimated_entry_charge >= 0 {
                f.estimated_entry_charge as usize
            } else if f.cache_type == "auto_hyper_clock_cache" {
                0
            } else {
                f.block_size as usize
            };
            ffi::rocksdb_cache_create_hyper_clock(f.cache_size as usize, estimate)
        } else {
            lru_cache(f.cache_size as usize, f.cache_numshardbits)
        };
        ffi::rocksdb_block_based_options_set_block_cache(t, cache);
        if f.use_blob_cache && f.use_shared_block_and_blob_cache {
            // As RocksDB's db_bench: blobs share the block cache.
            ffi::rocksdb_options_set_blob_cache(p, cache);
        }
        ffi::rocksdb_cache_destroy(cache);
    } else {
        ffi::rocksdb_block_based_options_set_no_block_cache(t, 1);
    }
    ffi::rocksdb_options_set_block_based_table_factory(p, t);
    ffi::rocksdb_block_based_options_destroy(t);
}
