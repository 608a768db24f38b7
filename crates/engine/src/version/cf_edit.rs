//! Column family fields of a MANIFEST edit (`docs/format/manifest.md`, format version 2) and
//! [`CfTracker`], which follows the families through a MANIFEST's edits.
//!
//! The tags are RocksDB's (`db/version_edit.h`): 200 (`kColumnFamily`, varint32: the family the
//! edit applies to; absent means `default`, id 0), 201 (`kColumnFamilyAdd`, varstring name: the
//! edit creates that family), 202 (`kColumnFamilyDrop`, no data: the edit drops it) and 203
//! (`kMaxColumnFamily`, varint32: the largest id ever given, so a dropped family's id is never
//! reused). Written by the snapshot edit of a new MANIFEST when a family was ever created; the
//! engine of this build creates none, so it reads them (to list families, to refuse an open of
//! a database with families, and to skip a dropped family's edits) and writes only tag 203.
//!
//! Owns no state of the database; `VersionSet::load_manifest` and `list_column_families` call
//! it once per edit while replaying a MANIFEST.

use std::collections::BTreeMap;
use std::path::Path;

use super::current::read_current;
use super::VersionEdit;
use crate::coding::{put_length_prefixed, put_varint32, Decoder};
use crate::column_family::{DEFAULT_COLUMN_FAMILY_ID, DEFAULT_COLUMN_FAMILY_NAME};
use crate::error::{Error, Result};
use crate::filename::manifest_path;
use crate::fs::Fs;
use crate::wal::{LogReader, ReadOutcome};

/// Tag: the family the edit applies to (varint32).
pub const TAG_COLUMN_FAMILY: u32 = 200;
/// Tag: the edit creates its family with this name (varstring).
pub const TAG_COLUMN_FAMILY_ADD: u32 = 201;
/// Tag: the edit drops its family (no data).
pub const TAG_COLUMN_FAMILY_DROP: u32 = 202;
/// Tag: the largest family id ever given (varint32).
pub const TAG_MAX_COLUMN_FAMILY: u32 = 203;

/// The column family fields of one edit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CfEdit {
    /// The family the edit's files and log number belong to (0: `default`).
    pub family: u32,
    /// The edit creates `family` with this name.
    pub add: Option<String>,
    /// The edit drops `family`.
    pub drop: bool,
    /// The largest family id ever given.
    pub max_column_family: Option<u32>,
}

impl CfEdit {
    /// True for an edit of the `default` family that neither adds nor drops one.
    pub fn is_default_only(&self) -> bool {
        self.family == DEFAULT_COLUMN_FAMILY_ID && self.add.is_none() && !self.drop
    }

    /// Appends the fields that are set (nothing for a plain `default` edit).
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if self.family != DEFAULT_COLUMN_FAMILY_ID {
            put_varint32(dst, TAG_COLUMN_FAMILY);
            put_varint32(dst, self.family);
        }
        if let Some(name) = &self.add {
            put_varint32(dst, TAG_COLUMN_FAMILY_ADD);
            put_length_prefixed(dst, name.as_bytes());
        }
        if self.drop {
            put_varint32(dst, TAG_COLUMN_FAMILY_DROP);
        }
        if let Some(max) = self.max_column_family {
            put_varint32(dst, TAG_MAX_COLUMN_FAMILY);
            put_varint32(dst, max);
        }
    }

    /// Decodes the data of `tag` (one of the four above) into `self`; `Err` says what is wrong.
    pub fn decode_field(&mut self, tag: u32, d: &mut Decoder<'_>) -> std::result::Result<(), &str> {
        match tag {
            TAG_COLUMN_FAMILY => self.family = d.varint32().ok_or("truncated column family")?,
            TAG_COLUMN_FAMILY_ADD => {
                let name = d.length_prefixed().ok_or("truncated column family name")?;
                let name = std::str::from_utf8(name).map_err(|_| "column family name not UTF-8")?;
                self.add = Some(name.to_string());
            }
            TAG_COLUMN_FAMILY_DROP => self.drop = true,
            _ => {
                let max = d.varint32().ok_or("truncated max column family")?;
                self.max_column_family = Some(max);
            }
        }
        Ok(())
    }
}

/// True if `tag` is one of this module's.
pub fn is_cf_tag(tag: u32) -> bool {
    (TAG_COLUMN_FAMILY..=TAG_MAX_COLUMN_FAMILY).contains(&tag)
}

/// The families a MANIFEST's edits create and drop, followed edit by edit.
#[derive(Debug, Default)]
pub struct CfTracker {
    /// Live families other than `default`: id to name.
    live: BTreeMap<u32, String>,
    /// The largest id given (0: none).
    max: u32,
}

impl CfTracker {
    /// Follows `edit`: `Ok(true)` if its files belong to `default` (apply them), `Ok(false)` if
    /// they belong to another family (a dropped one's edits are skipped), `Err` saying why the
    /// edit does not apply.
    pub fn observe(&mut self, edit: &VersionEdit) -> std::result::Result<bool, String> {
        let cf = &edit.cf;
        if let Some(max) = cf.max_column_family {
            self.max = self.max.max(max);
        }
        let id = cf.family;
        if let Some(name) = &cf.add {
            if id == DEFAULT_COLUMN_FAMILY_ID || name == DEFAULT_COLUMN_FAMILY_NAME {
                return Err(format!("column family {name:?} added with id {id}"));
            }
            if self.live.contains_key(&id) || self.live.values().any(|n| n == name) {
                return Err(format!("column family {name:?} (id {id}) added twice"));
            }
            self.live.insert(id, name.clone());
            self.max = self.max.max(id);
        }
        if cf.drop {
            if id == DEFAULT_COLUMN_FAMILY_ID {
                return Err("the default column family dropped".into());
            }
            if self.live.remove(&id).is_none() {
                return Err(format!("column family id {id} dropped but not live"));
            }
        }
        if id != DEFAULT_COLUMN_FAMILY_ID && id > self.max {
            return Err(format!("edit of column family id {id}, which was never added"));
        }
        Ok(id == DEFAULT_COLUMN_FAMILY_ID)
    }

    /// The largest family id ever given (0: none), for the next MANIFEST's snapshot.
    pub fn max_column_family(&self) -> u32 {
        self.max
    }

    /// Every live family's name, `default` first, then by id.
    pub fn names(&self) -> Vec<String> {
        let mut v = vec![DEFAULT_COLUMN_FAMILY_NAME.to_string()];
        v.extend(self.live.values().cloned());
        v
    }
}

/// The names of the live column families of the database in `dir`, `default` first (RocksDB's
/// `DB::ListColumnFamilies`): reads CURRENT and the MANIFEST it names, writes nothing.
pub fn list_column_families(fs: &dyn Fs, dir: &Path) -> Result<Vec<String>> {
    let number = read_current(fs, dir)?;
    let path = manifest_path(dir, number);
    let file_name = path.display().to_string();
    let mut reader = LogReader::new(fs.open_sequential(&path)?, file_name.clone());
    let mut tracker = CfTracker::default();
    loop {
        match reader.read_record()? {
            ReadOutcome::Record(payload, offset) => {
                let edit = VersionEdit::decode(&payload, &file_name, offset)?;
                tracker.observe(&edit).map_err(|d| Error::corruption(&file_name, offset, d))?;
            }
            ReadOutcome::Corrupt { at_tail: true, .. } | ReadOutcome::Eof => break,
            ReadOutcome::Corrupt { offset, reason, .. } => {
                return Err(Error::corruption(&file_name, offset, reason));
            }
            ReadOutcome::Predecessor(_, offset) => {
                return Err(Error::corruption(&file_name, offset, "a WAL record in a MANIFEST"));
            }
        }
    }
    Ok(tracker.names())
}

#[cfg(test)]
#[path = "cf_edit_tests.rs"]
mod tests;
