//! The write path's first stage and the memtable switch: for a group's leader (`write_group.rs`
//! runs the groups), making room, allocating sequence numbers and appending the group's WAL
//! record; switching a full memtable to the immutable list with a new WAL; syncing WALs; making
//! the next WAL ahead.
//!
//! Locks: the leader of the front group owns the WAL (`DbInner::wal`). Before appending, it makes
//! room: it switches a full memtable (once the groups still inserting into it have published),
//! then waits out whatever the write controller (`write_controller.rs`) imposes: a stop, or a
//! delay.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::alive_wals::wal_limit;
use super::cf_data::CfState;
use super::core::{ActiveWal, DbInner, DbState, Imm};
use super::stats::DbStats;
use super::write_mems::WriteMems;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename::wal_path;
use crate::fs::WritableFile;
use crate::kill_point::kill_point;
use crate::memtable::MemTable;
use crate::options::WalRecoveryMode;
use crate::wal::{LogWriter, PredecessorWal};

impl DbInner {
    /// Stage one of a group (`write_group.rs`), for its leader at the front of the queue: makes
    /// room (switching a full memtable, after the groups still inserting into it have
    /// published), allocates the group's sequence numbers and appends (and syncs, if a member
    /// asked) its WAL record. Returns the memtable the group inserts into and its first
    /// sequence number; on an error the database is read-only (the background error) and no
    /// sequence number was used.
    pub(super) fn append_group(
        &self,
        combined: &mut WriteBatch,
        sync: bool,
        disable_wal: bool,
        members: usize,
    ) -> Result<(Arc<WriteMems>, u64)> {
        let mems = self.make_room_for_write(combined.size_in_bytes() as u64)?;
        let first_seq = self.next_sequence();
        combined.set_sequence(first_seq);
        let count = u64::from(combined.count());
        if !disable_wal {
            let mut wal = self.wal.lock();
            let res = match wal.as_mut() {
                Some(w) => {
                    kill_point!("wal.append.before");
                    w.writer
                        .add_record(combined.data())
                        .map(|_| w.last_seq = first_seq + count.saturating_sub(1))
                        .and_then(|_| w.writer.flush())
                        .and_then(|_| {
                            kill_point!("wal.append.after");
                            if !sync {
                                return Ok(());
                            }
                            kill_point!("wal.sync.before");
                            self.sync_wal(w)?;
                            kill_point!("wal.sync.after");
                            Ok(())
                        })
                        .and_then(|_| w.writer.writeback_every(self.opts.wal_bytes_per_sync))
                }
                None => Err(Error::Busy("the WAL is closed".into())),
            };
            if let Err(e) = res {
                let mut st = self.state.lock();
                self.set_bg_error(&mut st, e.duplicate());
                return Err(e);
            }
            DbStats::add(&self.stats.wal_bytes, combined.size_in_bytes() as u64);
            DbStats::add(&self.stats.wal_writes, members as u64);
            if sync {
                DbStats::add(&self.stats.wal_syncs, 1);
            }
        }
        self.allocated_sequence.store(first_seq + count - 1, Ordering::Release);
        // Taken under the state lock when the room was made, after any switch; none runs while
        // a group of the queue's front leader is staged.
        Ok((mems, first_seq))
    }

    /// Ensures the active memtable has room (switching a full one to the immutable list), then
    /// applies the write controller: waits while writes are stopped, and sleeps out the delay
    /// for `bytes` while they are delayed. Stall time goes to the `stall_micros` counter.
    /// Returns the active memtables (`DbState::mems`) as of the last look, which found room.
    fn make_room_for_write(&self, bytes: u64) -> Result<Arc<WriteMems>> {
        // When the first stall began (the clock is read only then: not on every write).
        let mut stalled: Option<Instant> = None;
        let mut delay_applied = false;
        let mut mems: Arc<WriteMems>;
        loop {
            let mut st = self.state.lock();
            DbInner::check_bg_error(&st)?;
            if st.shutting_down {
                return Err(Error::Busy("the database is closing".into()));
            }
            if self.write_controller.is_stopped() {
                if stalled.is_none() {
                    let cause = self.write_controller.condition().1;
                    self.info_log.log(&format!("[WARN] Stopping writes: {cause:?}"));
                }
                stalled.get_or_insert_with(Instant::now);
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut st, Duration::from_millis(100));
                continue;
            }
            if st.mems.any_full() {
                drop(st);
                // Groups still inserting into the full memtable finish first: it must hold all
                // of its WAL's writes before it is flushed.
                self.drain_groups();
                // The switch recalculates the stall condition: loop to look at it.
                self.switch_families(|_, cf| cf.mem_is_full())?;
                continue;
            }
            if let Some(oldest) = self.wals_over_limit(&mut st) {
                drop(st);
                self.drain_groups();
                // The families with writes in the oldest WAL: once flushed, it is deleted. Their
                // new memtables start after it, so this does not fire again for them.
                self.switch_families(|_, cf| cf.mem_log_number <= oldest)?;
                continue;
            }
            mems = Arc::clone(&st.mems);
            drop(st);
            // The delay's token bucket is consulted only while writes are delayed.
            if !delay_applied && self.write_controller.needs_delay() {
                delay_applied = true;
                let t = Instant::now();
                let delay = self.write_controller.delay(t, bytes);
                if !delay.is_zero() {
                    stalled.get_or_insert(t);
                    // Sleep in small steps so that a lifted delay lets the write go early.
                    while t.elapsed() < delay && self.write_controller.needs_delay() {
                        std::thread::sleep(Duration::from_millis(1).min(delay));
                    }
                    continue;
                }
            }
            break;
        }
        if let Some(start) = stalled {
            DbStats::add(&self.stats.stall_micros, start.elapsed().as_micros() as u64);
        }
        Ok(mems)
    }

    /// [`crate::Db::sync_wal`]: with the `wal` lock (so every record appended before it is
    /// whole in the file), syncs the current WAL and those a switch left unsynced. A failure
    /// sets the background error, as a failed sync of a synced write does.
    pub(super) fn sync_wal_now(&self) -> Result<()> {
        self.check_writable()?;
        DbInner::check_bg_error(&self.state.lock())?;
        let mut wal = self.wal.lock();
        let res = match wal.as_mut() {
            Some(w) => self.sync_wal(w),
            None => Err(Error::Busy("the WAL is closed".into())),
        };
        drop(wal);
        match res {
            Ok(()) => {
                DbStats::add(&self.stats.wal_syncs, 1);
                Ok(())
            }
            Err(e) => {
                let mut st = self.state.lock();
                self.set_bg_error(&mut st, e.duplicate());
                Err(e)
            }
        }
    }

    /// Syncs the current WAL `w` (the caller holds the `wal` lock): first the earlier WALs a
    /// switch left unsynced, then the directory if a WAL's entry in it is not durable yet, then
    /// `w` itself. So a synced write never survives a power loss that drops an earlier write.
    pub(super) fn sync_wal(&self, w: &mut ActiveWal) -> Result<()> {
        for (_, old) in w.unsynced.iter_mut() {
            old.sync()?;
        }
        w.unsynced.clear();
        if self.wal_dir_unsynced.load(Ordering::Acquire) {
            self.fs.sync_dir(&self.path)?;
            self.wal_dir_unsynced.store(false, Ordering::Release);
        }
        w.writer.sync()
    }

    /// With several families and `atomic_flush` off: when the WALs before the active one hold
    /// more than `max_total_wal_size` bytes, the oldest WAL some family still needs (its active
    /// memtable, if one holds writes there, is to be switched). Called with the state lock.
    fn wals_over_limit(&self, st: &mut DbState) -> Option<u64> {
        if st.cfs.len() < 2 || self.opts.atomic_flush {
            return None;
        }
        let oldest = st.min_log_number();
        st.alive_wals.prune(oldest);
        if st.alive_wals.bytes() <= wal_limit(&self.opts, st.cfs.values()) {
            return None;
        }
        let switch = st.cfs.values().any(|c| !c.mem_is_empty() && c.mem_log_number <= oldest);
        switch.then_some(oldest)
    }

    /// Moves the active memtable of every family that holds writes to its immutable list and
    /// starts a new WAL, so that the families' memtables are cut at one WAL (RocksDB's atomic
    /// flush): [`DbInner::switch_families`] with every family picked.
    pub(crate) fn switch_memtable(&self) -> Result<()> {
        self.switch_families(|_, _| true)
    }

    /// Starts a new WAL and moves the active memtable of each family `pick` chooses (of every
    /// family, with `atomic_flush`) that holds writes to its immutable list. A family with an
    /// empty memtable keeps it, which now starts at the new WAL; a family not picked keeps its
    /// memtable and the WAL its writes began in, so its writes span WALs until it switches.
    /// Called by the write leader (or with the write queue otherwise quiet).
    pub(crate) fn switch_families(&self, pick: impl Fn(u32, &CfState) -> bool) -> Result<()> {
        // The WAL the flush thread made ahead (`prepare_wal`), else one made now (numbered
        // under the same lock, so after any WAL prepared).
        let (log_number, file) = {
            let mut next = self.next_wal.lock();
            match next.take() {
                Some(prepared) => prepared,
                None => {
                    let n = self.versions.lock().new_file_number();
                    (n, self.create_wal(n)?)
                }
            }
        };
        // The directory entry is synced by the first synced write to this WAL (`sync_wal`), not
        // here: a directory fsync costs tens of milliseconds, and a write waits on the switch
        // (the strict recovery modes excepted, below).
        let mut new_writer = LogWriter::new(file);
        let old_wal = {
            let mut wal = self.wal.lock();
            // No holes after a power loss: the new WAL starts with what the old one held (its
            // number, size and last sequence), so recovery stops at a WAL whose predecessor lost
            // its unsynced tail; and the first synced write to the new WAL syncs the old one
            // first (`sync_wal`). The old WAL's fsync is thus off the write path, as in RocksDB.
            // The strict recovery modes would fail the open on such a cut tail instead of
            // stopping there, so for them the old WAL is synced here, as before.
            let defer = matches!(
                self.opts.wal_recovery_mode,
                WalRecoveryMode::PointInTimeRecovery | WalRecoveryMode::SkipAnyCorruptedRecords
            );
            if !defer {
                // The strict modes also need every WAL but the last to exist after a power
                // loss: the new WAL's directory entry is synced now, not by its first synced
                // write.
                self.fs.sync_dir(&self.path)?;
            }
            let mut old_wal = None;
            let unsynced = match wal.take() {
                Some(old) => {
                    let pred = PredecessorWal {
                        number: old.number,
                        size: old.writer.file_size(),
                        last_seq: old.last_seq,
                    };
                    let ActiveWal { writer: mut old_writer, number, mut unsynced, .. } = old;
                    let step = new_writer
                        .add_predecessor(&pred)
                        .and_then(|_| new_writer.flush())
                        .and_then(|_| if defer { old_writer.flush() } else { old_writer.sync() });
                    if let Err(e) = step {
                        // Nothing switched: the old WAL stays the active one.
                        *wal = Some(ActiveWal { writer: old_writer, number, unsynced, ..old });
                        drop(wal);
                        self.discard_unused_wal(log_number, new_writer);
                        return Err(e);
                    }
                    old_wal = Some((number, pred.size));
                    if defer {
                        unsynced.push((number, old_writer));
                    }
                    unsynced
                }
                None => Vec::new(),
            };
            kill_point!("wal.switch.new_wal_ready");
            *wal = Some(ActiveWal { unsynced, ..ActiveWal::new(new_writer, log_number) });
            self.wal_dir_unsynced.store(defer, Ordering::Release);
            old_wal
        };
        let mut st = self.state.lock();
        st.wal_wanted = true;
        let atomic = self.opts.atomic_flush;
        let mut switched = Vec::new();
        for (&id, cf) in st.cfs.iter_mut() {
            if cf.mem_is_empty() {
                cf.mem_log_number = log_number;
                continue;
            }
            if !atomic && !pick(id, cf) {
                continue;
            }
            let old_log = std::mem::replace(&mut cf.mem_log_number, log_number);
            let old = std::mem::replace(&mut cf.mem, Arc::new(MemTable::new()));
            let tombstones = old.fragmented_range_tombstones().unwrap_or_default();
            cf.imms.push_back(Imm { mem: old, log_number: old_log, tombstones });
            switched.push(id);
        }
        if let Some((number, bytes)) = old_wal {
            st.alive_wals.push(number, bytes);
        }
        let oldest = st.min_log_number();
        st.alive_wals.prune(oldest);
        self.publish_write_mems(&mut st);
        let retired: Vec<_> =
            switched.into_iter().filter_map(|id| self.install_super_version(&st, id)).collect();
        drop(st);
        self.bg_cv.notify_all();
        drop(retired);
        Ok(())
    }

    /// Removes WAL `number`, which a failed switch never made active. It may hold a predecessor
    /// record, whole or torn; left in place, recovery would take it for the WAL after the
    /// active one and stop there (a torn record in a WAL that is not the last is damage, and a
    /// later WAL's predecessor would not be the WAL replayed before it), dropping every write
    /// made after the failed switch. If it cannot be removed, the database turns read-only
    /// (a background error), so that no later WAL holds acknowledged writes.
    fn discard_unused_wal(&self, number: u64, writer: LogWriter) {
        drop(writer);
        if let Err(e) = self.fs.remove_file(&wal_path(&self.path, number)) {
            self.info_log.log(&format!(
                "[ERROR] a failed memtable switch left {}: {e}",
                crate::filename::wal_name(number)
            ));
            self.set_bg_error(&mut self.state.lock(), e);
        }
    }

    /// Creates WAL `number`, preallocating what one memtable writes to it (a mapped WAL).
    pub(crate) fn create_wal(&self, number: u64) -> Result<Box<dyn WritableFile>> {
        let path = wal_path(&self.path, number);
        crate::wal::create_file(&*self.fs, &path, self.opts.wal_mmap_writes, self.wal_size_hint())
    }

    /// The length a WAL is expected to reach (its first allocation): a memtable's worth and
    /// an eighth for the records' headers.
    fn wal_size_hint(&self) -> u64 {
        self.opts.write_buffer_size as u64 / 8 * 9
    }

    /// Flush thread: makes the WAL the next memtable switch takes (numbered now, created, its
    /// disk space reserved), so that the writer does not wait for the file system's block
    /// allocation (a `fallocate` that reads a block bitmap from disk: 9-10 ms measured). A
    /// failure is logged; the switch then makes its WAL itself, as it does when none is ready.
    ///
    /// The `next_wal` lock is held from taking the number to storing the file, so a switch
    /// meanwhile waits and takes this WAL rather than making its own with a higher number: WAL
    /// numbers follow the order the WALs are written in (recovery replays them so).
    pub(crate) fn prepare_wal(&self) {
        let mut next = self.next_wal.lock();
        if next.is_some() {
            return;
        }
        let number = self.versions.lock().new_file_number();
        match self.create_wal(number) {
            // The number is above the active WAL's, so obsolete-file deletion keeps it.
            Ok(file) => {
                kill_point!("wal.prepare.created");
                *next = Some((number, file));
                drop(next);
                // Its preallocated pages into the page cache now, on this thread, outside the
                // lock (a switch may take the WAL meanwhile: the pages it writes are the same
                // page-cache pages): else the writer asks them in 256 KiB at a time
                // (`fs/mmap_file.rs`), a 60-120 us `madvise` once per 256 KiB of log in some
                // put, which a second writer waits behind too.
                if self.opts.wal_mmap_writes {
                    self.fs.will_need(&wal_path(&self.path, number), self.wal_size_hint());
                }
            }
            Err(e) => {
                drop(next);
                self.info_log.log(&format!("[WARN] preparing the next WAL: {e}"));
            }
        }
    }
}

#[cfg(test)]
#[path = "switch_tests.rs"]
mod switch_tests;
