//! RocksDB's file names: `NNNNNN.log`, `NNNNNN.sst`, `MANIFEST-NNNNNN`, `CURRENT`, `LOCK`,
//! `OPTIONS-NNNNNN`, `LOG`.

use std::path::{Path, PathBuf};

/// A file the database owns, parsed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// A write-ahead log.
    Wal(u64),
    /// A table file.
    Table(u64),
    /// A MANIFEST.
    Manifest(u64),
    /// The CURRENT pointer.
    Current,
    /// The LOCK file.
    Lock,
    /// An OPTIONS file.
    Options(u64),
    /// The info log (`LOG` or `LOG.old.*`).
    InfoLog,
    /// A temp file (`*.dbtmp`).
    Temp,
}

/// Path of WAL `n`.
pub fn wal_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.log"))
}
/// Path of SST `n`.
pub fn table_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(table_name(n))
}
/// Name of SST `n`.
pub fn table_name(n: u64) -> String {
    format!("{n:06}.sst")
}
/// Name of MANIFEST `n`.
pub fn manifest_name(n: u64) -> String {
    format!("MANIFEST-{n:06}")
}
/// Path of MANIFEST `n`.
pub fn manifest_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(manifest_name(n))
}
/// Path of CURRENT.
pub fn current_path(dir: &Path) -> PathBuf {
    dir.join("CURRENT")
}
/// Path of LOCK.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}
/// Name of OPTIONS file `n`.
pub fn options_name(n: u64) -> String {
    format!("OPTIONS-{n:06}")
}

/// Parses a file name in a database directory.
pub fn parse_file_name(name: &str) -> Option<FileType> {
    if name == "CURRENT" {
        return Some(FileType::Current);
    }
    if name == "LOCK" {
        return Some(FileType::Lock);
    }
    if name == "LOG" || name.starts_with("LOG.old") {
        return Some(FileType::InfoLog);
    }
    if name.ends_with(".dbtmp") {
        return Some(FileType::Temp);
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return rest.parse().ok().map(FileType::Manifest);
    }
    if let Some(rest) = name.strip_prefix("OPTIONS-") {
        return rest.parse().ok().map(FileType::Options);
    }
    if let Some(rest) = name.strip_suffix(".log") {
        return rest.parse().ok().map(FileType::Wal);
    }
    if let Some(rest) = name.strip_suffix(".sst") {
        return rest.parse().ok().map(FileType::Table);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Path::new("/db");
        assert_eq!(wal_path(d, 12), Path::new("/db/000012.log"));
        assert_eq!(parse_file_name("000012.log"), Some(FileType::Wal(12)));
        assert_eq!(parse_file_name("1234567.sst"), Some(FileType::Table(1234567)));
        assert_eq!(parse_file_name(&manifest_name(5)), Some(FileType::Manifest(5)));
        assert_eq!(parse_file_name("CURRENT"), Some(FileType::Current));
        assert_eq!(parse_file_name("x.log.bak"), None);
        assert_eq!(parse_file_name("MANIFEST-x"), None);
    }
}
