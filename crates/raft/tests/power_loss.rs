//! The store's durability contract under power loss, on `SimFs`: what openraft's suite cannot
//! check (it never crashes). Random sequences of openraft's calls (save_vote, append, truncate,
//! purge, save_committed, apply, snapshot build and install) run against the store and a model;
//! after a power cut (every unsynced byte dropped, or a random part of it) the reopened store
//! must be in the model's state after some prefix of the calls that includes every call whose
//! contract says "durable when it returns" (save_vote, append once its callback fired, snapshot
//! build and install). The deliberately broken stores (`Fault`) must fail the same check.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{EntryPayload, RaftLogReader, RaftSnapshotBuilder};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::fs::fault::{CrashMode, SimFs};
use talus_raft::backend::talus_db::TalusBackend;
use talus_raft::backend::Backend;
use talus_raft::keys;
use talus_raft::store::{self, Fault, LogStore, StateMachine, Store};
use talus_raft::types::{Entry, LogId, Request, Vote};

const DIR: &str = "/node";

/// What the store holds, as the contract lets a reader see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    vote: Option<Vote>,
    log: BTreeMap<u64, LogId>,
    purged: Option<LogId>,
    committed: Option<LogId>,
    applied: Option<LogId>,
    data: BTreeMap<String, String>,
    snapshot: Option<(Option<LogId>, String)>,
}

struct Node {
    fs: Arc<SimFs>,
    log: LogStore<TalusBackend>,
    sm: StateMachine<TalusBackend>,
    store: Arc<Store<TalusBackend>>,
}

fn open(fs: Arc<SimFs>, fault: Fault) -> Node {
    let backend = TalusBackend::open(&Path::new(DIR).join("db"), fs.clone()).expect("open db");
    let (log, sm, store) = store::open(Path::new(DIR), 1, backend, fault).expect("open store");
    Node { fs, log, sm, store }
}

fn log_id(term: u64, index: u64) -> LogId {
    LogId::new(openraft::CommittedLeaderId::new(term, 1), index)
}

async fn read_state(n: &mut Node) -> State {
    let vote = n.log.read_vote().await.expect("read_vote");
    let ls = n.log.get_log_state().await.expect("log state");
    let entries = n.log.try_get_log_entries(..).await.expect("entries");
    let log: BTreeMap<u64, LogId> = entries.iter().map(|e| (e.log_id.index, e.log_id)).collect();
    // No hole: the entries run from the first to the last without a gap, after the purged id.
    let first = ls.last_purged_log_id.map_or(0, |p| p.index + 1);
    if let (Some(&lo), Some(&hi)) = (log.keys().next(), log.keys().next_back()) {
        assert!(lo >= first, "entry {lo} at or below the purged id {first}");
        assert_eq!(hi - lo + 1, log.len() as u64, "a hole in the log {:?}", log.keys());
    }
    assert_eq!(ls.last_log_id, log.values().next_back().copied().or(ls.last_purged_log_id));
    let committed = n.log.read_committed().await.expect("committed");
    let (applied, _) = n.sm.applied_state().await.expect("applied");
    let mut data = BTreeMap::new();
    let end = [keys::DATA_PREFIX + 1];
    n.store
        .backend()
        .scan(None, &[keys::DATA_PREFIX], &end, &mut |k, v| {
            let k = String::from_utf8(k[1..].to_vec()).expect("utf8 key");
            data.insert(k, String::from_utf8(v.to_vec()).expect("utf8 value"));
            Ok(true)
        })
        .expect("scan");
    let snapshot =
        n.sm.get_current_snapshot()
            .await
            .expect("snapshot")
            .map(|s| (s.meta.last_log_id, s.meta.snapshot_id));
    State { vote, log, purged: ls.last_purged_log_id, committed, applied, data, snapshot }
}

/// A leader-side store whose snapshots the node installs: its own SimFs, a few applied puts.
async fn leader_snapshot(
    rng: &mut StdRng,
    term: u64,
    index: u64,
) -> (openraft::storage::Snapshot<talus_raft::types::TypeConfig>, BTreeMap<String, String>) {
    let mut l = open(SimFs::new(), Fault::None);
    let mut data = BTreeMap::new();
    let mut entries = Vec::new();
    for i in 0..rng.gen_range(1..6u64) {
        let (key, value) = (format!("k{}", rng.gen_range(0..8)), format!("leader{i}"));
        data.insert(key.clone(), value.clone());
        entries.push(Entry {
            log_id: log_id(term, index - 5 + i),
            payload: EntryPayload::Normal(Request::Put { key, value }),
        });
    }
    entries.push(Entry { log_id: log_id(term, index), payload: EntryPayload::Blank });
    l.sm.apply(entries).await.expect("leader apply");
    let snap = l.sm.get_snapshot_builder().await.build_snapshot().await.expect("leader build");
    (snap, data)
}

/// Runs `ops` random calls with power cuts; returns the first violation found.
async fn run(seed: u64, fault: Fault, ops: usize) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut n = open(SimFs::new(), fault);
    let mut model = State::default();
    // The model after each call since the last durable one (index 0: at the durable point).
    let mut since_durable = vec![model.clone()];
    let mut term = 1;
    for step in 0..ops {
        let durable = match rng.gen_range(0..100) {
            0..=9 => {
                term += rng.gen_range(0..2);
                let v = Vote::new(term, rng.gen_range(1..4));
                n.log.save_vote(&v).await.map_err(|e| e.to_string())?;
                model.vote = Some(v);
                true
            }
            10..=44 => {
                let mut next = model
                    .log
                    .keys()
                    .next_back()
                    .map_or(model.purged.map_or(1, |p| p.index + 1), |i| i + 1);
                if let Some(a) = model.applied.filter(|a| a.index >= next) {
                    // A snapshot installed past the log (its purge lost in a crash): openraft
                    // purges up to the snapshot before it appends after it.
                    n.log.purge(a).await.map_err(|e| e.to_string())?;
                    model.log.clear();
                    model.purged = Some(a);
                    next = a.index + 1;
                }
                let mut entries = Vec::new();
                for i in 0..rng.gen_range(1..5u64) {
                    let id = log_id(term, next + i);
                    let payload = match rng.gen_range(0..4) {
                        0 => EntryPayload::Blank,
                        1 => EntryPayload::Normal(Request::Delete {
                            key: format!("k{}", rng.gen_range(0..8)),
                        }),
                        _ => EntryPayload::Normal(Request::Put {
                            key: format!("k{}", rng.gen_range(0..8)),
                            value: format!("v{step}.{i}"),
                        }),
                    };
                    entries.push(Entry { log_id: id, payload });
                }
                for e in &entries {
                    model.log.insert(e.log_id.index, e.log_id);
                }
                n.log.blocking_append(entries).await.map_err(|e| e.to_string())?;
                true
            }
            45..=52 => {
                // Truncate an unapplied suffix (what a follower does on a conflict).
                let lo = model.applied.map_or(1, |a| a.index + 1);
                let hi = model.log.keys().next_back().copied().unwrap_or(0);
                if lo <= hi {
                    let at = rng.gen_range(lo..=hi);
                    n.log.truncate(log_id(term, at)).await.map_err(|e| e.to_string())?;
                    model.log.retain(|&i, _| i < at);
                }
                false
            }
            53..=59 => {
                if let Some(a) = model.applied.filter(|a| Some(*a) >= model.purged) {
                    let upto = rng.gen_range(model.purged.map_or(0, |p| p.index)..=a.index);
                    if let Some(&id) = model.log.get(&upto) {
                        n.log.purge(id).await.map_err(|e| e.to_string())?;
                        model.log.retain(|&i, _| i > upto);
                        model.purged = Some(id);
                    }
                }
                false
            }
            60..=64 => {
                n.log.save_committed(model.applied).await.map_err(|e| e.to_string())?;
                model.committed = model.applied;
                false
            }
            65..=89 => {
                let from = model.applied.map_or(1, |a| a.index + 1);
                let to = from + rng.gen_range(1..6u64);
                let entries =
                    n.log.try_get_log_entries(from..to).await.map_err(|e| e.to_string())?;
                if let Some(last) = entries.last() {
                    for e in &entries {
                        match &e.payload {
                            EntryPayload::Normal(Request::Put { key, value }) => {
                                model.data.insert(key.clone(), value.clone());
                            }
                            EntryPayload::Normal(Request::Delete { key }) => {
                                model.data.remove(key);
                            }
                            _ => {}
                        }
                    }
                    model.applied = Some(last.log_id);
                    n.sm.apply(entries).await.map_err(|e| e.to_string())?;
                }
                false
            }
            90..=95 => {
                let s =
                    n.sm.get_snapshot_builder()
                        .await
                        .build_snapshot()
                        .await
                        .map_err(|e| e.to_string())?;
                if s.meta.last_log_id != model.applied {
                    return Err(format!(
                        "step {step}: snapshot of {:?}, applied {:?}",
                        s.meta.last_log_id, model.applied
                    ));
                }
                model.snapshot = Some((s.meta.last_log_id, s.meta.snapshot_id));
                true
            }
            _ => {
                term += 1;
                let last = model.log.keys().next_back().copied().unwrap_or(0);
                let index = last
                    .max(model.applied.map_or(0, |a| a.index))
                    .max(model.purged.map_or(0, |p| p.index))
                    + 10;
                let (snap, data) = leader_snapshot(&mut rng, term, index).await;
                n.sm.install_snapshot(&snap.meta, snap.snapshot)
                    .await
                    .map_err(|e| e.to_string())?;
                model.data = data;
                model.applied = snap.meta.last_log_id;
                model.snapshot = Some((snap.meta.last_log_id, snap.meta.snapshot_id));
                // Durable here; then openraft purges the log up to the snapshot (unsynced).
                since_durable = vec![model.clone()];
                n.log.purge(log_id(term, index)).await.map_err(|e| e.to_string())?;
                model.log.clear();
                model.purged = Some(log_id(term, index));
                false
            }
        };
        if std::env::var("PL_TRACE").is_ok() {
            eprintln!(
                "step {step} durable {durable} applied {:?} purged {:?} log {:?}",
                model.applied.map(|a| (a.leader_id.term, a.index)),
                model.purged.map(|a| (a.leader_id.term, a.index)),
                model.log.iter().map(|(i, l)| (*i, l.leader_id.term)).collect::<Vec<_>>()
            );
        }
        if model.purged > model.applied {
            return Err(format!(
                "seed {seed} step {step}: purged {:?} > applied {:?}",
                model.purged, model.applied
            ));
        }
        if durable {
            since_durable = vec![model.clone()];
        } else {
            since_durable.push(model.clone());
        }
        if rng.gen_bool(0.08) {
            let mode = if rng.gen_bool(0.5) {
                CrashMode::DropAllUnsynced
            } else {
                CrashMode::DropRandomUnsynced { seed: rng.gen() }
            };
            if std::env::var("PL_TRACE").is_ok() {
                eprintln!("crash {mode:?}");
            }
            let next = n.fs.crash(mode);
            drop(n);
            n = open(next, fault);
            let got = read_state(&mut n).await;
            match since_durable.iter().position(|s| *s == got) {
                Some(_) => {
                    model = got;
                    since_durable = vec![model.clone()];
                }
                None => {
                    return Err(format!(
                        "seed {seed} step {step} {mode:?}: the recovered state is none of the {} \
                         states since the last durable call\n got:  {got:?}\n want: {:?}",
                        since_durable.len(),
                        since_durable.first()
                    ))
                }
            }
        }
    }
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt")
}

#[test]
fn the_store_keeps_every_durable_call_across_power_cuts() {
    let rt = runtime();
    let only: Option<u64> = std::env::var("PL_SEED").ok().and_then(|s| s.parse().ok());
    for seed in (0..24).filter(|s| only.is_none_or(|o| o == *s)) {
        rt.block_on(run(seed, Fault::None, 300)).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Each broken store fails the same check on some seed: the check can fail, and catches a
/// store that does not sync what openraft's contract says it must.
#[test]
fn broken_stores_are_caught() {
    let rt = runtime();
    for fault in
        [Fault::VoteNotSynced, Fault::LogNotSynced, Fault::VoteNotLogged, Fault::LogNotLogged]
    {
        let caught = (0..24).find_map(|seed| rt.block_on(run(seed, fault, 300)).err());
        let msg = caught.unwrap_or_else(|| panic!("{fault}: no seed caught the broken store"));
        eprintln!("{fault} caught: {}", msg.lines().next().unwrap_or(""));
    }
}
