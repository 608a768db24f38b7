//! The `OPTIONS-NNNNNN` file: every option Talus has, in RocksDB's ini format, names and value
//! spellings (`kLZ4Compression`, `kCompactionStyleLevel`, `bloomfilter:10:false`, ...), so that
//! a Talus file and one RocksDB wrote can be compared line by line (`bench/compare.py` does) and
//! read by the same parser.
//!
//! Called by `Db::open` (which writes the file after a successful open); pure formatting, no IO.
//! Options RocksDB does not have are written under their Talus names in the section they
//! belong to; RocksDB's own options Talus does not have are not written.

use std::fmt::Write;

use crate::cache::MetadataChargePolicy;
use crate::options::{CacheType, CompactionStyle, CompressionType, Options, WalRecoveryMode};

/// RocksDB's enum spelling of a compression type (`kNoCompression`, `kLZ4Compression`, ...).
pub fn compression_name(c: CompressionType) -> &'static str {
    match c {
        CompressionType::None => "kNoCompression",
        CompressionType::Snappy => "kSnappyCompression",
        CompressionType::Lz4 => "kLZ4Compression",
        CompressionType::Zstd => "kZSTD",
    }
}

/// `compression_opts` in RocksDB's struct form, with `level` and `enabled` (the fields Talus
/// reads; no dictionaries).
fn compression_opts_text(level: i32, enabled: bool) -> String {
    format!(
        "{{window_bits=-14;level={level};strategy=0;max_dict_bytes=0;zstd_max_train_bytes=0;\
         enabled={enabled};}}"
    )
}

/// RocksDB's enum spelling of a WAL recovery mode.
pub fn wal_recovery_mode_name(m: WalRecoveryMode) -> &'static str {
    match m {
        WalRecoveryMode::TolerateCorruptedTailRecords => "kTolerateCorruptedTailRecords",
        WalRecoveryMode::AbsoluteConsistency => "kAbsoluteConsistency",
        WalRecoveryMode::PointInTimeRecovery => "kPointInTimeRecovery",
        WalRecoveryMode::SkipAnyCorruptedRecords => "kSkipAnyCorruptedRecords",
    }
}

/// RocksDB's enum spelling of a compaction style.
pub fn compaction_style_name(s: CompactionStyle) -> &'static str {
    match s {
        CompactionStyle::Level => "kCompactionStyleLevel",
        CompactionStyle::Universal => "kCompactionStyleUniversal",
    }
}

/// RocksDB's name of a metadata charge policy.
fn charge_policy(p: MetadataChargePolicy) -> &'static str {
    match p {
        MetadataChargePolicy::DontCharge => "kDontChargeCacheMetadata",
        MetadataChargePolicy::FullCharge => "kFullChargeCacheMetadata",
    }
}

/// A double as RocksDB writes it (`std::to_string`: six decimals).
fn double(x: f64) -> String {
    format!("{x:.6}")
}

/// The whole file for `o`.
pub fn render(o: &Options) -> String {
    let mut s = String::with_capacity(4096);
    s.push_str(
        "# This is a Talus option file, in RocksDB's OPTIONS format.\n#\n\
         # Names and values are RocksDB's; options RocksDB lacks carry Talus's names.\n#\n\n",
    );
    let _ = writeln!(s, "[Version]\n  talus_version={}\n  options_file_version=1.1\n", {
        env!("CARGO_PKG_VERSION")
    });
    let db: Vec<(&str, String)> = vec![
        ("create_if_missing", o.create_if_missing.to_string()),
        ("error_if_exists", o.error_if_exists.to_string()),
        ("create_missing_column_families", o.create_missing_column_families.to_string()),
        ("paranoid_checks", o.paranoid_checks.to_string()),
        ("atomic_flush", o.atomic_flush.to_string()),
        ("max_total_wal_size", o.max_total_wal_size.to_string()),
        ("max_open_files", o.max_open_files.to_string()),
        ("max_background_jobs", o.max_background_jobs.to_string()),
        ("compaction_thread_nice", o.compaction_thread_nice.to_string()),
        ("max_subcompactions", o.max_subcompactions.to_string()),
        ("wal_recovery_mode", wal_recovery_mode_name(o.wal_recovery_mode).to_string()),
        ("delayed_write_rate", o.delayed_write_rate.to_string()),
        ("wal_bytes_per_sync", o.wal_bytes_per_sync.to_string()),
        // RocksDB's name maps SST files, which Talus never does; Talus's WAL mapping has its own.
        ("allow_mmap_writes", "false".to_string()),
        ("wal_mmap_writes", o.wal_mmap_writes.to_string()),
        ("allow_concurrent_memtable_write", o.allow_concurrent_memtable_write.to_string()),
        ("enable_write_thread_adaptive_yield", o.enable_write_thread_adaptive_yield.to_string()),
        ("write_thread_max_yield_usec", o.write_thread_max_yield_usec.to_string()),
        ("rate_limiter_bytes_per_sec", o.rate_limiter_bytes_per_sec.to_string()),
        ("use_direct_reads", o.use_direct_reads.to_string()),
        (
            "use_direct_io_for_flush_and_compaction",
            o.use_direct_io_for_flush_and_compaction.to_string(),
        ),
        ("compaction_readahead_size", o.compaction_readahead_size.to_string()),
    ];
    // The device caps (Talus only), written only when set: 0 is not a cap a reader accepts.
    let l = o.io_limits;
    let caps = [
        ("io_limit_read_iops", l.read_iops),
        ("io_limit_write_iops", l.write_iops),
        ("io_limit_read_bytes_per_sec", l.read_bytes_per_sec),
        ("io_limit_write_bytes_per_sec", l.write_bytes_per_sec),
        ("io_limit_iops", l.iops),
        ("io_limit_bytes_per_sec", l.bytes_per_sec),
    ];
    let mut db = db;
    db.extend(caps.iter().filter(|c| c.1 > 0).map(|&(n, v)| (n, v.to_string())));
    section(&mut s, "[DBOptions]", &db);
    family_sections(&mut s, crate::column_family::DEFAULT_COLUMN_FAMILY_NAME, o);
    s
}

/// The whole file for a database with options `db` (also `default`'s) and the other families
/// `families` (name, options): one `[CFOptions "NAME"]` and one
/// `[TableOptions/BlockBasedTable "NAME"]` section per family, as RocksDB writes them.
pub fn render_families(db: &Options, families: &[(&str, &Options)]) -> String {
    let mut s = render(db);
    for (name, o) in families {
        family_sections(&mut s, name, o);
    }
    s
}

/// The `[CFOptions "NAME"]` and `[TableOptions/BlockBasedTable "NAME"]` sections of family
/// `name` with options `o`.
fn family_sections(s: &mut String, name: &str, o: &Options) {
    let u32_or_max = |v: usize| if v >= u32::MAX as usize { u32::MAX as u64 } else { v as u64 };
    let per_level: Vec<&str> =
        o.compression_per_level.iter().map(|&c| compression_name(c)).collect();
    let cf: Vec<(&str, String)> = vec![
        ("write_buffer_size", o.write_buffer_size.to_string()),
        ("max_write_buffer_number", o.max_write_buffer_number.to_string()),
        ("level0_file_num_compaction_trigger", o.level0_file_num_compaction_trigger.to_string()),
        ("level0_slowdown_writes_trigger", o.level0_slowdown_writes_trigger.to_string()),
        ("level0_stop_writes_trigger", o.level0_stop_writes_trigger.to_string()),
        ("max_bytes_for_level_base", o.max_bytes_for_level_base.to_string()),
        ("max_bytes_for_level_multiplier", double(o.max_bytes_for_level_multiplier)),
        ("target_file_size_base", o.target_file_size_base.to_string()),
        ("target_file_size_multiplier", o.target_file_size_multiplier.to_string()),
        ("num_levels", o.num_levels.to_string()),
        ("compaction_style", compaction_style_name(o.compaction_style).to_string()),
        ("compression", compression_name(o.compression).to_string()),
        ("compression_per_level", per_level.join(":")),
        (
            "bottommost_compression",
            o.bottommost_compression.map_or("kDisableCompressionOption", compression_name).to_string(),
        ),
        // RocksDB's struct form, the fields Talus reads (the level; dictionaries are never on).
        ("compression_opts", compression_opts_text(o.compression_level, false)),
        (
            "bottommost_compression_opts",
            match o.bottommost_compression_level {
                Some(l) => compression_opts_text(l, true),
                None => compression_opts_text(o.compression_level, false),
            },
        ),
        ("disable_auto_compactions", o.disable_auto_compactions.to_string()),
        ("enable_blob_files", o.enable_blob_files.to_string()),
        ("min_blob_size", o.min_blob_size.to_string()),
        ("blob_file_size", o.blob_file_size.to_string()),
        ("blob_compression_type", compression_name(o.blob_compression_type).to_string()),
        ("blob_file_starting_level", o.blob_file_starting_level.to_string()),
        ("enable_blob_garbage_collection", o.enable_blob_garbage_collection.to_string()),
        ("blob_garbage_collection_age_cutoff", double(o.blob_garbage_collection_age_cutoff)),
        (
            "blob_garbage_collection_force_threshold",
            double(o.blob_garbage_collection_force_threshold),
        ),
        (
            "prepopulate_blob_cache",
            match o.prepopulate_blob_cache {
                crate::options::PrepopulateBlobCache::Disable => "kDisable",
                crate::options::PrepopulateBlobCache::FlushOnly => "kFlushOnly",
            }
            .to_string(),
        ),
        ("level_compaction_dynamic_level_bytes", o.level_compaction_dynamic_level_bytes.to_string()),
        ("max_compaction_bytes", o.effective_max_compaction_bytes().to_string()),
        ("soft_pending_compaction_bytes_limit", o.soft_pending_compaction_bytes_limit.to_string()),
        ("hard_pending_compaction_bytes_limit", o.hard_pending_compaction_bytes_limit.to_string()),
        (
            "compaction_options_universal",
            format!(
                "{{size_ratio={};min_merge_width={};max_merge_width={};max_size_amplification_percent={}}}",
                o.size_ratio,
                o.min_merge_width,
                u32_or_max(o.max_merge_width),
                o.max_size_amplification_percent
            ),
        ),
        ("intra_l0_compaction", o.intra_l0_compaction.to_string()),
        // RocksDB writes the operator's and the filter's names (or nullptr); a reader can make
        // only the built-in operators from them.
        ("merge_operator", o.merge_operator.as_ref().map_or("nullptr", |m| m.name()).to_string()),
        (
            "compaction_filter",
            o.compaction_filter.as_ref().map_or("nullptr", |f| f.name()).to_string(),
        ),
    ];
    section(s, &format!("[CFOptions \"{name}\"]"), &cf);
    let cache = match o.cache_type {
        CacheType::LruCache => format!(
            "{{id=LRUCache;capacity={};num_shard_bits={};strict_capacity_limit={};high_pri_pool_ratio={};metadata_charge_policy={}}}",
            o.block_cache_capacity,
            o.block_cache_num_shard_bits,
            o.block_cache_strict_capacity_limit,
            double(o.high_pri_pool_ratio),
            charge_policy(o.block_cache_metadata_charge_policy)
        ),
        CacheType::HyperClockCache => format!(
            "{{id=HyperClockCache;capacity={};num_shard_bits={};strict_capacity_limit={};estimated_entry_charge={};metadata_charge_policy={}}}",
            o.block_cache_capacity,
            o.block_cache_num_shard_bits,
            o.block_cache_strict_capacity_limit,
            o.estimated_entry_charge,
            charge_policy(o.block_cache_metadata_charge_policy)
        ),
    };
    let filter = if o.bloom_bits_per_key == 0 {
        "nullptr".to_string()
    } else {
        format!("bloomfilter:{}:false", o.bloom_bits_per_key)
    };
    let table: Vec<(&str, String)> = vec![
        ("block_size", o.block_size.to_string()),
        ("block_restart_interval", o.block_restart_interval.to_string()),
        ("block_size_deviation", o.block_size_deviation.to_string()),
        ("checksum", o.checksum.rocksdb_name().to_string()),
        ("filter_policy", filter),
        ("whole_key_filtering", "true".to_string()),
        ("cache_index_and_filter_blocks", o.cache_index_and_filter_blocks.to_string()),
        (
            "pin_l0_filter_and_index_blocks_in_cache",
            o.pin_l0_filter_and_index_blocks_in_cache.to_string(),
        ),
        ("pin_top_level_index_and_filter", o.pin_top_level_index_and_filter.to_string()),
        ("index_type", o.index_type.name().to_string()),
        ("partition_filters", o.partition_filters.to_string()),
        ("metadata_block_size", o.metadata_block_size.to_string()),
        ("block_cache", cache),
    ];
    section(s, &format!("[TableOptions/BlockBasedTable \"{name}\"]"), &table);
}

fn section(s: &mut String, header: &str, items: &[(&str, String)]) {
    s.push_str(header);
    s.push('\n');
    for (k, v) in items {
        let _ = writeln!(s, "  {k}={v}");
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_names_and_spellings() {
        let o = Options {
            compression_per_level: vec![CompressionType::None, CompressionType::Lz4],
            bottommost_compression: Some(CompressionType::Zstd),
            ..Default::default()
        };
        let text = render(&o);
        for line in [
            "[DBOptions]",
            "  max_open_files=-1",
            "  wal_recovery_mode=kPointInTimeRecovery",
            "[CFOptions \"default\"]",
            "  compression=kLZ4Compression",
            "  compression_per_level=kNoCompression:kLZ4Compression",
            "  bottommost_compression=kZSTD",
            "  compaction_style=kCompactionStyleLevel",
            "  max_bytes_for_level_multiplier=10.000000",
            "  max_compaction_bytes=1677721600",
            "[TableOptions/BlockBasedTable \"default\"]",
            "  checksum=kXXH3",
            "  filter_policy=bloomfilter:10:false",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        for line in [
            "  use_direct_reads=false",
            "  use_direct_io_for_flush_and_compaction=false",
            "  compaction_readahead_size=2097152",
            "  index_type=kBinarySearch",
            "  partition_filters=false",
            "  metadata_block_size=4096",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        let io = render(&Options {
            use_direct_reads: true,
            use_direct_io_for_flush_and_compaction: true,
            index_type: crate::options::IndexType::TwoLevelIndexSearch,
            partition_filters: true,
            ..Default::default()
        });
        for line in [
            "  use_direct_reads=true",
            "  use_direct_io_for_flush_and_compaction=true",
            "  index_type=kTwoLevelIndexSearch",
            "  partition_filters=true",
        ] {
            assert!(io.lines().any(|l| l == line), "missing {line:?} in\n{io}");
        }
        let crc = render(&Options { checksum: crate::options::ChecksumType::Crc32c, ..o });
        assert!(crc.contains("\n  checksum=kCRC32c\n"), "{crc}");
        let none = render(&Options { bloom_bits_per_key: 0, ..Default::default() });
        assert!(none.contains("  filter_policy=nullptr\n"));
        assert!(none.contains("  merge_operator=nullptr\n  compaction_filter=nullptr\n"));
        let merge = render(&Options {
            merge_operator: crate::merge::builtin_by_name("uint64add"),
            ..Default::default()
        });
        assert!(merge.contains("  merge_operator=UInt64AddOperator\n"), "{merge}");
        assert!(none.contains("  bottommost_compression=kDisableCompressionOption\n"));
    }
}
