//! `create_index` builds: a small sort budget, unique refusals, writers running during the
//! build, and ingestion behind (or, when the bottom level overlaps, above) concurrent writes.

use std::sync::Arc;

use talus_table::*;

use crate::common::*;
use crate::helpers::open;

#[test]
fn create_index_builds_with_a_small_sort_budget_and_refuses_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> = (0..3000)
        .map(|i| {
            row(
                i,
                if i % 10 == 0 { None } else { Some((i * 7919 % 1000) as i32) },
                &format!("b{}", i % 97),
                i % 1500,
            )
        })
        .collect();
    for chunk in rows.chunks(500) {
        t.insert_many(chunk).unwrap();
    }
    let small = CreateIndexOptions { sort_memory_bytes: 8 << 10, temp_dir: None };
    cat.create_index("t", idx("by_ba", &["b", "a"], false), &small).unwrap();
    // c repeats: a unique index on it is refused and leaves nothing behind.
    match cat.create_index("t", idx("u_c", &["c"], true), &small) {
        Err(TableError::DuplicateKey { index, .. }) => assert_eq!(index, "u_c"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(t.scan("u_c", &[], 1, Direction::Forward), Err(TableError::NoSuchIndex(_))));
    // ... and the name can be used again.
    cat.create_index("t", idx("u_c", &["id", "c"], true), &small).unwrap();
    let t = cat.table("t").unwrap();
    assert_eq!(t.def().indexes.len(), 3);
    assert_eq!(check_consistent(&t, &cat).len(), 3000);
    let tmp = dir.path().join("tmp");
    assert_eq!(std::fs::read_dir(tmp).map(|d| d.count()).unwrap_or(0), 0, "temp files removed");
}

#[test]
fn create_index_while_writers_run() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> = (0..5000).map(|i| row(i, Some((i % 100) as i32), "init", i)).collect();
    t.insert_many(&rows).unwrap();
    cat.db().flush_all().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let t = t.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0i64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || i < 3000 {
                let id = (i * 7) % 6000;
                match i % 3 {
                    0 => {
                        let _ = t.delete(&[Value::I64(id)]);
                    }
                    1 => {
                        let _ = t.update(&row(id, None, &format!("u{i}"), i));
                    }
                    _ => {
                        let _ = t.insert(&row(id, Some(7), "ins", i));
                    }
                }
                i += 1;
            }
        })
    };
    let small = CreateIndexOptions { sort_memory_bytes: 32 << 10, temp_dir: None };
    cat.create_index("t", idx("by_b", &["b"], false), &small).unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let t = cat.table("t").unwrap();
    check_consistent(&t, &cat);
    // Still consistent after compaction (ingested-behind entries vs newer deletes).
    cat.db().compact_all().unwrap();
    check_consistent(&t, &cat);
}

/// Writes that run during a build and reach the bottommost level before the ingestion make
/// `ingest_behind` refuse: the build then ingests as newest and replays those writes.
#[test]
fn create_index_falls_back_when_the_bottom_level_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> =
        (0..2000).map(|i| row(i, Some((i % 10) as i32), &format!("b{}", i % 30), i)).collect();
    t.insert_many(&rows).unwrap();
    let (t2, cat2) = (t.clone(), cat.clone());
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fired2 = fired.clone();
    let refused = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refused2 = refused.clone();
    cat.set_build_hook(Some(Arc::new(move |point: &str| {
        if point == "ingest_behind_refused" {
            refused2.store(true, std::sync::atomic::Ordering::SeqCst);
            return;
        }
        assert_eq!(point, "before_ingest");
        fired2.store(true, std::sync::atomic::Ordering::SeqCst);
        // Change rows the snapshot saw: deletes, updates (entry moves) and inserts, then push
        // everything, the new index's entries included, down to the bottommost level.
        for i in 0..200 {
            t2.delete(&[Value::I64(i * 10)]).unwrap();
            t2.update(&row(i * 10 + 1, None, "moved", -i)).unwrap();
            t2.insert(&row(5000 + i, Some(1), "new", i)).unwrap();
        }
        cat2.db().compact_all().unwrap();
    })));
    cat.create_index("t", idx("by_b", &["b"], false), &Default::default()).unwrap();
    assert!(fired.load(std::sync::atomic::Ordering::SeqCst));
    assert!(refused.load(std::sync::atomic::Ordering::SeqCst), "the fallback path ran");
    cat.set_build_hook(None);
    let t = cat.table("t").unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 2000);
    let moved =
        t.scan("by_b", &[Value::Varchar("moved".into())], 1000, Direction::Forward).unwrap();
    assert_eq!(moved.iter().filter(|r| r[2] == Value::Varchar("moved".into())).count(), 200);
    assert_eq!(moved.len(), 400, "then the 200 'new' rows");
    cat.db().compact_all().unwrap();
    check_consistent(&t, &cat);
}

/// Writes during a build that stay above the bottommost level: `ingest_behind` places the
/// snapshot's entries under them, so the newer writes (deletes included) win.
#[test]
fn create_index_ingests_behind_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    let rows: Vec<Row> =
        (0..2000).map(|i| row(i, Some((i % 10) as i32), &format!("b{}", i % 30), i)).collect();
    t.insert_many(&rows).unwrap();
    cat.db().flush_all().unwrap();
    let t2 = t.clone();
    let points = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let points2 = points.clone();
    cat.set_build_hook(Some(Arc::new(move |point: &str| {
        points2.lock().push(point.to_string());
        if point == "before_ingest" {
            for i in 0..300 {
                t2.delete(&[Value::I64(i * 5)]).unwrap();
                t2.update(&row(i * 5 + 2, None, "moved", -i)).unwrap();
            }
        }
    })));
    cat.create_index("t", idx("by_b", &["b"], false), &Default::default()).unwrap();
    cat.set_build_hook(None);
    // Talus ingests behind; RocksDB (no allow_ingest_behind) always takes the fallback.
    let want: &[&str] = if cfg!(feature = "rocksdb") {
        &["before_ingest", "ingest_behind_refused"]
    } else {
        &["before_ingest"]
    };
    assert_eq!(*points.lock(), want, "the ingestion path");
    let t = cat.table("t").unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 1700);
    cat.db().compact_all().unwrap();
    assert_eq!(check_consistent(&t, &cat).len(), 1700);
}
