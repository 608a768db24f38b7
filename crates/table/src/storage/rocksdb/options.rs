//! Talus's options as RocksDB's: every option goes by its RocksDB name, read off the OPTIONS
//! file Talus would write for them (`talus::options_file::render`, RocksDB's names and
//! spellings), section by section, into the option strings RocksDB's own parser takes
//! (`GetDBOptionsFromString`, ...), strictly. What RocksDB keeps as objects rather than strings
//! is passed as plain arguments: the block cache (its type, capacity, shards, limits), the rate
//! limiter and statistics. The Talus-only options ([`TALUS_ONLY`]) have no RocksDB meaning and
//! are not passed, except the device caps (`io_limit_*`), which go as [`RocksOptions::io_limits`]
//! to the shim's throttled file system (`throttle_fs.cc`). Pure: no IO.

use talus::options::CacheType;
use talus::Options;

use crate::storage::options_diff::parse_sections;

/// Options Talus has and RocksDB does not (or not as a string option): never passed. The block
/// cache, the rate limiter, statistics and the device caps go as [`RocksOptions`]' fields
/// instead.
pub const TALUS_ONLY: &[&str] = &[
    "compaction_thread_nice",
    "wal_mmap_writes",
    "rate_limiter_bytes_per_sec",
    "intra_l0_compaction",
    "block_cache",
    "io_limit_read_iops",
    "io_limit_write_iops",
    "io_limit_read_bytes_per_sec",
    "io_limit_write_bytes_per_sec",
    "io_limit_iops",
    "io_limit_bytes_per_sec",
];

/// RocksDB's options for a set of Talus options.
#[derive(Clone, Debug, PartialEq)]
pub struct RocksOptions {
    /// `DBOptions` as `k=v;...`.
    pub db: String,
    /// `ColumnFamilyOptions` as `k=v;...`.
    pub cf: String,
    /// `BlockBasedTableOptions` as `k=v;...`.
    pub table: String,
    /// 0: LRU, 1: HyperClockCache, 2: no block cache.
    pub cache_type: i32,
    /// Block cache bytes.
    pub cache_capacity: usize,
    /// Block cache shard bits.
    pub shard_bits: i32,
    /// Block cache strict capacity limit.
    pub strict_capacity: bool,
    /// LRU high-priority pool share.
    pub high_pri_ratio: f64,
    /// HyperClockCache's estimated entry charge (0: automatic).
    pub estimated_entry_charge: usize,
    /// Charge the cache's metadata to its capacity.
    pub charge_metadata: bool,
    /// Flush and compaction write rate limit (0: none).
    pub rate_bytes_per_sec: i64,
    /// Keep RocksDB's statistics (`rocksdb.options-statistics`).
    pub statistics: bool,
    /// The device caps (`io_limit_*`): every file RocksDB opens waits on a Talus throttle of
    /// these (none set: RocksDB's default file system).
    pub io_limits: talus::fs::throttle::IoLimits,
}

/// RocksDB's options for `o`.
pub fn rocks_options(o: &Options) -> RocksOptions {
    let text = talus::options_file::render(o);
    let sections = parse_sections(&text);
    let join = |section: &str| -> String {
        sections
            .iter()
            .filter(|(s, name, _)| s == section && !TALUS_ONLY.contains(&name.as_str()))
            .map(|(_, name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    RocksOptions {
        db: join("DBOptions"),
        cf: join("CFOptions \"default\""),
        table: join("TableOptions/BlockBasedTable \"default\""),
        cache_type: if o.no_block_cache {
            2
        } else {
            match o.cache_type {
                CacheType::LruCache => 0,
                CacheType::HyperClockCache => 1,
            }
        },
        cache_capacity: o.block_cache_capacity,
        shard_bits: o.block_cache_num_shard_bits as i32,
        strict_capacity: o.block_cache_strict_capacity_limit,
        high_pri_ratio: o.high_pri_pool_ratio,
        estimated_entry_charge: o.estimated_entry_charge,
        charge_metadata: matches!(
            o.block_cache_metadata_charge_policy,
            talus::cache::MetadataChargePolicy::FullCharge
        ),
        rate_bytes_per_sec: o.rate_limiter_bytes_per_sec as i64,
        statistics: o.statistics,
        io_limits: o.io_limits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_names_without_the_talus_only_ones() {
        let o = Options {
            write_buffer_size: 1 << 20,
            intra_l0_compaction: true,
            rate_limiter_bytes_per_sec: 5,
            ..Options::default()
        };
        let r = rocks_options(&o);
        assert!(r.cf.contains("write_buffer_size=1048576"), "{}", r.cf);
        assert!(r.cf.contains("compaction_options_universal={size_ratio="), "{}", r.cf);
        assert!(!r.cf.contains("intra_l0"), "{}", r.cf);
        assert!(!r.db.contains("wal_mmap_writes") && !r.db.contains("rate_limiter"), "{}", r.db);
        assert!(r.table.contains("filter_policy="), "{}", r.table);
        assert!(!r.table.contains("block_cache"), "{}", r.table);
        assert_eq!((r.rate_bytes_per_sec, r.cache_type), (5, 0));
        assert!(r.io_limits.is_unlimited());
    }

    #[test]
    fn device_caps_go_as_a_field_not_as_rocksdb_options() {
        let mut o = Options::default();
        o.io_limits.iops = 1000;
        o.io_limits.bytes_per_sec = 16_384_000;
        assert!(talus::options_file::render(&o).contains("io_limit_iops=1000"));
        let r = rocks_options(&o);
        assert!(!r.db.contains("io_limit"), "{}", r.db);
        assert_eq!((r.io_limits.iops, r.io_limits.bytes_per_sec), (1000, 16_384_000));
    }
}
