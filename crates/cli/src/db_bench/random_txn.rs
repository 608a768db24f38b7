//! randomtransaction: RocksDB's `Benchmark::RandomTransaction` and its
//! `RandomTransactionInserter` (`test_util/transaction_test_util.cc`), step for step.
//!
//! Each operation is one transaction that picks a random increment and, for each of
//! `--transaction_sets` sets (in random order), a random key of the set (`%.4u` of the set
//! number + 1, then the decimal key), reads it (`GetForUpdate` half of the time), deletes it
//! and puts the old number plus the increment; then commits (one in 20 rolls back instead). A
//! busy, timed-out or try-again read or write of a pessimistic transaction, and a busy,
//! timed-out or try-again commit of an optimistic one, abort it (counted); anything else stops
//! the benchmark. Without transactions each operation is one write batch. Afterwards
//! [`verify`] checks that every set's values add up to the same total (RocksDB's
//! `RandomTransactionVerify`).
//!
//! The draws from the thread's generator are RocksDB's, in its order (`Random64::Next`, and
//! `OneIn` as libstdc++'s `uniform_int_distribution` computes it), so both tools touch the same
//! keys for the same `--seed`; only the set order (RocksDB shuffles with `std::random_device`)
//! comes from a separate generator. Differences, all in the pessimistic path: RocksDB
//! prepares (two-phase commit: a WAL record at prepare, one at commit) 9 transactions in 10 and
//! adds a commit-time write of `cat` to 1 in 20 of those; Talus has no two-phase commit and
//! makes the same draws without preparing. `SingleDelete` (3 sets in 4) is a delete.

use std::io::Write;

use super::engines::txn::{EngineTxn, TxnError, TxnKind};
use super::engines::{EResult, Engine, Ops};
use super::keygen::Rng64;
use super::report::OpType;
use super::thread_state::{Duration, Shared, ThreadState};

/// `uniform_int_distribution<uint64_t>(0, n - 1)` over a 64-bit engine, as libstdc++ computes
/// it (Lemire's multiply-and-reject): RocksDB's `Random64::Uniform`.
fn uniform(rng: &mut Rng64, n: u64) -> u64 {
    let mut product = u128::from(rng.next_u64()) * u128::from(n);
    let mut low = product as u64;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            product = u128::from(rng.next_u64()) * u128::from(n);
            low = product as u64;
        }
    }
    (product >> 64) as u64
}

/// RocksDB's `Random64::OneIn`.
fn one_in(rng: &mut Rng64, n: u64) -> bool {
    uniform(rng, n) == 0
}

/// A small generator for the set order (RocksDB shuffles with `std::random_device`).
struct Shuffle(u64);

impl Shuffle {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle(&mut self, v: &mut [u16]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// The state of one thread's inserter.
struct Inserter<'e> {
    engine: &'e dyn Engine,
    kind: TxnKind,
    num_keys: u64,
    sets: Vec<u16>,
    shuffle: Shuffle,
    key: Vec<u8>,
    sum: Vec<u8>,
    batch: Ops,
    failures: u64,
    bytes: u64,
}

/// The value of a key as RandomTransactionInserter parses it (0 if absent); a value that is
/// not a number, or is 0 or `u64::MAX`, is corruption.
fn parse(v: Option<Vec<u8>>, key: &[u8]) -> EResult<u64> {
    let Some(v) = v else { return Ok(0) };
    let n = std::str::from_utf8(&v).ok().and_then(|s| s.parse::<u64>().ok());
    match n {
        Some(n) if n != 0 && n != u64::MAX => Ok(n),
        _ => Err(format!(
            "Get returned unexpected value: {} (key {})",
            String::from_utf8_lossy(&v),
            String::from_utf8_lossy(key)
        )),
    }
}

impl Inserter<'_> {
    /// One transaction (or batch): `DoInsert`. `Ok` whether it committed or aborted; `Err` on an
    /// unexpected error.
    fn insert(&mut self, rng: &mut Rng64) -> EResult<()> {
        let mut txn: Option<Box<dyn EngineTxn + '_>> = match self.kind {
            TxnKind::None => None,
            _ => Some(self.engine.begin_txn()?),
        };
        let optimistic = self.kind == TxnKind::Optimistic;
        if let (TxnKind::Pessimistic, Some(t)) = (self.kind, txn.as_mut()) {
            // TransactionDBInsert: a snapshot unless one was set at begin, else one in two.
            if !t.has_snapshot() || one_in(rng, 2) {
                t.set_snapshot();
            }
        }
        let incr = rng.next_u64() % 100 + 1;
        self.shuffle.shuffle(&mut self.sets);
        self.batch.clear();
        let mut status: Result<(), TxnError> = Ok(());
        for i in 0..self.sets.len() {
            let set = self.sets[i];
            let rand_key = rng.next_u64() % self.num_keys;
            let for_update = txn.is_some() && one_in(rng, 2);
            self.key.clear();
            let _ = write!(self.key, "{:04}{rand_key}", u32::from(set) + 1);
            let got = match txn.as_mut() {
                Some(t) => t.get(&self.key, for_update),
                None => self.engine.get_value(&self.key).map_err(TxnError::Other),
            };
            let old = match got {
                Ok(v) => parse(v, &self.key)?,
                Err(e) => {
                    if optimistic || !e.is_conflict() {
                        return Err(format!("Get returned an unexpected error: {e}"));
                    }
                    status = Err(e);
                    break;
                }
            };
            self.sum.clear();
            let _ = write!(self.sum, "{}", old + incr);
            match txn.as_mut() {
                Some(t) => {
                    if let Err(e) = t.delete(&self.key) {
                        if !for_update && matches!(e, TxnError::Busy(_) | TxnError::TimedOut(_)) {
                            status = Err(e);
                            break;
                        }
                        return Err(format!("SingleDelete returned an unexpected error: {e}"));
                    }
                    t.put(&self.key, &self.sum)
                        .map_err(|e| format!("Put returned an unexpected error: {e}"))?;
                }
                None => self.batch.put(&self.key, &self.sum),
            }
            self.bytes += (self.key.len() + self.sum.len()) as u64;
        }
        if status.is_ok() {
            match txn {
                Some(t) => {
                    if !optimistic && !one_in(rng, 10) {
                        // RocksDB prepares here (no two-phase commit in Talus), and adds a
                        // commit-time write to one prepared transaction in 20.
                        one_in(rng, 20);
                    }
                    if !one_in(rng, 20) {
                        status = t.commit();
                    } else {
                        t.rollback();
                    }
                    if let Err(e) = &status {
                        let expected = if optimistic {
                            e.is_conflict()
                        } else {
                            matches!(e, TxnError::Expired(_))
                        };
                        if !expected {
                            return Err(format!("Commit returned an unexpected error: {e}"));
                        }
                    }
                }
                None => self
                    .engine
                    .write(&self.batch)
                    .map_err(|e| format!("Write returned an unexpected error: {e}"))?,
            }
        } else if let Some(t) = txn {
            t.rollback();
        }
        if status.is_err() {
            self.failures += 1;
        }
        Ok(())
    }
}

/// Runs randomtransaction on one thread.
pub fn run(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let sets = p.transaction_sets;
    if sets == 0 || sets > 9999 {
        return Err("invalid value for transaction_sets".into());
    }
    let mut duration = Duration::new(sh, p.duration, p.readwrites);
    let kind = sh.engine.txn_kind();
    let mut ins = Inserter {
        engine: sh.engine,
        kind,
        num_keys: p.flag_num.max(1),
        sets: (0..sets as u16).collect(),
        shuffle: Shuffle(p.seed_base ^ (t.tid as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)),
        key: Vec::with_capacity(32),
        sum: Vec::with_capacity(24),
        batch: Ops::default(),
        failures: 0,
        bytes: 0,
    };
    let mut done = 0u64;
    while !duration.done(1) {
        ins.insert(&mut t.rng).map_err(|e| format!("Unexpected error: {e}"))?;
        t.stats.finished_ops(sh.engine, 1, OpType::Others);
        done += 1;
    }
    let msg = if kind == TxnKind::None {
        format!("( batches:{done} )")
    } else {
        format!("( transactions:{done} aborts:{})", ins.failures)
    };
    t.stats.add_message(&msg);
    t.stats.add_bytes(ins.bytes);
    Ok(())
}

/// RandomTransactionVerify: every set's values add up to the same total. Returns the line to
/// print (`None` without transactions).
pub fn verify(engine: &dyn Engine, sets: u64) -> EResult<Option<String>> {
    if engine.txn_kind() == TxnKind::None {
        return Ok(None);
    }
    let mut prev: Option<(u64, u64)> = None;
    for set in 0..sets {
        let prefix = format!("{:04}", set + 1);
        let mut it = engine.iter();
        it.seek(prefix.as_bytes());
        let mut total = 0u64;
        while it.valid() && it.key().starts_with(prefix.as_bytes()) {
            let v = parse(Some(it.value().to_vec()), it.key())
                .map_err(|e| format!("Iter returned unexpected value: {e}"))?;
            total = total.wrapping_add(v);
            it.next();
        }
        it.status()?;
        if let Some((i, t)) = prev {
            if t != total {
                return Ok(Some(format!(
                    "RandomTransactionVerify found inconsistent totals using pointlookup? 0 \
                     Set[{i}]: {t}, Set[{set}]: {total} at snapshot 0\n\
                     RandomTransactionVerify FAILED!!"
                )));
            }
        }
        prev = Some((set, total));
    }
    Ok(Some("RandomTransactionVerify Success.".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libstdc++'s (GCC 12) `uniform_int_distribution<uint64_t>(0, n - 1)` over
    /// `mt19937_64(42)`, printed by a C++ program: the draws of RocksDB's `Uniform`/`OneIn`.
    #[test]
    fn uniform_matches_libstdcxx() {
        let ns = [2u64, 10, 20, 100, 3, 7, 2, 2, 20, 10, 1_000_000, 3];
        let want: [u64; 36] = [
            1, 6, 15, 13, 2, 0, 1, 0, 5, 3, 12382, 1, 1, 6, 16, 94, 2, 3, 0, 0, 14, 1, 425254, 0,
            0, 0, 10, 44, 2, 0, 1, 0, 15, 8, 43517, 2,
        ];
        let mut r = Rng64::new(42);
        let got: Vec<u64> = (0..3).flat_map(|_| ns).map(|n| uniform(&mut r, n)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut s = Shuffle(3);
        let mut v: Vec<u16> = (0..50).collect();
        s.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }
}
