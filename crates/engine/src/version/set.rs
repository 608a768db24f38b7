//! [`VersionSet`]: each column family's current [`Version`] and log number
//! ([`FamilyVersion`]), the counters (next file number, last sequence), and the MANIFEST that
//! makes changes to them durable.
//!
//! Not internally synchronized: the database holds its version mutex around every call. Calls
//! that write the MANIFEST (`create`, `recover`, `log_and_apply*`) do IO under that mutex; they
//! are rare (one per flush or compaction) and short (one record and one fsync).
//!
//! Guarantees:
//! - [`VersionSet::load`] only reads: it replays the MANIFEST named by CURRENT into memory and
//!   opens nothing for writing, so a failed (or read-only) open leaves the directory as it was.
//!   The first `log_and_apply*` after it writes a new MANIFEST (a snapshot of the state plus the
//!   edit) and switches CURRENT to it.
//! - `log_and_apply` installs a version only after its edit is synced in the MANIFEST named by
//!   CURRENT. On any error the in-memory state is unchanged (a file number may be consumed), and
//!   the next call first writes a fresh MANIFEST holding a snapshot of the state and switches
//!   CURRENT to it, so a half-written record in the old MANIFEST is never appended to. A new
//!   MANIFEST that fails before CURRENT names it is deleted again (no litter, no used space).
//! - A failed edit may still have committed: an append whose sync failed is in the page cache
//!   (a process crash keeps it), and a roll whose directory sync failed after the rename left
//!   CURRENT naming the new MANIFEST. The files such an edit adds are *in doubt*
//!   ([`VersionSet::in_doubt`]): the database must not delete them (they may be the only copy
//!   of flushed data the next open finds in the MANIFEST), until a later roll succeeds
//!   durably, which makes CURRENT name a MANIFEST that provably holds only the in-memory state.
//! - `load` accepts a torn final record (a crash while appending) and nothing else: any other
//!   bad record, an undecodable edit, or an edit that does not apply is `Error::Corruption`
//!   naming the MANIFEST and the record's offset; a record that is intact but holds another
//!   engine's tags (RocksDB's, LevelDB's) is `InvalidArgument` saying so.
//! - Nothing here deletes files but its own failed new MANIFEST; the database removes obsolete
//!   ones using [`VersionSet::live_files`] (every family's), [`VersionSet::log_number`] (the
//!   minimum over live families) and [`VersionSet::manifest_file_number`].
//! - Column families: an edit applies to the family `edit.cf.family` names (tag 200; absent:
//!   `default`); an edit with `cf.add` creates that family (empty), one with `cf.drop` removes
//!   it (its files stop being live once no reader holds its versions). A new MANIFEST's
//!   snapshot holds one edit per live family, `default` first (`family.rs`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use super::builder::Builder;
use super::cf_edit::CfTracker;
use super::current::{foreign_writer, read_current, write_new_manifest};
pub(crate) use super::family::FamilyVersion;
use super::{Version, VersionEdit, MAX_NUM_LEVELS};
use crate::column_family::{DEFAULT_COLUMN_FAMILY_ID, DEFAULT_COLUMN_FAMILY_NAME};
use crate::error::{Error, Result};
use crate::filename::{current_path, manifest_path};
use crate::fs::Fs;
use crate::key::{SequenceNumber, MAX_SEQUENCE};
use crate::wal::{LogReader, LogWriter, ReadOutcome};

/// The only supported comparator; its name is LevelDB's, for tool compatibility.
pub const BYTEWISE_COMPARATOR: &str = "leveldb.BytewiseComparator";

/// The tree's state and its MANIFEST.
pub struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    num_levels: usize,
    /// The live column families by id; `default` (0) is always there.
    families: BTreeMap<u32, FamilyVersion>,
    next_file_number: u64,
    last_sequence: SequenceNumber,
    manifest_file_number: u64,
    /// The open MANIFEST; `None` after a failed write (roll to a new file on the next edit).
    manifest: Option<LogWriter>,
    /// Files added by failed edits that may have committed (see the module doc).
    in_doubt: HashSet<u64>,
    /// Every version installed; the ones still referenced somewhere pin their files.
    versions: Vec<Weak<Version>>,
    /// The largest column family id ever given (0: none), kept across MANIFEST rolls.
    max_column_family: u32,
}

impl VersionSet {
    /// Creates the MANIFEST and CURRENT of a new, empty database in `dir`.
    ///
    /// Refuses (`InvalidArgument`) if `dir` already has a CURRENT file.
    pub fn create(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> Result<VersionSet> {
        if fs.exists(&current_path(dir)) {
            return Err(Error::InvalidArgument(format!(
                "{}: a database already exists here (CURRENT is present); open it instead",
                dir.display()
            )));
        }
        let mut vs = VersionSet::empty(dir, fs, num_levels);
        vs.next_file_number = 2;
        vs.manifest_file_number = 1;
        let records = vs.snapshot_records();
        vs.manifest = Some(write_new_manifest(&*vs.fs, dir, 1, &as_slices(&records))?);
        Ok(vs)
    }

    /// Recovers the state named by `CURRENT`, then starts a new MANIFEST holding a snapshot of
    /// it (CURRENT is switched atomically). [`VersionSet::load`] followed by a MANIFEST roll.
    pub fn recover(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> Result<VersionSet> {
        let mut vs = VersionSet::load(dir, fs, num_levels)?;
        let number = vs.new_file_number();
        let records = vs.snapshot_records();
        vs.manifest = Some(write_new_manifest(&*vs.fs, dir, number, &as_slices(&records))?);
        vs.manifest_file_number = number;
        Ok(vs)
    }

    /// Reads the state named by `CURRENT` into memory, writing nothing. The MANIFEST is not
    /// opened for appending: the first [`VersionSet::log_and_apply`] writes a new one.
    pub fn load(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> Result<VersionSet> {
        let number = read_current(&*fs, dir)?;
        VersionSet::load_manifest(dir, fs, num_levels, number)
    }

    /// [`VersionSet::load`] of MANIFEST `number`, whatever CURRENT says (or without one).
    pub fn load_manifest(
        dir: &Path,
        fs: Arc<dyn Fs>,
        num_levels: usize,
        number: u64,
    ) -> Result<VersionSet> {
        let path = manifest_path(dir, number);
        let file_name = path.display().to_string();
        if !fs.exists(&path) {
            return Err(Error::corruption(
                &file_name,
                0,
                "CURRENT names this MANIFEST but it does not exist",
            ));
        }
        let mut reader = LogReader::new(fs.open_sequential(&path)?, file_name.clone());
        // Per live family: its name, builder and log number.
        let mut builders = BTreeMap::new();
        // Each family may have its own level count, which the MANIFEST does not record (nor
        // does RocksDB's): read with the most, then keep `num_levels` or as many as hold files.
        let empty = Version::new(MAX_NUM_LEVELS);
        let new_family =
            |name: &str| (name.to_string(), Builder::new(&empty, MAX_NUM_LEVELS), None);
        builders.insert(DEFAULT_COLUMN_FAMILY_ID, new_family(DEFAULT_COLUMN_FAMILY_NAME));
        let mut next_file_number = None;
        let mut last_sequence = None;
        let mut edits = 0usize;
        let mut families = CfTracker::default();
        loop {
            match reader.read_record()? {
                ReadOutcome::Record(payload, offset) => {
                    let edit = VersionEdit::decode(&payload, &file_name, offset).map_err(|e| {
                        match foreign_writer(&payload) {
                            Some(who) => Error::InvalidArgument(format!(
                                "{file_name}: this MANIFEST was written by {who}, not by Talus \
                                 (its record at offset {offset} holds {who}'s fields); Talus \
                                 cannot open the database and has changed nothing"
                            )),
                            None => e,
                        }
                    })?;
                    if let Some(c) = &edit.comparator {
                        if c != BYTEWISE_COMPARATOR {
                            return Err(Error::InvalidArgument(format!(
                                "{file_name}: the database uses comparator {c:?}; only \
                                 {BYTEWISE_COMPARATOR} is supported"
                            )));
                        }
                    }
                    let corrupt = |d: String| Error::corruption(&file_name, offset, d);
                    families.observe(&edit).map_err(corrupt)?;
                    let id = edit.cf.family;
                    if let Some(name) = &edit.cf.add {
                        builders.insert(id, new_family(name));
                    }
                    if edit.cf.drop {
                        builders.remove(&id);
                    } else if let Some((_, builder, log_number)) = builders.get_mut(&id) {
                        // Absent: an edit of a family dropped earlier, skipped.
                        builder.apply(&edit).map_err(corrupt)?;
                        *log_number = edit.log_number.or(*log_number);
                    }
                    next_file_number = edit.next_file_number.or(next_file_number);
                    last_sequence = edit.last_sequence.or(last_sequence);
                    edits += 1;
                }
                // A torn last record: the edit was never acknowledged, so dropping it is right.
                ReadOutcome::Corrupt { at_tail: true, .. } => break,
                ReadOutcome::Corrupt { offset, reason, .. } => {
                    return Err(Error::corruption(&file_name, offset, reason));
                }
                ReadOutcome::Predecessor(_, offset) => {
                    return Err(Error::corruption(
                        &file_name,
                        offset,
                        "a WAL's predecessor record in a MANIFEST",
                    ));
                }
                ReadOutcome::Eof => break,
            }
        }
        let missing = |what: &str| Error::corruption(&file_name, 0, format!("no {what} recorded"));
        if edits == 0 {
            return Err(missing("version edit"));
        }
        let mut vs = VersionSet::empty(dir, fs, num_levels);
        vs.next_file_number = next_file_number.ok_or_else(|| missing("next file number"))?;
        vs.last_sequence = last_sequence.ok_or_else(|| missing("last sequence number"))?;
        if vs.last_sequence > MAX_SEQUENCE {
            return Err(Error::corruption(
                &file_name,
                0,
                format!("last sequence {} exceeds the maximum {MAX_SEQUENCE}", vs.last_sequence),
            ));
        }
        vs.max_column_family = families.max_column_family();
        vs.manifest_file_number = number;
        vs.mark_file_number_used(number);
        vs.families.clear();
        for (id, (name, builder, log_number)) in builders {
            let log_number = log_number.unwrap_or(0);
            vs.mark_file_number_used(log_number);
            vs.mark_file_number_used(builder.max_file_number());
            let mut family = FamilyVersion::new(name, num_levels);
            family.log_number = log_number;
            vs.families.insert(id, family);
            let read = builder.finish();
            let used = read.files.iter().rposition(|l| !l.is_empty()).map_or(0, |d| d + 1);
            // Never `Err`: every level holding a file is kept.
            let version = match read.with_levels(num_levels.max(used)) {
                Ok(v) => v,
                Err(_) => read,
            };
            vs.install(id, version);
        }
        Ok(vs)
    }

    /// The state of a database that does not exist yet, in memory only (file numbers start at
    /// 1). The first [`VersionSet::log_and_apply`] writes its MANIFEST and CURRENT.
    pub fn new_empty(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> VersionSet {
        let mut vs = VersionSet::empty(dir, fs, num_levels);
        vs.next_file_number = 1;
        vs
    }

    /// The current version of the `default` family.
    pub fn current(&self) -> Arc<Version> {
        Arc::clone(&self.default_family().current)
    }

    /// The current version of family `id`, if it is live.
    pub fn current_of(&self, id: u32) -> Option<Arc<Version>> {
        self.families.get(&id).map(|f| Arc::clone(&f.current))
    }

    /// The live families by id, `default` (0) first.
    pub(crate) fn families(&self) -> &BTreeMap<u32, FamilyVersion> {
        &self.families
    }

    /// The database's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn default_family(&self) -> &FamilyVersion {
        match self.families.get(&DEFAULT_COLUMN_FAMILY_ID) {
            Some(f) => f,
            // Every constructor inserts it and no edit removes it (`apply_edit` refuses).
            None => unreachable!("the default column family is always live"),
        }
    }
    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }
    /// Ensures future file numbers are above `n`.
    pub fn mark_file_number_used(&mut self, n: u64) {
        if self.next_file_number <= n {
            self.next_file_number = n + 1;
        }
    }
    /// The next file number that `new_file_number` will return.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number
    }
    /// The last sequence number recorded.
    pub fn last_sequence(&self) -> SequenceNumber {
        self.last_sequence
    }
    /// Records a new last sequence number (in memory; persisted with the next edit).
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) {
        debug_assert!(seq >= self.last_sequence, "last sequence must not go backwards");
        self.last_sequence = seq;
    }
    /// WALs numbered below this are obsolete: the minimum over live families' log numbers.
    pub fn log_number(&self) -> u64 {
        self.families.values().map(|f| f.log_number).min().unwrap_or(0)
    }

    /// Family `id`'s log number (WALs below it hold none of its unflushed writes), if it is
    /// live.
    pub fn log_number_of(&self, id: u32) -> Option<u64> {
        self.families.get(&id).map(|f| f.log_number)
    }
    /// The live MANIFEST's file number.
    pub fn manifest_file_number(&self) -> u64 {
        self.manifest_file_number
    }
    /// Bytes in the live MANIFEST (0 while it is broken), for rolling it when it grows large.
    pub fn manifest_file_size(&self) -> u64 {
        self.manifest.as_ref().map_or(0, LogWriter::file_size)
    }

    /// The largest column family id ever given (0: none; `cf_edit.rs`).
    pub fn max_column_family(&self) -> u32 {
        self.max_column_family
    }

    /// Number of levels.
    pub fn num_levels(&self) -> usize {
        self.num_levels
    }

    /// Fills in the counters, appends `edit` to the MANIFEST, syncs it, and installs the new
    /// version. On error nothing changes (the MANIFEST is rolled to a new file on the next
    /// call).
    ///
    /// An edit that does not apply (deletes a file that is not there, adds a live or never
    /// allocated file number, names a level that does not exist, moves the log number backwards
    /// or past the next file number) is `InvalidArgument` and writes nothing.
    pub fn log_and_apply(&mut self, edit: VersionEdit) -> Result<()> {
        self.apply_edit(edit, None)
    }

    /// [`VersionSet::log_and_apply`] into a new MANIFEST numbered `manifest_number` (a number
    /// the caller allocated with [`VersionSet::new_file_number`]), which holds a snapshot of the
    /// state before `edit`, then `edit`; CURRENT is switched to it. The commit step of an open.
    pub fn log_and_apply_to_new_manifest(
        &mut self,
        edit: VersionEdit,
        manifest_number: u64,
    ) -> Result<()> {
        self.log_and_apply_group_to_new_manifest(vec![edit], manifest_number)
    }

    /// `InvalidArgument` (writing nothing) for a family edit that does not apply: one of a
    /// family that is not live, an add of a live id or name or of `default`, a drop of
    /// `default`, a drop that also changes files.
    fn check_family_edit(&self, edit: &VersionEdit) -> Result<()> {
        let cf = &edit.cf;
        let id = cf.family;
        let refuse = |d: String| Err(Error::InvalidArgument(format!("version edit rejected: {d}")));
        if let Some(name) = &cf.add {
            if id == DEFAULT_COLUMN_FAMILY_ID || name == DEFAULT_COLUMN_FAMILY_NAME {
                return refuse(format!("column family {name:?} added with id {id}"));
            }
            if id <= self.max_column_family || self.families.values().any(|f| &f.name == name) {
                return refuse(format!("column family {name:?} (id {id}) exists or existed"));
            }
            if cf.drop {
                return refuse(format!("column family {name:?} added and dropped in one edit"));
            }
            return Ok(());
        }
        if !self.families.contains_key(&id) {
            return refuse(format!("edit of column family id {id}, which is not live"));
        }
        if cf.drop {
            if id == DEFAULT_COLUMN_FAMILY_ID {
                return refuse("the default column family cannot be dropped".into());
            }
            if !edit.new_files.is_empty() || !edit.deleted_files.is_empty() {
                return refuse(format!("the drop of column family id {id} changes files"));
            }
        }
        Ok(())
    }

    /// Files that failed edits added and that may be committed (see the module doc): the
    /// database deletes none of them, though no version in memory holds them.
    pub fn in_doubt(&self) -> &HashSet<u64> {
        &self.in_doubt
    }

    /// File numbers of SSTs referenced by any version still alive (current or held by readers).
    pub fn live_files(&self) -> HashSet<u64> {
        let mut live = HashSet::new();
        for v in self.versions.iter().filter_map(Weak::upgrade) {
            for level in &v.files {
                live.extend(level.iter().map(|f| f.number));
            }
            live.extend(v.blob_files.keys().copied());
        }
        live
    }

    fn empty(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> VersionSet {
        let default = FamilyVersion::new(DEFAULT_COLUMN_FAMILY_NAME, num_levels);
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            num_levels,
            versions: vec![Arc::downgrade(&default.current)],
            max_column_family: 0,
            families: BTreeMap::from([(DEFAULT_COLUMN_FAMILY_ID, default)]),
            next_file_number: 2,
            last_sequence: 0,
            manifest_file_number: 0,
            manifest: None,
            in_doubt: HashSet::new(),
        }
    }

    /// Makes `version` family `id`'s current one and forgets versions nobody holds any more.
    fn install(&mut self, id: u32, version: Version) {
        let version = Arc::new(version);
        self.versions.push(Arc::downgrade(&version));
        if let Some(f) = self.families.get_mut(&id) {
            if let Some(cache) = &f.block_cache {
                // Before any reader can find the files in this version.
                version.files.iter().flatten().for_each(|m| m.reader.set_family_cache(cache));
            }
            f.current = version;
        }
        self.versions.retain(|w| w.strong_count() > 0);
    }

    /// An edit that recreates the `default` family and the counters from nothing (a new
    /// MANIFEST's first record; a checkpoint's MANIFEST, `db/checkpoint.rs`); the other
    /// families follow in [`VersionSet::snapshot_edits`].
    pub(crate) fn snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit {
            comparator: Some(BYTEWISE_COMPARATOR.to_string()),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.last_sequence),
            ..Default::default()
        };
        if self.max_column_family > 0 {
            edit.cf.max_column_family = Some(self.max_column_family);
        }
        self.default_family().fill_snapshot(DEFAULT_COLUMN_FAMILY_ID, &mut edit);
        edit
    }

    /// The edits that recreate the whole state: [`VersionSet::snapshot_edit`], then one per
    /// other live family (its id, name, log number and files), by id (RocksDB's
    /// `WriteCurrentStateToManifest`).
    pub(crate) fn snapshot_edits(&self) -> Vec<VersionEdit> {
        let mut edits = vec![self.snapshot_edit()];
        for (&id, f) in self.families.range(DEFAULT_COLUMN_FAMILY_ID + 1..) {
            let mut edit = VersionEdit::default();
            f.fill_snapshot(id, &mut edit);
            edits.push(edit);
        }
        edits
    }

    fn snapshot_records(&self) -> Vec<Vec<u8>> {
        let edits = self.snapshot_edits();
        edits
            .iter()
            .map(|e| {
                let mut record = Vec::new();
                e.encode(&mut record);
                record
            })
            .collect()
    }
}

fn as_slices(records: &[Vec<u8>]) -> Vec<&[u8]> {
    records.iter().map(Vec::as_slice).collect()
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;

#[path = "set_apply.rs"]
mod apply;
