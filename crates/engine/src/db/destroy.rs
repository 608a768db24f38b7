//! [`destroy_db`]: RocksDB's `DestroyDB` for Talus databases. The only way the tools remove a
//! database.
//!
//! Contract: it destroys only a database. A directory is one when `CURRENT` names a MANIFEST
//! that reads back whole ([`VersionSet::load`]: every record intact and applying, written by
//! Talus). A directory with none of a database's own files (at most `LOG`, `LOG.old*` or
//! `LOCK`, names other programs use too, and WALs that hold nothing, which an interrupted
//! creation leaves) holds nothing to destroy: `Ok`, nothing touched. Any
//! other directory with engine-named files (`000001.log` without `CURRENT`, SSTs and a MANIFEST
//! without `CURRENT`, a `CURRENT` naming a missing or damaged MANIFEST) is refused with
//! `InvalidArgument` naming what was found, why it is no database, and how to remove it by
//! hand; nothing is deleted (issue 34: such a directory was wiped whole before). A directory
//! holding a RocksDB database (by its `IDENTITY` or OPTIONS file, or a MANIFEST with RocksDB's
//! fields) is refused whole (`InvalidArgument`), as is a path that is a file; a missing path is
//! `Ok` (nothing to do).
//!
//! Then it takes the database's LOCK (so a database open in this or another process is refused
//! with [`Error::Locked`] and untouched), deletes only the files whose names parse as this
//! engine's ([`crate::filename::parse_file_name`]: `NNNNNN.log`, `NNNNNN.sst`,
//! `MANIFEST-NNNNNN`, `CURRENT`, `LOG`, `LOG.old*`, `OPTIONS-NNNNNN`, `NNNNNN.log.corrupt`,
//! `*.dbtmp` of those; `CURRENT` first), and the table layer's `tmp/` if it holds only that
//! layer's index-build files (`talus-index-*`), then `LOCK` (unlinked while still held, so no
//! other process can lock the old file and be fooled), and last the directory itself if
//! nothing else is in it. Anything else (`server.log`, `backup.sst`, `notes.txt`, a
//! subdirectory, RocksDB's `IDENTITY`) is left alone. `CURRENT` and the MANIFEST it names go
//! last, so a crash in the middle leaves a directory that still reads back as a database, which
//! a second call finishes destroying.

use std::path::Path;

use super::open_checks::{inspect, list_own_dir, Found};
use crate::error::{Error, Result};
use crate::filename::{is_database_file, lock_path, parse_file_name, FileType};
use crate::fs::Fs;
use crate::options::Options;
use crate::version::VersionSet;

/// The most levels a database may have (`Options::validate`): a MANIFEST is read back with
/// this many, so a database made with more levels than `options` says is still recognized.
const MAX_LEVELS: usize = 64;

/// The table layer's scratch directory inside a database, and the prefix of its files.
const TABLE_TMP_DIR: &str = "tmp";
const TABLE_TMP_PREFIX: &str = "talus-index-";

/// Destroys the database in `path` (see the module documentation): locks it, deletes its files
/// and nothing else, and removes the directory if that leaves it empty. Goes through
/// `options.fs`. If a deletion fails the others are still tried, but for `CURRENT` and its
/// MANIFEST, which are kept so that the directory stays a database a second call can finish;
/// the first error is returned.
///
/// ```
/// use talus::{destroy_db, Db, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("db");
/// let opts = Options { create_if_missing: true, ..Default::default() };
/// Db::open(&path, opts.clone()).unwrap().put(b"k", b"v").unwrap();
/// std::fs::write(path.join("notes.txt"), b"mine").unwrap();
/// destroy_db(&path, &opts).unwrap();
/// let left: Vec<_> = std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name()).collect();
/// assert_eq!(left, ["notes.txt"]);
/// ```
pub fn destroy_db(path: impl AsRef<Path>, options: &Options) -> Result<()> {
    let path = path.as_ref();
    let fs = options.fs.as_ref();
    let Some(names) = list_own_dir(fs, path)? else { return Ok(()) };
    let found = inspect(fs, path).and_then(|found| match found {
        Found::Database => VersionSet::load(path, options.fs.clone(), MAX_LEVELS).map(|_| found),
        _ => Ok(found),
    });
    match found {
        Ok(Found::Database) => {}
        Err(_) if destroy_left_only_manifests(options, path, &names) => {}
        // Only LOG, LOG.old or LOCK, WALs an interrupted creation left empty, or nothing of
        // ours: no database, maybe another program's files. Nothing to destroy or lock.
        Ok(Found::Nothing | Found::EmptyDir { .. }) => return Ok(()),
        Err(why) => return Err(not_a_database(path, &names, &why)),
    }
    let lock = fs.lock(&lock_path(path))?;
    let mut names: Vec<String> = fs
        .list_dir(path)?
        .into_iter()
        .filter(|n| matches!(parse_file_name(n), Some(t) if t != FileType::Lock))
        .collect();
    // The data and other files first, then the MANIFESTs CURRENT does not name, then CURRENT,
    // then its MANIFEST: until the last two unlinks the directory still reads back as a
    // database, so a crash (or a failed deletion) in the middle leaves one that a second
    // destroy_db finishes. (Between those two a crash leaves a lone MANIFEST, which is refused
    // like any database without CURRENT.)
    let live_manifest = crate::version::current::current_manifest(fs, path).ok();
    names.sort_by_key(|n| {
        let rank = match parse_file_name(n) {
            Some(FileType::Manifest(m)) if Some(m) == live_manifest => 3,
            Some(FileType::Current) => 2,
            Some(FileType::Manifest(_)) => 1,
            _ => 0,
        };
        (rank, n.clone())
    });
    let mut first_error = None;
    for name in names {
        let last_two = matches!(parse_file_name(&name), Some(FileType::Current))
            || matches!(parse_file_name(&name), Some(FileType::Manifest(m)) if Some(m) == live_manifest);
        if last_two && first_error.is_some() {
            // Keep the database readable, so that a second call can finish.
            break;
        }
        if let Err(e) = fs.remove_file(&path.join(&name)) {
            first_error.get_or_insert(e);
        }
    }
    if let Err(e) = remove_table_tmp(fs, path) {
        first_error.get_or_insert(e);
    }
    if let Err(e) = fs.remove_file(&lock_path(path)) {
        first_error.get_or_insert(e);
    }
    drop(lock);
    if let Some(e) = first_error {
        return Err(e);
    }
    if fs.list_dir(path)?.is_empty() {
        fs.remove_dir(path)?;
    }
    Ok(())
}

/// The refusal of a directory with engine-named files that is no database (see the module doc).
fn not_a_database(path: &Path, names: &[String], why: &Error) -> Error {
    let mut ours: Vec<&String> = names.iter().filter(|n| parse_file_name(n).is_some()).collect();
    ours.sort();
    let shown: Vec<String> = ours.iter().take(8).map(|n| n.to_string()).collect();
    let more = ours.len().saturating_sub(shown.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let dir = path.display();
    Error::InvalidArgument(format!(
        "{dir} holds files named like a database's ({}{more}) but is not a database Talus can \
         read ({why}); nothing was deleted. If it is a damaged database, `talus ldb` and \
         `talus sst_dump` may still read parts of it; if the files are yours to discard, remove \
         them by hand (for example `rm {dir}/{}`)",
        shown.join(", "),
        shown.first().map_or("", |s| s.as_str()),
    ))
}

/// Removes the table layer's scratch directory if it holds nothing but that layer's files.
fn remove_table_tmp(fs: &dyn Fs, path: &Path) -> Result<()> {
    let tmp = path.join(TABLE_TMP_DIR);
    let Ok(names) = fs.list_dir(&tmp) else { return Ok(()) };
    if !names.iter().all(|n| n.starts_with(TABLE_TMP_PREFIX)) {
        return Ok(());
    }
    for n in &names {
        fs.remove_file(&tmp.join(n))?;
    }
    fs.remove_dir(&tmp)
}

/// True if the only database files in `path` are MANIFESTs that read back whole as Talus's and
/// there is no `CURRENT`: what a destroy cut short between its last two deletions leaves. They
/// hold no data (no table or WAL is left for them to name), so finishing the destroy loses
/// nothing.
fn destroy_left_only_manifests(options: &Options, path: &Path, names: &[String]) -> bool {
    let mut manifests = names.iter().filter(|n| is_database_file(n)).map(|n| parse_file_name(n));
    manifests.clone().next().is_some()
        && manifests.all(|t| match t {
            Some(FileType::Manifest(n)) => {
                VersionSet::load_manifest(path, options.fs.clone(), MAX_LEVELS, n).is_ok()
            }
            _ => false,
        })
}
