//! Every engine option by RocksDB's name, parsed into [`talus::Options`]: the one table the
//! command line (`--write_buffer_size=...`), option strings (`--options="k=v;..."`) and OPTIONS
//! files (`--options_file=...`) all go through.
//!
//! Names are RocksDB's (`DBOptions`, `ColumnFamilyOptions`, `BlockBasedTableOptions`), values
//! take RocksDB's spellings (`kLZ4Compression`, `kCompactionStyleLevel`, `bloomfilter:10:false`,
//! `{id=LRUCache;capacity=...}`) and the tools' short ones (`lz4`, `level`, `0`). A few names of
//! RocksDB's tools that set an engine option under another name are here too (`cache_size`,
//! `cache_type`, `bloom_bits`, `compression_type`, ...). Talus-only options carry Talus's names
//! (`intra_l0_compaction`). Pure parsing: no IO, every error names the option and the value.

use talus::cache::MetadataChargePolicy;
use talus::options::CacheType;
use talus::{ChecksumType, CompactionStyle, CompressionType, IndexType, Options, WalRecoveryMode};

use super::values::{bad, parse_bool};

/// One engine option.
pub struct EngineOption {
    /// RocksDB's name.
    pub name: &'static str,
    /// A boolean (so `--name` and `--noname` work on the command line).
    pub boolean: bool,
    /// One line for `--help`.
    pub help: &'static str,
    set: fn(&mut Options, &str, &str) -> Result<(), String>,
}

/// The option called `name`, if Talus has it.
pub fn find(name: &str) -> Option<&'static EngineOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// Sets option `name` to `value` in `o`; `Err` names both (an unknown name too).
pub fn set(o: &mut Options, name: &str, value: &str) -> Result<(), String> {
    match find(name) {
        Some(opt) => (opt.set)(o, name, value.trim()),
        None => Err(format!("unknown option {name:?}: Talus has no such option")),
    }
}

/// Every option, for `--help` and for the tests.
pub fn all() -> &'static [EngineOption] {
    OPTIONS
}

fn int<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| bad(name, v, "an integer in range"))
}

fn boolean(name: &str, v: &str) -> Result<bool, String> {
    parse_bool(v).ok_or_else(|| bad(name, v, "a boolean (true/false, 1/0, yes/no, t/f, y/n)"))
}

fn double(name: &str, v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(bad(name, v, "a number")),
    }
}

/// A compression type by RocksDB's enum name or the short one.
pub fn compression(name: &str, v: &str) -> Result<CompressionType, String> {
    CompressionType::parse(v).map_err(|_| {
        bad(name, v, "kNoCompression, kSnappyCompression, kLZ4Compression, kZSTD (or none, snappy, lz4, zstd)")
    })
}

fn compaction_style(name: &str, v: &str) -> Result<CompactionStyle, String> {
    match v {
        "kCompactionStyleLevel" | "level" | "0" => Ok(CompactionStyle::Level),
        "kCompactionStyleUniversal" | "universal" | "1" => Ok(CompactionStyle::Universal),
        _ => Err(bad(
            name,
            v,
            "kCompactionStyleLevel (level, 0) or kCompactionStyleUniversal (universal, 1)",
        )),
    }
}

/// `{k=v;k=v}` or `k=v;k=v` into pairs (nested braces kept whole); see [`super::string`].
fn nested(name: &str, v: &str) -> Result<Vec<(String, String)>, String> {
    let inner = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')).unwrap_or(v);
    super::string::split(inner).map_err(|e| format!("option {name}: {e}"))
}

/// `compression_opts`: `window_bits:level:strategy[:max_dict_bytes...]` or the struct form
/// RocksDB writes (`{window_bits=-14;level=32767;strategy=0;...}`). Talus's compressors use
/// their default levels (zstd 3), so a level other than the default (32767) is refused, and
/// dictionary compression (`max_dict_bytes` > 0, `enabled=true`) too; the rest is accepted.
fn compression_opts(name: &str, v: &str) -> Result<(), String> {
    let refuse = |what: &str| {
        Err(format!(
            "option {name}={v}: {what} is not supported by Talus (its compressors use their \
             default levels, zstd 3, and no dictionaries)"
        ))
    };
    if v.contains('=') {
        for (k, val) in nested(name, v)? {
            match k.as_str() {
                "level" if val != "32767" => return refuse("a compression level"),
                "max_dict_bytes" | "zstd_max_train_bytes" | "max_dict_buffer_bytes"
                    if val != "0" =>
                {
                    return refuse("dictionary compression")
                }
                "enabled" if boolean(name, &val)? => return refuse("enabled=true"),
                _ => {}
            }
        }
        return Ok(());
    }
    let parts: Vec<&str> = v.split(':').collect();
    for p in &parts {
        int::<i64>(name, p)?;
    }
    if parts.get(1).is_some_and(|l| *l != "32767") {
        return refuse("a compression level");
    }
    if parts.get(3).is_some_and(|d| *d != "0") {
        return refuse("dictionary compression");
    }
    Ok(())
}

/// `filter_policy`: `bloomfilter:BITS[:false]`, `nullptr` (or empty: none); RocksDB's
/// `ribbonfilter` and the block-based filter (`:true`) are refused.
fn filter_policy(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v.is_empty() || v == "nullptr" {
        o.bloom_bits_per_key = 0;
        return Ok(());
    }
    let rest = v
        .strip_prefix("bloomfilter:")
        .or_else(|| v.strip_prefix("rocksdb.BuiltinBloomFilter:"))
        .ok_or_else(|| bad(name, v, "bloomfilter:BITS[:false] or nullptr"))?;
    let (bits, block_based) = rest.split_once(':').unwrap_or((rest, "false"));
    if boolean(name, block_based)? {
        return Err(bad(name, v, "a full filter (bloomfilter:BITS:false)"));
    }
    let bits: f64 = double(name, bits)?;
    if !(0.0..=100.0).contains(&bits) {
        return Err(bad(name, v, "0 to 100 bits per key"));
    }
    o.bloom_bits_per_key = bits.round() as u32;
    Ok(())
}

/// `block_cache`: `{id=LRUCache|HyperClockCache;capacity=N;num_shard_bits=N;...}` as an OPTIONS
/// file writes it, or a plain capacity in bytes (`block_cache=1073741824`, as in option
/// strings). `nullptr` (RocksDB 7.x writes no cache) leaves the cache as it is.
fn block_cache(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v == "nullptr" {
        return Ok(());
    }
    if !v.contains('=') {
        o.block_cache_capacity = int(name, v)?;
        return Ok(());
    }
    for (k, val) in nested(name, v)? {
        let key = format!("{name}.{k}");
        match k.as_str() {
            "id" => {
                o.cache_type = match val.as_str() {
                    "LRUCache" => CacheType::LruCache,
                    "HyperClockCache" | "AutoHyperClockCache" | "FixedHyperClockCache" => {
                        CacheType::HyperClockCache
                    }
                    _ => return Err(bad(&key, &val, "LRUCache or HyperClockCache")),
                }
            }
            "capacity" => o.block_cache_capacity = int(&key, &val)?,
            "num_shard_bits" => {
                let bits: i64 = int(&key, &val)?;
                if bits >= 0 {
                    o.block_cache_num_shard_bits = bits.min(20) as u32;
                }
            }
            "strict_capacity_limit" => o.block_cache_strict_capacity_limit = boolean(&key, &val)?,
            "high_pri_pool_ratio" => o.high_pri_pool_ratio = ratio(&key, &val)?,
            "estimated_entry_charge" => o.estimated_entry_charge = int(&key, &val)?,
            "metadata_charge_policy" => {
                o.block_cache_metadata_charge_policy = match val.as_str() {
                    "kFullChargeCacheMetadata" => MetadataChargePolicy::FullCharge,
                    "kDontChargeCacheMetadata" => MetadataChargePolicy::DontCharge,
                    _ => {
                        return Err(bad(
                            &key,
                            &val,
                            "kFullChargeCacheMetadata or kDontChargeCacheMetadata",
                        ))
                    }
                }
            }
            "low_pri_pool_ratio" | "use_adaptive_mutex" => {}
            _ => {
                return Err(format!(
                    "unknown option {key:?}: Talus's block cache has no such option"
                ))
            }
        }
    }
    Ok(())
}

fn ratio(name: &str, v: &str) -> Result<f64, String> {
    let x = double(name, v)?;
    if !(0.0..=1.0).contains(&x) {
        return Err(bad(name, v, "a ratio from 0 to 1"));
    }
    Ok(x)
}

fn universal(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    for (k, val) in nested(name, v)? {
        let key = format!("{name}.{k}");
        match k.as_str() {
            "size_ratio" => o.size_ratio = int(&key, &val)?,
            "min_merge_width" => o.min_merge_width = int(&key, &val)?,
            "max_merge_width" => {
                let w: u64 = int(&key, &val)?;
                o.max_merge_width = if w >= u64::from(u32::MAX) { usize::MAX } else { w as usize };
            }
            "max_size_amplification_percent" => o.max_size_amplification_percent = int(&key, &val)?,
            // RocksDB's defaults, which are what Talus does.
            "stop_style" if val == "kCompactionStopStyleTotalSize" => {}
            "compression_size_percent" if val == "-1" => {}
            "allow_trivial_move" | "incremental" if !boolean(&key, &val)? => {}
            _ => return Err(format!("unsupported option {key}={val}")),
        }
    }
    Ok(())
}

/// `block_based_table_factory={block_size=...;...}` (option strings): every table option.
fn table_factory(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    for (k, val) in nested(name, v)? {
        if !TABLE_OPTIONS.contains(&k.as_str()) {
            return Err(format!("unknown option {name}.{k}: Talus's tables have no such option"));
        }
        set(o, &k, &val)?;
    }
    Ok(())
}

/// The names that belong to `[TableOptions/BlockBasedTable "default"]` (the rest are DB or CF
/// options); for OPTIONS files and `block_based_table_factory`.
pub const TABLE_OPTIONS: &[&str] = &[
    "block_size",
    "block_restart_interval",
    "block_size_deviation",
    "checksum",
    "filter_policy",
    "whole_key_filtering",
    "cache_index_and_filter_blocks",
    "pin_l0_filter_and_index_blocks_in_cache",
    "pin_top_level_index_and_filter",
    "index_type",
    "partition_filters",
    "metadata_block_size",
    "block_cache",
    "no_block_cache",
];

macro_rules! opt {
    ($name:literal, bool, $help:literal, |$o:ident, $v:ident| $field:expr) => {
        EngineOption {
            name: $name,
            boolean: true,
            help: $help,
            set: |$o, n, v| {
                let $v = boolean(n, v)?;
                $field;
                Ok(())
            },
        }
    };
    ($name:literal, int, $help:literal, |$o:ident, $v:ident| $field:expr) => {
        EngineOption {
            name: $name,
            boolean: false,
            help: $help,
            set: |$o, n, v| {
                let $v = int(n, v)?;
                $field;
                Ok(())
            },
        }
    };
    ($name:literal, raw, $help:literal, $f:expr) => {
        EngineOption { name: $name, boolean: false, help: $help, set: $f }
    };
}

const OPTIONS: &[EngineOption] = &[
    // DBOptions.
    opt!("create_if_missing", bool, "Create the database if missing", |o, v| o.create_if_missing = v),
    opt!("error_if_exists", bool, "Fail the open if the database exists", |o, v| o.error_if_exists = v),
    opt!("paranoid_checks", bool, "Aggressive consistency checks", |o, v| o.paranoid_checks = v),
    opt!("max_open_files", int, "SST readers kept open (-1: unbounded)", |o, v| o.max_open_files = v),
    opt!("max_background_jobs", int, "Background flush + compaction threads", |o, v| o.max_background_jobs = v),
    opt!("compaction_thread_nice", int, "Nice value of the compaction threads (0-19, Linux)", |o, v| o.compaction_thread_nice = v),
    opt!("max_subcompactions", int, "Threads one L0->base or manual compaction is split across", |o, v| {
        o.max_subcompactions = std::cmp::max(v, 1)
    }),
    opt!("wal_recovery_mode", raw, "kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery, kSkipAnyCorruptedRecords or 0-3", |o, n, v| {
        o.wal_recovery_mode = WalRecoveryMode::parse(v).map_err(|_| bad(n, v, "a WAL recovery mode (kPointInTimeRecovery, ... or 0-3)"))?;
        Ok(())
    }),
    opt!("delayed_write_rate", int, "Bytes/s writes are slowed to at a slowdown trigger", |o, v| o.delayed_write_rate = v),
    opt!("wal_bytes_per_sync", int, "Start WAL writeback every N bytes (0: never)", |o, v| o.wal_bytes_per_sync = v),
    opt!("wal_mmap_writes", bool, "Append the WAL through a memory mapping (no system call per write; Talus only)", |o, v| o.wal_mmap_writes = v),
    opt!("allow_mmap_writes", raw, "RocksDB's mapped SST writes: Talus writes SSTs with write(2), so only false", |_o, n, v| {
        match boolean(n, v)? {
            false => Ok(()),
            true => Err(format!(
                "option {n}=true: RocksDB's {n} maps SST files, which Talus writes with write(2); \
                 Talus maps its WAL instead (wal_mmap_writes, default true)"
            )),
        }
    }),
    opt!("rate_limiter_bytes_per_sec", int, "Flush + compaction write rate limit (0: off)", |o, v| o.rate_limiter_bytes_per_sec = v),
    opt!("use_direct_reads", bool, "O_DIRECT reads of SST files", |o, v| o.use_direct_reads = v),
    opt!("use_direct_io_for_flush_and_compaction", bool, "O_DIRECT flush and compaction writes", |o, v| o.use_direct_io_for_flush_and_compaction = v),
    opt!("compaction_readahead_size", int, "Bytes a compaction reads ahead per input file", |o, v| o.compaction_readahead_size = v),
    // ColumnFamilyOptions.
    opt!("write_buffer_size", int, "Bytes in one memtable", |o, v| o.write_buffer_size = v),
    opt!("max_write_buffer_number", int, "Memtables before writes stop", |o, v| o.max_write_buffer_number = v),
    opt!("level0_file_num_compaction_trigger", int, "L0 files that trigger an L0 compaction", |o, v| o.level0_file_num_compaction_trigger = v),
    opt!("level0_slowdown_writes_trigger", int, "L0 files at which writes slow down", |o, v| o.level0_slowdown_writes_trigger = v),
    opt!("level0_stop_writes_trigger", int, "L0 files at which writes stop", |o, v| o.level0_stop_writes_trigger = v),
    opt!("max_bytes_for_level_base", int, "Target size of the base level", |o, v| o.max_bytes_for_level_base = v),
    opt!("max_bytes_for_level_multiplier", raw, "Size ratio between adjacent levels", |o, n, v| {
        o.max_bytes_for_level_multiplier = double(n, v)?;
        Ok(())
    }),
    opt!("target_file_size_base", int, "Target size of compaction outputs", |o, v| o.target_file_size_base = v),
    opt!("target_file_size_multiplier", int, "Output files grow by this factor per level", |o, v| o.target_file_size_multiplier = v),
    opt!("num_levels", int, "Number of levels", |o, v| o.num_levels = v),
    opt!("compaction_style", raw, "kCompactionStyleLevel or kCompactionStyleUniversal (level/universal, 0/1)", |o, n, v| {
        o.compaction_style = compaction_style(n, v)?;
        Ok(())
    }),
    opt!("compression", raw, "Block compression of every level", |o, n, v| {
        o.compression = compression(n, v)?;
        Ok(())
    }),
    opt!("compression_per_level", raw, "Compression by level, colon-separated (kNoCompression:kLZ4Compression:...)", |o, n, v| {
        o.compression_per_level = v
            .split(':')
            .filter(|s| !s.is_empty())
            .map(|c| compression(n, c))
            .collect::<Result<_, _>>()?;
        Ok(())
    }),
    opt!("bottommost_compression", raw, "Compression of the last level (kDisableCompressionOption: as its level)", |o, n, v| {
        o.bottommost_compression =
            if v == "kDisableCompressionOption" { None } else { Some(compression(n, v)?) };
        Ok(())
    }),
    opt!("compression_opts", raw, "window_bits:level:strategy (Talus: default level only)", |_, n, v| compression_opts(n, v)),
    opt!("bottommost_compression_opts", raw, "As compression_opts, for the last level", |_, n, v| compression_opts(n, v)),
    opt!("disable_auto_compactions", bool, "No automatic compactions", |o, v| o.disable_auto_compactions = v),
    opt!("level_compaction_dynamic_level_bytes", bool, "Dynamic level targets", |o, v| o.level_compaction_dynamic_level_bytes = v),
    opt!("max_compaction_bytes", int, "Upper bound of one compaction's input bytes (0: 25 * target_file_size_base)", |o, v| o.max_compaction_bytes = v),
    opt!("soft_pending_compaction_bytes_limit", int, "Pending compaction bytes that slow writes (0: off)", |o, v| o.soft_pending_compaction_bytes_limit = v),
    opt!("hard_pending_compaction_bytes_limit", int, "Pending compaction bytes that stop writes (0: off)", |o, v| o.hard_pending_compaction_bytes_limit = v),
    opt!("compaction_options_universal", raw, "{size_ratio=..;min_merge_width=..;max_merge_width=..;max_size_amplification_percent=..}", universal),
    opt!("intra_l0_compaction", bool, "Talus: merge L0 files when L0->base cannot start", |o, v| o.intra_l0_compaction = v),
    // BlockBasedTableOptions.
    opt!("block_size", int, "Data block size", |o, v| o.block_size = v),
    opt!("block_restart_interval", int, "Keys between restart points", |o, v| o.block_restart_interval = std::cmp::max(v, 1)),
    opt!("block_size_deviation", int, "Close a block early within this percent of block_size (0-100)", |o, v| o.block_size_deviation = v),
    opt!("checksum", raw, "Block checksum of new tables: kXXH3 (xxh3, the default) or kCRC32c (crc32c)", |o, n, v| {
        o.checksum = ChecksumType::parse(v).map_err(|_| bad(n, v, "kXXH3 or kCRC32c (xxh3, crc32c)"))?;
        Ok(())
    }),
    opt!("filter_policy", raw, "bloomfilter:BITS:false or nullptr", filter_policy),
    opt!("whole_key_filtering", raw, "true only (Talus filters whole keys)", |_, n, v| {
        if boolean(n, v)? {
            Ok(())
        } else {
            Err(bad(n, v, "true (Talus has no prefix filters)"))
        }
    }),
    opt!("cache_index_and_filter_blocks", bool, "Index and filter blocks in the block cache", |o, v| o.cache_index_and_filter_blocks = v),
    opt!("pin_l0_filter_and_index_blocks_in_cache", bool, "L0 readers pin their index and filter blocks", |o, v| o.pin_l0_filter_and_index_blocks_in_cache = v),
    opt!("pin_top_level_index_and_filter", bool, "Pin the top level of partitioned index/filter", |o, v| o.pin_top_level_index_and_filter = v),
    opt!("index_type", raw, "kBinarySearch (0) or kTwoLevelIndexSearch (2)", |o, n, v| {
        o.index_type = IndexType::parse(v).map_err(|_| bad(n, v, "kBinarySearch (0) or kTwoLevelIndexSearch (2)"))?;
        Ok(())
    }),
    opt!("partition_filters", bool, "Partition the filters (with kTwoLevelIndexSearch)", |o, v| o.partition_filters = v),
    opt!("metadata_block_size", int, "Target size of an index or filter partition", |o, v| o.metadata_block_size = v),
    opt!("block_cache", raw, "{id=LRUCache|HyperClockCache;capacity=..;num_shard_bits=..;...} or a capacity", block_cache),
    opt!("no_block_cache", bool, "No block cache at all", |o, v| o.no_block_cache = v),
    opt!("block_based_table_factory", raw, "{block_size=..;filter_policy=..;...} (option strings)", table_factory),
    // The tools' flat names for options RocksDB nests.
    opt!("cache_size", int, "Block cache capacity in bytes", |o, v| o.block_cache_capacity = v),
    opt!("cache_type", raw, "lru_cache or hyper_clock_cache", |o, n, v| {
        o.cache_type = CacheType::parse(v).map_err(|_| bad(n, v, "lru_cache or hyper_clock_cache"))?;
        Ok(())
    }),
    opt!("cache_numshardbits", int, "The block cache has 2^N shards", |o, v| o.block_cache_num_shard_bits = v),
    opt!("cache_high_pri_pool_ratio", raw, "lru_cache: high-priority share (0 to 1)", |o, n, v| {
        o.high_pri_pool_ratio = ratio(n, v)?;
        Ok(())
    }),
    opt!("estimated_entry_charge", int, "hyper_clock_cache: expected charge of one entry (0: auto)", |o, v| o.estimated_entry_charge = v),
    opt!("bloom_bits", int, "Bloom filter bits per key (0: none)", |o, v| o.bloom_bits_per_key = v),
    opt!("compression_type", raw, "none, snappy, lz4 or zstd", |o, n, v| {
        o.compression = compression(n, v)?;
        Ok(())
    }),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_table_option_exists() {
        let mut names: Vec<&str> = all().iter().map(|o| o.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate option names");
        for t in TABLE_OPTIONS {
            assert!(find(t).is_some(), "{t}");
        }
    }

    #[test]
    fn values_in_rocksdb_spellings() {
        let mut o = Options::default();
        for (k, v) in [
            ("compression", "kZSTD"),
            ("compression_per_level", "kNoCompression:kLZ4Compression"),
            ("bottommost_compression", "kZSTD"),
            ("compaction_style", "kCompactionStyleUniversal"),
            ("filter_policy", "bloomfilter:12:false"),
            ("block_cache", "{id=HyperClockCache;capacity=1024;num_shard_bits=2;estimated_entry_charge=4096;metadata_charge_policy=kDontChargeCacheMetadata}"),
            ("compaction_options_universal", "{size_ratio=5;min_merge_width=3;max_merge_width=4294967295;max_size_amplification_percent=150}"),
            ("intra_l0_compaction", "no"),
            ("compression_opts", "-14:32767:0"),
            ("max_bytes_for_level_multiplier", "8.5"),
            ("checksum", "kCRC32c"),
        ] {
            set(&mut o, k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        assert_eq!(o.compression, CompressionType::Zstd);
        assert_eq!(o.compression_per_level, vec![CompressionType::None, CompressionType::Lz4]);
        assert_eq!(o.bottommost_compression, Some(CompressionType::Zstd));
        assert_eq!(o.compaction_style, CompactionStyle::Universal);
        assert_eq!(o.bloom_bits_per_key, 12);
        assert_eq!((o.cache_type, o.block_cache_capacity), (CacheType::HyperClockCache, 1024));
        assert_eq!((o.block_cache_num_shard_bits, o.estimated_entry_charge), (2, 4096));
        assert_eq!(o.block_cache_metadata_charge_policy, MetadataChargePolicy::DontCharge);
        assert_eq!((o.size_ratio, o.min_merge_width, o.max_merge_width), (5, 3, usize::MAX));
        assert!(!o.intra_l0_compaction);
        assert_eq!(o.max_bytes_for_level_multiplier, 8.5);
        assert_eq!(o.checksum, ChecksumType::Crc32c);
        set(&mut o, "checksum", "xxh3").unwrap();
        assert_eq!(o.checksum, ChecksumType::Xxh3);
    }

    #[test]
    fn bad_values_name_the_option() {
        for (k, v) in [
            ("write_buffer_size", "big"),
            ("compression", "brotli"),
            ("intra_l0_compaction", "maybe"),
            ("filter_policy", "ribbonfilter:10"),
            ("compression_opts", "-14:19:0"),
            ("block_cache", "{id=Nope}"),
            ("cache_high_pri_pool_ratio", "1.5"),
            ("max_subcompactions", "-1"),
            ("checksum", "kxxHash64"),
            ("checksum", "kNoChecksum"),
        ] {
            let e = set(&mut Options::default(), k, v).unwrap_err();
            assert!(e.contains(k), "{k}={v}: {e}");
        }
        assert!(set(&mut Options::default(), "bogus", "1").unwrap_err().contains("bogus"));
    }
}
