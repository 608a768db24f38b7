//! [`VersionSet`]: the current [`Version`], the counters (next file number, last sequence, log
//! number), and the MANIFEST that makes changes to them durable.
//!
//! Not internally synchronized: the database holds its version mutex around every call.
//!
//! STUB: interface fixed by the skeleton.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use super::{Version, VersionEdit};
use crate::error::Result;
use crate::fs::Fs;
use crate::key::SequenceNumber;

/// The tree's state and its MANIFEST.
pub struct VersionSet {}

impl VersionSet {
    /// Creates the MANIFEST and CURRENT of a new, empty database in `dir`.
    pub fn create(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> Result<VersionSet> {
        let _ = (dir, fs, num_levels);
        todo!()
    }
    /// Recovers the state named by `CURRENT`, then starts a new MANIFEST holding a snapshot of
    /// it (CURRENT is switched atomically).
    pub fn recover(dir: &Path, fs: Arc<dyn Fs>, num_levels: usize) -> Result<VersionSet> {
        let _ = (dir, fs, num_levels);
        todo!()
    }
    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        todo!()
    }
    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        todo!()
    }
    /// Ensures future file numbers are above `n`.
    pub fn mark_file_number_used(&mut self, n: u64) {
        let _ = n;
        todo!()
    }
    /// The last sequence number recorded.
    pub fn last_sequence(&self) -> SequenceNumber {
        todo!()
    }
    /// Records a new last sequence number (in memory; persisted with the next edit).
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) {
        let _ = seq;
        todo!()
    }
    /// WALs numbered below this are obsolete.
    pub fn log_number(&self) -> u64 {
        todo!()
    }
    /// The live MANIFEST's file number.
    pub fn manifest_file_number(&self) -> u64 {
        todo!()
    }
    /// Fills in the counters, appends `edit` to the MANIFEST, syncs it, and installs the new
    /// version. On error nothing changes (the MANIFEST is rolled to a new file on the next
    /// call).
    pub fn log_and_apply(&mut self, edit: VersionEdit) -> Result<()> {
        let _ = edit;
        todo!()
    }
    /// File numbers of SSTs referenced by any version still alive (current or held by readers).
    pub fn live_files(&self) -> HashSet<u64> {
        todo!()
    }
}
