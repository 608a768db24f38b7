//! The checks a tool makes on disk before it creates anything: every tool that writes (db_bench,
//! ibench, sysbench, tpcc, stress and its crash driver, ldb's write commands, report) first
//! parses and checks every flag, then calls these for the paths it will write, and only then
//! takes the database's LOCK and creates files. A refused run therefore leaves nothing behind:
//! no database directory, no results folder, no expected-state file, no report.
//!
//! Contract: these functions only read. They create, change and delete nothing; the one
//! exception is [`not_locked`], which holds a shared lock on an existing `LOCK` file for the
//! instant of its probe (never creating it). Errors are whole sentences naming the flag and the
//! path and saying that nothing was touched. What is left to the steps after them is what cannot
//! be known in advance (a disk that fills, a LOCK another process takes in between).

use std::path::{Path, PathBuf};

/// `Err` if another process (or handle) holds the LOCK of the database in `db`: the check
/// `Db::open` makes, made before the tool creates anything else (a results folder, an
/// expected-state file). A missing directory or `LOCK` passes (nothing holds it). The message
/// starts as the engine's does (`Database locked: ...`).
///
/// The probe takes a shared `flock` on the existing `LOCK` (opened read-only, so it is never
/// created) and drops it at once; a process that opens the database in that same instant
/// fails as it would beside any other holder.
pub fn not_locked(db: &Path) -> Result<(), String> {
    let path = db.join("LOCK");
    let Ok(file) = std::fs::File::open(&path) else { return Ok(()) };
    match file.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "Database locked: {} is held by another process or handle; close it first (nothing \
             was created)",
            path.display()
        )),
        // A file system without locks: the open reports it.
        Err(std::fs::TryLockError::Error(_)) => Ok(()),
    }
}

/// `Err` unless the tool can create directory `dir` (with `create_dir_all`) and write files in
/// it: an existing `dir` must be a writable directory; a missing one needs its nearest existing
/// ancestor to be a writable directory. `flag` names the option (`--results`) in the message.
pub fn output_dir(flag: &str, dir: &Path) -> Result<(), String> {
    let mut at = dir.to_path_buf();
    loop {
        match std::fs::metadata(&at) {
            Ok(m) if m.is_dir() => return writable(flag, dir, &at),
            Ok(_) => {
                return Err(format!(
                    "{flag}={}: {} is not a directory (nothing was created)",
                    dir.display(),
                    at.display()
                ))
            }
            // Missing, or under a file: the ancestors say which.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => {
                return Err(format!("{flag}={}: {}: {e}", dir.display(), at.display()));
            }
        }
        at = parent(&at).ok_or_else(|| format!("{flag}={}: no such directory", dir.display()))?;
    }
}

/// `Err` unless the tool can create or replace file `file`: it must not be a directory, and the
/// directory it is in must exist and be writable (the tool creates no directories for it).
pub fn output_file(flag: &str, file: &Path) -> Result<(), String> {
    if file.is_dir() {
        return Err(format!("{flag}={} is a directory (nothing was written)", file.display()));
    }
    let dir = parent(file).unwrap_or_else(|| PathBuf::from("."));
    if !dir.is_dir() {
        return Err(format!(
            "{flag}={}: directory {} does not exist (nothing was written)",
            file.display(),
            dir.display()
        ));
    }
    writable(flag, file, &dir)
}

/// The directory `p` is in (`.` for a bare name); `None` at the root.
fn parent(p: &Path) -> Option<PathBuf> {
    match p.parent() {
        Some(d) if d.as_os_str().is_empty() => Some(PathBuf::from(".")),
        Some(d) => Some(d.to_path_buf()),
        None => None,
    }
}

/// `Err` unless this process may create entries in directory `dir` (`access(W_OK | X_OK)`,
/// which also sees a read-only mount).
fn writable(flag: &str, given: &Path, dir: &Path) -> Result<(), String> {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return Err(format!("{flag}={}: the path holds a NUL byte", given.display()));
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
        return Ok(());
    }
    Err(format!(
        "{flag}={}: cannot write in {}: {} (nothing was created)",
        given.display(),
        dir.display(),
        std::io::Error::last_os_error()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(output_dir("--results", &d.path().join("a/b/c")).is_ok());
        assert!(output_dir("--results", d.path()).is_ok());
        let e = output_dir("--results", &file.join("sub")).unwrap_err();
        assert!(e.contains("not a directory") && e.contains("--results"), "{e}");
        assert!(output_dir("--results", &file).unwrap_err().contains("not a directory"));
        assert!(output_file("--out", &file).is_ok());
        assert!(output_file("--out", &d.path().join("new.html")).is_ok());
        assert!(output_file("--out", d.path()).unwrap_err().contains("is a directory"));
        let e = output_file("--out", &d.path().join("no/x.html")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        assert!(output_dir("--results", Path::new("relative/dir")).is_ok());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "a check created something");
    }

    #[test]
    fn a_held_lock_is_seen_and_a_free_one_is_not_taken() {
        let d = tempfile::tempdir().unwrap();
        assert!(not_locked(&d.path().join("missing")).is_ok());
        assert!(not_locked(d.path()).is_ok());
        assert!(!d.path().join("LOCK").exists(), "the probe created LOCK");
        let db = talus::Db::open(
            d.path(),
            talus::Options { create_if_missing: true, ..Default::default() },
        )
        .unwrap();
        let e = not_locked(d.path()).unwrap_err();
        assert!(e.starts_with("Database locked") && e.contains("LOCK"), "{e}");
        drop(db);
        assert!(not_locked(d.path()).is_ok());
        // The probe let go: the database opens again.
        drop(talus::Db::open(d.path(), talus::Options::default()).unwrap());
    }
}
