//! [`ChecksumType`]: which checksum the block trailers of new SST files carry (RocksDB's
//! `BlockBasedTableOptions::checksum`). The choice only; the functions are in
//! `crate::sst::checksum`, and a reader takes the kind from each file's footer, never from the
//! options. Pure values; no IO.

use crate::error::{Error, Result};

/// The block checksum of tables written from now on. `Xxh3` (the default, as RocksDB 10's
/// `kXXH3`) writes format version 4; `Crc32c` writes the tables of earlier Talus releases
/// byte for byte (format version 2, or 3 with a partitioned index or filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChecksumType {
    /// Masked crc32c (RocksDB's `kCRC32c`, 1).
    Crc32c,
    /// XXH3-64, lower 32 bits (RocksDB's `kXXH3`, 4).
    #[default]
    Xxh3,
}

impl ChecksumType {
    /// Both kinds, in RocksDB's numbering order.
    pub const ALL: [ChecksumType; 2] = [ChecksumType::Crc32c, ChecksumType::Xxh3];

    /// Parses `crc32c` / `xxh3` and RocksDB's spellings `kCRC32c` / `kXXH3`, in any case.
    /// RocksDB's other kinds (`kNoChecksum`, `kxxHash`, `kxxHash64`) are refused.
    pub fn parse(s: &str) -> Result<ChecksumType> {
        match s.to_ascii_lowercase().as_str() {
            "crc32c" | "kcrc32c" => Ok(ChecksumType::Crc32c),
            "xxh3" | "kxxh3" => Ok(ChecksumType::Xxh3),
            _ => Err(Error::InvalidArgument(format!(
                "checksum: unknown or unsupported checksum type {s:?} (expected crc32c or xxh3, \
                 RocksDB's kCRC32c or kXXH3)"
            ))),
        }
    }

    /// Talus's name: `crc32c` or `xxh3`.
    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::Crc32c => "crc32c",
            ChecksumType::Xxh3 => "xxh3",
        }
    }

    /// RocksDB's enum spelling, as its OPTIONS files write it: `kCRC32c` or `kXXH3`.
    pub fn rocksdb_name(self) -> &'static str {
        match self {
            ChecksumType::Crc32c => "kCRC32c",
            ChecksumType::Xxh3 => "kXXH3",
        }
    }

    /// RocksDB's `ChecksumType` number (db_bench's `--checksum_type`): 1 or 4.
    pub fn rocksdb_id(self) -> i64 {
        match self {
            ChecksumType::Crc32c => 1,
            ChecksumType::Xxh3 => 4,
        }
    }

    /// The kind with RocksDB's number `n`, if Talus has it.
    pub fn from_rocksdb_id(n: i64) -> Option<ChecksumType> {
        ChecksumType::ALL.into_iter().find(|c| c.rocksdb_id() == n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_round_trip() {
        for c in ChecksumType::ALL {
            assert_eq!(ChecksumType::parse(c.name()).unwrap(), c);
            assert_eq!(ChecksumType::parse(c.rocksdb_name()).unwrap(), c);
            assert_eq!(ChecksumType::from_rocksdb_id(c.rocksdb_id()), Some(c));
        }
        assert_eq!(ChecksumType::default(), ChecksumType::Xxh3);
        assert_eq!(ChecksumType::parse("XXH3").unwrap(), ChecksumType::Xxh3);
        for bad in ["kxxHash64", "kNoChecksum", "crc32", ""] {
            let e = ChecksumType::parse(bad).unwrap_err().to_string();
            assert!(e.contains("checksum") && e.contains("xxh3"), "{bad}: {e}");
        }
        for n in [0, 2, 3, 5, -1] {
            assert_eq!(ChecksumType::from_rocksdb_id(n), None, "{n}");
        }
    }
}
