//! Column families end to end: create, write, read, flush, compact, reopen, drop, recovery of
//! per-family log numbers, checkpoints; the model is one `BTreeMap` per family.

use std::collections::BTreeMap;

use talus::{ColumnFamily, ColumnFamilyDescriptor, Db, Error, Options, ReadOptions, WriteBatch};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        write_buffer_size: 64 << 10,
        ..Default::default()
    }
}

fn all(db: &Db, cf: &ColumnFamily) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter_cf(cf, &ReadOptions::default()).unwrap().map(|kv| kv.unwrap()).collect()
}

fn descs(names: &[&str]) -> Vec<ColumnFamilyDescriptor> {
    names.iter().map(|n| ColumnFamilyDescriptor::new(*n, opts())).collect()
}

#[test]
fn families_keep_their_own_keys_through_flush_compaction_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut model: BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>> = BTreeMap::new();
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        let a = db.create_column_family("a", &opts()).unwrap();
        let b = db.create_column_family("b", &opts()).unwrap();
        assert!(db.create_column_family("a", &opts()).is_err(), "a second `a`");
        let d = db.default_column_family();
        for i in 0..3000u32 {
            let k = format!("k{:05}", i % 1000).into_bytes();
            for (cf, name) in [(&d, "default"), (&a, "a"), (&b, "b")] {
                if i % 3 == 0 && name == "b" {
                    continue;
                }
                let v = format!("{name}-{i}").into_bytes().repeat(4);
                db.put_cf(cf, &k, &v).unwrap();
                model.entry(name.into()).or_default().insert(k.clone(), v);
            }
            if i % 7 == 0 {
                // One batch across families, atomic.
                let mut batch = WriteBatch::new();
                batch.delete_cf(&a, &k);
                batch.put_cf(&b, &k, b"x");
                db.write(batch, &Default::default()).unwrap();
                model.entry("a".into()).or_default().remove(&k);
                model.entry("b".into()).or_default().insert(k.clone(), b"x".to_vec());
            }
        }
        db.compact_range_cf(&a, None, None).unwrap();
        for (cf, name) in [(&d, "default"), (&a, "a"), (&b, "b")] {
            assert_eq!(all(&db, cf), model[name], "{name} before reopen");
        }
        assert!(db.property("talus.num-files-at-level0").is_some());
    }
    assert_eq!(Db::list_column_families(dir.path(), &opts()).unwrap(), ["default", "a", "b"]);
    // Every family must be named.
    match Db::open(dir.path(), opts()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("column families not opened"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let db = Db::open_cf(dir.path(), opts(), descs(&["a", "b"])).unwrap();
    for name in ["default", "a", "b"] {
        let cf = db.cf_handle(name).unwrap();
        assert_eq!(all(&db, &cf), model[name], "{name} after reopen");
    }
    // A read-only open may name a subset.
    drop(db);
    let ro = Db::open_cf_read_only(dir.path(), opts(), descs(&["b"])).unwrap();
    assert_eq!(all(&ro, &ro.cf_handle("b").unwrap()), model["b"]);
    assert!(ro.cf_handle("a").is_none());
}

#[test]
fn unflushed_writes_of_every_family_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let big = Options { write_buffer_size: 8 << 20, ..opts() };
    {
        let db = Db::open_cf(dir.path(), big.clone(), descs(&["x"])).unwrap();
        let x = db.cf_handle("x").unwrap();
        db.put(b"d1", b"default").unwrap();
        db.put_cf(&x, b"x1", b"x").unwrap();
        // Flush (all families), then more writes that stay in the WAL only.
        db.flush().unwrap();
        db.put_cf(&x, b"x2", b"after flush").unwrap();
        db.delete_cf(&x, b"x1").unwrap();
        db.put(b"d2", b"after flush").unwrap();
    }
    let db = Db::open_cf(dir.path(), big, descs(&["x"])).unwrap();
    let x = db.cf_handle("x").unwrap();
    assert_eq!(db.get_cf(&x, b"x1").unwrap(), None);
    assert_eq!(db.get_cf(&x, b"x2").unwrap().as_deref(), Some(&b"after flush"[..]));
    assert_eq!(db.get(b"d1").unwrap().as_deref(), Some(&b"default"[..]));
    assert_eq!(db.get(b"d2").unwrap().as_deref(), Some(&b"after flush"[..]));
    assert_eq!(db.get(b"x2").unwrap(), None, "a family's key is not in default");
}

#[test]
fn a_flushed_family_is_not_replayed_twice_from_an_older_wal() {
    // Family `y` is flushed while `default` keeps its writes in the WAL: at reopen, `y`'s log
    // number skips the WAL records it already has in a table (a merge counter would double).
    let dir = tempfile::tempdir().unwrap();
    let o = Options { merge_operator: talus::merge::builtin_by_name("uint64add"), ..opts() };
    {
        let db = Db::open_cf(dir.path(), o.clone(), [ColumnFamilyDescriptor::new("y", o.clone())])
            .unwrap();
        let y = db.cf_handle("y").unwrap();
        db.merge_cf(&y, b"n", 5u64.to_le_bytes()).unwrap();
        db.flush().unwrap();
        db.merge_cf(&y, b"n", 1u64.to_le_bytes()).unwrap();
        db.put(b"d", b"v").unwrap();
    }
    let db = Db::open_cf(dir.path(), o.clone(), [ColumnFamilyDescriptor::new("y", o)]).unwrap();
    let y = db.cf_handle("y").unwrap();
    assert_eq!(db.get_cf(&y, b"n").unwrap(), Some(6u64.to_le_bytes().to_vec()));
}

#[test]
fn a_dropped_family_refuses_writes_and_its_files_go() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let t = db.create_column_family("t", &opts()).unwrap();
    for i in 0..2000u32 {
        db.put_cf(&t, i.to_be_bytes(), [7u8; 100]).unwrap();
    }
    db.flush().unwrap();
    let tables = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
            .count()
    };
    assert!(tables(dir.path()) > 0);
    db.drop_column_family(&t).unwrap();
    assert!(db.drop_column_family(&t).is_err(), "dropped twice");
    assert!(db.drop_column_family(&db.default_column_family()).is_err());
    assert!(db.put_cf(&t, b"k", b"v").is_err());
    let mut batch = WriteBatch::new();
    batch.put_cf(&t, b"k", b"v");
    assert!(matches!(db.write(batch, &Default::default()), Err(Error::InvalidArgument(_))));
    assert!(db.cf_handle("t").is_none());
    // The handle still reads what the family held (RocksDB's rule), so its files stay...
    assert_eq!(db.get_cf(&t, 5u32.to_be_bytes()).unwrap().as_deref(), Some(&[7u8; 100][..]));
    let old_id = t.id();
    // ...until the last handle is gone.
    drop(t);
    db.put(b"d", b"v").unwrap();
    db.flush().unwrap();
    assert_eq!(tables(dir.path()), 1, "only default's table is left");
    drop(db);
    assert_eq!(Db::list_column_families(dir.path(), &opts()).unwrap(), ["default"]);
    let db = Db::open(dir.path(), opts()).unwrap();
    // A new family never reuses a dropped one's id.
    let t2 = db.create_column_family("t", &opts()).unwrap();
    assert!(t2.id() > old_id);
    assert_eq!(db.get_cf(&t2, 1u32.to_be_bytes()).unwrap(), None);
}

#[test]
fn a_handle_of_another_database_is_refused() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open(d2.path(), opts()).unwrap();
    let c1 = db1.create_column_family("c", &opts()).unwrap();
    db2.create_column_family("c", &opts()).unwrap();
    assert!(matches!(db2.get_cf(&c1, b"k"), Err(Error::InvalidArgument(_))));
    assert!(matches!(db2.put_cf(&c1, b"k", b"v"), Err(Error::InvalidArgument(_))));
}

/// A batch carries family ids only: built with another database's handle it must be refused,
/// not written into the family that has the same id here.
#[test]
fn a_batch_with_a_handle_of_another_database_is_refused() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open(d2.path(), opts()).unwrap();
    let c1 = db1.create_column_family("c", &opts()).unwrap();
    let c2 = db2.create_column_family("other", &opts()).unwrap();
    assert_eq!(c1.id(), c2.id(), "the same id in both databases");
    let refused = |r: talus::Result<()>| match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("another database"), "{m}"),
        other => panic!("{other:?}"),
    };
    let mut b = WriteBatch::new();
    b.put(b"d", b"v");
    b.put_cf(&c1, b"k", b"v");
    refused(db2.write(b, &Default::default()));
    // Another database's `default` handle too, and every kind of operation.
    let mut b = WriteBatch::new();
    b.delete_cf(&db1.default_column_family(), b"k");
    refused(db2.write(b, &Default::default()));
    let mut b = WriteBatch::new();
    b.delete_range_cf(&c1, b"a", b"z");
    refused(db2.write(b, &Default::default()));
    // Handles of both databases in one batch: refused by both.
    let mut b = WriteBatch::new();
    b.put_cf(&c1, b"k", b"1");
    b.put_cf(&c2, b"k", b"2");
    match db1.write(b.clone(), &Default::default()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("two different databases"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(db2.write(b, &Default::default()), Err(Error::InvalidArgument(_))));
    // A batch appended from one built with a foreign handle keeps the refusal.
    let mut foreign = WriteBatch::new();
    foreign.put_cf(&c1, b"k", b"v");
    let mut b = WriteBatch::new();
    b.put_cf(&c2, b"k", b"mine");
    b.append(&foreign);
    assert!(matches!(db2.write(b, &Default::default()), Err(Error::InvalidArgument(_))));
    // Nothing landed anywhere; the owner's batches go through.
    assert_eq!(db2.get_cf(&c2, b"k").unwrap(), None);
    assert_eq!(db2.get(b"d").unwrap(), None);
    let mut b = WriteBatch::new();
    b.put_cf(&c1, b"k", b"v");
    db1.write(b, &Default::default()).unwrap();
    assert_eq!(db1.get_cf(&c1, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    // A batch cleared of its operations forgets the handles.
    let mut b = WriteBatch::new();
    b.put_cf(&c1, b"k", b"v");
    b.clear();
    b.put_cf(&c2, b"k", b"w");
    db2.write(b, &Default::default()).unwrap();
    // A handle from an earlier open of the same database is another database's too.
    drop(db2);
    let db2 = Db::open_cf(d2.path(), opts(), descs(&["other"])).unwrap();
    let mut b = WriteBatch::new();
    b.put_cf(&c2, b"k", b"stale");
    refused(db2.write(b, &Default::default()));
    refused(db2.put_cf(&c2, b"k", b"stale"));
    let now = db2.cf_handle("other").unwrap();
    assert_eq!(db2.get_cf(&now, b"k").unwrap().as_deref(), Some(&b"w"[..]));
}

/// A snapshot of another database is refused by every read that takes one.
#[test]
fn a_snapshot_of_another_database_is_refused() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open_cf(d2.path(), opts(), descs(&["c"])).unwrap();
    let c = db2.cf_handle("c").unwrap();
    db2.put_cf(&c, b"k", b"v").unwrap();
    let ro = ReadOptions { snapshot: Some(db1.snapshot()), ..Default::default() };
    assert!(matches!(db2.get_cf_opt(&c, b"k", &ro), Err(Error::InvalidArgument(_))));
    assert!(matches!(db2.get_opt(b"k", &ro), Err(Error::InvalidArgument(_))));
    assert!(db2.iter_cf(&c, &ro).unwrap().next().unwrap().is_err());
    let mine = ReadOptions { snapshot: Some(db2.snapshot()), ..Default::default() };
    assert_eq!(db2.get_cf_opt(&c, b"k", &mine).unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_missing_family_is_refused_without_create_missing() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options { create_missing_column_families: false, ..opts() };
    Db::open(dir.path(), o.clone()).unwrap();
    match Db::open_cf(dir.path(), o.clone(), [ColumnFamilyDescriptor::new("nope", o.clone())]) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("column family not found"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(Db::list_column_families(dir.path(), &o).unwrap(), ["default"]);
}

#[test]
fn a_checkpoint_holds_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_cf(dir.path(), opts(), descs(&["p", "q"])).unwrap();
    let (p, q) = (db.cf_handle("p").unwrap(), db.cf_handle("q").unwrap());
    db.put_cf(&p, b"k", b"p").unwrap();
    db.put_cf(&q, b"k", b"q").unwrap();
    db.put(b"k", b"d").unwrap();
    let copy = dir.path().join("ckpt");
    db.create_checkpoint(&copy).unwrap();
    db.put_cf(&p, b"k", b"later").unwrap();
    let c = Db::open_cf(&copy, opts(), descs(&["p", "q"])).unwrap();
    assert_eq!(c.get_cf(&c.cf_handle("p").unwrap(), b"k").unwrap().as_deref(), Some(&b"p"[..]));
    assert_eq!(c.get_cf(&c.cf_handle("q").unwrap(), b"k").unwrap().as_deref(), Some(&b"q"[..]));
    assert_eq!(c.get(b"k").unwrap().as_deref(), Some(&b"d"[..]));
}

/// A backup of a database with several families holds every family's data of its moment,
/// flushed or not, and an incremental backup after writes to one family restores both moments.
#[test]
fn a_backup_holds_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_cf(dir.path().join("db"), opts(), descs(&["p", "q"])).unwrap();
    let (p, q) = (db.cf_handle("p").unwrap(), db.cf_handle("q").unwrap());
    for i in 0..3000u32 {
        db.put_cf(&p, i.to_be_bytes(), b"p1").unwrap();
        db.put_cf(&q, i.to_be_bytes(), b"q1").unwrap();
    }
    db.flush().unwrap();
    db.put_cf(&q, b"unflushed", b"q").unwrap();
    db.put(b"k", b"d").unwrap();
    let engine = talus::BackupEngine::open(dir.path().join("backups")).unwrap();
    let first = engine.create_new_backup(&db).unwrap();
    let moment1 = [all(&db, &db.default_column_family()), all(&db, &p), all(&db, &q)];
    for i in 0..100u32 {
        db.put_cf(&p, i.to_be_bytes(), b"p2").unwrap();
    }
    db.delete_cf(&q, b"unflushed").unwrap();
    let second = engine.create_new_backup(&db).unwrap();
    let moment2 = [all(&db, &db.default_column_family()), all(&db, &p), all(&db, &q)];
    assert_ne!(moment1, moment2);
    drop(db);
    for (id, want) in [(first, &moment1), (second, &moment2)] {
        engine.verify_backup(id).unwrap();
        let to = dir.path().join(format!("restore-{id}"));
        engine.restore_db_from_backup(id, &to).unwrap();
        assert_eq!(Db::list_column_families(&to, &opts()).unwrap(), ["default", "p", "q"]);
        let r = Db::open_cf(&to, opts(), descs(&["p", "q"])).unwrap();
        let (rp, rq) = (r.cf_handle("p").unwrap(), r.cf_handle("q").unwrap());
        let got = [all(&r, &r.default_column_family()), all(&r, &rp), all(&r, &rq)];
        assert_eq!(&got, want, "backup {id}");
    }
}
