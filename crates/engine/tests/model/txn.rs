//! The model test's transactions: a few transaction slots over the database under test, each
//! optimistic or pessimistic (a `TransactionDb` whose locks never wait, so a lock conflict is
//! an immediate `TimedOut`), with or without a snapshot, interleaved with every other operation
//! of a case (writes, flushes, compactions; a reopen or crash rolls them all back).
//!
//! The oracle predicts every outcome. It keeps a logical clock (one tick per acknowledged
//! write group) and, per key, the tick of its last write (range deletions as ranges). A
//! tracked key remembers the tick it was first tracked at (the snapshot's, with one). Then:
//! - reads: the transaction's own writes over its snapshot's model (the current one without);
//! - a pessimistic read for update or write: `TimedOut` if another open pessimistic
//!   transaction tracks the key; with a snapshot, `Busy` if the key was written after it;
//! - an optimistic commit: `Busy` if any tracked key was written after its tick, and nothing
//!   is written; a pessimistic commit always succeeds;
//! - a commit writes the transaction's writes as one group (atomic across power losses).
//!
//! So the committed transactions, with their reads, form the serial history the oracle
//! replays: every read a transaction made for update still holds when it commits.

use std::collections::BTreeMap;
use std::time::Duration;

use talus::{
    Db, Error, OptimisticTransactionDb, OptimisticTransactionDbOptions,
    OptimisticTransactionOptions, Transaction, TransactionDb, TransactionDbOptions,
    TransactionIter, TransactionOptions, WriteOptions,
};

use crate::common::{model_range, Bytes, Model, WriteOp};
use crate::op::{Start, TxnOp};

const SLOTS: usize = 3;

type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
type Tracked = BTreeMap<Vec<u8>, u64>;

struct OpenTxn {
    txn: Transaction,
    pessimistic: bool,
    sync: bool,
    /// The clock and the model when the snapshot was taken.
    snapshot: Option<(u64, Model)>,
    writes: Writes,
    tracked: Tracked,
    savepoints: Vec<(Writes, Tracked)>,
}

/// The transaction slots and the oracle's write history.
#[derive(Default)]
pub(crate) struct Txns {
    otx: Option<OptimisticTransactionDb>,
    ptx: Option<TransactionDb>,
    slots: Vec<Option<OpenTxn>>,
    clock: u64,
    last_write: BTreeMap<Vec<u8>, u64>,
    range_dels: Vec<(Vec<u8>, Vec<u8>, u64)>,
}

/// What an operation should return.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Busy,
    TimedOut,
}

fn outcome<T>(r: &talus::Result<T>, ctx: &str) -> Outcome {
    match r {
        Ok(_) => Outcome::Ok,
        Err(Error::Busy(_)) => Outcome::Busy,
        Err(Error::TimedOut(_)) => Outcome::TimedOut,
        Err(e) => panic!("{ctx}: unexpected error {e}"),
    }
}

impl Txns {
    /// Makes the transaction databases over a newly opened `db`.
    pub(crate) fn attach(&mut self, db: &Db) {
        let occ = OptimisticTransactionDbOptions { occ_lock_buckets: 16 };
        self.otx = Some(OptimisticTransactionDb::from_db(db.clone(), occ).expect("otx"));
        let p = TransactionDbOptions { num_stripes: 2, ..Default::default() };
        self.ptx = Some(TransactionDb::from_db(db.clone(), p).expect("ptx"));
        self.slots = (0..SLOTS).map(|_| None).collect();
    }

    /// Rolls back every open transaction and lets go of the database (before a close).
    pub(crate) fn detach(&mut self) {
        self.slots.clear();
        self.otx = None;
        self.ptx = None;
    }

    /// Records an acknowledged write group.
    pub(crate) fn record_write(&mut self, ops: &[WriteOp]) {
        if ops.is_empty() {
            return;
        }
        self.clock += 1;
        for op in ops {
            match op {
                WriteOp::Put(k, _) | WriteOp::Delete(k) | WriteOp::Merge(k, _) => {
                    self.last_write.insert(k.0.clone(), self.clock);
                }
                WriteOp::DeleteRange(b, e) => {
                    if b < e {
                        self.range_dels.push((b.0.clone(), e.0.clone(), self.clock));
                    }
                }
            }
        }
    }

    /// True if `key` was written after tick `t`.
    fn written_after(&self, key: &[u8], t: u64) -> bool {
        self.last_write.get(key).is_some_and(|&w| w > t)
            || self
                .range_dels
                .iter()
                .any(|(b, e, w)| *w > t && b.as_slice() <= key && key < e.as_slice())
    }

    /// The outcome of tracking `key` in `slot` (a read for update or a write).
    fn track_outcome(&self, slot: usize, key: &[u8]) -> Outcome {
        let Some(t) = &self.slots[slot] else { return Outcome::Ok };
        if !t.pessimistic || t.tracked.contains_key(key) {
            return Outcome::Ok;
        }
        let locked_elsewhere = self.slots.iter().enumerate().any(|(i, o)| {
            i != slot && o.as_ref().is_some_and(|o| o.pessimistic && o.tracked.contains_key(key))
        });
        if locked_elsewhere {
            return Outcome::TimedOut;
        }
        match &t.snapshot {
            Some((at, _)) if self.written_after(key, *at) => Outcome::Busy,
            _ => Outcome::Ok,
        }
    }

    /// Runs `op`; returns the writes of a transaction that committed (with its sync flag), for
    /// the harness to acknowledge as one group. `model` is the current state.
    pub(crate) fn step(
        &mut self,
        op: &TxnOp,
        model: &Model,
        ctx: &str,
    ) -> Option<(Vec<WriteOp>, bool)> {
        let slot = slot_of(op) % SLOTS;
        match op {
            TxnOp::Begin { pessimistic, snapshot, sync, .. } => {
                self.begin(slot, (*pessimistic, *snapshot, *sync), model);
                return None;
            }
            TxnOp::Commit { .. } => return self.commit(slot, ctx),
            TxnOp::Rollback { .. } => {
                self.slots[slot] = None;
                return None;
            }
            _ => {}
        }
        let clock = self.clock;
        // Decided before the slot is borrowed mutably.
        let want = match op {
            TxnOp::Get { key, for_update: true, .. }
            | TxnOp::Put { key, .. }
            | TxnOp::Delete { key, .. } => self.track_outcome(slot, key),
            _ => Outcome::Ok,
        };
        let t = self.slots[slot].as_mut()?;
        match op {
            TxnOp::Get { key, for_update, .. } => {
                let r = if *for_update { t.txn.get_for_update(key) } else { t.txn.get(key) };
                assert_eq!(outcome(&r, ctx), want, "{ctx}: {r:?}");
                if let Ok(v) = r {
                    assert_eq!(v.as_ref(), view(t, model).get(&key.0), "{ctx}: value");
                    if *for_update {
                        t.track(key, clock);
                    }
                }
            }
            TxnOp::Put { key, value, .. } => {
                let r = t.txn.put(key, value);
                assert_eq!(outcome(&r, ctx), want, "{ctx}: {r:?}");
                if r.is_ok() {
                    t.track(key, clock);
                    t.writes.insert(key.0.clone(), Some(value.0.clone()));
                }
            }
            TxnOp::Delete { key, .. } => {
                let r = t.txn.delete(key);
                assert_eq!(outcome(&r, ctx), want, "{ctx}: {r:?}");
                if r.is_ok() {
                    t.track(key, clock);
                    t.writes.insert(key.0.clone(), None);
                }
            }
            TxnOp::Walk { lower, upper, start, steps, .. } => {
                let mut ro = t.txn.read_options().clone();
                ro.iterate_lower_bound = lower.as_ref().map(|b| b.0.clone());
                ro.iterate_upper_bound = upper.as_ref().map(|b| b.0.clone());
                let v = view(t, model);
                let want = model_range(&v, opt(lower), opt(upper));
                walk(t.txn.iter_opt(&ro), &want, start, steps, ctx);
            }
            TxnOp::SetSavepoint { .. } => {
                t.txn.set_savepoint();
                t.savepoints.push((t.writes.clone(), t.tracked.clone()));
            }
            TxnOp::RollbackToSavepoint { .. } => {
                let r = t.txn.rollback_to_savepoint();
                match t.savepoints.pop() {
                    Some((w, tr)) => {
                        r.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                        t.writes = w;
                        t.tracked = tr;
                    }
                    None => assert!(matches!(r, Err(Error::NotFound(_))), "{ctx}: {r:?}"),
                }
            }
            TxnOp::Begin { .. } | TxnOp::Commit { .. } | TxnOp::Rollback { .. } => {}
        }
        None
    }

    fn begin(&mut self, slot: usize, kind: (bool, bool, bool), model: &Model) {
        let (pessimistic, snapshot, sync) = kind;
        self.slots[slot] = None;
        let wo = WriteOptions { sync, ..Default::default() };
        let txn = if pessimistic {
            let o = TransactionOptions {
                lock_timeout: Some(Duration::ZERO),
                set_snapshot: snapshot,
                ..Default::default()
            };
            self.ptx.as_ref().expect("attached").begin_transaction(&wo, &o)
        } else {
            let o = OptimisticTransactionOptions { set_snapshot: snapshot };
            self.otx.as_ref().expect("attached").begin_transaction(&wo, &o)
        };
        self.slots[slot] = Some(OpenTxn {
            txn,
            pessimistic,
            sync,
            snapshot: snapshot.then(|| (self.clock, model.clone())),
            writes: Writes::new(),
            tracked: Tracked::new(),
            savepoints: Vec::new(),
        });
    }

    fn commit(&mut self, slot: usize, ctx: &str) -> Option<(Vec<WriteOp>, bool)> {
        let t = self.slots[slot].take()?;
        let busy = !t.pessimistic && t.tracked.iter().any(|(k, at)| self.written_after(k, *at));
        let OpenTxn { txn, writes, sync, .. } = t;
        let r = txn.commit();
        let want = if busy { Outcome::Busy } else { Outcome::Ok };
        assert_eq!(outcome(&r, ctx), want, "{ctx}: commit {r:?}");
        r.ok()?;
        let ops = writes
            .into_iter()
            .map(|(k, v)| match v {
                Some(v) => WriteOp::Put(Bytes(k), Bytes(v)),
                None => WriteOp::Delete(Bytes(k)),
            })
            .collect();
        Some((ops, sync))
    }
}

impl OpenTxn {
    /// Tracks `key` (a read for update or a write succeeded) from now, or from the snapshot.
    fn track(&mut self, key: &[u8], clock: u64) {
        let at = self.snapshot.as_ref().map_or(clock, |(at, _)| *at);
        self.tracked.entry(key.to_vec()).or_insert(at);
    }
}

fn slot_of(op: &TxnOp) -> usize {
    match op {
        TxnOp::Begin { slot, .. }
        | TxnOp::Get { slot, .. }
        | TxnOp::Put { slot, .. }
        | TxnOp::Delete { slot, .. }
        | TxnOp::Walk { slot, .. }
        | TxnOp::SetSavepoint { slot }
        | TxnOp::RollbackToSavepoint { slot }
        | TxnOp::Commit { slot }
        | TxnOp::Rollback { slot } => *slot,
    }
}

fn opt(x: &Option<Bytes>) -> Option<&[u8]> {
    x.as_ref().map(|b| &b.0[..])
}

/// What transaction `t` reads: its writes over its snapshot's model (the current one without).
fn view(t: &OpenTxn, model: &Model) -> Model {
    let mut v = t.snapshot.as_ref().map_or_else(|| model.clone(), |(_, m)| m.clone());
    for (k, w) in &t.writes {
        match w {
            Some(val) => {
                v.insert(k.clone(), val.clone());
            }
            None => {
                v.remove(k);
            }
        }
    }
    v
}

/// Positions `it` by `start`, then steps it (`true`: next) while valid, checking each entry
/// against `want` (the view within the bounds).
fn walk(
    mut it: TransactionIter<'_>,
    want: &[(Vec<u8>, Vec<u8>)],
    start: &Start,
    steps: &[bool],
    ctx: &str,
) {
    let mut pos: Option<usize> = match start {
        Start::First => {
            it.seek_to_first();
            (!want.is_empty()).then_some(0)
        }
        Start::Last => {
            it.seek_to_last();
            want.len().checked_sub(1)
        }
        Start::Seek(t) => {
            it.seek(t);
            let i = want.partition_point(|(k, _)| k[..] < t[..]);
            (i < want.len()).then_some(i)
        }
        Start::SeekForPrev(t) => {
            it.seek_for_prev(t);
            want.partition_point(|(k, _)| k[..] <= t[..]).checked_sub(1)
        }
    };
    let mut n = 0;
    loop {
        assert_eq!(it.valid(), pos.is_some(), "{ctx}: txn iterator validity after {n} steps");
        let Some(p) = pos else { break };
        let (k, v) = &want[p];
        assert_eq!(it.key(), &k[..], "{ctx}: txn iterator key after {n} steps");
        assert_eq!(it.value(), &v[..], "{ctx}: txn iterator value after {n} steps");
        let Some(&fwd) = steps.get(n) else { break };
        if fwd {
            it.next();
            pos = (p + 1 < want.len()).then_some(p + 1);
        } else {
            it.prev();
            pos = p.checked_sub(1);
        }
        n += 1;
    }
    it.status().unwrap_or_else(|e| panic!("{ctx}: txn iterator status: {e}"));
}
