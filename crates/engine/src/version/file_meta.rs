//! The file metadata a version records for a finished table ([`FileMetaData::from_table`]).
//!
//! Who calls: flush and ingestion (`db/`), the compaction job, `sst::SstFileWriter`. A pure
//! function; no IO, no locks.

use super::FileMetaData;
use crate::iter::range_del::RangeTombstone;
use crate::key::{compare_internal, InternalKey, ValueKind, MAX_SEQUENCE};
use crate::sst::TableProperties;

impl FileMetaData {
    /// The metadata of finished table `number` with properties `props`, holding `tombstones`
    /// besides its point entries: its smallest and largest internal keys cover both (a
    /// tombstone's exclusive end as the sentinel `(end, MAX_SEQUENCE, RangeDelete)`, which
    /// sorts before every real entry of `end`).
    pub fn from_table(
        number: u64,
        props: &TableProperties,
        tombstones: &[RangeTombstone],
    ) -> FileMetaData {
        let mut smallest: Option<InternalKey> = None;
        let mut largest: Option<InternalKey> = None;
        let mut consider = |k: InternalKey| {
            if smallest.as_ref().is_none_or(|s| compare_internal(k.encoded(), s.encoded()).is_lt())
            {
                smallest = Some(k.clone());
            }
            if largest.as_ref().is_none_or(|l| compare_internal(k.encoded(), l.encoded()).is_gt()) {
                largest = Some(k);
            }
        };
        if !props.smallest_point_key.is_empty() {
            consider(InternalKey(props.smallest_point_key.clone()));
            consider(InternalKey(props.largest_point_key.clone()));
        }
        for t in tombstones {
            consider(InternalKey::new(&t.start, t.seq, ValueKind::RangeDelete));
            consider(InternalKey::new(&t.end, MAX_SEQUENCE, ValueKind::RangeDelete));
        }
        FileMetaData {
            number,
            file_size: props.file_size,
            smallest: smallest.unwrap_or_default(),
            largest: largest.unwrap_or_default(),
            smallest_seq: props.smallest_seq,
            largest_seq: props.largest_seq,
            num_entries: props.num_entries,
            num_deletions: props.num_deletions + props.num_range_deletions,
            oldest_blob_file_number: 0,
            reader: Default::default(),
        }
    }
}
