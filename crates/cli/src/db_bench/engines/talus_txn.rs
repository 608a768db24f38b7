//! Talus's transactions for randomtransaction: the database of `--optimistic_transaction_db`
//! or `--transaction_db` over the engine's [`talus::Db`], and [`EngineTxn`] over
//! [`talus::Transaction`].

use std::time::Duration;

use talus::{
    Db, OptimisticTransactionDb, OptimisticTransactionDbOptions, OptimisticTransactionOptions,
    Transaction, TransactionDb, TransactionDbOptions, TransactionOptions, WriteOptions,
};

use super::super::flags::Flags;
use super::txn::{EngineTxn, TxnError, TxnKind};
use super::EResult;

/// The transaction database db_bench opened, if any.
pub enum TalusTxnDb {
    /// `--optimistic_transaction_db`.
    Optimistic(OptimisticTransactionDb),
    /// `--transaction_db`, with the options each transaction begins with.
    Pessimistic(TransactionDb, TransactionOptions),
}

impl TalusTxnDb {
    /// Wraps `db` as the flags ask (RocksDB's db_bench: default database options; each
    /// pessimistic transaction gets `--transaction_lock_timeout` and
    /// `--transaction_set_snapshot`).
    pub fn open(f: &Flags, db: &Db) -> EResult<Option<TalusTxnDb>> {
        let e = |e: talus::Error| e.to_string();
        Ok(match TxnKind::from_flags(f) {
            TxnKind::None => None,
            TxnKind::Optimistic => Some(TalusTxnDb::Optimistic(
                OptimisticTransactionDb::from_db(
                    db.clone(),
                    OptimisticTransactionDbOptions::default(),
                )
                .map_err(e)?,
            )),
            TxnKind::Pessimistic => {
                let p = TransactionDb::from_db(db.clone(), TransactionDbOptions::default())
                    .map_err(e)?;
                let o = TransactionOptions {
                    lock_timeout: Some(Duration::from_millis(f.transaction_lock_timeout)),
                    set_snapshot: f.transaction_set_snapshot,
                    ..Default::default()
                };
                Some(TalusTxnDb::Pessimistic(p, o))
            }
        })
    }

    /// Which kind this is.
    pub fn kind(&self) -> TxnKind {
        match self {
            TalusTxnDb::Optimistic(_) => TxnKind::Optimistic,
            TalusTxnDb::Pessimistic(..) => TxnKind::Pessimistic,
        }
    }

    /// Begins a transaction whose commit writes with `wo`.
    pub fn begin(&self, wo: &WriteOptions) -> Box<dyn EngineTxn + '_> {
        let t = match self {
            TalusTxnDb::Optimistic(o) => {
                o.begin_transaction(wo, &OptimisticTransactionOptions::default())
            }
            TalusTxnDb::Pessimistic(p, opts) => p.begin_transaction(wo, opts),
        };
        Box::new(TalusTxn(t))
    }
}

struct TalusTxn(Transaction);

fn sort(e: talus::Error) -> TxnError {
    match e {
        talus::Error::Busy(s) => TxnError::Busy(s),
        talus::Error::Deadlock(s) => TxnError::Busy(format!("Deadlock: {s}")),
        talus::Error::TimedOut(s) => TxnError::TimedOut(s),
        talus::Error::Expired(s) => TxnError::Expired(s),
        e => TxnError::Other(e.to_string()),
    }
}

impl EngineTxn for TalusTxn {
    fn has_snapshot(&self) -> bool {
        self.0.snapshot().is_some()
    }

    fn set_snapshot(&mut self) {
        self.0.set_snapshot()
    }

    fn get(&mut self, key: &[u8], for_update: bool) -> Result<Option<Vec<u8>>, TxnError> {
        if for_update { self.0.get_for_update(key) } else { self.0.get(key) }.map_err(sort)
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), TxnError> {
        self.0.delete(key).map_err(sort)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TxnError> {
        self.0.put(key, value).map_err(sort)
    }

    fn commit(self: Box<Self>) -> Result<(), TxnError> {
        self.0.commit().map_err(sort)
    }

    fn rollback(self: Box<Self>) {
        self.0.rollback()
    }
}
