//! The perf level is process-wide, so turning it off has a test binary of its own.

use talus::{perf_context, set_perf_level, Db, Options, PerfContext, PerfLevel};

#[test]
fn disabled_perf_level_counts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    for i in 0..1000u32 {
        db.put(i.to_be_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    set_perf_level(PerfLevel::Disable);
    talus::perf::reset();
    for i in 0..1000u32 {
        db.get(i.to_be_bytes()).unwrap();
    }
    assert_eq!(perf_context(), PerfContext::default());
    set_perf_level(PerfLevel::EnableCount);
    for i in 0..10u32 {
        db.get(i.to_be_bytes()).unwrap();
    }
    assert_eq!(perf_context().get_from_table_count, 10);
    assert_eq!(PerfLevel::from_rocksdb(1), PerfLevel::Disable);
    assert_eq!(PerfLevel::from_rocksdb(3), PerfLevel::EnableCount);
}
