//! Write groups: group commit in two stages, pipelined, with the members' memtable inserts in
//! parallel (RocksDB's `enable_pipelined_write` and `allow_concurrent_memtable_write`).
//!
//! A writer joins the queue (`write_queue.rs`). The one at the front leads: it takes the
//! batches of the writers behind it (up to [`MAX_GROUP_BYTES`], all with its `disable_wal`)
//! and runs **stage one** for the group: make room, allocate the group's sequence numbers,
//! append one WAL record (one fsync if any member asked `sync`; `write.rs`). Then it leaves the
//! queue with its group, and the next writer leads the next group's stage one while this group
//! runs **stage two**: the memtable inserts, each member inserting its own batch at its own
//! sequence numbers in parallel (the leader hands the others their work), or the leader alone
//! (one member, fewer than `PARALLEL_MIN_ENTRIES` entries, or `allow_concurrent_memtable_write`
//! off); then the group waits until every earlier group has published and publishes its last
//! sequence number, so readers see groups whole and in order; then the members return.
//!
//! Invariants: sequence numbers are allocated in WAL order, by stage one alone
//! (`DbInner::allocated_sequence`); `DbInner::inflight_groups` counts the groups between stage
//! one and their publication. A memtable is switched only when no group is in flight (stage
//! one drains them first), so a memtable holds every write of its WAL before it is flushed; and
//! [`DbInner::with_write_lock`] drains them too, so its holder sees a quiet database. Inserts of
//! overlapping groups use the skiplist's concurrent insert (compare-and-swap links).
//!
//! Who calls: `Db::write` (through `DbInner::write`), and the callers of `with_write_lock`
//! (flush, ingestion, tests). Locks: the queue mutex briefly (join, take a group, leave, hand
//! out work and results); stage one takes the `state` and `wal` locks (`write.rs`); stage two
//! none but the memtable's allocation mutex.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use smallvec::SmallVec;

use super::core::DbInner;
use super::stats::DbStats;
use super::write_mems::WriteMems;
use super::write_queue::{MemberWork, Writer};
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::key::SequenceNumber;
use crate::options::WriteOptions;

/// Largest group a leader assembles (bytes of batches).
const MAX_GROUP_BYTES: usize = 1 << 20;

/// Fewest entries of a group whose members insert in parallel: handing a member its share and
/// waiting for it costs a cross-thread hand-off (microseconds on a quiet machine, a time slice on
/// a busy one), more than the leader inserting a few entries itself.
const PARALLEL_MIN_ENTRIES: u32 = 32;

/// The writers of a group, the leader first.
type Members = SmallVec<[Arc<Writer>; 8]>;

impl DbInner {
    /// Commits `batch`, possibly as part of a group led by another writer.
    pub(crate) fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.check_writable()?;
        batch.status()?;
        batch.check_handles(self.instance)?;
        if batch.max_column_family_id() == crate::column_family::DEFAULT_COLUMN_FAMILY_ID {
            if batch.has_merge() && self.opts.merge_operator.is_none() {
                return Err(crate::Error::NotSupported(
                    "merge: provide a merge_operator when opening the database".into(),
                ));
            }
        } else {
            self.write_mems.load().check(&batch)?;
        }
        if batch.is_empty() {
            return Ok(());
        }
        let w = Arc::new(Writer::new(Some(batch), opts.sync, opts.disable_wal));
        self.writers.push(&w);
        loop {
            self.writers.wait(&w, |w| {
                w.done.load(Ordering::Acquire)
                    || w.has_work.load(Ordering::Acquire)
                    || w.leading.load(Ordering::Acquire)
            });
            if w.done.load(Ordering::Acquire) {
                return w.result.lock().take().unwrap_or(Ok(()));
            }
            if w.has_work.swap(false, Ordering::AcqRel) {
                self.do_member_work(&w);
                continue;
            }
            break;
        }
        self.lead(&w)
    }

    /// Runs `f` at the front of the write queue once no group is in flight, so no write is
    /// in progress meanwhile.
    pub(crate) fn with_write_lock<T>(&self, f: impl FnOnce() -> T) -> T {
        let w = Arc::new(Writer::new(None, false, false));
        self.writers.push(&w);
        self.writers.wait(&w, |w| w.leading.load(Ordering::Acquire));
        self.drain_groups();
        let r = f();
        // `f` may have used sequence numbers itself (an ingestion's global one).
        self.allocated_sequence.fetch_max(self.visible_sequence(), Ordering::AcqRel);
        self.writers.pop_group(1);
        r
    }

    /// Waits until every group that appended its WAL record has published.
    pub(super) fn drain_groups(&self) {
        self.group_event
            .wait(self.writers.max_yield, || self.inflight_groups.load(Ordering::Acquire) == 0);
    }

    /// The first sequence number of the next group (stage one only).
    pub(super) fn next_sequence(&self) -> SequenceNumber {
        self.allocated_sequence.load(Ordering::Acquire).max(self.visible_sequence()) + 1
    }

    /// Leads a group from `w` (at the front of the queue); returns `w`'s result.
    fn lead(&self, w: &Arc<Writer>) -> Result<()> {
        let (members, mut combined, sync) = self.take_group(w);
        let parallel = self.opts.allow_concurrent_memtable_write
            && members.len() > 1
            && combined.count() >= PARALLEL_MIN_ENTRIES;
        let staged = self.append_group(&mut combined, sync, w.disable_wal, members.len());
        let staged = staged.map(|(mems, first_seq)| {
            self.inflight_groups.fetch_add(1, Ordering::AcqRel);
            (mems, first_seq)
        });
        // The next group's stage one may start now.
        self.writers.pop_group(members.len());
        let result = staged.map(|(mems, first_seq)| {
            if parallel {
                self.insert_in_parallel(&members, &mems, first_seq);
            } else {
                let alone = self.inflight_groups.load(Ordering::Acquire) == 1;
                mems.insert(&combined, first_seq, !alone);
            }
            self.publish(first_seq, &combined, members.len());
        });
        self.writers.complete(&members, w, &result);
        result
    }

    /// Takes the batches of the group led by `w` (at the front): the members, the combined
    /// batch (the WAL record) and whether any member asked `sync`. A lone writer's batch is
    /// moved; several are copied into one and kept by their writers for the parallel inserts.
    fn take_group(&self, w: &Arc<Writer>) -> (Members, WriteBatch, bool) {
        let q = self.writers.q.lock();
        let mut members = Members::new();
        let mut sync = false;
        let mut bytes = 0usize;
        for m in q.iter() {
            if m.disable_wal != w.disable_wal {
                break;
            }
            // A `with_write_lock` holder (no batch) waits to become front itself: never group it.
            let Some(sz) = m.batch.lock().as_ref().map(WriteBatch::size_in_bytes) else { break };
            if !members.is_empty() && bytes + sz > MAX_GROUP_BYTES {
                break;
            }
            bytes += sz;
            sync |= m.sync;
            members.push(Arc::clone(m));
        }
        drop(q);
        let combined = if members.len() == 1 {
            w.batch.lock().take().unwrap_or_default()
        } else {
            let mut c = WriteBatch::with_capacity(bytes + 4096);
            for m in &members {
                if let Some(b) = m.batch.lock().as_ref() {
                    c.append(b);
                }
            }
            c
        };
        (members, combined, sync)
    }

    /// Stage two of a parallel group: each member inserts its own batch (the leader its own
    /// here), at its place in the group's sequence numbers; returns when all have.
    fn insert_in_parallel(&self, members: &Members, mems: &Arc<WriteMems>, first_seq: u64) {
        let pending = Arc::new(AtomicUsize::new(members.len()));
        let mut seq = first_seq;
        let mut own: Option<(u64, &Arc<Writer>)> = None;
        for (i, m) in members.iter().enumerate() {
            let count = m.batch.lock().as_ref().map_or(0, |b| u64::from(b.count()));
            if i == 0 {
                own = Some((seq, m));
            } else {
                let work =
                    MemberWork { mems: Arc::clone(mems), first_seq: seq, pending: pending.clone() };
                self.writers.assign(m, work);
            }
            seq += count;
        }
        if let Some((seq, m)) = own {
            if let Some(b) = m.batch.lock().take() {
                mems.insert(&b, seq, true);
            }
            pending.fetch_sub(1, Ordering::AcqRel);
        }
        self.group_event.wait(self.writers.max_yield, || pending.load(Ordering::Acquire) == 0);
    }

    /// A member's share of a parallel group's stage two (see [`MemberWork`]).
    fn do_member_work(&self, w: &Writer) {
        let Some(work) = w.work.lock().take() else { return };
        if let Some(b) = w.batch.lock().take() {
            work.mems.insert(&b, work.first_seq, true);
        }
        if work.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.group_event.notify();
        }
    }

    /// Publishes the group of `combined` (from `first_seq`) once every earlier group has.
    fn publish(&self, first_seq: u64, combined: &WriteBatch, members: usize) {
        let count = u64::from(combined.count());
        self.group_event.wait(self.writers.max_yield, || {
            self.last_sequence.load(Ordering::Acquire) >= first_seq - 1
        });
        self.last_sequence.store(first_seq + count - 1, Ordering::Release);
        self.inflight_groups.fetch_sub(1, Ordering::AcqRel);
        // Later groups wait for this publication, a drain for the count.
        self.group_event.notify();
        DbStats::add(&self.stats.user_writes, members as u64);
        DbStats::add(&self.stats.write_groups, 1);
        DbStats::add(&self.stats.user_keys, count);
        DbStats::add(&self.stats.user_bytes_written, combined.size_in_bytes() as u64);
    }
}
