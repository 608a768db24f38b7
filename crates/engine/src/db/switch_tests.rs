//! A failed memtable switch leaves nothing that hides later writes from recovery.

use std::sync::Arc;

use crate::fs::fault::{CrashMode, OpKind, SimFs};
use crate::{Db, Options, WalRecoveryMode, WriteOptions};

fn options(fs: &Arc<SimFs>, mode: WalRecoveryMode) -> Options {
    Options {
        create_if_missing: true,
        wal_recovery_mode: mode,
        disable_auto_compactions: true,
        write_buffer_size: 4096,
        fs: fs.clone(),
        ..Default::default()
    }
}

/// Issue 34, found by `tests/fault_then_crash.rs`: a switch that failed after creating the new
/// WAL (here its first write, the predecessor record, fails) used to leave that WAL behind,
/// empty. Writes went on into the old WAL; the next switch started a third WAL whose
/// predecessor is the old one; and recovery, having replayed the empty orphan in between, took
/// the old WAL for missing: point-in-time recovery dropped every write after the second switch
/// (the strict modes refused to open). The failed switch now removes the WAL it made, and
/// recovery compares a predecessor record with the WAL it names, wherever that was replayed.
/// The test holds the flush mark, so no flush makes the old WAL obsolete before the crash.
#[test]
fn a_failed_switch_leaves_no_wal_that_hides_later_writes() {
    for mode in [WalRecoveryMode::PointInTimeRecovery, WalRecoveryMode::AbsoluteConsistency] {
        let fs = SimFs::new();
        let db = Db::open("/db", options(&fs, mode)).unwrap();
        let inner = db.inner();
        let no_flush = inner.begin_flush(&mut inner.state.lock()).expect("no flush runs yet");
        let sync = WriteOptions { sync: true, ..Default::default() };
        let switch = || inner.with_write_lock(|| inner.switch_memtable());
        db.put_opt(b"k0", b"before the failed switch", &sync).unwrap();
        fs.fail_after(OpKind::Write, 1, std::io::ErrorKind::Other, true);
        assert!(switch().is_err(), "{mode:?}: the switch should have failed");
        let wals = fs.files().into_iter().filter(|p| p.to_string_lossy().ends_with(".log")).count();
        assert_eq!(wals, 1, "{mode:?}: the failed switch's WAL is still there");
        db.put_opt(b"k1", b"between the switches", &sync).unwrap();
        switch().unwrap();
        db.put_opt(b"k2", b"after the second switch", &sync).unwrap();
        let after = fs.crash(CrashMode::KeepUnsynced);
        drop(no_flush);
        drop(db);
        let db = Db::open("/db", options(&after, mode))
            .unwrap_or_else(|e| panic!("{mode:?}: reopen: {e}"));
        for k in [&b"k0"[..], b"k1", b"k2"] {
            assert!(
                db.get(k).unwrap().is_some(),
                "{mode:?}: {k:?} lost: {} {:?}",
                db.recovery_report(),
                after.files()
            );
        }
        assert!(db.recovery_report().is_empty(), "{mode:?}: {}", db.recovery_report());
    }
}
