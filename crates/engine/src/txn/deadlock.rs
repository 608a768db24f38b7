//! Deadlock detection for pessimistic transactions: the wait-for graph and the record of the
//! deadlocks broken (RocksDB's `IncrementWaiters` and `DeadlockInfoBuffer`).
//!
//! Before a transaction with `deadlock_detect` waits for a lock, the lock manager registers
//! which transactions it waits for ([`DeadlockDetector::begin_wait`]); a breadth-first search
//! from them along the registered waits looks for the waiter itself. Found (or the search goes
//! deeper than `deadlock_detect_depth`, which RocksDB also takes for a deadlock), the wait is
//! refused, so the cycle is broken by the transaction that would have closed it, and the cycle
//! is remembered for [`crate::TransactionDb::deadlock_info`]. The waiter removes its entry
//! when its wait ends ([`DeadlockDetector::end_wait`]).
//!
//! Locks: the graph's mutex, taken while the caller holds a lock-table stripe (never the
//! reverse); the history's mutex, a leaf.

use std::collections::{HashMap, VecDeque};
use std::time::SystemTime;

use parking_lot::Mutex;
use smallvec::SmallVec;

use crate::key::EscapedBytes;

/// One transaction of a deadlock cycle and the lock it waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockInfo {
    /// The transaction ([`crate::Transaction::id`]).
    pub txn_id: u64,
    /// The key whose lock it waited for.
    pub waiting_key: Vec<u8>,
    /// Whether it asked for the lock exclusively.
    pub exclusive: bool,
}

/// A deadlock that was broken: the cycle of waits, starting with the transaction whose wait
/// was refused (each waits for a lock the next one holds; the last for one the first holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockPath {
    /// The waits, in cycle order.
    pub path: Vec<DeadlockInfo>,
    /// The search stopped at `deadlock_detect_depth` without closing the cycle (taken for a
    /// deadlock all the same, as RocksDB does); `path` is then the chain searched.
    pub limit_exceeded: bool,
    /// When it was detected.
    pub time: SystemTime,
}

impl std::fmt::Display for DeadlockPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, w) in self.path.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            let mode = if w.exclusive { "exclusive" } else { "shared" };
            write!(
                f,
                "transaction {} waits for {mode} lock on {:?}",
                w.txn_id,
                EscapedBytes(&w.waiting_key)
            )?;
        }
        if self.limit_exceeded {
            write!(f, " (deadlock_detect_depth exceeded)")
        } else {
            write!(f, " (cycle)")
        }
    }
}

/// What one waiting transaction waits for.
struct Wait {
    on: SmallVec<[u64; 2]>,
    key: Vec<u8>,
    exclusive: bool,
}

/// The wait-for graph and the deadlocks seen.
pub(crate) struct DeadlockDetector {
    graph: Mutex<HashMap<u64, Wait>>,
    history: Mutex<VecDeque<DeadlockPath>>,
    max_history: usize,
}

impl DeadlockDetector {
    pub fn new(max_history: usize) -> DeadlockDetector {
        DeadlockDetector {
            graph: Mutex::new(HashMap::new()),
            history: Mutex::new(VecDeque::new()),
            max_history,
        }
    }

    /// Registers that `txn` is about to wait for `key`, held by the transactions `on`. Refuses
    /// (and records) the wait if it closes a cycle, or if the chain of waits behind `on` is
    /// deeper than `depth`.
    pub fn begin_wait(
        &self,
        txn: u64,
        on: &[u64],
        key: &[u8],
        exclusive: bool,
        depth: usize,
    ) -> Result<(), DeadlockPath> {
        let mut g = self.graph.lock();
        g.insert(txn, Wait { on: on.iter().copied().collect(), key: key.to_vec(), exclusive });
        // (transaction, index of the one that waits for it, depth); the waiter is the root.
        let mut nodes: Vec<(u64, Option<usize>, usize)> = vec![(txn, None, 0)];
        let mut seen: SmallVec<[u64; 16]> = SmallVec::new();
        seen.push(txn);
        let mut next = 0;
        let mut found: Option<(usize, bool)> = None;
        'search: while next < nodes.len() {
            let (t, _, d) = nodes[next];
            if let Some(w) = g.get(&t) {
                for &holder in &w.on {
                    if holder == txn {
                        found = Some((next, false));
                        break 'search;
                    }
                    if seen.contains(&holder) {
                        continue;
                    }
                    if d + 1 > depth {
                        found = Some((next, true));
                        break 'search;
                    }
                    seen.push(holder);
                    nodes.push((holder, Some(next), d + 1));
                }
            }
            next += 1;
        }
        let Some((last, limit_exceeded)) = found else { return Ok(()) };
        let mut chain = Vec::new();
        let mut at = Some(last);
        while let Some(i) = at {
            let (t, parent, _) = nodes[i];
            if let Some(w) = g.get(&t) {
                chain.push(DeadlockInfo {
                    txn_id: t,
                    waiting_key: w.key.clone(),
                    exclusive: w.exclusive,
                });
            }
            at = parent;
        }
        chain.reverse();
        g.remove(&txn);
        drop(g);
        let path = DeadlockPath { path: chain, limit_exceeded, time: SystemTime::now() };
        if self.max_history > 0 {
            let mut h = self.history.lock();
            if h.len() == self.max_history {
                h.pop_front();
            }
            h.push_back(path.clone());
        }
        Err(path)
    }

    /// `txn` no longer waits.
    pub fn end_wait(&self, txn: u64) {
        self.graph.lock().remove(&txn);
    }

    /// True while `txn` is registered as waiting (tests).
    #[cfg(test)]
    pub fn is_waiting(&self, txn: u64) -> bool {
        self.graph.lock().contains_key(&txn)
    }

    /// The deadlocks recorded, oldest first.
    pub fn history(&self) -> Vec<DeadlockPath> {
        self.history.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_refused_and_recorded() {
        let d = DeadlockDetector::new(2);
        d.begin_wait(1, &[2], b"b", true, 50).unwrap();
        d.begin_wait(2, &[3], b"c", true, 50).unwrap();
        let p = d.begin_wait(3, &[1], b"a", false, 50).unwrap_err();
        let ids: Vec<u64> = p.path.iter().map(|w| w.txn_id).collect();
        assert_eq!(ids, [3, 1, 2]);
        assert_eq!(p.path[0].waiting_key, b"a");
        assert!(!p.path[0].exclusive && !p.limit_exceeded);
        assert!(p.to_string().contains("transaction 3 waits for shared lock on a"), "{p}");
        assert_eq!(d.history(), vec![p]);
        // The refused waiter left the graph: 3 may wait for someone else.
        d.begin_wait(3, &[4], b"d", true, 50).unwrap();
        d.end_wait(1);
        // Now 2 -> 3 -> 4 and 1 waits for nobody: 4 waiting for 2 closes 4 -> 2 -> 3 -> 4.
        assert!(d.begin_wait(4, &[2], b"b", true, 50).is_err());
        d.begin_wait(5, &[6], b"x", true, 50).unwrap();
        assert!(d.begin_wait(6, &[5], b"y", true, 50).is_err());
        assert_eq!(d.history().len(), 2, "only max_num_deadlocks kept");
    }

    #[test]
    fn depth_limit_counts_as_a_deadlock() {
        let d = DeadlockDetector::new(5);
        for t in 1..10u64 {
            d.begin_wait(t, &[t + 1], b"k", true, 50).unwrap();
        }
        assert!(d.begin_wait(100, &[1], b"k", true, 50).is_ok());
        let p = d.begin_wait(101, &[1], b"k", true, 3).unwrap_err();
        assert!(p.limit_exceeded);
        // No cycle, short chain: fine; shared waits on several holders.
        d.begin_wait(200, &[300, 301], b"s", false, 50).unwrap();
        d.end_wait(200);
    }
}
