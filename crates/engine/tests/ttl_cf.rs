//! `DbWithTtl` with column families, each with its own TTL (RocksDB's `DBWithTTL::Open` with
//! TTLs per family, `CreateColumnFamilyWithTtl`, `SetTtl(cf, ttl)`): a compaction of a family
//! drops what is older than that family's TTL only; batches across families stamp each record
//! in its own family; reopening names the families with their TTLs.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use talus::ttl::Clock;
use talus::{ColumnFamilyDescriptor, DbWithTtl, Error, Options, WriteBatch};

const T0: i64 = 1_700_000_000;

fn clock() -> (Arc<AtomicI64>, Clock) {
    let now = Arc::new(AtomicI64::new(T0));
    let t = now.clone();
    (now, Arc::new(move || t.load(Ordering::Relaxed)))
}

fn opts() -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        merge_operator: talus::merge::builtin_by_name("stringappend"),
        disable_auto_compactions: true,
        ..Default::default()
    }
}

fn fams(short: i32, long: i32) -> Vec<(ColumnFamilyDescriptor, i32)> {
    vec![
        (ColumnFamilyDescriptor::new("short", opts()), short),
        (ColumnFamilyDescriptor::new("long", opts()), long),
    ]
}

#[test]
fn each_family_expires_after_its_own_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let (now, clk) = clock();
    let db = DbWithTtl::open_cf_with_clock(dir.path(), opts(), 0, fams(10, 100), clk).unwrap();
    let (short, long) = (db.cf_handle("short").unwrap(), db.cf_handle("long").unwrap());
    assert_eq!((db.ttl(), db.ttl_cf(&short), db.ttl_cf(&long)), (0, Some(10), Some(100)));
    let d = db.db().default_column_family();
    assert_eq!(db.ttl_cf(&d), Some(0));
    for cf in [&d, &short, &long] {
        db.put_cf(cf, b"k", b"v").unwrap();
    }
    // A batch across the families: each record keeps its family and gets its stamp.
    let mut b = WriteBatch::new();
    b.put_cf(&short, b"b", b"s");
    b.merge_cf(&long, b"k", b"m");
    b.put(b"b", b"d");
    db.write(b, &Default::default()).unwrap();
    assert_eq!(db.get_cf(&short, b"b").unwrap().as_deref(), Some(&b"s"[..]));
    assert_eq!(db.get_cf(&long, b"k").unwrap().as_deref(), Some(&b"v,m"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"d"[..]));
    let raw = db.db().get_cf(&short, b"b").unwrap().unwrap();
    assert_eq!(raw.len(), 1 + talus::ttl::TS_LEN, "stored with its stamp");
    assert_eq!(db.get_cf(&long, b"b").unwrap(), None);

    now.store(T0 + 50, Ordering::Relaxed);
    for cf in [&d, &short, &long] {
        db.compact_range_cf(cf, None, None).unwrap();
    }
    assert_eq!(db.get_cf(&short, b"k").unwrap(), None, "older than short's 10 s");
    assert_eq!(db.get_cf(&short, b"b").unwrap(), None);
    assert_eq!(db.get_cf(&long, b"k").unwrap().as_deref(), Some(&b"v,m"[..]));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]), "default never expires");
    let all: Vec<_> = db.iter_cf(&long, &Default::default()).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all, [(b"k".to_vec(), b"v,m".to_vec())]);

    // A shorter TTL for `long` from now on.
    db.set_ttl_cf(&long, 20).unwrap();
    assert_eq!(db.ttl_cf(&long), Some(20));
    // `k`'s merged value was stamped by the compaction that merged it (T0 + 50, as RocksDB's
    // TTL merge stamps its result); 50 s later it is past 20 s. New keys around it make the
    // compaction rewrite its file.
    now.store(T0 + 100, Ordering::Relaxed);
    db.put_cf(&long, b"a", b"new").unwrap();
    db.put_cf(&long, b"z", b"new").unwrap();
    db.db().flush().unwrap();
    db.compact_range_cf(&long, None, None).unwrap();
    assert_eq!(db.get_cf(&long, b"k").unwrap(), None);
    assert_eq!(db.get_cf(&long, b"a").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn families_are_created_dropped_and_reopened_with_their_ttls() {
    let dir = tempfile::tempdir().unwrap();
    let (now, clk) = clock();
    {
        let db = DbWithTtl::open_with_clock(dir.path(), opts(), 0, clk.clone()).unwrap();
        let c = db.create_column_family_with_ttl("cache", &opts(), 30).unwrap();
        let gone = db.create_column_family_with_ttl("gone", &opts(), 30).unwrap();
        db.put_cf(&c, b"k", b"v").unwrap();
        db.merge_cf(&c, b"m", b"a").unwrap();
        db.delete_cf(&c, b"nothing").unwrap();
        assert_eq!(db.ttl_cf(&c), Some(30));
        db.drop_column_family(&gone).unwrap();
        assert_eq!(db.ttl_cf(&gone), None);
        let r = db.set_ttl_cf(&gone, 5);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
        db.close().unwrap();
    }
    // Reopened with another TTL for the family: the new one rules its compactions.
    let fams = [(ColumnFamilyDescriptor::new("cache", opts()), 1000)];
    let db = DbWithTtl::open_cf_with_clock(dir.path(), opts(), 0, fams, clk).unwrap();
    let c = db.cf_handle("cache").unwrap();
    assert_eq!(db.ttl_cf(&c), Some(1000));
    assert_eq!(db.get_cf(&c, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get_cf(&c, b"m").unwrap().as_deref(), Some(&b"a"[..]));
    now.store(T0 + 100, Ordering::Relaxed);
    db.compact_range_cf(&c, None, None).unwrap();
    assert_eq!(db.get_cf(&c, b"k").unwrap().as_deref(), Some(&b"v"[..]), "within 1000 s");
    now.store(T0 + 2000, Ordering::Relaxed);
    db.compact_range_cf(&c, None, None).unwrap();
    assert_eq!(db.get_cf(&c, b"k").unwrap(), None);
    // Opening without naming the family is refused, as a plain open is.
    drop(db);
    assert!(DbWithTtl::open(dir.path(), opts(), 0).is_err());
}
