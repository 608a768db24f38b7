//! `Db::get_pinned`: the value is read in place, and stays valid while the slice lives, even
//! after its memtable is flushed, its file compacted away and deleted, or its cache entry
//! pushed by other reads (a pinned entry is not evicted).

use talus::options::CacheType;
use talus::{Db, Options};

fn open(dir: &std::path::Path, cache: CacheType, capacity: usize) -> Db {
    let opts = Options {
        create_if_missing: true,
        disable_auto_compactions: true,
        cache_type: cache,
        block_cache_capacity: capacity,
        block_size: 1024,
        ..Default::default()
    };
    Db::open(dir, opts).unwrap()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i:06}-").repeat(8).into_bytes()
}

#[test]
fn a_pinned_memtable_value_outlives_the_flush_of_its_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), CacheType::LruCache, 1 << 20);
    db.put(b"k", value(1)).unwrap();
    let pinned = db.get_pinned(b"k").unwrap().unwrap();
    db.put(b"k", value(2)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(&*pinned, value(1).as_slice());
    assert_eq!(db.get_pinned(b"k").unwrap().as_deref(), Some(value(2).as_slice()));
}

#[test]
fn a_pinned_block_value_outlives_its_file_and_cache_pressure() {
    for cache in [CacheType::LruCache, CacheType::HyperClockCache] {
        let dir = tempfile::tempdir().unwrap();
        // A cache of a few blocks: reading every key churns it many times over.
        let db = open(dir.path(), cache, 16 << 10);
        for i in 0..2000 {
            db.put(format!("k{i:06}"), value(i)).unwrap();
        }
        db.flush().unwrap();
        let pinned: Vec<_> = (0..2000)
            .step_by(97)
            .map(|i| (i, db.get_pinned(format!("k{i:06}")).unwrap()))
            .collect();
        for i in 0..2000 {
            assert_eq!(db.get(format!("k{i:06}")).unwrap(), Some(value(i)));
        }
        // Rewrite everything and compact: the file the slices point into is deleted.
        for i in 0..2000 {
            db.put(format!("k{i:06}"), b"new").unwrap();
        }
        db.compact_range(None, None).unwrap();
        for (i, p) in &pinned {
            assert_eq!(p.as_deref(), Some(value(*i).as_slice()), "{cache:?} key {i}");
        }
        assert_eq!(db.get_pinned(b"k000097").unwrap().as_deref(), Some(&b"new"[..]));
    }
}

#[test]
fn put_opt_delete_opt_and_delete_range_opt_take_write_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), CacheType::LruCache, 1 << 20);
    let sync = talus::WriteOptions { sync: true, ..Default::default() };
    db.put_opt(b"a", b"1", &sync).unwrap();
    db.put_opt(b"b", b"2", &sync).unwrap();
    db.put_opt(b"c", b"3", &sync).unwrap();
    db.delete_opt(b"a", &sync).unwrap();
    db.delete_range_opt(&b"b"[..]..&b"c"[..], &sync).unwrap();
    let keys: Vec<Vec<u8>> = db.range(..).map(|kv| kv.unwrap().key().to_vec()).collect();
    assert_eq!(keys, [b"c".to_vec()]);
    drop(db);
    let db = open(dir.path(), CacheType::LruCache, 1 << 20);
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    assert_eq!(db.get(b"a").unwrap(), None);
}

#[test]
fn results_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<talus::PinnedSlice>();
    send_sync::<talus::KeyValue>();
    fn send<T: Send>() {}
    send::<talus::RangeIter>();
    send::<talus::Iter>();
}
