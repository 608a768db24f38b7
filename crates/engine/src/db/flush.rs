//! Flush: writes an immutable memtable to a new L0 SST and records it in the MANIFEST.
//!
//! Who calls: a background thread (one flush at a time, oldest memtable first) and recovery
//! (`open.rs`, for memtables rebuilt from WALs). Locks: `state` briefly to pick and to install;
//! `versions` around the MANIFEST write; none while the table is written.

use std::sync::Arc;
use std::time::Instant;

use super::core::DbInner;
use crate::compaction::job::stripe;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::fs::rate_limiter::{IoPriority, RateLimitedFile};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::key::{compare_internal, parse_internal_key, InternalKey, ValueKind, MAX_SEQUENCE};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sst::{TableBuilder, TableBuilderOptions};
use crate::version::{FileMetaData, VersionEdit};

/// Builder options for a table written to `level`.
pub(crate) fn table_options(opts: &Options, level: usize, bottommost: bool) -> TableBuilderOptions {
    TableBuilderOptions {
        block_size: opts.block_size,
        block_restart_interval: opts.block_restart_interval,
        bloom_bits_per_key: opts.bloom_bits_per_key,
        compression: opts.compression_for_level(level, bottommost),
        partitioned_index: opts.index_type == crate::options::IndexType::TwoLevelIndexSearch,
        partition_filters: opts.partition_filters,
        metadata_block_size: opts.metadata_block_size,
    }
}

/// File metadata for a finished table holding `tombstones` besides its point entries.
pub(crate) fn file_meta(
    number: u64,
    props: &crate::sst::TableProperties,
    tombstones: &[RangeTombstone],
) -> FileMetaData {
    let mut smallest: Option<InternalKey> = None;
    let mut largest: Option<InternalKey> = None;
    let mut consider = |k: InternalKey| {
        if smallest.as_ref().is_none_or(|s| compare_internal(k.encoded(), s.encoded()).is_lt()) {
            smallest = Some(k.clone());
        }
        if largest.as_ref().is_none_or(|l| compare_internal(k.encoded(), l.encoded()).is_gt()) {
            largest = Some(k);
        }
    };
    if !props.smallest_point_key.is_empty() {
        consider(InternalKey(props.smallest_point_key.clone()));
        consider(InternalKey(props.largest_point_key.clone()));
    }
    for t in tombstones {
        consider(InternalKey::new(&t.start, t.seq, ValueKind::RangeDelete));
        // The end is exclusive: a sentinel that sorts before every real entry of `end`.
        consider(InternalKey::new(&t.end, MAX_SEQUENCE, ValueKind::RangeDelete));
    }
    FileMetaData {
        number,
        file_size: props.file_size,
        smallest: smallest.unwrap_or_default(),
        largest: largest.unwrap_or_default(),
        smallest_seq: props.smallest_seq,
        largest_seq: props.largest_seq,
        num_entries: props.num_entries,
        num_deletions: props.num_deletions + props.num_range_deletions,
        reader: Default::default(),
    }
}

impl DbInner {
    /// Writes `mem` to SST `number` at L0; `None` if the memtable holds nothing.
    ///
    /// Drops what no reader can see, as RocksDB's flush does: of the versions of a key in one
    /// snapshot stripe (between two live snapshots, see `compaction::job`) only the newest is
    /// written, and a version covered by a range tombstone of its own stripe is not written.
    /// Deletions are kept (older data may lie below L0). Safe for readers without a snapshot:
    /// they load their SuperVersion before their sequence number, so a version this drops is
    /// shadowed by one at or below any sequence a reader of the new file can hold.
    pub(crate) fn write_level0_table(
        &self,
        mem: &Arc<MemTable>,
        number: u64,
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
        let bottommost = self.opts.num_levels == 1;
        let mut b = TableBuilder::new(
            table_options(&self.opts, 0, bottommost),
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
        let mut cur_key: Vec<u8> = Vec::new();
        let mut last_stripe = usize::MAX;
        while it.valid() {
            let ikey = it.key();
            let Some(p) = parse_internal_key(ikey) else {
                return Err(Error::corruption("memtable", 0, "unparsable internal key"));
            };
            if p.user_key != cur_key.as_slice() {
                cur_key.clear();
                cur_key.extend_from_slice(p.user_key);
                last_stripe = usize::MAX;
            }
            let s = stripe(&snapshots, p.seq);
            let mut keep = s != last_stripe;
            last_stripe = s;
            if keep {
                if let Some(t) = &covering {
                    let bound = snapshots.get(s).copied().unwrap_or(MAX_SEQUENCE);
                    let by = t.max_covering_seq(p.user_key, bound);
                    keep = !(by > p.seq && stripe(&snapshots, by) == s);
                }
            }
            if keep {
                b.add(ikey, it.value())?;
            }
            it.next();
        }
        it.status()?;
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
        Ok(Some(file_meta(number, &props, &live)))
    }

    /// Flushes the oldest immutable memtable. Returns false if there was nothing to flush.
    pub(crate) fn flush_one(&self) -> Result<bool> {
        let (mem, number) = {
            let mut st = self.state.lock();
            if st.flush_running || st.imms.is_empty() {
                return Ok(false);
            }
            st.flush_running = true;
            let Some(imm) = st.imms.front() else { return Ok(false) };
            let mem = imm.mem.clone();
            drop(st);
            let number = self.versions.lock().new_file_number();
            self.state.lock().pending_outputs.insert(number);
            (mem, number)
        };
        let start = Instant::now();
        let result = self.flush_memtable(&mem, number);
        let mut st = self.state.lock();
        st.flush_running = false;
        st.pending_outputs.remove(&number);
        match result {
            Ok(bytes) => {
                self.stats.record_flush(bytes, start.elapsed().as_micros() as u64);
                drop(st);
                self.info_log.log(&format!(
                    "[flush] memtable flushed to {} ({bytes} bytes) in {} ms",
                    crate::filename::table_name(number),
                    start.elapsed().as_millis()
                ));
                self.delete_obsolete_files();
                self.done_cv.notify_all();
                self.bg_cv.notify_all();
                Ok(true)
            }
            Err(e) => {
                let _ = self.fs.remove_file(&table_path(&self.path, number));
                self.set_bg_error(&mut st, e.duplicate());
                Err(e)
            }
        }
    }

    fn flush_memtable(&self, mem: &Arc<MemTable>, number: u64) -> Result<u64> {
        let meta = self.write_level0_table(mem, number)?;
        if meta.is_some() {
            self.fs.sync_dir(&self.path)?;
        }
        let bytes = meta.as_ref().map_or(0, |m| m.file_size);
        let mut vs = self.versions.lock();
        let mut edit = VersionEdit::default();
        let next_log = {
            let st = self.state.lock();
            let front =
                st.imms.front().ok_or_else(|| Error::Busy("memtable list changed".into()))?;
            if !Arc::ptr_eq(&front.mem, mem) {
                return Err(Error::Busy("memtable list changed during flush".into()));
            }
            // Logs older than the next memtable's are no longer needed.
            let next_log = st.imms.get(1).map_or(st.mem_log_number, |i| i.log_number);
            edit.log_number = Some(next_log);
            next_log
        };
        if let Some(m) = meta {
            edit.new_files.push((0, m));
        }
        let seq = vs.last_sequence().max(self.visible_sequence());
        vs.set_last_sequence(seq);
        vs.log_and_apply(edit)?;
        let current = vs.current();
        let mut st = self.state.lock();
        st.imms.pop_front();
        st.current = current;
        self.install_super_version(&st);
        drop(st);
        drop(vs);
        // WALs below the new log number are obsolete: no need to sync the ones a switch left
        // unsynced (`write.rs`). The `wal` lock comes before `versions` and `state`.
        if let Some(w) = self.wal.lock().as_mut() {
            w.unsynced.retain(|(n, _)| *n >= next_log);
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests;
