//! The kinds an option takes a value from: [`CompressionType`], [`CacheType`], [`IndexType`],
//! [`WalRecoveryMode`] and [`CompactionStyle`], with RocksDB's names and numbers (parsed from
//! and printed to OPTIONS files and db_bench flags). Pure values; no IO.

use crate::error::{Error, Result};

/// Block compression, per level or for the bottommost level. The numeric values are on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CompressionType {
    /// No compression.
    None = 0,
    /// Snappy (`snap` crate).
    Snappy = 1,
    /// LZ4 block format (`lz4_flex`).
    Lz4 = 4,
    /// Zstandard (`zstd` crate, level 3 unless configured).
    Zstd = 7,
}

impl CompressionType {
    /// Decodes the on-disk byte.
    pub fn from_u8(b: u8) -> Option<CompressionType> {
        Some(match b {
            0 => CompressionType::None,
            1 => CompressionType::Snappy,
            4 => CompressionType::Lz4,
            7 => CompressionType::Zstd,
            _ => return None,
        })
    }

    /// Parses RocksDB's names (`none`, `snappy`, `lz4`, `zstd`, and the `kXxxCompression` forms).
    pub fn parse(s: &str) -> Result<CompressionType> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "none" | "no" | "knocompression" => CompressionType::None,
            "snappy" | "ksnappycompression" => CompressionType::Snappy,
            "lz4" | "klz4compression" => CompressionType::Lz4,
            "zstd" | "kzstd" | "kzstdcompression" => CompressionType::Zstd,
            _ => {
                return Err(Error::InvalidArgument(format!(
                "compression: unknown compression type {s:?} (expected none, snappy, lz4 or zstd)"
            )))
            }
        })
    }

    /// RocksDB's name for the type, as printed in headers and properties.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "NoCompression",
            CompressionType::Snappy => "Snappy",
            CompressionType::Lz4 => "LZ4",
            CompressionType::Zstd => "ZSTD",
        }
    }
}

/// Which block cache implementation to build (RocksDB's `cache_type` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheType {
    /// `lru_cache`: sharded mutex + hash + LRU list ([`crate::cache::LruCache`]).
    #[default]
    LruCache,
    /// `hyper_clock_cache` (alias `clock_cache`): lock-free CLOCK
    /// ([`crate::cache::HyperClockCache`]).
    HyperClockCache,
}

impl CacheType {
    /// Parses RocksDB's names: `lru_cache`, `hyper_clock_cache` (or `clock_cache`).
    pub fn parse(s: &str) -> Result<CacheType> {
        match s {
            "lru_cache" => Ok(CacheType::LruCache),
            "hyper_clock_cache"
            | "clock_cache"
            | "fixed_hyper_clock_cache"
            | "auto_hyper_clock_cache" => Ok(CacheType::HyperClockCache),
            _ => Err(Error::InvalidArgument(format!(
                "cache_type: unknown cache type {s:?} (expected lru_cache or hyper_clock_cache)"
            ))),
        }
    }

    /// RocksDB's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            CacheType::LruCache => "lru_cache",
            CacheType::HyperClockCache => "hyper_clock_cache",
        }
    }
}

/// How SST indexes are laid out (RocksDB's `BlockBasedTableOptions::IndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexType {
    /// One index block per table, searched by binary search (`kBinarySearch`, 0).
    #[default]
    BinarySearch,
    /// Index partitions of about `metadata_block_size` bytes under a top-level index; only the
    /// top level stays in memory, partitions are cached like data blocks
    /// (`kTwoLevelIndexSearch`, 2).
    TwoLevelIndexSearch,
}

impl IndexType {
    /// Parses RocksDB's names and numbers: `kBinarySearch` or `0`, `kTwoLevelIndexSearch` or
    /// `2` (hash search, 1, is not implemented).
    pub fn parse(s: &str) -> Result<IndexType> {
        match s {
            "0" | "kBinarySearch" | "binary_search" => Ok(IndexType::BinarySearch),
            "2" | "kTwoLevelIndexSearch" | "two_level_index_search" => {
                Ok(IndexType::TwoLevelIndexSearch)
            }
            _ => Err(Error::InvalidArgument(format!(
                "index_type: unknown or unsupported index type {s:?} (expected kBinarySearch (0) \
                 or kTwoLevelIndexSearch (2))"
            ))),
        }
    }

    /// RocksDB's name.
    pub fn name(self) -> &'static str {
        match self {
            IndexType::BinarySearch => "kBinarySearch",
            IndexType::TwoLevelIndexSearch => "kTwoLevelIndexSearch",
        }
    }
}

/// How WAL recovery treats a bad record (RocksDB's `WALRecoveryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalRecoveryMode {
    /// Tolerate an incomplete record at the tail of the last WAL only.
    TolerateCorruptedTailRecords,
    /// Any corruption or incomplete record fails the open.
    AbsoluteConsistency,
    /// Stop replay at the first bad record and open at that consistent point (the default).
    #[default]
    PointInTimeRecovery,
    /// Skip bad records and go on replaying (may leave holes: a salvage mode).
    SkipAnyCorruptedRecords,
}

impl WalRecoveryMode {
    /// Every mode, in RocksDB's numbering (0 to 3).
    pub const ALL: [WalRecoveryMode; 4] = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTimeRecovery,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ];

    /// Parses RocksDB's names (`kPointInTimeRecovery`, also without the `k`, in any case, and
    /// snake case: `point_in_time_recovery`) and numbers (`0` to `3`, as `--wal_recovery_mode`
    /// of RocksDB's tools takes them).
    pub fn parse(s: &str) -> Result<WalRecoveryMode> {
        let key: String = s.chars().filter(|c| *c != '_').collect::<String>().to_ascii_lowercase();
        let key = key.strip_prefix('k').filter(|_| key.len() > 1).unwrap_or(&key);
        let found = WalRecoveryMode::ALL
            .iter()
            .enumerate()
            .find(|(i, m)| key == i.to_string() || key == m.name()[1..].to_ascii_lowercase());
        match found {
            Some((_, m)) => Ok(*m),
            None => Err(Error::InvalidArgument(format!(
                "wal_recovery_mode: unknown mode {s:?} (expected kTolerateCorruptedTailRecords, \
                 kAbsoluteConsistency, kPointInTimeRecovery, kSkipAnyCorruptedRecords or 0-3)"
            ))),
        }
    }

    /// RocksDB's name (`kPointInTimeRecovery`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WalRecoveryMode::TolerateCorruptedTailRecords => "kTolerateCorruptedTailRecords",
            WalRecoveryMode::AbsoluteConsistency => "kAbsoluteConsistency",
            WalRecoveryMode::PointInTimeRecovery => "kPointInTimeRecovery",
            WalRecoveryMode::SkipAnyCorruptedRecords => "kSkipAnyCorruptedRecords",
        }
    }
}

/// Which compaction style the database runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStyle {
    /// Leveled compaction (RocksDB's `kCompactionStyleLevel`, 0).
    #[default]
    Level,
    /// Size-tiered (RocksDB's `kCompactionStyleUniversal`, 1).
    Universal,
}
