//! The setting a model-test case runs under: the file system backend, the write buffer size,
//! and the compaction and IO profile (a metamorphic parameter).

use talus::Options;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Backend {
    Sim,
    Real,
}

/// One case's setting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    pub(crate) backend: Backend,
    pub(crate) write_buffer_size: usize,
    /// Index into [`PROFILES`]: the compaction configuration (a metamorphic parameter: every
    /// configuration must give the oracle's answers).
    pub(crate) profile: usize,
}

/// Compaction and IO configurations the model test runs under.
pub(crate) const PROFILES: &[&str] = &[
    "leveled",
    "leveled-static",
    "parallel-intra-l0",
    "parallel-no-intra-l0",
    "direct-io-partitioned",
    "universal",
    "subcompactions-4",
    "blob-files",
];

/// The profile with direct IO and partitioned index and filters on.
pub(crate) const DIRECT_PROFILE: usize = 4;

/// Applies profile `p` of [`PROFILES`] to `o`.
pub(crate) fn apply_profile(o: &mut Options, p: usize) {
    match PROFILES.get(p).copied().unwrap_or("leveled") {
        "leveled-static" => o.level_compaction_dynamic_level_bytes = false,
        "parallel-intra-l0" => {
            o.max_background_jobs = 4;
            o.intra_l0_compaction = true;
        }
        "subcompactions-4" => o.max_subcompactions = 4,
        // Key-value separation: every value of 8 bytes or more goes to a blob file, small blob
        // files (many of them), L0 outputs separated by flushes, garbage collected by every
        // compaction from the older half of the files.
        "blob-files" => {
            o.enable_blob_files = true;
            o.min_blob_size = 8;
            o.blob_file_size = 2048;
            o.enable_blob_garbage_collection = true;
            o.blob_garbage_collection_age_cutoff = 0.5;
        }
        "universal" => o.compaction_style = talus::CompactionStyle::Universal,
        "parallel-no-intra-l0" => {
            o.max_background_jobs = 4;
            o.intra_l0_compaction = false;
        }
        // Direct IO for reads, flushes and compactions (SimFs checks every request's
        // alignment), partitioned index and filters with tiny partitions, index and filter
        // blocks in a small block cache (the top levels pinned, partitions evicted), and a
        // readahead smaller than a file so compactions read in several chunks.
        "direct-io-partitioned" => {
            o.use_direct_reads = true;
            o.use_direct_io_for_flush_and_compaction = true;
            o.index_type = talus::IndexType::TwoLevelIndexSearch;
            o.partition_filters = true;
            o.metadata_block_size = 64;
            o.cache_index_and_filter_blocks = true;
            o.block_cache_capacity = 16 << 10;
            o.compaction_readahead_size = 4096;
        }
        _ => {}
    }
}
