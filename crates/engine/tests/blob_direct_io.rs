//! Blob files under direct IO: with `use_direct_io_for_flush_and_compaction` flushes and
//! compactions write blob files with `O_DIRECT` (aligned buffers, the tail padded and cut back
//! to the real length, as SSTs), and with `use_direct_reads` values are read back with
//! `O_DIRECT`. The simulated file system enforces the alignment; the real one is used where it
//! supports `O_DIRECT` (skipped otherwise).

mod common;

use std::path::Path;
use std::sync::Arc;

use talus::fs::fault::SimFs;
use talus::fs::{Fs, StdFs};
use talus::{Db, Options};

fn options(fs: Arc<dyn Fs>, direct: bool) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        target_file_size_base: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        enable_blob_files: true,
        min_blob_size: 100,
        blob_file_size: 40 << 10,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: 0.5,
        use_direct_reads: direct,
        use_direct_io_for_flush_and_compaction: direct,
        fs,
        ..Default::default()
    }
}

/// Odd lengths, so that records and files end anywhere within a page.
fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-{round}-").into_bytes();
    v.resize(100 + (i as usize * 37) % 3000, b'a' + (i % 26) as u8);
    v
}

fn fill_and_check(db: &Db) {
    for round in 0..3 {
        for i in 0..400u32 {
            db.put(format!("k{i:04}"), value(i, round)).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    check(db);
}

fn check(db: &Db) {
    for i in 0..400u32 {
        assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(value(i, 2)), "k{i:04}");
    }
    let mut n = 0;
    for kv in db.iter(&Default::default()) {
        let (k, v) = kv.unwrap();
        let i: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
        assert_eq!(v, value(i, 2));
        n += 1;
    }
    assert_eq!(n, 400);
}

fn blob_files(fs: &SimFs) -> Vec<std::path::PathBuf> {
    fs.files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "blob")).collect()
}

#[test]
fn blob_files_written_and_read_with_direct_io_on_the_simulated_file_system() {
    let fs = SimFs::new();
    let db = Db::open("/db", options(fs.clone(), true)).unwrap();
    fill_and_check(&db);
    let live = db.property("talus.blob-files").unwrap();
    drop(db);
    let files = blob_files(&fs);
    assert!(!files.is_empty());
    // Every blob file has exactly its real length: the padded tail page was cut back (the open
    // checks each file's size against the MANIFEST's, and reads its footer at the end).
    let db = Db::open("/db", options(fs.clone(), true)).unwrap();
    assert_eq!(db.property("talus.blob-files").unwrap(), live);
    check(&db);
    drop(db);
    // The same files read without direct IO.
    let db = Db::open("/db", options(fs.clone(), false)).unwrap();
    check(&db);
    // (That the options reach the blob files is `blob::separate`'s unit test.)
}

#[test]
fn blob_files_with_direct_io_on_the_real_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = match Db::open(&path, options(Arc::new(StdFs), true)) {
        Ok(db) => db,
        Err(e) if e.to_string().contains("O_DIRECT") => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    fill_and_check(&db);
    drop(db);
    let db = Db::open(&path, options(Arc::new(StdFs), false)).unwrap();
    check(&db);
    assert!(std::fs::read_dir(Path::new(&path)).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".blob")));
}
