//! What the engine derives from the options and from a finished table: the builder options
//! for a table written to a level ([`Options::table_builder_options`]) and the file metadata a
//! version records for it ([`FileMetaData::from_table`]).
//!
//! Who calls: flush and ingestion (`db/`), the compaction job, [`super::SstFileWriter`]. Pure
//! functions; no IO, no locks. They live here, with the table format, so that nothing below
//! `db/` reaches up into it.

use super::{TableBuilderOptions, TableProperties};
use crate::iter::range_del::RangeTombstone;
use crate::key::{compare_internal, InternalKey, ValueKind, MAX_SEQUENCE};
use crate::options::Options;
use crate::version::FileMetaData;

impl Options {
    /// Builder options for a table written to `level` (`bottommost`: no older data lies below
    /// it, which selects `bottommost_compression`).
    pub fn table_builder_options(&self, level: usize, bottommost: bool) -> TableBuilderOptions {
        TableBuilderOptions {
            block_size: self.block_size,
            block_restart_interval: self.block_restart_interval,
            bloom_bits_per_key: self.bloom_bits_per_key,
            compression: self.compression_for_level(level, bottommost),
            partitioned_index: self.index_type == crate::options::IndexType::TwoLevelIndexSearch,
            partition_filters: self.partition_filters,
            metadata_block_size: self.metadata_block_size,
        }
    }
}

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
            reader: Default::default(),
        }
    }
}
