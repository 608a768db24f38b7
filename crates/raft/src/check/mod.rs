//! A linearizability checker for a key-value map of registers (put, delete, get), in the style
//! of Wing & Gong's algorithm with Lowe's memoization (WGL), as Porcupine implements it.
//!
//! Contract: [`check`] takes a history of completed and pending operations, each with the
//! interval (invocation and return time, one clock) in which it took effect, and answers
//! whether some total order of the operations (a) respects real time (an operation that
//! returned before another was invoked comes first), (b) is a legal sequential history of one
//! register per key (a get returns the last value put, `None` if none or after a delete), and
//! (c) contains every completed operation. An operation whose outcome the client does not know
//! (a timeout, a connection cut after the request was sent: [`Op::ret`] `None`) may take effect
//! at any time after its invocation, or never.
//!
//! Linearizability is local (Herlihy & Wing): a history is linearizable exactly when its
//! restriction to each key is, so each key is checked alone (`register.rs`). Before the search,
//! a pending put whose value no get returned is dropped: placing it after every other
//! operation is always legal, so dropping it changes no answer and keeps the search small
//! (each pending operation is concurrent with everything after it). Values should be unique per
//! put (the kill test's are) for the check to be strong; it stays correct without that.
//!
//! The search is exponential in the worst case; [`check`] stops a key after `budget` steps and
//! reports it as undecided rather than guessing.

mod register;

use std::collections::{BTreeMap, HashSet};

/// What an operation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Set the key to the value.
    Put(String),
    /// Removed the key.
    Delete,
    /// Read the key and saw this (`None`: absent).
    Get(Option<String>),
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// The client that ran it (for reports only).
    pub client: u32,
    /// The key.
    pub key: String,
    /// What it did.
    pub action: Action,
    /// When it was invoked (any monotonic unit, the same clock for every operation).
    pub call: u64,
    /// When it returned with a known outcome; `None` if the outcome is unknown (it may or may
    /// not have taken effect). A get with an unknown outcome says nothing and is ignored.
    pub ret: Option<u64>,
}

/// The verdict on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyVerdict {
    /// A legal order exists.
    Linearizable,
    /// No legal order exists.
    Violation,
    /// The search ran out of its step budget.
    Undecided,
}

/// The verdict on a whole history.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Keys checked.
    pub keys: usize,
    /// Operations checked (after dropping unobserved pending puts and pending gets).
    pub ops: usize,
    /// Pending puts dropped because no get saw their value.
    pub dropped_pending: usize,
    /// Keys with no legal order, with their operations (for the report).
    pub violations: Vec<(String, Vec<Op>)>,
    /// Keys the budget did not decide.
    pub undecided: Vec<String>,
}

impl Report {
    /// True if every key is linearizable.
    pub fn ok(&self) -> bool {
        self.violations.is_empty() && self.undecided.is_empty()
    }
}

/// Checks `history`, spending at most `budget` search steps on each key.
pub fn check(history: &[Op], budget: u64) -> Report {
    let mut by_key: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in history {
        if matches!(op.action, Action::Get(_)) && op.ret.is_none() {
            continue;
        }
        by_key.entry(op.key.as_str()).or_default().push(op);
    }
    let mut report = Report::default();
    for (key, ops) in by_key {
        let seen: HashSet<&str> = ops
            .iter()
            .filter_map(|o| match &o.action {
                Action::Get(Some(v)) => Some(v.as_str()),
                _ => None,
            })
            .collect();
        let kept: Vec<&Op> = ops
            .into_iter()
            .filter(|o| match (&o.action, o.ret) {
                (Action::Put(v), None) if !seen.contains(v.as_str()) => {
                    report.dropped_pending += 1;
                    false
                }
                _ => true,
            })
            .collect();
        if kept.is_empty() {
            continue;
        }
        report.keys += 1;
        report.ops += kept.len();
        match register::check_key(&kept, budget) {
            KeyVerdict::Linearizable => {}
            KeyVerdict::Violation => {
                report.violations.push((key.to_string(), kept.into_iter().cloned().collect()))
            }
            KeyVerdict::Undecided => report.undecided.push(key.to_string()),
        }
    }
    report
}

#[cfg(test)]
mod tests;
