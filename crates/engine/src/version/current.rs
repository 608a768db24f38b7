//! CURRENT and the switch to a new MANIFEST: writing a MANIFEST and pointing CURRENT at it,
//! reading which MANIFEST CURRENT names, and telling another engine's MANIFEST from ours.
//!
//! Who calls: [`super::set::VersionSet`] (under the database's version mutex) for every
//! MANIFEST roll and every load; [`crate::destroy_db`] and the open's checks, read-only, to
//! decide what a directory holds. No locks of its own.
//!
//! The one rule about failures: a switch reports whether CURRENT may name the new MANIFEST
//! (`RollFailure::switched`). Until the rename, a failure deletes the new MANIFEST and the
//! temp file again (the directory is as it was); from the rename on, nothing is deleted and the
//! edits in the new MANIFEST must be treated as possibly committed (a directory sync that fails
//! after the rename leaves CURRENT naming the new file until a power loss, perhaps after it).

use std::path::Path;

use super::VersionEdit;
use crate::error::{Error, Result};
use crate::filename::{current_path, manifest_name, manifest_path, parse_file_name, FileType};
use crate::fs::{read_all, Fs};
use crate::key::EscapedBytes;
use crate::kill_point::kill_point;
use crate::wal::{LogReader, LogWriter, ReadOutcome};

/// A failed [`write_new_manifest`]: the error, and whether CURRENT may name the new MANIFEST.
#[derive(Debug)]
pub(super) struct RollFailure {
    /// What failed.
    pub error: Error,
    /// True if the failure came at or after the rename of CURRENT (or the rename reported an
    /// error but CURRENT reads back naming the new MANIFEST): the new MANIFEST's records may
    /// be the database's state, now or after a crash, and nothing was deleted.
    pub switched: bool,
}

impl From<RollFailure> for Error {
    fn from(f: RollFailure) -> Error {
        f.error
    }
}

/// Writes MANIFEST-`number` in `dir` holding `records`, syncs it, and points CURRENT at it
/// (write `CURRENT.dbtmp`, sync, rename over CURRENT, sync the directory). Returns the writer
/// for further edits. On failure see [`RollFailure`] and the module doc.
pub(super) fn write_new_manifest(
    fs: &dyn Fs,
    dir: &Path,
    number: u64,
    records: &[&[u8]],
) -> std::result::Result<LogWriter, RollFailure> {
    let path = manifest_path(dir, number);
    let tmp = dir.join("CURRENT.dbtmp");
    let undo = |error: Error| {
        let _ = fs.remove_file(&path);
        if fs.exists(&tmp) {
            let _ = fs.remove_file(&tmp);
        }
        RollFailure { error, switched: false }
    };
    let file = fs.create(&path).map_err(|error| RollFailure { error, switched: false })?;
    let mut writer = LogWriter::new(file);
    for r in records {
        writer.add_record(r).map_err(undo)?;
    }
    writer.sync().map_err(undo)?;
    kill_point!("manifest.roll.manifest_written");
    let current = format!("{}\n", manifest_name(number));
    let mut f = fs.create(&tmp).map_err(undo)?;
    f.append(current.as_bytes()).and_then(|()| f.sync()).map_err(undo)?;
    drop(f);
    kill_point!("manifest.roll.temp_written");
    if let Err(error) = fs.rename(&tmp, &current_path(dir)) {
        // A rename that reports an error may still have happened (a network file system, or
        // an error after the fact): believe CURRENT, not the error.
        if current_names(fs, dir, number) {
            return Err(RollFailure { error, switched: true });
        }
        return Err(undo(error));
    }
    kill_point!("manifest.roll.renamed");
    fs.sync_dir(dir).map_err(|error| RollFailure { error, switched: true })?;
    Ok(writer)
}

/// True if `dir/CURRENT` reads back naming MANIFEST `number`.
pub(crate) fn current_names(fs: &dyn Fs, dir: &Path, number: u64) -> bool {
    read_all(fs, &current_path(dir))
        .is_ok_and(|c| c == format!("{}\n", manifest_name(number)).as_bytes())
}

/// Who wrote the MANIFEST that `dir/CURRENT` names, if another engine did: the writer named by
/// the first intact record that does not decode as a Talus edit but holds RocksDB's or
/// LevelDB's fields. `None` if the MANIFEST is Talus's, missing, unreadable or merely damaged.
/// Reads only; for [`crate::destroy_db`], which must not delete another engine's database.
pub fn foreign_manifest_writer(fs: &dyn Fs, dir: &Path) -> Option<&'static str> {
    let number = read_current(fs, dir).ok()?;
    let file = fs.open_sequential(&manifest_path(dir, number)).ok()?;
    let mut reader = LogReader::new(file, String::new());
    loop {
        match reader.read_record().ok()? {
            ReadOutcome::Record(payload, offset) => {
                if VersionEdit::decode(&payload, "", offset).is_err() {
                    return foreign_writer(&payload);
                }
            }
            ReadOutcome::Corrupt { .. } | ReadOutcome::Predecessor(..) => {}
            ReadOutcome::Eof => return None,
        }
    }
}

/// If `record` (an intact MANIFEST record that did not decode as a Talus edit) starts with
/// fields Talus never writes but RocksDB or LevelDB do, who wrote it. Tags are LevelDB's and
/// RocksDB's `VersionEdit` tags: 5 compact pointer, 9 previous log number, 10 min log number
/// to keep, 100-103 new-file variants, 200-203 column families, 300 atomic group, 400-401 blob
/// files, and the forward-compatible ones at or above 1<<13 (DB id, WAL additions, ...).
pub(super) fn foreign_writer(record: &[u8]) -> Option<&'static str> {
    let mut d = crate::coding::Decoder::new(record);
    while !d.is_empty() {
        let tag = d.varint32()?;
        match tag {
            1 => {
                d.length_prefixed()?;
            }
            2..=4 => {
                d.varint64()?;
            }
            6 => {
                d.varint32()?;
                d.varint64()?;
            }
            5 | 9 | 10 | 100..=103 | 200..=203 | 300 | 400 | 401 => return Some("RocksDB"),
            t if t >= 1 << 13 => return Some("RocksDB"),
            _ => return None,
        }
    }
    None
}

/// The number of the MANIFEST that `dir/CURRENT` names (`NotFound` without CURRENT,
/// `Corruption` if it does not hold a MANIFEST name). Reads only.
pub fn current_manifest(fs: &dyn Fs, dir: &Path) -> Result<u64> {
    read_current(fs, dir)
}

/// Reads CURRENT and returns the manifest number it names.
pub(super) fn read_current(fs: &dyn Fs, dir: &Path) -> Result<u64> {
    let path = current_path(dir);
    if !fs.exists(&path) {
        return Err(Error::NotFound(format!(
            "{}: no CURRENT file, so this is not a database (or its creation never finished)",
            dir.display()
        )));
    }
    let content = read_all(fs, &path)?;
    let name = std::str::from_utf8(&content).ok().and_then(|s| s.strip_suffix('\n'));
    match name.and_then(parse_file_name) {
        Some(FileType::Manifest(n)) => Ok(n),
        _ => Err(Error::corruption(
            path.display(),
            0,
            format!(
                "CURRENT should hold \"MANIFEST-NNNNNN\\n\", found {:?}",
                EscapedBytes(content.get(..64).unwrap_or(&content))
            ),
        )),
    }
}
