//! The model test's case generator: proptest strategies for keys, values, writes, iteration
//! bounds and whole operation sequences.

use proptest::prelude::*;

use crate::common::{Bytes, WriteOp, ALPHABET};
use crate::op::{Op, Start, TxnOp};
use crate::oracle::{CHANGE_MARK, REMOVE_MARK};

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
        // Values the model's compaction filter removes or changes (`oracle.rs`).
        1 => (prop::sample::select(vec![REMOVE_MARK, CHANGE_MARK]), prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(mark, rest)| Bytes([vec![mark], rest].concat())),
    ]
}

fn write_op() -> impl Strategy<Value = WriteOp> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| WriteOp::Put(k, v)),
        3 => key().prop_map(WriteOp::Delete),
        4 => (key(), value()).prop_map(|(k, v)| WriteOp::Merge(k, v)),
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

/// Keys of transaction steps: mostly one letter, so that transactions and writes collide.
fn txn_key() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        3 => prop::sample::select(ALPHABET.to_vec()).prop_map(|c| Bytes(vec![c])),
        1 => key(),
    ]
}

fn txn_op() -> impl Strategy<Value = TxnOp> {
    let slot = 0usize..3;
    prop_oneof![
        3 => (slot.clone(), any::<bool>(), prop::bool::weighted(0.3), prop::bool::weighted(0.2))
            .prop_map(|(slot, pessimistic, snapshot, sync)| {
                TxnOp::Begin { slot, pessimistic, snapshot, sync }
            }),
        5 => (slot.clone(), txn_key(), any::<bool>())
            .prop_map(|(slot, key, for_update)| TxnOp::Get { slot, key, for_update }),
        5 => (slot.clone(), txn_key(), value())
            .prop_map(|(slot, key, value)| TxnOp::Put { slot, key, value }),
        2 => (slot.clone(), txn_key()).prop_map(|(slot, key)| TxnOp::Delete { slot, key }),
        2 => (slot.clone(), bounds(), start(), prop::collection::vec(any::<bool>(), 0..10)).prop_map(
            |(slot, (lower, upper), start, steps)| TxnOp::Walk { slot, lower, upper, start, steps }
        ),
        1 => slot.clone().prop_map(|slot| TxnOp::SetSavepoint { slot }),
        1 => slot.clone().prop_map(|slot| TxnOp::RollbackToSavepoint { slot }),
        3 => slot.clone().prop_map(|slot| TxnOp::Commit { slot }),
        1 => slot.prop_map(|slot| TxnOp::Rollback { slot }),
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
        20 => txn_op().prop_map(Op::Txn),
    ]
}

pub(crate) fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..60)
}
