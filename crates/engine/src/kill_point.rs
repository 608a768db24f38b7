//! Whitebox kill points, as RocksDB's crash test has them (`TEST_KILL_RANDOM`,
//! `--kill_random_test`): named places inside the engine where a crash-test worker may kill
//! itself with SIGKILL, so that crashes land exactly between the steps that must be atomic
//! together (a table written but not yet in the MANIFEST, CURRENT renamed but the directory not
//! synced, a WAL record appended but not synced, ...), not only wherever a timer happens to
//! fall.
//!
//! Compiled only with the `kill-points` cargo feature: without it `kill_point!` expands to
//! nothing and [`ENABLED`] is false, so release builds carry no trace. With it, a point costs
//! one relaxed atomic load until [`arm`] is called (by `talus stress` only, from its
//! `--kill_random_test` and `--kill_points` flags).
//!
//! Armed, each point whose name starts with one of the armed prefixes kills the process with
//! odds 1 in `odds` at each pass: it writes `talus-kill-point: NAME` to standard output (fd 1,
//! one `write(2)`, so the line is whole even as the process dies) and sends itself SIGKILL, as
//! `kill -9` would. Every point's passes are counted ([`hits`]). The names are listed in
//! [`POINTS`]; a test checks that list against the source.
//!
//! Who calls: the engine's write, flush, compaction, MANIFEST, ingestion, open, direct-IO,
//! checkpoint and backup code, through `kill_point!`. No locks but a mutex around the pass counters (armed only).

/// True if this build has kill points (the `kill-points` feature).
pub const ENABLED: bool = cfg!(feature = "kill-points");

/// Every kill point, by name. Dotted: the first part is the subsystem, so a prefix arms a group
/// (`--kill_points=manifest` arms every `manifest.*` point).
pub const POINTS: &[&str] = &[
    // The write path: one WAL record per write group, and its sync.
    "wal.append.before",
    "wal.append.after",
    "wal.sync.before",
    "wal.sync.after",
    // A memtable switch: the new WAL written (predecessor record), not yet made active.
    "wal.switch.new_wal_ready",
    // The WAL made ahead by the flush thread for the next switch.
    "wal.prepare.created",
    // A flush: the table written and synced, then its MANIFEST edit durable.
    "flush.table_written",
    "flush.manifest_written",
    // A compaction: its outputs written and synced, then its MANIFEST edit durable.
    "compaction.outputs_written",
    "compaction.manifest_written",
    // An edit appended to the live MANIFEST, before its sync.
    "manifest.append.before_sync",
    // A MANIFEST roll: the new MANIFEST synced; CURRENT.dbtmp synced; CURRENT renamed.
    "manifest.roll.manifest_written",
    "manifest.roll.temp_written",
    "manifest.roll.renamed",
    // Ingestion: the files linked or copied in; the MANIFEST edit durable.
    "ingest.files_placed",
    "ingest.manifest_written",
    // An open's commit: recovered memtables written to L0; the open committed, before the LOG,
    // OPTIONS file and obsolete-file deletion.
    "open.tables_written",
    "open.committed",
    // Between two deletions of obsolete files.
    "obsolete.deleting",
    // Direct IO: a partial last page written, to be rewritten in place by the next write.
    "direct.tail_written",
    // A checkpoint: its files written into `DIR.tmp`; `DIR.tmp` renamed to `DIR`.
    "checkpoint.files_written",
    "checkpoint.renamed",
    // A backup: one shared table copied in; its private directory renamed into place; its
    // meta file (which makes the backup exist) written.
    "backup.shared_copied",
    "backup.private_written",
    "backup.meta_written",
];

/// Passes at a kill point, when armed; the point kills the process with odds 1 in the armed
/// odds. Use through the crate's `kill_point!` macro.
#[cfg(feature = "kill-points")]
pub fn hit(name: &'static str) {
    imp::hit(name);
}

/// Arms the kill points whose names start with one of `prefixes` (all of them if it is empty):
/// from now on each pass kills the process with odds 1 in `odds` (`odds` 0 disarms). `seed`
/// seeds the draws. A no-op (returning `false`) in a build without the `kill-points` feature.
pub fn arm(odds: u64, prefixes: &[String], seed: u64) -> bool {
    #[cfg(feature = "kill-points")]
    {
        imp::arm(odds, prefixes, seed);
        true
    }
    #[cfg(not(feature = "kill-points"))]
    {
        let _ = (odds, prefixes, seed);
        false
    }
}

/// Passes counted at each kill point since it was armed (only armed points are counted).
pub fn hits() -> Vec<(&'static str, u64)> {
    #[cfg(feature = "kill-points")]
    {
        imp::hits()
    }
    #[cfg(not(feature = "kill-points"))]
    {
        Vec::new()
    }
}

/// Marks a kill point (see the module doc); nothing without the `kill-points` feature.
macro_rules! kill_point {
    ($name:literal) => {
        #[cfg(feature = "kill-points")]
        $crate::kill_point::hit($name);
    };
}
pub(crate) use kill_point;

#[cfg(feature = "kill-points")]
mod imp {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use parking_lot::Mutex;

    static ARMED: AtomicBool = AtomicBool::new(false);
    static ODDS: AtomicU64 = AtomicU64::new(0);
    static STATE: AtomicU64 = AtomicU64::new(1);
    static PREFIXES: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static HITS: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());

    pub fn arm(odds: u64, prefixes: &[String], seed: u64) {
        *PREFIXES.lock() = prefixes.to_vec();
        ODDS.store(odds, Ordering::Relaxed);
        STATE.store(seed | 1, Ordering::Relaxed);
        ARMED.store(odds > 0, Ordering::Release);
    }

    pub fn hits() -> Vec<(&'static str, u64)> {
        HITS.lock().iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// A SplitMix64 step on a shared state: threads may draw the same number now and then,
    /// which only changes which pass kills.
    fn draw() -> u64 {
        let s = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        let mut z = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn hit(name: &'static str) {
        if !ARMED.load(Ordering::Relaxed) {
            return;
        }
        {
            let prefixes = PREFIXES.lock();
            if !prefixes.is_empty() && !prefixes.iter().any(|p| name.starts_with(p.as_str())) {
                return;
            }
        }
        *HITS.lock().entry(name).or_insert(0) += 1;
        let odds = ODDS.load(Ordering::Relaxed).max(1);
        if draw().is_multiple_of(odds) {
            die(name);
        }
    }

    fn die(name: &str) -> ! {
        let line = format!("talus-kill-point: {name}\n");
        // SAFETY: write(2) of a buffer we own to fd 1; kill(2) of our own pid. Neither touches
        // memory of ours after the call.
        unsafe {
            libc::write(1, line.as_ptr().cast(), line.len());
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        // SIGKILL cannot be caught; wait for it to land.
        loop {
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::POINTS;

    /// Every name in [`POINTS`] is used by exactly one `kill_point!` in the source, and every
    /// `kill_point!` uses a listed name: the driver rotates through the list, so a point missing
    /// from it would never be targeted, and a listed point never reached would look "not hit".
    #[test]
    fn the_list_matches_the_source() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut used: Vec<String> = Vec::new();
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("kill_point.rs")
                {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for part in text.split("kill_point!(\"").skip(1) {
                        used.push(part.split('"').next().unwrap().to_string());
                    }
                }
            }
        }
        used.sort();
        let mut listed: Vec<String> = POINTS.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(used, listed);
    }
}
