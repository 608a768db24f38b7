//! End-to-end smoke tests with options small enough that flushes and compactions happen.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use talus::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

fn small_options() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 16 << 10,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 64 << 10,
        target_file_size_base: 16 << 10,
        block_size: 512,
        ..Default::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let got: Vec<(Vec<u8>, Vec<u8>)> =
        db.iter(&ReadOptions::default()).map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len(), "iterator length");
    assert!(got == want, "iterator contents differ");
    let back: Vec<(Vec<u8>, Vec<u8>)> =
        db.iter(&ReadOptions::default()).rev().map(|r| r.unwrap()).collect();
    assert!(back.into_iter().rev().eq(want.iter().cloned()), "reverse iteration differs");
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
}

#[test]
fn random_writes_flushes_compactions_and_reopen() {
    for seed in 0..4 {
        random_workload(seed);
    }
}

fn random_workload(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        for round in 0..20_000u32 {
            let k = key(rng.gen_range(0..3000));
            match rng.gen_range(0..10) {
                0 => {
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                1 if round % 50 == 0 => {
                    let a = rng.gen_range(0..3000);
                    let b = a + rng.gen_range(0..50);
                    db.delete_range(key(a)..key(b)).unwrap();
                    let doomed: Vec<_> =
                        model.range(key(a)..key(b)).map(|(k, _)| k.clone()).collect();
                    for d in doomed {
                        model.remove(&d);
                    }
                }
                2 => {
                    let mut b = WriteBatch::new();
                    let v = format!("batch{round}").into_bytes();
                    b.put(&k, &v);
                    b.delete(key(round % 3000));
                    db.write(b, &WriteOptions::default()).unwrap();
                    model.insert(k.clone(), v);
                    model.remove(&key(round % 3000));
                }
                _ => {
                    let v =
                        format!("value{round}-{}", "x".repeat(rng.gen_range(0..100))).into_bytes();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
            }
        }
        check(&db, &model);
        let files: usize = (0..7)
            .map(|l| {
                db.property(&format!("talus.num-files-at-level{l}"))
                    .unwrap()
                    .parse::<usize>()
                    .unwrap()
            })
            .sum();
        assert!(files > 0, "expected flushed files");
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    check(&db, &model);
    db.compact_range(None, None).unwrap();
    check(&db, &model);
    assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("0"));
}

#[test]
fn snapshots_survive_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    for i in 0..2000 {
        db.put(key(i), b"old").unwrap();
    }
    let snap = db.snapshot();
    for i in 0..2000 {
        if i % 2 == 0 {
            db.delete(key(i)).unwrap();
        } else {
            db.put(key(i), b"new").unwrap();
        }
    }
    db.delete_range(key(100)..key(200)).unwrap();
    db.compact_range(None, None).unwrap();
    let ro = ReadOptions { snapshot: Some(snap.clone()), ..Default::default() };
    for i in 0..2000 {
        assert_eq!(
            db.get_opt(key(i), &ro).unwrap().as_deref(),
            Some(&b"old"[..]),
            "key {i} at snapshot"
        );
    }
    assert_eq!(db.iter(&ro).count(), 2000);
    for i in 0..2000 {
        let want: Option<&[u8]> =
            if (100..200).contains(&i) || i % 2 == 0 { None } else { Some(b"new") };
        assert_eq!(db.get(key(i)).unwrap().as_deref(), want, "key {i} latest");
    }
    drop(snap);
    drop(ro);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.iter(&ReadOptions::default()).count(), 1000 - 50);
}

#[test]
fn concurrent_writers_group_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..3000u32 {
                    let mut b = WriteBatch::new();
                    b.put(format!("t{t}-{i:05}"), format!("v{i}"));
                    b.put(format!("t{t}-{i:05}-twin"), format!("v{i}"));
                    let sync = i % 100 == 0;
                    db.write(b, &WriteOptions { sync, ..Default::default() }).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for t in 0..4u32 {
        for i in (0..3000u32).step_by(13) {
            let want = format!("v{i}").into_bytes();
            assert_eq!(db.get(format!("t{t}-{i:05}")).unwrap(), Some(want.clone()));
            assert_eq!(db.get(format!("t{t}-{i:05}-twin")).unwrap(), Some(want));
        }
    }
    assert_eq!(db.iter(&ReadOptions::default()).count(), 4 * 3000 * 2);
    let stats = db.property("talus.stats").unwrap();
    assert!(stats.contains("Cumulative writes: 12K writes, 24K keys"), "{stats}");
}

#[test]
fn missing_current_beside_old_files_is_corruption_not_a_new_db() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
    }
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    let err = Db::open(dir.path(), small_options()).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains("CURRENT"), "{err}");
    let ssts = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
        .count();
    assert!(ssts > 0, "the old table files must still be there");
}
