//! `manifest_dump` and `checkconsistency`: replaying a MANIFEST outside the engine.
//!
//! [`replay`] reads the MANIFEST named by `CURRENT` (or a given path) record by record with
//! [`talus::wal::LogReader`], decodes each record with [`VersionEdit::decode`] and applies it to
//! a plain per-level map, noting (not failing on) bad records and edits that delete files that
//! are not live. `checkconsistency` uses the replayed file list to verify every live SST.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use talus::filename::{current_path, parse_file_name, table_path, FileType};
use talus::fs::{read_all, Fs, StdFs};
use talus::key::compare_internal;
use talus::version::{FileMetaData, VersionEdit};
use talus::wal::{LogReader, ReadOutcome};
use talus::{Options, ReadOptions};

use super::{Ctx, Fail};
use crate::fmt::write_internal_key;
use crate::table::{open_table, walk_entries};

/// The tree's state after replaying a MANIFEST.
#[derive(Debug, Default)]
pub struct Replayed {
    /// Live files per level, by file number.
    pub levels: BTreeMap<usize, BTreeMap<u64, FileMetaData>>,
    /// Last values of the counters seen in any edit.
    pub comparator: Option<String>,
    /// See [`VersionEdit::log_number`].
    pub log_number: Option<u64>,
    /// See [`VersionEdit::next_file_number`].
    pub next_file_number: Option<u64>,
    /// See [`VersionEdit::last_sequence`].
    pub last_sequence: Option<u64>,
    /// Edits applied.
    pub edits: u64,
    /// Bad records and inconsistent edits, in order.
    pub problems: Vec<String>,
}

/// The MANIFEST that `dir/CURRENT` names.
pub fn current_manifest(fs: &dyn Fs, dir: &Path) -> Result<PathBuf, String> {
    let cur = current_path(dir);
    let data = read_all(fs, &cur).map_err(|e| e.to_string())?;
    let name = String::from_utf8_lossy(&data);
    let name = name.strip_suffix('\n').unwrap_or(&name);
    match parse_file_name(name) {
        Some(FileType::Manifest(_)) => Ok(dir.join(name)),
        _ => Err(format!("{}: does not name a MANIFEST: {name:?}", cur.display())),
    }
}

/// Replays `manifest`, calling `on_edit(offset, edit)` for each decoded edit before applying it.
pub fn replay(
    fs: &dyn Fs,
    manifest: &Path,
    mut on_edit: impl FnMut(u64, &VersionEdit) -> Result<(), Fail>,
) -> Result<Replayed, Fail> {
    let name = manifest.display().to_string();
    let file = fs.open_sequential(manifest)?;
    let mut reader = LogReader::new(file, name.clone());
    let mut st = Replayed::default();
    loop {
        match reader.read_record()? {
            ReadOutcome::Eof => break,
            ReadOutcome::Corrupt { offset, bytes, reason, at_tail } => {
                st.problems.push(format!(
                    "Corruption in {name} at offset {offset}: {reason} ({bytes} bytes dropped{})",
                    if at_tail { ", at the tail" } else { "" }
                ));
            }
            ReadOutcome::Predecessor(_, offset) => st.problems.push(format!(
                "Corruption in {name} at offset {offset}: a WAL's predecessor record in a MANIFEST"
            )),
            ReadOutcome::Record(payload, offset) => {
                match VersionEdit::decode(&payload, &name, offset) {
                    Ok(mut edit) => {
                        on_edit(offset, &edit)?;
                        // The shape is `default`'s: another family's files and log number are
                        // not in it (its counters are global).
                        if edit.cf.family != talus::column_family::DEFAULT_COLUMN_FAMILY_ID {
                            edit.new_files.clear();
                            edit.deleted_files.clear();
                            edit.log_number = None;
                        }
                        st.apply(edit);
                    }
                    Err(e) => st.problems.push(e.to_string()),
                }
            }
        }
    }
    Ok(st)
}

impl Replayed {
    /// What a MANIFEST must have recorded and did not (as the engine's recovery requires: at
    /// least one edit, a next file number, a last sequence). A zeroed or empty MANIFEST has none.
    pub fn missing_fields(&self, manifest: &Path) -> Vec<String> {
        let name = manifest.display();
        let mut out = Vec::new();
        if self.edits == 0 {
            out.push(format!("Corruption: {name}: no version edit in the MANIFEST"));
        } else {
            if self.next_file_number.is_none() {
                out.push(format!("Corruption: {name}: no next file number recorded"));
            }
            if self.last_sequence.is_none() {
                out.push(format!("Corruption: {name}: no last sequence number recorded"));
            }
        }
        out
    }

    fn apply(&mut self, edit: VersionEdit) {
        self.edits += 1;
        if edit.comparator.is_some() {
            self.comparator = edit.comparator;
        }
        self.log_number = edit.log_number.or(self.log_number);
        self.next_file_number = edit.next_file_number.or(self.next_file_number);
        self.last_sequence = edit.last_sequence.or(self.last_sequence);
        for (level, number) in edit.deleted_files {
            let gone = self.levels.get_mut(&level).and_then(|l| l.remove(&number));
            if gone.is_none() {
                self.problems.push(format!(
                    "edit {} deletes file {number} at level {level}, which is not live there",
                    self.edits
                ));
            }
        }
        for (level, f) in edit.new_files {
            self.levels.entry(level).or_default().insert(f.number, f);
        }
    }

    /// Live files of `level` in display order: level 0 newest first, deeper levels by key.
    pub fn level_files(&self, level: usize) -> Vec<&FileMetaData> {
        let mut v: Vec<&FileMetaData> =
            self.levels.get(&level).map(|l| l.values().collect()).unwrap_or_default();
        if level == 0 {
            v.sort_by(|a, b| b.largest_seq.cmp(&a.largest_seq).then(b.number.cmp(&a.number)));
        } else {
            v.sort_by(|a, b| compare_internal(a.smallest.encoded(), b.smallest.encoded()));
        }
        v
    }
}

/// `number:size[smallest_seq .. largest_seq]['a' seq:1, type:1 .. 'z' seq:9, type:1]`, then the
/// counts and the oldest blob file it references (` blob_file:N`), if any.
fn write_file(out: &mut dyn Write, f: &FileMetaData, hex: bool) -> std::io::Result<()> {
    write!(out, "{}:{}[{} .. {}][", f.number, f.file_size, f.smallest_seq, f.largest_seq)?;
    write_internal_key(out, f.smallest.encoded(), hex)?;
    out.write_all(b" .. ")?;
    write_internal_key(out, f.largest.encoded(), hex)?;
    write!(out, "] entries:{} deletions:{}", f.num_entries, f.num_deletions)?;
    if f.oldest_blob_file_number != 0 {
        // RocksDB's `FileMetaData::DebugString` name.
        write!(out, " blob_file:{}", f.oldest_blob_file_number)?;
    }
    Ok(())
}

fn write_edit(out: &mut dyn Write, offset: u64, e: &VersionEdit, hex: bool) -> std::io::Result<()> {
    writeln!(out, "VersionEdit @ {offset} {{")?;
    if let Some(c) = &e.comparator {
        writeln!(out, "  Comparator: {c}")?;
    }
    if let Some(n) = e.log_number {
        writeln!(out, "  LogNumber: {n}")?;
    }
    if let Some(n) = e.next_file_number {
        writeln!(out, "  NextFileNumber: {n}")?;
    }
    if let Some(n) = e.last_sequence {
        writeln!(out, "  LastSeq: {n}")?;
    }
    for (level, number) in &e.deleted_files {
        writeln!(out, "  DeleteFile: {level} {number}")?;
    }
    for (level, f) in &e.new_files {
        write!(out, "  AddFile: {level} ")?;
        write_file(out, f, hex)?;
        writeln!(out)?;
    }
    // RocksDB's `BlobFileAddition::DebugString` / `BlobFileGarbage::DebugString` words.
    for a in &e.blob_file_additions {
        writeln!(
            out,
            "  BlobFileAddition: blob_file_number: {} total_blob_count: {} total_blob_bytes: {} \
             checksum_value: {:08x} file_size: {}",
            a.number, a.blob_count, a.blob_bytes, a.checksum, a.file_size
        )?;
    }
    for g in &e.blob_file_garbage {
        writeln!(
            out,
            "  BlobFileGarbage: blob_file_number: {} garbage_blob_count: {} garbage_blob_bytes: {}",
            g.number, g.garbage_count, g.garbage_bytes
        )?;
    }
    writeln!(out, "}}")
}

pub(super) fn manifest_dump(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let fs = StdFs;
    let path = match ctx.args.value("path") {
        Some(p) => PathBuf::from(p),
        None => current_manifest(&fs, &ctx.db_path()?)?,
    };
    let hex = ctx.key_hex();
    let out = &mut *ctx.out;
    writeln!(out, "Processing Manifest file {}", path.display())?;
    let st = replay(&fs, &path, |offset, e| Ok(write_edit(out, offset, e, hex)?))?;
    let max_level = st.levels.keys().max().map_or(0, |&l| l + 1);
    for level in 0..max_level.max(Options::default().num_levels) {
        let files = st.level_files(level);
        let bytes: u64 = files.iter().map(|f| f.file_size).sum();
        writeln!(out, "--- level {level} --- {} files, {bytes} bytes ---", files.len())?;
        for f in files {
            out.write_all(b" ")?;
            write_file(out, f, hex)?;
            writeln!(out)?;
        }
    }
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
    writeln!(
        out,
        "comparator {} log_number {} next_file_number {} last_sequence {} edits {}",
        st.comparator.as_deref().unwrap_or("-"),
        opt(st.log_number),
        opt(st.next_file_number),
        opt(st.last_sequence),
        st.edits
    )?;
    let mut problems = st.problems.clone();
    problems.extend(st.missing_fields(&path));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Fail::Msg(problems.join("\n")))
    }
}

/// Checks one live file against its MANIFEST entry; returns the problems found.
fn check_file(fs: &dyn Fs, dir: &Path, level: usize, meta: &FileMetaData) -> Vec<String> {
    let path = table_path(dir, meta.number);
    let name = path.display().to_string();
    let mut problems = Vec::new();
    match fs.file_size(&path) {
        Ok(size) if size != meta.file_size => problems
            .push(format!("{name}: size {size} but the MANIFEST says {} bytes", meta.file_size)),
        Ok(_) => {}
        Err(e) => {
            problems.push(format!("{name} (level {level}): {e}"));
            return problems;
        }
    }
    let table = match open_table(fs, &path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    if let Err(e) = table.verify_checksums() {
        problems.push(e.to_string());
    }
    let (lo, hi) = (meta.smallest.encoded(), meta.largest.encoded());
    let mut outside = 0u64;
    let walked = walk_entries::<String>(&table, &name, None, |k, _| {
        if compare_internal(k, lo).is_lt() || compare_internal(k, hi).is_gt() {
            outside += 1;
        }
        Ok(true)
    });
    match walked {
        Ok(n) if n != meta.num_entries => {
            problems.push(format!("{name}: {n} entries but the MANIFEST says {}", meta.num_entries))
        }
        Ok(_) => {}
        Err(e) => problems.push(e),
    }
    if outside > 0 {
        problems.push(format!("{name}: {outside} entries outside the MANIFEST's key range"));
    }
    problems
}

pub(super) fn check_consistency(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let dir = ctx.db_path()?;
    let db = ctx.open(|o| o.disable_auto_compactions = true)?;
    // Data WAL recovery dropped (beyond a torn tail, which a crash in a write leaves) is a
    // problem; the report was printed as a warning by `open`.
    let report = db.recovery_report();
    let mut problems = Vec::new();
    if !report.only_torn_tail() {
        problems.push(format!(
            "WAL recovery dropped {} bytes ({} intact write batches, {} operations): see the \
             warning above",
            report.bytes_dropped(),
            report.batches_dropped(),
            report.operations_dropped()
        ));
    }
    // Every key through the engine's read path, checksums verified.
    let mut it = db.raw_iter(&ReadOptions { fill_cache: false, ..ReadOptions::default() });
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    it.status()?;
    // Every live SST on its own, against the MANIFEST.
    let fs = StdFs;
    let manifest = current_manifest(&fs, &dir)?;
    let st = replay(&fs, &manifest, |_, _| Ok(()))?;
    problems.extend(st.problems.iter().cloned());
    problems.extend(st.missing_fields(&manifest));
    for (&level, files) in &st.levels {
        for meta in files.values() {
            problems.extend(check_file(&fs, &dir, level, meta));
        }
    }
    drop(db);
    // WALs an earlier recovery could not replay whole, kept for salvage: not a problem of the
    // database as it is, but worth knowing.
    for name in fs.list_dir(&dir)? {
        if let Some(FileType::CorruptWal(_)) = parse_file_name(&name) {
            writeln!(
                ctx.err,
                "Note: {} is a WAL an earlier recovery could not replay whole (kept for salvage)",
                dir.join(&name).display()
            )?;
        }
    }
    if problems.is_empty() {
        writeln!(ctx.out, "OK")?;
        Ok(())
    } else {
        Err(Fail::Msg(problems.join("\n")))
    }
}

/// `list_column_families`: the live families of the MANIFEST named by CURRENT, as RocksDB's
/// `ldb` prints them (`Column families in PATH: ` then `{default, ...}`); opens nothing but
/// CURRENT and that MANIFEST.
pub(super) fn list_column_families(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let path = ctx.db_path()?;
    let names = talus::Db::list_column_families(&path, &Options::default())?;
    writeln!(ctx.out, "Column families in {}: ", path.display())?;
    writeln!(ctx.out, "{{{}}}", names.join(", "))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus::key::{InternalKey, ValueKind};

    fn meta(number: u64, lo: &[u8], hi: &[u8], seq: u64) -> FileMetaData {
        FileMetaData {
            number,
            file_size: 100 * number,
            smallest: InternalKey::new(lo, seq, ValueKind::Put),
            largest: InternalKey::new(hi, seq, ValueKind::Put),
            smallest_seq: seq,
            largest_seq: seq,
            num_entries: 2,
            num_deletions: 0,
            oldest_blob_file_number: 0,
            reader: Default::default(),
        }
    }

    #[test]
    fn applying_edits_tracks_live_files_and_flags_bad_deletes() {
        let mut st = Replayed::default();
        st.apply(VersionEdit {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(3),
            next_file_number: Some(10),
            last_sequence: Some(5),
            deleted_files: vec![],
            new_files: vec![(0, meta(7, b"a", b"m", 4)), (0, meta(8, b"b", b"z", 5))],
            ..Default::default()
        });
        st.apply(VersionEdit {
            next_file_number: Some(12),
            deleted_files: vec![(0, 7), (0, 8), (1, 99)],
            new_files: vec![(1, meta(11, b"n", b"z", 5)), (1, meta(10, b"a", b"m", 5))],
            ..Default::default()
        });
        assert_eq!(st.edits, 2);
        assert_eq!(
            (st.log_number, st.next_file_number, st.last_sequence),
            (Some(3), Some(12), Some(5))
        );
        assert!(st.level_files(0).is_empty());
        let l1: Vec<u64> = st.level_files(1).iter().map(|f| f.number).collect();
        assert_eq!(l1, vec![10, 11], "deeper levels are listed by smallest key");
        assert_eq!(st.problems.len(), 1);
        assert!(st.problems[0].contains("file 99 at level 1"), "{:?}", st.problems);
    }

    #[test]
    fn level0_lists_newest_first() {
        let mut st = Replayed::default();
        st.apply(VersionEdit {
            new_files: vec![(0, meta(5, b"a", b"b", 9)), (0, meta(6, b"a", b"b", 12))],
            ..Default::default()
        });
        let l0: Vec<u64> = st.level_files(0).iter().map(|f| f.number).collect();
        assert_eq!(l0, vec![6, 5]);
    }

    #[test]
    fn file_lines_read_like_rocksdb() {
        let mut v = Vec::new();
        write_file(&mut v, &meta(7, b"a", b"m", 4), false).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "7:700[4 .. 4]['a' seq:4, type:1 .. 'm' seq:4, type:1] entries:2 deletions:0"
        );
    }

    #[test]
    fn current_must_name_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let fs = StdFs;
        assert!(current_manifest(&fs, dir.path()).is_err(), "missing CURRENT");
        std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000005\n").unwrap();
        assert_eq!(current_manifest(&fs, dir.path()).unwrap(), dir.path().join("MANIFEST-000005"));
        std::fs::write(dir.path().join("CURRENT"), "../../etc/passwd\n").unwrap();
        assert!(current_manifest(&fs, dir.path()).unwrap_err().contains("does not name"));
    }
}
