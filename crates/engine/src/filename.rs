//! RocksDB's file names: `NNNNNN.log`, `NNNNNN.sst`, `NNNNNN.blob`, `MANIFEST-NNNNNN`, `CURRENT`, `LOCK`,
//! `OPTIONS-NNNNNN`, `LOG`, and Talus's own `NNNNNN.log.corrupt` (a WAL recovery could not
//! replay whole, kept for salvage: `docs/design/recovery.md`) and `<one of these>.dbtmp` (a
//! file being replaced atomically).
//!
//! [`parse_file_name`] is the one definition of "a file of this database": obsolete-file
//! deletion and [`crate::destroy_db`] touch nothing it does not recognize. Numbers are ASCII
//! digits only (`+5.log` or `backup.sst` are not ours).

use std::path::{Path, PathBuf};

/// A file the database owns, parsed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// A write-ahead log.
    Wal(u64),
    /// A table file.
    Table(u64),
    /// A blob file (`NNNNNN.blob`: separated values, `docs/format/blob.md`).
    Blob(u64),
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
    /// A temp file: one of the names above followed by `.dbtmp`.
    Temp,
    /// A WAL that recovery could not replay whole, renamed `NNNNNN.log.corrupt` and kept.
    CorruptWal(u64),
}

/// Path of WAL `n`.
pub fn wal_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(wal_name(n))
}
/// Name of WAL `n`.
pub fn wal_name(n: u64) -> String {
    format!("{n:06}.log")
}
/// Name of the kept damaged WAL `n` (`NNNNNN.log.corrupt`).
pub fn corrupt_wal_name(n: u64) -> String {
    format!("{n:06}.log.corrupt")
}
/// Path of the kept damaged WAL `n`.
pub fn corrupt_wal_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(corrupt_wal_name(n))
}
/// Path of SST `n`.
pub fn table_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(table_name(n))
}
/// Name of SST `n`.
pub fn table_name(n: u64) -> String {
    format!("{n:06}.sst")
}
/// Path of blob file `n`.
pub fn blob_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(blob_name(n))
}
/// Name of blob file `n`.
pub fn blob_name(n: u64) -> String {
    format!("{n:06}.blob")
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

/// Parses a file name in a database directory; `None` for anything that is not this engine's.
pub fn parse_file_name(name: &str) -> Option<FileType> {
    match name {
        "CURRENT" => return Some(FileType::Current),
        "LOCK" => return Some(FileType::Lock),
        "LOG" | "LOG.old" => return Some(FileType::InfoLog),
        _ => {}
    }
    if name.starts_with("LOG.old.") {
        return Some(FileType::InfoLog);
    }
    if let Some(stem) = name.strip_suffix(".dbtmp") {
        return match parse_file_name(stem) {
            Some(FileType::Temp | FileType::Lock) | None => None,
            Some(_) => Some(FileType::Temp),
        };
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return number(rest).map(FileType::Manifest);
    }
    if let Some(rest) = name.strip_prefix("OPTIONS-") {
        return number(rest).map(FileType::Options);
    }
    if let Some(rest) = name.strip_suffix(".log.corrupt") {
        return number(rest).map(FileType::CorruptWal);
    }
    if let Some(rest) = name.strip_suffix(".log") {
        return number(rest).map(FileType::Wal);
    }
    if let Some(rest) = name.strip_suffix(".sst") {
        return number(rest).map(FileType::Table);
    }
    if let Some(rest) = name.strip_suffix(".blob") {
        return number(rest).map(FileType::Blob);
    }
    None
}

/// True for a file only a database has: one of its data or metadata files (not `LOG`,
/// `LOG.old*` or `LOCK`, names other programs use too). A directory with none of these holds no
/// database.
pub fn is_database_file(name: &str) -> bool {
    !matches!(parse_file_name(name), None | Some(FileType::InfoLog | FileType::Lock))
}

/// A file number: one or more ASCII digits (no sign, no spaces), fitting a u64.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
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
        assert_eq!(blob_path(d, 9), Path::new("/db/000009.blob"));
        assert_eq!(parse_file_name("000009.blob"), Some(FileType::Blob(9)));
        assert_eq!(parse_file_name(&manifest_name(5)), Some(FileType::Manifest(5)));
        assert_eq!(parse_file_name("CURRENT"), Some(FileType::Current));
        assert_eq!(parse_file_name("x.log.bak"), None);
        assert_eq!(parse_file_name("MANIFEST-x"), None);
    }

    /// Only this engine's names parse: a tool that deletes "database files" must not take a
    /// server's log, a backup or a note for one.
    #[test]
    fn foreign_names_do_not_parse() {
        for name in [
            "server.log",
            "backup.sst",
            "notes.txt",
            "+5.log",
            " 5.sst",
            "5.sst.bak",
            ".log",
            "MANIFEST-",
            "MANIFEST-1x",
            "OPTIONS-+1",
            "LOG.older",
            "LOGS",
            "IDENTITY",
            "backup.blob",
            "1.blob.x",
            "backup.dbtmp",
            "LOCK.dbtmp",
            "x.log.corrupt",
            "99999999999999999999999.log",
        ] {
            assert_eq!(parse_file_name(name), None, "{name}");
        }
        assert_eq!(parse_file_name("LOG.old"), Some(FileType::InfoLog));
        assert_eq!(parse_file_name("LOG.old.1732384950123456"), Some(FileType::InfoLog));
        assert_eq!(parse_file_name("CURRENT.dbtmp"), Some(FileType::Temp));
        assert_eq!(parse_file_name("OPTIONS-000007.dbtmp"), Some(FileType::Temp));
        assert_eq!(parse_file_name("000005.log.corrupt"), Some(FileType::CorruptWal(5)));
        assert_eq!(corrupt_wal_path(Path::new("/db"), 5), Path::new("/db/000005.log.corrupt"));
    }
}
