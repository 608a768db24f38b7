//! External SST ingestion ([`crate::Db::ingest_external_file`], and
//! [`crate::Db::ingest_external_file_cf`] into any column family), with RocksDB's semantics.
//! Every step below looks at the target family only (its memtables, its version, its table
//! options for a rewrite); the flush of step 2 switches the target family's memtable alone
//! (every family's with `atomic_flush`: `switch_families`) and the MANIFEST edit of step 4
//! names the family.
//!
//! Steps: (1) open each file, check it was written by [`crate::sst::SstFileWriter`] (every
//! entry at sequence 0, no range deletions) and that the files' user-key ranges are disjoint;
//! (2) unless `ingest_behind`, flush first if a memtable overlaps them (or refuse, without
//! `allow_blocking_flush`); (3) move (rename) or copy each into the DB directory under a new
//! file number, synced, directory synced; (4) holding the write queue (no write runs) and the
//! manual-compaction slot (no compaction runs, after waiting for running ones), re-check the
//! memtables, pick each file's level and sequence number, rewrite the files that need a
//! sequence number other than 0, and record every file in one MANIFEST edit, after which the
//! new SuperVersion makes all the keys visible at once.
//!
//! Level and sequence number: a file goes to the lowest level such that neither that level nor
//! any level above it holds a file overlapping its range. If some level overlaps (or the file
//! lands in L0, or snapshots are live and `snapshot_consistency` is set) the file needs a
//! sequence number newer than everything: `last_sequence + 1`, shared by all files of the call;
//! the file is then rewritten with that sequence number on every entry (docs/format/sst.md,
//! "External files": the format has no global-seqno field). Otherwise it keeps sequence 0 and is
//! installed as is. `ingest_behind` puts every file at the bottommost level with sequence 0, so
//! every existing or later write to the same keys wins; it is refused if a bottom-level file
//! overlaps. A crash before the MANIFEST edit is synced leaves only unreferenced files, which
//! open deletes: no trace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cf_data::ColumnFamilyData;
use super::core::DbInner;
use super::jobs::OutputGuard;
use crate::error::{Error, Result};
use crate::filename::{table_name, table_path};
use crate::key::{make_internal_key, parse_internal_key, user_key, MAX_SEQUENCE};
use crate::kill_point::kill_point;
use crate::sst::{TableBuilder, TableProperties, TableReader};
use crate::version::{FileMetaData, VersionEdit};

/// Options of [`crate::Db::ingest_external_file`] (RocksDB's `IngestExternalFileOptions`).
#[derive(Clone, Debug)]
pub struct IngestOptions {
    /// Move (rename) the files into the database instead of copying them. A crash before the
    /// ingestion's MANIFEST edit is durable then loses the moved files (open deletes them as
    /// unreferenced); the database itself is unchanged.
    pub move_files: bool,
    /// Give the files a fresh sequence number when snapshots are live, so the snapshots do not
    /// see them.
    pub snapshot_consistency: bool,
    /// Allow giving the files a sequence number other than 0 (refuse otherwise).
    pub allow_global_seqno: bool,
    /// Flush a memtable that overlaps the files (refuse otherwise).
    pub allow_blocking_flush: bool,
    /// Ingest at the bottommost level with sequence number 0: every existing or concurrent
    /// write to the same keys wins. Refused if the bottommost level overlaps the files.
    pub ingest_behind: bool,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            ingest_behind: false,
        }
    }
}

/// One file being ingested.
struct Ingested {
    src: PathBuf,
    /// Its number in the DB directory, once copied or moved there.
    copied: u64,
    /// The number installed: `copied`, or that of the rewrite with a sequence number.
    number: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    props: TableProperties,
}

fn invalid(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

impl DbInner {
    /// Ingests `paths` into family `cf`; see the module docs.
    pub(crate) fn ingest_external_files(
        &self,
        cf: &ColumnFamilyData,
        paths: &[PathBuf],
        opts: &IngestOptions,
    ) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            files.push(self.inspect_external(p)?);
        }
        files.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        for w in files.windows(2) {
            if let [a, b] = w {
                if a.largest >= b.smallest {
                    return Err(invalid(format!(
                        "external files {} and {} overlap",
                        a.src.display(),
                        b.src.display()
                    )));
                }
            }
        }
        if !opts.ingest_behind && memtables_overlap(cf, &files) {
            if !opts.allow_blocking_flush {
                return Err(invalid(
                    "the memtable overlaps the files and allow_blocking_flush is false".into(),
                ));
            }
            self.with_write_lock(|| self.switch_families(|id, _| id == cf.id))?;
            self.wait_for_flushes()?;
        }
        // Into the DB directory. Numbers are registered as pending outputs first, so obsolete-
        // file deletion leaves them alone until they are in a version (or removed here).
        let mut outputs = Vec::with_capacity(files.len());
        for f in &mut files {
            let output = self.reserve_output();
            f.copied = output.number();
            f.number = output.number();
            outputs.push(output);
        }
        let mut placed = 0;
        let mut r = files.iter().try_for_each(|f| {
            let dst = table_path(&self.path, f.copied);
            if opts.move_files {
                self.fs.rename(&f.src, &dst)?;
            } else {
                crate::fs::copy_file(&*self.fs, &f.src, &dst)?;
            }
            placed += 1;
            Ok(())
        });
        if r.is_ok() {
            kill_point!("ingest.files_placed");
            r = self.fs.sync_dir(&self.path);
        }
        if r.is_ok() {
            r = self.with_write_lock(|| self.ingest_locked(cf, &mut files, opts, &mut outputs));
        }
        drop(outputs);
        // A MANIFEST write that failed but may have committed leaves the installed numbers in
        // doubt: those files stay where they are (a moved file is not moved back either).
        let in_doubt = r.is_err() && {
            let vs = self.versions.lock();
            files.iter().any(|f| vs.in_doubt().contains(&f.number))
        };
        for (i, f) in files.iter().enumerate() {
            let copied = table_path(&self.path, f.copied);
            if in_doubt {
                self.info_log.log(&format!(
                    "[WARN] ingestion failed after its MANIFEST write may have committed: \
                     keeping {} (from {})",
                    table_name(f.number),
                    f.src.display()
                ));
                continue;
            }
            if r.is_err() && f.number != f.copied {
                let _ = self.fs.remove_file(&table_path(&self.path, f.number));
            }
            if r.is_ok() && f.number == f.copied {
                continue;
            }
            // Not installed (or replaced by its rewrite): a moved file goes back where it came
            // from (only on failure), a copy is removed.
            if r.is_err() && opts.move_files && i < placed {
                let _ = self.fs.rename(&copied, &f.src);
            } else if i < placed {
                let _ = self.fs.remove_file(&copied);
            }
        }
        r?;
        self.info_log.log(&format!(
            "[ingest] {} external files ingested into column family {:?}",
            files.len(),
            cf.name
        ));
        self.delete_obsolete_files();
        self.bg_cv.notify_all();
        Ok(())
    }

    /// Opens an external file and checks it is ingestible.
    fn inspect_external(&self, p: &Path) -> Result<Ingested> {
        let name = p.display().to_string();
        let r = TableReader::open(self.fs.open_random(p)?, 0, name.clone(), None)?;
        let props = r.properties().clone();
        if props.num_entries == 0 {
            return Err(invalid(format!("{name}: no entries")));
        }
        if props.num_range_deletions > 0 {
            return Err(invalid(format!("{name}: range deletions cannot be ingested")));
        }
        if props.largest_seq != 0 {
            return Err(invalid(format!(
                "{name}: entries with sequence numbers (not written by SstFileWriter)"
            )));
        }
        let smallest = user_key(&props.smallest_point_key).to_vec();
        let largest = user_key(&props.largest_point_key).to_vec();
        Ok(Ingested { src: p.to_path_buf(), copied: 0, number: 0, smallest, largest, props })
    }

    /// Step 4 of the module docs; runs holding the write queue.
    fn ingest_locked<'a>(
        &'a self,
        cf: &ColumnFamilyData,
        files: &mut [Ingested],
        opts: &IngestOptions,
        outputs: &mut Vec<OutputGuard<'a>>,
    ) -> Result<()> {
        let _manual = self.begin_manual()?;
        {
            let st = self.state.lock();
            DbInner::check_bg_error(&st)?;
        }
        self.place_and_install(cf, files, opts, outputs)
    }

    fn place_and_install<'a>(
        &'a self,
        cf: &ColumnFamilyData,
        files: &mut [Ingested],
        opts: &IngestOptions,
        outputs: &mut Vec<OutputGuard<'a>>,
    ) -> Result<()> {
        if !opts.ingest_behind && memtables_overlap(cf, files) {
            // Written since the first check: we hold the write queue, so this flush is the last.
            if !opts.allow_blocking_flush {
                return Err(invalid(
                    "the memtable overlaps the files and allow_blocking_flush is false".into(),
                ));
            }
            self.switch_families(|id, _| id == cf.id)?;
            self.wait_for_flushes()?;
        }
        let v = match self.state.lock().cf(cf.id) {
            Some(state) => state.current.clone(),
            None => return Err(dropped(cf)),
        };
        let levels = v.num_levels();
        let bottom = levels - 1;
        let last = self.visible_sequence();
        let snapshots_live = self.snapshots.count() > 0;
        let mut placement = Vec::with_capacity(files.len());
        for f in files.iter() {
            if opts.ingest_behind {
                if !v.overlapping_files(bottom, &f.smallest, &f.largest).is_empty() {
                    return Err(invalid(format!(
                        "ingest_behind: {} overlaps the bottommost level",
                        f.src.display()
                    )));
                }
                placement.push((bottom, false));
                continue;
            }
            let mut target = 0;
            let mut overlap = false;
            for lvl in 0..levels {
                if !v.overlapping_files(lvl, &f.smallest, &f.largest).is_empty() {
                    overlap = true;
                    break;
                }
                target = lvl;
            }
            let needs_seq = overlap || target == 0 || (opts.snapshot_consistency && snapshots_live);
            if needs_seq && !opts.allow_global_seqno {
                return Err(invalid(format!(
                    "{} needs a sequence number and allow_global_seqno is false",
                    f.src.display()
                )));
            }
            placement.push((target, needs_seq));
        }
        drop(v);
        let seq = if placement.iter().any(|p| p.1) { Some(last + 1) } else { None };
        let mut edit = VersionEdit::default();
        for (f, &(level, needs_seq)) in files.iter_mut().zip(&placement) {
            if let (true, Some(s)) = (needs_seq, seq) {
                let output = self.reserve_output();
                let n = output.number();
                outputs.push(output);
                f.number = n;
                f.props = self.rewrite_with_seq(&cf.opts, f.copied, n, s, level)?;
            }
            edit.new_files.push((level, FileMetaData::from_table(f.number, &f.props, &[])));
        }
        if seq.is_some() {
            self.fs.sync_dir(&self.path)?;
        }
        edit.cf.family = cf.id;
        let mut vs = self.versions.lock();
        if vs.current_of(cf.id).is_none() {
            return Err(dropped(cf));
        }
        let s = vs.last_sequence().max(last).max(seq.unwrap_or(0));
        vs.set_last_sequence(s);
        vs.log_and_apply(edit)?;
        kill_point!("ingest.manifest_written");
        let current = vs.current_of(cf.id);
        drop(vs);
        let mut st = self.state.lock();
        let mut retired = None;
        if let (Some(state), Some(current)) = (st.cf_mut(cf.id), current) {
            state.current = current;
            retired = self.install_super_version(&st, cf.id);
        }
        // Publish the sequence number after the files: a reader that sees it sees them.
        if let Some(s) = seq {
            self.last_sequence.store(s, std::sync::atomic::Ordering::Release);
        }
        drop(st);
        drop(retired);
        Ok(())
    }

    /// Copies table `from` to table `to` with every entry at sequence `seq`, with the table
    /// options `opts` (the target family's) give a file at `level`.
    fn rewrite_with_seq(
        &self,
        opts: &crate::options::Options,
        from: u64,
        to: u64,
        seq: u64,
        level: usize,
    ) -> Result<TableProperties> {
        let src = table_path(&self.path, from);
        let r =
            Arc::new(TableReader::open(self.fs.open_random(&src)?, from, table_name(from), None)?);
        let bottommost = level + 1 == opts.num_levels;
        let mut b = TableBuilder::new(
            opts.table_builder_options(level, bottommost),
            self.fs.create(&table_path(&self.path, to))?,
            table_name(to),
        );
        let mut it = r.iter(false);
        it.seek_to_first();
        let mut ikey = Vec::new();
        while it.valid() {
            let p = parse_internal_key(it.key())
                .ok_or_else(|| Error::corruption(table_name(from), 0, "malformed internal key"))?;
            ikey.clear();
            crate::key::append_internal_key(&mut ikey, p.user_key, seq, p.kind);
            b.add(&ikey, it.value())?;
            it.next();
        }
        it.status()?;
        b.finish()
    }
}

/// `InvalidArgument`: family `cf` was dropped before its ingestion was installed.
fn dropped(cf: &ColumnFamilyData) -> Error {
    invalid(format!("column family {:?} was dropped: nothing ingested", cf.name))
}

/// True if a memtable (active or immutable) of family `cf` holds a key or range tombstone in a
/// file's range.
fn memtables_overlap(cf: &ColumnFamilyData, files: &[Ingested]) -> bool {
    let sv = cf.super_version.load_full();
    let mems = std::iter::once(&sv.mem).chain(sv.imms.iter().map(|(m, _)| m));
    for m in mems {
        let tombs = m.range_tombstones();
        let mut it = m.iter();
        for f in files {
            it.seek(&make_internal_key(&f.smallest, MAX_SEQUENCE, crate::key::ValueKind::Put));
            if it.valid() && user_key(it.key()) <= f.largest.as_slice() {
                return true;
            }
            if tombs.iter().any(|t| {
                t.start.as_slice() <= f.largest.as_slice()
                    && t.end.as_slice() > f.smallest.as_slice()
            }) {
                return true;
            }
        }
    }
    false
}
