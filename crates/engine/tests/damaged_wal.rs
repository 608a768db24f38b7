//! A WAL damaged in the middle, under the default recovery mode (point in time): the database
//! opens at the last good record, as RocksDB's does, but nothing is silently lost:
//! - the report (`Db::recovery_report`, `talus.recovery-report`, the LOG) gives the exact
//!   bytes dropped and the intact write batches and operations among them;
//! - the damaged WAL, and every later WAL that was not replayed, is kept as
//!   `NNNNNN.log.corrupt`, byte for byte, and stays (it is not obsolete, and not replayed again);
//! - a crash between the rename and the new MANIFEST replays the renamed WAL the same way;
//! - a failure anywhere in the open's commit renames it back (the directory is as it was);
//! - `kAbsoluteConsistency` turns the same damage into an error that changes nothing.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::corrupt::wal_layout;
use common::{tiny_options, SIM_DB};
use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::Fs;
use talus::wal::{LogWriter, BLOCK_SIZE};
use talus::{Db, Error, Options, WalLossKind, WalRecoveryMode, WriteBatch};

const BATCHES: usize = 3000;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn options(fs: &Arc<SimFs>, mode: WalRecoveryMode) -> Options {
    Options {
        write_buffer_size: 64 << 20,
        wal_recovery_mode: mode,
        max_background_jobs: 1,
        ..tiny_options(fs.clone(), 64 << 20)
    }
}

fn wal_files(fs: &SimFs) -> Vec<PathBuf> {
    fs.files().into_iter().filter(|p| p.to_string_lossy().contains(".log")).collect()
}

/// A crashed database whose one WAL holds `BATCHES` one-put batches; returns the WAL's path.
fn fixture() -> (Arc<SimFs>, PathBuf) {
    let fs = SimFs::new();
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::default())).expect("open");
    for i in 0..BATCHES {
        db.put(key(i), format!("value {i}")).expect("put");
    }
    let fs = fs.crash(CrashMode::KeepUnsynced);
    drop(db);
    let wals: Vec<PathBuf> = wal_files(&fs)
        .into_iter()
        .filter(|p| fs.contents(p).is_some_and(|c| !c.is_empty()))
        .collect();
    assert_eq!(wals.len(), 1, "{wals:?}");
    (fs, wals[0].clone())
}

/// Damages the payload of record `r` of `wal` (one bit); returns the record's start offset and
/// the number of intact records the reader can still read after the damage (those starting at
/// or after the end of the damaged 32 KiB block: the reader drops the rest of that block).
fn damage(fs: &SimFs, wal: &Path, r: usize) -> (u64, u64) {
    let bytes = fs.contents(wal).expect("wal");
    let (records, _) = wal_layout(&bytes);
    assert_eq!(records.len(), BATCHES);
    let (start, end) = records[r];
    assert!(end - start > 20 && start / BLOCK_SIZE as u64 == (end - 1) / BLOCK_SIZE as u64);
    fs.flip_bit(wal, (start + 15) * 8 + 3).expect("flip");
    let block_end = (start / BLOCK_SIZE as u64 + 1) * BLOCK_SIZE as u64;
    (start, records.iter().filter(|(s, _)| *s >= block_end).count() as u64)
}

fn get_all(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter(&Default::default()).collect::<talus::Result<_>>().expect("scan")
}

/// Regression: the damaged WAL was deleted after a point-in-time recovery that dropped 5,000
/// acknowledged writes, the LOG line did not say how much was lost, and `talus.recovery-report`
/// named the offset only.
#[test]
fn point_in_time_recovery_keeps_the_damaged_wal_and_counts_the_loss() {
    let (fs, wal) = fixture();
    let r = 1000;
    let (offset, intact_after) = damage(&fs, &wal, r);
    let damaged = fs.contents(&wal).expect("wal");
    let wal_len = damaged.len() as u64;
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::PointInTimeRecovery)).expect("open");
    let got = get_all(&db);
    assert_eq!(got.len(), r, "every batch before the damaged one, none after");
    assert!(got.contains_key(&key(r - 1)) && !got.contains_key(&key(r)));

    let report = db.recovery_report();
    assert_eq!(report.wals.len(), 1, "{report}");
    let loss = &report.wals[0];
    let name = wal.file_name().expect("name").to_string_lossy().into_owned();
    assert_eq!(loss.kind, WalLossKind::Damaged);
    assert_eq!(loss.offset, offset, "{report}");
    assert_eq!(loss.bytes, wal_len - offset, "{report}");
    assert_eq!((loss.batches, loss.operations), (intact_after, intact_after), "{report}");
    assert!(intact_after > 1000, "the fixture drops {intact_after} intact batches");
    assert_eq!(loss.kept_as.as_deref(), Some(format!("{name}.corrupt").as_str()));
    let text = db.property("talus.recovery-report").expect("property");
    assert_eq!(text, report.to_string());
    let parts = [format!("{} bytes", wal_len - offset), format!("{intact_after} intact")];
    for part in parts.iter().map(String::as_str).chain([".corrupt"]) {
        assert!(text.contains(part), "{part:?} missing from {text}");
    }
    let kept = wal.with_file_name(format!("{name}.corrupt"));
    assert_eq!(fs.contents(&kept).as_deref(), Some(damaged.as_slice()), "kept byte for byte");
    assert!(!fs.exists(&wal), "the damaged WAL was renamed");
    let log = String::from_utf8(fs.contents(Path::new(SIM_DB).join("LOG")).expect("LOG")).unwrap();
    assert!(log.contains(&text), "the LOG has the report:\n{log}");

    // The kept file survives the database's own cleanup and later opens, and is not replayed.
    db.put(b"after", b"damage").expect("put");
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    drop(db);
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::PointInTimeRecovery)).expect("reopen");
    assert!(db.recovery_report().is_empty(), "{}", db.recovery_report());
    assert_eq!(get_all(&db).len(), r + 1);
    assert_eq!(fs.contents(&kept).as_deref(), Some(damaged.as_slice()));
}

/// Appends `n` one-put batches with sequence numbers from `first_seq` as WAL `number`.
fn write_wal(fs: &SimFs, number: u64, first_seq: u64, keys: std::ops::Range<usize>) {
    let path = talus::filename::wal_path(Path::new(SIM_DB), number);
    let mut w = LogWriter::new(fs.create(&path).expect("create"));
    for (j, i) in keys.enumerate() {
        let mut b = WriteBatch::new();
        b.put(key(i), b"later");
        b.set_sequence(first_seq + j as u64);
        w.add_record(b.data()).expect("append");
    }
    w.sync().expect("sync");
    fs.sync_dir(Path::new(SIM_DB)).expect("sync dir");
}

/// A later WAL is not replayed after an earlier one's damage (that would leave a hole): it is
/// reported with what it holds, and kept as well.
#[test]
fn later_wals_are_reported_and_kept_too() {
    let (fs, wal) = fixture();
    let n: u64 =
        wal.file_name().unwrap().to_string_lossy().trim_end_matches(".log").parse().unwrap();
    write_wal(&fs, n + 1, BATCHES as u64 + 1, BATCHES..BATCHES + 10);
    // Undamaged, both WALs replay.
    let copy = fs.crash(CrashMode::KeepUnsynced);
    {
        let tmp = SimFs::new();
        for p in copy.files() {
            tmp.create_dir_all(p.parent().unwrap()).unwrap();
            let mut f = tmp.create(&p).unwrap();
            f.append(&copy.contents(&p).unwrap()).unwrap();
        }
        let db = Db::open(SIM_DB, options(&tmp, WalRecoveryMode::default())).expect("open copy");
        assert_eq!(get_all(&db).len(), BATCHES + 10);
    }
    let fs = copy;
    damage(&fs, &wal, 10);
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::default())).expect("open");
    assert_eq!(get_all(&db).len(), 10);
    let report = db.recovery_report();
    assert_eq!(report.wals.len(), 2, "{report}");
    let later = &report.wals[1];
    assert_eq!(later.kind, WalLossKind::NotReplayed);
    assert_eq!((later.batches, later.operations), (10, 10), "{report}");
    assert_eq!(later.wal, n + 1);
    let kept: Vec<String> = wal_files(&fs)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".corrupt"))
        .collect();
    assert_eq!(kept, [format!("{n:06}.log.corrupt"), format!("{:06}.log.corrupt", n + 1)]);
}

/// A crash after the damaged WAL was renamed but before the new MANIFEST was current: the next
/// open replays `NNNNNN.log.corrupt` exactly as it would have replayed the WAL.
#[test]
fn a_renamed_wal_from_an_interrupted_open_is_replayed_the_same_way() {
    let (fs, wal) = fixture();
    damage(&fs, &wal, 500);
    let kept =
        wal.with_file_name(format!("{}.corrupt", wal.file_name().unwrap().to_string_lossy()));
    fs.rename(&wal, &kept).expect("rename");
    fs.sync_dir(Path::new(SIM_DB)).expect("sync dir");
    let db = Db::open(SIM_DB, options(&fs, WalRecoveryMode::default())).expect("open");
    assert_eq!(get_all(&db).len(), 500);
    let report = db.recovery_report();
    assert_eq!(report.wals.len(), 1);
    assert_eq!(report.wals[0].kept_as.as_deref(), kept.file_name().and_then(|n| n.to_str()));
    assert!(fs.exists(&kept));
}

/// Any IO of the open failing (once): the open either fails with the directory exactly as it
/// was (the rename undone) or commits.
#[test]
fn a_failed_commit_renames_the_wal_back() {
    let files = |fs: &SimFs| -> Vec<(PathBuf, usize)> {
        fs.files()
            .into_iter()
            .filter(|p| !p.ends_with("LOG"))
            .map(|p| {
                let n = fs.contents(&p).map_or(0, |c| c.len());
                (p, n)
            })
            // The empty WAL the flush thread makes ahead for the next switch exists at the
            // fixture's crash or not, as the thread got to it: not one of the open's changes.
            .filter(|(p, n)| !(*n == 0 && p.extension().is_some_and(|e| e == "log")))
            .collect()
    };
    // A write buffer the WAL's good part fits in, and one it does not (replayed twice).
    for wbs in [64 << 20, 16 << 10] {
        let opts =
            |fs: &Arc<SimFs>| Options { write_buffer_size: wbs, ..options(fs, Default::default()) };
        let (fs, wal) = fixture();
        damage(&fs, &wal, 2000);
        let before = files(&fs);
        fs.reset_op_counts();
        let pristine = fs.crash(CrashMode::KeepUnsynced);
        drop(Db::open(SIM_DB, opts(&pristine)).expect("open"));
        let total = pristine.op_counts().total();
        let mut failed = 0;
        for n in 1..=total {
            let (fs, wal) = fixture();
            damage(&fs, &wal, 2000);
            fs.fail_after(OpFilter::ALL, n, std::io::ErrorKind::Other, true);
            if Db::open(SIM_DB, opts(&fs)).is_ok() {
                continue;
            }
            failed += 1;
            let after = files(&fs);
            if after != before {
                assert!(
                    !fs.exists(&wal),
                    "{wbs}, IO {n}: changed files without committing: {before:?} -> {after:?}"
                );
            }
        }
        assert!(failed > 5, "{wbs}: {failed} of {total}");
    }
}

#[test]
fn absolute_consistency_refuses_and_changes_nothing() {
    let (fs, wal) = fixture();
    let (offset, _) = damage(&fs, &wal, 1000);
    let before: Vec<(PathBuf, Option<Vec<u8>>)> =
        fs.files().into_iter().map(|p| (p.clone(), fs.contents(&p))).collect();
    match Db::open(SIM_DB, options(&fs, WalRecoveryMode::AbsoluteConsistency)) {
        Err(Error::Corruption { file, offset: o, .. }) => {
            assert!(wal.ends_with(&file) && o == offset, "{file} {o}")
        }
        other => panic!("{other:?}"),
    }
    let after: Vec<(PathBuf, Option<Vec<u8>>)> =
        fs.files().into_iter().map(|p| (p.clone(), fs.contents(&p))).collect();
    assert!(after == before, "the refused open changed the directory");
}
