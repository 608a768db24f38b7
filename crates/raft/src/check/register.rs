//! WGL search over the operations of one key (a register): calls and returns in time order in
//! a doubly linked list; repeatedly linearize the first call whose operation is legal in the
//! current state (removing it and its return from the list), backtrack at a return whose call
//! was not linearized yet, and skip states already explored (the set of linearized operations
//! and the register's value: Lowe's memoization). A pending operation's return is at the end.

use std::collections::{HashMap, HashSet};

use super::{Action, KeyVerdict, Op};

/// An operation reduced to what the register sees: `Write(v)` (0: absent) or `Read(v)`.
#[derive(Clone, Copy)]
enum Step {
    Write(u32),
    Read(u32),
}

const NONE: usize = usize::MAX;

/// The search's list of events, with removal and reinsertion in O(1) (dancing links).
struct Events {
    /// `(time, is_return, op)`, sorted; calls before returns at equal times (concurrent).
    ev: Vec<(u64, bool, usize)>,
    next: Vec<usize>,
    prev: Vec<usize>,
    /// For each op, the position of its return event.
    ret_pos: Vec<usize>,
}

impl Events {
    fn new(ops: &[&Op]) -> Events {
        let mut ev = Vec::with_capacity(ops.len() * 2);
        for (i, o) in ops.iter().enumerate() {
            ev.push((o.call, false, i));
            ev.push((o.ret.unwrap_or(u64::MAX), true, i));
        }
        ev.sort_by_key(|&(t, is_ret, i)| (t, is_ret, i));
        let m = ev.len();
        // Node m is the head sentinel.
        let mut next = vec![NONE; m + 1];
        let mut prev = vec![NONE; m + 1];
        // In sorted order: head, 0, 1, ..., m - 1.
        for (p, link) in prev.iter_mut().enumerate().take(m) {
            *link = if p == 0 { m } else { p - 1 };
        }
        for (p, link) in next.iter_mut().enumerate() {
            *link = match p {
                _ if p == m => 0,
                _ if p + 1 < m => p + 1,
                _ => NONE,
            };
        }
        if m == 0 {
            next[m] = NONE;
        }
        let mut ret_pos = vec![0; ops.len()];
        for (p, &(_, is_ret, i)) in ev.iter().enumerate() {
            if is_ret {
                ret_pos[i] = p;
            }
        }
        Events { ev, next, prev, ret_pos }
    }

    fn head(&self) -> usize {
        self.ev.len()
    }

    fn remove(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = n;
        if n != NONE {
            self.prev[n] = p;
        }
    }

    fn reinsert(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = x;
        if n != NONE {
            self.prev[n] = x;
        }
    }

    /// Removes the call at `c` and its return.
    fn lift(&mut self, c: usize) {
        let r = self.ret_pos[self.ev[c].2];
        self.remove(c);
        self.remove(r);
    }

    /// Undoes [`Events::lift`] of `c`.
    fn unlift(&mut self, c: usize) {
        let r = self.ret_pos[self.ev[c].2];
        self.reinsert(r);
        self.reinsert(c);
    }
}

/// Decides one key's operations; see the module documentation.
pub(super) fn check_key<'a>(ops: &[&'a Op], budget: u64) -> KeyVerdict {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut steps = Vec::with_capacity(ops.len());
    for o in ops {
        let mut id = |v: &'a str| -> u32 {
            let n = ids.len() as u32 + 1;
            *ids.entry(v).or_insert(n)
        };
        steps.push(match &o.action {
            Action::Put(v) => Step::Write(id(v)),
            Action::Delete => Step::Write(0),
            Action::Get(None) => Step::Read(0),
            Action::Get(Some(v)) => Step::Read(id(v)),
        });
    }
    let mut events = Events::new(ops);
    let head = events.head();
    let words = ops.len().div_ceil(64);
    let mut linearized = vec![0u64; words];
    let mut seen: HashSet<(Vec<u64>, u32)> = HashSet::new();
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut state = 0u32;
    let mut entry = events.next[head];
    let mut spent = 0u64;
    while events.next[head] != NONE {
        spent += 1;
        if spent > budget {
            return KeyVerdict::Undecided;
        }
        if entry == NONE {
            // Unreachable: the list always ends with a return. Treat as exhausted.
            return KeyVerdict::Violation;
        }
        let (_, is_ret, op) = events.ev[entry];
        if !is_ret {
            let (legal, after) = match steps[op] {
                Step::Write(v) => (true, v),
                Step::Read(v) => (v == state, state),
            };
            if legal {
                linearized[op / 64] |= 1 << (op % 64);
                if seen.insert((linearized.clone(), after)) {
                    stack.push((entry, state));
                    state = after;
                    events.lift(entry);
                    entry = events.next[head];
                    continue;
                }
                linearized[op / 64] &= !(1 << (op % 64));
            }
            entry = events.next[entry];
        } else {
            // The first return in the list: its operation must come before everything still
            // in the list, and it could not be placed: undo the last choice.
            let Some((call, before)) = stack.pop() else {
                return KeyVerdict::Violation;
            };
            let op = events.ev[call].2;
            state = before;
            linearized[op / 64] &= !(1 << (op % 64));
            events.unlift(call);
            entry = events.next[call];
        }
    }
    KeyVerdict::Linearizable
}
