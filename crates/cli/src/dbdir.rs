//! Where the tools that start from a fresh database (`db_bench` without `--use_existing_db`,
//! `stress --crash`) may do so: a missing or empty directory, or one holding a Talus database
//! (which `talus::destroy_db` then removes: its own files only, after taking its LOCK). A
//! directory that holds files but no database is someone else's and is refused whole, before
//! anything is touched.

use std::path::Path;

/// `Err` naming `path` if it is a directory with entries but none of a database's own files
/// ([`talus::filename::is_database_file`]). A missing path, or a file (which `destroy_db`
/// reports as "not a directory"), passes.
pub fn check_replaceable(path: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(path) else { return Ok(()) };
    let names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    if names.is_empty() || names.iter().any(|n| talus::filename::is_database_file(n)) {
        return Ok(());
    }
    Err(format!(
        "{} holds files but no database; refusing to use it (nothing was touched: pick an empty \
         or new directory, or a database)",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_empty_missing_or_database_directories_pass() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_replaceable(&d.path().join("missing")).is_ok());
        assert!(check_replaceable(d.path()).is_ok(), "empty");
        for n in ["LOG", "LOCK", "server.log", "backup.sst"] {
            std::fs::write(d.path().join(n), b"x").unwrap();
        }
        let e = check_replaceable(d.path()).unwrap_err();
        assert!(e.contains("no database"), "{e}");
        std::fs::write(d.path().join("CURRENT"), b"MANIFEST-000001\n").unwrap();
        assert!(check_replaceable(d.path()).is_ok(), "a database");
    }
}
