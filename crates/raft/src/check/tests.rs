//! The checker against known histories (linearizable and not) and, for random small histories,
//! against a brute-force search over every order.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

fn op(client: u32, key: &str, action: Action, call: u64, ret: Option<u64>) -> Op {
    Op { client, key: key.into(), action, call, ret }
}
fn put(c: u32, v: &str, call: u64, ret: u64) -> Op {
    op(c, "k", Action::Put(v.into()), call, Some(ret))
}
fn get(c: u32, v: Option<&str>, call: u64, ret: u64) -> Op {
    op(c, "k", Action::Get(v.map(String::from)), call, Some(ret))
}

fn verdict(h: &[Op]) -> bool {
    let r = check(h, 1_000_000);
    assert!(r.undecided.is_empty());
    r.ok()
}

#[test]
fn known_linearizable_histories() {
    // Sequential.
    assert!(verdict(&[put(1, "a", 0, 10), get(2, Some("a"), 20, 30)]));
    // A read concurrent with a put may see either value, and reads may see the put take
    // effect between them.
    assert!(verdict(&[put(1, "a", 0, 100), get(2, None, 10, 20), get(3, Some("a"), 30, 40)]));
    // Two concurrent puts, reads agree on one order.
    assert!(verdict(&[
        put(1, "a", 0, 50),
        put(2, "b", 0, 50),
        get(3, Some("a"), 10, 20),
        get(3, Some("b"), 60, 70),
        get(4, Some("b"), 80, 90),
    ]));
    // A pending put that a read observed, and one nobody observed.
    assert!(verdict(&[
        op(1, "k", Action::Put("a".into()), 0, None),
        op(2, "k", Action::Put("b".into()), 5, None),
        get(3, Some("a"), 50, 60),
        get(3, Some("a"), 70, 80),
    ]));
    // Delete, and keys are independent.
    assert!(verdict(&[
        put(1, "a", 0, 10),
        op(1, "k", Action::Delete, 20, Some(30)),
        get(2, None, 40, 50),
        op(3, "j", Action::Get(None), 0, Some(100)),
    ]));
}

#[test]
fn known_non_linearizable_histories() {
    // A stale read after a newer put returned.
    assert!(!verdict(&[put(1, "a", 0, 10), put(1, "b", 20, 30), get(2, Some("a"), 40, 50)]));
    // An acknowledged put lost.
    assert!(!verdict(&[put(1, "a", 0, 10), get(2, None, 20, 30)]));
    // Once a value was read, an older state cannot come back (a read of the pending put's
    // value, then a read of the state before it).
    assert!(!verdict(&[put(1, "a", 0, 100), get(2, Some("a"), 10, 20), get(3, None, 30, 40)]));
    // The order of two completed puts flips between readers.
    assert!(!verdict(&[
        put(1, "a", 0, 50),
        put(2, "b", 0, 50),
        get(3, Some("a"), 60, 70),
        get(4, Some("b"), 80, 90),
        get(5, Some("a"), 100, 110),
    ]));
    // A value never written.
    assert!(!verdict(&[put(1, "a", 0, 10), get(2, Some("z"), 20, 30)]));
    // A pending put is applied at most once: its value cannot reappear after an overwrite.
    assert!(!verdict(&[
        op(1, "k", Action::Put("a".into()), 0, None),
        get(2, Some("a"), 10, 20),
        put(3, "b", 30, 40),
        get(2, Some("a"), 50, 60),
    ]));
    // A deleted key read back.
    assert!(!verdict(&[
        put(1, "a", 0, 10),
        op(1, "k", Action::Delete, 20, Some(30)),
        get(2, Some("a"), 40, 50)
    ]));
}

#[test]
fn reports_the_violating_key_and_drops_unobserved_pending_puts() {
    let mut h = vec![put(1, "a", 0, 10), get(2, None, 20, 30)];
    h.push(op(3, "other", Action::Put("x".into()), 0, None));
    h.push(op(4, "other", Action::Get(None), 5, None));
    let r = check(&h, 1000);
    assert_eq!(r.violations.len(), 1);
    assert_eq!(r.violations[0].0, "k");
    assert_eq!(r.dropped_pending, 1);
    assert_eq!(r.keys, 1);
}

/// Brute force: is there an order of `ops` (every completed one; any subset of the pending
/// ones) respecting real time in which the register's reads are legal?
fn brute(ops: &[Op]) -> bool {
    fn go(ops: &[Op], used: &mut Vec<bool>, state: Option<&str>, placed_max_call: u64) -> bool {
        let _ = placed_max_call;
        if ops.iter().zip(used.iter()).all(|(o, &u)| u || o.ret.is_none()) {
            return true;
        }
        for i in 0..ops.len() {
            if used[i] {
                continue;
            }
            // `i` may go next only if no unplaced op returned before `i` was called.
            let blocked = ops
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && !used[j] && o.ret.is_some_and(|r| r < ops[i].call));
            if blocked {
                continue;
            }
            let next = match &ops[i].action {
                Action::Put(v) => Some(Some(v.as_str())),
                Action::Delete => Some(None),
                Action::Get(v) => (v.as_deref() == state).then_some(state),
            };
            if let Some(next) = next {
                used[i] = true;
                if go(ops, used, next, 0) {
                    used[i] = false;
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    go(ops, &mut vec![false; ops.len()], None, 0)
}

/// Random histories of up to 7 operations on one key from 3 clients, some pending, some with
/// reads of random values: the checker agrees with brute force on every one, and both verdicts
/// occur often.
#[test]
fn agrees_with_brute_force_on_random_small_histories() {
    let mut rng = StdRng::seed_from_u64(42);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..20_000 {
        let n = rng.gen_range(1..=7);
        let mut h = Vec::new();
        let mut clock = [0u64; 3];
        for i in 0..n {
            let c = rng.gen_range(0..3);
            let call = clock[c] + rng.gen_range(0..20);
            let ret = call + rng.gen_range(1..40);
            clock[c] = ret + 1;
            let action = match rng.gen_range(0..10) {
                0..=3 => Action::Put(format!("v{i}")),
                4 => Action::Delete,
                _ => Action::Get(match rng.gen_range(0..4) {
                    0 => None,
                    _ => Some(format!("v{}", rng.gen_range(0..n))),
                }),
            };
            let pending = matches!(action, Action::Put(_) | Action::Delete) && rng.gen_bool(0.15);
            h.push(op(c as u32, "k", action, call, if pending { None } else { Some(ret) }));
        }
        let want = brute(&h);
        let got = check(&h, 1_000_000);
        assert!(got.undecided.is_empty());
        assert_eq!(got.ok(), want, "{h:#?}");
        if want {
            yes += 1
        } else {
            no += 1
        }
    }
    assert!(yes > 2000 && no > 2000, "{yes} linearizable, {no} not");
}

/// A long history from a simulated linearizable register (each op takes effect at a random
/// point of its interval) passes, and changing one read to a stale value is caught.
#[test]
fn long_simulated_histories_pass_and_a_stale_read_is_caught() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut events: Vec<(u64, usize)> = Vec::new();
    let mut h: Vec<Op> = Vec::new();
    for c in 0..8u32 {
        let mut t = 0;
        for i in 0..300 {
            let call = t + rng.gen_range(0..50);
            let ret = call + rng.gen_range(1..200);
            let at = rng.gen_range(call..=ret);
            t = ret + 1;
            let action = if rng.gen_bool(0.4) {
                Action::Put(format!("c{c}-{i}"))
            } else {
                Action::Get(None)
            };
            events.push((at, h.len()));
            h.push(op(c, ["a", "b"][i % 2], action, call, Some(ret)));
        }
    }
    events.sort();
    let mut state: std::collections::HashMap<String, Option<String>> = Default::default();
    for (_, i) in events {
        let key = h[i].key.clone();
        match &h[i].action {
            Action::Put(v) => {
                state.insert(key, Some(v.clone()));
            }
            _ => h[i].action = Action::Get(state.get(&key).cloned().flatten()),
        }
    }
    assert!(check(&h, 10_000_000).ok());
    // A read that saw a value and, later, a read (after the next put completed) of that value.
    let mut bad = h.clone();
    let last_get = (0..bad.len())
        .rev()
        .find(|&i| matches!(&bad[i].action, Action::Get(Some(_))) && bad[i].key == "a")
        .expect("a read");
    let first_put =
        bad.iter().position(|o| matches!(o.action, Action::Put(_)) && o.key == "a").expect("a put");
    let Action::Put(v) = bad[first_put].action.clone() else { unreachable!() };
    bad[last_get].action = Action::Get(Some(v));
    let r = check(&bad, 10_000_000);
    assert!(!r.ok(), "a stale read at the end was not caught");
}
