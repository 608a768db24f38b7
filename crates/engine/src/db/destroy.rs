//! [`destroy_db`]: RocksDB's `DestroyDB` for Talus databases. The only way the tools remove a
//! database.
//!
//! Contract: it takes the database's LOCK first (so a database open in this or another process
//! is refused with [`Error::Locked`] and untouched), then deletes only the files whose names
//! parse as this engine's ([`crate::filename::parse_file_name`]: `NNNNNN.log`, `NNNNNN.sst`,
//! `MANIFEST-NNNNNN`, `CURRENT`, `LOG`, `LOG.old*`, `OPTIONS-NNNNNN`, `NNNNNN.log.corrupt`,
//! `*.dbtmp` of those; `CURRENT` first), then `LOCK` (unlinked while still held, so no other
//! process can lock the old file and be fooled), and last the directory itself if nothing else
//! is in it. Anything else (`server.log`, `backup.sst`, `notes.txt`, a subdirectory, RocksDB's
//! `IDENTITY`) is left alone.
//!
//! A directory with none of the database's own files (at most a `LOG` or `LOCK`, which may be
//! another program's) holds no database: nothing is deleted. A directory holding a RocksDB
//! database (by its `IDENTITY` or OPTIONS file, or a MANIFEST with RocksDB's fields) is refused
//! whole (`InvalidArgument`), as is a path that is a file; a missing path is `Ok` (nothing to
//! do). A damaged Talus database is destroyed like any other. MANIFESTs go last, so a crash in
//! the middle leaves a directory that is still recognized as a database to finish destroying.

use std::path::Path;

use super::open_checks::list_own_dir;
use crate::error::{Error, Result};
use crate::filename::{is_database_file, lock_path, parse_file_name, FileType};
use crate::options::Options;
use crate::version::current::foreign_manifest_writer;

/// Destroys the database in `path` (see the module documentation): locks it, deletes its files
/// and nothing else, and removes the directory if that leaves it empty. Goes through
/// `options.fs`. If a deletion fails the others are still tried; the first error is returned.
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
    if !names.iter().any(|n| is_database_file(n)) {
        // Only LOG, LOG.old or LOCK (or nothing of ours): no database, maybe another program's
        // files. Nothing to destroy, and nothing to lock.
        return Ok(());
    }
    if let Some(who) = foreign_manifest_writer(fs, path) {
        return Err(Error::InvalidArgument(format!(
            "{}: its MANIFEST was written by {who}, not by Talus; not destroying it",
            path.display()
        )));
    }
    let lock = fs.lock(&lock_path(path))?;
    let mut names: Vec<String> = fs
        .list_dir(path)?
        .into_iter()
        .filter(|n| matches!(parse_file_name(n), Some(t) if t != FileType::Lock))
        .collect();
    // CURRENT first: from then on this is no database, even if a later deletion fails. The
    // MANIFESTs last: until the data files are gone, a crash leaves evidence that this is a
    // database whose destruction can be finished.
    names.sort_by_key(|n| {
        let rank = match parse_file_name(n) {
            Some(FileType::Current) => 0,
            Some(FileType::Manifest(_)) => 2,
            _ => 1,
        };
        (rank, n.clone())
    });
    let mut first_error = None;
    for name in names {
        if let Err(e) = fs.remove_file(&path.join(&name)) {
            first_error.get_or_insert(e);
        }
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
