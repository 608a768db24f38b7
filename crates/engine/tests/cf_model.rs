//! Model test of column families: random writes (single, and atomic batches across families),
//! reads, scans, flushes, per-family compactions, drops and re-creations, reopens, process
//! crashes and power losses on `SimFs`, checked against one `BTreeMap` per family. Tiny write
//! buffers, so memtable switches, flushes of one family beside the others' unflushed writes,
//! and compactions happen; a power loss must keep every synced write and a prefix of the rest
//! (across families: one WAL). Each case runs with `atomic_flush` on or off (off: only a full
//! family switches, others' memtables span WALs, and a small `max_total_wal_size` makes the
//! families holding the oldest WAL switch). `PROPTEST_CASES` sets the case count.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use talus::fs::fault::{CrashMode, SimFs};
use talus::{ColumnFamilyDescriptor, Db, Options, ReadOptions, WriteBatch, WriteOptions};

const FAMILIES: [&str; 3] = ["default", "one", "two"];

/// (family index, key) → value.
type Model = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

#[derive(Debug, Clone)]
enum W {
    Put(usize, Vec<u8>, Vec<u8>),
    Del(usize, Vec<u8>),
    DelRange(usize, Vec<u8>, Vec<u8>),
}

impl W {
    fn family(&self) -> usize {
        match self {
            W::Put(f, ..) | W::Del(f, _) | W::DelRange(f, ..) => *f,
        }
    }

    fn apply(&self, m: &mut Model) {
        match self {
            W::Put(f, k, v) => {
                m.insert((*f, k.clone()), v.clone());
            }
            W::Del(f, k) => {
                m.remove(&(*f, k.clone()));
            }
            W::DelRange(f, a, b) => m.retain(|(g, k), _| !(g == f && a <= k && k < b)),
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Write(Vec<W>, bool),
    Bulk(usize, u64, u16),
    Get(usize, Vec<u8>),
    Flush,
    FlushCf(usize),
    Compact(usize),
    DropRecreate(usize),
    Reopen,
    ProcessCrash,
    PowerLoss(Option<u64>),
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abcd".to_vec()), 1..4)
}

fn write() -> impl Strategy<Value = W> {
    prop_oneof![
        5 => (0..3usize, key(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(f, k, v)| W::Put(f, k, v)),
        2 => (0..3usize, key()).prop_map(|(f, k)| W::Del(f, k)),
        1 => (0..3usize, key(), key()).prop_map(|(f, a, b)| if a <= b { W::DelRange(f, a, b) } else { W::DelRange(f, b, a) }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (prop::collection::vec(write(), 1..5), any::<bool>()).prop_map(|(w, s)| Op::Write(w, s)),
        3 => (0..3usize, any::<u64>(), 50..400u16).prop_map(|(f, s, n)| Op::Bulk(f, s, n)),
        4 => (0..3usize, key()).prop_map(|(f, k)| Op::Get(f, k)),
        1 => Just(Op::Flush),
        1 => (0..3usize).prop_map(Op::FlushCf),
        1 => (0..3usize).prop_map(Op::Compact),
        1 => (1..3usize).prop_map(Op::DropRecreate),
        1 => Just(Op::Reopen),
        1 => Just(Op::ProcessCrash),
        1 => prop::option::of(any::<u64>()).prop_map(Op::PowerLoss),
    ]
}

struct Harness {
    sim: Arc<SimFs>,
    db: Option<Db>,
    wbs: usize,
    atomic: bool,
    max_wal: u64,
    model: Model,
    /// The state as of the last sync or flush, and the write groups acknowledged since.
    durable: Model,
    since: Vec<Vec<W>>,
}

impl Harness {
    fn options(&self) -> Options {
        Options {
            create_if_missing: true,
            create_missing_column_families: true,
            write_buffer_size: self.wbs,
            atomic_flush: self.atomic,
            max_total_wal_size: self.max_wal,
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 64 << 10,
            target_file_size_base: 16 << 10,
            block_size: 256,
            fs: self.sim.clone(),
            ..Default::default()
        }
    }

    fn open(&mut self) {
        let o = self.options();
        let descs = FAMILIES[1..].iter().map(|n| ColumnFamilyDescriptor::new(*n, o.clone()));
        self.db = Some(Db::open_cf("/db", o.clone(), descs).expect("open"));
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("open")
    }

    fn write(&mut self, ws: Vec<W>, sync: bool) {
        let db = self.db();
        let mut b = WriteBatch::new();
        for w in &ws {
            let cf = db.cf_handle(FAMILIES[w.family()]).expect("family");
            match w {
                W::Put(_, k, v) => b.put_cf(&cf, k, v),
                W::Del(_, k) => b.delete_cf(&cf, k),
                W::DelRange(_, a, c) => b.delete_range_cf(&cf, a, c),
            }
        }
        db.write(b, &WriteOptions { sync, ..Default::default() }).expect("write");
        ws.iter().for_each(|w| w.apply(&mut self.model));
        if sync {
            self.made_durable();
        } else {
            self.since.push(ws);
        }
    }

    fn made_durable(&mut self) {
        self.durable = self.model.clone();
        self.since.clear();
    }

    fn read_all(&self) -> Model {
        let db = self.db();
        let mut got = Model::new();
        for (i, name) in FAMILIES.iter().enumerate() {
            let cf = db.cf_handle(name).expect("family");
            for kv in db.iter_cf(&cf, &ReadOptions::default()).expect("iter") {
                let (k, v) = kv.expect("scan");
                got.insert((i, k), v);
            }
        }
        got
    }

    fn check(&self, ctx: &str) {
        let got = self.read_all();
        assert_eq!(got, self.model, "{ctx}");
    }

    fn reopen_after(&mut self, mode: Option<CrashMode>, ctx: &str) {
        if let Some(mode) = mode {
            let next = self.sim.crash(mode);
            self.db = None;
            self.sim = next;
        } else {
            self.db = None;
        }
        self.open();
        let got = self.read_all();
        let mut m = self.durable.clone();
        let mut ok = got == m;
        for g in &self.since {
            if ok {
                break;
            }
            g.iter().for_each(|w| w.apply(&mut m));
            ok = got == m;
        }
        assert!(ok, "{ctx}: recovered state is no prefix of the {} writes since the last sync:\n got {got:?}\n durable {:?}", self.since.len(), self.durable);
        self.model = got;
        self.made_durable();
    }

    fn step(&mut self, i: usize, op: &Op) {
        let ctx = format!("step {i}: {op:?}");
        match op {
            Op::Write(ws, sync) => self.write(ws.clone(), *sync),
            Op::Bulk(f, seed, n) => {
                let mut x = *seed | 1;
                let mut ws = Vec::new();
                for _ in 0..*n {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let k = format!("b{:03}", x % 500).into_bytes();
                    ws.push(W::Put(*f, k, vec![(x >> 8) as u8; 64]));
                }
                for w in ws {
                    self.write(vec![w], false);
                }
            }
            Op::Get(f, k) => {
                let cf = self.db().cf_handle(FAMILIES[*f]).expect("family");
                let got = self.db().get_cf(&cf, k).expect("get");
                assert_eq!(got.as_ref(), self.model.get(&(*f, k.clone())), "{ctx}");
            }
            Op::Flush => {
                self.db().flush().expect("flush");
                self.made_durable();
                self.check(&ctx);
            }
            // One family's flush (or compaction, which flushes it first) makes durable at
            // least what it flushed, and syncs the WALs when it flushes anything; with an
            // empty memtable it may do nothing, so the others' writes since the last sync stay
            // a prefix to be kept, not a certainty.
            Op::FlushCf(f) => {
                let cf = self.db().cf_handle(FAMILIES[*f]).expect("family");
                self.db().flush_cf(&cf).expect("flush_cf");
                self.check(&ctx);
            }
            Op::Compact(f) => {
                let cf = self.db().cf_handle(FAMILIES[*f]).expect("family");
                self.db().compact_range_cf(&cf, None, None).expect("compact");
                self.check(&ctx);
            }
            Op::DropRecreate(f) => {
                let db = self.db();
                let cf = db.cf_handle(FAMILIES[*f]).expect("family");
                db.drop_column_family(&cf).expect("drop");
                db.create_column_family(FAMILIES[*f], &self.options()).expect("create");
                // Gone for good, whatever happens next: from every state a crash may recover.
                self.model.retain(|(g, _), _| g != f);
                self.durable.retain(|(g, _), _| g != f);
                for g in self.since.iter_mut() {
                    g.retain(|w| w.family() != *f);
                }
                self.check(&ctx);
            }
            Op::Reopen => self.reopen_after(None, &ctx),
            Op::ProcessCrash => self.reopen_after(Some(CrashMode::KeepUnsynced), &ctx),
            Op::PowerLoss(seed) => {
                let mode = match seed {
                    Some(seed) => CrashMode::DropRandomUnsynced { seed: *seed },
                    None => CrashMode::DropAllUnsynced,
                };
                self.reopen_after(Some(mode), &ctx)
            }
        }
    }
}

fn run(wbs: usize, atomic: bool, max_wal: u64, ops: &[Op]) {
    let mut h = Harness {
        sim: SimFs::new(),
        db: None,
        wbs,
        atomic,
        max_wal,
        model: Model::new(),
        durable: Model::new(),
        since: Vec::new(),
    };
    h.open();
    for (i, op) in ops.iter().enumerate() {
        h.step(i, op);
    }
    h.check("end");
    h.reopen_after(None, "final reopen");
    assert_eq!(h.read_all(), h.model);
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn cf_model(
        wbs in 4096usize..32768,
        atomic in any::<bool>(),
        max_wal in prop_oneof![Just(0u64), 8192..65536u64],
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run(wbs, atomic, max_wal, &ops);
    }
}
