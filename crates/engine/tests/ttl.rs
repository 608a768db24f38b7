//! `DbWithTtl` (issue 40 item 2): values expire at compactions after their TTL on a clock the
//! test moves; merges, batches and the user's own filter go through the TTL layers; values not
//! written with a TTL are corruption, never values.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use talus::ttl::Clock;
use talus::{
    CompactionFilter, Db, DbWithTtl, FilterDecision, FilterValueType, Options, ReadOptions,
    WriteBatch,
};

const T0: i64 = 1_700_000_000;

fn clock() -> (Arc<AtomicI64>, Clock) {
    let now = Arc::new(AtomicI64::new(T0));
    let t = now.clone();
    (now, Arc::new(move || t.load(Ordering::Relaxed)))
}

fn opts() -> Options {
    Options {
        create_if_missing: true,
        merge_operator: talus::merge::builtin_by_name("stringappend"),
        disable_auto_compactions: true,
        ..Default::default()
    }
}

#[test]
fn values_expire_at_compaction_after_their_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let (now, clock) = clock();
    let db = DbWithTtl::open_with_clock(dir.path(), opts(), 100, clock).unwrap();
    db.put(b"old", b"1").unwrap();
    now.store(T0 + 60, Ordering::Relaxed);
    db.put(b"new", b"2").unwrap();
    let mut b = WriteBatch::new();
    b.put(b"batch", b"3");
    b.merge(b"new", b"m");
    db.write(b, &Default::default()).unwrap();
    db.flush().unwrap();
    // 101 s after the first write: only "old" is stale.
    now.store(T0 + 101, Ordering::Relaxed);
    assert_eq!(db.get(b"old").unwrap().as_deref(), Some(&b"1"[..]), "read until compacted");
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"old").unwrap(), None);
    assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"2,m"[..]));
    assert_eq!(db.get(b"batch").unwrap().as_deref(), Some(&b"3"[..]));
    let all: Vec<_> = db.iter(&ReadOptions::default()).map(|r| r.unwrap()).collect();
    assert_eq!(all, [(b"batch".to_vec(), b"3".to_vec()), (b"new".to_vec(), b"2,m".to_vec())]);
    let got = db.multi_get(&[&b"new"[..], b"old"], &ReadOptions::default());
    assert_eq!(got[0].as_ref().unwrap().as_deref(), Some(&b"2,m"[..]));
    assert_eq!(got[1].as_ref().unwrap(), &None);
    // The merge result was stamped when it was made (by the flush, at T0 + 60): alive through
    // T0 + 160.
    let stored = db.db().get(b"new").unwrap().unwrap();
    assert_eq!(stored[3..], ((T0 + 60) as i32).to_le_bytes());
    now.store(T0 + 160, Ordering::Relaxed);
    db.compact_range(None, None).unwrap();
    assert!(db.get(b"new").unwrap().is_some());
    now.store(T0 + 161, Ordering::Relaxed);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"new").unwrap(), None);
    assert_eq!(db.get(b"batch").unwrap(), None);
    // A non-positive TTL never expires.
    db.put(b"forever", b"x").unwrap();
    db.set_ttl(0);
    now.store(i32::MAX as i64, Ordering::Relaxed);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"forever").unwrap().as_deref(), Some(&b"x"[..]));
    drop(db);
    let ro = DbWithTtl::open_read_only(dir.path(), opts(), 100).unwrap();
    assert_eq!(ro.get(b"forever").unwrap().as_deref(), Some(&b"x"[..]));
}

/// Removes values "rm", upper-cases values starting with "up".
struct User;

impl CompactionFilter for User {
    fn name(&self) -> &str {
        "User"
    }
    fn filter(&self, _: usize, _: &[u8], _: FilterValueType, v: &[u8]) -> FilterDecision {
        match v {
            b"rm" => FilterDecision::Remove,
            v if v.starts_with(b"up") => FilterDecision::ChangeValue(v.to_ascii_uppercase()),
            _ => FilterDecision::Keep,
        }
    }
}

#[test]
fn the_users_filter_sees_values_without_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let (_now, clock) = clock();
    let o = Options { compaction_filter: Some(Arc::new(User)), ..opts() };
    let db = DbWithTtl::open_with_clock(dir.path(), o, 100, clock).unwrap();
    db.put(b"a", b"rm").unwrap();
    db.put(b"b", b"up").unwrap();
    db.put(b"c", b"keep").unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"UP"[..]));
    // The changed value kept its write time.
    let stored = db.db().get(b"b").unwrap().unwrap();
    assert_eq!(stored[2..], (T0 as i32).to_le_bytes());
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"keep"[..]));
}

#[test]
fn values_written_without_a_ttl_are_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put(b"short", b"ab").unwrap();
    db.put(b"old", 1000i32.to_le_bytes()).unwrap();
    drop(db);
    let db = DbWithTtl::open(dir.path(), opts(), 100).unwrap();
    assert!(db.get(b"short").unwrap_err().is_corruption());
    assert!(db.get(b"old").unwrap_err().is_corruption());
    assert!(db.iter(&ReadOptions::default()).next().unwrap().unwrap_err().is_corruption());
    // Merging over such a base fails too: never a value made of the bad bytes.
    db.merge(b"short", b"x").unwrap();
    assert!(db.get(b"short").unwrap_err().is_corruption());
}

#[test]
fn values_in_blob_files_expire_too() {
    let dir = tempfile::tempdir().unwrap();
    let (now, clock) = clock();
    let o = Options { enable_blob_files: true, min_blob_size: 100, ..opts() };
    let db = DbWithTtl::open_with_clock(dir.path(), o, 100, clock).unwrap();
    let big = vec![b'v'; 1000];
    db.put(b"old", &big).unwrap();
    now.store(T0 + 60, Ordering::Relaxed);
    db.put(b"new", &big).unwrap();
    db.flush().unwrap();
    assert_eq!(db.db().property("rocksdb.num-blob-files").as_deref(), Some("1"));
    now.store(T0 + 101, Ordering::Relaxed);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"old").unwrap(), None, "the separated value expired");
    assert_eq!(db.get(b"new").unwrap(), Some(big.clone()));
    now.store(T0 + 161, Ordering::Relaxed);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"new").unwrap(), None);
    // Nothing live is left in the blob file: it is deleted.
    assert_eq!(db.db().property("rocksdb.num-blob-files").as_deref(), Some("0"));
}
