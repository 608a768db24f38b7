//! Background work: `max_background_jobs` threads that run flushes (first) and compactions
//! (several at once when their inputs are disjoint, up to [`max_compactions`]), and the
//! deletion of files no live version needs.
//!
//! Who calls: threads started by `open.rs`; `Db::flush` and `Db::compact_range` wait on
//! `done_cv`. Locks: `state` to pick a job and to record its end; never across IO.

use std::collections::HashSet;
use std::sync::Arc;

use super::core::DbInner;
use super::jobs::CompactionGuard;
use crate::compaction::{picker_for, Compaction};
use crate::filename::{parse_file_name, FileType};

/// How many compactions may run at once: the background jobs minus those kept for flushes
/// (a quarter, at least one), as RocksDB divides `max_background_jobs`; at least one.
pub(crate) fn max_compactions(opts: &crate::options::Options) -> usize {
    let jobs = opts.max_background_jobs;
    jobs.saturating_sub((jobs / 4).max(1)).max(1)
}

impl DbInner {
    /// The loop of one background thread; returns at shutdown.
    pub(crate) fn background_loop(self: &Arc<Self>) {
        loop {
            enum Job<'a> {
                Flush,
                Compact(Box<Compaction>, CompactionGuard<'a>),
            }
            let job = {
                let mut st = self.state.lock();
                loop {
                    if st.shutting_down {
                        return;
                    }
                    if st.bg_error.is_none() {
                        if !st.jobs.flush_running() && !st.imms.is_empty() {
                            break Job::Flush;
                        }
                        if !self.opts.disable_auto_compactions
                            && !st.jobs.manual_running()
                            && !st.compactions_paused
                            && st.jobs.compactions_running() < max_compactions(&self.opts)
                        {
                            let picker = picker_for(&self.opts);
                            if let Some(c) = picker.pick(&st.current, &self.opts, &st.jobs.view()) {
                                if let Some((level, key)) = picker.cursor_after(&c) {
                                    st.jobs.set_cursor(level, key);
                                }
                                let guard = self.begin_compaction(&mut st, &c);
                                break Job::Compact(Box::new(c), guard);
                            }
                        }
                    }
                    self.bg_cv.wait(&mut st);
                }
            };
            match job {
                Job::Flush => {
                    let _ = self.flush_one();
                }
                Job::Compact(c, guard) => {
                    let _ = self.run_compaction(&c);
                    drop(guard);
                }
            }
        }
    }

    /// Deletes SSTs no live version references, WALs older than the oldest needed, old
    /// MANIFESTs and leftover temp files. Only files the MANIFEST already dropped are deleted.
    pub(crate) fn delete_obsolete_files(&self) {
        let _one_at_a_time = self.obsolete_lock.lock();
        // List first: a file created after the listing is not considered, and a file in the
        // listing that a running job writes is in `pending_outputs` by the time we look (jobs
        // register a number before creating its file).
        let Ok(names) = self.fs.list_dir(&self.path) else { return };
        let (live, manifest, min_log) = {
            let vs = self.versions.lock();
            let st = self.state.lock();
            let mut live: HashSet<u64> = vs.live_files();
            live.extend(st.jobs.pending_outputs());
            let min_log = st.imms.front().map_or(st.mem_log_number, |i| i.log_number);
            (live, vs.manifest_file_number(), min_log.min(vs.log_number()))
        };
        for name in names {
            let delete = match parse_file_name(&name) {
                Some(FileType::Table(n)) => !live.contains(&n),
                Some(FileType::Wal(n)) => n < min_log,
                Some(FileType::Manifest(n)) => n < manifest,
                Some(FileType::Temp) => true,
                _ => false,
            };
            if delete {
                if let Some(FileType::Table(n)) = parse_file_name(&name) {
                    self.table_cache.evict(n);
                }
                match self.fs.remove_file(&self.path.join(&name)) {
                    Ok(()) => self.info_log.log(&format!("[delete] obsolete file {name}")),
                    Err(e) => self.info_log.log(&format!("[WARN] could not delete {name}: {e}")),
                }
            }
        }
    }
}
