//! Flush: writes an immutable memtable to a new L0 SST and records it in the MANIFEST.
//!
//! Who calls: a background thread (one flush at a time, oldest memtable first) and recovery
//! (`open.rs`, for memtables rebuilt from WALs). Locks: `state` briefly to pick and to install;
//! `versions` around the MANIFEST write; none while the table is written.

use std::sync::Arc;
use std::time::Instant;

use super::blob_outputs::BlobOutputs;
use super::cf_data::ColumnFamilyData;
use super::core::{DbInner, DbState};
use crate::blob::format::note_oldest_blob_file;
use crate::compaction::iterator::{CompactionIter, CompactionPolicy};
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::fs::rate_limiter::{IoPriority, RateLimitedFile};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::kill_point::kill_point;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sst::TableBuilder;
use crate::version::{FileMetaData, VersionEdit};
use crate::wal::LogWriter;

impl DbInner {
    /// Writes `mem`, a memtable of a family with options `opts`, to SST `number` at L0; `None`
    /// if the memtable holds nothing.
    ///
    /// Drops what no reader can see, as RocksDB's flush does: of the versions of a key in one
    /// snapshot stripe (between two live snapshots, see `compaction::job`) only the newest is
    /// written, and a version covered by a range tombstone of its own stripe is not written.
    /// Deletions are kept (older data may lie below L0). Merge operands of a stripe are merged
    /// with a base the memtable holds, else partially (`compaction::iterator` has the rules). Safe for readers without a snapshot:
    /// they load their SuperVersion before their sequence number, so a version this drops is
    /// shadowed by one at or below any sequence a reader of the new file can hold.
    ///
    /// Values `blob_separation(0)` separates go to blob files recorded in `blobs`.
    pub(crate) fn write_level0_table<'a>(
        &'a self,
        opts: &Options,
        mem: &Arc<MemTable>,
        number: u64,
        blobs: &mut BlobOutputs<'a>,
    ) -> Result<Option<FileMetaData>> {
        let tombstones = mem.range_tombstones();
        if mem.num_entries() == 0 && tombstones.is_empty() {
            return Ok(None);
        }
        let path = table_path(&self.path, number);
        let file = RateLimitedFile::wrap(
            crate::fs::direct::create(
                self.fs.as_ref(),
                &path,
                self.opts.use_direct_io_for_flush_and_compaction,
            )?,
            self.rate_limiter.as_ref(),
            IoPriority::High,
        );
        let bottommost = opts.num_levels == 1;
        let mut b = TableBuilder::new(
            opts.table_builder_options(0, bottommost),
            file,
            crate::filename::table_name(number),
        );
        // Read after `mem` became immutable: a snapshot taken later holds a sequence at or
        // above every entry of `mem`, so it changes no stripe.
        let snapshots = self.snapshots.sequences();
        let covering =
            (!tombstones.is_empty()).then(|| FragmentedTombstones::new(tombstones.iter().cloned()));
        let mut it = mem.iter();
        it.seek_to_first();
        let policy = CompactionPolicy {
            snapshots: &snapshots,
            tombstones: covering.as_ref(),
            // Deletions are kept: older data may lie below L0.
            bottommost: false,
            zero_seqs: false,
            merge: opts.merge_operator.as_deref(),
            // RocksDB's default: filters run in compactions only.
            filter: None,
            blobs: None,
            shutting_down: None,
        };
        let mut entries = CompactionIter::new(it.as_mut(), policy);
        let mut sep = self.blob_separator(opts, 0);
        let mut oldest_blob = 0;
        while let Some((ikey, value, _)) = entries.next()? {
            self.add_maybe_separated(&mut sep, blobs, ikey, value, &mut |k, v| {
                note_oldest_blob_file(&mut oldest_blob, k, v);
                b.add(k, v)
            })?;
        }
        // The blob files are synced before the table that points into them.
        self.finish_blobs(sep, blobs)?;
        let live: Vec<RangeTombstone> =
            tombstones.into_iter().filter(|t| t.start < t.end).collect();
        for t in &live {
            b.add_range_tombstone(t)?;
        }
        if b.num_entries() == 0 && live.is_empty() {
            drop(b);
            let _ = self.fs.remove_file(&path);
            return Ok(None);
        }
        let props = b.finish()?;
        let mut meta = FileMetaData::from_table(number, &props, &live);
        meta.oldest_blob_file_number = oldest_blob;
        Ok(Some(meta))
    }

    /// `Db::flush` and `Db::flush_cf`: switches the memtables of the families `pick` chooses
    /// (every family with `atomic_flush`) if any of them holds writes, with the write queue
    /// quiet, then waits until every immutable memtable is flushed.
    pub(crate) fn flush_families(&self, pick: impl Fn(u32) -> bool) -> Result<()> {
        let pick = |id| self.opts.atomic_flush || pick(id);
        let st = self.state.lock();
        DbInner::check_bg_error(&st)?;
        let empty = st.cfs.iter().all(|(&id, c)| !pick(id) || c.mem_is_empty());
        drop(st);
        if !empty {
            // Take a place in the write queue as an empty-batch leader.
            self.with_write_lock(|| self.switch_families(|id, _| pick(id)))?;
        }
        self.wait_for_flushes()
    }

    /// Waits until every immutable memtable is flushed (`Db::flush`, ingestion). Fails with the
    /// background error, or `Busy` when the database is closing.
    pub(crate) fn wait_for_flushes(&self) -> Result<()> {
        let mut st = self.state.lock();
        // Until the last flush job has finished too, not only installed its table: it still
        // logs, closes obsolete WALs and deletes files after the memtable leaves `imms` (a
        // caller that injects faults next must not see them taken by those).
        while st.has_imms() || st.jobs.flush_running() {
            DbInner::check_bg_error(&st)?;
            if st.shutting_down {
                return Err(Error::Busy("the database is closing".into()));
            }
            self.bg_cv.notify_all();
            self.done_cv.wait_for(&mut st, std::time::Duration::from_millis(50));
        }
        Ok(())
    }

    /// Flushes the oldest immutable memtable: of the family whose oldest one holds the oldest
    /// WAL's writes (so the oldest WAL is freed first). Returns false if there was nothing to
    /// flush.
    pub(crate) fn flush_one(&self) -> Result<bool> {
        let (cf, mem, flushing) = {
            let mut st = self.state.lock();
            let front = st
                .cfs
                .values()
                .filter_map(|c| c.imms.front().map(|imm| (imm.log_number, c)))
                .min_by_key(|(log, _)| *log)
                .and_then(|(_, c)| c.imms.front().map(|imm| (c.data.clone(), imm.mem.clone())));
            let Some((cf, mem)) = front else { return Ok(false) };
            let Some(flushing) = self.begin_flush(&mut st) else { return Ok(false) };
            drop(st);
            (cf, mem, flushing)
        };
        let output = self.reserve_output();
        let number = output.number();
        let start = Instant::now();
        let mut blobs = BlobOutputs::default();
        let result = self.flush_memtable(&cf, &mem, number, &mut blobs);
        match result {
            Ok(bytes) => {
                self.report_flush("memtable", cf.id, &mem, number, bytes, start);
                // The file is in the version: it needs no protection from deletion any more.
                drop(output);
                // The flush mark goes last: `Db::flush` returns when it is gone, and the
                // deletion of the WALs this flush made obsolete logs to the info log (a test
                // that injects a write fault next must not see it taken by that line).
                self.delete_obsolete_files();
                drop(flushing);
                Ok(true)
            }
            Err(e) => {
                self.remove_failed_output(number);
                self.remove_failed_blob_outputs(&blobs);
                // The error before the flush mark goes: no thread retries the flush meanwhile.
                self.set_bg_error(&mut self.state.lock(), e.duplicate());
                Err(e)
            }
        }
    }

    /// Counts a flush of `mem` (of family `cf`) that wrote `bytes` (to table `number`, to blob files) since
    /// `start` in the stats (L0's row and `Flush(GB)`, its entries as L0's KeyIn) and the info
    /// log; `what` names it ("memtable", or "recovered memtable" for the flush of replayed WALs
    /// at open).
    pub(super) fn report_flush(
        &self,
        what: &str,
        cf: u32,
        mem: &MemTable,
        number: u64,
        (table_bytes, blob_bytes): (u64, u64),
        start: Instant,
    ) {
        let elapsed = start.elapsed();
        let micros = elapsed.as_micros() as u64;
        self.stats.record_flush(cf, table_bytes, blob_bytes, mem.num_entries(), micros);
        let bytes = table_bytes + blob_bytes;
        self.info_log.log(&format!(
            "[flush] {what} flushed to {} ({bytes} bytes) in {} ms",
            crate::filename::table_name(number),
            elapsed.as_millis()
        ));
    }

    /// Flushes `mem`, a memtable of family `cf`, to table `number` (and blob files, recorded
    /// in `blobs`: on an error the caller removes them); returns the bytes written to the
    /// table and to blob files.
    fn flush_memtable<'a>(
        &'a self,
        cf: &ColumnFamilyData,
        mem: &Arc<MemTable>,
        number: u64,
        blobs: &mut BlobOutputs<'a>,
    ) -> Result<(u64, u64)> {
        let meta = self.write_level0_table(&cf.opts, mem, number, blobs)?;
        kill_point!("flush.table_written");
        if meta.is_some() {
            self.fs.sync_dir(&self.path)?;
        }
        let bytes = (meta.as_ref().map_or(0, |m| m.file_size), blobs.bytes);
        // With several families, the WALs are synced before the MANIFEST records this flush
        // (RocksDB's `SyncClosedLogs`): else a power loss could keep this family's writes (in
        // the table) and drop another family's earlier ones (in an unsynced WAL), which is no
        // prefix of the writes.
        if self.state.lock().cfs.len() > 1 {
            if let Some(w) = self.wal.lock().as_mut() {
                self.sync_wal(w)?;
            }
        }
        let mut vs = self.versions.lock();
        if vs.current_of(cf.id).is_none() {
            // The family was dropped meanwhile (its drop holds `versions` too): the table is in
            // no version, and obsolete-file deletion removes it.
            return Ok((0, 0));
        }
        let mut edit = VersionEdit::default();
        edit.cf.family = cf.id;
        let idle = {
            let st = self.state.lock();
            let idle = idle_families(&st, cf.id, &vs);
            let cf = st.cf(cf.id).ok_or_else(|| Error::Busy("column family dropped".into()))?;
            let front =
                cf.imms.front().ok_or_else(|| Error::Busy("memtable list changed".into()))?;
            if !Arc::ptr_eq(&front.mem, mem) {
                return Err(Error::Busy("memtable list changed during flush".into()));
            }
            // Logs older than the next memtable's are no longer needed.
            edit.log_number = Some(cf.imms.get(1).map_or(cf.mem_log_number, |i| i.log_number));
            idle
        };
        if let Some(m) = meta {
            edit.new_files.push((0, m));
        }
        edit.blob_file_additions = std::mem::take(&mut blobs.additions);
        let seq = vs.last_sequence().max(self.visible_sequence());
        vs.set_last_sequence(seq);
        vs.log_and_apply(edit)?;
        kill_point!("flush.manifest_written");
        // Families with nothing unflushed move their log number up to their (empty) active
        // memtable's WAL, so the WALs before it are not kept for them (RocksDB advances an
        // empty family's log number at a flush the same way).
        for (id, log) in idle {
            let mut e = VersionEdit { log_number: Some(log), ..Default::default() };
            e.cf.family = id;
            vs.log_and_apply(e)?;
        }
        let current = vs.current_of(cf.id);
        let mut st = self.state.lock();
        let mut retired = None;
        if let (Some(state), Some(current)) = (st.cf_mut(cf.id), current) {
            state.imms.pop_front();
            state.current = current;
            retired = self.install_super_version(&st, cf.id);
        }
        drop(st);
        drop(vs);
        // Likely the last holder of the flushed memtable: freed here, with no lock held.
        drop(retired);
        // WALs below the new log number are obsolete: no need to sync the ones a switch left
        // unsynced (`write.rs`). The `wal` lock comes before `versions` and `state`.
        // They are closed after the lock is released: closing a WAL appended through a memory
        // mapping unmaps its dirty pages and truncates the file (milliseconds for a 64 MiB
        // WAL), which writers waiting on the `wal` lock would wait for too.
        // Below the oldest WAL any family still needs (at most this family's new log number),
        // not only this family's: with `atomic_flush` off another family's memtable may hold
        // writes in a WAL below it.
        let min_log = self.state.lock().min_log_number();
        let obsolete: Vec<(u64, LogWriter)> = match self.wal.lock().as_mut() {
            Some(w) => w.unsynced.extract_if(.., |(n, _)| *n < min_log).collect(),
            None => Vec::new(),
        };
        drop(obsolete);
        Ok(bytes)
    }
}

/// The live families other than `flushing` with no unflushed write whose MANIFEST log number
/// is behind their active memtable's WAL: (id, that WAL's number). Called with `versions` and
/// `state` held.
fn idle_families(st: &DbState, flushing: u32, vs: &crate::version::VersionSet) -> Vec<(u32, u64)> {
    st.cfs
        .iter()
        .filter(|(&id, c)| id != flushing && c.all_flushed())
        .filter(|(&id, c)| vs.log_number_of(id).is_some_and(|l| l < c.mem_log_number))
        .map(|(&id, c)| (id, c.mem_log_number))
        .collect()
}

#[cfg(test)]
mod tests;
