//! Where the tools that start from a fresh database (`db_bench` without `--use_existing_db`,
//! `stress --crash`) may do so: a missing or empty directory, or one holding a Talus database
//! (which `talus::destroy_db` then removes: its own files only, after taking its LOCK; it
//! refuses engine-named files that are no readable database). A directory that holds files but
//! no database is someone else's and is refused whole, before anything is touched. With
//! `--engine=rocksdb` the same rule for RocksDB's directory ([`check_rocksdb_destroyable`]),
//! before RocksDB's own `DestroyDB`, which deletes any file named like RocksDB's.

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

/// `Err` unless `path` is missing, holds none of RocksDB's database files, or holds a RocksDB
/// database: `CURRENT` naming a MANIFEST that exists, and RocksDB's `IDENTITY` or an OPTIONS
/// file RocksDB wrote. A Talus database, and RocksDB-named files around no database (a damaged
/// one, or another program's), are refused naming what was found; nothing is touched.
// Called by `--engine=rocksdb` (the `rocksdb` feature); tested in every build.
#[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
pub fn check_rocksdb_destroyable(path: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(path) else { return Ok(()) };
    let names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let rocksdb_named = |n: &&String| {
        let numbered = |ext: &str| {
            n.strip_suffix(ext)
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        };
        n.as_str() == "CURRENT"
            || n.as_str() == "IDENTITY"
            || n.starts_with("MANIFEST-")
            || n.starts_with("OPTIONS-")
            || numbered(".log")
            || numbered(".sst")
            || numbered(".blob")
    };
    let found: Vec<&String> = names.iter().filter(rocksdb_named).collect();
    if found.is_empty() {
        return Ok(());
    }
    let dir = path.display();
    let refuse = |why: String| {
        let mut shown: Vec<&str> = found.iter().take(6).map(|s| s.as_str()).collect();
        shown.sort_unstable();
        Err(format!(
            "{dir} holds {} but {why}; --engine=rocksdb destroys only a RocksDB database, so \
             nothing was touched (remove the files by hand if they are yours to discard)",
            shown.join(", ")
        ))
    };
    let current = match std::fs::read_to_string(path.join("CURRENT")) {
        Ok(c) => c,
        Err(_) => return refuse("no readable CURRENT, so it is no RocksDB database".into()),
    };
    let manifest = current.trim_end_matches('\n');
    if !manifest.starts_with("MANIFEST-") || !path.join(manifest).is_file() {
        return refuse(format!("CURRENT names {manifest:?}, which is not there"));
    }
    let options_by = |needle: &str| {
        names.iter().filter(|n| n.starts_with("OPTIONS-")).any(|n| {
            std::fs::read(path.join(n)).is_ok_and(|b| {
                String::from_utf8_lossy(b.get(..4096).unwrap_or(&b)).contains(needle)
            })
        })
    };
    if options_by("talus_version") {
        return refuse("it is a Talus database (its OPTIONS file says so)".into());
    }
    if !names.iter().any(|n| n == "IDENTITY") && !options_by("rocksdb_version") {
        return refuse("neither an IDENTITY file nor an OPTIONS file RocksDB wrote".into());
    }
    Ok(())
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

    #[test]
    fn only_a_rocksdb_database_is_destroyable_as_rocksdb() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_rocksdb_destroyable(&d.path().join("missing")).is_ok());
        std::fs::write(d.path().join("LOG"), b"x").unwrap();
        assert!(check_rocksdb_destroyable(d.path()).is_ok(), "no RocksDB file: nothing to do");
        std::fs::write(d.path().join("000001.log"), b"app").unwrap();
        let e = check_rocksdb_destroyable(d.path()).unwrap_err();
        assert!(e.contains("000001.log") && e.contains("no readable CURRENT"), "{e}");
        std::fs::write(d.path().join("CURRENT"), b"MANIFEST-000005\n").unwrap();
        let e = check_rocksdb_destroyable(d.path()).unwrap_err();
        assert!(e.contains("not there"), "{e}");
        std::fs::write(d.path().join("MANIFEST-000005"), b"m").unwrap();
        std::fs::write(d.path().join("OPTIONS-000007"), b"[Version]\n  talus_version=0.1\n")
            .unwrap();
        let e = check_rocksdb_destroyable(d.path()).unwrap_err();
        assert!(e.contains("Talus database"), "{e}");
        std::fs::write(d.path().join("OPTIONS-000007"), b"[Version]\n  rocksdb_version=10.4.2\n")
            .unwrap();
        assert!(check_rocksdb_destroyable(d.path()).is_ok());
    }
}
