//! [`FamilyMemtables`]: where WAL replay puts what it reads, per column family: each family's
//! records go to its own memtables of about its `write_buffer_size` each, and a record in a WAL
//! numbered below the family's log number is skipped (the family flushed it before the crash;
//! RocksDB's rule). Records of a family that is not open (dropped) are skipped.
//!
//! Who calls: the replay sinks of `open.rs` (kept in memory) and `open_commit.rs` (written to
//! L0 as each fills). Owns no lock.

use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::memtable::MemTable;

/// One family's replayed memtables.
struct Family {
    id: u32,
    /// WALs numbered below this hold none of its unflushed writes.
    log_number: u64,
    write_buffer_size: usize,
    /// Full memtables kept, oldest first.
    full: Vec<Arc<MemTable>>,
    mem: Arc<MemTable>,
}

impl Family {
    fn holds_data(&self) -> bool {
        !self.mem.is_empty() || self.mem.has_range_tombstones()
    }
}

/// The replayed memtables of every open family (see the module doc).
pub(crate) struct FamilyMemtables {
    families: Vec<Family>,
}

impl FamilyMemtables {
    /// Empty memtables for `families`: (id, log number, write buffer size).
    pub fn new(families: impl IntoIterator<Item = (u32, u64, usize)>) -> FamilyMemtables {
        let families = families
            .into_iter()
            .map(|(id, log_number, write_buffer_size)| Family {
                id,
                log_number,
                write_buffer_size,
                full: Vec::new(),
                mem: Arc::new(MemTable::new()),
            })
            .collect();
        FamilyMemtables { families }
    }

    /// Inserts `batch`, read from WAL `wal`, at its sequence numbers; returns the memtables
    /// that just filled up, with their family's id (the caller keeps or writes them).
    pub fn insert(&mut self, wal: u64, batch: &WriteBatch) -> Vec<(u32, Arc<MemTable>)> {
        let mut filled = Vec::new();
        let only_default = batch.max_column_family_id() == DEFAULT_COLUMN_FAMILY_ID;
        for f in self.families.iter_mut() {
            if wal < f.log_number || (only_default && f.id != DEFAULT_COLUMN_FAMILY_ID) {
                continue;
            }
            if f.id == DEFAULT_COLUMN_FAMILY_ID && only_default {
                f.mem.insert_batch(batch, batch.sequence());
            } else {
                f.mem.insert_family(batch, batch.sequence(), f.id, false);
            }
            if f.mem.approximate_memory_usage() >= f.write_buffer_size {
                filled.push((f.id, std::mem::replace(&mut f.mem, Arc::new(MemTable::new()))));
            }
        }
        filled
    }

    /// Keeps a memtable [`FamilyMemtables::insert`] returned for family `id`.
    pub fn keep(&mut self, id: u32, full: Arc<MemTable>) {
        if let Some(f) = self.families.iter_mut().find(|f| f.id == id) {
            f.full.push(full);
        }
    }

    /// Every family's memtables holding data, oldest first, by family id.
    pub fn finish(self) -> Vec<(u32, Vec<Arc<MemTable>>)> {
        self.families
            .into_iter()
            .map(|mut f| {
                if f.holds_data() {
                    f.full.push(f.mem);
                }
                (f.id, f.full)
            })
            .collect()
    }
}
