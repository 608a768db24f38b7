//! The OPTIONS file reader's tests: Talus's own files round-trip, every file RocksDB 7.8.3 and
//! 10.4.2 wrote in `crates/cli/tests/data` is read, and hand-made bad files are refused by name.

use super::*;
use talus::options::CacheType;
use talus::ChecksumType;
use talus::{CompactionStyle, CompressionType, IndexType, WalRecoveryMode};

/// A complete file with `db` in `[DBOptions]` and `cf` in `[CFOptions "default"]`.
fn complete(db: &str, cf: &str) -> String {
    format!("[Version]\n  options_file_version=1.1\n[DBOptions]\n{db}[CFOptions \"default\"]\n{cf}")
}

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
    let file = |v: &str| complete(&format!("  allow_mmap_writes={v}\n"), "");
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
                allow_mmap_reads=false\n[CFOptions \"default\"]\n[CFOptions \"other\"]\n  \
                write_buffer_size=1\n[TableOptions/BlockBasedTable \"default\"]\n  \
                block_size=8192\n  format_version=6\n";
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
    let e = apply(&mut Options::default(), &complete("  max_open_files=many\n", ""), true);
    assert!(e.unwrap_err().contains("line 4: invalid value \"many\" for flag --max_open_files"));
    assert!(apply(&mut Options::default(), &complete("  junk\n", ""), true).is_err());
    assert!(apply(&mut Options::default(), "  a=1\n", true).is_err());
    // Nothing of a refused file is applied.
    let mut o = Options::default();
    let text = complete("  max_open_files=7\n", "  write_buffer_size=1\n  write_buffer_size=2\n");
    assert!(apply(&mut o, &text, false).unwrap_err().contains("set twice"));
    assert_eq!(o.max_open_files, Options::default().max_open_files);
}

/// Every OPTIONS file RocksDB 7.8.3 and 10.4.2 wrote (`crates/cli/tests/data/README.md` says
/// how): refused only for naming options Talus lacks, and with `ignore_unknown` read with the
/// values each command set.
#[test]
fn every_file_rocksdb_wrote_is_read() {
    macro_rules! data {
        ($name:literal) => {
            ($name, include_str!(concat!("../../../cli/tests/data/", $name)))
        };
    }
    let files = [
        data!("rocksdb-7.8.3-default-OPTIONS"),
        data!("rocksdb-7.8.3-universal-OPTIONS"),
        data!("rocksdb-7.8.3-leveled-OPTIONS"),
        data!("rocksdb-10.4.2-default-OPTIONS"),
        data!("rocksdb-10.4.2-universal-OPTIONS"),
        data!("rocksdb-10.4.2-leveled-OPTIONS"),
    ];
    for (name, text) in files {
        let e = apply(&mut Options::default(), text, false).unwrap_err();
        assert!(e.contains("Talus does not have") && e.contains("format_version"), "{name}: {e}");
        let mut o = Options::default();
        let applied = apply(&mut o, text, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(applied.ignored.len() > 50, "{name}: {}", applied.ignored.len());
        // Both versions' defaults, and what every command here leaves alone.
        assert_eq!(
            (o.max_background_jobs, o.paranoid_checks),
            (if name.contains("universal") { 4 } else { 2 }, true),
            "{name}"
        );
        assert_eq!(o.max_compaction_bytes, 25 * o.target_file_size_base, "{name}");
        assert_eq!(o.wal_recovery_mode, WalRecoveryMode::PointInTimeRecovery, "{name}");
        assert!(!o.use_direct_io_for_flush_and_compaction, "{name}");
        if name.contains("default") {
            assert_eq!((o.write_buffer_size, o.max_write_buffer_number), (64 << 20, 2), "{name}");
            assert_eq!((o.num_levels, o.block_size), (7, 4096), "{name}");
            assert_eq!(o.compaction_style, CompactionStyle::Level, "{name}");
            assert_eq!(o.compression, CompressionType::Snappy, "{name}");
            assert_eq!((o.bloom_bits_per_key, o.checksum), (0, ChecksumType::Xxh3), "{name}");
            assert_eq!(o.max_open_files, -1, "{name}");
            // RocksDB 8.4 turned dynamic level bytes on by default.
            assert_eq!(o.level_compaction_dynamic_level_bytes, name.contains("10.4.2"), "{name}");
        } else if name.contains("universal") {
            assert_eq!((o.write_buffer_size, o.max_write_buffer_number), (1 << 20, 4), "{name}");
            assert_eq!((o.num_levels, o.block_size), (6, 16384), "{name}");
            assert_eq!(o.compaction_style, CompactionStyle::Universal, "{name}");
            assert_eq!((o.size_ratio, o.min_merge_width), (1, 2), "{name}");
            assert_eq!((o.max_merge_width, o.max_size_amplification_percent), (usize::MAX, 200));
            assert_eq!(o.compression, CompressionType::Zstd, "{name}");
            assert_eq!((o.bloom_bits_per_key, o.checksum), (10, ChecksumType::Crc32c), "{name}");
            assert_eq!((o.index_type, o.partition_filters), (IndexType::TwoLevelIndexSearch, true));
            assert!(o.cache_index_and_filter_blocks && !o.pin_top_level_index_and_filter);
            assert_eq!(o.level0_file_num_compaction_trigger, 8, "{name}");
            assert_eq!((o.target_file_size_base, o.max_bytes_for_level_base), (4 << 20, 16 << 20));
            assert_eq!(o.hard_pending_compaction_bytes_limit, 128 << 30, "{name}");
            assert!(o.validate().is_ok(), "{name}");
        } else {
            assert_eq!(o.write_buffer_size, 8 << 20, "{name}");
            assert_eq!(o.compression, CompressionType::Lz4, "{name}");
            assert_eq!(
                o.compression_per_level,
                [[CompressionType::None; 2].as_slice(), &[CompressionType::Lz4; 5]].concat(),
                "{name}"
            );
            assert!(o.level_compaction_dynamic_level_bytes, "{name}");
            assert_eq!((o.bloom_bits_per_key, o.block_restart_interval), (16, 8), "{name}");
            assert_eq!(o.max_bytes_for_level_multiplier, 8.0, "{name}");
            assert_eq!((o.max_subcompactions, o.max_open_files), (2, 500), "{name}");
            assert!(o.use_direct_reads && o.cache_index_and_filter_blocks, "{name}");
            assert!(o.pin_l0_filter_and_index_blocks_in_cache, "{name}");
            assert_eq!((o.compaction_readahead_size, o.wal_bytes_per_sync), (1 << 20, 65536));
            assert!(o.validate().is_ok(), "{name}");
        }
    }
}

/// The OPTIONS-file repros of issue 34, each accepted or refused as RocksDB-compatible and strict.
#[test]
fn issue_34_comments_bom_crlf_and_suffixes_are_read() {
    let base = complete("  max_open_files=7 # a trailing comment\n", "  write_buffer_size=64k\n");
    for text in [
        base.clone(),
        format!("\u{feff}{base}"),
        base.replace('\n', "\r\n"),
        format!("\u{feff}# header comment\r\n{}", base.replace('\n', "\r\n")),
    ] {
        let mut o = Options::default();
        apply(&mut o, &text, false).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        assert_eq!((o.max_open_files, o.write_buffer_size), (7, 65536), "{text:?}");
    }
    let table = "[TableOptions/BlockBasedTable \"default\"]\n  block_cache={capacity=1M}\n";
    let mut o = Options::default();
    apply(&mut o, &format!("{}{table}", complete("", "")), false).unwrap();
    assert_eq!(o.block_cache_capacity, 1 << 20);
}

/// Hand-made bad files: each refused with a message naming the problem, `o` untouched.
#[test]
fn issue_34_bad_files_are_refused_by_name() {
    let good = complete("  max_open_files=7\n", "  write_buffer_size=1048576\n");
    let table = "[TableOptions/BlockBasedTable \"default\"]\n";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "empty",
            String::new(),
            "truncated?): missing [Version], [DBOptions], [CFOptions \"default\"];",
        ),
        ("only comments", "# nothing\n\n".into(), "no sections at all"),
        (
            "no [Version]",
            good.replace("[Version]\n  options_file_version=1.1\n", ""),
            "missing [Version];",
        ),
        (
            "no [DBOptions]",
            good.replace("[DBOptions]\n  max_open_files=7\n", ""),
            "missing [DBOptions];",
        ),
        (
            "no [CFOptions]",
            good.replace("[CFOptions \"default\"]\n  write_buffer_size=1048576\n", ""),
            "missing [CFOptions \"default\"];",
        ),
        (
            "only [Version]",
            "[Version]\n  rocksdb_version=7.8.3\n".into(),
            "missing [DBOptions], [CFOptions \"default\"];",
        ),
        (
            "truncated",
            good[..good.find("[CFOptions").unwrap_or(0) + 5].to_string(),
            "line 5: malformed section header",
        ),
        (
            "duplicate key",
            good.replace("=7\n", "=7\n  max_open_files=9\n"),
            "max_open_files is set twice in [DBOptions] (lines 4 and 5)",
        ),
        (
            "duplicate section",
            format!("{good}[DBOptions]\n"),
            "section [DBOptions] appears twice (lines 3 and 7)",
        ),
        ("binary junk", "\u{1}\u{2}\0\u{7f}".into(), "line 1: expected name=value"),
        (
            "shard bits",
            format!("{good}{table}  block_cache={{num_shard_bits=64}}\n"),
            "line 8: invalid value \"64\" for flag --block_cache.num_shard_bits:",
        ),
        (
            "bad suffix",
            good.replace("1048576", "1mb"),
            "line 6: invalid value \"1mb\" for flag --write_buffer_size",
        ),
        ("file version", good.replace("=1.1", "=2.0"), "line 2: options_file_version 2.0"),
    ];
    for (what, text, want) in cases {
        let mut o = Options::default();
        let e = apply(&mut o, &text, true).unwrap_err();
        assert!(e.contains(want), "{what}: {e}");
        assert_eq!(o.max_open_files, Options::default().max_open_files, "{what}");
    }
}

/// RocksDB 10.4.2's own file of three families (`db_bench --num_column_families=3`, see
/// `crates/cli/tests/data/README.md`), and a copy with different values per family: each
/// family gets `[DBOptions]` plus its own sections, nothing of the others'.
#[test]
fn a_file_of_several_families_is_read_per_family() {
    let text = include_str!("../../../cli/tests/data/rocksdb-10.4.2-3cf-OPTIONS");
    let e = families(&Options::default(), text, false).unwrap_err();
    assert!(e.contains("format_version"), "{e}");
    let (fams, applied) = families(&Options::default(), text, true).unwrap();
    let names: Vec<&str> = fams.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["default", "column_family_name_000001", "column_family_name_000002"]);
    for (name, o) in &fams {
        assert_eq!((o.write_buffer_size, o.compression), (1 << 20, CompressionType::Lz4), "{name}");
    }
    // `[DBOptions]`' unknown options are named once, not once per family.
    let db_unknown = applied.ignored.iter().filter(|u| u.starts_with("[DBOptions]")).count();
    let mut single = Options::default();
    let one = apply(&mut single, text, true).unwrap();
    assert_eq!(db_unknown, one.ignored.iter().filter(|u| u.starts_with("[DBOptions]")).count());
    assert_eq!(single.write_buffer_size, 1 << 20);

    // Different values per family land in their family only.
    let mut edited = String::new();
    let mut family = String::new();
    for line in text.lines() {
        if let Some(n) = cf_section(line.trim()).or_else(|| table_section(line.trim())) {
            family = n.to_string();
        }
        let line = match (family.as_str(), line.trim()) {
            ("column_family_name_000001", "write_buffer_size=1048576") => {
                "  write_buffer_size=4096"
            }
            ("column_family_name_000002", "block_size=4096") => "  block_size=16384",
            ("column_family_name_000002", "compaction_style=kCompactionStyleLevel") => {
                "  compaction_style=kCompactionStyleUniversal"
            }
            _ => line,
        };
        edited.push_str(line);
        edited.push('\n');
    }
    let (fams, _) = families(&Options::default(), &edited, true).unwrap();
    let shape: Vec<_> =
        fams.iter().map(|(_, o)| (o.write_buffer_size, o.block_size, o.compaction_style)).collect();
    use CompactionStyle::{Level, Universal};
    assert_eq!(shape, [(1 << 20, 4096, Level), (4096, 4096, Level), (1 << 20, 16384, Universal)]);
    // `apply` reads `default` only and names the other families' sections.
    let e = apply(&mut Options::default(), &edited, false).unwrap_err();
    assert!(e.contains("[CFOptions \"column_family_name_000001\"]"), "{e}");
    // A table section of a family without [CFOptions] is an unknown section.
    let orphan = format!("{text}[TableOptions/BlockBasedTable \"nobody\"]\n  block_size=1\n");
    let (_, a) = families(&Options::default(), &orphan, true).unwrap();
    assert!(a.ignored.iter().any(|u| u.contains("\"nobody\"")), "{:?}", a.ignored);
}

/// A database with two families writes an OPTIONS file with a `[CFOptions "NAME"]` and a
/// `[TableOptions/BlockBasedTable "NAME"]` section per family (rewritten when a family comes or
/// goes, as RocksDB's), and the reader gives each family its own options back.
#[test]
fn a_database_with_families_writes_one_section_pair_per_family() {
    let dir = tempfile::tempdir().unwrap();
    let db_opts = Options { create_if_missing: true, ..Default::default() };
    let db = talus::Db::open(dir.path(), db_opts.clone()).unwrap();
    let small = Options { write_buffer_size: 1 << 20, block_size: 16384, ..Default::default() };
    db.create_column_family("small", &small).unwrap();
    let newest = || {
        let mut files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("OPTIONS-"))
            .collect();
        files.sort();
        assert_eq!(files.len(), 1, "older OPTIONS files are removed: {files:?}");
        std::fs::read_to_string(dir.path().join(&files[0])).unwrap()
    };
    let text = newest();
    let (fams, _) = families(&Options::default(), &text, false).unwrap();
    let got: Vec<(&str, usize, usize)> =
        fams.iter().map(|(n, o)| (n.as_str(), o.write_buffer_size, o.block_size)).collect();
    let d = Options::default();
    assert_eq!(got, [("default", d.write_buffer_size, d.block_size), ("small", 1 << 20, 16384)]);
    db.drop_column_family(&db.cf_handle("small").unwrap()).unwrap();
    let (fams, _) = families(&Options::default(), &newest(), false).unwrap();
    assert_eq!(fams.len(), 1, "the dropped family's sections are gone");
}
