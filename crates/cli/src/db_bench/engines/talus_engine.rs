//! The `talus` engine: db_bench flags mapped one to one onto [`talus::Options`].

use std::path::Path;
use std::time::{Duration, Instant};

use talus::{
    ColumnFamily, CompactionStyle, CompressionType, Db, Options, RawIter, ReadOptions, WriteBatch,
    WriteOptions,
};

use super::super::flags::{compression_list, Flags};
use super::talus_txn::TalusTxnDb;
use super::txn::{EngineTxn, TxnKind};
use super::{EResult, Engine, EngineIter, Ops};

/// Builds the engine options from the flags, then applies `--options_file`, `--options` and
/// the engine options by RocksDB's name that have no db_bench flag (reading the OPTIONS file;
/// no other IO).
pub fn options(f: &Flags) -> EResult<Options> {
    let mut o = flag_options(f)?;
    if f.mmap_write == Some(true) {
        return Err(
            "invalid value true for flag --mmap_write: it is RocksDB's allow_mmap_writes, \
                    which maps SST files; Talus writes SSTs with write(2) and maps its WAL \
                    instead (--wal_mmap_writes, default true)"
                .into(),
        );
    }
    // RocksDB's db_bench sets compression_opts.level from --compression_level.
    let level = i32::try_from(f.compression_level).map_err(|_| {
        format!("invalid value {} for flag --compression_level", f.compression_level)
    })?;
    talus::check_compression_level(level)
        .map_err(|e| format!("invalid value {level} for flag --compression_level: {e}"))?;
    o.compression_level = level;
    let per_level: Vec<CompressionType> = compression_list(&f.compression_per_level)
        .map(|c| crate::options::engine::compression("compression_per_level", c))
        .collect::<Result<_, _>>()?;
    if !per_level.is_empty() {
        o.compression_per_level = per_level;
    } else if f.min_level_to_compress >= 0 {
        // As RocksDB's db_bench: levels below it uncompressed, the rest --compression_type.
        o.compression_per_level = (0..f.num_levels.max(1))
            .map(
                |l| if l < f.min_level_to_compress { CompressionType::None } else { o.compression },
            )
            .collect();
    }
    match f.bottommost_compression.as_str() {
        "" | "kDisableCompressionOption" => {}
        c => {
            o.bottommost_compression =
                Some(crate::options::engine::compression("bottommost_compression", c)?)
        }
    }
    if f.engine_extra.is_empty() {
        return Ok(o);
    }
    let words: Vec<String> = f.engine_extra.iter().map(|(k, v)| format!("--{k}={v}")).collect();
    let mut p = crate::options::Parsed::parse(&words);
    p.check(&crate::options::Spec { engine: true, ..Default::default() })?;
    crate::options::engine_options(&p, o, &[])
}

fn flag_options(f: &Flags) -> EResult<Options> {
    let compression = CompressionType::parse(&f.compression_type).map_err(|e| e.to_string())?;
    let d = Options::default();
    Ok(Options {
        create_if_missing: !f.use_existing_db && !f.readonly,
        wal_recovery_mode: talus::WalRecoveryMode::parse(&f.wal_recovery_mode)
            .map_err(|e| e.to_string())?,
        write_buffer_size: f.write_buffer_size as usize,
        max_write_buffer_number: f.max_write_buffer_number as usize,
        level0_file_num_compaction_trigger: f.level0_file_num_compaction_trigger as usize,
        level0_slowdown_writes_trigger: f.level0_slowdown_writes_trigger as usize,
        level0_stop_writes_trigger: f.level0_stop_writes_trigger as usize,
        max_bytes_for_level_base: f.max_bytes_for_level_base,
        max_bytes_for_level_multiplier: f.max_bytes_for_level_multiplier,
        target_file_size_base: f.target_file_size_base,
        num_levels: f.num_levels as usize,
        compaction_style: if f.compaction_style == 1 {
            CompactionStyle::Universal
        } else {
            CompactionStyle::Level
        },
        block_size: f.block_size as usize,
        bloom_bits_per_key: f.bloom_bits.max(0) as u32,
        compression,
        checksum: talus::ChecksumType::from_rocksdb_id(f.checksum_type)
            .ok_or_else(|| format!("--checksum_type={}: 1 or 4", f.checksum_type))?,
        block_cache_capacity: f.cache_size.max(0) as usize,
        // RocksDB's db_bench: a cache size of 0 or less means no block cache.
        no_block_cache: f.cache_size <= 0,
        cache_type: talus::options::CacheType::parse(&f.cache_type).map_err(|e| e.to_string())?,
        // As RocksDB 10's db_bench: `hyper_clock_cache` is the fixed table sized for blocks of
        // `block_size`, `auto_hyper_clock_cache` the growing one.
        estimated_entry_charge: if f.estimated_entry_charge >= 0 {
            f.estimated_entry_charge as usize
        } else if f.cache_type == "auto_hyper_clock_cache" {
            0
        } else {
            f.block_size.max(1) as usize
        },
        // -1: RocksDB's automatic shard count (one per 512 KiB for the LRU, per 32 MiB for the
        // clock cache, at most 64).
        block_cache_num_shard_bits: if f.cache_numshardbits < 0 {
            let min_shard: i64 = if f.cache_type == "lru_cache" { 512 << 10 } else { 32 << 20 };
            let mut shards = f.cache_size.max(0) / min_shard;
            let mut bits = 0;
            while shards > 1 && bits < 6 {
                shards >>= 1;
                bits += 1;
            }
            bits
        } else {
            f.cache_numshardbits as u32
        },
        cache_index_and_filter_blocks: f.cache_index_and_filter_blocks,
        pin_l0_filter_and_index_blocks_in_cache: f.pin_l0_filter_and_index_blocks_in_cache,
        // As RocksDB's db_bench: either partition flag selects kTwoLevelIndexSearch.
        index_type: if f.partition_index || f.partition_index_and_filters {
            talus::IndexType::TwoLevelIndexSearch
        } else {
            talus::IndexType::BinarySearch
        },
        partition_filters: f.partition_index_and_filters,
        metadata_block_size: f.metadata_block_size as usize,
        pin_top_level_index_and_filter: f.pin_top_level_index_and_filter,
        use_direct_reads: f.use_direct_reads,
        use_direct_io_for_flush_and_compaction: f.use_direct_io_for_flush_and_compaction,
        compaction_readahead_size: f.compaction_readahead_size as usize,
        enable_blob_files: f.enable_blob_files,
        min_blob_size: f.min_blob_size,
        blob_file_size: f.blob_file_size,
        blob_compression_type: CompressionType::parse(&f.blob_compression_type)
            .map_err(|e| format!("--blob_compression_type: {e}"))?,
        blob_file_starting_level: f.blob_file_starting_level as usize,
        enable_blob_garbage_collection: f.enable_blob_garbage_collection,
        blob_garbage_collection_age_cutoff: f.blob_garbage_collection_age_cutoff,
        blob_garbage_collection_force_threshold: f.blob_garbage_collection_force_threshold,
        blob_cache: f.use_blob_cache.then(|| {
            let bits =
                if f.blob_cache_numshardbits >= 0 { f.blob_cache_numshardbits as u32 } else { 6 };
            std::sync::Arc::new(talus::cache::LruCache::new(
                f.blob_cache_size as usize,
                bits,
                false,
            )) as _
        }),
        prepopulate_blob_cache: match f.prepopulate_blob_cache {
            0 => talus::blob::cache::PrepopulateBlobCache::Disable,
            1 => talus::blob::cache::PrepopulateBlobCache::FlushOnly,
            n => return Err(format!("--prepopulate_blob_cache={n}: 0 or 1")),
        },
        high_pri_pool_ratio: f.cache_high_pri_pool_ratio,
        wal_bytes_per_sync: if f.wal_bytes_per_sync >= 0 {
            f.wal_bytes_per_sync as u64
        } else {
            Options::default().wal_bytes_per_sync
        },
        wal_mmap_writes: f.wal_mmap_writes.unwrap_or(Options::default().wal_mmap_writes),
        atomic_flush: f.atomic_flush,
        max_total_wal_size: f.max_total_wal_size,
        allow_concurrent_memtable_write: f.allow_concurrent_memtable_write,
        enable_write_thread_adaptive_yield: f.enable_write_thread_adaptive_yield,
        write_thread_max_yield_usec: f.write_thread_max_yield_usec,
        max_open_files: f.open_files,
        statistics: f.statistics,
        max_background_jobs: f.max_background_jobs as usize,
        compaction_thread_nice: if f.compaction_thread_nice >= 0 {
            f.compaction_thread_nice as i32
        } else {
            Options::default().compaction_thread_nice
        },
        disable_auto_compactions: f.disable_auto_compactions,
        max_subcompactions: (if f.max_subcompactions > 0 {
            f.max_subcompactions
        } else {
            f.subcompactions
        })
        .max(1) as usize,
        level_compaction_dynamic_level_bytes: f.level_compaction_dynamic_level_bytes,
        target_file_size_multiplier: f.target_file_size_multiplier.max(1) as u32,
        max_compaction_bytes: f.max_compaction_bytes,
        intra_l0_compaction: f.intra_l0_compaction,
        delayed_write_rate: f.delayed_write_rate,
        soft_pending_compaction_bytes_limit: f.soft_pending_compaction_bytes_limit,
        hard_pending_compaction_bytes_limit: f.hard_pending_compaction_bytes_limit,
        rate_limiter_bytes_per_sec: f.rate_limiter_bytes_per_sec,
        size_ratio: if f.universal_size_ratio > 0 {
            f.universal_size_ratio as u32
        } else {
            d.size_ratio
        },
        min_merge_width: if f.universal_min_merge_width > 0 {
            f.universal_min_merge_width as usize
        } else {
            d.min_merge_width
        },
        max_merge_width: if f.universal_max_merge_width > 0 {
            f.universal_max_merge_width as usize
        } else {
            d.max_merge_width
        },
        merge_operator: talus::merge::builtin_by_name(&f.merge_operator),
        max_size_amplification_percent: if f.universal_max_size_amplification_percent > 0 {
            f.universal_max_size_amplification_percent as u32
        } else {
            d.max_size_amplification_percent
        },
        ..d
    })
}

/// A Talus database.
pub struct TalusEngine {
    db: Db,
    /// With `--num_column_families` N > 1: the N families, `default` first; a key goes to
    /// family key-number % N (RocksDB's db_bench `GetCfh`). Empty: `default` only.
    cfs: Vec<ColumnFamily>,
    wo: WriteOptions,
    ro: ReadOptions,
    /// With `--optimistic_transaction_db` or `--transaction_db`.
    txn: Option<TalusTxnDb>,
}

impl TalusEngine {
    /// Opens (creating unless `--use_existing_db`) the database at `path`; with `--readonly`,
    /// [`Db::open_read_only`].
    pub fn open(f: &Flags, path: &Path) -> EResult<Self> {
        let mut opts = options(f)?;
        let n =
            usize::try_from(f.num_column_families).ok().filter(|&n| n >= 1).ok_or_else(|| {
                format!(
                    "invalid value {} for flag --num_column_families: 1 or more",
                    f.num_column_families
                )
            })?;
        opts.create_missing_column_families = !f.readonly;
        let names: Vec<String> = (1..n).map(|i| format!("column_family_name_{i:06}")).collect();
        let descs = names.iter().map(|name| talus::ColumnFamilyDescriptor::new(name, opts.clone()));
        let descs: Vec<_> = descs.collect();
        let db = if f.readonly {
            Db::open_cf_read_only(path, opts, descs)
        } else {
            Db::open_cf(path, opts, descs)
        }
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
        let mut cfs = Vec::new();
        if n > 1 {
            cfs.push(db.default_column_family());
            for name in &names {
                cfs.push(db.cf_handle(name).ok_or_else(|| format!("no column family {name}"))?);
            }
        }
        let wo = WriteOptions { sync: f.sync, disable_wal: f.disable_wal };
        let ro = ReadOptions { verify_checksums: f.verify_checksum, ..ReadOptions::default() };
        let txn = TalusTxnDb::open(f, &db)?;
        Ok(TalusEngine { db, cfs, wo, ro, txn })
    }

    /// The family of `key` with several families: the key's number (its first 8 bytes, big
    /// endian, as db_bench writes them) modulo their count.
    fn cf_of(&self, key: &[u8]) -> Option<&ColumnFamily> {
        if self.cfs.is_empty() {
            return None;
        }
        let mut n = [0u8; 8];
        let len = key.len().min(8);
        n[8 - len..].copy_from_slice(&key[..len]);
        let i = (u64::from_be_bytes(n) % self.cfs.len() as u64) as usize;
        self.cfs.get(i)
    }

    fn prop(&self, name: &str) -> Option<String> {
        self.db.property(&format!("talus.{name}"))
    }
}

impl Engine for TalusEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        let mut b = WriteBatch::new();
        match self.cf_of(key) {
            Some(cf) => b.put_cf(cf, key, value),
            None => b.put(key, value),
        }
        self.db.write(b, &self.wo).map_err(|e| e.to_string())
    }

    fn write(&self, ops: &Ops) -> EResult<()> {
        let mut b = WriteBatch::new();
        for (del, k, v) in ops.iter() {
            match (del, self.cf_of(k)) {
                (true, Some(cf)) => b.delete_cf(cf, k),
                (true, None) => b.delete(k),
                (false, Some(cf)) => b.put_cf(cf, k, v),
                (false, None) => b.put(k, v),
            }
        }
        self.db.write(b, &self.wo).map_err(|e| e.to_string())
    }

    fn merge(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        let mut b = WriteBatch::new();
        b.merge(key, value);
        self.db.write(b, &self.wo).map_err(|e| e.to_string())
    }

    fn get(&self, key: &[u8]) -> EResult<Option<usize>> {
        // Pinned and released, never copied: RocksDB's db_bench reads into a PinnableSlice and
        // only takes its size.
        let v = match self.cf_of(key) {
            Some(cf) => self.db.get_pinned_cf_opt(cf, key, &self.ro),
            None => self.db.get_pinned_opt(key, &self.ro),
        };
        Ok(v.map_err(|e| e.to_string())?.map(|v| v.len()))
    }

    fn get_value(&self, key: &[u8]) -> EResult<Option<Vec<u8>>> {
        match self.cf_of(key) {
            Some(cf) => self.db.get_cf_opt(cf, key, &self.ro),
            None => self.db.get_opt(key, &self.ro),
        }
        .map_err(|e| e.to_string())
    }

    fn txn_kind(&self) -> TxnKind {
        self.txn.as_ref().map_or(TxnKind::None, TalusTxnDb::kind)
    }

    fn begin_txn(&self) -> EResult<Box<dyn EngineTxn + '_>> {
        match &self.txn {
            Some(t) => Ok(t.begin(&self.wo)),
            None => Err("the database was opened without transactions".into()),
        }
    }

    fn multi_get(&self, keys: &[Vec<u8>], sizes: &mut Vec<Option<usize>>) -> EResult<()> {
        sizes.clear();
        if !self.cfs.is_empty() {
            for k in keys {
                sizes.push(self.get(k)?);
            }
            return Ok(());
        }
        for r in self.db.multi_get(keys, &self.ro) {
            sizes.push(r.map_err(|e| e.to_string())?.map(|v| v.len()));
        }
        Ok(())
    }

    fn iter(&self) -> Box<dyn EngineIter + '_> {
        Box::new(TalusIter(self.db.raw_iter(&self.ro)))
    }

    fn flush(&self) -> EResult<()> {
        self.db.flush().map_err(|e| e.to_string())
    }

    fn compact(&self) -> EResult<()> {
        if self.cfs.is_empty() {
            return self.db.compact_range(None, None).map_err(|e| e.to_string());
        }
        for cf in &self.cfs {
            self.db.compact_range_cf(cf, None, None).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Talus has no `WaitForCompact` yet: uses `talus.compaction-pending` if the engine reports
    /// it, else waits until no immutable memtable is left and the level shape has not changed for
    /// one second.
    fn wait_for_compaction(&self) -> EResult<()> {
        let deadline = Instant::now() + Duration::from_secs(3600);
        let mut last = None;
        let mut stable = 0;
        while Instant::now() < deadline {
            if let Some(p) = self.prop("compaction-pending") {
                let running = self.prop("num-running-compactions").unwrap_or_else(|| "0".into());
                let imm = self.prop("num-immutable-mem-table").unwrap_or_else(|| "0".into());
                if p.trim() == "0" && running.trim() == "0" && imm.trim() == "0" {
                    return Ok(());
                }
            } else {
                let shape = (self.prop("levelstats"), self.prop("num-immutable-mem-table"));
                let idle = shape.1.as_deref().is_none_or(|s| s.trim() == "0");
                if idle && last.as_ref() == Some(&shape) {
                    stable += 1;
                    if stable >= 5 {
                        return Ok(());
                    }
                } else {
                    stable = 0;
                }
                last = Some(shape);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err("waitforcompaction: still busy after an hour".into())
    }

    fn property(&self, name: &str) -> Option<String> {
        if name == "statistics" {
            return self.db.property("rocksdb.options-statistics");
        }
        self.prop(name)
    }

    fn memtable_name(&self) -> &'static str {
        "SkipListFactory"
    }
}

struct TalusIter(RawIter);

impl EngineIter for TalusIter {
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
        self.0.key()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
    fn status(&self) -> EResult<()> {
        self.0.status().map_err(|e| e.to_string())
    }
}
