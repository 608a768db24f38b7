//! Copies of the database that `talus stress` makes (checkpoints and backups, RocksDB's
//! db_stress `--checkpoint_one_in` and `--backup_one_in`) and how they are judged: the scratch
//! directory they live in, the check of a copy against bounds from the expected state
//! ([`check_copy`]), and, at the start of a worker run, the check of whatever a killed run left
//! behind ([`check_leftovers`]).
//!
//! A copy holds the database as it was at one moment, a prefix of the writes, in every
//! column family (`--column_families`: the copy is opened with all of them and each key is
//! looked for in its own family). Read with no
//! exact moment known, each key of a copy must hold a state the key had at some time between a
//! lower bound (the expected state read before the copy began: committed versions) and an
//! upper bound (read after it returned: versions plus a pending write), which also holds
//! nothing outside the key space and only self-checking values. A copy a kill left behind is
//! judged against the expected state after the restart's verification (an upper bound only: it
//! was taken before the kill, so it is a prefix of what the database holds now).
//!
//! The scratch directory is `<expected_state>.copies` beside the expected-state file (the
//! tool's own; never inside the database), or, with the expected state in memory, one named
//! after the process under the system's temporary directory (removed when the run ends). Only
//! entries of this tool's naming are ever removed: `ckpt-*` (checkpoints, `*.tmp` when a kill
//! interrupted one, `*.del` while one is being removed), `restore-*` (restored backups) and
//! `backup` (the backup directory, only if it holds the backup engine's marker or nothing).
//!
//! Called by the worker (`stress::worker`) after its startup verification, by the workload's
//! copy ops (`ops/copy.rs`), and by `setup::replace` when the database is replaced.

use std::path::{Path, PathBuf};

use talus::{BackupEngine, ColumnFamilyDescriptor, Db, ReadOptions};

use super::config::Config;
use super::expected::{ExpectedState, Slot};
use super::families::Families;
use super::value::{check_value, key_id};
use super::Failure;

/// The backup directory's name inside the scratch directory.
pub const BACKUP_DIR: &str = "backup";
/// The file that marks a backup directory (`talus::backup`'s marker).
const BACKUP_MARKER: &str = "TALUS-BACKUP";

/// The scratch directory of the copy ops (see the module doc).
pub fn scratch_dir(expected: &Option<PathBuf>) -> PathBuf {
    super::expected::scratch_beside(expected, "copies")
}

/// Whether `name` is an entry of this tool's naming in the scratch directory.
fn ours(dir: &Path, name: &str) -> bool {
    if name.starts_with("ckpt-") || name.starts_with("restore-") {
        return true;
    }
    if name == BACKUP_DIR {
        let b = dir.join(name);
        return b.join(BACKUP_MARKER).exists()
            || std::fs::read_dir(&b).is_ok_and(|mut rd| rd.next().is_none());
    }
    false
}

/// Removes every entry of this tool's naming from the scratch directory `dir` (and `dir`
/// itself if that leaves it empty); nothing else.
pub fn reset(dir: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ours(dir, &name) {
            remove(&e.path())?;
        }
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// Removes `path` (a directory tree of this tool's naming, or a file). A directory is first
/// renamed to `NAME.del`, so a kill in the middle of the removal never leaves a half-removed
/// copy under a complete copy's name (a kill at the timer once left a checkpoint without its
/// `CURRENT` but with its tables, which the next run then judged as a damaged checkpoint).
pub fn remove(path: &Path) -> Result<(), String> {
    let gone = |r: std::io::Result<()>| match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", path.display())),
    };
    if !path.is_dir() {
        return gone(std::fs::remove_file(path));
    }
    if path.extension().is_some_and(|e| e == "del") {
        return gone(std::fs::remove_dir_all(path));
    }
    let mut del = path.as_os_str().to_os_string();
    del.push(".del");
    let del = PathBuf::from(del);
    gone(std::fs::remove_dir_all(&del))?;
    gone(std::fs::rename(path, &del))?;
    gone(std::fs::remove_dir_all(&del))
}

/// Every key's expected state now (one atomic read per key; writers may be running).
pub fn read_slots(exp: &ExpectedState) -> Vec<Slot> {
    (0..exp.max_key()).map(|k| exp.get(k)).collect()
}

/// Opens the copy in `dir` read-only with the run's options and every one of its families.
pub fn open_copy(dir: &Path, cfg: &Config) -> Result<(Db, Families), Failure> {
    let opts = cfg.db_options().map_err(Failure::Usage)?;
    let fail =
        |e: talus::Error| Failure::Verify(format!("opening the copy {}: {e}", dir.display()));
    let n = cfg.column_families;
    let descs = (1..n).map(|i| ColumnFamilyDescriptor::new(i.to_string(), opts.clone()));
    let db = Db::open_cf_read_only(dir, opts.clone(), descs).map_err(fail)?;
    let fams = Families::of(&db, n).map_err(fail)?;
    Ok((db, fams))
}

/// Every key of `copy` with the version its value holds, ascending, read family by family:
/// each key must lie in the key space, in its own family, with a self-checking value.
fn scan(
    copy: &Db,
    fams: &Families,
    max_key: u64,
    value_size_max: usize,
    fail: &dyn Fn(String) -> Failure,
) -> Result<Vec<(u64, u32)>, Failure> {
    let mut found = Vec::new();
    for f in 0..fams.count() {
        let mut it = fams
            .raw_iter(copy, f, &ReadOptions::default())
            .map_err(|e| fail(format!("family {f}: {e}")))?;
        it.seek_to_first();
        while it.valid() {
            let k = key_id(it.key())
                .filter(|&k| k < max_key)
                .ok_or_else(|| fail(format!("a key outside the key space: {:?}", it.key())))?;
            if !fams.holds(f, k) {
                return Err(fail(format!("key {k} is in family {f}, not its own")));
            }
            let v = check_value(k, it.value(), value_size_max)
                .map_err(|e| fail(format!("key {k}: bad value: {e}")))?;
            found.push((k, v));
            it.next();
        }
        it.status().map_err(|e| fail(format!("scan of family {f}: {e}")))?;
    }
    // Each family's keys come ascending; a key lives in one family only.
    found.sort_unstable_by_key(|&(k, _)| k);
    Ok(found)
}

/// Checks every key of `copy` in every family of `fams` (see the module doc): with `lower`,
/// each key's state must lie between `lower` (committed states) and `upper` (versions plus
/// pending writes), a key that no write touched in between must hold exactly its state, and a
/// key whose state was present throughout must be present; without, only the upper bound
/// applies. Returns the number of keys present. `what` names the copy in a failure.
pub fn check_copy(
    copy: &Db,
    fams: &Families,
    lower: Option<&[Slot]>,
    upper: &[Slot],
    value_size_max: usize,
    what: &str,
) -> Result<u64, Failure> {
    let fail = |m: String| Failure::Verify(format!("{what}: {m}"));
    let max_key = upper.len() as u64;
    let found = scan(copy, fams, max_key, value_size_max, &fail)?;
    let mut next_absent = 0u64;
    let mut present = 0u64;
    for at in 0..=found.len() {
        let found = found.get(at).copied();
        // The keys the scan stepped over are absent from the copy.
        let upto = found.map_or(max_key, |(k, _)| k);
        if upto < next_absent {
            return Err(fail(format!("key {upto} is present twice")));
        }
        if let Some(lower) = lower {
            for k in next_absent..upto {
                if let (Some(lo), Some(hi)) = (lower.get(k as usize), upper.get(k as usize)) {
                    if untouched(*lo, *hi) && lo.exists() {
                        return Err(fail(format!(
                            "key {k} is missing: it held version {} throughout",
                            lo.version()
                        )));
                    }
                }
            }
        }
        let Some((k, v)) = found else { break };
        let hi = upper.get(k as usize).copied().unwrap_or(Slot::new(0, false));
        let newest = hi.version().wrapping_add(u32::from(hi.pending()));
        if v > newest {
            return Err(fail(format!(
                "key {k} holds version {v}, newer than any write ({newest})"
            )));
        }
        if let Some(lo) = lower.and_then(|l| l.get(k as usize)) {
            if v < lo.version() || (v == lo.version() && !lo.exists()) {
                return Err(fail(format!(
                    "key {k} holds version {v}, older than the state acknowledged before the copy \
                     began ({} {})",
                    if lo.exists() { "version" } else { "absent at version" },
                    lo.version()
                )));
            }
            if untouched(*lo, hi) && v != lo.version() {
                return Err(fail(format!("key {k} holds version {v}, not {}", lo.version())));
            }
        }
        present += 1;
        next_absent = k + 1;
    }
    Ok(present)
}

/// True if no write touched the key between its state `lo` and its state `hi`.
fn untouched(lo: Slot, hi: Slot) -> bool {
    !lo.pending() && !hi.pending() && lo.version() == hi.version()
}

/// Checks and removes what a killed run left in the scratch directory (see the module doc),
/// printing one `stress: copies left:` line. `exp` must be exact (after the startup
/// verification). Does nothing without an expected-state file (a new process has no
/// leftovers).
pub fn check_leftovers(exp: &ExpectedState, cfg: &Config) -> Result<(), Failure> {
    if cfg.expected_state.is_none() {
        return Ok(());
    }
    let dir = scratch_dir(&cfg.expected_state);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(()) };
    let mut names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let upper = read_slots(exp);
    let vsm = exp.value_size_max();
    let (mut checkpoints, mut partial, mut restores, mut backups) = (0u32, 0u32, 0u32, 0usize);
    for name in names.iter().filter(|n| ours(&dir, n)) {
        let path = dir.join(name);
        if name.starts_with("ckpt-") && !name.ends_with(".tmp") && !name.ends_with(".del") {
            // Complete (renamed into place): it must open and be a prefix of the database.
            let (copy, fams) = open_copy(&path, cfg)?;
            let what = format!("checkpoint {name} left by a kill");
            check_copy(&copy, &fams, None, &upper, vsm, &what)?;
            drop(copy);
            checkpoints += 1;
        } else if name.starts_with("ckpt-") {
            partial += 1;
        } else if name.starts_with("restore-") {
            restores += 1;
        } else {
            backups = check_backups(&path, &dir, &upper, cfg, vsm)?;
            continue;
        }
        remove(&path).map_err(Failure::Db)?;
    }
    println!(
        "stress: copies left: checkpoints={checkpoints} (opened, each a prefix) \
         interrupted_checkpoints={partial} restores={restores} backups={backups} (verified, \
         the newest restored and a prefix)"
    );
    Ok(())
}

/// Opens the backup directory `path` (which removes what an interrupted backup left), verifies
/// every backup and restores the newest into the scratch directory `dir`, checked as a prefix.
fn check_backups(
    path: &Path,
    dir: &Path,
    upper: &[Slot],
    cfg: &Config,
    vsm: usize,
) -> Result<usize, Failure> {
    let verr = |m: String| Failure::Verify(format!("backups left by a kill: {m}"));
    let engine = BackupEngine::open(path).map_err(|e| verr(format!("open: {e}")))?;
    let infos = engine.get_backup_info().map_err(|e| verr(format!("list: {e}")))?;
    for i in &infos {
        engine
            .verify_backup(i.backup_id)
            .map_err(|e| verr(format!("verify {}: {e}", i.backup_id)))?;
    }
    if let Some(last) = infos.last() {
        // A kill during an earlier run of this check may have left either name.
        let to = dir.join("restore-leftover");
        remove(&to).map_err(Failure::Db)?;
        remove(&dir.join("restore-leftover.tmp")).map_err(Failure::Db)?;
        engine
            .restore_db_from_backup(last.backup_id, &to)
            .map_err(|e| verr(format!("restore {}: {e}", last.backup_id)))?;
        let (copy, fams) = open_copy(&to, cfg)?;
        let what = format!("backup {} left by a kill", last.backup_id);
        check_copy(&copy, &fams, None, upper, vsm, &what)?;
        drop(copy);
        remove(&to).map_err(Failure::Db)?;
    }
    Ok(infos.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_entries_are_reset() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("x.copies");
        std::fs::create_dir_all(s.join("ckpt-1-0-5/sub")).unwrap();
        std::fs::create_dir_all(s.join("ckpt-1-0-6.tmp")).unwrap();
        std::fs::create_dir_all(s.join("ckpt-1-0-7.del")).unwrap();
        std::fs::create_dir_all(s.join("ckpt-1-0-8")).unwrap();
        std::fs::write(s.join("ckpt-1-0-8/CURRENT"), b"x").unwrap();
        remove(&s.join("ckpt-1-0-8")).unwrap();
        assert!(!s.join("ckpt-1-0-8").exists() && !s.join("ckpt-1-0-8.del").exists());
        std::fs::create_dir_all(s.join(BACKUP_DIR)).unwrap();
        std::fs::write(s.join(BACKUP_DIR).join(BACKUP_MARKER), b"").unwrap();
        std::fs::write(s.join("notes.txt"), b"mine").unwrap();
        std::fs::create_dir_all(s.join("other")).unwrap();
        reset(&s).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&s)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["notes.txt", "other"]);
        // A `backup` directory without the marker that holds something is not ours.
        std::fs::create_dir_all(s.join(BACKUP_DIR)).unwrap();
        std::fs::write(s.join(BACKUP_DIR).join("f"), b"").unwrap();
        reset(&s).unwrap();
        assert!(s.join(BACKUP_DIR).join("f").exists());
    }

    /// A database holding `(key, version)` values.
    fn db_with(dir: &Path, keys: &[(u64, u32)]) -> Db {
        let opts = talus::Options { create_if_missing: true, ..Default::default() };
        let db = Db::open(dir, opts).unwrap();
        let mut buf = Vec::new();
        for &(k, v) in keys {
            crate::stress::value::make_value(k, v, 32, &mut buf);
            db.put(crate::stress::value::key_bytes(k), &buf).unwrap();
        }
        db
    }

    fn verdict(db: &Db, lower: Option<&[Slot]>, upper: &[Slot]) -> Result<u64, String> {
        let fams = Families::of(db, 1).unwrap();
        check_copy(db, &fams, lower, upper, 32, "copy").map_err(|f| format!("{f:?}"))
    }

    #[test]
    fn a_copy_is_judged_between_its_bounds() {
        let d = tempfile::tempdir().unwrap();
        // Keys 0..4: 0 at version 3, 2 at version 5; 1 and 3 absent.
        let db = db_with(d.path(), &[(0, 3), (2, 5)]);
        let s = Slot::new;
        // Nothing written during the copy: exact states.
        let exact = [s(3, true), s(1, false), s(5, true), s(0, false)];
        assert_eq!(verdict(&db, Some(&exact), &exact), Ok(2));
        // Key 1 was present throughout: its absence is a loss.
        let held = [s(3, true), s(2, true), s(5, true), s(0, false)];
        let e = verdict(&db, Some(&held), &held).unwrap_err();
        assert!(e.contains("key 1 is missing"), "{e}");
        // So is the last key's (the tail after the scan ends).
        let tail = [s(3, true), s(1, false), s(5, true), s(4, true)];
        assert!(verdict(&db, Some(&tail), &tail).unwrap_err().contains("key 3 is missing"));
        // Key 2 at version 5 when only version 4 was ever written: wrong.
        let older = [s(3, true), s(1, false), s(4, true), s(0, false)];
        assert!(verdict(&db, Some(&older), &older).unwrap_err().contains("newer than any"));
        // ... but a write pending at the end may have landed.
        let pending = [s(3, true), s(1, false), s(4, true).with_pending(true), s(0, false)];
        assert_eq!(verdict(&db, Some(&older), &pending), Ok(2));
        // Key 0 at version 3 although version 4 was acknowledged before the copy began.
        let newer = [s(4, true), s(1, false), s(5, true), s(0, false)];
        assert!(verdict(&db, Some(&newer), &newer).unwrap_err().contains("older than"));
        // Key 0's version 3 was a delete: a value of version 3 cannot be.
        let deleted = [s(3, false), s(1, false), s(5, true), s(0, false)];
        assert!(verdict(&db, Some(&deleted), &deleted).unwrap_err().contains("older than"));
        // Writes during the copy: any state between the bounds, absent included.
        let lo = [s(2, true), s(0, false), s(4, true), s(0, false)];
        let hi = [s(6, false), s(3, true), s(5, true), s(1, true)];
        assert_eq!(verdict(&db, Some(&lo), &hi), Ok(2));
        // A copy left by a kill: upper bound only.
        assert_eq!(verdict(&db, None, &hi), Ok(2));
        assert!(verdict(&db, None, &older).unwrap_err().contains("newer than any"));
        // A key outside the key space, and a value of another key.
        assert!(verdict(&db, None, &hi[..2]).unwrap_err().contains("outside the key space"));
        let mut buf = Vec::new();
        crate::stress::value::make_value(0, 3, 32, &mut buf);
        db.put(crate::stress::value::key_bytes(1), &buf).unwrap();
        assert!(verdict(&db, None, &hi).unwrap_err().contains("bad value"));
    }
}
