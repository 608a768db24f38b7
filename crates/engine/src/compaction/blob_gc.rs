//! Forced blob garbage collection (`blob_garbage_collection_force_threshold`): RocksDB's
//! `VersionStorageInfo::ComputeFilesMarkedForForcedBlobGC` and the leveled picker's
//! `kForcedBlobGC` pick.
//!
//! With `enable_blob_garbage_collection` on, a compaction that meets a blob index into one of
//! the oldest blob files (the `blob_garbage_collection_age_cutoff` fraction) relocates its value.
//! SSTs that no compaction meets keep the oldest files alive however much of them is garbage.
//! This module finds the SSTs to compact so they go: the "oldest batch" is the oldest blob file
//! (which some SST names as its oldest referenced blob file, the SST's "linked" file) and the
//! blob files after it that no SST names, up to the age cutoff (`floor(cutoff * files)` files,
//! as RocksDB counts them). When the batch's garbage bytes reach `force_threshold` times its
//! record bytes, the SSTs linked to the oldest file are marked; the picker compacts a marked
//! SST into its own level (its range widened to a clean cut at L0), and garbage collection
//! relocates every value it holds in the batch. Nothing is marked when the batch runs past the
//! age cutoff, when the oldest file has no linked SST (an SST recorded before the MANIFEST kept
//! `oldest_blob_file_number` is linked to none), or with `force_threshold >= 1`.
//!
//! A pure function of a [`Version`] and the [`Options`] (no IO, no locks), called by
//! [`super::leveled::pick_forced_blob_gc`] when no compaction is due by score, with the state
//! lock held.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::options::Options;
use crate::version::{FileMetaData, Version};

/// Why the picker chose a forced garbage collection (RocksDB's `kForcedBlobGC` name).
pub const REASON_FORCED_BLOB_GC: &str = "ForcedBlobGC";

/// The SSTs marked for forced blob garbage collection, `(level, file)` by level then key.
pub fn files_marked_for_forced_blob_gc(
    opts: &Options,
    v: &Version,
) -> Vec<(usize, Arc<FileMetaData>)> {
    let cutoff = opts.blob_garbage_collection_age_cutoff;
    if !opts.enable_blob_garbage_collection
        || cutoff.is_nan()
        || cutoff <= 0.0
        || opts.blob_garbage_collection_force_threshold.is_nan()
        || opts.blob_garbage_collection_force_threshold >= 1.0
        || v.blob_files.is_empty()
    {
        return Vec::new();
    }
    let cutoff_count = ((cutoff * v.blob_files.len() as f64) as usize).min(v.blob_files.len());
    if cutoff_count == 0 {
        return Vec::new();
    }
    // Linked SSTs of the blob files that may matter: the first `cutoff_count + 1`.
    let batch_end = v.blob_files.keys().nth(cutoff_count).copied().unwrap_or(u64::MAX);
    let mut linked: BTreeMap<u64, Vec<(usize, Arc<FileMetaData>)>> = BTreeMap::new();
    for (level, files) in v.files.iter().enumerate() {
        for f in files {
            let b = f.oldest_blob_file_number;
            if b != 0 && b <= batch_end {
                linked.entry(b).or_default().push((level, Arc::clone(f)));
            }
        }
    }
    let mut blobs = v.blob_files.iter();
    let Some((oldest, meta)) = blobs.next() else { return Vec::new() };
    let Some(marked) = linked.remove(oldest) else { return Vec::new() };
    let (mut total, mut garbage) = (meta.addition.blob_bytes, meta.garbage_bytes);
    // `count`: files in the batch before this one.
    for (count, (number, meta)) in (1..).zip(blobs) {
        if linked.contains_key(number) {
            break; // the next batch begins
        }
        if count == cutoff_count {
            // The batch runs past the age cutoff: not all of it may be collected.
            return Vec::new();
        }
        total += meta.addition.blob_bytes;
        garbage += meta.garbage_bytes;
    }
    if (garbage as f64) < opts.blob_garbage_collection_force_threshold * total as f64 {
        return Vec::new();
    }
    marked
}

#[cfg(test)]
#[path = "blob_gc_tests.rs"]
mod tests;
