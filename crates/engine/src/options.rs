//! Options with RocksDB's names and defaults.
//!
//! [`Options`] is validated once, at [`crate::Db::open`]; an option out of range is refused with an
//! [`Error::InvalidArgument`] that names it.

use std::sync::Arc;

use crate::cache::MetadataChargePolicy;
use crate::error::{Error, Result};
use crate::fs::{Fs, StdFs};

mod blob;
mod checksum_type;
mod compression_level;
mod kinds;
mod sanitize;

pub use blob::{BlobCacheRef, PrepopulateBlobCache};

/// A block cache, shareable between column families and databases (RocksDB's
/// `std::shared_ptr<Cache>` in `BlockBasedTableOptions::block_cache`): made by
/// `BlockCacheRef::new` from any `Arc<dyn Cache<Block>>` (`talus::cache::LruCache`, ...), read
/// back by `BlockCacheRef::cache` (both in `crate::sst::block_cache_ref`, which owns the
/// block type: the options name no SST type, so `options` stays below `sst`). Clones share
/// the cache.
#[derive(Clone)]
pub struct BlockCacheRef(Arc<dyn std::any::Any + Send + Sync>);

impl BlockCacheRef {
    /// Wraps `cache` (an `Arc<dyn Cache<Block>>`, by `crate::sst::block_cache_ref` only).
    pub(crate) fn erased(cache: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        Self(cache)
    }

    /// What [`BlockCacheRef::erased`] was given.
    pub(crate) fn any(&self) -> &(dyn std::any::Any + Send + Sync) {
        self.0.as_ref()
    }
}

impl std::fmt::Debug for BlockCacheRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockCacheRef")
    }
}
pub use checksum_type::ChecksumType;
pub use compression_level::{
    check_level as check_compression_level, zstd_level, DEFAULT_COMPRESSION_LEVEL,
};
pub use kinds::{CacheType, CompactionStyle, CompressionType, IndexType, WalRecoveryMode};

/// The most `block_cache_num_shard_bits` may be: RocksDB makes no cache of 2^20 shards or more
/// (`LRUCacheOptions::MakeSharedCache` and `HyperClockCacheOptions::MakeSharedCache` return none
/// for `num_shard_bits >= 20`, and its db_bench refuses `--cache_numshardbits=20`).
pub const MAX_CACHE_SHARD_BITS: u32 = 19;

/// Options fixed when the database is opened.
#[derive(Clone)]
pub struct Options {
    /// Create the database if it does not exist.
    pub create_if_missing: bool,
    /// Fail the open if the database exists.
    pub error_if_exists: bool,
    /// [`crate::Db::open_cf`]: create the named column families the database lacks (RocksDB's
    /// option; off: such a name is refused).
    pub create_missing_column_families: bool,
    /// With several column families, a memtable switch cuts every family that holds writes at
    /// one new WAL, so their flushes are one point in the write order (RocksDB's `atomic_flush`).
    /// Off (the default, as RocksDB's): only the full family switches (or the family
    /// [`crate::Db::flush_cf`] names), and the others' memtables go on across WALs, bounded by
    /// `max_total_wal_size`.
    pub atomic_flush: bool,
    /// With several column families and `atomic_flush` off: once the WALs before the active one
    /// hold more than this many bytes, the families with writes in the oldest WAL are switched
    /// and flushed, so that it can be deleted (RocksDB's option; 0, the default: four times the
    /// families' `write_buffer_size * max_write_buffer_number`, as RocksDB computes it).
    pub max_total_wal_size: u64,
    /// Check every block's checksum and the consistency of the MANIFEST aggressively.
    pub paranoid_checks: bool,
    /// Bytes in one memtable before it is switched and flushed (64 MiB).
    pub write_buffer_size: usize,
    /// Memtables (active + immutable) kept before writes stop (2).
    pub max_write_buffer_number: usize,
    /// L0 files that trigger an L0 compaction (4).
    pub level0_file_num_compaction_trigger: usize,
    /// L0 files at which writes are slowed (20).
    pub level0_slowdown_writes_trigger: usize,
    /// L0 files at which writes stop (36).
    pub level0_stop_writes_trigger: usize,
    /// Target size of the base level (256 MiB).
    pub max_bytes_for_level_base: u64,
    /// Size ratio between adjacent levels (10).
    pub max_bytes_for_level_multiplier: f64,
    /// Target size of a compaction output file (64 MiB).
    pub target_file_size_base: u64,
    /// Number of levels (7).
    pub num_levels: usize,
    /// Compaction style.
    pub compaction_style: CompactionStyle,
    /// Uncompressed data block size target (4 KiB).
    pub block_size: usize,
    /// Keys between restart points in data blocks (16).
    pub block_restart_interval: usize,
    /// A data block within this many percent of `block_size` is closed before an entry that
    /// would take it past `block_size` (RocksDB's `block_size_deviation`, 10; 0: cut only on
    /// reaching `block_size`). At most 100.
    pub block_size_deviation: u32,
    /// Bloom filter bits per key; 0 disables filters (10).
    pub bloom_bits_per_key: u32,
    /// Block checksum of new tables (RocksDB's `checksum`): `Xxh3` (the default, as RocksDB 10)
    /// writes format version 4, `Crc32c` versions 2 and 3 as before. Tables of either kind are
    /// read whatever this says.
    pub checksum: ChecksumType,
    /// Default compression for every level (LZ4).
    pub compression: CompressionType,
    /// Per-level compression; when non-empty, entry `i` applies to level `i` (the last entry to
    /// deeper levels).
    pub compression_per_level: Vec<CompressionType>,
    /// Compression for the bottommost level; `None` uses the per-level setting.
    pub bottommost_compression: Option<CompressionType>,
    /// The level the compressors use (RocksDB's `compression_opts.level`):
    /// [`DEFAULT_COMPRESSION_LEVEL`] (32767) is each library's default (zstd 3); zstd takes
    /// -131072 to 22. A writer's choice: the format does not record it.
    pub compression_level: i32,
    /// The level of bottommost tables, when RocksDB's `bottommost_compression_opts` are enabled
    /// (`enabled=true`); `None` uses `compression_level`.
    pub bottommost_compression_level: Option<i32>,
    /// Block cache capacity in bytes (32 MiB; RocksDB's default for a new LRU cache is 32 MiB).
    pub block_cache_capacity: usize,
    /// No block cache at all: every block read goes to the file (RocksDB's
    /// `BlockBasedTableOptions::no_block_cache`; db_bench's `--cache_size=-1`). False.
    pub no_block_cache: bool,
    /// The block cache itself (RocksDB's `BlockBasedTableOptions::block_cache`): in the
    /// database's options, the database's cache, instead of one made from
    /// `block_cache_capacity` and the other `block_cache_*` options; in a column family's, a
    /// cache of that family's table blocks (the family's tables are read through it, not the
    /// database's). `None` (the default): the database makes its cache, and a family uses the
    /// database's. `no_block_cache` wins over it.
    pub block_cache: Option<BlockCacheRef>,
    /// The block cache has 2^num_shard_bits shards (6; at most [`MAX_CACHE_SHARD_BITS`]).
    pub block_cache_num_shard_bits: u32,
    /// Fail inserts into a full cache instead of exceeding capacity.
    pub block_cache_strict_capacity_limit: bool,
    /// Open SST readers kept in the table cache; -1 for unbounded.
    pub max_open_files: i64,
    /// Count RocksDB's tickers and histograms (`rocksdb.options-statistics`): the read-path
    /// tickers and the get/write latency histograms, which cost two clock reads per operation,
    /// are only counted once a database of the process was opened with this (RocksDB: a
    /// `Statistics` object in the options; none by default).
    pub statistics: bool,
    /// Background jobs (2), divided as RocksDB divides them: one flush thread, and
    /// `max_background_jobs` minus a quarter (at least one kept for flushes; at least one left)
    /// compaction threads.
    pub max_background_jobs: usize,
    /// How many nice levels below the thread that opens the database the compaction threads
    /// run, 0 (same) to 19 (Linux; ignored elsewhere): a compaction yields the CPU to flushes
    /// and to the application's threads (RocksDB: `Env::LowerThreadPoolCPUPriority` for its
    /// LOW pool, off by default).
    pub compaction_thread_nice: i32,
    /// WAL recovery mode.
    pub wal_recovery_mode: WalRecoveryMode,
    /// The file system. Tests swap in a fault-injecting one.
    pub fs: Arc<dyn Fs>,
    /// Disable automatic compactions (manual `compact_range` still works).
    pub disable_auto_compactions: bool,
    /// Block cache implementation (`lru_cache`).
    pub cache_type: CacheType,
    /// For `hyper_clock_cache`: the expected charge of one entry, which sizes its fixed table
    /// (RocksDB's `estimated_entry_charge`); 0 (the default) selects the automatic variant
    /// whose tables grow with the entries ([`crate::cache::AutoHyperClockCache`]).
    pub estimated_entry_charge: usize,
    /// What a block cache entry is charged beyond the block (RocksDB's
    /// `metadata_charge_policy`): by default, as RocksDB, the cache's own bytes per entry too.
    pub block_cache_metadata_charge_policy: MetadataChargePolicy,
    /// Bytes per second writes are slowed to when a slowdown trigger is reached (16 MiB/s;
    /// RocksDB's 0 means the same).
    pub delayed_write_rate: u64,
    /// Pending compaction bytes at which writes are slowed (64 GiB); 0 disables.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Pending compaction bytes at which writes stop (256 GiB); 0 disables.
    pub hard_pending_compaction_bytes_limit: u64,
    /// Size the last level's target from its actual size and let the base level move down as
    /// the tree grows (true, RocksDB's default since 8.4).
    pub level_compaction_dynamic_level_bytes: bool,
    /// Output files grow by this factor per level below the base level (1).
    pub target_file_size_multiplier: u32,
    /// Upper bound of one compaction's input bytes where the picker has a choice (intra-L0);
    /// 0 means `25 * target_file_size_base`.
    pub max_compaction_bytes: u64,
    /// Merge L0 files into one L0 file when L0→base cannot start (true). Talus-only: RocksDB
    /// always allows it.
    pub intra_l0_compaction: bool,
    /// Threads one L0→base or manual compaction may be split across (1: no split).
    pub max_subcompactions: usize,
    /// Bytes per second for flush and compaction writes (not the WAL); 0: unlimited.
    pub rate_limiter_bytes_per_sec: u64,
    /// A capped device (Talus only): IOPS and byte-rate caps on every file operation of the
    /// database, foreground reads and WAL syncs included (`fs::throttle`); all 0: no caps.
    pub io_limits: crate::fs::throttle::IoLimits,
    /// Universal: a run joins a merge if it is at most this percent larger than the runs
    /// before it together (1).
    pub size_ratio: u32,
    /// Universal: fewest runs a size-ratio merge takes (2).
    pub min_merge_width: usize,
    /// Universal: most runs one merge takes (unbounded).
    pub max_merge_width: usize,
    /// Universal: merge everything once the newer runs exceed this percent of the oldest (200).
    pub max_size_amplification_percent: u32,
    /// Keep SST index and filter blocks in the block cache, charged to its capacity, instead of
    /// in each table reader (false, RocksDB's default). See `sst::reader` for the placement.
    pub cache_index_and_filter_blocks: bool,
    /// With `cache_index_and_filter_blocks`: the readers of L0 files (level known when the
    /// reader is opened) pin their index and filter blocks in the cache (false).
    pub pin_l0_filter_and_index_blocks_in_cache: bool,
    /// With `cache_index_and_filter_blocks`: pin the top level of partitioned indexes and
    /// filters in the block cache for the reader's lifetime (true, RocksDB's default); without
    /// `cache_index_and_filter_blocks` the reader holds the top level itself. Partitions are
    /// never pinned.
    pub pin_top_level_index_and_filter: bool,
    /// SST index layout (`kBinarySearch`); `TwoLevelIndexSearch` writes partitioned indexes
    /// (format version 3 or later) so that only their top level stays in memory.
    pub index_type: IndexType,
    /// Partition the bloom filters too, into blocks of about `metadata_block_size` (false;
    /// needs `index_type = TwoLevelIndexSearch`, as in RocksDB).
    pub partition_filters: bool,
    /// Target size of an index or filter partition in bytes (4096, RocksDB's default).
    pub metadata_block_size: usize,
    /// Read SST files with direct IO (`O_DIRECT`) for user reads, iterators and compaction
    /// inputs: the page cache is bypassed, the block cache is the only cache (false). Refused
    /// at open on a file system without direct IO. See docs/design/direct-io.md.
    pub use_direct_reads: bool,
    /// Write flush and compaction outputs with direct IO (false). The WAL, the MANIFEST and the
    /// small metadata files stay buffered, as in RocksDB.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Bytes a compaction reads ahead from each input file (2 MiB, RocksDB's default); 0 reads
    /// block by block. User iterators read ahead on their own (8 KiB doubling to 256 KiB after
    /// two sequential block reads).
    pub compaction_readahead_size: usize,
    /// `lru_cache` only: share of each shard reserved for high-priority entries (index and
    /// filter blocks, and entries hit at least once), 0 to 1 (0.5, RocksDB's
    /// `LRUCacheOptions::high_pri_pool_ratio`).
    pub high_pri_pool_ratio: f64,
    /// Start writeback of the WAL each time this many bytes were appended since the last time
    /// (RocksDB's `wal_bytes_per_sync`; 0: never). Default 0, as RocksDB's: the kernel writes the
    /// WAL back on its own schedule, and a WAL flushed and deleted before its pages expire is
    /// never written at all. Starting writeback on the write path cost the writer the
    /// submission of every page (and, for a mapped WAL, write-protecting each one again): a
    /// fillseq of 1 KiB values took 4.83 us of CPU per put with 1 MiB, 3.77 with 0 (issue 36).
    /// Setting it keeps short the fsyncs of unsynced WALs: the strict recovery modes' fsync of
    /// the old WAL at each switch, and the first synced write after a switch, which syncs the
    /// WALs the switch left unsynced (docs/design/durability.md).
    pub wal_bytes_per_sync: u64,
    /// Append the WAL through a memory mapping (`Fs::create_mapped`: no system call per write
    /// group) rather than with `write(2)`. Default true. Talus only: RocksDB cannot map its WAL
    /// (its `allow_mmap_writes` maps SST files; `PosixFileSystem::OptimizeForLogWrite` and
    /// `OptimizeForManifestWrite` turn it off for the WAL and the MANIFEST). Talus writes SSTs
    /// and the MANIFEST with large buffered writes, so its OPTIONS file says
    /// `allow_mmap_writes=false`. Same durability either way: appended bytes are in the page
    /// cache (they survive a process crash), `sync` is `fdatasync`. See
    /// docs/design/write-path.md.
    pub wal_mmap_writes: bool,
    /// The writers of a write group insert their own batches into the memtable in parallel
    /// (RocksDB's option; default true, as RocksDB's). Off, the group's leader inserts them all.
    pub allow_concurrent_memtable_write: bool,
    /// A writer waiting in the write queue spins and yields for up to
    /// [`Options::write_thread_max_yield_usec`] before it blocks, so that hand-offs between
    /// writers need no system call (RocksDB's option; default true, as RocksDB's).
    pub enable_write_thread_adaptive_yield: bool,
    /// How long a waiting writer spins and yields before it blocks, in microseconds (RocksDB's
    /// option; default 100, as RocksDB's).
    pub write_thread_max_yield_usec: u64,
    /// How [`crate::Db::merge`] operands combine (RocksDB's `merge_operator`; none by default:
    /// `merge` is then refused, and reads that meet operands fail). Built-ins by RocksDB's
    /// names: [`crate::merge::builtin_by_name`]. See [`crate::MergeOperator`].
    pub merge_operator: Option<Arc<dyn crate::merge::MergeOperator>>,
    /// Called on each key's newest entry in every compaction (RocksDB's `compaction_filter`;
    /// none by default). See [`crate::CompactionFilter`].
    pub compaction_filter: Option<Arc<dyn crate::compaction_filter::CompactionFilter>>,
    /// Separate large values into blob files at flush (and compaction into levels at or below
    /// `blob_file_starting_level`): RocksDB's integrated BlobDB (default false).
    pub enable_blob_files: bool,
    /// Values at least this long go to blob files (default 0: every value).
    pub min_blob_size: u64,
    /// A blob file is finished once it reaches this size (default 256 MiB).
    pub blob_file_size: u64,
    /// Compression of blob records (default none).
    pub blob_compression_type: CompressionType,
    /// Compactions write blob files for output levels at or above this (flushes: at 0).
    pub blob_file_starting_level: usize,
    /// Compactions rewrite the live values of the oldest blob files (default false).
    pub enable_blob_garbage_collection: bool,
    /// The fraction of blob files, oldest first, whose values compactions rewrite (0.0-1.0,
    /// default 0.25).
    pub blob_garbage_collection_age_cutoff: f64,
    /// Garbage ratio of the oldest blob files that forces a compaction of the SSTs pointing at
    /// them (0.0-1.0, default 1.0: never; `compaction::blob_gc`).
    pub blob_garbage_collection_force_threshold: f64,
    /// The cache of blob values (RocksDB's `blob_cache`; default none: values are read from the
    /// file each time). Not the block cache: as in RocksDB, blobs are cached only here.
    pub blob_cache: Option<BlobCacheRef>,
    /// A flush inserts the values it writes to blob files into `blob_cache` (RocksDB's
    /// `prepopulate_blob_cache`; default `Disable`).
    pub prepopulate_blob_cache: PrepopulateBlobCache,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: false,
            error_if_exists: false,
            create_missing_column_families: false,
            atomic_flush: false,
            max_total_wal_size: 0,
            paranoid_checks: true,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            target_file_size_base: 64 << 20,
            num_levels: 7,
            compaction_style: CompactionStyle::Level,
            block_size: 4 << 10,
            block_restart_interval: 16,
            block_size_deviation: 10,
            bloom_bits_per_key: 10,
            checksum: ChecksumType::Xxh3,
            compression: CompressionType::Lz4,
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            compression_level: DEFAULT_COMPRESSION_LEVEL,
            bottommost_compression_level: None,
            block_cache_capacity: 32 << 20,
            no_block_cache: false,
            block_cache: None,
            block_cache_num_shard_bits: 6,
            block_cache_strict_capacity_limit: false,
            max_open_files: -1,
            statistics: false,
            max_background_jobs: 2,
            compaction_thread_nice: 10,
            wal_recovery_mode: WalRecoveryMode::PointInTimeRecovery,
            fs: Arc::new(StdFs),
            disable_auto_compactions: false,
            cache_type: CacheType::LruCache,
            estimated_entry_charge: 0,
            block_cache_metadata_charge_policy: MetadataChargePolicy::FullCharge,
            delayed_write_rate: 16 << 20,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            level_compaction_dynamic_level_bytes: true,
            target_file_size_multiplier: 1,
            max_compaction_bytes: 0,
            intra_l0_compaction: true,
            max_subcompactions: 1,
            rate_limiter_bytes_per_sec: 0,
            io_limits: crate::fs::throttle::IoLimits::default(),
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: usize::MAX,
            max_size_amplification_percent: 200,
            cache_index_and_filter_blocks: false,
            pin_l0_filter_and_index_blocks_in_cache: false,
            pin_top_level_index_and_filter: true,
            index_type: IndexType::BinarySearch,
            partition_filters: false,
            metadata_block_size: 4096,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            compaction_readahead_size: 2 << 20,
            high_pri_pool_ratio: 0.5,
            wal_bytes_per_sync: 0,
            wal_mmap_writes: true,
            allow_concurrent_memtable_write: true,
            enable_write_thread_adaptive_yield: true,
            write_thread_max_yield_usec: 100,
            merge_operator: None,
            compaction_filter: None,
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            blob_compression_type: CompressionType::None,
            blob_file_starting_level: 0,
            enable_blob_garbage_collection: false,
            blob_garbage_collection_age_cutoff: 0.25,
            blob_garbage_collection_force_threshold: 1.0,
            blob_cache: None,
            prepopulate_blob_cache: Default::default(),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("create_missing_column_families", &self.create_missing_column_families)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field("num_levels", &self.num_levels)
            .field("compression", &self.compression)
            .finish_non_exhaustive()
    }
}

fn invalid(option: &str, why: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("{option}: {why}"))
}

impl Options {
    /// Checks every option's range; the error names the first bad option.
    pub fn validate(&self) -> Result<()> {
        self.validate_compression_levels()?;
        self.validate_blob_options()?;
        if self.write_buffer_size < 4096 {
            return Err(invalid("write_buffer_size", "must be at least 4096 bytes"));
        }
        if self.max_write_buffer_number < 2 {
            return Err(invalid("max_write_buffer_number", "must be at least 2"));
        }
        if self.num_levels == 0 || self.num_levels > 64 {
            return Err(invalid("num_levels", "must be between 1 and 64"));
        }
        if self.num_levels < 2 && self.compaction_style == CompactionStyle::Level {
            return Err(invalid("num_levels", "leveled compaction needs at least 2 levels"));
        }
        if self.level0_file_num_compaction_trigger == 0 {
            return Err(invalid("level0_file_num_compaction_trigger", "must be at least 1"));
        }
        if self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger {
            return Err(invalid(
                "level0_stop_writes_trigger",
                "must not be below level0_slowdown_writes_trigger",
            ));
        }
        if self.max_bytes_for_level_base == 0 {
            return Err(invalid("max_bytes_for_level_base", "must be positive"));
        }
        if self.max_bytes_for_level_multiplier.is_nan()
            || self.max_bytes_for_level_multiplier <= 1.0
        {
            return Err(invalid("max_bytes_for_level_multiplier", "must be greater than 1"));
        }
        if self.target_file_size_base == 0 {
            return Err(invalid("target_file_size_base", "must be positive"));
        }
        if self.block_size == 0 || self.block_size > (1 << 30) {
            return Err(invalid("block_size", "must be between 1 byte and 1 GiB"));
        }
        if self.block_restart_interval == 0 {
            return Err(invalid("block_restart_interval", "must be at least 1"));
        }
        if self.block_size_deviation > 100 {
            return Err(invalid("block_size_deviation", "must be a percentage, at most 100"));
        }
        if self.bloom_bits_per_key > 100 {
            return Err(invalid("bloom_bits_per_key", "must be at most 100"));
        }
        if self.block_cache_num_shard_bits > MAX_CACHE_SHARD_BITS {
            return Err(invalid(
                "block_cache_num_shard_bits",
                format!("must be at most {MAX_CACHE_SHARD_BITS}"),
            ));
        }
        if self.max_open_files == 0 || self.max_open_files < -1 {
            return Err(invalid("max_open_files", "must be -1 (unbounded) or positive"));
        }
        if self.delayed_write_rate == 0 {
            return Err(invalid("delayed_write_rate", "must be positive"));
        }
        if self.hard_pending_compaction_bytes_limit > 0
            && self.soft_pending_compaction_bytes_limit > self.hard_pending_compaction_bytes_limit
        {
            return Err(invalid(
                "soft_pending_compaction_bytes_limit",
                "must not be above hard_pending_compaction_bytes_limit",
            ));
        }
        if self.target_file_size_multiplier == 0 {
            return Err(invalid("target_file_size_multiplier", "must be at least 1"));
        }
        if self.max_subcompactions == 0 {
            return Err(invalid("max_subcompactions", "must be at least 1"));
        }
        if self.min_merge_width < 2 {
            return Err(invalid("min_merge_width", "must be at least 2"));
        }
        if self.max_merge_width < self.min_merge_width {
            return Err(invalid("max_merge_width", "must not be below min_merge_width"));
        }
        if self.max_background_jobs == 0 {
            return Err(invalid("max_background_jobs", "must be at least 1"));
        }
        if !(0..=19).contains(&self.compaction_thread_nice) {
            return Err(invalid("compaction_thread_nice", "must be between 0 and 19"));
        }
        if !(0.0..=1.0).contains(&self.high_pri_pool_ratio) {
            return Err(invalid("high_pri_pool_ratio", "must be between 0 and 1"));
        }
        if self.partition_filters && self.index_type != IndexType::TwoLevelIndexSearch {
            return Err(invalid(
                "partition_filters",
                "needs index_type = kTwoLevelIndexSearch (partitioned index)",
            ));
        }
        if self.metadata_block_size == 0 || self.metadata_block_size > (1 << 30) {
            return Err(invalid("metadata_block_size", "must be between 1 byte and 1 GiB"));
        }
        if self.compaction_readahead_size > (1 << 30) {
            return Err(invalid("compaction_readahead_size", "must be at most 1 GiB"));
        }
        Ok(())
    }

    /// `max_compaction_bytes`, with 0 resolved to RocksDB's `25 * target_file_size_base`.
    pub fn effective_max_compaction_bytes(&self) -> u64 {
        match self.max_compaction_bytes {
            0 => self.target_file_size_base.saturating_mul(25),
            n => n,
        }
    }

    /// The compression for blocks written to `level` of a tree whose bottommost non-empty level
    /// is `bottommost`.
    pub fn compression_for_level(&self, level: usize, is_bottommost: bool) -> CompressionType {
        if is_bottommost {
            if let Some(c) = self.bottommost_compression {
                return c;
            }
        }
        match self.compression_per_level.get(level).or(self.compression_per_level.last()) {
            Some(&c) => c,
            None => self.compression,
        }
    }
}

/// Per-write options.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// fsync (fdatasync) the WAL before acknowledging.
    pub sync: bool,
    /// Skip the WAL: the write survives only once its memtable is flushed.
    pub disable_wal: bool,
}

/// Per-read options.
#[derive(Clone)]
pub struct ReadOptions {
    /// Read as of this snapshot; `None` reads the latest state. A snapshot taken from another
    /// database is refused ([`crate::Error::InvalidArgument`]; an iterator reports it in its
    /// status).
    pub snapshot: Option<crate::Snapshot>,
    /// Iterators start at or after this user key.
    pub iterate_lower_bound: Option<Vec<u8>>,
    /// Iterators stop before this user key.
    pub iterate_upper_bound: Option<Vec<u8>>,
    /// Insert blocks read into the block cache (default true).
    pub fill_cache: bool,
    /// RocksDB's option to skip verifying block checksums on reads (default true). Talus
    /// accepts it and verifies anyway: every block read from a file is checked before use (a
    /// block served from the block cache was checked when it was read), so corruption is an
    /// `Error::Corruption`, never wrong data (docs/rocksdb-differences.md).
    pub verify_checksums: bool,
}

impl Default for ReadOptions {
    /// RocksDB's defaults: fill the cache, verify checksums, latest state, no bounds.
    fn default() -> Self {
        ReadOptions {
            snapshot: None,
            iterate_lower_bound: None,
            iterate_upper_bound: None,
            fill_cache: true,
            verify_checksums: true,
        }
    }
}

impl ReadOptions {
    /// The same as `ReadOptions::default()`.
    pub fn new() -> Self {
        Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_name_the_option() {
        assert!(Options::default().validate().is_ok());
        let o = Options { write_buffer_size: 0, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("write_buffer_size"));
        let o = Options { num_levels: 0, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("num_levels"));
        assert!(CompressionType::parse("foo").unwrap_err().to_string().contains("foo"));
        let o = Options { partition_filters: true, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("partition_filters"));
        let o = Options {
            partition_filters: true,
            index_type: IndexType::TwoLevelIndexSearch,
            ..Default::default()
        };
        assert!(o.validate().is_ok());
        let o = Options { metadata_block_size: 0, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("metadata_block_size"));
        assert_eq!(IndexType::parse("2").unwrap(), IndexType::TwoLevelIndexSearch);
        assert_eq!(IndexType::parse("kBinarySearch").unwrap(), IndexType::BinarySearch);
        assert!(IndexType::parse("1").unwrap_err().to_string().contains("index_type"));
    }

    #[test]
    fn wal_recovery_modes_parse_by_rocksdb_name_and_number() {
        use WalRecoveryMode::*;
        for (i, m) in WalRecoveryMode::ALL.iter().enumerate() {
            assert_eq!(WalRecoveryMode::parse(m.name()).unwrap(), *m);
            assert_eq!(WalRecoveryMode::parse(&i.to_string()).unwrap(), *m);
        }
        assert_eq!(WalRecoveryMode::parse("point_in_time_recovery").unwrap(), PointInTimeRecovery);
        assert_eq!(WalRecoveryMode::parse("kabsoluteconsistency").unwrap(), AbsoluteConsistency);
        assert_eq!(WalRecoveryMode::parse("2").unwrap(), PointInTimeRecovery);
        for bad in ["", "k", "4", "-1", "kPointInTime", "absolute"] {
            let e = WalRecoveryMode::parse(bad).unwrap_err().to_string();
            assert!(e.contains("wal_recovery_mode") && e.contains("kAbsoluteConsistency"), "{e}");
        }
    }

    #[test]
    fn per_level_compression() {
        let o = Options {
            compression_per_level: vec![CompressionType::None, CompressionType::Lz4],
            bottommost_compression: Some(CompressionType::Zstd),
            ..Default::default()
        };
        assert_eq!(o.compression_for_level(0, false), CompressionType::None);
        assert_eq!(o.compression_for_level(5, false), CompressionType::Lz4);
        assert_eq!(o.compression_for_level(5, true), CompressionType::Zstd);
    }
}
