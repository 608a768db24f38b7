//! DB-level corruption campaign on the real file system.
//!
//! A fixture database is built once with known contents: SSTs at L0 and at the bottom level
//! (with range tombstones), and a WAL holding unflushed batches. Then, for each file type (WAL,
//! the parts of an SST, MANIFEST, CURRENT), many copies of it are damaged (bit flips,
//! truncations, zeroed ranges, swapped SST blocks) and each copy is opened, read key by key,
//! scanned both ways and compacted. Requirements checked on every injection:
//! - no panic, on any thread (a panic hook counts them);
//! - no wrong value: every value returned is the expected one; for WAL damage the database must
//!   equal the state after some prefix of the WAL's batches;
//! - every error is `Corruption` naming the damaged file with an offset inside it (CURRENT
//!   problems may also be NotFound/InvalidArgument);
//! - WAL damage that loses data is reported in `talus.recovery-report` under
//!   PointInTimeRecovery, and fails the open with Corruption under AbsoluteConsistency (except a
//!   cut exactly at a record boundary, which is a valid shorter log);
//! - an open that fails leaves the directory byte-identical (every name, size and crc32c as
//!   before: no new MANIFEST, no CURRENT change, no SST, no WAL renamed or deleted, LOG as it
//!   was).
//!
//! The table of counts is printed at the end (`cargo test --release --test corruption --
//! --nocapture`). `CORRUPTION_EXHAUSTIVE=1` flips a bit in every byte of every file instead of
//! sampling. A second test truncates the WAL at every byte of its last records (torn tail).

#[path = "../common/mod.rs"]
mod common;

mod campaign;
mod fixture;
mod fuzz_seeds;
mod torn_tail;
