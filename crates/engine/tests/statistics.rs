//! `Db::property("rocksdb.options-statistics")`: RocksDB's tickers and histograms. One test in
//! its own binary: the read-path tickers are process-wide (as a shared RocksDB `Statistics`).

use talus::{Db, Options, WriteBatch, WriteOptions};

fn ticker(text: &str, name: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name} COUNT : ")))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

fn hist_count(text: &str, name: &str) -> u64 {
    let line = text.lines().find(|l| l.starts_with(&format!("{name} P50 : "))).unwrap();
    let after = line.split("COUNT : ").nth(1).unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn keys_written_and_block_cache_lookups_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        block_size: 1024,
        bloom_bits_per_key: 10,
        statistics: true,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let n = 5000u64;
    let mut puts = 0;
    for j in 0..n {
        // A scrambled order, so the flushed files overlap and the compaction merges them (a
        // sequential load would be moved down without compaction work).
        let i = (j * 7919) % n;
        let mut b = WriteBatch::new();
        b.put(format!("key{i:08}"), vec![b'v'; 50]);
        if i.is_multiple_of(10) {
            b.put(format!("key{i:08}x"), b"second");
        }
        puts += if i.is_multiple_of(10) { 2 } else { 1 };
        db.write(b, &WriteOptions::default()).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let before = db.property("rocksdb.options-statistics").unwrap();
    assert_eq!(ticker(&before, "rocksdb.number.keys.written"), puts);
    assert_eq!(hist_count(&before, "rocksdb.db.write.micros"), n);
    assert!(ticker(&before, "rocksdb.flush.write.bytes") > 0);
    assert!(
        ticker(&before, "rocksdb.compact.write.bytes") > 0,
        "{before}\n{}",
        db.property("rocksdb.stats").unwrap()
    );
    assert!(hist_count(&before, "rocksdb.compaction.times.micros") >= 1);
    // Every get of a present key after a full compaction reads exactly one data block (the
    // index and filter are held by the table reader): hit + miss grows by the gets.
    let gets = 2000u64;
    for i in 0..gets {
        assert!(db.get(format!("key{:08}", i * 2)).unwrap().is_some());
    }
    let after = db.property("rocksdb.options-statistics").unwrap();
    let lookups =
        |t: &str| ticker(t, "rocksdb.block.cache.hit") + ticker(t, "rocksdb.block.cache.miss");
    let data = |t: &str| {
        ticker(t, "rocksdb.block.cache.data.hit") + ticker(t, "rocksdb.block.cache.data.miss")
    };
    assert_eq!(lookups(&after) - lookups(&before), gets);
    assert_eq!(data(&after) - data(&before), gets);
    assert_eq!(
        ticker(&after, "rocksdb.number.keys.read") - ticker(&before, "rocksdb.number.keys.read"),
        gets
    );
    assert_eq!(
        ticker(&after, "rocksdb.bytes.read") - ticker(&before, "rocksdb.bytes.read"),
        gets * 50
    );
    assert_eq!(hist_count(&after, "rocksdb.db.get.micros"), gets);
    // Absent keys between present ones: the filter says no for most.
    for i in 0..gets {
        assert!(db.get(format!("key{i:08}y")).unwrap().is_none());
    }
    let last = db.property("rocksdb.options-statistics").unwrap();
    assert!(ticker(&last, "rocksdb.bloom.filter.useful") > gets / 2, "{last}");
}
