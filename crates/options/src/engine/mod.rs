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
//!
//! One validation per option, whatever its spelling: a gflags flag, an option string, a field of
//! a nested struct (`structs`: `block_cache={num_shard_bits=..}` goes through the setter of
//! `cache_numshardbits`) and an OPTIONS file line all reach the same setter here. Integers take
//! RocksDB's k/m/g/t suffixes ([`super::number`]); ranges that need the whole [`Options`] (one
//! option against another) are checked by `Options::validate` at open.

use talus::options::{CacheType, MAX_CACHE_SHARD_BITS};
use talus::{ChecksumType, CompactionStyle, CompressionType, IndexType, Options, WalRecoveryMode};

use super::number::{double, integer};
use super::values::{bad, parse_bool};

mod merge;
mod structs;
#[cfg(test)]
mod tests;

use structs::{block_cache, compression_opts, filter_policy, table_factory, universal};

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

/// A boolean in gflags' spellings (RocksDB's options parser takes only true/false/1/0).
fn boolean(name: &str, v: &str) -> Result<bool, String> {
    parse_bool(v).ok_or_else(|| bad(name, v, "a boolean (true/false, 1/0, yes/no, t/f, y/n)"))
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

/// A ratio from 0 to 1.
fn ratio(name: &str, v: &str) -> Result<f64, String> {
    let x = double(name, v)?;
    if !(0.0..=1.0).contains(&x) {
        return Err(bad(name, v, "a ratio from 0 to 1"));
    }
    Ok(x)
}

/// `cache_numshardbits` and `block_cache={num_shard_bits=..}`: a negative value is the default
/// (RocksDB: "use default settings"), at most [`MAX_CACHE_SHARD_BITS`] (RocksDB's
/// `LRUCacheOptions::MakeSharedCache` and `HyperClockCacheOptions::MakeSharedCache` make no cache
/// of 2^20 shards or more, and its db_bench refuses `--cache_numshardbits=20`).
fn shard_bits(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    let bits: i64 = integer(name, v)?;
    if bits > i64::from(MAX_CACHE_SHARD_BITS) {
        let what = format!(
            "at most {MAX_CACHE_SHARD_BITS} (2^20 shards or more is no cache in RocksDB; \
             negative: the default)"
        );
        return Err(bad(name, v, &what));
    }
    o.block_cache_num_shard_bits = match u32::try_from(bits) {
        Ok(bits) => bits,
        Err(_) => Options::default().block_cache_num_shard_bits,
    };
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
                let $v = integer(n, v)?;
                $field;
                Ok(())
            },
        }
    };
    ($name:literal, raw, $help:literal, $f:expr) => {
        EngineOption { name: $name, boolean: false, help: $help, set: $f }
    };
}

/// A device cap (`io_limit_*`): a positive integer with RocksDB's suffixes; 0 or less is
/// refused by name (to have no cap, leave the option out).
fn cap(name: &str, v: &str, field: &mut u64) -> Result<(), String> {
    let n: u64 = integer(name, v)?;
    if n == 0 {
        return Err(format!(
            "{name}={v}: a cap must be at least 1 (leave the option out for none)"
        ));
    }
    *field = n;
    Ok(())
}

const OPTIONS: &[EngineOption] = &[
    // DBOptions.
    opt!("create_if_missing", bool, "Create the database if missing", |o, v| o.create_if_missing = v),
    opt!("error_if_exists", bool, "Fail the open if the database exists", |o, v| o.error_if_exists = v),
    opt!("create_missing_column_families", bool, "Create named column families the database lacks", |o, v| o.create_missing_column_families = v),
    opt!("atomic_flush", bool, "Switch every column family with writes at one WAL (off: only the full one)", |o, v| o.atomic_flush = v),
    opt!("max_total_wal_size", int, "With several column families: bytes of old WALs that make their families flush (0: 4x the families' write buffers)", |o, v| o.max_total_wal_size = v),
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
    opt!("allow_concurrent_memtable_write", bool, "Writers of a group insert into the memtable in parallel", |o, v| o.allow_concurrent_memtable_write = v),
    opt!("enable_write_thread_adaptive_yield", bool, "Waiting writers spin and yield before blocking", |o, v| o.enable_write_thread_adaptive_yield = v),
    opt!("write_thread_max_yield_usec", int, "Microseconds a waiting writer spins and yields before blocking", |o, v| o.write_thread_max_yield_usec = v),
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
    opt!("io_limit_read_iops", raw, "Cap read IOs per second (a throttled device; Talus and --engine=sqlite)", |o, n, v| cap(n, v, &mut o.io_limits.read_iops)),
    opt!("io_limit_write_iops", raw, "Cap write IOs (syncs included) per second (Talus and SQLite)", |o, n, v| cap(n, v, &mut o.io_limits.write_iops)),
    opt!("io_limit_read_bytes_per_sec", raw, "Cap bytes read per second (Talus and SQLite)", |o, n, v| cap(n, v, &mut o.io_limits.read_bytes_per_sec)),
    opt!("io_limit_write_bytes_per_sec", raw, "Cap bytes written per second (Talus and SQLite)", |o, n, v| cap(n, v, &mut o.io_limits.write_bytes_per_sec)),
    opt!("io_limit_iops", raw, "Cap read + write IOs per second (Talus and SQLite)", |o, n, v| cap(n, v, &mut o.io_limits.iops)),
    opt!("io_limit_bytes_per_sec", raw, "Cap bytes read + written per second (Talus and SQLite)", |o, n, v| cap(n, v, &mut o.io_limits.bytes_per_sec)),
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
    opt!("compression_opts", raw, "window_bits:level:strategy (the level: zstd -131072..22, 32767 the default)", |o, n, v| compression_opts(o, n, v, false)),
    opt!("bottommost_compression_opts", raw, "As compression_opts, for the last level (used when enabled=true)", |o, n, v| compression_opts(o, n, v, true)),
    opt!("enable_blob_files", bool, "Separate large values into blob files (RocksDB's integrated BlobDB)", |o, v| o.enable_blob_files = v),
    opt!("min_blob_size", int, "Values at least this long go to blob files", |o, v| o.min_blob_size = v),
    opt!("blob_file_size", int, "Size at which a blob file is finished", |o, v| o.blob_file_size = v),
    opt!("blob_compression_type", raw, "Compression of blob records", |o, n, v| {
        o.blob_compression_type = compression(n, v)?;
        Ok(())
    }),
    opt!("blob_file_starting_level", int, "Compactions write blob files for output levels at or above this", |o, v| o.blob_file_starting_level = v),
    opt!("enable_blob_garbage_collection", bool, "Compactions relocate live values out of the oldest blob files", |o, v| o.enable_blob_garbage_collection = v),
    opt!("blob_garbage_collection_age_cutoff", raw, "Fraction of blob files, oldest first, garbage collection takes (0-1)", |o, n, v| {
        o.blob_garbage_collection_age_cutoff = double(n, v)?;
        Ok(())
    }),
    opt!("blob_garbage_collection_force_threshold", raw, "Garbage ratio of the oldest blob files that forces a compaction of the SSTs pointing at them (0-1; 1: never)", |o, n, v| {
        o.blob_garbage_collection_force_threshold = double(n, v)?;
        Ok(())
    }),
    opt!("prepopulate_blob_cache", raw, "kFlushOnly: a flush puts the values it writes to blob files into the blob cache (kDisable: only reads do)", |o, n, v| {
        use talus::blob::cache::PrepopulateBlobCache as P;
        o.prepopulate_blob_cache = match v {
            "kDisable" | "disable" | "0" => P::Disable,
            "kFlushOnly" | "flush_only" | "1" => P::FlushOnly,
            _ => return Err(bad(n, v, "kDisable or kFlushOnly")),
        };
        Ok(())
    }),
    opt!("disable_auto_compactions", bool, "No automatic compactions", |o, v| o.disable_auto_compactions = v),
    opt!("level_compaction_dynamic_level_bytes", bool, "Dynamic level targets", |o, v| o.level_compaction_dynamic_level_bytes = v),
    opt!("max_compaction_bytes", int, "Upper bound of one compaction's input bytes (0: 25 * target_file_size_base)", |o, v| o.max_compaction_bytes = v),
    opt!("soft_pending_compaction_bytes_limit", int, "Pending compaction bytes that slow writes (0: off)", |o, v| o.soft_pending_compaction_bytes_limit = v),
    opt!("hard_pending_compaction_bytes_limit", int, "Pending compaction bytes that stop writes (0: off)", |o, v| o.hard_pending_compaction_bytes_limit = v),
    opt!("compaction_options_universal", raw, "{size_ratio=..;min_merge_width=..;max_merge_width=..;max_size_amplification_percent=..}", universal),
    opt!("intra_l0_compaction", bool, "Talus: merge L0 files when L0->base cannot start", |o, v| o.intra_l0_compaction = v),
    opt!("merge_operator", raw, "A built-in merge operator by RocksDB's name or nickname (uint64add, stringappend, stringappendtest, put, max; {id=StringAppendOperator;delimiter=..}) or nullptr", merge::merge_operator),
    opt!("compaction_filter", raw, "nullptr only (a compaction filter is set in code)", merge::no_filter),
    opt!("compaction_filter_factory", raw, "nullptr only (a compaction filter is set in code)", merge::no_filter),
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
    opt!("cache_numshardbits", raw, "The block cache has 2^N shards (at most 19; negative: the default, 6)", shard_bits),
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
