//! One column family's part of the database (RocksDB's `ColumnFamilyData`): its identity and
//! options with the readers' [`SuperVersion`] ([`ColumnFamilyData`], shared, lock-free to read),
//! and its memtables and current version ([`CfState`], under `DbInner::state`).
//!
//! Everything else is shared by all families and stays in `core.rs`: the WAL and write queue,
//! sequence numbers, snapshots, the one MANIFEST (`VersionSet`, which keeps each family's
//! version and log number), the table cache and the job registry. `default` (id 0) is always
//! there; today's `Db` methods act on it.
//!
//! Lock order: as `core.rs`; a `CfState` is only reached through the state lock, and a
//! `ColumnFamilyData`'s `super_version` is swapped under it.

use std::collections::VecDeque;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::iter::range_del::FragmentedTombstones;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::Version;

/// What a reader needs: the memtables and the files, captured together.
pub(crate) struct SuperVersion {
    /// The active memtable.
    pub mem: Arc<MemTable>,
    /// Immutable memtables, newest first, each with its fragmented range tombstones.
    pub imms: Vec<(Arc<MemTable>, Arc<FragmentedTombstones>)>,
    /// The files.
    pub version: Arc<Version>,
    /// The family's options (its merge operator is what reads merge with).
    pub opts: Arc<Options>,
}

/// An immutable memtable waiting to be flushed, with the WAL that holds its writes.
pub(crate) struct Imm {
    pub mem: Arc<MemTable>,
    pub log_number: u64,
    pub tombstones: Arc<FragmentedTombstones>,
}

/// A family's identity, options and published [`SuperVersion`].
pub(crate) struct ColumnFamilyData {
    /// Its id: what WAL records and MANIFEST edits carry.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its options: the memtable size, compaction, compression, blob files, merge operator and
    /// compaction filter of this family (the database-wide ones, such as the WAL's, the cache
    /// and the background jobs, come from the database's options).
    pub opts: Arc<Options>,
    /// The database it belongs to ([`super::core::DbInner::instance`]): a handle of another
    /// database is refused.
    pub db_instance: u64,
    /// What readers of this family load: its memtables and files, captured together.
    pub super_version: ArcSwap<SuperVersion>,
}

/// A family's mutable state under `DbInner::state`.
pub(crate) struct CfState {
    /// The shared part (its `super_version` is replaced by `DbInner::install_super_version`).
    pub data: Arc<ColumnFamilyData>,
    /// The active memtable.
    pub mem: Arc<MemTable>,
    /// The WAL the active memtable's writes went to first.
    pub mem_log_number: u64,
    /// Immutable memtables, oldest first.
    pub imms: VecDeque<Imm>,
    /// The family's current version (as the `VersionSet` holds it).
    pub current: Arc<Version>,
    /// Round-robin compaction cursor per level (the largest user key last compacted).
    pub cursors: Vec<Vec<u8>>,
}

impl CfState {
    /// A family of database `db_instance` with an empty memtable over `current`.
    pub fn new(
        id: u32,
        name: String,
        opts: Arc<Options>,
        db_instance: u64,
        current: Arc<Version>,
    ) -> CfState {
        let mem = Arc::new(MemTable::new());
        let sv = SuperVersion {
            mem: mem.clone(),
            imms: Vec::new(),
            version: current.clone(),
            opts: opts.clone(),
        };
        let cursors = vec![Vec::new(); opts.num_levels];
        let data = Arc::new(ColumnFamilyData {
            id,
            name,
            opts,
            db_instance,
            super_version: ArcSwap::from_pointee(sv),
        });
        CfState { data, mem, mem_log_number: 0, imms: VecDeque::new(), current, cursors }
    }

    /// True when the family holds no unflushed write: an empty active memtable and no
    /// immutable one.
    pub fn all_flushed(&self) -> bool {
        self.mem_is_empty() && self.imms.is_empty()
    }

    /// True when the active memtable has reached the family's `write_buffer_size`.
    pub fn mem_is_full(&self) -> bool {
        self.mem.approximate_memory_usage() >= self.data.opts.write_buffer_size
    }

    /// True when the active memtable holds nothing (no entry, no range tombstone).
    pub fn mem_is_empty(&self) -> bool {
        self.mem.is_empty() && !self.mem.has_range_tombstones()
    }

    /// The oldest WAL holding writes of this family not yet flushed: its oldest immutable
    /// memtable's, else its active memtable's.
    pub fn min_log_number(&self) -> u64 {
        self.imms.front().map_or(self.mem_log_number, |i| i.log_number)
    }

    /// Builds the SuperVersion readers of this family see.
    pub fn super_version(&self) -> SuperVersion {
        let imms = self.imms.iter().rev().map(|i| (i.mem.clone(), i.tombstones.clone())).collect();
        SuperVersion {
            mem: self.mem.clone(),
            imms,
            version: self.current.clone(),
            opts: self.data.opts.clone(),
        }
    }
}
