//! A compaction that fails part-way (an IO error injected through the `Fs` trait) leaves no
//! half-installed output: the old files stay live, partial outputs are deleted, the error is
//! reported, reads go on, and a reopened database compacts normally. Run with and without
//! subcompactions (several threads writing outputs when the fault hits).

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use talus::fs::fault::{OpKind, SimFs};
use talus::{Db, Options};

fn options(fs: &Arc<SimFs>, subcompactions: usize) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 32 << 10,
        target_file_size_base: 16 << 10,
        disable_auto_compactions: true,
        max_subcompactions: subcompactions,
        fs: fs.clone(),
        ..Default::default()
    }
}

fn ssts(fs: &SimFs) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        fs.files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "sst")).collect();
    v.sort();
    v
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter(&Default::default()).map(|r| r.unwrap()).collect()
}

#[test]
fn failed_compaction_installs_nothing_and_deletes_partial_outputs() {
    for subcompactions in [1, 4] {
        for nth_write in [1, 3, 8, 20] {
            let fs = SimFs::new();
            let path = PathBuf::from("/db");
            let db = Db::open(&path, options(&fs, subcompactions)).unwrap();
            let mut model = BTreeMap::new();
            for round in 0..4u32 {
                for i in 0..600u32 {
                    let k = format!("key{:05}", (i * 7919 + round) % 3000).into_bytes();
                    let v = format!("value-{round}-{i}-{}", "x".repeat(40)).into_bytes();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
                db.flush().unwrap();
            }
            let before = ssts(&fs);
            fs.fail_after(OpKind::Write, nth_write, ErrorKind::Other, true);
            let err = db.compact_range(None, None);
            let case = format!("subcompactions {subcompactions}, write #{nth_write}");
            assert!(err.is_err(), "{case}: the compaction should fail");
            fs.clear_faults();
            assert_eq!(ssts(&fs), before, "{case}: partial outputs left behind");
            assert_eq!(contents(&db), model, "{case}: reads after the failure");
            assert!(db.property("talus.background-errors").unwrap() == "1", "{case}");
            drop(db);
            let db = Db::open(&path, options(&fs, subcompactions)).unwrap();
            assert_eq!(contents(&db), model, "{case}: after reopen");
            db.compact_range(None, None).unwrap();
            assert_eq!(contents(&db), model, "{case}: after a good compaction");
            assert!(ssts(&fs).iter().all(|p| !before.contains(p)), "{case}: inputs not deleted");
        }
    }
}

/// Sequence numbers of every point entry in every SST of `fs`, by user key.
fn sst_seqs(fs: &Arc<SimFs>) -> BTreeMap<Vec<u8>, Vec<u64>> {
    use talus::fs::Fs;
    let mut out: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
    for p in ssts(fs) {
        let file = fs.open_random(&p).unwrap();
        let t = Arc::new(
            talus::sst::TableReader::open(file, 1, p.display().to_string(), None).unwrap(),
        );
        let mut it = t.iter(false);
        it.seek_to_first();
        while it.valid() {
            let k = talus::key::parse_internal_key(it.key()).unwrap();
            out.entry(k.user_key.to_vec()).or_default().push(k.seq);
            it.next();
        }
        it.status().unwrap();
    }
    out
}

/// At the bottommost level the newest version below every snapshot is written with sequence 0
/// (it compresses better and nothing older can exist beneath it); versions a snapshot still needs
/// keep theirs, and every read, at the snapshot and now, is unchanged.
#[test]
fn bottommost_compaction_zeroes_sequences_below_the_oldest_snapshot() {
    let fs = Arc::new(SimFs::new());
    let db = Db::open("/db", options(&fs, 1)).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}"), format!("v1-{i}")).unwrap();
    }
    let snap = db.snapshot();
    for i in (0..2000u32).step_by(3) {
        db.put(format!("k{i:05}"), format!("v2-{i}")).unwrap();
    }
    let before = contents(&db);
    db.compact_range(None, None).unwrap();
    assert_eq!(contents(&db), before);
    let at_snap = talus::ReadOptions { snapshot: Some(snap.clone()), ..Default::default() };
    for i in 0..2000u32 {
        let got = db.get_opt(format!("k{i:05}"), &at_snap).unwrap();
        assert_eq!(got, Some(format!("v1-{i}").into_bytes()), "k{i:05} at the snapshot");
    }
    let seqs = sst_seqs(&fs);
    assert_eq!(seqs.len(), 2000);
    for (k, s) in &seqs {
        let i: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
        if i.is_multiple_of(3) {
            // The snapshot's version (zeroed) and the newer one (kept).
            assert_eq!(s.len(), 2, "{k:?}");
            assert!(s[0] > 0 && s[1] == 0, "{k:?}: {s:?}");
        } else {
            assert_eq!(s, &vec![0], "{k:?}");
        }
    }
    drop(snap);
    drop(db);
    let db = Db::open("/db", options(&fs, 1)).unwrap();
    assert_eq!(contents(&db), before);
}

/// Regression (found by the interval-state work of issue 37): with
/// `level0_slowdown_writes_trigger=2`, `level0_stop_writes_trigger=3` and the default
/// compaction trigger of 4, writes stopped at 3 L0 files and no L0 compaction was ever picked:
/// the writer hung for good. RocksDB raises both triggers to the compaction trigger
/// (`SanitizeOptions`); so does `Db::open` now, and says so in the LOG.
#[test]
fn stop_trigger_below_the_compaction_trigger_is_raised_instead_of_hanging() {
    let fs = SimFs::new();
    let opts = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        level0_slowdown_writes_trigger: 2,
        level0_stop_writes_trigger: 3,
        fs: fs.clone(),
        ..Default::default()
    };
    let db = Db::open("/db", opts).unwrap();
    assert_eq!(
        (db.options().level0_slowdown_writes_trigger, db.options().level0_stop_writes_trigger),
        (4, 4)
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let writer = db.clone();
    std::thread::spawn(move || {
        for i in 0..20_000u32 {
            writer.put(i.to_be_bytes(), [7u8; 100]).unwrap();
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60)).expect("writes stopped for good");
    let log =
        String::from_utf8(talus::fs::read_all(&*fs, std::path::Path::new("/db/LOG")).unwrap())
            .unwrap();
    assert!(log.contains("raised to 4, as RocksDB does"), "{log}");
}
