//! db_bench's command-line flags, by RocksDB's names and defaults.
//!
//! Syntax is gflags' through the one options layer ([`crate::options`]): `--flag=value` (or
//! `-flag=value`); a boolean also accepts a bare `--flag` (true), `--noflag` (false), and
//! `true/false/1/0/yes/no/t/f/y/n`. Every engine option by RocksDB's name that has no db_bench
//! flag here, `--options_file` and `--options` are accepted too and applied to the talus engine
//! after the flags ([`Flags::engine_extra`]). An unknown flag, a missing or malformed value, or a
//! value out of range is an error that names the flag; [`parse`] checks everything before the
//! caller touches the database directory. `--undefok=a,b` lets the named flags be unknown, as
//! gflags does. Flags that RocksDB's `tools/benchmark.sh` always passes but that do not apply to
//! Talus are accepted as documented no-ops ([`NOOP_FLAGS`], listed by `--help`).
//!
//! The range and name checks of the values are in `validate.rs` ([`validate`]).

/// A flag value type.
pub trait FlagValue: Sized {
    /// Parses `value` (None: the flag was given bare) for the flag `name`.
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String>;
}

use crate::options::{bad, Parsed, Spec};

mod validate;

pub use validate::validate;

fn need<'a>(name: &str, value: Option<&'a str>) -> Result<&'a str, String> {
    value.ok_or_else(|| format!("flag --{name} needs a value (--{name}=VALUE)"))
}

/// Integers as every engine option takes them ([`crate::options::number`]: `64k`, `1M`), so
/// `--write_buffer_size=64k` means the same here as in `talus ldb` and in option strings.
impl FlagValue for i64 {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        crate::options::number::integer(name, need(name, value)?)
    }
}

impl FlagValue for u64 {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        crate::options::number::integer(name, need(name, value)?)
    }
}

impl FlagValue for f64 {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        let v = need(name, value)?;
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(bad(name, v, "a number")),
        }
    }
}

impl FlagValue for bool {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        match value {
            None => Ok(true),
            Some(s) => crate::options::gflags::parse_bool(s)
                .ok_or_else(|| bad(name, s, "a boolean (true/false, 1/0, yes/no, t/f, y/n)")),
        }
    }
}

/// A boolean that may be left unset (`None`: the engine's default).
impl FlagValue for Option<bool> {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        bool::parse_flag(name, value).map(Some)
    }
}

impl FlagValue for String {
    fn parse_flag(name: &str, value: Option<&str>) -> Result<Self, String> {
        Ok(need(name, value)?.to_string())
    }
}

macro_rules! define_flags {
    ($( $name:ident : $ty:ty = $default:expr ; $help:literal )*) => {
        /// Every flag db_bench understands, with RocksDB's defaults.
        #[derive(Debug, Clone)]
        pub struct Flags {
            $( #[doc = $help] pub $name: $ty, )*
            /// Engine options by RocksDB's name that have no flag above, with `--options_file`,
            /// `--options` and `--ignore_unknown_options`, as given (talus engine only).
            pub engine_extra: Vec<(String, String)>,
        }

        impl Default for Flags {
            fn default() -> Self {
                Flags { $( $name: $default, )* engine_extra: Vec::new() }
            }
        }

        impl Flags {
            /// Sets the flag `name`; `Ok(false)` if there is no such flag.
            pub(crate) fn set(&mut self, name: &str, value: Option<&str>) -> Result<bool, String> {
                match name {
                    $( stringify!($name) => {
                        self.$name = <$ty as FlagValue>::parse_flag(name, value)?;
                        Ok(true)
                    } )*
                    _ => Ok(false),
                }
            }


            /// `(name, default, help)` for every flag, in declaration order.
            pub const TABLE: &'static [(&'static str, &'static str, &'static str)] =
                &[ $( (stringify!($name), stringify!($default), $help), )* ];
        }
    };
}

define_flags! {
    benchmarks: String = "fillseq,fillrandom,overwrite,readrandom,readseq".to_string();
        "Comma-separated benchmarks, run in order: fillseq, fillrandom, filluniquerandom, overwrite, readrandom, readseq, readreverse, seekrandom, readwhilewriting, seekrandomwhilewriting, readrandomwriterandom, deleterandom, multireadrandom, mergerandom, readrandommergerandom, randomtransaction, compact, flush, waitforcompaction, stats, levelstats"
    engine: String = "talus".to_string(); "Engine under test: talus, memory (BTreeMap behind a lock: the ceiling) or rocksdb (needs --features rocksdb)"
    num: i64 = 1000000; "Number of key/values to place in the database"
    reads: i64 = -1; "Number of read operations (-1: --num)"
    writes: i64 = -1; "Number of write operations (-1: --num)"
    deletes: i64 = -1; "Number of delete operations (-1: --num)"
    duration: i64 = 0; "Seconds to run random reads/writes/deletes for (0: run --num/--reads/--writes ops)"
    ops_between_duration_checks: i64 = 1000; "Operations between checks of --duration"
    threads: i64 = 1; "Number of concurrent threads running the benchmark"
    key_size: i64 = 16; "Size of each key in bytes"
    value_size: i64 = 100; "Size of each value in bytes"
    compression_ratio: f64 = 0.5; "Values are generated to compress to this fraction of their size"
    batch_size: i64 = 1; "Keys per write batch (writes) or per multiget (multireadrandom)"
    benchmark_write_rate_limit: u64 = 0; "Bytes/second for writers (the writer of *whilewriting); 0: unlimited"
    seed: u64 = 0; "Seed base for the random generators (0: time-based, printed)"
    read_random_exp_range: f64 = 0.0; "Skew of random reads: keys follow exp(-U*range) (0: uniform)"
    seek_nexts: i64 = 0; "Next() calls after each Seek in seekrandom"
    readwritepercent: i64 = 90; "Percentage of reads in readrandomwriterandom"
    merge_operator: String = String::new(); "The merge operator (needed by mergerandom and readrandommergerandom), by RocksDB's name or nickname: uint64add, stringappend, stringappendtest, put, max (UInt64AddOperator, ...)"
    merge_keys: i64 = -1; "Distinct keys of mergerandom and readrandommergerandom (-1: --num)"
    mergereadpercent: i64 = 70; "Percentage of merges in readrandommergerandom (RocksDB's name; the rest are reads)"
    db: String = String::new(); "Database directory (default: a new temporary directory, removed at exit)"
    use_existing_db: bool = false; "Use the existing database at --db; fill benchmarks are skipped"
    readonly: bool = false; "Open the database read-only (implies --use_existing_db): read benchmarks only; writes fail"
    wal_recovery_mode: String = "kPointInTimeRecovery".to_string(); "WAL recovery at open: kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery, kSkipAnyCorruptedRecords (or 0-3)"
    disable_wal: bool = false; "Write without the WAL"
    sync: bool = false; "Sync the WAL on every write"
    verify_checksum: bool = true; "Verify block checksums on reads"
    checksum_type: i64 = 4; "Block checksum of new tables, RocksDB's ChecksumType number: 1 kCRC32c, 4 kXXH3 (RocksDB 10's default); 0, 2, 3 are not supported"
    cache_size: i64 = 8388608; "Block cache capacity in bytes (0 or -1: no block cache)"
    cache_type: String = "lru_cache".to_string(); "Block cache type: lru_cache, hyper_clock_cache (= fixed_hyper_clock_cache, sized by block_size) or auto_hyper_clock_cache"
    cache_numshardbits: i64 = -1; "The block cache has 2^N shards (-1: the engine's default, 6)"
    cache_index_and_filter_blocks: bool = false; "Keep index and filter blocks in the block cache, charged to it"
    pin_l0_filter_and_index_blocks_in_cache: bool = false; "With --cache_index_and_filter_blocks: L0 table readers pin their index and filter blocks"
    mmap_write: Option<bool> = None; "RocksDB's allow_mmap_writes: write SST files through memory mappings (RocksDB never maps its WAL); talus writes SSTs with write(2), so only false"
    wal_mmap_writes: Option<bool> = None; "talus: append the WAL through a memory mapping (unset: true); rocksdb cannot map its WAL, so only false"
    wal_bytes_per_sync: i64 = -1; "Start WAL writeback every N bytes (0: never; -1: the engine's default, 0 for both)"
    cache_high_pri_pool_ratio: f64 = 0.0; "lru_cache: share of the cache for index/filter blocks and hit entries (0 to 1)"
    partition_index: bool = false; "Partition index blocks (index_type=kTwoLevelIndexSearch: partitions cached like data blocks, only the top level held)"
    partition_index_and_filters: bool = false; "Partition index and filter blocks (kTwoLevelIndexSearch + partition_filters)"
    metadata_block_size: i64 = 4096; "Target size of an index or filter partition in bytes"
    pin_top_level_index_and_filter: bool = false; "With --cache_index_and_filter_blocks: pin the top level of partitioned index/filter blocks in the block cache"
    use_direct_reads: bool = false; "Read SST files with O_DIRECT (the block cache is the only cache)"
    use_direct_io_for_flush_and_compaction: bool = false; "Write flush and compaction outputs with O_DIRECT"
    compaction_readahead_size: u64 = 2097152; "Bytes a compaction reads ahead from each input file"
    enable_blob_files: bool = false; "Key-value separation: values of at least --min_blob_size bytes go to blob files"
    min_blob_size: u64 = 0; "Values at least this long go to blob files (with --enable_blob_files)"
    blob_file_size: u64 = 268435456; "Size at which a blob file is finished"
    blob_compression_type: String = "none".to_string(); "Compression of blob records: none, snappy, lz4 or zstd"
    blob_file_starting_level: u64 = 0; "Compactions write blob files for output levels at or above this"
    enable_blob_garbage_collection: bool = false; "Compactions relocate live values out of the oldest blob files"
    blob_garbage_collection_age_cutoff: f64 = 0.25; "Fraction of blob files, oldest first, garbage collection takes (0-1)"
    blob_garbage_collection_force_threshold: f64 = 1.0; "Garbage ratio of the oldest blob files that forces a compaction of the SSTs pointing at them (0-1; 1: never)"
    use_blob_cache: bool = false; "Cache blob values (RocksDB's blob_cache)"
    use_shared_block_and_blob_cache: bool = true; "RocksDB: blobs share the block cache (with --use_blob_cache); talus: blobs always get their own cache of --blob_cache_size"
    blob_cache_size: u64 = 8388608; "Bytes of the blob cache (with --use_blob_cache; RocksDB: only if not shared with the block cache)"
    blob_cache_numshardbits: i64 = 6; "The blob cache has 2^N shards (negative: the default)"
    prepopulate_blob_cache: i64 = 0; "1: a flush puts the values it writes to blob files into the blob cache; 0: only reads do"
    perf_level: i64 = 1; "Perf context level: 1 off, 2 counts (printed as PERF_CONTEXT after each benchmark)"
    bloom_bits: i64 = -1; "Bloom filter bits per key (-1 or 0: no filter)"
    block_size: i64 = 4096; "Data block size in bytes"
    compression_type: String = "snappy".to_string(); "Block compression: none, snappy, lz4 or zstd"
    compression_per_level: String = String::new(); "Compression by level, comma- or colon-separated (none,none,lz4,...; RocksDB's kXxx names too); empty: --compression_type everywhere"
    bottommost_compression: String = String::new(); "Compression of the last level (empty or kDisableCompressionOption: as its level)"
    compression_level: i64 = 32767; "Compression level (compression_opts.level; 32767: the library default, zstd 3)"
    min_level_to_compress: i64 = -1; "Levels below this one are not compressed (-1: all levels compressed)"
    estimated_entry_charge: i64 = -1; "hyper_clock_cache: expected charge of one entry (-1: --block_size, as RocksDB's db_bench; 0: the automatic cache)"
    write_buffer_size: i64 = 67108864; "Bytes in one memtable"
    max_write_buffer_number: i64 = 2; "Memtables (active + immutable) before writes stop"
    atomic_flush: bool = false; "With several column families, switch every family with writes at one WAL (off: only the full family switches)"
    max_total_wal_size: u64 = 0; "With several column families and --atomic_flush=false: bytes of old WALs that make the families holding the oldest one flush (0: 4x the families' write buffers)"
    num_column_families: i64 = 1; "Column families (RocksDB's names: default, column_family_name_000001, ...; each key goes to family key-number % N, as RocksDB's db_bench puts and gets; iterators read default)"
    level0_file_num_compaction_trigger: i64 = 4; "L0 files that trigger an L0 compaction"
    level0_slowdown_writes_trigger: i64 = 20; "L0 files at which writes slow down"
    level0_stop_writes_trigger: i64 = 36; "L0 files at which writes stop"
    max_bytes_for_level_base: u64 = 268435456; "Target size of the base level in bytes"
    max_bytes_for_level_multiplier: f64 = 10.0; "Size ratio between adjacent levels"
    target_file_size_base: u64 = 67108864; "Target size of compaction output files"
    num_levels: i64 = 7; "Number of LSM levels"
    compaction_style: i64 = 0; "0: leveled, 1: universal"
    max_background_jobs: i64 = 2; "Background flush and compaction threads"
    compaction_thread_nice: i64 = -1; "talus: nice value of the compaction threads, 0-19 (-1: the engine's default)"
    table_cache_numshardbits: i64 = 4; "rocksdb: the table cache has 2^N shards (Talus's table cache is one map)"
    open_files: i64 = -1; "Open SST files kept in the table cache (-1: unbounded)"
    disable_auto_compactions: bool = false; "Disable automatic compactions"
    subcompactions: u64 = 1; "Threads one L0->base or manual compaction may be split across (alias --max_subcompactions)"
    max_subcompactions: u64 = 0; "Same as --subcompactions (0: use --subcompactions)"
    level_compaction_dynamic_level_bytes: bool = true; "Dynamic level targets (the base level moves down as the tree grows)"
    target_file_size_multiplier: u64 = 1; "Output files grow by this factor per level below the base"
    max_compaction_bytes: u64 = 0; "Upper bound of one compaction's input bytes (0: 25 * target_file_size_base)"
    enable_pipelined_write: bool = true; "rocksdb: pipelined write groups (Talus always pipelines: a group's memtable inserts overlap the next group's WAL write)"
    allow_concurrent_memtable_write: bool = true; "Writers of a group insert into the memtable in parallel"
    enable_write_thread_adaptive_yield: bool = true; "Waiting writers spin and yield before blocking"
    write_thread_max_yield_usec: u64 = 100; "Microseconds a waiting writer spins and yields before blocking (Talus only: RocksDB's C API cannot set it; its default is also 100)"
    intra_l0_compaction: bool = true; "Talus: allow intra-L0 compaction when L0->base is blocked"
    delayed_write_rate: u64 = 8388608; "Bytes/second writes are slowed to at a slowdown trigger"
    soft_pending_compaction_bytes_limit: u64 = 68719476736; "Pending compaction bytes that slow writes (0: off)"
    hard_pending_compaction_bytes_limit: u64 = 274877906944; "Pending compaction bytes that stop writes (0: off)"
    rate_limiter_bytes_per_sec: u64 = 0; "Flush and compaction write rate limit in bytes/second (0: off)"
    universal_size_ratio: u64 = 0; "Universal: size_ratio percent (0: engine default, 1)"
    universal_min_merge_width: u64 = 0; "Universal: min_merge_width (0: engine default, 2)"
    universal_max_merge_width: u64 = 0; "Universal: max_merge_width (0: unbounded)"
    universal_max_size_amplification_percent: u64 = 0; "Universal: max_size_amplification_percent (0: engine default, 200)"
    optimistic_transaction_db: bool = false; "Open an OptimisticTransactionDb (randomtransaction runs optimistic transactions)"
    transaction_db: bool = false; "Open a TransactionDb (randomtransaction runs pessimistic transactions)"
    transaction_sets: u64 = 2; "Keys each randomtransaction transaction increments, one per set of --num keys (1 to 9999)"
    transaction_set_snapshot: bool = false; "Pessimistic transactions take a snapshot at begin (randomtransaction)"
    transaction_lock_timeout: u64 = 100; "Milliseconds a pessimistic transaction waits for a row lock"
    transaction_sleep: i64 = 0; "Accepted for RocksDB's command lines; unused (as in RocksDB 10.4.2's db_bench)"
    statistics: bool = false; "Print the engine's statistics at the end"
    stats_interval: u64 = 0; "Report progress every N operations (0: growing interval)"
    stats_interval_seconds: u64 = 0; "Report interval lines every N seconds (overrides --stats_interval)"
    stats_per_interval: i64 = 0; "With interval reports, also print the engine's stats"
    histogram: bool = false; "Print the per-operation latency histogram"
    progress_reports: bool = true; "Print progress (only when stderr is a terminal)"
    help: bool = false; "Print this help and exit"
}

/// Flags accepted and ignored because they do not apply to the engines here, with the reason.
/// They are the ones RocksDB's `tools/benchmark.sh` passes.
pub const NOOP_FLAGS: &[(&str, &str)] = &[
    ("wal_dir", "the WAL lives in the database directory"),
    ("bytes_per_sync", "background writes are synced per file"),
    ("compression_max_dict_bytes", "no dictionary compression"),
    ("delete_obsolete_files_period_micros", "obsolete files are deleted as soon as unused"),
    ("report_interval_seconds", "no report file; use --stats_interval_seconds"),
    ("report_file", "no report file; use --stats_interval_seconds"),
    ("memtablerep", "the memtable is always a skiplist"),
    ("cache_low_pri_pool_ratio", "the LRU cache has no low-priority pool"),
    ("max_background_flushes", "use --max_background_jobs"),
    ("max_background_compactions", "use --max_background_jobs"),
    ("prepopulate_block_cache", "not supported"),
    ("universal_compression_size_percent", "universal compaction options are engine defaults"),
    ("universal_allow_trivial_move", "universal compaction options are engine defaults"),
    ("compaction_measure_io_stats", "IO stats are always measured"),
];

/// Benchmarks that run.
pub const BENCHMARKS: &[&str] = &[
    "fillseq",
    "fillrandom",
    "filluniquerandom",
    "overwrite",
    "readrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    "readwhilewriting",
    "seekrandomwhilewriting",
    "readrandomwriterandom",
    "deleterandom",
    "multireadrandom",
    "mergerandom",
    "readrandommergerandom",
    "randomtransaction",
    "compact",
    "flush",
    "waitforcompaction",
    "stats",
    "levelstats",
];

/// Engine names.
pub const ENGINES: &[&str] = &["talus", "memory", "rocksdb"];

/// Parses `args` (the arguments after `db_bench`) and checks every value.
pub fn parse(args: &[String]) -> Result<Flags, String> {
    let mut flags = Flags::default();
    let mut undefok: Vec<String> = Vec::new();
    // gflags applies --undefok whatever its position: collect it first.
    for a in args {
        if let Some(v) = a.strip_prefix("--undefok=").or_else(|| a.strip_prefix("-undefok=")) {
            undefok.extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string));
        }
    }
    // gflags takes `-flag` as `--flag`; names in --undefok may be anything.
    let mut words = Vec::with_capacity(args.len());
    for a in args {
        let word = match a.strip_prefix("--") {
            Some(_) => a.clone(),
            None => match a.strip_prefix('-') {
                Some(rest) => format!("--{rest}"),
                None => {
                    return Err(format!("unexpected argument {a:?}: flags look like --name=value"))
                }
            },
        };
        let name = word[2..].split('=').next().unwrap_or("");
        if name == "undefok" || undefok.iter().any(|n| n == name) {
            continue;
        }
        words.push(word);
    }
    let bools: Vec<&str> = Flags::TABLE
        .iter()
        .filter(|(_, default, _)| matches!(*default, "true" | "false"))
        .map(|(n, _, _)| *n)
        .collect();
    let values: Vec<&str> = Flags::TABLE
        .iter()
        .map(|(n, _, _)| *n)
        .filter(|n| !bools.contains(n))
        .chain(NOOP_FLAGS.iter().map(|(n, _)| *n))
        .collect();
    let mut p = Parsed::parse(&words);
    p.check(&Spec { values: &values, flags: &bools, engine: true })?;
    for name in p.names() {
        let value = p.value(name);
        if flags.set(name, value)? || NOOP_FLAGS.iter().any(|(n, _)| n == name) {
            continue;
        }
        // An engine option by RocksDB's name (checked by `Parsed::check`).
        flags.engine_extra.push((name.clone(), value.unwrap_or("true").to_string()));
    }
    if !flags.help {
        validate(&flags)?;
    }
    Ok(flags)
}

/// The entries of `--compression_per_level` (comma- or colon-separated).
pub fn compression_list(s: &str) -> impl Iterator<Item = &str> {
    s.split([',', ':']).map(str::trim).filter(|c| !c.is_empty())
}

/// The `--help` text: every flag with its default, then the accepted no-op flags.
pub fn help_text() -> String {
    let mut s = String::from("usage: talus db_bench [--flag=value ...]\n\nflags:\n");
    for (name, default, help) in Flags::TABLE {
        let default = default.trim_end_matches(".to_string()").trim_start_matches("String::new()");
        s.push_str(&format!("  --{name} (default {default})\n      {help}\n"));
    }
    s.push_str("\naccepted and ignored (they do not apply to the engines here):\n");
    for (name, why) in NOOP_FLAGS {
        s.push_str(&format!("  --{name}: {why}\n"));
    }
    s.push_str("\n--undefok=a,b lets the named flags be unknown, as in gflags.\n\n");
    s.push_str(&crate::options::engine_help());
    s
}

#[cfg(test)]
mod tests;
