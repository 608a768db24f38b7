//! A column family's own block cache (`Options::block_cache` in its options, RocksDB's
//! `BlockBasedTableOptions::block_cache` per family): that family's table reads fill its cache
//! and not the database's, through flushes, compactions and a reopen; the per-family
//! `block-cache-*` properties answer for its cache; the database's cache stays the default.

use std::sync::Arc;

use talus::cache::LruCache;

use talus::options::BlockCacheRef;
use talus::{ColumnFamilyDescriptor, Db, Options};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        write_buffer_size: 64 << 10,
        ..Default::default()
    }
}

fn small_cache() -> BlockCacheRef {
    BlockCacheRef::new(Arc::new(LruCache::new(1 << 20, 0, false)))
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn a_family_with_its_own_cache_fills_it_and_not_the_databases() {
    let dir = tempfile::tempdir().unwrap();
    let own = small_cache();
    let fam = Options { block_cache: Some(own.clone()), ..opts() };
    let db = Db::open_cf(dir.path(), opts(), [ColumnFamilyDescriptor::new("small", fam)]).unwrap();
    let small = db.cf_handle("small").unwrap();
    for i in 0..3000 {
        db.put_cf(&small, key(i), [1u8; 100]).unwrap();
    }
    db.flush_cf(&small).unwrap();
    let db_usage = || db.property_int("rocksdb.block-cache-usage").unwrap();
    let read_all = |db: &Db, cf: &talus::ColumnFamily| {
        for i in 0..3000 {
            assert!(db.get_cf(cf, key(i)).unwrap().is_some(), "key {i}");
        }
    };
    read_all(&db, &small);
    let used = own.cache().usage();
    assert!(used > 0, "the family's reads fill its own cache");
    assert_eq!(db_usage(), 0, "and not the database's");
    assert_eq!(db.property_int_cf(&small, "rocksdb.block-cache-usage"), Some(used as u64));
    assert_eq!(db.property_int_cf(&small, "rocksdb.block-cache-capacity"), Some(1 << 20));
    assert_eq!(db.property_int("rocksdb.block-cache-capacity"), Some(32 << 20));

    // `default` (no cache of its own) reads through the database's cache.
    for i in 0..3000 {
        db.put(key(i), [2u8; 100]).unwrap();
    }
    db.flush_cf(&db.default_column_family()).unwrap();
    read_all(&db, &db.default_column_family());
    assert!(db_usage() > 0);
    let db_used = db_usage();

    // A compaction's output files of the family are read through its cache too.
    db.compact_range_cf(&small, None, None).unwrap();
    let before = own.cache().usage();
    read_all(&db, &small);
    assert!(own.cache().usage() > before, "{} -> {}", before, own.cache().usage());
    assert_eq!(db_usage(), db_used);
    drop(small);
    drop(db);

    // Reopened with a new cache for the family: that one fills.
    let again = small_cache();
    let fam = Options { block_cache: Some(again.clone()), ..opts() };
    let db = Db::open_cf(dir.path(), opts(), [ColumnFamilyDescriptor::new("small", fam)]).unwrap();
    let small = db.cf_handle("small").unwrap();
    read_all(&db, &small);
    assert!(again.cache().usage() > 0);
    assert_eq!(db.property_int("rocksdb.block-cache-usage"), Some(0));

    // A family created at run time with its own cache.
    let third = small_cache();
    let cf = db
        .create_column_family("made", &Options { block_cache: Some(third.clone()), ..opts() })
        .unwrap();
    for i in 0..3000 {
        db.put_cf(&cf, key(i), [3u8; 100]).unwrap();
    }
    db.flush_cf(&cf).unwrap();
    read_all(&db, &cf);
    assert!(third.cache().usage() > 0);
    assert_eq!(db.property_int("rocksdb.block-cache-usage"), Some(0));
}

/// The database's own `block_cache` replaces the one it would make from the capacity.
#[test]
fn the_database_cache_may_be_given() {
    let dir = tempfile::tempdir().unwrap();
    let mine = small_cache();
    let db = Db::open(dir.path(), Options { block_cache: Some(mine.clone()), ..opts() }).unwrap();
    for i in 0..3000 {
        db.put(key(i), [1u8; 100]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..3000 {
        db.get(key(i)).unwrap();
    }
    assert!(mine.cache().usage() > 0);
    assert_eq!(db.property_int("rocksdb.block-cache-capacity"), Some(1 << 20));
}
