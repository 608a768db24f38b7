//! RocksDB's OPTIONS file (`OPTIONS-NNNNNN`, an ini file) read into [`talus::Options`]: the
//! inverse of `talus::options_file::render`, and a reader of the files RocksDB writes.
//!
//! Sections: `[Version]` (checked for `options_file_version`, otherwise informational),
//! `[DBOptions]`, `[CFOptions "default"]`, `[TableOptions/BlockBasedTable "default"]`. Every
//! `name=value` goes through [`super::engine::set`]; a name Talus does not have, a column family
//! other than `default`, or a section it does not know is collected, and the read fails naming
//! all of them unless `ignore_unknown` (RocksDB's `ignore_unknown_options`) is set. A value
//! Talus refuses is an error either way. Pure parsing; the caller reads the file.

use talus::Options;

use super::engine;

/// What applying a file did: the options it could not apply (when ignoring them).
#[derive(Debug, Default)]
pub struct Applied {
    /// `section: name` of each option skipped as unknown.
    pub ignored: Vec<String>,
}

/// Applies the OPTIONS file `text` to `o`.
pub fn apply(o: &mut Options, text: &str, ignore_unknown: bool) -> Result<Applied, String> {
    let mut unknown: Vec<String> = Vec::new();
    let mut section = String::new();
    let mut section_known = false;
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            if !line.ends_with(']') {
                return Err(format!("line {}: malformed section header {line:?}", lineno + 1));
            }
            section = line.to_string();
            section_known = matches!(
                line,
                "[Version]"
                    | "[DBOptions]"
                    | "[CFOptions \"default\"]"
                    | "[TableOptions/BlockBasedTable \"default\"]"
            );
            if !section_known {
                unknown.push(format!("{section} (a section or column family Talus does not have)"));
            }
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("line {}: expected name=value, got {line:?}", lineno + 1))?;
        let (name, value) = (name.trim(), value.trim());
        if section.is_empty() {
            return Err(format!("line {}: {name} is outside any section", lineno + 1));
        }
        if !section_known {
            continue;
        }
        if section == "[Version]" {
            if name == "options_file_version" && !value.starts_with("1.") {
                return Err(format!("options_file_version {value} is not supported (1.x)"));
            }
            continue;
        }
        let in_table = section.starts_with("[TableOptions");
        let known = engine::find(name).is_some()
            && (engine::TABLE_OPTIONS.contains(&name) == in_table)
            && !matches!(name, "block_based_table_factory");
        if !known {
            unknown.push(format!("{section} {name}"));
            continue;
        }
        engine::set(o, name, value).map_err(|e| format!("line {}: {e}", lineno + 1))?;
    }
    if !unknown.is_empty() && !ignore_unknown {
        return Err(format!(
            "{} option(s) Talus does not have (pass --ignore_unknown_options to skip them): {}",
            unknown.len(),
            unknown.join(", ")
        ));
    }
    Ok(Applied { ignored: unknown })
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus::options::CacheType;
    use talus::{CompactionStyle, CompressionType, IndexType, WalRecoveryMode};

    fn every_option_off_default() -> Options {
        Options {
            create_if_missing: true,
            error_if_exists: true,
            paranoid_checks: false,
            max_open_files: 500,
            max_background_jobs: 5,
            max_subcompactions: 4,
            wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
            delayed_write_rate: 1234567,
            wal_bytes_per_sync: 777,
            wal_mmap_writes: false,
            rate_limiter_bytes_per_sec: 99999,
            use_direct_reads: true,
            use_direct_io_for_flush_and_compaction: true,
            compaction_readahead_size: 65536,
            write_buffer_size: 1 << 20,
            max_write_buffer_number: 5,
            level0_file_num_compaction_trigger: 3,
            level0_slowdown_writes_trigger: 8,
            level0_stop_writes_trigger: 12,
            max_bytes_for_level_base: 4 << 20,
            max_bytes_for_level_multiplier: 8.0,
            target_file_size_base: 2 << 20,
            target_file_size_multiplier: 2,
            num_levels: 5,
            compaction_style: CompactionStyle::Universal,
            compression: CompressionType::Zstd,
            compression_per_level: vec![CompressionType::None, CompressionType::Snappy],
            bottommost_compression: Some(CompressionType::Zstd),
            disable_auto_compactions: true,
            level_compaction_dynamic_level_bytes: false,
            max_compaction_bytes: 1 << 30,
            soft_pending_compaction_bytes_limit: 1 << 31,
            hard_pending_compaction_bytes_limit: 1 << 33,
            size_ratio: 3,
            min_merge_width: 4,
            max_merge_width: 9,
            max_size_amplification_percent: 120,
            intra_l0_compaction: false,
            block_size: 16384,
            block_restart_interval: 8,
            bloom_bits_per_key: 14,
            cache_index_and_filter_blocks: true,
            pin_l0_filter_and_index_blocks_in_cache: true,
            pin_top_level_index_and_filter: false,
            index_type: IndexType::TwoLevelIndexSearch,
            partition_filters: true,
            metadata_block_size: 8192,
            checksum: talus::ChecksumType::Crc32c,
            cache_type: CacheType::HyperClockCache,
            block_cache_capacity: 123 << 20,
            block_cache_num_shard_bits: 3,
            block_cache_strict_capacity_limit: true,
            estimated_entry_charge: 8192,
            ..Options::default()
        }
    }

    #[test]
    fn a_talus_options_file_round_trips() {
        for o in [Options::default(), every_option_off_default()] {
            let text = talus::options_file::render(&o);
            let mut back = Options::default();
            let applied = apply(&mut back, &text, false).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(applied.ignored.is_empty());
            assert_eq!(talus::options_file::render(&back), text);
        }
        // The LRU cache's own fields too.
        let o = Options { high_pri_pool_ratio: 0.25, ..Options::default() };
        let mut back = Options::default();
        apply(&mut back, &talus::options_file::render(&o), false).unwrap();
        assert_eq!(back.high_pri_pool_ratio, 0.25);
    }

    /// RocksDB's `allow_mmap_writes` maps SST files, which Talus never does: a file asking for
    /// it is refused with the reason (not taken for Talus's WAL mapping); `false` applies.
    #[test]
    fn allow_mmap_writes_true_is_refused_and_false_applies() {
        let file = |v: &str| format!("[DBOptions]\n  allow_mmap_writes={v}\n");
        let mut o = Options::default();
        let e = apply(&mut o, &file("true"), false).unwrap_err();
        assert!(e.contains("allow_mmap_writes") && e.contains("wal_mmap_writes"), "{e}");
        let mut o = Options::default();
        apply(&mut o, &file("false"), false).unwrap();
        assert!(o.wal_mmap_writes, "RocksDB's option must not turn Talus's WAL mapping off");
    }

    #[test]
    fn unknown_options_are_named_unless_ignored() {
        let text = "[Version]\n  options_file_version=1.1\n[DBOptions]\n  max_open_files=7\n  \
                    allow_mmap_reads=false\n[CFOptions \"other\"]\n  write_buffer_size=1\n\
                    [TableOptions/BlockBasedTable \"default\"]\n  block_size=8192\n  format_version=6\n";
        let e = apply(&mut Options::default(), text, false).unwrap_err();
        assert!(e.contains("allow_mmap_reads") && e.contains("format_version"), "{e}");
        assert!(e.contains("CFOptions \"other\""), "{e}");
        let mut o = Options::default();
        let a = apply(&mut o, text, true).unwrap();
        assert_eq!(a.ignored.len(), 3);
        assert_eq!((o.max_open_files, o.block_size), (7, 8192));
        assert_eq!(o.write_buffer_size, Options::default().write_buffer_size, "other CF skipped");
    }

    #[test]
    fn a_bad_value_or_line_is_an_error_even_when_ignoring() {
        let e = apply(&mut Options::default(), "[DBOptions]\n  max_open_files=many\n", true);
        assert!(e.unwrap_err().contains("max_open_files"));
        assert!(apply(&mut Options::default(), "[DBOptions]\n  junk\n", true).is_err());
        assert!(apply(&mut Options::default(), "  a=1\n", true).is_err());
    }
}
