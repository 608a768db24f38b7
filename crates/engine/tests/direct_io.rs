//! Direct IO and partitioned index/filters at the database level: the options work end to end
//! on the simulated file system (which enforces O_DIRECT alignment) and on the real one, a file
//! system without direct IO is refused at open naming the option and changing nothing, and the
//! read counters see table reads by role.

mod common;

use std::path::Path;
use std::sync::Arc;

use talus::fs::fault::SimFs;
use talus::fs::{Fs, StdFs};
use talus::{Db, Error, IndexType, Options};

fn options(fs: Arc<dyn Fs>) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        target_file_size_base: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        block_size: 512,
        use_direct_reads: true,
        use_direct_io_for_flush_and_compaction: true,
        index_type: IndexType::TwoLevelIndexSearch,
        partition_filters: true,
        metadata_block_size: 256,
        block_cache_capacity: 64 << 10,
        compaction_readahead_size: 16 << 10,
        fs,
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes()
}

fn fill_and_check(db: &Db, n: u32) {
    for i in 0..n {
        db.put(key(i), format!("value-{i}-{}", "x".repeat((i % 50) as usize))).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    for i in (0..n).step_by(7) {
        let v = db.get(key(i)).unwrap().unwrap();
        assert!(v.starts_with(format!("value-{i}-").as_bytes()));
    }
    assert_eq!(db.get(b"key-absent").unwrap(), None);
    let mut it = db.iter(&Default::default());
    let mut count = 0;
    let mut last: Option<Vec<u8>> = None;
    for kv in it.by_ref() {
        let (k, _) = kv.unwrap();
        assert!(last.as_ref().is_none_or(|l| *l < k));
        last = Some(k);
        count += 1;
    }
    assert_eq!(count, n as usize);
}

#[test]
fn direct_io_and_partitions_on_the_simulated_file_system() {
    let fs = SimFs::new();
    let db = Db::open("/db", options(fs.clone())).unwrap();
    fill_and_check(&db, 5000);
    let io = db.property("talus.read-io").unwrap();
    let snap = talus::perf::ReadIoSnapshot::parse(&io).unwrap();
    assert!(snap.blocks[0] > 0 && snap.blocks[1] > 0 && snap.blocks[2] > 0, "{io}");
    assert!(snap.file_reads > 0 && snap.file_read_bytes >= snap.bytes.iter().sum::<u64>() / 2);
    let stats = db.property("talus.stats").unwrap();
    assert!(stats.contains("File reads:") && stats.contains("use_direct_reads on"), "{stats}");
    drop(db);
    // Every table is version 4 (XXH3 checksums, the default; partitions allowed, as in
    // version 3) and has exactly its real length.
    let tables: Vec<_> =
        fs.files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "sst")).collect();
    assert!(!tables.is_empty());
    for t in &tables {
        let bytes = fs.contents(t).unwrap();
        let footer = &bytes[bytes.len() - 56..];
        assert_eq!(&footer[40..44], &[4, 0, 0, 0], "{}", t.display());
    }
    let db = Db::open("/db", options(fs.clone())).unwrap();
    assert!(db.get(key(3)).unwrap().is_some());
}

#[test]
fn direct_io_on_the_real_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options(Arc::new(StdFs))).unwrap();
    fill_and_check(&db, 3000);
    drop(db);
    // Reopen without direct IO: the files are ordinary tables.
    let o = Options {
        use_direct_reads: false,
        use_direct_io_for_flush_and_compaction: false,
        ..options(Arc::new(StdFs))
    };
    let db = Db::open(&path, o).unwrap();
    assert!(db.get(key(11)).unwrap().is_some());
}

#[test]
fn a_file_system_without_direct_io_is_refused_naming_the_option_and_changing_nothing() {
    let fs = SimFs::new();
    {
        let plain = Options {
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            ..options(fs.clone())
        };
        let db = Db::open("/db", plain).unwrap();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
    }
    fs.set_direct_io_supported(false);
    let before: Vec<_> = fs.files().into_iter().map(|p| (fs.contents(&p), p)).collect();
    for (reads, writes, name) in
        [(true, false, "use_direct_reads"), (false, true, "use_direct_io_for_flush_and_compaction")]
    {
        let o = Options {
            use_direct_reads: reads,
            use_direct_io_for_flush_and_compaction: writes,
            ..options(fs.clone())
        };
        let e = Db::open("/db", o).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert!(e.to_string().contains(name) && e.to_string().contains("O_DIRECT"), "{e}");
        let after: Vec<_> = fs.files().into_iter().map(|p| (fs.contents(&p), p)).collect();
        assert_eq!(before, after, "a refused open changed the directory");
    }
    let e = Db::open(Path::new("/new"), options(fs.clone())).unwrap_err();
    assert!(e.to_string().contains("use_direct_reads"), "{e}");
}
