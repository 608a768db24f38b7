//! Forced blob garbage collection marks (RocksDB's `ComputeFilesMarkedForForcedBlobGC` cases).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::*;
use crate::compaction::leveled::pick_forced_blob_gc;
use crate::key::{InternalKey, ValueKind};
use crate::version::blob_meta::{BlobFileAddition, BlobFileMeta};

/// Blob files `(number, garbage bytes)` of 1000 record bytes each; SSTs
/// `(level, number, first key, last key, oldest blob file)`.
fn version(blobs: &[(u64, u64)], ssts: &[(usize, u64, &str, &str, u64)]) -> Version {
    let mut v = Version::new(7);
    let mut files = BTreeMap::new();
    for &(number, garbage) in blobs {
        let addition =
            BlobFileAddition { number, blob_count: 10, blob_bytes: 1000, ..Default::default() };
        let meta = BlobFileMeta { addition, garbage_count: garbage / 100, garbage_bytes: garbage };
        files.insert(number, meta);
    }
    v.blob_files = Arc::new(files);
    for &(level, number, lo, hi, oldest) in ssts {
        v.files[level].push(Arc::new(FileMetaData {
            number,
            file_size: 100,
            smallest: InternalKey::new(lo.as_bytes(), number, ValueKind::Put),
            largest: InternalKey::new(hi.as_bytes(), number, ValueKind::Put),
            smallest_seq: number,
            largest_seq: number,
            num_entries: 1,
            num_deletions: 0,
            oldest_blob_file_number: oldest,
            reader: Default::default(),
        }));
    }
    v
}

fn opts(cutoff: f64, threshold: f64) -> Options {
    Options {
        enable_blob_files: true,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: cutoff,
        blob_garbage_collection_force_threshold: threshold,
        ..Default::default()
    }
}

fn marked(o: &Options, v: &Version) -> Vec<(usize, u64)> {
    files_marked_for_forced_blob_gc(o, v).into_iter().map(|(l, f)| (l, f.number)).collect()
}

#[test]
fn the_oldest_batch_over_the_threshold_marks_its_linked_ssts() {
    // Blob files 10..13; SSTs 1 and 2 link 10, SST 3 links 12: the batch is {10, 11}.
    let ssts = [(1, 1, "a", "c", 10), (2, 2, "d", "f", 10), (2, 3, "g", "h", 12)];
    let v = version(&[(10, 600), (11, 400), (12, 0), (13, 0)], &ssts);
    // Garbage 1000 of 2000 bytes.
    assert_eq!(marked(&opts(0.5, 0.5), &v), [(1, 1), (2, 2)]);
    assert_eq!(marked(&opts(0.5, 0.4), &v), [(1, 1), (2, 2)]);
    assert!(marked(&opts(0.5, 0.51), &v).is_empty());
    // Threshold 1 (the default) never forces; nor does garbage collection off.
    assert!(marked(&opts(0.5, 1.0), &v).is_empty());
    let off = Options { enable_blob_garbage_collection: false, ..opts(0.5, 0.5) };
    assert!(marked(&off, &v).is_empty());
    // An age cutoff covering no file (floor(0.2 * 4) = 0) forces nothing.
    assert!(marked(&opts(0.2, 0.0), &v).is_empty());
    // The batch {10, 11} runs past a cutoff of one file: not all of it is eligible.
    assert!(marked(&opts(0.25, 0.0), &v).is_empty());
}

#[test]
fn a_batch_of_the_oldest_file_alone() {
    let ssts = [(1, 1, "a", "c", 10), (1, 2, "d", "f", 11)];
    let v = version(&[(10, 900), (11, 0), (12, 0), (13, 0)], &ssts);
    assert_eq!(marked(&opts(0.25, 0.9), &v), [(1, 1)]);
    assert!(marked(&opts(0.25, 0.95), &v).is_empty());
    // Every blob file unlinked after the oldest, and all within the cutoff: one batch.
    let v = version(&[(10, 900), (11, 1000)], &[(3, 1, "a", "z", 10)]);
    assert_eq!(marked(&opts(1.0, 0.95), &v), [(3, 1)]);
}

#[test]
fn an_oldest_file_no_sst_names_forces_nothing() {
    // SSTs recorded before the MANIFEST kept their oldest blob file (0) link to nothing.
    let v = version(&[(10, 1000), (11, 1000)], &[(1, 1, "a", "c", 0), (1, 2, "d", "f", 11)]);
    assert!(marked(&opts(1.0, 0.0), &v).is_empty());
    assert!(marked(&opts(1.0, 0.0), &version(&[], &[(1, 1, "a", "c", 0)])).is_empty());
}

#[test]
fn the_pick_compacts_an_idle_marked_sst_into_its_own_level() {
    let ssts = [(1, 1, "a", "c", 10), (2, 2, "b", "f", 10), (2, 3, "g", "h", 11)];
    let v = version(&[(10, 900), (11, 0)], &ssts);
    let o = opts(0.5, 0.5);
    let c = pick_forced_blob_gc(&o, &v, &HashSet::new()).unwrap();
    assert_eq!((c.level, c.output_level, c.reason), (1, 1, REASON_FORCED_BLOB_GC));
    assert_eq!(c.inputs[0].iter().map(|f| f.number).collect::<Vec<_>>(), [1]);
    assert!(c.inputs[1].is_empty() && !c.trivial_move && !c.bottommost);
    // File 1 busy: file 2, at the last level (bottommost).
    let c = pick_forced_blob_gc(&o, &v, &HashSet::from([1])).unwrap();
    assert_eq!((c.level, c.output_level), (2, 2));
    assert_eq!(c.inputs[0].iter().map(|f| f.number).collect::<Vec<_>>(), [2]);
    assert!(pick_forced_blob_gc(&o, &v, &HashSet::from([1, 2])).is_none());
}

#[test]
fn an_l0_pick_takes_every_overlapping_l0_file_into_one_output() {
    let ssts = [(0, 5, "d", "k", 11), (0, 4, "a", "e", 10), (0, 3, "x", "z", 11)];
    let v = version(&[(10, 1000), (11, 0)], &ssts);
    let c = pick_forced_blob_gc(&opts(0.5, 0.5), &v, &HashSet::new()).unwrap();
    assert_eq!((c.level, c.output_level, c.target_file_size), (0, 0, u64::MAX));
    let mut inputs: Vec<u64> = c.inputs[0].iter().map(|f| f.number).collect();
    inputs.sort();
    assert_eq!(inputs, [4, 5]);
    // An overlapping L0 file busy: no pick.
    assert!(pick_forced_blob_gc(&opts(0.5, 0.5), &v, &HashSet::from([5])).is_none());
}
