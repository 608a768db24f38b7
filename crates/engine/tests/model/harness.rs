//! The model test's harness: the database under test beside its [`Oracle`], with snapshots,
//! reopens, crashes and power losses; [`run`] executes one case, checking every read against
//! the oracle. The database runs with a merge operator (string append, with or without partial
//! merges) and the oracle's deterministic compaction filter, so background compactions may
//! filter values at any moment: a check that reads the database more than once reads its
//! scans through one iterator (one SuperVersion) and accepts each point read on its own.

use std::path::PathBuf;
use std::sync::Arc;

use talus::fs::fault::{CrashMode, SimFs};
use talus::fs::Fs;
use talus::{Db, Options, ReadOptions, Snapshot};

use crate::common::{
    all_keys, string_append, tiny_options, write_ops, Bytes, Model, WriteOp, ALPHABET, SIM_DB,
};
use crate::config::{apply_profile, Backend, Config};
use crate::op::{Op, Start};
use crate::oracle::{ModelFilter, Oracle};
use crate::txn::Txns;

/// A key and its value.
type Kv = (Vec<u8>, Vec<u8>);

/// Live snapshots kept at most; taking one more releases the oldest.
const MAX_SNAPSHOTS: usize = 4;

/// The database under test with its oracle.
struct Harness {
    cfg: Config,
    sim: Option<Arc<SimFs>>,
    _tmp: Option<tempfile::TempDir>,
    path: PathBuf,
    db: Option<Db>,
    model: Oracle,
    snaps: Vec<(Snapshot, Oracle)>,
    /// The state as of the last sync write or flush: it survives a power loss.
    durable: Oracle,
    /// Write groups acknowledged since then (each atomic): a power loss keeps a prefix.
    since: Vec<Vec<WriteOp>>,
    /// The open transactions and their oracle.
    txns: Txns,
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
            model: Oracle::default(),
            snaps: vec![],
            durable: Oracle::default(),
            since: vec![],
            txns: Txns::default(),
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
        // Half the cases with partial merges, half without.
        o.merge_operator = Some(string_append(self.cfg.write_buffer_size.is_multiple_of(2)));
        o.compaction_filter = Some(Arc::new(ModelFilter));
        o
    }

    fn open(&mut self) {
        let db = Db::open(&self.path, self.options()).unwrap_or_else(|e| panic!("open: {e}"));
        self.txns.attach(&db);
        self.db = Some(db);
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("database is open")
    }

    fn close(&mut self) {
        self.txns.detach();
        self.snaps.clear();
        self.db = None;
    }

    /// Records an acknowledged atomic write group in the oracle.
    fn acked(&mut self, ops: &[WriteOp], sync: bool) {
        ops.iter().for_each(|w| self.model.apply(w));
        self.txns.record_write(ops);
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
        let got = read_scans(self.db()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let mut m = self.durable.clone();
        let mut ok = m.check_scan(&got, None, None);
        let first_err = ok.clone().err();
        for g in &self.since {
            if ok.is_ok() {
                break;
            }
            g.iter().for_each(|w| m.apply(w));
            ok = m.check_scan(&got, None, None);
        }
        assert!(
            ok.is_ok(),
            "{ctx}: recovered state is no prefix of the {} writes after the last sync; \
             against the durable state: {first_err:?}",
            self.since.len(),
        );
        check_gets(self.db(), &m, ctx);
        self.model = Oracle::from_model(&got.into_iter().collect::<Model>());
        self.made_durable();
    }

    /// Checks the whole database against the oracle: scans both ways through one iterator,
    /// and a point read of every key of the key space.
    fn check_db(&self, ctx: &str) {
        let got = read_scans(self.db()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        self.model.check_scan(&got, None, None).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        check_gets(self.db(), &self.model, ctx);
    }

    /// The read options and oracle for snapshot choice `snap`.
    fn view(&self, snap: Option<usize>) -> (ReadOptions, &Oracle) {
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
                self.model.check_get(k, got.as_deref(), &ctx);
                let pinned = self.db().get_pinned(k).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                self.model.check_get(k, pinned.as_deref(), &format!("{ctx}: get_pinned"));
            }
            Op::MultiGet(keys) => {
                let got = self.db().multi_get(keys, &ReadOptions::default());
                assert_eq!(got.len(), keys.len(), "{ctx}");
                for (k, r) in keys.iter().zip(got) {
                    let v = r.unwrap_or_else(|e| panic!("{ctx} key {k:?}: {e}"));
                    self.model.check_get(k, v.as_deref(), &format!("{ctx} key {k:?}"));
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
                m.check_get(k, got.as_deref(), &ctx);
                let pinned =
                    self.db().get_pinned_opt(k, &ro).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                m.check_get(k, pinned.as_deref(), &format!("{ctx}: get_pinned_opt"));
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
                self.check_db(&format!("{ctx}: after reopen"));
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
            Op::Txn(t) => {
                // Transactions check exact reads: they run while the oracle knows every key
                // exactly (no value a compaction filter may still change), else the op is
                // skipped.
                if let Some(model) = self.model.exact() {
                    if let Some((ops, sync)) = self.txns.step(t, &model, &ctx) {
                        self.acked(&ops, sync);
                    }
                }
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
                self.check_db(&format!("{ctx}: after process crash"));
            }
        }
    }

    /// Pulls from both ends of `Db::iter` (and then of `Db::range_opt`), then drains it: what
    /// came out, front pulls then the rest then the back pulls reversed, must be one reading of
    /// the range the oracle allows, and nothing may come out after an end was reached.
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
        let check = |what: &str, pulled: Vec<(bool, Option<Kv>)>, rest: Vec<Kv>| {
            let (mut front, mut back) = (Vec::new(), Vec::new());
            let mut ended = false;
            for (n, (is_front, item)) in pulled.into_iter().enumerate() {
                match item {
                    Some(kv) => {
                        assert!(!ended, "{ctx}: {what} pull {n} returned an item after the end");
                        if is_front {
                            front.push(kv)
                        } else {
                            back.push(kv)
                        }
                    }
                    None => ended = true,
                }
            }
            assert!(!ended || rest.is_empty(), "{ctx}: {what} drained items after the end");
            front.extend(rest);
            front.extend(back.into_iter().rev());
            m.check_scan(&front, opt(lower), opt(upper))
                .unwrap_or_else(|e| panic!("{ctx}: {what} (front pulls, rest, back pulls): {e}"));
        };
        let mut it = self.db().iter(&ro);
        let mut pulled = Vec::new();
        for (n, &front) in pulls.iter().enumerate() {
            let got = if front { it.next() } else { it.next_back() };
            pulled.push((front, got.map(|r| r.unwrap_or_else(|e| panic!("{ctx} pull {n}: {e}")))));
        }
        let rest: Vec<_> = it.map(|r| r.unwrap_or_else(|e| panic!("{ctx} drain: {e}"))).collect();
        check("iter", pulled, rest);
        {
            // The same pulls through `Db::range_opt` (bounds as a KeyRange, items as KeyValue),
            // at the same snapshot.
            use std::ops::Bound;
            let lo = opt(lower).map_or(Bound::Unbounded, Bound::Included);
            let hi = opt(upper).map_or(Bound::Unbounded, Bound::Excluded);
            let mut it = self.db().range_opt((lo, hi), &ro);
            let kv = |r: talus::Result<talus::KeyValue>| {
                let kv = r.unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                (kv.key().to_vec(), kv.value().to_vec())
            };
            let mut pulled = Vec::new();
            for &front in pulls {
                let got = if front { it.next() } else { it.next_back() };
                pulled.push((front, got.map(kv)));
            }
            let rest: Vec<_> = it.map(kv).collect();
            check("range", pulled, rest);
        }
    }

    /// Walks a raw iterator: its own forward scan of the range (one SuperVersion, so one
    /// reading) must be allowed by the oracle, and the walk must agree with that scan.
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
        let mut it = self.db().raw_iter(&ro);
        let mut want = Vec::new();
        it.seek_to_first();
        while it.valid() {
            want.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap_or_else(|e| panic!("{ctx}: scan status: {e}"));
        m.check_scan(&want, opt(lower), opt(upper)).unwrap_or_else(|e| panic!("{ctx}: {e}"));
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

/// The database's contents, scanned forward and backward through one raw iterator (one
/// SuperVersion: a compaction filtering meanwhile changes neither); the scans must agree.
fn read_scans(db: &Db) -> Result<Vec<Kv>, String> {
    let mut it = db.raw_iter(&ReadOptions::default());
    let mut fwd = Vec::new();
    it.seek_to_first();
    while it.valid() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().map_err(|e| format!("forward scan failed: {e}"))?;
    let mut rev = Vec::new();
    it.seek_to_last();
    while it.valid() {
        rev.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().map_err(|e| format!("backward scan failed: {e}"))?;
    rev.reverse();
    if fwd != rev {
        return Err(format!("forward scan {fwd:?} != reversed backward scan {rev:?}"));
    }
    Ok(fwd)
}

/// A point read (copying and pinned) of every key of the key space, each allowed by `m`.
fn check_gets(db: &Db, m: &Oracle, ctx: &str) {
    for k in all_keys() {
        let got = db.get(&k).unwrap_or_else(|e| panic!("{ctx}: get {k:?}: {e}"));
        m.check_get(&k, got.as_deref(), &format!("{ctx}: get"));
        let pinned = db.get_pinned(&k).unwrap_or_else(|e| panic!("{ctx}: get_pinned {k:?}: {e}"));
        m.check_get(&k, pinned.as_deref(), &format!("{ctx}: get_pinned"));
    }
}

fn opt(x: &Option<Bytes>) -> Option<&[u8]> {
    x.as_ref().map(|b| &b.0[..])
}

/// Runs one case; panics (with the failing op) on the first disagreement with the oracle.
pub(crate) fn run(cfg: Config, ops: &[Op]) {
    let mut h = Harness::new(cfg);
    for (i, op) in ops.iter().enumerate() {
        h.step(i, op);
    }
    h.check_db("at the end");
    h.close();
    h.open();
    h.check_db("after the final reopen");
}
