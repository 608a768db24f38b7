//! Talus as openraft's log and state machine, and a replicated key-value service on it.
//!
//! - [`store`]: openraft's `RaftLogStorage` and `RaftStateMachine` on one database of a
//!   [`backend::Backend`] (Talus, or RocksDB with the `rocksdb` feature), the log and the state
//!   machine in separate key ranges ([`keys`]), records encoded by [`codec`], snapshots as
//!   [`snapshot_file`]s installed by ingestion. It passes openraft's storage suite
//!   (`tests/suite.rs`) and power-loss checks on `SimFs` (`tests/power_loss.rs`).
//! - [`types`]: the Raft type configuration (requests, responses, node ids).
//!
//! Design: docs/design/replication.md; on-disk formats: docs/format/raft.md.
#![deny(missing_docs)]
// openraft's storage traits return its `StorageError` (224 bytes) by value; the helpers that
// build it return the same type rather than box it and unbox it at every trait method.
#![allow(clippy::result_large_err)]

pub mod backend;
pub mod bench;
pub mod check;
pub mod client;
pub mod cmd;
pub mod codec;
pub mod keys;
pub mod net;
pub mod node;
pub mod snapshot_file;
pub mod store;
pub mod types;

pub use openraft;
