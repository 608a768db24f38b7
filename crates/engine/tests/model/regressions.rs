//! Shrunk failures of the model test, kept as named cases (plus a few hand-written ones that
//! pin down classic LSM bugs).

use crate::common::{b, Bytes, WriteOp};
use crate::config::{Backend, Config, DIRECT_PROFILE, PROFILES};
use crate::harness::run;
use crate::op::{Op, Start, TxnOp};

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
        Op::Iter { snap: None, lower: Some(k("b")), upper: Some(k("c")), pulls: vec![false; 5] },
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

fn txn(op: TxnOp) -> Op {
    Op::Txn(op)
}

fn begin(slot: usize, pessimistic: bool, snapshot: bool) -> Op {
    txn(TxnOp::Begin { slot, pessimistic, snapshot, sync: false })
}

/// A transaction's conflict check finds writes that were flushed and compacted to the bottom
/// level since it tracked the key (a put whose sequence number compaction would zero, a
/// delete compaction would drop, a range deletion), and a pessimistic transaction with a
/// snapshot finds them when it locks; lock conflicts between pessimistic transactions are
/// immediate `TimedOut`s (no lock wait in the model) until the holder commits.
#[test]
fn transaction_conflicts_across_flush_and_bottom_compaction() {
    both(&[
        put("a", "0"),
        put("b", "0"),
        begin(0, false, false),
        txn(TxnOp::Get { slot: 0, key: k("a"), for_update: true }),
        begin(1, false, false),
        txn(TxnOp::Delete { slot: 1, key: k("b") }),
        begin(2, false, false),
        txn(TxnOp::Put { slot: 2, key: k("d"), value: k("2") }),
        put("a", "1"),
        Op::Write(WriteOp::Delete(k("b")), false),
        Op::Write(WriteOp::DeleteRange(k("c"), k("e")), false),
        Op::Flush,
        Op::Compact(None, None),
        txn(TxnOp::Commit { slot: 0 }),
        txn(TxnOp::Commit { slot: 1 }),
        txn(TxnOp::Commit { slot: 2 }),
        // Pessimistic, with a snapshot: the check happens when the key is locked.
        begin(2, true, true),
        put("d", "1"),
        Op::Flush,
        Op::Compact(None, None),
        txn(TxnOp::Put { slot: 2, key: k("d"), value: k("2") }),
        txn(TxnOp::Put { slot: 2, key: k("f"), value: k("2") }),
        begin(0, true, false),
        txn(TxnOp::Get { slot: 0, key: k("f"), for_update: true }),
        txn(TxnOp::Commit { slot: 2 }),
        txn(TxnOp::Get { slot: 0, key: k("f"), for_update: true }),
        txn(TxnOp::Put { slot: 0, key: k("f"), value: k("0") }),
        txn(TxnOp::SetSavepoint { slot: 0 }),
        txn(TxnOp::Delete { slot: 0, key: k("a") }),
        txn(TxnOp::Walk {
            slot: 0,
            lower: None,
            upper: None,
            start: Start::First,
            steps: vec![true; 4],
        }),
        txn(TxnOp::RollbackToSavepoint { slot: 0 }),
        txn(TxnOp::Commit { slot: 0 }),
        Op::Get(k("f")),
        Op::PowerLoss(None),
    ]);
}

fn merge(key: &str, v: &str) -> Op {
    Op::Write(WriteOp::Merge(k(key), k(v)), false)
}

/// Operands over a base in an older file, cut by a snapshot and by a range deletion, through
/// flushes, a full compaction (the bottommost merge) and a reopen; read every way at the
/// snapshot and now.
#[test]
fn merge_chains_across_snapshots_range_deletions_and_compaction() {
    both(&[
        put("a", "base"),
        Op::Flush,
        merge("a", "1"),
        merge("b", "x"),
        Op::TakeSnapshot,
        merge("a", "2"),
        Op::Flush,
        Op::Write(WriteOp::DeleteRange(k("b"), k("c")), false),
        merge("b", "y"),
        merge("a", "3"),
        Op::Get(k("a")),
        Op::GetAt(0, k("a")),
        Op::MultiGet(vec![k("a"), k("b")]),
        Op::Compact(None, None),
        Op::GetAt(0, k("b")),
        Op::Iter { snap: Some(0), lower: None, upper: None, pulls: vec![false, true] },
        Op::RawWalk {
            snap: None,
            lower: None,
            upper: None,
            start: Start::Last,
            steps: vec![false, true],
        },
        Op::ReleaseSnapshot(0),
        Op::Compact(None, None),
        Op::Reopen,
        Op::Get(k("a")),
        Op::Get(k("b")),
    ]);
}

/// Values the model's compaction filter removes (`~`) and changes (`^`), under operands.
#[test]
fn filtered_values_under_merges() {
    both(&[
        put("a", "~gone"),
        put("b", "^changed"),
        Op::Flush,
        Op::Compact(None, None),
        merge("a", "1"),
        merge("b", "2"),
        Op::Get(k("a")),
        Op::Get(k("b")),
        Op::Flush,
        Op::Compact(None, None),
        Op::Iter { snap: None, lower: None, upper: None, pulls: vec![true, false] },
    ]);
}
