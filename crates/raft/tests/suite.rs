//! openraft's own storage test suite (`openraft::testing::Suite::test_all`: log state, vote,
//! entries, purge, truncate, membership from log and state machine, apply, snapshot build and
//! install) on the Talus-backed store, on the real file system and on `SimFs`.

use std::sync::Arc;

use openraft::testing::{StoreBuilder, Suite};
use talus::fs::fault::SimFs;
use talus::fs::StdFs;
use talus_raft::backend::talus_db::TalusBackend;
use talus_raft::store::{self, Fault, LogStore, StateMachine};
use talus_raft::types::{StorageError, TypeConfig};

type Ls = LogStore<TalusBackend>;
type Sm = StateMachine<TalusBackend>;

/// A fresh store in a new temporary directory (the guard removes it).
struct OnDisk;

impl StoreBuilder<TypeConfig, Ls, Sm, tempfile::TempDir> for OnDisk {
    async fn build(&self) -> Result<(tempfile::TempDir, Ls, Sm), StorageError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let backend = TalusBackend::open(&dir.path().join("db"), Arc::new(StdFs)).expect("open");
        let (log, sm, _store) = store::open(dir.path(), 0, backend, Fault::None).expect("store");
        Ok((dir, log, sm))
    }
}

/// A fresh store on a new in-memory `SimFs`.
struct InMemory;

impl StoreBuilder<TypeConfig, Ls, Sm, ()> for InMemory {
    async fn build(&self) -> Result<((), Ls, Sm), StorageError> {
        let fs = SimFs::new();
        let dir = std::path::Path::new("/node");
        let backend = TalusBackend::open(&dir.join("db"), fs).expect("open");
        let (log, sm, _store) = store::open(dir, 0, backend, Fault::None).expect("store");
        Ok(((), log, sm))
    }
}

#[test]
fn openraft_storage_suite_on_disk() {
    Suite::test_all(OnDisk).expect("openraft's storage suite");
}

#[test]
fn openraft_storage_suite_on_simfs() {
    Suite::test_all(InMemory).expect("openraft's storage suite");
}

/// The same suite on the RocksDB backend (the benchmark's comparison store), with the
/// `rocksdb` feature: `bench/build_rocksdb_adapter.sh target/rdb /work/rocksdb-tools -- test
/// --release -p talus-raft --features rocksdb --test suite`.
#[cfg(feature = "rocksdb")]
mod rocks {
    use openraft::testing::{StoreBuilder, Suite};
    use talus_raft::backend::rocks::RocksBackend;
    use talus_raft::store::{self, Fault, LogStore, StateMachine};
    use talus_raft::types::{StorageError, TypeConfig};

    type Ls = LogStore<RocksBackend>;
    type Sm = StateMachine<RocksBackend>;

    struct OnDisk;

    impl StoreBuilder<TypeConfig, Ls, Sm, tempfile::TempDir> for OnDisk {
        async fn build(&self) -> Result<(tempfile::TempDir, Ls, Sm), StorageError> {
            let dir = tempfile::tempdir().expect("tempdir");
            let backend = RocksBackend::open(&dir.path().join("db")).expect("open");
            let (log, sm, _store) =
                store::open(dir.path(), 0, backend, Fault::None).expect("store");
            Ok((dir, log, sm))
        }
    }

    #[test]
    fn openraft_storage_suite_on_rocksdb() {
        Suite::test_all(OnDisk).expect("openraft's storage suite");
    }
}
