//! Memtable switches sync the old WAL lazily (off the write path): the new WAL starts with a
//! record of what its predecessor held, recovery stops at a WAL whose predecessor lost its
//! unsynced tail, and the first synced write to a WAL syncs its unsynced predecessors first.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{tiny_options, SIM_DB};
use talus::fs::fault::{CrashMode, SimFs};
use talus::fs::{Fs, StdFs};
use talus::wal::{LogWriter, PredecessorWal};
use talus::{Db, Options, WalLossKind, WalRecoveryMode, WriteBatch, WriteOptions};

fn key(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

fn value(i: u32) -> Vec<u8> {
    // ~200 bytes: a 4 KiB write buffer switches every ~20 writes.
    let mut v = i.to_le_bytes().repeat(50);
    v.push(i as u8);
    v
}

fn options(fs: &Arc<SimFs>, mode: WalRecoveryMode) -> Options {
    Options {
        wal_recovery_mode: mode,
        max_write_buffer_number: 64,
        // Keep the immutable memtables (and so their WALs) around: no background flush races
        // the crash, so every run has many WALs to recover.
        level0_file_num_compaction_trigger: 1000,
        ..tiny_options(fs.clone(), 4096)
    }
}

/// The keys present after recovery must be `0..m` for some m: a prefix of the writes.
fn recovered_prefix(db: &Db, written: u32) -> Result<u32, String> {
    let mut m = 0;
    while m < written && db.get(key(m)).unwrap().is_some() {
        assert_eq!(db.get(key(m)).unwrap(), Some(value(m)));
        m += 1;
    }
    match (m..written).find(|&i| db.get(key(i)).unwrap().is_some()) {
        Some(i) => Err(format!("keys 0..{m} recovered, then {m} missing but {i} present: a hole")),
        None => Ok(m),
    }
}

/// Power loss with many WALs live (no flush races the crash here: the immutable memtables
/// stay in memory, see `options`): whatever survives is a prefix.
#[test]
fn power_loss_across_lazily_synced_switches_recovers_a_prefix() {
    for seed in 0..40u64 {
        let fs = SimFs::new();
        let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::PointInTimeRecovery)).unwrap();
        let n = 400;
        for i in 0..n {
            db.put(key(i), value(i)).unwrap();
        }
        let after = fs.crash(CrashMode::DropRandomUnsynced { seed });
        drop(db);
        let db = Db::open(SIM_DB, options(&after, WalRecoveryMode::PointInTimeRecovery))
            .unwrap_or_else(|e| panic!("seed {seed}: reopen failed: {e}"));
        if let Err(e) = recovered_prefix(&db, n) {
            panic!("seed {seed}: {e}\nrecovery report:\n{}", db.recovery_report());
        }
    }
}

/// Two WALs as a switch leaves them: `w` holds puts of keys 0..10 at sequences 1..=10; `w + 1`
/// starts with a predecessor record saying so and holds keys 10..20. `cut` drops `w`'s last
/// `cut` batches (at a record boundary: what a power loss leaves of an unsynced tail).
fn craft_wals(dir: &Path, w: u64, cut: usize) {
    let create = |n: u64| {
        let f = StdFs.create(&dir.join(format!("{n:06}.log"))).unwrap();
        LogWriter::new(f)
    };
    let mut first = create(w);
    let mut sizes = Vec::new();
    for i in 0..10u32 {
        let mut b = WriteBatch::new();
        b.put(key(i), value(i));
        b.set_sequence(u64::from(i) + 1);
        first.add_record(b.data()).unwrap();
        first.flush().unwrap();
        sizes.push(first.file_size());
    }
    let full = first.file_size();
    drop(first);
    let mut second = create(w + 1);
    second.add_predecessor(&PredecessorWal { number: w, size: full, last_seq: 10 }).unwrap();
    for i in 10..20u32 {
        let mut b = WriteBatch::new();
        b.put(key(i), value(i));
        b.set_sequence(u64::from(i) + 1);
        second.add_record(b.data()).unwrap();
    }
    second.flush().unwrap();
    if cut > 0 {
        let keep = sizes[9 - cut];
        let f = std::fs::OpenOptions::new().write(true).open(dir.join(format!("{w:06}.log")));
        f.unwrap().set_len(keep).unwrap();
    }
}

/// A database whose MANIFEST's log number is `w` and whose WALs are crafted by `craft_wals`.
fn crafted(cut: usize, remove_first: bool) -> (tempfile::TempDir, Options) {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Default::default() };
    drop(Db::open(tmp.path(), opts.clone()).unwrap());
    let wals: Vec<u64> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".log")?.parse().ok())
        .collect();
    assert_eq!(wals.len(), 1, "a new database has one WAL: {wals:?}");
    let w = wals[0];
    std::fs::remove_file(tmp.path().join(format!("{w:06}.log"))).unwrap();
    craft_wals(tmp.path(), w, cut);
    if remove_first {
        std::fs::remove_file(tmp.path().join(format!("{w:06}.log"))).unwrap();
    }
    (tmp, opts)
}

#[test]
fn intact_predecessor_replays_both_wals() {
    let (tmp, opts) = crafted(0, false);
    let db = Db::open(tmp.path(), opts).unwrap();
    assert!(db.recovery_report().is_empty(), "{}", db.recovery_report());
    assert_eq!(recovered_prefix(&db, 20), Ok(20));
}

#[test]
fn a_cut_predecessor_stops_point_in_time_recovery_before_its_successor() {
    let (tmp, opts) = crafted(3, false);
    let db = Db::open(tmp.path(), opts).unwrap();
    // Keys 0..7 survive in the cut WAL; the successor's keys 10..20 would follow a hole.
    assert_eq!(recovered_prefix(&db, 20), Ok(7));
    let report = db.recovery_report();
    assert_eq!(report.wals.len(), 1, "{report}");
    let l = &report.wals[0];
    assert_eq!(l.kind, WalLossKind::PredecessorCut);
    assert_eq!((l.batches, l.operations), (10, 10), "{report}");
    assert!(l.reason.contains("replayed to sequence 7, but held up to 10"), "{report}");
    let kept = l.kept_as.clone().expect("the successor is kept");
    assert!(tmp.path().join(kept).exists());
}

#[test]
fn a_missing_predecessor_stops_recovery() {
    let (tmp, opts) = crafted(0, true);
    let db = Db::open(tmp.path(), opts).unwrap();
    assert_eq!(recovered_prefix(&db, 20), Ok(0));
    let report = db.recovery_report();
    assert!(report.wals[0].reason.contains("is missing"), "{report}");
}

#[test]
fn strict_modes_refuse_a_cut_predecessor_and_skip_mode_replays_on() {
    for mode in
        [WalRecoveryMode::AbsoluteConsistency, WalRecoveryMode::TolerateCorruptedTailRecords]
    {
        let (tmp, opts) = crafted(3, false);
        match Db::open(tmp.path(), Options { wal_recovery_mode: mode, ..opts }) {
            Err(talus::Error::Corruption { .. }) => {}
            other => panic!("{mode:?}: {:?}", other.map(|_| "opened")),
        }
    }
    let (tmp, opts) = crafted(3, false);
    let mode = WalRecoveryMode::SkipAnyCorruptedRecords;
    let db = Db::open(tmp.path(), Options { wal_recovery_mode: mode, ..opts }).unwrap();
    for i in (0..7).chain(10..20) {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
    }
}

#[test]
fn a_synced_write_syncs_the_wals_a_switch_left_unsynced() {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::PointInTimeRecovery)).unwrap();
    let n = 300;
    for i in 0..n {
        db.put(key(i), value(i)).unwrap();
    }
    let mut b = talus::WriteBatch::new();
    b.put(key(n), value(n));
    db.write(b, &WriteOptions { sync: true, ..Default::default() }).unwrap();
    let after = fs.crash(CrashMode::DropAllUnsynced);
    drop(db);
    let db = Db::open(SIM_DB, options(&after, WalRecoveryMode::PointInTimeRecovery)).unwrap();
    // Everything before the synced write survives with it.
    assert_eq!(recovered_prefix(&db, n + 1), Ok(n + 1), "{}", db.recovery_report());
}

#[test]
fn strict_modes_sync_the_old_wal_at_the_switch() {
    // With AbsoluteConsistency a cut predecessor would fail the open, so the switch syncs the
    // old WAL itself: a power loss loses at most the last WAL's tail, and the open succeeds.
    for seed in 0..10u64 {
        let fs = SimFs::new();
        let db =
            Db::open(SIM_DB, options(&fs, WalRecoveryMode::TolerateCorruptedTailRecords)).unwrap();
        for i in 0..200 {
            db.put(key(i), value(i)).unwrap();
        }
        let after = fs.crash(CrashMode::DropRandomUnsynced { seed });
        drop(db);
        let db = Db::open(SIM_DB, options(&after, WalRecoveryMode::TolerateCorruptedTailRecords))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let m = recovered_prefix(&db, 200).unwrap();
        // Only the last WAL (its ~20 writes) can lose data.
        assert!(m >= 160, "seed {seed}: only {m} of 200 recovered");
    }
}

/// The next WAL is made ahead (by `Db::open`, then by the flush thread after each switch, before
/// the flush): a switch takes it, so the writes after the switch go to it; WAL numbers rise
/// with each switch; closing removes the one never used.
#[test]
fn the_next_wal_is_made_ahead_and_taken_by_the_switch() {
    let fs = SimFs::new();
    let opts = Options { write_buffer_size: 1 << 20, ..options(&fs, Default::default()) };
    let wals = |fs: &SimFs| -> Vec<(u64, usize)> {
        let mut v: Vec<(u64, usize)> = fs
            .files()
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.strip_suffix(".log")?.parse().ok()?;
                Some((name, fs.contents(&p).map_or(0, |c| c.len())))
            })
            .collect();
        v.sort();
        v
    };
    let db = Db::open(SIM_DB, opts).unwrap();
    db.put(b"a", b"1").unwrap();
    let open = wals(&fs);
    assert_eq!(open.len(), 2, "the active WAL and the one made ahead: {open:?}");
    let (active, mut ahead) = (open[0], open[1]);
    assert!(active.1 > 0 && ahead.1 == 0, "{open:?}");
    for round in 0..3 {
        db.flush().unwrap();
        db.put(b"b", b"2").unwrap();
        let now = wals(&fs);
        // The flushed memtable's WAL is gone; the one made ahead took the write; the flush
        // thread made the next one before flushing.
        assert_eq!(now.len(), 2, "round {round}: {now:?}");
        assert_eq!(now[0].0, ahead.0, "round {round}: {now:?}");
        assert!(now[0].1 > 0 && now[1].1 == 0 && now[1].0 > now[0].0, "round {round}: {now:?}");
        ahead = now[1];
    }
    let before_close = wals(&fs);
    db.close().unwrap();
    assert_eq!(wals(&fs), before_close[..1], "the unused WAL is removed at close");
}
