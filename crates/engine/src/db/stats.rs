//! Counters the database keeps for `property("talus.stats")`: per-level compaction work,
//! flushes, writes, stalls. Updated with relaxed atomics or under the state lock by the job that
//! did the work; read without locks.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Work done at one output level.
#[derive(Default)]
pub(crate) struct LevelStats {
    pub bytes_read_input_level: AtomicU64,
    pub bytes_read_output_level: AtomicU64,
    pub bytes_written: AtomicU64,
    pub bytes_moved: AtomicU64,
    pub micros: AtomicU64,
    pub count: AtomicU64,
    pub keys_in: AtomicU64,
    pub keys_dropped: AtomicU64,
}

#[derive(Default)]
pub(crate) struct DbStats {
    pub levels: Vec<LevelStats>,
    pub flush_bytes: AtomicU64,
    pub flush_count: AtomicU64,
    pub user_bytes_written: AtomicU64,
    pub user_writes: AtomicU64,
    pub write_groups: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub stall_micros: AtomicU64,
    pub stall_memtable_count: AtomicU64,
    pub stall_l0_stop_count: AtomicU64,
    pub stall_l0_slowdown_count: AtomicU64,
}

impl DbStats {
    pub fn new(num_levels: usize) -> Self {
        DbStats {
            levels: (0..num_levels).map(|_| LevelStats::default()).collect(),
            ..Default::default()
        }
    }

    pub fn add(c: &AtomicU64, v: u64) {
        c.fetch_add(v, Relaxed);
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Relaxed)
    }
}
