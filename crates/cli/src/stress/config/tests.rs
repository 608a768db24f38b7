//! Tests of the stress worker's options: a configuration survives `to_args` and parsing back,
//! and a bad op mix or a missing `--db` is refused.

use super::*;

#[test]
fn to_args_parses_back_to_the_same_config() {
    let mut c = Config::new("/tmp/d".into(), Some("/tmp/e".into()));
    c.sync = false;
    c.compression = CompressionType::Zstd;
    c.mix = [20, 20, 10, 10, 10, 20, 10];
    c.max_open_files = 20;
    c.wal_recovery_mode = WalRecoveryMode::TolerateCorruptedTailRecords;
    c.verify_only = true;
    c.table_workload = true;
    c.use_direct_reads = true;
    c.direct_writes = true;
    c.index_type = talus::IndexType::TwoLevelIndexSearch;
    c.partition_filters = true;
    c.metadata_block_size = 300;
    c.checksum = talus::ChecksumType::Crc32c;
    let args = c.to_args();
    let mut p = Parsed::parse(&args);
    p.check(&SPEC).unwrap();
    let d = Config::from_args(&p).unwrap();
    assert_eq!(format!("{c:?}"), format!("{d:?}"));
    // Without an expected-state file, and replacing the database with one.
    for (exp, destroy) in [(None, true), (None, false), (Some("/tmp/e".into()), true)] {
        let mut c = Config::new("/tmp/d".into(), exp);
        c.destroy_db_initially = destroy;
        let mut p = Parsed::parse(&c.to_args());
        p.check(&SPEC).unwrap();
        assert_eq!(format!("{c:?}"), format!("{:?}", Config::from_args(&p).unwrap()));
    }
}

#[test]
fn destroy_db_initially_defaults_to_true_only_without_an_expected_state_file() {
    let parse = |a: &[&str]| {
        let mut p = Parsed::parse(a);
        p.check(&SPEC).unwrap();
        Config::from_args(&p).unwrap()
    };
    let c = parse(&["--db=x"]);
    assert!(c.expected_state.is_none() && c.destroy_db_initially);
    assert!(!parse(&["--db=x", "--expected_state=y"]).destroy_db_initially);
    assert!(!parse(&["--db=x", "--destroy_db_initially=0"]).destroy_db_initially);
    assert!(
        parse(&["--db=x", "--expected_state=y", "--destroy_db_initially"]).destroy_db_initially
    );
}

#[test]
fn bad_mix_and_missing_paths_are_refused() {
    let p = Parsed::parse(&["--db=x", "--expected_state=y", "--readpercent=50"]);
    assert!(Config::from_args(&p).unwrap_err().contains("add up to 125"));
    let p = Parsed::parse(&["--expected_state=y"]);
    assert!(Config::from_args(&p).unwrap_err().contains("--db"));
    let p = Parsed::parse(&["--db=x", "--expected_state=y", "--max_key=0"]);
    assert!(Config::from_args(&p).is_err());
}
