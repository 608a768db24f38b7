//! [`WriteMems`]: the active memtable of every column family, as a write group inserts into
//! them: a batch's records go to their family's memtable (RocksDB's `MemTableInserter` with
//! its `ColumnFamilyMemTables`).
//!
//! Built under the state lock whenever a family's active memtable changes (switch, create,
//! drop; `DbInner::publish_write_mems`), kept in `DbState::mems`, and taken (one `Arc` clone)
//! by each write group's leader when it has made room, under the same lock hold that found
//! every active memtable below its `write_buffer_size` ([`WriteMems::any_full`]: no map walk
//! per group). So a group inserts into the memtables that were active when it appended its WAL
//! record (a switch waits for the groups in flight first, and creating or dropping a family
//! holds the write queue, `write.rs`). Holds no lock.

use std::sync::Arc;

use crate::batch::{BatchOp, WriteBatch};
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::error::{Error, Result};
use crate::memtable::MemTable;

/// One family's active memtable and what a write to it needs to know.
struct Family {
    id: u32,
    mem: Arc<MemTable>,
    /// The family has a merge operator (a batch merging into it is accepted).
    merges: bool,
    /// The family's `write_buffer_size`.
    write_buffer_size: usize,
}

/// The active memtables of the live families (see the module doc).
pub(crate) struct WriteMems {
    /// `default`'s.
    default: Arc<MemTable>,
    /// `default` has a merge operator.
    default_merges: bool,
    /// `default`'s `write_buffer_size`.
    default_write_buffer_size: usize,
    /// The other families', by id.
    others: Vec<Family>,
}

impl WriteMems {
    /// The memtables of `families` (id, active memtable, has a merge operator,
    /// `write_buffer_size`); `default` must be among them.
    pub fn new<'a>(
        families: impl Iterator<Item = (u32, &'a Arc<MemTable>, bool, usize)>,
    ) -> WriteMems {
        let mut default = None;
        let (mut default_merges, mut default_write_buffer_size) = (false, usize::MAX);
        let mut others = Vec::new();
        for (id, mem, merges, write_buffer_size) in families {
            if id == DEFAULT_COLUMN_FAMILY_ID {
                default = Some(mem.clone());
                default_merges = merges;
                default_write_buffer_size = write_buffer_size;
            } else {
                others.push(Family { id, mem: mem.clone(), merges, write_buffer_size });
            }
        }
        let default = default.unwrap_or_else(|| Arc::new(MemTable::new()));
        WriteMems { default, default_merges, default_write_buffer_size, others }
    }

    /// True when some family's active memtable has reached its `write_buffer_size` (the
    /// memtables here are the active ones while this is `DbState::mems`).
    #[inline]
    pub fn any_full(&self) -> bool {
        self.default.approximate_memory_usage() >= self.default_write_buffer_size
            || self.others.iter().any(|f| f.mem.approximate_memory_usage() >= f.write_buffer_size)
    }

    /// `InvalidArgument` if `batch` writes to a family that is not live (RocksDB's "Invalid
    /// column family specified in write batch"), `NotSupported` if it merges into a family
    /// without a merge operator.
    pub fn check(&self, batch: &WriteBatch) -> Result<()> {
        let mut seen: Option<u32> = None;
        for (id, op) in batch.iter_cf() {
            let merge = matches!(op, BatchOp::Merge(..));
            if seen == Some(id) && !merge {
                continue;
            }
            seen = Some(id);
            let merges = if id == DEFAULT_COLUMN_FAMILY_ID {
                self.default_merges
            } else {
                match self.others.iter().find(|f| f.id == id) {
                    Some(f) => f.merges,
                    None => {
                        return Err(Error::InvalidArgument(format!(
                            "invalid column family specified in write batch: id {id} does not \
                             exist (never created, or dropped)"
                        )))
                    }
                }
            };
            if merge && !merges {
                return Err(Error::NotSupported(format!(
                    "merge: column family id {id} has no merge_operator"
                )));
            }
        }
        Ok(())
    }

    /// Inserts `batch` from sequence `first_seq`; `concurrent` beside other inserts into the
    /// same memtables (`MemTable::insert_batch_concurrent`). A record of a family not here
    /// (dropped since the write was checked) is skipped with its sequence number.
    pub fn insert(&self, batch: &WriteBatch, first_seq: u64, concurrent: bool) {
        // The common case: a batch of `default` only, in one pass as before families.
        if batch.max_column_family_id() == DEFAULT_COLUMN_FAMILY_ID {
            if concurrent {
                self.default.insert_batch_concurrent(batch, first_seq);
            } else {
                self.default.insert_batch(batch, first_seq);
            }
            return;
        }
        self.default.insert_family(batch, first_seq, DEFAULT_COLUMN_FAMILY_ID, concurrent);
        let max = batch.max_column_family_id();
        for f in self.others.iter().filter(|f| f.id <= max) {
            f.mem.insert_family(batch, first_seq, f.id, concurrent);
        }
    }
}
