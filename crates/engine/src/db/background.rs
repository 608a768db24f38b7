//! Background work: one thread for flushes and [`max_compactions`] threads for compactions
//! (several at once when their inputs are disjoint), as RocksDB divides `max_background_jobs`
//! into its HIGH and LOW pools; and the deletion of files no live version needs. Compaction
//! threads run `Options::compaction_thread_nice` levels below the thread that opened the
//! database (Linux): flushes and the foreground win the CPU from them on a busy machine (a
//! writer runnable behind a compaction for a scheduler tick is a put of milliseconds).
//!
//! Who calls: threads started by `mod.rs` (one per [`Role`] of [`thread_roles`]); `Db::flush`
//! and `Db::compact_range` wait on `done_cv`. Locks: `state` to pick a job and to record its
//! end; never across IO. A job that panics is caught by its thread, logged, and followed by a
//! pause (doubling with each panic in a row); the thread goes on.

use std::collections::HashSet;
use std::sync::Arc;

use super::cf_data::ColumnFamilyData;
use super::core::{DbInner, DbState};
use super::jobs::CompactionGuard;
use crate::compaction::{picker_for, Compaction};
use crate::filename::{parse_file_name, FileType};

/// How many compactions may run at once: the background jobs minus those kept for flushes
/// (a quarter, at least one), as RocksDB divides `max_background_jobs`; at least one.
pub(crate) fn max_compactions(opts: &crate::options::Options) -> usize {
    let jobs = opts.max_background_jobs;
    jobs.saturating_sub((jobs / 4).max(1)).max(1)
}

/// The pause after a background job panics, doubled for each further panic in a row up to
/// [`MAX_PAUSE`].
const PANIC_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);
const MAX_PAUSE: std::time::Duration = std::time::Duration::from_secs(30);

/// The message a panic carried (`panic!` with a string or a format), for the info log.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

/// What one background thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Flushes of immutable memtables (one at a time).
    Flush,
    /// Compactions, at the compaction threads' priority.
    Compaction,
}

/// The background threads a database starts: one flush thread, then one per compaction that
/// may run at once. Like RocksDB's pools, `max_background_jobs = 1` still gets one of each.
pub(crate) fn thread_roles(opts: &crate::options::Options) -> Vec<Role> {
    let mut roles = vec![Role::Flush];
    roles.extend(std::iter::repeat_n(Role::Compaction, max_compactions(opts)));
    roles
}

/// Lowers the calling thread's CPU priority by `nice` levels (0: unchanged; the result is at
/// most 19, the lowest). Relative, so a process started at another nice value keeps the same
/// distance between its compactions and the rest. Linux sets it per thread (`setpriority` on
/// the thread id); elsewhere that would apply to the whole process, so it is skipped. A failure
/// is returned for the info log, never fatal.
fn lower_this_thread(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if nice != 0 {
        // SAFETY: gettid, getpriority and setpriority take plain integers and touch no memory
        // of ours; errno is this thread's.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            if now == -1 && *libc::__errno_location() != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::setpriority(libc::PRIO_PROCESS, tid, (now + nice).min(19)) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

/// The next automatic compaction, of the first family (taking turns, from the one after the
/// family picked last) whose picker finds one; its round-robin cursor advanced.
fn pick_compaction(st: &mut DbState) -> Option<(Arc<ColumnFamilyData>, Compaction)> {
    let turn = st.compaction_turn;
    let (id, c, cursor) = {
        let jobs = &st.jobs;
        let after = (std::ops::Bound::Excluded(turn), std::ops::Bound::Unbounded);
        let mut families = st.cfs.range(after).chain(st.cfs.range(..=turn));
        families.find_map(|(&id, cf)| {
            let opts = &cf.data.opts;
            if opts.disable_auto_compactions {
                return None;
            }
            let picker = picker_for(opts);
            let c = picker.pick(&cf.current, opts, &jobs.view(&cf.cursors))?;
            let cursor = picker.cursor_after(&c);
            Some((id, c, cursor))
        })?
    };
    let cf = st.cfs.get_mut(&id)?;
    if let Some((level, key)) = cursor {
        if let Some(slot) = cf.cursors.get_mut(level) {
            *slot = key;
        }
    }
    let data = cf.data.clone();
    st.compaction_turn = id;
    Some((data, c))
}

impl DbInner {
    /// The loop of one background thread running `role`'s jobs; returns at shutdown.
    pub(crate) fn background_loop(self: &Arc<Self>, role: Role) {
        if role == Role::Compaction {
            let nice = self.opts.compaction_thread_nice;
            if let Err(e) = lower_this_thread(nice) {
                self.info_log.log(&format!("[WARN] compaction thread at nice {nice}: {e}"));
            }
        }
        // Panics of this thread's jobs in a row.
        let mut panics = 0u32;
        loop {
            enum Job<'a> {
                PrepareWal,
                Flush,
                Compact(Arc<ColumnFamilyData>, Box<Compaction>, CompactionGuard<'a>),
            }
            let job = {
                let mut st = self.state.lock();
                loop {
                    if st.shutting_down {
                        return;
                    }
                    if st.bg_error.is_none() {
                        if role == Role::Flush && st.wal_wanted {
                            st.wal_wanted = false;
                            break Job::PrepareWal;
                        }
                        if role == Role::Flush && !st.jobs.flush_running() && st.has_imms() {
                            break Job::Flush;
                        }
                        if role == Role::Compaction
                            && !st.jobs.manual_running()
                            && !st.compactions_paused
                            && st.jobs.compactions_running() < max_compactions(&self.opts)
                        {
                            if let Some((cf, c)) = pick_compaction(&mut st) {
                                let guard = self.begin_compaction(&mut st, &c);
                                break Job::Compact(cf, Box::new(c), guard);
                            }
                        }
                    }
                    self.bg_cv.wait(&mut st);
                }
            };
            // A job that panics (a bug) unwinds to here: its guards have given back its marks,
            // and the thread lives on to run the next job, after a pause that doubles with each
            // panic in a row (a job that always panics must not spin). Before, the thread died,
            // and with one thread of its role no flush or compaction ran again until reopen:
            // writes stopped for good at the next stall trigger.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match job {
                Job::PrepareWal => self.prepare_wal(),
                Job::Flush => {
                    let _ = self.flush_one();
                }
                Job::Compact(cf, c, guard) => {
                    let _ = self.run_compaction(&cf, &c);
                    drop(guard);
                }
            }));
            match ran {
                Ok(()) => panics = 0,
                Err(payload) => {
                    panics += 1;
                    let pause =
                        PANIC_PAUSE.saturating_mul(1 << (panics.min(10) - 1)).min(MAX_PAUSE);
                    self.info_log.log(&format!(
                        "[ERROR] a {role:?} job panicked ({}); panic {panics} in a row, the thread \
                         goes on in {} ms",
                        panic_message(payload.as_ref()),
                        pause.as_millis()
                    ));
                    let mut st = self.state.lock();
                    let until = std::time::Instant::now() + pause;
                    while !st.shutting_down && std::time::Instant::now() < until {
                        self.bg_cv.wait_until(&mut st, until);
                    }
                }
            }
        }
    }

    /// Deletes table `number`, written by a job that failed (a flush, a compaction, an
    /// ingestion), unless the MANIFEST write that failed may have committed it
    /// ([`crate::version::VersionSet::in_doubt`]): then it stays until the next open, which
    /// finds out from the MANIFEST that CURRENT names; nor if a live version lists it (a flush
    /// whose own edit committed fails at the idle families' edit after it). Takes `versions`
    /// briefly.
    pub(crate) fn remove_failed_output(&self, number: u64) {
        let (in_doubt, live) = {
            let vs = self.versions.lock();
            (vs.in_doubt().contains(&number), vs.live_files().contains(&number))
        };
        if live {
            return;
        }
        if in_doubt {
            self.info_log.log(&format!(
                "[WARN] keeping {}: the MANIFEST write that added it failed, but may have \
                 committed",
                crate::filename::table_name(number)
            ));
            return;
        }
        self.table_cache.evict(number);
        let _ = self.fs.remove_file(&crate::filename::table_path(&self.path, number));
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
            // Added by a MANIFEST write that failed but may have committed: maybe referenced.
            live.extend(vs.in_doubt());
            (live, vs.manifest_file_number(), st.min_log_number().min(vs.log_number()))
        };
        for name in names {
            let delete = match parse_file_name(&name) {
                Some(FileType::Table(n) | FileType::Blob(n)) => !live.contains(&n),
                Some(FileType::Wal(n)) => n < min_log,
                Some(FileType::Manifest(n)) => n < manifest,
                Some(FileType::Temp) => true,
                _ => false,
            };
            if delete {
                crate::kill_point::kill_point!("obsolete.deleting");
                match parse_file_name(&name) {
                    Some(FileType::Table(n)) => self.table_cache.evict(n),
                    Some(FileType::Blob(n)) => self.blobs.evict(n),
                    _ => {}
                }
                match self.fs.remove_file(&self.path.join(&name)) {
                    Ok(()) => self.info_log.log(&format!("[delete] obsolete file {name}")),
                    Err(e) => self.info_log.log(&format!("[WARN] could not delete {name}: {e}")),
                }
            }
        }
    }
}
