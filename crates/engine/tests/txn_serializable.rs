//! Concurrent transactions checked for serializability, as Adya's direct serialization graph
//! does it: threads run random read-modify-write transactions on a few hot keys (every key a
//! transaction writes it first reads with `get_for_update`; some only read), and every value
//! names the transaction that wrote it. From the committed transactions alone the test then
//! rebuilds each key's version chain (a writer read the version it replaced, so two committed
//! writers of one version are a lost update), draws the write-write, write-read and
//! read-write (anti-dependency) edges, and requires the graph to be acyclic: some serial
//! order explains every read. The final database must hold the last version of each chain.
//!
//! Runs optimistic transactions (without and with a snapshot) and pessimistic ones (deadlock
//! detection on, keys locked in random order, so deadlocks and timeouts happen and are retried)
//! under leveled and universal compaction, with memtables small enough that conflict checks
//! have to read flushed files.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{
    CompactionStyle, Db, Error, OptimisticTransactionDb, OptimisticTransactionOptions, Options,
    Transaction, TransactionDb, TransactionDbOptions, TransactionOptions, WriteOptions,
};

const KEYS: u32 = 8;
const THREADS: u64 = 4;
const TXNS_PER_THREAD: u64 = 1000;

/// A committed transaction: what it read (key, writer of the version read) and what it wrote.
#[derive(Debug, Clone)]
struct Committed {
    id: u64,
    reads: Vec<(u32, u64)>,
    writes: Vec<u32>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Optimistic { snapshot: bool },
    Pessimistic,
}

fn key(k: u32) -> Vec<u8> {
    format!("key{k}").into_bytes()
}

/// The value written by transaction `id` (padded so that memtables fill up).
fn value(id: u64) -> Vec<u8> {
    let mut v = id.to_string().into_bytes();
    v.push(b':');
    v.resize(120, b'x');
    v
}

fn writer_of(v: &[u8]) -> u64 {
    let s = std::str::from_utf8(v).expect("utf8");
    s.split(':').next().and_then(|n| n.parse().ok()).expect("a writer id")
}

struct Dbs {
    db: Db,
    otx: OptimisticTransactionDb,
    ptx: TransactionDb,
}

fn begin(d: &Dbs, kind: Kind) -> Transaction {
    let wo = WriteOptions::default();
    match kind {
        Kind::Optimistic { snapshot } => {
            d.otx.begin_transaction(&wo, &OptimisticTransactionOptions { set_snapshot: snapshot })
        }
        Kind::Pessimistic => d.ptx.begin_transaction(
            &wo,
            &TransactionOptions {
                deadlock_detect: true,
                lock_timeout: Some(Duration::from_millis(20)),
                ..Default::default()
            },
        ),
    }
}

/// One attempt: `Ok(Some)` committed, `Ok(None)` aborted by a conflict, a lock timeout or a
/// deadlock.
fn attempt(d: &Dbs, kind: Kind, id: u64, rng: &mut StdRng) -> Option<Committed> {
    let mut t = begin(d, kind);
    let n = rng.gen_range(1..=4);
    let read_only = rng.gen_bool(0.2);
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    for _ in 0..n {
        let k = rng.gen_range(0..KEYS);
        if reads.iter().any(|&(r, _)| r == k) {
            continue;
        }
        let v = match t.get_for_update(key(k)) {
            Ok(v) => v,
            Err(Error::Busy(_) | Error::TimedOut(_) | Error::Deadlock(_)) => return None,
            Err(e) => panic!("get_for_update: {e}"),
        };
        reads.push((k, v.as_deref().map_or(0, writer_of)));
        if !read_only && rng.gen_bool(0.7) {
            t.put(key(k), value(id)).expect("put after get_for_update");
            writes.push(k);
        }
        if rng.gen_bool(0.1) {
            std::thread::yield_now();
        }
    }
    match t.commit() {
        Ok(()) => Some(Committed { id, reads, writes }),
        Err(Error::Busy(_)) => None,
        Err(e) => panic!("commit: {e}"),
    }
}

fn check_serializable(committed: &[Committed], db: &Db, what: &str) {
    // Version chains: for each key, the writer that replaced each version.
    let mut next: HashMap<(u32, u64), u64> = HashMap::new();
    for c in committed {
        for &k in &c.writes {
            let prev = c.reads.iter().find(|&&(r, _)| r == k).map(|&(_, w)| w).expect("read");
            if let Some(other) = next.insert((k, prev), c.id) {
                panic!("{what}: lost update: {other} and {} both replaced key{k}@{prev}", c.id);
            }
        }
    }
    // Each chain from version 0 must reach every writer, and its end is in the database.
    for k in 0..KEYS {
        let writers = committed.iter().filter(|c| c.writes.contains(&k)).count();
        let mut at = 0u64;
        let mut len = 0;
        while let Some(&w) = next.get(&(k, at)) {
            at = w;
            len += 1;
        }
        assert_eq!(len, writers, "{what}: key{k}: a committed write is not in its chain");
        let stored = db.get(key(k)).expect("get").as_deref().map_or(0, writer_of);
        assert_eq!(stored, at, "{what}: key{k} holds a version that is not the last");
    }
    // The graph: ww along chains, wr from a version's writer to its readers, rw from a
    // version's readers to the writer that replaced it.
    let ids: BTreeMap<u64, usize> = committed.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); committed.len()];
    let mut add = |from: u64, to: u64| {
        if let (Some(&a), Some(&b)) = (ids.get(&from), ids.get(&to)) {
            if a != b {
                edges[a].push(b);
            }
        }
    };
    for c in committed {
        for &(k, w) in &c.reads {
            add(w, c.id); // wr (and ww, for a writer that read what it replaced)
            if let Some(&over) = next.get(&(k, w)) {
                add(c.id, over); // rw
            }
        }
    }
    // Kahn's algorithm: every node removed means no cycle.
    let mut indegree = vec![0usize; committed.len()];
    for e in &edges {
        for &b in e {
            indegree[b] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..committed.len()).filter(|&i| indegree[i] == 0).collect();
    let mut removed = 0;
    while let Some(a) = ready.pop() {
        removed += 1;
        for &b in &edges[a] {
            indegree[b] -= 1;
            if indegree[b] == 0 {
                ready.push(b);
            }
        }
    }
    let stuck: Vec<u64> = (0..committed.len())
        .filter(|&i| indegree[i] > 0)
        .map(|i| committed[i].id)
        .take(10)
        .collect();
    assert_eq!(removed, committed.len(), "{what}: a cycle among transactions {stuck:?}");
}

fn run(style: CompactionStyle, kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        compaction_style: style,
        write_buffer_size: 16 << 10,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 64 << 10,
        target_file_size_base: 16 << 10,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let d = Dbs {
        otx: OptimisticTransactionDb::from_db(db.clone(), Default::default()).unwrap(),
        ptx: TransactionDb::from_db(db.clone(), TransactionDbOptions::default()).unwrap(),
        db,
    };
    let what = format!("{style:?} {kind:?}");
    let results: Vec<(Vec<Committed>, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|th| {
                let d = &d;
                s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(th * 7919 + 1);
                    let mut mine = Vec::new();
                    let mut aborts = 0;
                    for i in 0..TXNS_PER_THREAD {
                        let id = 1 + th * 1_000_000 + i;
                        match attempt(d, kind, id, &mut rng) {
                            Some(c) => mine.push(c),
                            None => aborts += 1,
                        }
                        if th == 0 && i % 100 == 99 {
                            d.db.flush().unwrap();
                        }
                    }
                    (mine, aborts)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let aborts: u64 = results.iter().map(|r| r.1).sum();
    let committed: Vec<Committed> = results.into_iter().flat_map(|r| r.0).collect();
    let deadlocks = d.ptx.deadlock_info().len();
    eprintln!(
        "{what}: {} committed, {aborts} aborted, deadlocks recorded {deadlocks}",
        committed.len()
    );
    assert!(committed.len() as u64 > THREADS * TXNS_PER_THREAD / 4, "{what}: too few commits");
    check_serializable(&committed, &d.db, &what);
    assert_eq!(d.ptx.num_locks(), 0, "{what}: locks left behind");
}

#[test]
fn optimistic_leveled() {
    run(CompactionStyle::Level, Kind::Optimistic { snapshot: false });
}

#[test]
fn optimistic_with_snapshot_universal() {
    run(CompactionStyle::Universal, Kind::Optimistic { snapshot: true });
}

#[test]
fn optimistic_universal() {
    run(CompactionStyle::Universal, Kind::Optimistic { snapshot: false });
}

#[test]
fn pessimistic_leveled() {
    run(CompactionStyle::Level, Kind::Pessimistic);
}

#[test]
fn pessimistic_universal() {
    run(CompactionStyle::Universal, Kind::Pessimistic);
}

/// The checker finds what it is for: a lost update and a write-skew cycle, built by hand.
#[test]
fn the_checker_finds_lost_updates_and_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    let lost = vec![
        Committed { id: 1, reads: vec![(0, 0)], writes: vec![0] },
        Committed { id: 2, reads: vec![(0, 0)], writes: vec![0] },
    ];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_serializable(&lost, &db, "lost")
    }));
    assert!(r.is_err(), "a lost update must fail the check");
    // Write skew: 1 reads k1 and writes k0, 2 reads k0 and writes k1, both from version 0.
    db.put(key(0), value(1)).unwrap();
    db.put(key(1), value(2)).unwrap();
    let skew = vec![
        Committed { id: 1, reads: vec![(1, 0), (0, 0)], writes: vec![0] },
        Committed { id: 2, reads: vec![(0, 0), (1, 0)], writes: vec![1] },
    ];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_serializable(&skew, &db, "skew")
    }));
    assert!(r.is_err(), "write skew must fail the check");
}
