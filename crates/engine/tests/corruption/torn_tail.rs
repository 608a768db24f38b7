//! Torn tail or damage in a log file: a WAL cut at every byte of its last records keeps exactly
//! the complete records, and a flipped length field that runs a WAL or MANIFEST record past
//! the end of the file is Corruption, not a torn tail.

use talus::{Db, Error, Options, WalRecoveryMode};

use crate::common;
use crate::common::corrupt::{
    copy_dir, install_panic_counter, panic_count, panic_messages, Injection,
};
use crate::common::{Model, WriteOp};
use crate::fixture::{apply_all, build_fixture, key, options, put, read_all_gets, value};

/// A torn WAL tail: the WAL cut at every byte of its last records (near every fragment boundary
/// and at a stride elsewhere; every byte with `CORRUPTION_EXHAUSTIVE=1`). Under
/// PointInTimeRecovery and TolerateCorruptedTailRecords, recovery keeps exactly the records
/// that end before the cut, and reports a drop exactly when the cut falls inside a record.
#[test]
fn torn_wal_tail_keeps_every_complete_record() {
    install_panic_counter();
    let exhaustive = std::env::var("CORRUPTION_EXHAUSTIVE").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().expect("tempdir");
    let db =
        Db::open(dir.path(), Options { create_if_missing: true, ..options(Default::default()) })
            .expect("open");
    // ~30 KiB of 1 KiB batches, then one that crosses the first 32 KiB block boundary (FIRST +
    // LAST fragments), then small ones.
    let sizes: Vec<usize> = (0..30).map(|_| 1000).chain([3000, 60, 200, 10]).collect();
    let mut m = Model::new();
    let mut states = vec![m.clone()];
    for (b, &len) in sizes.iter().enumerate() {
        let ops = [put(b % 40, value(b % 40, b, len)), WriteOp::Delete(key(100 + b % 7).into())];
        apply_all(&db, &mut m, &ops);
        states.push(m.clone());
    }
    drop(db);
    let wal = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "log")
                && std::fs::metadata(p).is_ok_and(|m| m.len() > 0)
        })
        .expect("a WAL");
    let wal_name = wal.file_name().expect("name").to_string_lossy().into_owned();
    let bytes = std::fs::read(&wal).expect("read WAL");
    let (records, bounds) = common::corrupt::wal_layout(&bytes);
    assert_eq!(records.len(), sizes.len(), "one record per batch");
    assert!(records.iter().any(|&(s, e)| s / 32768 != (e - 1) / 32768), "a record spans blocks");
    let first = records[records.len() - 4].0;
    let near = |c: u64| bounds.iter().any(|&b| b.abs_diff(c) <= 8);
    let cuts: Vec<u64> =
        (first..=bytes.len() as u64).filter(|&c| exhaustive || near(c) || c % 13 == 0).collect();
    let base = std::env::temp_dir();
    let (mut runs, mut reported) = (0, 0);
    for &cut in &cuts {
        let complete = records.iter().filter(|&&(_, e)| e <= cut).count();
        let partial = records.iter().any(|&(s, e)| s < cut && cut < e);
        for mode in
            [WalRecoveryMode::PointInTimeRecovery, WalRecoveryMode::TolerateCorruptedTailRecords]
        {
            let case = tempfile::tempdir_in(&base).expect("tempdir");
            copy_dir(dir.path(), case.path());
            Injection::Truncate(cut).inject(&case.path().join(&wal_name));
            let db = Db::open(case.path(), options(mode))
                .unwrap_or_else(|e| panic!("cut at {cut} ({mode:?}): open failed: {e}"));
            let got = read_all_gets(&db).expect("reads");
            assert!(
                got == states[complete],
                "cut at {cut} ({mode:?}): not the state after the {complete} complete records:\n{}",
                common::diff(&got, &states[complete])
            );
            let report = db.property("talus.recovery-report").unwrap_or_default();
            assert_eq!(!report.is_empty(), partial, "cut at {cut} ({mode:?}): report {report:?}");
            runs += 1;
            reported += usize::from(partial);
        }
    }
    assert_eq!(panic_count(), 0, "panics: {:?}", panic_messages());
    println!(
        "torn WAL tail: {runs} recoveries over {} cut points, {reported} reported a drop",
        cuts.len()
    );
}

/// Regression (found by the campaign): a bit flip in a record's length field that makes it run
/// past the end of the file was taken for a torn tail, so the MANIFEST silently lost that edit
/// and every later one (the database rolled back), and a WAL under TolerateCorruptedTailRecords
/// dropped the records after it as a "torn tail". Now both are Corruption.
#[test]
fn length_flip_is_not_a_torn_tail() {
    install_panic_counter();
    let fx = build_fixture();
    let base = std::env::temp_dir();
    let targets = [
        (fx.manifest.clone(), WalRecoveryMode::PointInTimeRecovery),
        (fx.wal.clone(), WalRecoveryMode::TolerateCorruptedTailRecords),
    ];
    let mut tried = 0;
    for (file, mode) in targets {
        let bytes = std::fs::read(fx.dir.path().join(&file)).expect("read");
        let (records, bounds) = common::corrupt::wal_layout(&bytes);
        // Header starts of every fragment but the file's last record.
        let last_start = records.last().expect("records").0;
        let headers: Vec<u64> =
            bounds.iter().step_by(2).copied().filter(|&h| h < last_start).collect();
        for h in headers {
            // A flip of the length field that keeps the fragment inside its 32 KiB block but
            // runs it past the end of the file.
            let at = h as usize;
            let len = u64::from(u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
            let fits = |l: u64| h % 32768 + 7 + l <= 32768 && h + 7 + l > bytes.len() as u64;
            let Some(bit) = (0..16).find(|&b| fits(len ^ (1 << b))) else { continue };
            let case = tempfile::tempdir_in(&base).expect("tempdir");
            copy_dir(fx.dir.path(), case.path());
            Injection::FlipBit((h + 4) * 8 + bit).inject(&case.path().join(&file));
            match Db::open(case.path(), options(mode)) {
                Err(Error::Corruption { file: f, offset, .. }) => {
                    assert!(f.contains(&file) && offset <= h, "{file} header {h}: {f} {offset}")
                }
                Err(e) => panic!("{file} header {h}: {e}"),
                Ok(db) => panic!(
                    "{file} header {h}: opened; report {:?}",
                    db.property("talus.recovery-report")
                ),
            }
            tried += 1;
        }
    }
    assert!(tried > 5, "only {tried} headers");
    assert_eq!(panic_count(), 0, "panics: {:?}", panic_messages());
}
