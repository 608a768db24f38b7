//! What a `talus stress` run checks, and replaces, before it opens the database: called by a
//! worker run ([`prepare_worker`]) and by the crash driver ([`check_expected`], [`replace`])
//! after every flag is parsed, so a refused run creates nothing.
//!
//! Order, for both: (1) read the expected-state file, if one is named (never written here: it
//! must be missing, empty or a whole expected-state file, made for the same `--max_key` unless
//! it is about to be replaced); (2) with `--destroy_db_initially`, refuse a directory that
//! holds files but no database ([`crate::dbdir::check_replaceable`]), then remove the database
//! with `talus::destroy_db` (which takes the LOCK first: a database another process holds is
//! refused untouched) and only then the expected-state file. Without it, a run with no
//! expected-state file refuses a directory that already holds a database: its in-memory state
//! starts empty and could not judge the keys there. The LOCK of a database that stays is taken
//! by the worker's `Db::open`, before the expected-state file is created. (The crash driver
//! checks its directory once, before it replaces the database: after that, the workers' own
//! database may sit beside other files, which `destroy_db` left.)

use std::path::Path;

use super::config::Config;
use super::expected;
use super::Failure;

/// Checks `cfg`'s expected-state file and database and, with `destroy_db_initially`, replaces
/// them (see the module documentation). Errors are refusals ([`Failure::Usage`]) except a
/// failing `destroy_db` ([`Failure::Db`], the lock error among them).
pub fn prepare_worker(cfg: &Config) -> Result<(), Failure> {
    if let Some(p) = &cfg.expected_state {
        check_expected(p, cfg.max_key, cfg.destroy_db_initially).map_err(Failure::Usage)?;
        crate::precheck::output_file("--expected_state", p).map_err(Failure::Usage)?;
    }
    if cfg.destroy_db_initially {
        crate::dbdir::check_replaceable(&cfg.db).map_err(Failure::Usage)?;
        return replace(&cfg.db, cfg.expected_state.as_deref()).map_err(Failure::Db);
    }
    if cfg.expected_state.is_none() && holds_database(&cfg.db) {
        return Err(Failure::Usage(format!(
            "{} holds a database, and without --expected_state the run keeps its expected state \
             in memory, starting empty: give --expected_state=FILE for a database made with \
             one, or --destroy_db_initially=1 to replace it (nothing was touched)",
            cfg.db.display()
        )));
    }
    Ok(())
}

/// `Ok` if the expected-state file at `path` may be used for `max_key` keys, or (`replacing`)
/// removed: missing, empty, or a whole expected-state file (made for `max_key` unless
/// `replacing`). Reads only; whether its directory exists is the caller's check.
pub fn check_expected(path: &Path, max_key: u64, replacing: bool) -> Result<(), String> {
    let what = |e: String| format!("--expected_state={}: {e}", path.display());
    match expected::inspect(path).map_err(what)? {
        Some(h) if !replacing && h.max_key != max_key => Err(format!(
            "--expected_state={} was made for --max_key={}, not {max_key}: use the same value \
             (nothing was touched)",
            path.display(),
            h.max_key
        )),
        _ => Ok(()),
    }
}

/// Removes the database in `db` with `talus::destroy_db` (LOCK first; the engine's files only),
/// then the expected-state file `expected` (only if it is one) and the checkpoints and backups
/// beside it (`copies::reset`: the tool's names only). Call after the checks above.
pub fn replace(db: &Path, expected: Option<&Path>) -> Result<(), String> {
    talus::destroy_db(db, &talus::Options::default())
        .map_err(|e| format!("destroying {}: {e}", db.display()))?;
    match expected {
        Some(p) => {
            expected::remove(p)?;
            // The checkpoints and backups made from the old database (this tool's names only).
            super::copies::reset(&super::copies::scratch_dir(&Some(p.to_path_buf())))
        }
        None => Ok(()),
    }
}

/// Whether `db` is a directory holding any of a database's own files.
fn holds_database(db: &Path) -> bool {
    std::fs::read_dir(db).is_ok_and(|rd| {
        rd.flatten().any(|e| e.file_name().to_str().is_some_and(talus::filename::is_database_file))
    })
}
