//! A change to the tree's shape, and its MANIFEST record encoding.
//!
//! STUB: interface fixed by the skeleton.

use super::FileMetaData;
use crate::error::Result;
use crate::key::SequenceNumber;

/// A change to the set of live files and the counters recorded with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// Name of the key comparator (only `leveldb.BytewiseComparator` is supported).
    pub comparator: Option<String>,
    /// WALs numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// Next file number to allocate.
    pub next_file_number: Option<u64>,
    /// Last sequence number used.
    pub last_sequence: Option<SequenceNumber>,
    /// Files removed: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: (level, metadata).
    pub new_files: Vec<(usize, FileMetaData)>,
}

impl VersionEdit {
    /// Appends the encoded edit to `dst`.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        let _ = dst;
        todo!()
    }
    /// Decodes an edit; `file`/`offset` name its record for the error.
    pub fn decode(src: &[u8], file: &str, offset: u64) -> Result<VersionEdit> {
        let _ = (src, file, offset);
        todo!()
    }
}
