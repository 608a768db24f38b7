//! Tests of db_bench's flags: defaults and values, errors that name the flag, the accepted
//! no-op flags and `--undefok`.

use super::*;

fn p(args: &[&str]) -> Result<Flags, String> {
    parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn defaults_and_values() {
    let f = p(&[]).unwrap();
    assert_eq!(f.num, 1_000_000);
    assert_eq!(f.key_size, 16);
    assert_eq!(f.value_size, 100);
    assert_eq!(f.readwritepercent, 90);
    assert_eq!(f.checksum_type, 4, "kXXH3, RocksDB 10's db_bench default");
    assert_eq!(p(&["--checksum_type=1"]).unwrap().checksum_type, 1);
    let f =
        p(&["--num=10", "--histogram", "--sync=0", "--disable_wal=true", "--compression_type=lz4"])
            .unwrap();
    assert_eq!(f.num, 10);
    assert!(f.histogram && !f.sync && f.disable_wal);
    assert_eq!(f.compression_type, "lz4");
    let f = p(&["--histogram=1", "--nohistogram"]).unwrap();
    assert!(!f.histogram);
}

#[test]
fn errors_name_the_flag() {
    for (args, want) in [
        (&["--num=-5"][..], "--num"),
        (&["--num=abc"][..], "--num"),
        (&["--compression_type=foo"][..], "--compression_type"),
        (&["--benchmarks=fillseq,nosuch"][..], "nosuch"),
        (&["--nosuchflag=1"][..], "nosuchflag"),
        (&["--compression_per_level=lz4,brotli"][..], "brotli"),
        (&["--block_restart_interval=x"][..], "--block_restart_interval"),
        (&["--histogram=maybe"][..], "--histogram"),
        (&["--cache_type=no_such_cache"][..], "--cache_type"),
        (&["--engine=leveldb"][..], "--engine"),
        (&["--checksum_type=3"][..], "--checksum_type"),
        (&["--checksum_type=0"][..], "kXXH3"),
        (&["--num"][..], "--num"),
        (&["stray"][..], "stray"),
    ] {
        let e = p(args).unwrap_err();
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

#[test]
fn noops_and_undefok() {
    p(&["--wal_dir=/x", "--bytes_per_sync=1048576", "--memtablerep=skip_list"]).unwrap();
    let f = p(&["--use_direct_reads", "--use_direct_io_for_flush_and_compaction=1"]).unwrap();
    assert!(f.use_direct_reads && f.use_direct_io_for_flush_and_compaction);
    assert!(!help_text().contains("--use_direct_reads: buffered IO only"));
    assert!(p(&["--metadata_block_size=0"]).unwrap_err().contains("--metadata_block_size"));
    assert!(p(&["--blob_compaction_readahead_size=1"]).is_err());
    p(&[
        "--undefok=blob_compaction_readahead_size,foo",
        "--blob_compaction_readahead_size=1",
        "--foo",
    ])
    .unwrap();
    assert!(help_text().contains("--wal_dir"));
    assert!(help_text().contains("--seek_nexts (default 0)"));
}

/// Issue 34: one number syntax for an option whatever tool takes it: db_bench's integer flags
/// take RocksDB's k/m/g/t suffixes as `talus ldb` and option strings do, and refuse the rest.
#[test]
fn integer_flags_take_rocksdb_suffixes() {
    let f = p(&["--write_buffer_size=64k", "--num=1M", "--cache_size=1g"]).unwrap();
    assert_eq!((f.write_buffer_size, f.num, f.cache_size), (64 << 10, 1 << 20, 1 << 30));
    for bad in ["--write_buffer_size=64kb", "--num=1.5k", "--cache_numshardbits=20"] {
        let name = bad.split('=').next().unwrap_or(bad);
        assert!(p(&[bad]).unwrap_err().contains(name), "{bad}");
    }
}
