//! A committed transaction survives a crash whole or not at all: its commit is one write (one
//! WAL record). Optimistic and pessimistic transactions of 1 to 12 keys commit on a `SimFs`
//! (one in eight synced), with tiny memtables so that WAL switches and flushes happen between
//! them; then the power fails, dropping a random part of what was not synced. After reopening,
//! every transaction's keys are all there or none is, every synced transaction and all before
//! it are there, and the ones there are a prefix of the commit order.

mod common;

use common::{tiny_options, SIM_DB};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::fs::fault::{CrashMode, SimFs};
use talus::{
    Db, OptimisticTransactionDb, OptimisticTransactionOptions, TransactionDb, TransactionOptions,
    WriteOptions,
};

fn key(t: u32, j: u32) -> String {
    format!("t{t:04}-{j:02}")
}

#[test]
fn power_loss_keeps_whole_transactions_in_commit_order() {
    // Seeds where the crash lost transactions (the test must see some).
    let mut lossy = 0;
    for seed in 0..24u64 {
        let fs = SimFs::new();
        let db = Db::open(SIM_DB, tiny_options(fs.clone(), 4096)).unwrap();
        let otx = OptimisticTransactionDb::from_db(db.clone(), Default::default()).unwrap();
        let ptx = TransactionDb::from_db(db.clone(), Default::default()).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut sizes = Vec::new();
        let mut last_synced: Option<usize> = None;
        for t in 0..120u32 {
            let sync = rng.gen_bool(0.125);
            let wo = WriteOptions { sync, ..Default::default() };
            let mut txn = if rng.gen_bool(0.5) {
                otx.begin_transaction(&wo, &OptimisticTransactionOptions::default())
            } else {
                ptx.begin_transaction(&wo, &TransactionOptions::default())
            };
            let n = rng.gen_range(1..=12u32);
            for j in 0..n {
                let mut v = t.to_be_bytes().to_vec();
                v.resize(rng.gen_range(8..200), b'v');
                txn.put(key(t, j), v).unwrap();
            }
            // Some transactions also read for update and delete what an earlier one wrote.
            if t > 0 && rng.gen_bool(0.2) {
                let old = key(t - 1, 0);
                txn.get_for_update(&old).unwrap();
            }
            txn.commit().unwrap();
            sizes.push(n);
            if sync {
                last_synced = Some(t as usize);
            }
        }
        drop((otx, ptx, db));
        let fs2 = fs.crash(CrashMode::DropRandomUnsynced { seed });
        let db = Db::open(SIM_DB, tiny_options(fs2, 4096)).unwrap();
        let mut present = Vec::new();
        for (t, &n) in sizes.iter().enumerate() {
            let found = (0..n).filter(|&j| db.get(key(t as u32, j)).unwrap().is_some()).count();
            assert!(
                found == 0 || found == n as usize,
                "seed {seed}: transaction {t} is cut: {found} of {n} keys"
            );
            present.push(found > 0);
        }
        let kept = present.iter().take_while(|&&p| p).count();
        assert!(present[kept..].iter().all(|&p| !p), "seed {seed}: not a prefix: {present:?}");
        if let Some(s) = last_synced {
            assert!(kept > s, "seed {seed}: synced transaction {s} lost (kept {kept})");
        }
        lossy += usize::from(kept < sizes.len());
    }
    assert!(lossy > 0, "no crash lost anything: the test checks nothing");
    eprintln!("{lossy} of 24 crashes lost the last transactions");
}
