//! [`TableStats`]: cumulative counters of the table layer, kept as atomics in the catalog and
//! snapshotted by [`crate::Catalog::stats`]. Relaxed ordering: the counters are statistics,
//! not synchronization.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Cumulative counters since [`crate::Catalog::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Rows inserted (committed).
    pub rows_inserted: u64,
    /// Rows updated (committed).
    pub rows_updated: u64,
    /// Rows deleted (committed).
    pub rows_deleted: u64,
    /// Engine point reads issued by the table layer: primary-key and unique-index checks, old
    /// rows read by updates and deletes, row fetches of index scans.
    pub point_reads: u64,
    /// Secondary index entries written (puts and deletes, committed).
    pub index_entries_written: u64,
    /// Of those, the ones written without a read (non-unique indexes).
    pub blind_index_writes: u64,
    /// Rows returned by scans.
    pub rows_read_by_scans: u64,
}

/// The live counters.
#[derive(Default)]
pub(crate) struct Counters {
    pub rows_inserted: AtomicU64,
    pub rows_updated: AtomicU64,
    pub rows_deleted: AtomicU64,
    pub point_reads: AtomicU64,
    pub index_entries_written: AtomicU64,
    pub blind_index_writes: AtomicU64,
    pub rows_read_by_scans: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> TableStats {
        TableStats {
            rows_inserted: self.rows_inserted.load(Relaxed),
            rows_updated: self.rows_updated.load(Relaxed),
            rows_deleted: self.rows_deleted.load(Relaxed),
            point_reads: self.point_reads.load(Relaxed),
            index_entries_written: self.index_entries_written.load(Relaxed),
            blind_index_writes: self.blind_index_writes.load(Relaxed),
            rows_read_by_scans: self.rows_read_by_scans.load(Relaxed),
        }
    }

    /// Adds a committed write's counts (`point_reads` is counted as reads happen).
    pub(crate) fn add(&self, d: &TableStats) {
        self.rows_inserted.fetch_add(d.rows_inserted, Relaxed);
        self.rows_updated.fetch_add(d.rows_updated, Relaxed);
        self.rows_deleted.fetch_add(d.rows_deleted, Relaxed);
        self.index_entries_written.fetch_add(d.index_entries_written, Relaxed);
        self.blind_index_writes.fetch_add(d.blind_index_writes, Relaxed);
        self.rows_read_by_scans.fetch_add(d.rows_read_by_scans, Relaxed);
    }
}
