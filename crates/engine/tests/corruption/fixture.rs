//! The fixture database of the corruption tests: its keys and values, the options its damaged
//! copies are opened with, and what it must hold (the state after each WAL batch, every value
//! ever written per key).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{Db, Options, WalRecoveryMode};

use crate::common::corrupt::{copy_dir, sst_layout, Region};
use crate::common::{write_ops, Model, WriteOp};

const NUM_KEYS: usize = 700;

pub(crate) fn key(i: usize) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// A value that names its key and version, padded with (compressible) filler.
pub(crate) fn value(i: usize, version: usize, len: usize) -> Vec<u8> {
    let mut v = format!("k{i:04}=v{version}:").into_bytes();
    v.extend((0..len).map(|j| b'a' + ((i + j / 7) % 26) as u8));
    v
}

/// Every key the fixture can hold, and a few it never does.
pub(crate) fn universe() -> Vec<Vec<u8>> {
    let mut u: Vec<Vec<u8>> = (0..NUM_KEYS).map(key).collect();
    u.extend([b"".to_vec(), b"a".to_vec(), b"k".to_vec(), b"k0500x".to_vec(), b"z".to_vec()]);
    u
}

/// The options every damaged copy is opened with: direct reads, and (for the files written
/// after the bottom level) partitioned index and filters with small partitions.
pub(crate) fn options(mode: WalRecoveryMode) -> Options {
    Options {
        create_if_missing: false,
        write_buffer_size: 8 << 20,
        disable_auto_compactions: true,
        block_size: 256,
        target_file_size_base: 8 << 10,
        max_background_jobs: 1,
        wal_recovery_mode: mode,
        use_direct_reads: true,
        index_type: talus::IndexType::TwoLevelIndexSearch,
        partition_filters: true,
        metadata_block_size: 64,
        ..Default::default()
    }
}

/// The options the bottom level is written with: one index and one filter block per table
/// (format version 2), so the fixture holds both table layouts.
pub(crate) fn unpartitioned(mode: WalRecoveryMode) -> Options {
    Options {
        use_direct_reads: false,
        index_type: talus::IndexType::BinarySearch,
        partition_filters: false,
        ..options(mode)
    }
}

pub(crate) fn put(k: usize, v: Vec<u8>) -> WriteOp {
    WriteOp::Put(key(k).into(), v.into())
}

/// The pristine database and what it must hold.
pub(crate) struct Fixture {
    pub(crate) dir: tempfile::TempDir,
    /// State before the WAL's batches (index 0) and after each of them.
    pub(crate) wal_states: Vec<Model>,
    /// File names.
    pub(crate) wal: String,
    pub(crate) manifest: String,
    /// Live SSTs: name and regions.
    pub(crate) ssts: Vec<(String, Vec<Region>)>,
    /// Every value ever written, per key (to tell a stale value from a wrong one).
    pub(crate) history: HashMap<Vec<u8>, HashSet<Vec<u8>>>,
}

impl Fixture {
    pub(crate) fn final_state(&self) -> &Model {
        self.wal_states.last().expect("states")
    }
}

pub(crate) fn apply_all(db: &Db, m: &mut Model, ops: &[WriteOp]) {
    write_ops(db, ops, false).expect("write");
    for op in ops {
        op.apply(m);
    }
}

/// The numbers of the SSTs the MANIFEST in `dir` names (read from a throwaway copy).
fn live_ssts(dir: &Path) -> HashSet<u64> {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(dir, tmp.path());
    let fs: std::sync::Arc<dyn talus::fs::Fs> = std::sync::Arc::new(talus::fs::StdFs);
    let vs = talus::version::VersionSet::recover(tmp.path(), fs, 7).expect("recover");
    let v = vs.current();
    (0..v.num_levels()).flat_map(|l| v.level_files(l).iter().map(|f| f.number)).collect()
}

pub(crate) fn build_fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(
        dir.path(),
        Options { create_if_missing: true, ..unpartitioned(Default::default()) },
    )
    .expect("open");
    let mut m = Model::new();
    let mut rng = StdRng::seed_from_u64(0xC0FFEE);
    // Bottom level: two flushes compacted together (range tombstone and deletions included).
    for chunk in (0..400).collect::<Vec<_>>().chunks(20) {
        let ops: Vec<_> = chunk.iter().map(|&i| put(i, value(i, 1, 20 + i % 40))).collect();
        apply_all(&db, &mut m, &ops);
    }
    db.flush().expect("flush");
    for i in 200..600 {
        apply_all(&db, &mut m, &[put(i, value(i, 2, 10 + i % 50))]);
    }
    apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(100).into(), key(150).into())]);
    for i in (0..100).step_by(7) {
        apply_all(&db, &mut m, &[WriteOp::Delete(key(i).into())]);
    }
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    // L0, partitioned: two more files, one with a range tombstone over bottom-level data.
    drop(db);
    let db = Db::open(dir.path(), options(Default::default())).expect("reopen partitioned");
    for i in (300..500).step_by(2) {
        apply_all(&db, &mut m, &[put(i, value(i, 3, 30))]);
    }
    for i in (500..600).filter(|i| i % 11 == 0) {
        apply_all(&db, &mut m, &[WriteOp::Delete(key(i).into())]);
    }
    db.flush().expect("flush");
    apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(450).into(), key(470).into())]);
    for i in 50..80 {
        apply_all(&db, &mut m, &[put(i, value(i, 4, 5))]);
    }
    db.flush().expect("flush");
    assert!(db.property("talus.num-files-at-level0").expect("prop").parse::<usize>().unwrap() >= 2);
    // The WAL: batches of puts, deletes and a few range deletions, some values large enough
    // for records to span the 32 KiB WAL blocks.
    let mut wal_states = vec![m.clone()];
    for b in 0..60usize {
        let mut ops = Vec::new();
        for _ in 0..rng.gen_range(1..6) {
            let i = rng.gen_range(0..NUM_KEYS);
            ops.push(match rng.gen_range(0..10) {
                0..=6 => {
                    let len = if rng.gen_bool(0.1) { rng.gen_range(2000..9000) } else { 40 };
                    put(i, value(i, 10 + b, len))
                }
                7 | 8 => WriteOp::Delete(key(i).into()),
                _ => WriteOp::DeleteRange(key(i).into(), key(i + 5).into()),
            });
        }
        apply_all(&db, &mut m, &ops);
        wal_states.push(m.clone());
    }
    drop(db);
    let mut history: HashMap<Vec<u8>, HashSet<Vec<u8>>> = HashMap::new();
    for state in &wal_states {
        for (k, v) in state {
            history.entry(k.clone()).or_default().insert(v.clone());
        }
    }
    for i in 0..NUM_KEYS {
        for ver in [1, 2, 3, 4] {
            for len in 0..80 {
                history.entry(key(i)).or_default().insert(value(i, ver, len));
            }
        }
    }

    let live = live_ssts(dir.path());
    let mut wal = None;
    let mut manifest = None;
    let mut ssts = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let path = dir.path().join(&name);
        let len = std::fs::metadata(&path).expect("metadata").len();
        if name.ends_with(".log") && len > 0 {
            assert!(wal.is_none(), "one non-empty WAL expected");
            wal = Some(name);
        } else if name.starts_with("MANIFEST-") {
            manifest = Some(name);
        } else if name.ends_with(".sst")
            && live.contains(&name.trim_end_matches(".sst").parse().expect("number"))
        {
            let bytes = std::fs::read(&path).expect("read sst");
            let layout = sst_layout(&bytes, &name);
            ssts.push((name, layout));
        }
    }
    let fx = Fixture {
        dir,
        wal_states,
        wal: wal.expect("a WAL"),
        manifest: manifest.expect("a MANIFEST"),
        ssts,
        history,
    };
    // The pristine copy reads back exactly.
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(fx.dir.path(), tmp.path());
    let db = Db::open(tmp.path(), options(Default::default())).expect("open pristine");
    let got = read_all_gets(&db).expect("pristine reads");
    assert!(&got == fx.final_state(), "pristine fixture differs from the model");
    fx
}

pub(crate) fn read_all_gets(db: &Db) -> talus::Result<Model> {
    let mut m = Model::new();
    for k in universe() {
        if let Some(v) = db.get(&k)? {
            m.insert(k, v);
        }
    }
    Ok(m)
}
