//! The write path: a queue of writers whose front member, the leader, commits a whole group at
//! once: one WAL record (one fsync if any member asked `sync`), the memtable inserts, then the
//! sequence number is published so readers see the group all at once.
//!
//! Who calls: `Db::write`. Locks: the queue mutex only to join, lead or leave; the leader then
//! owns the WAL (`DbInner::wal`) and is the memtables' only writer. Before committing, the leader
//! makes room: it switches a full memtable to the immutable list (new WAL file), and stalls while
//! too many memtables wait for flush or L0 holds `level0_stop_writes_trigger` files.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::core::{DbInner, Imm};
use super::stats::DbStats;
use crate::batch::{BatchOp, WriteBatch};
use crate::error::{Error, Result};
use crate::filename::wal_path;
use crate::iter::range_del::FragmentedTombstones;
use crate::key::ValueKind;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::wal::LogWriter;

/// Largest group a leader assembles (bytes of batches).
const MAX_GROUP_BYTES: usize = 1 << 20;

struct Writer {
    batch: Mutex<Option<WriteBatch>>,
    sync: bool,
    disable_wal: bool,
    done: AtomicBool,
    result: Mutex<Option<Result<()>>>,
    cv: Condvar,
}

/// Writers waiting to commit, front first.
#[derive(Default)]
pub(crate) struct WriteQueue {
    q: Mutex<VecDeque<Arc<Writer>>>,
}

impl DbInner {
    /// Commits `batch`, possibly as part of a group led by another writer.
    pub(crate) fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let w = Arc::new(Writer {
            batch: Mutex::new(Some(batch)),
            sync: opts.sync,
            disable_wal: opts.disable_wal,
            done: AtomicBool::new(false),
            result: Mutex::new(None),
            cv: Condvar::new(),
        });
        let mut q = self.writers.q.lock();
        q.push_back(w.clone());
        loop {
            if w.done.load(Ordering::Acquire) {
                return w.result.lock().take().unwrap_or(Ok(()));
            }
            if q.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
                break;
            }
            w.cv.wait(&mut q);
        }
        // We lead: take a group from the front of the queue.
        let mut group: Vec<Arc<Writer>> = Vec::new();
        let mut bytes = 0usize;
        for m in q.iter() {
            if m.disable_wal != w.disable_wal {
                break;
            }
            // A `with_write_lock` holder (no batch) waits to become front itself: never group it.
            let Some(sz) = m.batch.lock().as_ref().map(|b| b.size_in_bytes()) else { break };
            if !group.is_empty() && bytes + sz > MAX_GROUP_BYTES {
                break;
            }
            bytes += sz;
            group.push(m.clone());
        }
        drop(q);
        let result = self.commit_group(&group);
        let mut q = self.writers.q.lock();
        for m in &group {
            q.pop_front();
            if !Arc::ptr_eq(m, &w) {
                *m.result.lock() = Some(match &result {
                    Ok(()) => Ok(()),
                    Err(e) => Err(e.duplicate()),
                });
                m.done.store(true, Ordering::Release);
                m.cv.notify_one();
            }
        }
        if let Some(front) = q.front() {
            front.cv.notify_one();
        }
        result
    }

    /// Runs `f` at the front of the write queue, so no write group is in flight meanwhile.
    pub(crate) fn with_write_lock<T>(&self, f: impl FnOnce() -> T) -> T {
        let w = Arc::new(Writer {
            batch: Mutex::new(None),
            sync: false,
            disable_wal: false,
            done: AtomicBool::new(false),
            result: Mutex::new(None),
            cv: Condvar::new(),
        });
        let mut q = self.writers.q.lock();
        q.push_back(w.clone());
        while !q.front().is_some_and(|f| Arc::ptr_eq(f, &w)) {
            w.cv.wait(&mut q);
        }
        drop(q);
        let r = f();
        let mut q = self.writers.q.lock();
        q.pop_front();
        if let Some(front) = q.front() {
            front.cv.notify_one();
        }
        r
    }

    fn commit_group(&self, group: &[Arc<Writer>]) -> Result<()> {
        let Some(leader) = group.first() else { return Ok(()) };
        self.make_room_for_write()?;
        let sync = group.iter().any(|m| m.sync);
        let mut batches: Vec<WriteBatch> =
            group.iter().filter_map(|m| m.batch.lock().take()).collect();
        let mut combined = match batches.len() {
            1 => batches.pop().unwrap_or_default(),
            _ => {
                let mut c = WriteBatch::new();
                for b in &batches {
                    c.append(b);
                }
                c
            }
        };
        let first_seq = self.visible_sequence() + 1;
        combined.set_sequence(first_seq);
        let count = u64::from(combined.count());
        if !leader.disable_wal {
            let mut wal = self.wal.lock();
            let res =
                match wal.as_mut() {
                    Some(w) => w
                        .add_record(combined.data())
                        .and_then(|_| w.flush())
                        .and_then(|_| if sync { w.sync() } else { Ok(()) }),
                    None => Err(Error::Busy("the WAL is closed".into())),
                };
            if let Err(e) = res {
                let mut st = self.state.lock();
                self.set_bg_error(&mut st, e.duplicate());
                return Err(e);
            }
            DbStats::add(&self.stats.wal_bytes, combined.size_in_bytes() as u64);
            if sync {
                DbStats::add(&self.stats.wal_syncs, 1);
            }
        }
        let mem = self.state.lock().mem.clone();
        insert_into_memtable(&mem, &combined, first_seq);
        self.last_sequence.store(first_seq + count - 1, Ordering::Release);
        DbStats::add(&self.stats.user_writes, group.len() as u64);
        DbStats::add(&self.stats.write_groups, 1);
        DbStats::add(&self.stats.user_bytes_written, combined.size_in_bytes() as u64);
        Ok(())
    }

    /// Ensures the active memtable has room, switching it or stalling as needed.
    fn make_room_for_write(&self) -> Result<()> {
        let mut slowed = false;
        loop {
            let mut st = self.state.lock();
            DbInner::check_bg_error(&st)?;
            if st.shutting_down {
                return Err(Error::Busy("the database is closing".into()));
            }
            let l0 = st.current.level_files(0).len();
            let auto = !self.opts.disable_auto_compactions;
            if auto && !slowed && l0 >= self.opts.level0_slowdown_writes_trigger {
                drop(st);
                // Give compaction a moment: delay this group once by 1 ms.
                DbStats::add(&self.stats.stall_l0_slowdown_count, 1);
                DbStats::add(&self.stats.stall_micros, 1000);
                std::thread::sleep(Duration::from_millis(1));
                slowed = true;
                continue;
            }
            if st.mem.approximate_memory_usage() < self.opts.write_buffer_size {
                return Ok(());
            }
            if st.imms.len() + 1 >= self.opts.max_write_buffer_number {
                DbStats::add(&self.stats.stall_memtable_count, 1);
                self.info_log.log("[WARN] Stopping writes because we have too many memtables");
                let t = Instant::now();
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut st, Duration::from_millis(100));
                DbStats::add(&self.stats.stall_micros, t.elapsed().as_micros() as u64);
                continue;
            }
            if auto && l0 >= self.opts.level0_stop_writes_trigger {
                DbStats::add(&self.stats.stall_l0_stop_count, 1);
                self.info_log.log("[WARN] Stopping writes because of too many level-0 files");
                let t = Instant::now();
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut st, Duration::from_millis(100));
                DbStats::add(&self.stats.stall_micros, t.elapsed().as_micros() as u64);
                continue;
            }
            drop(st);
            self.switch_memtable()?;
        }
    }

    /// Moves the active memtable to the immutable list and starts a new WAL. Called by the
    /// write leader (or with the write queue otherwise quiet).
    pub(crate) fn switch_memtable(&self) -> Result<()> {
        let log_number = self.versions.lock().new_file_number();
        let path = wal_path(&self.path, log_number);
        let file = self.fs.create(&path)?;
        self.fs.sync_dir(&self.path)?;
        let new_writer = LogWriter::new(file);
        {
            let mut wal = self.wal.lock();
            // The old WAL is synced so that a later synced write never survives a crash that
            // loses earlier writes (no holes).
            if let Some(old) = wal.as_mut() {
                old.sync()?;
            }
            *wal = Some(new_writer);
        }
        let mut st = self.state.lock();
        let old = std::mem::replace(&mut st.mem, Arc::new(MemTable::new()));
        let old_log = std::mem::replace(&mut st.mem_log_number, log_number);
        let tombstones = Arc::new(FragmentedTombstones::new(old.range_tombstones()));
        st.imms.push_back(Imm { mem: old, log_number: old_log, tombstones });
        self.install_super_version(&st);
        self.bg_cv.notify_all();
        Ok(())
    }
}

/// Inserts every operation of `batch` into `mem`, the i-th at sequence `first_seq + i`.
pub(crate) fn insert_into_memtable(mem: &MemTable, batch: &WriteBatch, first_seq: u64) {
    for (seq, op) in (first_seq..).zip(batch.iter()) {
        match op {
            BatchOp::Put(k, v) => mem.add(seq, ValueKind::Put, k, v),
            BatchOp::Delete(k) => mem.add(seq, ValueKind::Delete, k, &[]),
            BatchOp::DeleteRange(b, e) => {
                if b < e {
                    mem.add(seq, ValueKind::RangeDelete, b, e)
                }
            }
        }
    }
}
