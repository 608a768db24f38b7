//! The vocabulary of a model-test case: the operations ([`Op`]) a case is a sequence of, and
//! where a raw-iterator walk starts ([`Start`]).

use crate::common::{Bytes, WriteOp};

/// Where a raw-iterator walk starts.
#[derive(Debug, Clone)]
pub(crate) enum Start {
    First,
    Last,
    Seek(Bytes),
    SeekForPrev(Bytes),
}

/// One step of a case.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// One write on its own.
    Write(WriteOp, bool),
    /// An atomic batch (`bool`: sync).
    Batch(Vec<WriteOp>, bool),
    /// `count` puts of `value_len`-byte values on pseudo-random keys from `seed`: enough data to
    /// switch memtables and trigger compactions.
    Bulk {
        seed: u64,
        count: u16,
        value_len: u16,
    },
    Get(Bytes),
    MultiGet(Vec<Bytes>),
    TakeSnapshot,
    ReleaseSnapshot(usize),
    /// `Some(i)` reads at snapshot `i % live snapshots` (latest state if none is live).
    GetAt(usize, Bytes),
    /// Iterate with bounds; `pulls` says next (true) or next_back (false), then drain forward.
    Iter {
        snap: Option<usize>,
        lower: Option<Bytes>,
        upper: Option<Bytes>,
        pulls: Vec<bool>,
    },
    /// Walk a raw iterator: position, then next (true) / prev (false) while valid.
    RawWalk {
        snap: Option<usize>,
        lower: Option<Bytes>,
        upper: Option<Bytes>,
        start: Start,
        steps: Vec<bool>,
    },
    Flush,
    Compact(Option<Bytes>, Option<Bytes>),
    /// Close and open again.
    Reopen,
    /// Kill the process (on `SimFs`; a plain reopen on the real file system) and open again.
    ProcessCrash,
    /// Cut the power (on `SimFs`, dropping all unsynced data, or a random part of it with a
    /// seed; a plain reopen on the real file system) and open again: the database must hold
    /// the writes up to the last sync or flush and then some prefix of the later ones.
    PowerLoss(Option<u64>),
    /// A step of one of the open transactions (`txn.rs`).
    Txn(TxnOp),
}

/// A transaction step; `slot` picks one of a few transaction slots (a step on an empty slot
/// does nothing but `Begin`).
#[derive(Debug, Clone)]
pub(crate) enum TxnOp {
    /// Starts a transaction in `slot` (rolling back the one there): pessimistic (a
    /// `TransactionDb` with no lock wait) or optimistic, with a snapshot or not, committing
    /// with a synced WAL write or not.
    Begin {
        slot: usize,
        pessimistic: bool,
        snapshot: bool,
        sync: bool,
    },
    /// `get`, or `get_for_update`.
    Get {
        slot: usize,
        key: Bytes,
        for_update: bool,
    },
    Put {
        slot: usize,
        key: Bytes,
        value: Bytes,
    },
    Delete {
        slot: usize,
        key: Bytes,
    },
    /// Walk the transaction's iterator (its writes over its view of the database).
    Walk {
        slot: usize,
        lower: Option<Bytes>,
        upper: Option<Bytes>,
        start: Start,
        steps: Vec<bool>,
    },
    SetSavepoint {
        slot: usize,
    },
    RollbackToSavepoint {
        slot: usize,
    },
    Commit {
        slot: usize,
    },
    Rollback {
        slot: usize,
    },
}
