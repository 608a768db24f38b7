//! Unit tests of transactions over a real database: conflicts (in the memtables and after
//! flushes and compactions), locks, deadlocks, expiration, savepoints, and the transaction
//! iterator against a model.

use std::collections::BTreeMap;
use std::thread;
use std::time::Duration;

use super::*;
use crate::{Db, Error, Options, ReadOptions, WriteOptions};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Default::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    (dir, db)
}

fn occ(db: &Db) -> OptimisticTransactionDb {
    let o = OptimisticTransactionDbOptions { occ_lock_buckets: 64 };
    OptimisticTransactionDb::from_db(db.clone(), o).unwrap()
}

fn pess(db: &Db) -> TransactionDb {
    TransactionDb::from_db(db.clone(), TransactionDbOptions::default()).unwrap()
}

fn quick() -> TransactionOptions {
    TransactionOptions { lock_timeout: Some(Duration::ZERO), ..Default::default() }
}

#[test]
fn optimistic_get_for_update_conflicts_and_plain_get_does_not() {
    let (_d, db) = open();
    let o = occ(&db);
    db.put(b"x", b"0").unwrap();
    let mut t1 = o.begin();
    assert_eq!(t1.get_for_update(b"x").unwrap().as_deref(), Some(&b"0"[..]));
    t1.put(b"y", b"1").unwrap();
    let mut t2 = o.begin();
    assert_eq!(t2.get(b"y").unwrap(), None, "plain reads do not see t1's writes");
    t2.get(b"x").unwrap();
    t2.put(b"z", b"2").unwrap();
    db.put(b"x", b"outside").unwrap();
    // t2 read x plainly: no conflict.
    t2.commit().unwrap();
    let e = t1.commit().unwrap_err();
    assert!(matches!(e, Error::Busy(_)), "{e}");
    assert_eq!(db.get(b"y").unwrap(), None, "a failed commit writes nothing");
    assert_eq!(db.get(b"z").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn optimistic_write_write_first_committer_wins() {
    let (_d, db) = open();
    let o = occ(&db);
    let mut t1 = o.begin();
    let mut t2 = o.begin();
    t1.put(b"k", b"1").unwrap();
    t2.delete(b"k").unwrap();
    t1.commit().unwrap();
    assert!(matches!(t2.commit(), Err(Error::Busy(_))));
    // Tracking starts at the first touch: a write before it is no conflict.
    db.put(b"k", b"outside").unwrap();
    let mut t3 = o.begin();
    db.put(b"k", b"before t3 touches it").unwrap();
    t3.put(b"k", b"3").unwrap();
    t3.commit().unwrap();
    // With a snapshot it is.
    let mut t4 = o.begin_transaction(
        &WriteOptions::default(),
        &OptimisticTransactionOptions { set_snapshot: true },
    );
    db.put(b"k", b"after the snapshot").unwrap();
    t4.put(b"k", b"4").unwrap();
    assert!(matches!(t4.commit(), Err(Error::Busy(_))));
    // A read-only transaction is checked too.
    let mut t5 = o.begin();
    t5.get_for_update(b"k").unwrap();
    db.delete(b"k").unwrap();
    assert!(matches!(t5.commit(), Err(Error::Busy(_))));
}

/// The conflict check reaches into the files when the memtables were flushed since the key was
/// tracked, and the transaction's snapshot keeps compaction from zeroing or dropping the
/// conflicting versions (a put's sequence number, a bottommost delete).
#[test]
fn optimistic_conflicts_survive_flush_and_compaction() {
    let (_d, db) = open();
    let o = occ(&db);
    db.put(b"p", b"0").unwrap();
    db.put(b"d", b"0").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let mut tp = o.begin();
    let mut td = o.begin();
    let mut tr = o.begin();
    let mut quiet = o.begin();
    tp.get_for_update(b"p").unwrap();
    td.get_for_update(b"d").unwrap();
    tr.get_for_update(b"r5").unwrap();
    quiet.get_for_update(b"p0").unwrap();
    db.put(b"p", b"1").unwrap();
    db.delete(b"d").unwrap();
    db.delete_range(&b"r"[..]..&b"s"[..]).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.property("talus.num-files-at-level0").as_deref(), Some("0"));
    assert!(matches!(tp.commit(), Err(Error::Busy(_))), "a put flushed and compacted");
    assert!(matches!(td.commit(), Err(Error::Busy(_))), "a delete at the bottom");
    assert!(matches!(tr.commit(), Err(Error::Busy(_))), "a range deletion");
    quiet.put(b"p0", b"x").unwrap();
    quiet.commit().unwrap();
}

#[test]
fn concurrent_optimistic_increments_lose_nothing() {
    let (_d, db) = open();
    let o = occ(&db);
    let threads = 4;
    let per = 300;
    let aborts: u64 = thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let o = o.clone();
                s.spawn(move || {
                    let mut aborts = 0u64;
                    let mut done = 0;
                    while done < per {
                        let mut t = o.begin();
                        let n: u64 = t
                            .get_for_update(b"counter")
                            .unwrap()
                            .map_or(0, |v| String::from_utf8(v).unwrap().parse().unwrap());
                        t.put(b"counter", (n + 1).to_string()).unwrap();
                        match t.commit() {
                            Ok(()) => done += 1,
                            Err(Error::Busy(_)) => aborts += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    aborts
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let v = db.get(b"counter").unwrap().unwrap();
    assert_eq!(String::from_utf8(v).unwrap(), (threads * per).to_string());
    eprintln!("{aborts} aborts");
}

#[test]
fn pessimistic_lock_timeout_and_release() {
    let (_d, db) = open();
    let p = pess(&db);
    let mut t1 = p.begin();
    t1.get_for_update(b"k").unwrap();
    let mut t2 = p.begin_transaction(&WriteOptions::default(), &quick());
    let e = t2.put(b"k", b"2").unwrap_err();
    assert!(matches!(e, Error::TimedOut(_)), "{e}");
    // A shared lock is refused too while t1 holds it exclusively.
    let ro = ReadOptions::default();
    assert!(matches!(t2.get_for_update_opt(b"k", &ro, false), Err(Error::TimedOut(_))));
    // Writes outside transactions lock as well.
    let slow = TransactionDbOptions {
        default_lock_timeout: Duration::from_millis(20),
        ..Default::default()
    };
    let p2 = TransactionDb::from_db(db.clone(), slow).unwrap();
    let mut t3 = p2.begin();
    t3.put(b"j", b"3").unwrap();
    assert!(matches!(p2.put(b"j", b"x"), Err(Error::TimedOut(_))));
    drop(t3); // rollback releases
    p2.put(b"j", b"x").unwrap();
    assert_eq!(p.num_locks(), 1);
    t1.commit().unwrap();
    assert_eq!(p.num_locks(), 0);
    t2.put(b"k", b"2").unwrap();
    t2.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
    let mut b = crate::WriteBatch::new();
    b.delete_range(b"a", b"b");
    assert!(matches!(p.write(b, &WriteOptions::default()), Err(Error::NotSupported(_))));
}

#[test]
fn pessimistic_snapshot_validation_at_lock_time() {
    let (_d, db) = open();
    let p = pess(&db);
    let opts = TransactionOptions { set_snapshot: true, ..Default::default() };
    let mut t = p.begin_transaction(&WriteOptions::default(), &opts);
    db.put(b"k", b"after").unwrap();
    db.flush().unwrap();
    let e = t.get_for_update(b"k").unwrap_err();
    assert!(matches!(e, Error::Busy(_)), "{e}");
    assert_eq!(p.num_locks(), 0, "the lock taken for the failed check is given back");
    t.put(b"other", b"ok").unwrap();
    t.commit().unwrap();
}

#[test]
fn pessimistic_deadlock_is_broken_and_reported() {
    let (_d, db) = open();
    let p = pess(&db);
    let opts = TransactionOptions {
        deadlock_detect: true,
        lock_timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let mut t1 = p.begin_transaction(&WriteOptions::default(), &opts);
    let mut t2 = p.begin_transaction(&WriteOptions::default(), &opts);
    t1.put(b"a", b"1").unwrap();
    t2.put(b"b", b"2").unwrap();
    let (id1, id2) = (t1.id(), t2.id());
    let waiter = thread::spawn(move || {
        let r = t1.put(b"b", b"1");
        (t1, r)
    });
    // Until t1 waits for b, t2 locking a would just wait: poll with a try-lock first.
    while !p.lock_manager().deadlocks.is_waiting(id1) {
        thread::sleep(Duration::from_millis(1));
    }
    let e = t2.put(b"a", b"2").unwrap_err();
    assert!(matches!(e, Error::Deadlock(_)), "{e}");
    let info = p.deadlock_info();
    assert_eq!(info.len(), 1);
    let ids: Vec<u64> = info[0].path.iter().map(|w| w.txn_id).collect();
    assert_eq!(ids, [id2, id1]);
    t2.rollback();
    let (t1, r) = waiter.join().unwrap();
    r.unwrap();
    t1.commit().unwrap();
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn pessimistic_expiration_lets_a_waiter_take_the_lock() {
    let (_d, db) = open();
    let p = pess(&db);
    let short =
        TransactionOptions { expiration: Some(Duration::from_millis(30)), ..Default::default() };
    let mut old = p.begin_transaction(&WriteOptions::default(), &short);
    old.put(b"k", b"old").unwrap();
    let mut t = p.begin();
    t.put(b"k", b"new").unwrap(); // waits until `old` expires, then takes its lock
    t.commit().unwrap();
    assert!(matches!(old.commit(), Err(Error::Expired(_))));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}

#[test]
fn savepoints_roll_back_writes_tracking_and_locks() {
    let (_d, db) = open();
    let p = pess(&db);
    let mut t = p.begin();
    t.put(b"a", b"1").unwrap();
    t.set_savepoint();
    t.put(b"b", b"2").unwrap();
    t.get_for_update(b"c").unwrap();
    assert_eq!(p.num_locks(), 3);
    t.rollback_to_savepoint().unwrap();
    assert_eq!(p.num_locks(), 1, "b and c unlocked");
    assert_eq!(t.get(b"b").unwrap(), None);
    assert!(matches!(t.rollback_to_savepoint(), Err(Error::NotFound(_))));
    // Another transaction may take b now.
    let mut u = p.begin_transaction(&WriteOptions::default(), &quick());
    u.put(b"b", b"u").unwrap();
    u.commit().unwrap();
    t.commit().unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    // Optimistic: a key untracked by the rollback no longer conflicts.
    let o = occ(&db);
    let mut t = o.begin();
    t.set_savepoint();
    t.get_for_update(b"a").unwrap();
    t.rollback_to_savepoint().unwrap();
    db.put(b"a", b"outside").unwrap();
    t.put(b"z", b"1").unwrap();
    t.commit().unwrap();
}

#[test]
fn transaction_iterator_matches_a_model() {
    use rand::{Rng, SeedableRng};
    let (_d, db) = open();
    let o = occ(&db);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let key = |r: &mut rand::rngs::StdRng| vec![b'a' + r.gen_range(0..12u8)];
    for round in 0..40 {
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for k in b'a'..b'a' + 12 {
            db.delete([k]).unwrap();
        }
        for _ in 0..8 {
            let k = key(&mut rng);
            let v = vec![rng.gen::<u8>()];
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        if round % 3 == 0 {
            db.flush().unwrap();
        }
        let mut t = o.begin();
        for _ in 0..8 {
            let k = key(&mut rng);
            if rng.gen_bool(0.4) {
                t.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = vec![rng.gen::<u8>(), 1];
                t.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        let lower = rng.gen_bool(0.3).then(|| key(&mut rng));
        let upper = rng.gen_bool(0.3).then(|| key(&mut rng));
        let ro = ReadOptions {
            iterate_lower_bound: lower.clone(),
            iterate_upper_bound: upper.clone(),
            ..Default::default()
        };
        let want: Vec<(Vec<u8>, Vec<u8>)> = model
            .iter()
            .filter(|(k, _)| lower.as_ref().is_none_or(|l| *k >= l))
            .filter(|(k, _)| upper.as_ref().is_none_or(|u| *k < u))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut it = t.iter_opt(&ro);
        // A random walk: position, then steps either way, checked against `want`.
        let mut pos: Option<usize>;
        match rng.gen_range(0..4) {
            0 => {
                it.seek_to_first();
                pos = (!want.is_empty()).then_some(0);
            }
            1 => {
                it.seek_to_last();
                pos = want.len().checked_sub(1);
            }
            2 => {
                let k = key(&mut rng);
                it.seek(&k);
                let i = want.partition_point(|(x, _)| x < &k);
                pos = (i < want.len()).then_some(i);
            }
            _ => {
                let k = key(&mut rng);
                it.seek_for_prev(&k);
                pos = want.partition_point(|(x, _)| x <= &k).checked_sub(1);
            }
        }
        for step in 0..20 {
            assert_eq!(it.valid(), pos.is_some(), "round {round} step {step}");
            let Some(p) = pos else { break };
            assert_eq!((it.key(), it.value()), (&want[p].0[..], &want[p].1[..]), "round {round}");
            if rng.gen_bool(0.5) {
                it.next();
                pos = (p + 1 < want.len()).then_some(p + 1);
            } else {
                it.prev();
                pos = p.checked_sub(1);
            }
        }
        it.status().unwrap();
        drop(it);
        t.commit().unwrap();
        for (k, v) in &model {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
    }
}
