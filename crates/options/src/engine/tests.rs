//! The engine option table's tests: RocksDB's spellings, bad values named, and one validation
//! per option whatever its spelling.

use super::*;
use talus::cache::MetadataChargePolicy;

#[test]
fn names_are_unique_and_every_table_option_exists() {
    let mut names: Vec<&str> = all().iter().map(|o| o.name).collect();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "duplicate option names");
    for t in TABLE_OPTIONS {
        assert!(find(t).is_some(), "{t}");
    }
}

#[test]
fn values_in_rocksdb_spellings() {
    let mut o = Options::default();
    for (k, v) in [
        ("compression", "kZSTD"),
        ("compression_per_level", "kNoCompression:kLZ4Compression"),
        ("bottommost_compression", "kZSTD"),
        ("compaction_style", "kCompactionStyleUniversal"),
        ("filter_policy", "bloomfilter:12:false"),
        ("block_cache", "{id=HyperClockCache;capacity=1024;num_shard_bits=2;estimated_entry_charge=4096;metadata_charge_policy=kDontChargeCacheMetadata}"),
        ("compaction_options_universal", "{size_ratio=5;min_merge_width=3;max_merge_width=4294967295;max_size_amplification_percent=150}"),
        ("intra_l0_compaction", "no"),
        ("compression_opts", "-14:32767:0"),
        ("max_bytes_for_level_multiplier", "8.5"),
        ("checksum", "kCRC32c"),
    ] {
        set(&mut o, k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    assert_eq!(o.compression, CompressionType::Zstd);
    assert_eq!(o.compression_per_level, vec![CompressionType::None, CompressionType::Lz4]);
    assert_eq!(o.bottommost_compression, Some(CompressionType::Zstd));
    assert_eq!(o.compaction_style, CompactionStyle::Universal);
    assert_eq!(o.bloom_bits_per_key, 12);
    assert_eq!((o.cache_type, o.block_cache_capacity), (CacheType::HyperClockCache, 1024));
    assert_eq!((o.block_cache_num_shard_bits, o.estimated_entry_charge), (2, 4096));
    assert_eq!(o.block_cache_metadata_charge_policy, MetadataChargePolicy::DontCharge);
    assert_eq!((o.size_ratio, o.min_merge_width, o.max_merge_width), (5, 3, usize::MAX));
    assert!(!o.intra_l0_compaction);
    assert_eq!(o.max_bytes_for_level_multiplier, 8.5);
    assert_eq!(o.checksum, ChecksumType::Crc32c);
    set(&mut o, "checksum", "xxh3").unwrap();
    assert_eq!(o.checksum, ChecksumType::Xxh3);
}

#[test]
fn bad_values_name_the_option() {
    for (k, v) in [
        ("write_buffer_size", "big"),
        ("compression", "brotli"),
        ("intra_l0_compaction", "maybe"),
        ("filter_policy", "ribbonfilter:10"),
        ("compression_opts", "-14:23:0"),
        ("compression_opts", "-14:1:0:16384"),
        ("bottommost_compression_opts", "{level=-131073;enabled=true}"),
        ("block_cache", "{id=Nope}"),
        ("cache_high_pri_pool_ratio", "1.5"),
        ("max_subcompactions", "-1"),
        ("checksum", "kxxHash64"),
        ("checksum", "kNoChecksum"),
    ] {
        let e = set(&mut Options::default(), k, v).unwrap_err();
        assert!(e.contains(k), "{k}={v}: {e}");
    }
    assert!(set(&mut Options::default(), "bogus", "1").unwrap_err().contains("bogus"));
}

/// Issue 34: `write_buffer_size=64k` and `block_cache={capacity=1M}` were refused; RocksDB's
/// `ParseUint64` takes k/m/g/t in either case, in every spelling.
#[test]
fn integers_take_rocksdb_size_suffixes_in_every_spelling() {
    let mut o = Options::default();
    set(&mut o, "write_buffer_size", "64k").unwrap();
    set(&mut o, "target_file_size_base", "2M").unwrap();
    set(&mut o, "max_bytes_for_level_base", "1g").unwrap();
    set(&mut o, "hard_pending_compaction_bytes_limit", "1T").unwrap();
    set(&mut o, "block_cache", "{capacity=1M}").unwrap();
    assert_eq!((o.write_buffer_size, o.target_file_size_base), (64 << 10, 2 << 20));
    assert_eq!(
        (o.max_bytes_for_level_base, o.hard_pending_compaction_bytes_limit),
        (1 << 30, 1 << 40)
    );
    assert_eq!(o.block_cache_capacity, 1 << 20);
    set(&mut o, "block_cache", "2m").unwrap();
    assert_eq!(o.block_cache_capacity, 2 << 20);
    set(&mut o, "block_based_table_factory", "{block_size=16k;metadata_block_size=8K}").unwrap();
    assert_eq!((o.block_size, o.metadata_block_size), (16 << 10, 8 << 10));
    set(&mut o, "compaction_options_universal", "{max_merge_width=4k}").unwrap();
    assert_eq!(o.max_merge_width, 4096);
    set(&mut o, "cache_size", "8m").unwrap();
    assert_eq!(o.block_cache_capacity, 8 << 20);
    for (k, v) in [("write_buffer_size", "64kb"), ("write_buffer_size", "-1"), ("block_size", "3x")]
    {
        let e = set(&mut Options::default(), k, v).unwrap_err();
        assert!(e.contains(k) && e.contains(v), "{k}={v}: {e}");
    }
    let e = set(&mut Options::default(), "block_cache", "{capacity=1q}").unwrap_err();
    assert!(e.contains("block_cache.capacity"), "{e}");
}

/// Issue 34: `--cache_numshardbits=64` was refused (at open) but `block_cache={num_shard_bits=64}`
/// (and 40, 63) was taken as 20. RocksDB makes no cache of 2^20 shards or more; both spellings
/// now go through one setter with that limit.
#[test]
fn num_shard_bits_has_one_limit_whatever_the_spelling() {
    for bits in ["20", "40", "63", "64", "1k"] {
        for (name, value, shown) in [
            ("cache_numshardbits", bits.to_string(), "--cache_numshardbits"),
            ("block_cache", format!("{{num_shard_bits={bits}}}"), "--block_cache.num_shard_bits"),
            (
                "block_based_table_factory",
                format!("{{block_cache={{id=LRUCache;num_shard_bits={bits}}}}}"),
                "--block_cache.num_shard_bits",
            ),
        ] {
            let e = set(&mut Options::default(), name, &value).unwrap_err();
            assert!(e.contains(shown) && e.contains("at most 19"), "{name}={value}: {e}");
        }
    }
    for (bits, want) in [("19", 19), ("0", 0), ("4", 4), ("-1", 6), ("-7", 6)] {
        let mut o = Options { block_cache_num_shard_bits: 3, ..Options::default() };
        set(&mut o, "cache_numshardbits", bits).unwrap();
        assert_eq!(o.block_cache_num_shard_bits, want, "cache_numshardbits={bits}");
        let mut o = Options { block_cache_num_shard_bits: 3, ..Options::default() };
        set(&mut o, "block_cache", &format!("{{num_shard_bits={bits}}}")).unwrap();
        assert_eq!(o.block_cache_num_shard_bits, want, "block_cache num_shard_bits={bits}");
        assert!(o.validate().is_ok());
    }
    let o = Options { block_cache_num_shard_bits: 20, ..Options::default() };
    assert!(o.validate().unwrap_err().to_string().contains("at most 19"));
}

/// A struct field and its flat option refuse the same values.
#[test]
fn cache_fields_and_flat_options_agree() {
    for (field, flat, v) in [
        ("capacity", "cache_size", "-5"),
        ("high_pri_pool_ratio", "cache_high_pri_pool_ratio", "1.5"),
        ("estimated_entry_charge", "estimated_entry_charge", "lots"),
    ] {
        let nested = set(&mut Options::default(), "block_cache", &format!("{{{field}={v}}}"));
        let flat_err = set(&mut Options::default(), flat, v).unwrap_err();
        let nested = nested.unwrap_err();
        assert_eq!(nested.replace(&format!("block_cache.{field}"), flat), flat_err);
    }
}

/// RocksDB 10's `compaction_options_universal` has `max_read_amp` and `reduce_file_locking`:
/// accepted at RocksDB's defaults, refused otherwise.
#[test]
fn universal_fields_of_rocksdb_10_at_their_defaults() {
    let v = "{reduce_file_locking=false;incremental=false;compression_size_percent=-1;\
             allow_trivial_move=false;max_size_amplification_percent=200;\
             max_merge_width=4294967295;stop_style=kCompactionStopStyleTotalSize;\
             min_merge_width=2;max_read_amp=-1;size_ratio=1;}";
    let mut o = Options::default();
    set(&mut o, "compaction_options_universal", v).unwrap();
    assert_eq!((o.size_ratio, o.max_size_amplification_percent), (1, 200));
    for bad in ["{max_read_amp=0}", "{reduce_file_locking=true}", "{max_read_amp=x}"] {
        let e = set(&mut o, "compaction_options_universal", bad).unwrap_err();
        assert!(e.contains("compaction_options_universal."), "{bad}: {e}");
    }
}

/// The device caps (`io_limit_*`, Talus only): positive integers with RocksDB's suffixes; 0
/// and negatives refused by name; written to the OPTIONS file only when set, and read back.
#[test]
fn device_caps_are_positive_and_round_trip_through_the_options_file() {
    let mut o = Options::default();
    set(&mut o, "io_limit_read_iops", "1k").unwrap();
    set(&mut o, "io_limit_write_bytes_per_sec", "16M").unwrap();
    set(&mut o, "io_limit_bytes_per_sec", "16000000").unwrap();
    assert_eq!((o.io_limits.read_iops, o.io_limits.write_bytes_per_sec), (1024, 16 << 20));
    assert_eq!(o.io_limits.bytes_per_sec, 16_000_000);
    for (name, bad) in [
        ("io_limit_iops", "0"),
        ("io_limit_write_iops", "-5"),
        ("io_limit_read_iops", "x"),
        ("io_limit_bytes_per_sec", "0"),
        ("io_limit_bytes_per_sec", "-1"),
    ] {
        let e = set(&mut o, name, bad).unwrap_err();
        assert!(e.contains(name), "{name}={bad}: {e}");
    }
    let text = talus::options_file::render(&o);
    assert!(text.contains("io_limit_read_iops=1024") && !text.contains("io_limit_iops"), "{text}");
    assert!(text.contains("io_limit_bytes_per_sec=16000000"), "{text}");
    let mut back = Options::default();
    crate::file::apply(&mut back, &text, false).unwrap();
    assert_eq!(back.io_limits, o.io_limits);
    let plain = talus::options_file::render(&Options::default());
    assert!(!plain.contains("io_limit"), "an uncapped database's file names no cap");
}

/// Issue 37: compression levels as RocksDB reads them: `compression_opts`'s level for every
/// table (post 002's `-14:1:0`), `bottommost_compression_opts`'s only when `enabled`, both
/// spellings; dictionaries refused; both written to the OPTIONS file and read back.
#[test]
fn compression_levels_in_both_spellings_round_trip() {
    let mut o = Options::default();
    set(&mut o, "compression_opts", "-14:1:0").unwrap();
    assert_eq!((o.compression_level, o.bottommost_compression_level), (1, None));
    set(&mut o, "bottommost_compression_opts", "{level=19;enabled=false}").unwrap();
    assert_eq!(o.bottommost_compression_level, None, "not enabled: the bottommost uses level 1");
    set(&mut o, "bottommost_compression_opts", "{window_bits=-14;level=19;enabled=true}").unwrap();
    assert_eq!(o.bottommost_compression_level, Some(19));
    set(&mut o, "bottommost_compression_opts", "-14:-5:0:0:0:1:1").unwrap();
    assert_eq!(o.bottommost_compression_level, Some(-5));
    set(&mut o, "bottommost_compression_opts", "{level=19;enabled=true}").unwrap();
    for dict in ["{max_dict_bytes=16384}", "-14:3:0:0:100000"] {
        assert!(set(&mut o, "compression_opts", dict).unwrap_err().contains("dictionar"), "{dict}");
    }
    let text = talus::options_file::render(&o);
    let mut back = Options::default();
    crate::file::apply(&mut back, &text, false).unwrap();
    assert_eq!(
        (back.compression_level, back.bottommost_compression_level),
        (1, Some(19)),
        "{text}"
    );
    let plain = talus::options_file::render(&Options::default());
    let mut back = Options::default();
    crate::file::apply(&mut back, &plain, false).unwrap();
    assert_eq!(back.compression_level, talus::DEFAULT_COMPRESSION_LEVEL);
    assert_eq!(back.bottommost_compression_level, None);
}
