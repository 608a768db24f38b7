//! Model test of the public API: random operation sequences over a small key space, checked
//! against a `BTreeMap` oracle after every read. Snapshots keep a clone of the oracle; reopen
//! and (on `SimFs`) process crashes must keep everything acknowledged. Options are tiny so that
//! flushes and compactions really happen.
//!
//! `PROPTEST_CASES` sets the number of cases (256 by default). A shrunk failure is printed as
//! Rust (keys as `b(b"..")`): paste it into a named test in `mod regressions` below, adding
//! `vec!` before the lists.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{
    assert_db_eq, b, model_range, tiny_options, write_ops, Bytes, Model, WriteOp, ALPHABET, SIM_DB,
};
use proptest::prelude::*;
use talus::fs::fault::{CrashMode, SimFs};
use talus::fs::Fs;
use talus::{Db, Options, ReadOptions, Snapshot};

/// Live snapshots kept at most; taking one more releases the oldest.
const MAX_SNAPSHOTS: usize = 4;

/// Where a raw-iterator walk starts.
#[derive(Debug, Clone)]
enum Start {
    First,
    Last,
    Seek(Bytes),
    SeekForPrev(Bytes),
}

/// One step of a case.
#[derive(Debug, Clone)]
enum Op {
    /// One write on its own.
    Write(WriteOp, bool),
    /// An atomic batch (`bool`: sync).
    Batch(Vec<WriteOp>, bool),
    /// `count` puts of `value_len`-byte values on pseudo-random keys from `seed`: enough data to
    /// switch memtables and trigger compactions.
    Bulk {
        seed: u64,
        count: u16,
        value_len: u16,
    },
    Get(Bytes),
    MultiGet(Vec<Bytes>),
    TakeSnapshot,
    ReleaseSnapshot(usize),
    /// `Some(i)` reads at snapshot `i % live snapshots` (latest state if none is live).
    GetAt(usize, Bytes),
    /// Iterate with bounds; `pulls` says next (true) or next_back (false), then drain forward.
    Iter {
        snap: Option<usize>,
        lower: Option<Bytes>,
        upper: Option<Bytes>,
        pulls: Vec<bool>,
    },
    /// Walk a raw iterator: position, then next (true) / prev (false) while valid.
    RawWalk {
        snap: Option<usize>,
        lower: Option<Bytes>,
        upper: Option<Bytes>,
        start: Start,
        steps: Vec<bool>,
    },
    Flush,
    Compact(Option<Bytes>, Option<Bytes>),
    /// Close and open again.
    Reopen,
    /// Kill the process (on `SimFs`; a plain reopen on the real file system) and open again.
    ProcessCrash,
    /// Cut the power (on `SimFs`, dropping all unsynced data, or a random part of it with a
    /// seed; a plain reopen on the real file system) and open again: the database must hold
    /// the writes up to the last sync or flush and then some prefix of the later ones.
    PowerLoss(Option<u64>),
}

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sim,
    Real,
}

/// One case's setting.
#[derive(Debug, Clone, Copy)]
struct Config {
    backend: Backend,
    write_buffer_size: usize,
    /// Index into [`PROFILES`]: the compaction configuration (a metamorphic parameter: every
    /// configuration must give the oracle's answers).
    profile: usize,
}

/// Compaction and IO configurations the model test runs under.
const PROFILES: &[&str] = &[
    "leveled",
    "leveled-static",
    "parallel-intra-l0",
    "parallel-no-intra-l0",
    "direct-io-partitioned",
];

/// The profile with direct IO and partitioned index and filters on.
const DIRECT_PROFILE: usize = 4;

/// Applies profile `p` of [`PROFILES`] to `o`.
fn apply_profile(o: &mut Options, p: usize) {
    match PROFILES.get(p).copied().unwrap_or("leveled") {
        "leveled-static" => o.level_compaction_dynamic_level_bytes = false,
        "parallel-intra-l0" => {
            o.max_background_jobs = 4;
            o.intra_l0_compaction = true;
        }
        "subcompactions-4" => o.max_subcompactions = 4,
        "universal" => o.compaction_style = talus::CompactionStyle::Universal,
        "parallel-no-intra-l0" => {
            o.max_background_jobs = 4;
            o.intra_l0_compaction = false;
        }
        // Direct IO for reads, flushes and compactions (SimFs checks every request's
        // alignment), partitioned index and filters with tiny partitions, index and filter
        // blocks in a small block cache (the top levels pinned, partitions evicted), and a
        // readahead smaller than a file so compactions read in several chunks.
        "direct-io-partitioned" => {
            o.use_direct_reads = true;
            o.use_direct_io_for_flush_and_compaction = true;
            o.index_type = talus::IndexType::TwoLevelIndexSearch;
            o.partition_filters = true;
            o.metadata_block_size = 64;
            o.cache_index_and_filter_blocks = true;
            o.block_cache_capacity = 16 << 10;
            o.compaction_readahead_size = 4096;
        }
        _ => {}
    }
}

/// The database under test with its oracle.
struct Harness {
    cfg: Config,
    sim: Option<Arc<SimFs>>,
    _tmp: Option<tempfile::TempDir>,
    path: PathBuf,
    db: Option<Db>,
    model: Model,
    snaps: Vec<(Snapshot, Model)>,
    /// The state as of the last sync write or flush: it survives a power loss.
    durable: Model,
    /// Write groups acknowledged since then (each atomic): a power loss keeps a prefix.
    since: Vec<Vec<WriteOp>>,
}

impl Harness {
    fn new(cfg: Config) -> Harness {
        let (sim, tmp, path) = match cfg.backend {
            Backend::Sim => {
                let sim = SimFs::new();
                // The direct-IO profile runs on 512-byte or 4 KiB logical blocks.
                let align = if cfg.write_buffer_size.is_multiple_of(2) { 512 } else { 4096 };
                sim.set_direct_io_alignment(align);
                (Some(sim), None, PathBuf::from(SIM_DB))
            }
            Backend::Real => {
                let t = tempfile::tempdir().expect("tempdir");
                let p = t.path().join("db");
                (None, Some(t), p)
            }
        };
        let mut h = Harness {
            cfg,
            sim,
            _tmp: tmp,
            path,
            db: None,
            model: Model::new(),
            snaps: vec![],
            durable: Model::new(),
            since: vec![],
        };
        h.open();
        h
    }

    fn options(&self) -> Options {
        let fs: Arc<dyn Fs> = match &self.sim {
            Some(s) => s.clone(),
            None => Arc::new(talus::fs::StdFs),
        };
        let mut o = tiny_options(fs, self.cfg.write_buffer_size);
        apply_profile(&mut o, self.cfg.profile);
        o
    }

    fn open(&mut self) {
        let db = Db::open(&self.path, self.options()).unwrap_or_else(|e| panic!("open: {e}"));
        self.db = Some(db);
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("database is open")
    }

    fn close(&mut self) {
        self.snaps.clear();
        self.db = None;
    }

    /// Records an acknowledged atomic write group in the oracle.
    fn acked(&mut self, ops: &[WriteOp], sync: bool) {
        ops.iter().for_each(|w| w.apply(&mut self.model));
        // An empty batch need not reach the WAL, so its sync promises nothing about earlier
        // writes.
        if sync && !ops.is_empty() {
            self.made_durable();
        } else {
            self.since.push(ops.to_vec());
        }
    }

    /// Everything acknowledged so far survives a power loss from now on.
    fn made_durable(&mut self) {
        self.durable = self.model.clone();
        self.since.clear();
    }

    /// After a power loss: the database must hold the durable state plus a prefix of the later
    /// write groups; that state becomes the oracle.
    fn check_power_loss(&mut self, ctx: &str) {
        let got = common::read_consistent(self.db()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let mut m = self.durable.clone();
        let mut ok = m == got;
        for g in &self.since {
            if ok {
                break;
            }
            g.iter().for_each(|w| w.apply(&mut m));
            ok = m == got;
        }
        assert!(
            ok,
            "{ctx}: recovered state is no prefix of the {} writes after the last sync; \
             against the durable state:\n{}",
            self.since.len(),
            common::diff(&got, &self.durable)
        );
        self.model = got;
        self.made_durable();
    }

    /// The read options and oracle for snapshot choice `snap`.
    fn view(&self, snap: Option<usize>) -> (ReadOptions, &Model) {
        match snap {
            Some(i) if !self.snaps.is_empty() => {
                let (s, m) = &self.snaps[i % self.snaps.len()];
                (ReadOptions { snapshot: Some(s.clone()), ..Default::default() }, m)
            }
            _ => (ReadOptions::default(), &self.model),
        }
    }

    fn step(&mut self, i: usize, op: &Op) {
        let ctx = format!("op {i} {op:?}");
        match op {
            Op::Write(w, sync) => {
                w.exec(self.db(), *sync).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                self.acked(std::slice::from_ref(w), *sync);
            }
            Op::Batch(ws, sync) => {
                write_ops(self.db(), ws, *sync).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                self.acked(ws, *sync);
            }
            Op::Bulk { seed, count, value_len } => {
                let mut x = *seed | 1;
                for n in 0..*count {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let len = 1 + (x % 3) as usize;
                    let key: Vec<u8> =
                        (0..len).map(|j| ALPHABET[((x >> (8 * j + 8)) % 4) as usize]).collect();
                    let value = vec![(x >> 40) as u8 ^ n as u8; *value_len as usize];
                    let w = WriteOp::Put(key.into(), value.into());
                    w.exec(self.db(), false).unwrap_or_else(|e| panic!("{ctx} put {n}: {e}"));
                    self.acked(&[w], false);
                }
            }
            Op::Get(k) => {
                let got = self.db().get(k).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(got.as_ref(), self.model.get(&k.0), "{ctx}");
            }
            Op::MultiGet(keys) => {
                let got = self.db().multi_get(keys, &ReadOptions::default());
                assert_eq!(got.len(), keys.len(), "{ctx}");
                for (k, r) in keys.iter().zip(got) {
                    let v = r.unwrap_or_else(|e| panic!("{ctx} key {k:?}: {e}"));
                    assert_eq!(v.as_ref(), self.model.get(&k.0), "{ctx} key {k:?}");
                }
            }
            Op::TakeSnapshot => {
                if self.snaps.len() == MAX_SNAPSHOTS {
                    self.snaps.remove(0);
                }
                let s = self.db().snapshot();
                self.snaps.push((s, self.model.clone()));
            }
            Op::ReleaseSnapshot(i) => {
                if !self.snaps.is_empty() {
                    let n = self.snaps.len();
                    self.snaps.remove(i % n);
                }
            }
            Op::GetAt(i, k) => {
                let (ro, m) = self.view(Some(*i));
                let got = self.db().get_opt(k, &ro).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(got.as_ref(), m.get(&k.0), "{ctx}");
            }
            Op::Iter { snap, lower, upper, pulls } => {
                self.check_iter(&ctx, *snap, lower, upper, pulls)
            }
            Op::RawWalk { snap, lower, upper, start, steps } => {
                self.check_raw(&ctx, *snap, lower, upper, start, steps)
            }
            Op::Flush => {
                self.db().flush().unwrap_or_else(|e| panic!("{ctx}: {e}"));
                self.made_durable();
            }
            Op::Compact(b, e) => {
                self.db().compact_range(opt(b), opt(e)).unwrap_or_else(|e| panic!("{ctx}: {e}"))
            }
            Op::Reopen => {
                self.close();
                self.open();
                assert_db_eq(self.db(), &self.model, &format!("{ctx}: after reopen"));
            }
            Op::PowerLoss(seed) => {
                let Some(sim) = &self.sim else { return self.step(i, &Op::Reopen) };
                let mode = match seed {
                    Some(seed) => CrashMode::DropRandomUnsynced { seed: *seed },
                    None => CrashMode::DropAllUnsynced,
                };
                let next = sim.crash(mode);
                self.close();
                self.sim = Some(next);
                self.open();
                self.check_power_loss(&ctx);
            }
            Op::ProcessCrash => {
                if let Some(sim) = &self.sim {
                    let next = sim.crash(CrashMode::KeepUnsynced);
                    self.close();
                    self.sim = Some(next);
                } else {
                    self.close();
                }
                self.open();
                assert_db_eq(self.db(), &self.model, &format!("{ctx}: after process crash"));
            }
        }
    }

    fn check_iter(
        &self,
        ctx: &str,
        snap: Option<usize>,
        lower: &Option<Bytes>,
        upper: &Option<Bytes>,
        pulls: &[bool],
    ) {
        let (mut ro, m) = self.view(snap);
        ro.iterate_lower_bound = opt(lower).map(<[u8]>::to_vec);
        ro.iterate_upper_bound = opt(upper).map(<[u8]>::to_vec);
        let mut want: std::collections::VecDeque<_> = model_range(m, opt(lower), opt(upper)).into();
        let mut it = self.db().iter(&ro);
        for (n, &front) in pulls.iter().enumerate() {
            let got = if front { it.next() } else { it.next_back() };
            let got = got.map(|r| r.unwrap_or_else(|e| panic!("{ctx} pull {n}: {e}")));
            let exp = if front { want.pop_front() } else { want.pop_back() };
            assert_eq!(got, exp, "{ctx}: pull {n} (front: {front})");
        }
        let rest: Vec<_> = it.map(|r| r.unwrap_or_else(|e| panic!("{ctx} drain: {e}"))).collect();
        assert_eq!(rest, Vec::from(want), "{ctx}: rest after the pulls");
    }

    fn check_raw(
        &self,
        ctx: &str,
        snap: Option<usize>,
        lower: &Option<Bytes>,
        upper: &Option<Bytes>,
        start: &Start,
        steps: &[bool],
    ) {
        let (mut ro, m) = self.view(snap);
        ro.iterate_lower_bound = opt(lower).map(<[u8]>::to_vec);
        ro.iterate_upper_bound = opt(upper).map(<[u8]>::to_vec);
        let want = model_range(m, opt(lower), opt(upper));
        let mut it = self.db().raw_iter(&ro);
        let mut pos: Option<usize> = match start {
            Start::First => {
                it.seek_to_first();
                (!want.is_empty()).then_some(0)
            }
            Start::Last => {
                it.seek_to_last();
                want.len().checked_sub(1)
            }
            Start::Seek(t) => {
                it.seek(t);
                let i = want.partition_point(|(k, _)| k[..] < t[..]);
                (i < want.len()).then_some(i)
            }
            Start::SeekForPrev(t) => {
                it.seek_for_prev(t);
                want.partition_point(|(k, _)| k[..] <= t[..]).checked_sub(1)
            }
        };
        let mut n = 0;
        loop {
            assert_eq!(it.valid(), pos.is_some(), "{ctx}: validity after {n} steps");
            let Some(p) = pos else { break };
            let (k, v) = &want[p];
            assert_eq!(it.key(), &k[..], "{ctx}: key after {n} steps");
            assert_eq!(it.value(), &v[..], "{ctx}: value after {n} steps");
            let Some(&fwd) = steps.get(n) else { break };
            if fwd {
                it.next();
                pos = (p + 1 < want.len()).then_some(p + 1);
            } else {
                it.prev();
                pos = p.checked_sub(1);
            }
            n += 1;
        }
        it.status().unwrap_or_else(|e| panic!("{ctx}: status: {e}"));
    }
}

fn opt(x: &Option<Bytes>) -> Option<&[u8]> {
    x.as_ref().map(|b| &b.0[..])
}

/// Runs one case; panics (with the failing op) on the first disagreement with the oracle.
fn run(cfg: Config, ops: &[Op]) {
    let mut h = Harness::new(cfg);
    for (i, op) in ops.iter().enumerate() {
        h.step(i, op);
    }
    assert_db_eq(h.db(), &h.model, "at the end");
    h.close();
    h.open();
    assert_db_eq(h.db(), &h.model, "after the final reopen");
}

fn key() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        20 => prop::collection::vec(prop::sample::select(ALPHABET.to_vec()), 1..=3).prop_map(Bytes),
        1 => Just(Bytes::default()),
    ]
}

fn value() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..16).prop_map(Bytes),
        1 => prop::collection::vec(any::<u8>(), 100..600).prop_map(Bytes),
    ]
}

fn write_op() -> impl Strategy<Value = WriteOp> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| WriteOp::Put(k, v)),
        3 => key().prop_map(WriteOp::Delete),
        1 => (key(), key()).prop_map(|(a, b)| WriteOp::DeleteRange(a.clone().min(b.clone()), a.max(b))),
    ]
}

/// Optional iteration bounds with `lower <= upper`.
fn bounds() -> impl Strategy<Value = (Option<Bytes>, Option<Bytes>)> {
    (prop::option::weighted(0.3, key()), prop::option::weighted(0.3, key())).prop_map(|(l, u)| {
        match (l, u) {
            (Some(l), Some(u)) if l > u => (Some(u), Some(l)),
            b => b,
        }
    })
}

fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        Just(Start::First),
        Just(Start::Last),
        key().prop_map(Start::Seek),
        key().prop_map(Start::SeekForPrev),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let snap = prop::option::weighted(0.3, any::<usize>());
    prop_oneof![
        20 => (write_op(), prop::bool::weighted(0.1)).prop_map(|(w, s)| Op::Write(w, s)),
        4 => (prop::collection::vec(write_op(), 0..8), prop::bool::weighted(0.2))
            .prop_map(|(ws, s)| Op::Batch(ws, s)),
        2 => (any::<u64>(), 10u16..300, 16u16..200)
            .prop_map(|(seed, count, value_len)| Op::Bulk { seed, count, value_len }),
        6 => key().prop_map(Op::Get),
        2 => prop::collection::vec(key(), 0..6).prop_map(Op::MultiGet),
        2 => Just(Op::TakeSnapshot),
        1 => any::<usize>().prop_map(Op::ReleaseSnapshot),
        3 => (any::<usize>(), key()).prop_map(|(i, k)| Op::GetAt(i, k)),
        4 => (snap.clone(), bounds(), prop::collection::vec(any::<bool>(), 0..12))
            .prop_map(|(snap, (lower, upper), pulls)| Op::Iter { snap, lower, upper, pulls }),
        4 => (snap, bounds(), start(), prop::collection::vec(any::<bool>(), 0..16)).prop_map(
            |(snap, (lower, upper), start, steps)| Op::RawWalk { snap, lower, upper, start, steps }
        ),
        2 => Just(Op::Flush),
        1 => bounds().prop_map(|(b, e)| Op::Compact(b, e)),
        1 => Just(Op::Reopen),
        1 => Just(Op::ProcessCrash),
        1 => prop::option::of(any::<u64>()).prop_map(Op::PowerLoss),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..60)
}

fn proptest_config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    // Shrunk failures become named tests in `regressions`, not files.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn model_sim_fs(
        write_buffer_size in 4096usize..65536,
        profile in 0..PROFILES.len(),
        ops in ops(),
    ) {
        run(Config { backend: Backend::Sim, write_buffer_size, profile }, &ops);
    }
}

/// The real file system pays for every fsync, so it runs a sixteenth of the cases (the SimFs
/// variant carries the case count; this one checks that StdFs behaves like SimFs).
fn real_fs_config() -> ProptestConfig {
    let c = proptest_config();
    ProptestConfig { cases: (c.cases / 16).max(32), ..c }
}

proptest! {
    #![proptest_config(real_fs_config())]

    #[test]
    fn model_real_fs(write_buffer_size in 4096usize..65536, direct in any::<bool>(), ops in ops()) {
        // The real file system with O_DIRECT: the kernel checks the alignment.
        let profile = if direct { DIRECT_PROFILE } else { 0 };
        run(Config { backend: Backend::Real, write_buffer_size, profile }, &ops);
    }
}

/// Shrunk failures of the model test, kept as named cases (plus a few hand-written ones that
/// pin down classic LSM bugs).
mod regressions {
    use super::*;

    fn k(s: &str) -> Bytes {
        b(s.as_bytes())
    }
    fn put(key: &str, v: &str) -> Op {
        Op::Write(WriteOp::Put(k(key), k(v)), false)
    }
    fn both(ops: &[Op]) {
        for profile in 0..PROFILES.len() {
            run(Config { backend: Backend::Sim, write_buffer_size: 4096, profile }, ops);
        }
        for profile in [0, DIRECT_PROFILE] {
            run(Config { backend: Backend::Real, write_buffer_size: 4096, profile }, ops);
        }
    }

    #[test]
    fn range_tombstone_hides_flushed_keys_across_compaction_and_reopen() {
        both(&[
            put("a", "1"),
            put("b", "2"),
            put("c", "3"),
            Op::Flush,
            Op::Write(WriteOp::DeleteRange(k("a"), k("c")), false),
            Op::Get(k("a")),
            Op::Get(k("b")),
            Op::Get(k("c")),
            Op::Flush,
            Op::Compact(None, None),
            Op::Reopen,
            Op::Get(k("b")),
            put("b", "4"),
            Op::Get(k("b")),
        ]);
    }

    #[test]
    fn snapshot_keeps_old_versions_through_compaction() {
        both(&[
            put("a", "1"),
            Op::TakeSnapshot,
            put("a", "2"),
            Op::Write(WriteOp::Delete(k("a")), false),
            Op::Flush,
            Op::Bulk { seed: 7, count: 200, value_len: 100 },
            Op::Compact(None, None),
            Op::GetAt(0, k("a")),
            Op::Iter { snap: Some(0), lower: None, upper: None, pulls: vec![false, true] },
            Op::RawWalk {
                snap: Some(0),
                lower: None,
                upper: None,
                start: Start::Last,
                steps: vec![false, true, true],
            },
        ]);
    }

    #[test]
    fn bounded_reverse_iteration_over_memtable_and_tables() {
        both(&[
            Op::Bulk { seed: 3, count: 120, value_len: 64 },
            put("b", "mem"),
            Op::Write(WriteOp::Delete(k("bb")), false),
            Op::Iter {
                snap: None,
                lower: Some(k("b")),
                upper: Some(k("c")),
                pulls: vec![false; 5],
            },
            Op::RawWalk {
                snap: None,
                lower: Some(k("b")),
                upper: Some(k("c")),
                start: Start::SeekForPrev(k("d")),
                steps: vec![false, false, true, false],
            },
            Op::RawWalk {
                snap: None,
                lower: Some(k("b")),
                upper: Some(k("c")),
                start: Start::Seek(k("a")),
                steps: vec![true, true, false],
            },
        ]);
    }

    #[test]
    fn power_loss_keeps_synced_writes_and_a_prefix_of_the_rest() {
        both(&[
            Op::Write(WriteOp::Put(k("a"), k("synced")), true),
            put("b", "unsynced"),
            Op::Write(WriteOp::DeleteRange(k("a"), k("c")), false),
            Op::PowerLoss(None),
            Op::Get(k("a")),
            Op::Get(k("b")),
            Op::Bulk { seed: 11, count: 100, value_len: 120 },
            Op::Flush,
            put("c", "after flush"),
            Op::PowerLoss(Some(5)),
            Op::Iter { snap: None, lower: None, upper: None, pulls: vec![false, true] },
        ]);
    }

    /// Shrunk from `model_sim_fs`: an empty synced batch does not make earlier writes durable.
    #[test]
    fn empty_sync_batch_after_unsynced_put_then_power_loss() {
        both(&[
            Op::Write(WriteOp::Put(b(b"a"), b(b"")), false),
            Op::Batch(vec![], true),
            Op::PowerLoss(None),
        ]);
    }

    #[test]
    fn empty_key_and_empty_values() {
        both(&[
            Op::Write(WriteOp::Put(b(b""), b(b"")), false),
            put("a", ""),
            Op::Get(Bytes::default()),
            Op::Flush,
            Op::Get(Bytes::default()),
            Op::Write(WriteOp::DeleteRange(Bytes::default(), k("a")), true),
            Op::Get(Bytes::default()),
            Op::Get(k("a")),
            Op::ProcessCrash,
            Op::MultiGet(vec![Bytes::default(), k("a"), k("b")]),
        ]);
    }
}
