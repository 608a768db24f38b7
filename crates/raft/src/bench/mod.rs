//! `talus raft-bench`: three local `talus raft-kv` nodes driven by concurrent clients, in two
//! modes: the kill test (`kill.rs`: leader kills, pauses, a recorded history checked for
//! linearizability and lost writes) and the throughput benchmark (`throughput.rs`: the same
//! service on Talus and on RocksDB, interleaved). `cluster.rs` runs the node processes,
//! `workload.rs` the clients, `verify.rs` the end checks.

pub mod cluster;
pub mod kill;
pub mod throughput;
pub mod verify;
pub mod workload;
