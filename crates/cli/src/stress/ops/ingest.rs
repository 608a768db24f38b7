//! The ingestion op of `talus stress` (RocksDB's db_stress `--ingest_external_file_one_in`):
//! a few keys of a random range written to an SST with `SstFileWriter` (puts and deletes) and
//! ingested with `move_files` (with several column families, keys of one family into that
//! family, `ingest_external_file_cf`), checked like a write batch: the keys are locked and marked
//! pending first and committed in the expected state after the ingestion returns, so a kill in
//! the middle leaves them pending (old or new value, resolved at the next verification).
//!
//! The file is written under `<expected_state>.ingest/` (the tool's own directory beside the
//! expected-state file, never inside the database; without an expected-state file, a directory
//! named after the process under the system's temporary directory); a worker empties it when it
//! starts, since a killed worker may leave a file there.

use std::path::PathBuf;

use rand::Rng;
use talus::{IngestOptions, SstFileWriter};

use super::{db_err, lock_all, Worker};
use crate::stress::value::{key_bytes, make_value};
use crate::stress::Failure;

/// The scratch directory of the ingestion op beside the expected-state file `expected`, or (an
/// expected state in memory only) one under the system's temporary directory named after this
/// process.
pub fn scratch_dir(expected: &Option<PathBuf>) -> PathBuf {
    crate::stress::expected::scratch_beside(expected, "ingest")
}

/// Empties (creating it if needed) the scratch directory: only `*.sst` files this op names.
pub fn reset_scratch(expected: &Option<PathBuf>) -> Result<(), String> {
    let dir = scratch_dir(expected);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("ingest-") && name.ends_with(".sst") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))
}

impl Worker<'_> {
    /// One ingestion of 1 to 16 keys of a random range of up to 64 (see the module doc). The
    /// file is named by seed, thread and `serial` (the thread's op number): two threads once
    /// wrote the same name and one found its file moved away by the other's ingestion.
    pub(super) fn ingest(&mut self, serial: u64) -> Result<(), Failure> {
        let (a, b) = self.range(64);
        let n = self.rng.gen_range(1..=16u64).min(b - a);
        let mut keys: Vec<u64> = (0..n).map(|_| self.rng.gen_range(a..b)).collect();
        keys.sort_unstable();
        keys.dedup();
        // One file goes to one family: the keys of the first one's (all of them with one).
        let family = keys[0] % self.fams.count();
        keys.retain(|&k| self.fams.holds(family, k));
        let path = scratch_dir(&self.cfg.expected_state)
            .join(format!("ingest-{}-{}-{serial}.sst", self.cfg.seed, self.thread));
        let _guards = lock_all(self.exp, &keys);
        let opts = talus::Options::default();
        let mut w = SstFileWriter::open(&path, &opts).map_err(|e| db_err("SstFileWriter", e))?;
        for &k in &keys {
            let put = self.rng.gen_bool(0.8);
            self.exp.begin(k, put).map_err(Failure::Db)?;
            let r = if put {
                let v = self.exp.get(k).version().wrapping_add(1);
                make_value(k, v, self.exp.value_size_max(), &mut self.buf);
                if self.cfg.use_merge {
                    w.merge(key_bytes(k), &self.buf)
                } else {
                    w.put(key_bytes(k), &self.buf)
                }
            } else {
                w.delete(key_bytes(k))
            };
            r.map_err(|e| db_err("SstFileWriter", e))?;
        }
        w.finish().map_err(|e| db_err("SstFileWriter finish", e))?;
        let ingest = IngestOptions { move_files: true, ..IngestOptions::default() };
        let r = match self.fams.of_key(keys[0]) {
            Some(cf) => self.db.ingest_external_file_cf(cf, &[&path], &ingest),
            None => self.db.ingest_external_file(&[&path], &ingest),
        };
        // Moved in on success; on failure it may still be here.
        let _ = std::fs::remove_file(&path);
        r.map_err(|e| db_err("ingest_external_file", e))?;
        for &k in &keys {
            self.exp.commit(k).map_err(Failure::Db)?;
        }
        Ok(())
    }
}
