//! What the engine derives from the options for a table: the builder options for a table
//! written to a level ([`Options::table_builder_options`]; the file metadata a version records
//! for a finished table is `crate::version::FileMetaData::from_table`).
//!
//! Who calls: flush and ingestion (`db/`), the compaction job, [`super::SstFileWriter`]. Pure
//! functions; no IO, no locks. They live here, with the table format, so that nothing below
//! `db/` reaches up into it.

use super::TableBuilderOptions;
use crate::options::Options;

impl Options {
    /// Builder options for a table written to `level` (`bottommost`: no older data lies below
    /// it, which selects `bottommost_compression`).
    pub fn table_builder_options(&self, level: usize, bottommost: bool) -> TableBuilderOptions {
        TableBuilderOptions {
            block_size: self.block_size,
            block_restart_interval: self.block_restart_interval,
            block_size_deviation: self.block_size_deviation,
            bloom_bits_per_key: self.bloom_bits_per_key,
            compression: self.compression_for_level(level, bottommost),
            compression_level: self.compression_level_for(bottommost),
            checksum: self.checksum,
            partitioned_index: self.index_type == crate::options::IndexType::TwoLevelIndexSearch,
            partition_filters: self.partition_filters,
            metadata_block_size: self.metadata_block_size,
        }
    }
}
