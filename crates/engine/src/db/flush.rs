//! Flush: writes an immutable memtable to a new L0 SST and records it in the MANIFEST.
//!
//! Who calls: a background thread (one flush at a time, oldest memtable first) and recovery
//! (`open.rs`, for memtables rebuilt from WALs). Locks: `state` briefly to pick and to install;
//! `versions` around the MANIFEST write; none while the table is written.

use std::sync::Arc;
use std::time::Instant;

use super::core::DbInner;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::fs::rate_limiter::{IoPriority, RateLimitedFile};
use crate::iter::range_del::RangeTombstone;
use crate::key::{compare_internal, InternalKey, ValueKind, MAX_SEQUENCE};
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
    }
}

impl DbInner {
    /// Writes `mem` to SST `number` at L0; `None` if the memtable holds nothing.
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
        let mut it = mem.iter();
        it.seek_to_first();
        while it.valid() {
            b.add(it.key(), it.value())?;
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
        {
            let st = self.state.lock();
            let front =
                st.imms.front().ok_or_else(|| Error::Busy("memtable list changed".into()))?;
            if !Arc::ptr_eq(&front.mem, mem) {
                return Err(Error::Busy("memtable list changed during flush".into()));
            }
            // Logs older than the next memtable's are no longer needed.
            let next_log = st.imms.get(1).map_or(st.mem_log_number, |i| i.log_number);
            edit.log_number = Some(next_log);
        }
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
        Ok(bytes)
    }
}
