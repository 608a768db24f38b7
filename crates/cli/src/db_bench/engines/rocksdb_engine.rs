//! The `rocksdb` engine (cargo feature `rocksdb`): RocksDB through the `rocksdb` crate, with the
//! same flags mapped onto RocksDB's options of the same names.

use std::path::Path;
use std::time::Duration;

use rocksdb::{
    BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, DBRawIteratorWithThreadMode,
    DBRecoveryMode, LruCacheOptions, Options, ReadOptions, WriteBatch, WriteOptions, DB,
};
use talus::WalRecoveryMode;

use super::super::flags::Flags;
use super::{EResult, Engine, EngineIter, Ops};

/// A RocksDB database.
pub struct RocksEngine {
    db: DB,
    wo: WriteOptions,
    /// One `ReadOptions` for every get (RocksDB's db_bench keeps one too); iterators take theirs
    /// by value, so they get a fresh copy (as db_bench's `ReadOptions options = read_options_`).
    ro: ReadOptions,
    verify_checksums: bool,
    /// RocksDB's `PerfLevel` for every benchmark thread (thread-local in RocksDB; db_bench sets
    /// it in each thread, `--perf_level`, default 1 = kDisable).
    perf_level: i64,
}

fn read_options(verify_checksums: bool) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_verify_checksums(verify_checksums);
    ro
}

fn compression(name: &str) -> EResult<DBCompressionType> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "none" | "no" => DBCompressionType::None,
        "snappy" => DBCompressionType::Snappy,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        other => return Err(format!("compression_type {other:?} is not supported")),
    })
}

impl RocksEngine {
    /// Opens (creating unless `--use_existing_db`; read-only with `--readonly`) the database
    /// at `path`.
    pub fn open(f: &Flags, path: &Path) -> EResult<Self> {
        if let Some((name, _)) = f.engine_extra.first() {
            return Err(format!(
                "flag --{name}: engine options beyond db_bench's own flags (and --options_file, \
                 --options) are applied to --engine=talus only"
            ));
        }
        if f.wal_mmap_writes == Some(true) {
            return Err(
                "invalid value true for flag --wal_mmap_writes: RocksDB cannot map its WAL \
                        (PosixFileSystem::OptimizeForLogWrite turns use_mmap_writes off)"
                    .into(),
            );
        }
        let mut o = Options::default();
        o.create_if_missing(!f.use_existing_db && !f.readonly);
        o.set_wal_recovery_mode(
            match WalRecoveryMode::parse(&f.wal_recovery_mode).map_err(|e| e.to_string())? {
                WalRecoveryMode::TolerateCorruptedTailRecords => {
                    DBRecoveryMode::TolerateCorruptedTailRecords
                }
                WalRecoveryMode::AbsoluteConsistency => DBRecoveryMode::AbsoluteConsistency,
                WalRecoveryMode::SkipAnyCorruptedRecords => DBRecoveryMode::SkipAnyCorruptedRecord,
                _ => DBRecoveryMode::PointInTime,
            },
        );
        o.set_write_buffer_size(f.write_buffer_size as usize);
        o.set_max_write_buffer_number(f.max_write_buffer_number as i32);
        o.set_level_zero_file_num_compaction_trigger(f.level0_file_num_compaction_trigger as i32);
        o.set_level_zero_slowdown_writes_trigger(f.level0_slowdown_writes_trigger as i32);
        o.set_level_zero_stop_writes_trigger(f.level0_stop_writes_trigger as i32);
        o.set_max_bytes_for_level_base(f.max_bytes_for_level_base);
        o.set_max_bytes_for_level_multiplier(f.max_bytes_for_level_multiplier);
        o.set_target_file_size_base(f.target_file_size_base);
        o.set_num_levels(f.num_levels as i32);
        o.set_compaction_style(if f.compaction_style == 1 {
            DBCompactionStyle::Universal
        } else {
            DBCompactionStyle::Level
        });
        o.set_max_background_jobs(f.max_background_jobs as i32);
        o.set_enable_pipelined_write(f.enable_pipelined_write);
        o.set_table_cache_num_shard_bits(f.table_cache_numshardbits as i32);
        // As RocksDB's db_bench (its --dump_malloc_stats defaults to true; it creates column
        // families as needed), so the OPTIONS files of the two compare equal.
        o.set_dump_malloc_stats(true);
        o.create_missing_column_families(true);
        o.set_allow_concurrent_memtable_write(f.allow_concurrent_memtable_write);
        o.set_max_open_files(f.open_files as i32);
        o.set_disable_auto_compactions(f.disable_auto_compactions);
        o.set_compression_type(compression(&f.compression_type)?);
        let per_level: Vec<DBCompressionType> =
            crate::db_bench::flags::compression_list(&f.compression_per_level)
                .map(|c| {
                    let t = talus::CompressionType::parse(c).map_err(|e| e.to_string())?;
                    compression(&format!("{t:?}").to_lowercase())
                })
                .collect::<Result<_, _>>()?;
        if !per_level.is_empty() {
            o.set_compression_per_level(&per_level);
        } else if f.min_level_to_compress >= 0 {
            let c = compression(&f.compression_type)?;
            let levels: Vec<DBCompressionType> = (0..f.num_levels.max(1))
                .map(|l| if l < f.min_level_to_compress { DBCompressionType::None } else { c })
                .collect();
            o.set_compression_per_level(&levels);
        }
        match f.bottommost_compression.as_str() {
            "" | "kDisableCompressionOption" => {}
            c => {
                let t = talus::CompressionType::parse(c).map_err(|e| e.to_string())?;
                o.set_bottommost_compression_type(compression(&format!("{t:?}").to_lowercase())?);
            }
        }
        if f.compression_level != 32767 {
            o.set_compression_options(-14, f.compression_level as i32, 0, 0);
        }
        o.set_level_compaction_dynamic_level_bytes(f.level_compaction_dynamic_level_bytes);
        if f.wal_bytes_per_sync >= 0 {
            o.set_wal_bytes_per_sync(f.wal_bytes_per_sync as u64);
        }
        if let Some(m) = f.mmap_write {
            o.set_allow_mmap_writes(m);
        }
        o.set_target_file_size_multiplier(f.target_file_size_multiplier as i32);
        if f.max_compaction_bytes > 0 {
            o.set_max_compaction_bytes(f.max_compaction_bytes);
        }
        let subcompactions =
            if f.max_subcompactions > 0 { f.max_subcompactions } else { f.subcompactions };
        o.set_max_subcompactions(subcompactions as u32);
        // The crate has no setter for delayed_write_rate: RocksDB keeps its default there.
        o.set_soft_pending_compaction_bytes_limit(f.soft_pending_compaction_bytes_limit as usize);
        o.set_hard_pending_compaction_bytes_limit(f.hard_pending_compaction_bytes_limit as usize);
        if f.rate_limiter_bytes_per_sec > 0 {
            o.set_ratelimiter(f.rate_limiter_bytes_per_sec as i64, 100_000, 10);
        }
        if f.compaction_style == 1 {
            let mut u = rocksdb::UniversalCompactOptions::default();
            if f.universal_size_ratio > 0 {
                u.set_size_ratio(f.universal_size_ratio as i32);
            }
            if f.universal_min_merge_width > 0 {
                u.set_min_merge_width(f.universal_min_merge_width as i32);
            }
            if f.universal_max_merge_width > 0 {
                u.set_max_merge_width(f.universal_max_merge_width as i32);
            }
            if f.universal_max_size_amplification_percent > 0 {
                u.set_max_size_amplification_percent(
                    f.universal_max_size_amplification_percent as i32,
                );
            }
            o.set_universal_compaction_options(&u);
        }
        if f.statistics {
            o.enable_statistics();
        }
        o.set_use_direct_reads(f.use_direct_reads);
        o.set_use_direct_io_for_flush_and_compaction(f.use_direct_io_for_flush_and_compaction);
        o.set_compaction_readahead_size(f.compaction_readahead_size as usize);
        let mut t = BlockBasedOptions::default();
        t.set_block_size(f.block_size as usize);
        // As RocksDB's db_bench: either partition flag selects kTwoLevelIndexSearch.
        if f.partition_index || f.partition_index_and_filters {
            t.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
        }
        t.set_partition_filters(f.partition_index_and_filters);
        t.set_metadata_block_size(f.metadata_block_size as usize);
        t.set_pin_top_level_index_and_filter(f.pin_top_level_index_and_filter);
        t.set_cache_index_and_filter_blocks(f.cache_index_and_filter_blocks);
        t.set_pin_l0_filter_and_index_blocks_in_cache(f.pin_l0_filter_and_index_blocks_in_cache);
        if f.bloom_bits > 0 {
            t.set_bloom_filter(f.bloom_bits as f64, false);
        }
        if f.cache_size > 0 {
            let cache =
                if f.cache_type.ends_with("hyper_clock_cache") || f.cache_type == "clock_cache" {
                    // As RocksDB 10's db_bench: the fixed table sized for blocks of `block_size`, or
                    // with `auto_hyper_clock_cache` the automatic (growing) one.
                    let estimate = if f.estimated_entry_charge >= 0 {
                        f.estimated_entry_charge as usize
                    } else if f.cache_type == "auto_hyper_clock_cache" {
                        0
                    } else {
                        f.block_size as usize
                    };
                    Cache::new_hyper_clock_cache(f.cache_size as usize, estimate)
                } else {
                    let mut co = LruCacheOptions::default();
                    co.set_capacity(f.cache_size as usize);
                    if f.cache_numshardbits >= 0 {
                        co.set_num_shard_bits(f.cache_numshardbits as i32);
                    }
                    Cache::new_lru_cache_opts(&co)
                };
            t.set_block_cache(&cache);
        } else {
            t.disable_cache();
        }
        o.set_block_based_table_factory(&t);
        let db =
            if f.readonly { DB::open_for_read_only(&o, path, false) } else { DB::open(&o, path) }
                .map_err(|e| format!("opening {}: {e}", path.display()))?;
        let mut wo = WriteOptions::default();
        wo.set_sync(f.sync);
        wo.disable_wal(f.disable_wal);
        let verify_checksums = f.verify_checksum;
        let ro = read_options(verify_checksums);
        Ok(RocksEngine { db, wo, ro, verify_checksums, perf_level: f.perf_level })
    }

    fn int_prop(&self, name: &str) -> u64 {
        self.db.property_int_value(name).ok().flatten().unwrap_or(0)
    }
}

impl Engine for RocksEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        self.db.put_opt(key, value, &self.wo).map_err(|e| e.to_string())
    }

    fn write(&self, ops: &Ops) -> EResult<()> {
        let mut b = WriteBatch::default();
        for (del, k, v) in ops.iter() {
            if del {
                b.delete(k);
            } else {
                b.put(k, v);
            }
        }
        self.db.write_opt(b, &self.wo).map_err(|e| e.to_string())
    }

    fn get(&self, key: &[u8]) -> EResult<Option<usize>> {
        let v = self.db.get_pinned_opt(key, &self.ro).map_err(|e| e.to_string())?;
        Ok(v.map(|v| v.len()))
    }

    fn multi_get(&self, keys: &[Vec<u8>], sizes: &mut Vec<Option<usize>>) -> EResult<()> {
        sizes.clear();
        for r in self.db.multi_get_opt(keys, &self.ro) {
            sizes.push(r.map_err(|e| e.to_string())?.map(|v| v.len()));
        }
        Ok(())
    }

    fn iter(&self) -> Box<dyn EngineIter + '_> {
        Box::new(RocksIter(self.db.raw_iterator_opt(read_options(self.verify_checksums))))
    }

    fn flush(&self) -> EResult<()> {
        self.db.flush().map_err(|e| e.to_string())
    }

    fn compact(&self) -> EResult<()> {
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }

    fn wait_for_compaction(&self) -> EResult<()> {
        loop {
            let busy = self.int_prop("rocksdb.compaction-pending")
                + self.int_prop("rocksdb.num-running-compactions")
                + self.int_prop("rocksdb.num-running-flushes")
                + self.int_prop("rocksdb.mem-table-flush-pending");
            if busy == 0 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn property(&self, name: &str) -> Option<String> {
        let full = if name == "statistics" {
            "rocksdb.options-statistics".to_string()
        } else {
            format!("rocksdb.{name}")
        };
        self.db.property_value(full.as_str()).ok().flatten()
    }

    fn memtable_name(&self) -> &'static str {
        "SkipListFactory"
    }

    fn thread_init(&self) {
        use rocksdb::perf::{set_perf_stats, PerfStatsLevel};
        let level = match self.perf_level {
            0 => PerfStatsLevel::Uninitialized,
            1 => PerfStatsLevel::Disable,
            2 => PerfStatsLevel::EnableCount,
            3 => PerfStatsLevel::EnableTimeExceptForMutex,
            4 => PerfStatsLevel::EnableTimeAndCPUTimeExceptForMutex,
            _ => PerfStatsLevel::EnableTime,
        };
        set_perf_stats(level);
    }
}

struct RocksIter<'a>(DBRawIteratorWithThreadMode<'a, DB>);

impl EngineIter for RocksIter<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.0.seek(key)
    }
    fn seek_to_first(&mut self) {
        self.0.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.0.seek_to_last()
    }
    fn next(&mut self) {
        self.0.next()
    }
    fn prev(&mut self) {
        self.0.prev()
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key().unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.0.value().unwrap_or(&[])
    }
    fn status(&self) -> EResult<()> {
        self.0.status().map_err(|e| e.to_string())
    }
}
