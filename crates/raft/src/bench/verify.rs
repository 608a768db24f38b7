//! The kill test's end checks: the replicas converge and agree, and no acknowledged write is
//! lost ([`lost_writes`]); the history with the final state (one read per key per node, after
//! every operation) then goes to the linearizability checker.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::cluster::Cluster;
use crate::check::{Action, Op};

/// Waits until every node runs and reports the same last log index and last applied index, with
/// a leader among them. Returns that index.
pub async fn converge(cluster: &mut Cluster, timeout: Duration) -> Result<u64, String> {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < timeout {
        for i in 0..cluster.len() {
            cluster.resume(i);
            if !cluster.running(i) {
                cluster.kill(i);
                cluster.spawn(i)?;
            }
        }
        let mut seen = Vec::new();
        let mut leaders = 0;
        for i in 0..cluster.len() {
            if let Some(m) = cluster.metrics(i).await {
                let applied = m["last_applied"]["index"].as_u64();
                let log = m["last_log_index"].as_u64();
                leaders += usize::from(m["state"] == "Leader");
                seen.push((applied, log));
            }
        }
        if seen.len() == cluster.len() && leaders == 1 {
            let first = seen[0];
            if first.0.is_some() && first.0 == first.1 && seen.iter().all(|s| *s == first) {
                return Ok(first.0.unwrap_or(0));
            }
        }
        last = format!("{seen:?}, {leaders} leader(s)");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("the nodes did not converge in {timeout:?}: (applied, last log) per node {last}"))
}

/// Acknowledged writes lost in `final_state`: for each key, the final value must be the value
/// of some write (or the initial absence) that no acknowledged write to the key strictly follows
/// (was invoked after it returned). The count is, per key, the fewest acknowledged writes that
/// strictly follow any write explaining the final value (a value no write produced counts every
/// acknowledged write to the key).
pub fn lost_writes(history: &[Op], final_state: &BTreeMap<String, String>, keys: u64) -> u64 {
    let mut writes: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for o in history {
        if matches!(o.action, Action::Put(_) | Action::Delete) {
            writes.entry(o.key.as_str()).or_default().push(o);
        }
    }
    let mut lost = 0;
    for k in 0..keys {
        let key = format!("k{k}");
        let ws = writes.get(key.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let fin = final_state.get(&key);
        // What could explain the final value: a write (`Some(its return time)`; a pending
        // one never returned, so nothing follows it) or, for an absent key, the initial state
        // (`None`: every write follows it).
        let explain: Vec<Option<u64>> = ws
            .iter()
            .filter(|w| match (&w.action, fin) {
                (Action::Put(v), Some(f)) => v == f,
                (Action::Delete, None) => true,
                _ => false,
            })
            .map(|w| Some(w.ret.unwrap_or(u64::MAX)))
            .chain(fin.is_none().then_some(None))
            .collect();
        let acked = ws.iter().filter(|w| w.ret.is_some()).count() as u64;
        let following = |t: Option<u64>| match t {
            None => acked,
            Some(t) => ws.iter().filter(|w| w.ret.is_some() && w.call > t).count() as u64,
        };
        lost += explain.into_iter().map(following).min().unwrap_or(acked);
    }
    lost
}

/// Reads of every key on every node at `t` (after every operation), to append to the history.
pub fn final_reads(dumps: &[BTreeMap<String, String>], keys: u64, t: u64) -> Vec<Op> {
    let mut out = Vec::new();
    for (n, d) in dumps.iter().enumerate() {
        for k in 0..keys {
            let key = format!("k{k}");
            let v = d.get(&key).cloned();
            out.push(Op {
                client: 1000 + n as u32,
                key,
                action: Action::Get(v),
                call: t,
                ret: Some(t + 1),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(key: &str, v: Option<&str>, call: u64, ret: Option<u64>) -> Op {
        let action = match v {
            Some(v) => Action::Put(v.into()),
            None => Action::Delete,
        };
        Op { client: 0, key: key.into(), action, call, ret }
    }

    #[test]
    fn counts_acknowledged_writes_the_final_state_lacks() {
        let h = vec![
            w("k0", Some("a"), 0, Some(10)),
            w("k0", Some("b"), 20, Some(30)),
            w("k1", Some("x"), 0, Some(10)),
            w("k2", Some("p"), 0, None),
        ];
        let fin = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert_eq!(lost_writes(&h, &fin(&[("k0", "b"), ("k1", "x")]), 3), 0);
        assert_eq!(lost_writes(&h, &fin(&[("k0", "b"), ("k1", "x"), ("k2", "p")]), 3), 0);
        // k0 went back to "a": "b" (acknowledged after "a" returned) is lost.
        assert_eq!(lost_writes(&h, &fin(&[("k0", "a"), ("k1", "x")]), 3), 1);
        // k1 is gone: its one acknowledged write is lost.
        assert_eq!(lost_writes(&h, &fin(&[("k0", "b")]), 3), 1);
        // A value nobody wrote: every acknowledged write to the key.
        assert_eq!(lost_writes(&h, &fin(&[("k0", "zz"), ("k1", "x")]), 3), 2);
    }
}
