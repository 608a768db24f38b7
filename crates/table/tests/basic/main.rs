//! The table layer's behaviour through its public API: refusals, counters, scans, updates,
//! transactions, catalog persistence, create_index (also with concurrent writers).

#[path = "../common/mod.rs"]
mod common;

mod catalog;
mod create_index;
mod engines;
mod helpers;
mod integrity;
mod rocksdb_throttle;
mod rows;
mod size;
mod transactions;
