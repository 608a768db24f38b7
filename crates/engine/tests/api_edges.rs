//! API edges a new user meets (issue 39): a snapshot of another database is refused by every
//! read, and `close` refuses while other handles or iterators still use the database.

use talus::{Db, Error, Options, ReadOptions};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options { create_if_missing: true, ..Default::default() }).unwrap()
}

#[test]
fn a_snapshot_of_another_database_is_refused_by_every_read() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (da, db) = (open(a.path()), open(b.path()));
    for i in 0..50u32 {
        db.put(i.to_be_bytes(), b"b").unwrap();
    }
    da.put(b"k", b"a").unwrap();
    let foreign = ReadOptions { snapshot: Some(db.snapshot()), ..Default::default() };
    let is_refusal =
        |e: &Error| matches!(e, Error::InvalidArgument(m) if m.contains("another database"));
    assert!(is_refusal(&da.get_opt(b"k", &foreign).unwrap_err()));
    assert!(is_refusal(&da.get_pinned_opt(b"k", &foreign).unwrap_err()));
    for r in da.multi_get(&[&b"k"[..], b"x"], &foreign) {
        assert!(is_refusal(&r.unwrap_err()));
    }
    let mut raw = da.raw_iter(&foreign);
    raw.seek_to_first();
    assert!(!raw.valid(), "a refused iterator positioned");
    raw.seek(b"k");
    assert!(!raw.valid());
    assert!(is_refusal(&raw.status().unwrap_err()));
    let items: Vec<_> = da.iter(&foreign).collect();
    assert_eq!(items.len(), 1, "one error, no entries: {items:?}");
    assert!(is_refusal(items[0].as_ref().unwrap_err()));
    let ranged: Vec<_> = da.range_opt(.., &foreign).collect();
    assert_eq!(ranged.len(), 1);
    assert!(ranged[0].is_err());
    // Its own snapshot still reads.
    let own = ReadOptions { snapshot: Some(da.snapshot()), ..Default::default() };
    assert_eq!(da.get_opt(b"k", &own).unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(da.iter(&own).count(), 1);
}

#[test]
fn close_refuses_while_clones_or_iterators_live_and_closes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put(b"k", b"v").unwrap();
    let clone = db.clone();
    let e = db.close().unwrap_err();
    assert!(
        matches!(&e, Error::Busy(m) if m.contains("1 other Db handle(s) and 0 iterator(s)")),
        "{e}"
    );
    // Nothing was closed: the clone writes, flushes and compacts as before.
    clone.put(b"k2", b"v2").unwrap();
    clone.flush().unwrap();
    let it = clone.iter(&ReadOptions::default());
    let snap = clone.snapshot();
    let again = clone.clone();
    let e = clone.close().unwrap_err();
    assert!(
        matches!(&e, Error::Busy(m) if m.contains("1 other Db handle(s) and 1 iterator(s)")),
        "{e}"
    );
    assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
    assert_eq!(it.count(), 2, "the iterator reads on");
    // The iterator is gone; a snapshot does not hold the database open.
    again.close().expect("the last user closes");
    drop(snap);
    let db = Db::open(dir.path(), Options::default()).expect("the LOCK was released");
    assert_eq!(db.get(b"k2").unwrap().as_deref(), Some(&b"v2"[..]));
    db.close().unwrap();
}

#[test]
fn dropping_the_last_user_after_a_refused_close_releases_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let it = db.raw_iter(&ReadOptions::default());
    assert!(matches!(db.close(), Err(Error::Busy(_))));
    assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
    drop(it);
    Db::open(dir.path(), Options::default())
        .expect("the iterator held the last reference")
        .close()
        .unwrap();
}
