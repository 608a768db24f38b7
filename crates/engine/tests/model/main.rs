//! Model test of the public API: random operation sequences over a small key space, checked
//! against an oracle (`oracle.rs`: a `BTreeMap` model that knows merges and the test's
//! compaction filter) after every read. Snapshots keep a clone of the oracle; reopen
//! and (on `SimFs`) process crashes must keep everything acknowledged. Options are tiny so that
//! flushes and compactions really happen.
//!
//! `PROPTEST_CASES` sets the number of cases (256 by default). A shrunk failure is printed as
//! Rust (keys as `b(b"..")`): paste it into a named test in `mod regressions` below, adding
//! `vec!` before the lists.

#[path = "../common/mod.rs"]
mod common;

mod config;
mod harness;
mod op;
mod oracle;
mod regressions;
mod strategy;
mod txn;

use config::{Backend, Config, DIRECT_PROFILE, PROFILES};
use harness::run;
use proptest::prelude::*;
use strategy::ops;

fn proptest_config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    // Shrunk failures become named tests in `regressions`, not files.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn model_sim_fs(
        write_buffer_size in 4096usize..65536,
        profile in 0..PROFILES.len(),
        ops in ops(),
    ) {
        run(Config { backend: Backend::Sim, write_buffer_size, profile }, &ops);
    }
}

/// The real file system pays for every fsync, so it runs a sixteenth of the cases (the SimFs
/// variant carries the case count; this one checks that StdFs behaves like SimFs).
fn real_fs_config() -> ProptestConfig {
    let c = proptest_config();
    ProptestConfig { cases: (c.cases / 16).max(32), ..c }
}

proptest! {
    #![proptest_config(real_fs_config())]

    #[test]
    fn model_real_fs(write_buffer_size in 4096usize..65536, direct in any::<bool>(), ops in ops()) {
        // The real file system with O_DIRECT: the kernel checks the alignment.
        let profile = if direct { DIRECT_PROFILE } else { 0 };
        run(Config { backend: Backend::Real, write_buffer_size, profile }, &ops);
    }
}
