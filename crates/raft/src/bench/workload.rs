//! The clients: each loops over random puts, deletes and linearizable gets on `keys` keys until
//! told to stop, recording every operation in the history (`crate::check::Op`: invocation and
//! return times on one clock, the value put or read, whether a write's outcome is unknown) and
//! the latency of every completed one.
//!
//! Values are unique (`c<client>-<seq>`, padded to the value size), so a read names the put it
//! saw. A write that failed before being proposed is left out of the history; one whose outcome
//! is unknown goes in with no return time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::check::{Action, Op};
use crate::client::{KvClient, Outcome};

/// The operation mix and sizes.
#[derive(Clone, Debug)]
pub struct Mix {
    /// Keys `k0` .. `k{keys-1}`.
    pub keys: u64,
    /// Fraction of puts.
    pub put: f64,
    /// Fraction of deletes (the rest are gets).
    pub delete: f64,
    /// Bytes per value (at least the unique prefix).
    pub value_size: usize,
}

/// What one client did.
#[derive(Default)]
pub struct ClientResult {
    /// Its operations.
    pub history: Vec<Op>,
    /// Latencies of completed puts and deletes, microseconds.
    pub write_us: Vec<u32>,
    /// Latencies of completed gets, microseconds.
    pub read_us: Vec<u32>,
    /// Writes whose outcome is unknown.
    pub unknown: u64,
    /// Operations that failed (not done; writes not proposed).
    pub failed: u64,
}

fn micros(d: std::time::Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// Runs client `id` against `addrs` until `stop`; times are nanoseconds since `t0`.
pub async fn run_client(
    id: u32,
    addrs: Vec<String>,
    mix: Mix,
    seed: u64,
    t0: Instant,
    stop: Arc<AtomicBool>,
) -> ClientResult {
    let client = KvClient::new(addrs);
    let mut rng = StdRng::seed_from_u64(seed ^ (u64::from(id) << 32));
    let mut out = ClientResult::default();
    let now = |t0: Instant| u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("k{}", rng.gen_range(0..mix.keys.max(1)));
        let r: f64 = rng.gen();
        let call = now(t0);
        let started = Instant::now();
        if r < mix.put + mix.delete {
            let action = if r < mix.put {
                seq += 1;
                let mut v = format!("c{id}-{seq}");
                if v.len() < mix.value_size {
                    v.extend(std::iter::repeat_n('.', mix.value_size - v.len()));
                }
                Action::Put(v)
            } else {
                Action::Delete
            };
            let o = match &action {
                Action::Put(v) => client.put(&key, v).await,
                _ => client.delete(&key).await,
            };
            let ret = now(t0);
            match o {
                Outcome::Done(_) => {
                    out.write_us.push(micros(started.elapsed()));
                    out.history.push(Op { client: id, key, action, call, ret: Some(ret) });
                }
                Outcome::Unknown(_) => {
                    out.unknown += 1;
                    out.history.push(Op { client: id, key, action, call, ret: None });
                }
                Outcome::Failed(_) => out.failed += 1,
            }
        } else {
            match client.get(&key).await {
                Outcome::Done(v) => {
                    let ret = now(t0);
                    out.read_us.push(micros(started.elapsed()));
                    out.history.push(Op {
                        client: id,
                        key,
                        action: Action::Get(v),
                        call,
                        ret: Some(ret),
                    });
                }
                _ => out.failed += 1,
            }
        }
    }
    out
}

/// The `q` quantile (0..=1) of `v` (sorted in place), in microseconds; 0 if empty.
pub fn quantile(v: &mut [u32], q: f64) -> u32 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i.min(v.len() - 1)]
}
