//! What an open decides before it takes the LOCK or touches anything: is the path a directory,
//! is it another engine's database, does a database exist, may one be created.
//!
//! Who calls: `open.rs` (every open) and `destroy.rs`. Reads only (`exists`, `list_dir`, and the
//! first bytes of OPTIONS files); takes no lock.

use std::io::ErrorKind;
use std::path::Path;

use super::replay::{holds_nothing, WalFile};
use crate::error::{Error, Result};
use crate::filename::{current_path, is_database_file, parse_file_name, FileType};
use crate::fs::Fs;
use crate::options::Options;

/// What is at the database path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing: neither the directory nor a database in it.
    Nothing,
    /// A directory with no `CURRENT` and none of a database's own files (but WALs that hold
    /// nothing, which an interrupted creation leaves). `foreign_log`: it holds a `LOG` file,
    /// which a Talus database only ever has once its `CURRENT` exists, so the LOG is another
    /// program's.
    EmptyDir {
        /// A `LOG` file is there.
        foreign_log: bool,
    },
    /// A database (`CURRENT` is present).
    Database,
}

/// Looks at `path`: `InvalidArgument` if it is a file ("not a directory") or another engine's
/// database; `Corruption` if `CURRENT` is missing beside a MANIFEST or table files;
/// `InvalidArgument` if it holds other files named like a database's (a WAL with records, an
/// OPTIONS file, a kept damaged WAL, a temp file) but no `CURRENT`: creating a database there
/// would replay, rename or delete them, and they are not provably ours.
pub(crate) fn inspect(fs: &dyn Fs, path: &Path) -> Result<Found> {
    let Some(names) = list_own_dir(fs, path)? else { return Ok(Found::Nothing) };
    if fs.exists(&current_path(path)) {
        return Ok(Found::Database);
    }
    // A missing CURRENT beside a MANIFEST or table files is damage, not a new database:
    // creating one here would delete the old files as obsolete.
    if let Some(name) = names.iter().find(|n| {
        matches!(parse_file_name(n), Some(FileType::Manifest(_)) | Some(FileType::Table(_)))
    }) {
        return Err(Error::corruption(
            current_path(path).display(),
            0,
            format!(
                "CURRENT is missing but {name} exists; refusing to create a new database over it"
            ),
        ));
    }
    for name in names.iter().filter(|n| is_database_file(n)) {
        if let Some(FileType::Wal(number)) = parse_file_name(name) {
            let wal = WalFile { number, corrupt_name: false };
            if holds_nothing(fs, &path.join(name), &wal)? {
                continue;
            }
        }
        return Err(Error::InvalidArgument(format!(
            "{}: holds {name}, named like a database's file, but no CURRENT, so there is no \
             database here and none is created over it (nothing was changed); if the file is \
             yours to discard, remove it by hand",
            path.display()
        )));
    }
    Ok(Found::EmptyDir { foreign_log: names.iter().any(|n| n == "LOG") })
}

/// The names in directory `path` (`None` if nothing is there), after refusing a path that is a
/// file ("not a directory") or holds a RocksDB database: `InvalidArgument` saying which.
pub(crate) fn list_own_dir(fs: &dyn Fs, path: &Path) -> Result<Option<Vec<String>>> {
    if !fs.exists(path) {
        return Ok(None);
    }
    let names = match fs.list_dir(path) {
        Ok(n) => n,
        Err(e) if e.io_kind() == Some(ErrorKind::NotADirectory) => {
            return Err(Error::InvalidArgument(format!(
                "{}: not a directory (a database is a directory)",
                path.display()
            )))
        }
        Err(e) => return Err(e),
    };
    if let Some(evidence) = rocksdb_evidence(fs, path, &names) {
        return Err(Error::InvalidArgument(format!(
            "{} is a RocksDB database ({evidence}), not a Talus one; Talus cannot use it and has \
             changed nothing (use RocksDB's tools, e.g. ldb --db={})",
            path.display(),
            path.display()
        )));
    }
    Ok(Some(names))
}

/// Applies `create_if_missing` and `error_if_exists` to what [`inspect`] found; `read_only`
/// never creates, and nothing is created over another program's `LOG`.
pub(crate) fn check_create(
    found: Found,
    path: &Path,
    opts: &Options,
    read_only: bool,
) -> Result<()> {
    match found {
        Found::Database if opts.error_if_exists && !read_only => Err(Error::InvalidArgument(
            format!("{}: exists (error_if_exists is true)", path.display()),
        )),
        Found::Database => Ok(()),
        _ if read_only => Err(Error::NotFound(format!(
            "{}: no database here (no CURRENT file); a read-only open creates nothing",
            path.display()
        ))),
        // NotFound, as for a read-only open (RocksDB says InvalidArgument; issue 39).
        _ if !opts.create_if_missing => Err(Error::NotFound(format!(
            "{}: does not exist (create_if_missing is false)",
            path.display()
        ))),
        // Creating would rotate that LOG away: it is not ours to touch.
        Found::EmptyDir { foreign_log: true } => Err(Error::InvalidArgument(format!(
            "{}: holds a LOG file but no database (no CURRENT); it belongs to another program, \
             so no database is created here",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Why `path` looks like a RocksDB database, if it does: RocksDB writes an `IDENTITY` file into
/// every database, and its OPTIONS files say who wrote them (Talus's say `talus_version=`).
fn rocksdb_evidence(fs: &dyn Fs, path: &Path, names: &[String]) -> Option<String> {
    if names.iter().any(|n| n == "IDENTITY") {
        return Some("it has an IDENTITY file".into());
    }
    for n in names.iter().filter(|n| matches!(parse_file_name(n), Some(FileType::Options(_)))) {
        let Ok(mut f) = fs.open_sequential(&path.join(n)) else { continue };
        let mut head = [0u8; 512];
        let Ok(len) = f.read(&mut head) else { continue };
        let text = String::from_utf8_lossy(head.get(..len).unwrap_or(&[]));
        if text.contains("RocksDB option file") || text.contains("rocksdb_version=") {
            return Some(format!("{n} was written by RocksDB"));
        }
    }
    None
}
