//! The model after each prefix of a round of random writes, for power-loss checks: what a
//! recovered database may hold (a prefix of the acknowledged writes, at least up to the last
//! synced write or completed flush). Used by `recovery.rs` and `power_loss_campaign.rs`.

use rand::rngs::StdRng;
use rand::Rng;
use talus::Db;

use super::{random_write, write_ops, Model, WriteOp};

/// The model after each prefix of a round's acknowledged writes: `states[i]` holds the first
/// `i` writes (batches count as one).
pub struct Prefixes {
    pub states: Vec<Model>,
    /// Writes up to here must survive (the last sync write or completed flush).
    pub must_keep: usize,
}

impl Prefixes {
    pub fn new(start: Model) -> Prefixes {
        Prefixes { states: vec![start], must_keep: 0 }
    }
    pub fn last(&self) -> &Model {
        self.states.last().expect("never empty")
    }
    pub fn push(&mut self, ops: &[WriteOp]) {
        let mut m = self.last().clone();
        ops.iter().for_each(|w| w.apply(&mut m));
        self.states.push(m);
    }
    pub fn mark_durable(&mut self) {
        self.must_keep = self.states.len() - 1;
    }
    /// The longest prefix of at least `must_keep` writes equal to `got`.
    pub fn find(&self, got: &Model) -> Option<usize> {
        (self.must_keep..self.states.len()).rev().find(|&i| &self.states[i] == got)
    }
}

/// One round of random writes on `db`: `n` writes or batches, each synced with probability
/// `p_sync`; an occasional flush or compaction. Returns the prefixes.
pub fn random_round(db: &Db, rng: &mut StdRng, start: Model, n: usize, p_sync: f64) -> Prefixes {
    let mut pre = Prefixes::new(start);
    for i in 0..n {
        let ops: Vec<WriteOp> = if rng.gen_bool(0.15) {
            (0..rng.gen_range(1..6)).map(|_| random_write(rng)).collect()
        } else {
            vec![random_write(rng)]
        };
        let sync = rng.gen_bool(p_sync);
        write_ops(db, &ops, sync).unwrap_or_else(|e| panic!("write {i}: {e}"));
        pre.push(&ops);
        if sync {
            pre.mark_durable();
        }
        match rng.gen_range(0..100) {
            0..=3 => {
                db.flush().unwrap_or_else(|e| panic!("flush after write {i}: {e}"));
                pre.mark_durable();
            }
            4 => db.compact_range(None, None).unwrap_or_else(|e| panic!("compact: {e}")),
            _ => {}
        }
    }
    pre
}
