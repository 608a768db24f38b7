//! Which engine wrote a database directory, told before anything opens it: Talus and RocksDB
//! use the same file names (`CURRENT`, `MANIFEST-*`, `*.sst`, `*.log`), but not the same
//! formats, so a tool that opened one engine's database with the other would at best fail
//! late. Both write an `OPTIONS-NNNNNN` file at every open, whose `[Version]` section names the
//! writer (`talus_version=` or `rocksdb_version=`): the newest one decides.
//!
//! Reads at most [`MAX_OPTIONS_BYTES`] of one file; writes nothing. Called by the openers
//! (`talus_table::open_talus`, the RocksDB backend's `open`) before they touch the directory.

use std::path::Path;

use crate::error::{Result, TableError};

/// The most of an OPTIONS file read to identify its writer.
pub const MAX_OPTIONS_BYTES: u64 = 1 << 20;

/// What a directory holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineFiles {
    /// No OPTIONS file and no `CURRENT`: no database (missing or empty directory, or other files).
    NoDatabase,
    /// A database whose newest OPTIONS file (`file`) was written by `engine` (`talus` or
    /// `rocksdb`) at `version`.
    Written {
        /// `talus` or `rocksdb`.
        engine: &'static str,
        /// The writer's version, as the file gives it.
        version: String,
        /// The OPTIONS file's name.
        file: String,
    },
    /// A `CURRENT` or an OPTIONS file that names neither engine (too old, damaged, another
    /// program's).
    Unknown(String),
}

/// What the files in `dir` say about the engine that wrote them.
pub fn identify(dir: &Path) -> EngineFiles {
    let Ok(rd) = std::fs::read_dir(dir) else { return EngineFiles::NoDatabase };
    let mut newest: Option<(u64, String)> = None;
    let mut current = false;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        current |= name == "CURRENT";
        let Some(n) = name.strip_prefix("OPTIONS-").and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        if newest.as_ref().is_none_or(|(m, _)| n > *m) {
            newest = Some((n, name));
        }
    }
    let Some((_, file)) = newest else {
        return if current {
            EngineFiles::Unknown("a CURRENT file but no OPTIONS file".into())
        } else {
            EngineFiles::NoDatabase
        };
    };
    let text = match read_head(&dir.join(&file)) {
        Ok(t) => t,
        Err(e) => return EngineFiles::Unknown(format!("{file}: {e}")),
    };
    for line in text.lines() {
        let line = line.trim();
        for (key, engine) in [("talus_version=", "talus"), ("rocksdb_version=", "rocksdb")] {
            if let Some(v) = line.strip_prefix(key) {
                return EngineFiles::Written { engine, version: v.trim().to_string(), file };
            }
        }
    }
    EngineFiles::Unknown(format!("{file} names no writer (no talus_version or rocksdb_version)"))
}

fn read_head(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(MAX_OPTIONS_BYTES).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Refuses a directory written by an engine other than `engine` ([`TableError::OtherEngine`],
/// naming both and the file that tells); anything else (no database, this engine's, an
/// unknown one) is left to the engine's own open.
pub fn refuse_other_engine(dir: &Path, engine: &'static str) -> Result<()> {
    match identify(dir) {
        EngineFiles::Written { engine: found, version, file } if found != engine => {
            Err(TableError::OtherEngine {
                dir: dir.display().to_string(),
                found,
                detail: format!("{file} was written by {found} {version}"),
                wanted: engine,
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_options_file_names_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(identify(dir.path()), EngineFiles::NoDatabase);
        assert_eq!(identify(&dir.path().join("missing")), EngineFiles::NoDatabase);
        std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000001\n").unwrap();
        assert!(matches!(identify(dir.path()), EngineFiles::Unknown(_)));
        std::fs::write(dir.path().join("OPTIONS-000005"), "[Version]\n  talus_version=0.1.0\n")
            .unwrap();
        std::fs::write(dir.path().join("OPTIONS-000012"), "[Version]\n  rocksdb_version=10.4.2\n")
            .unwrap();
        std::fs::write(dir.path().join("OPTIONS-000013.dbtmp"), "talus_version=9\n").unwrap();
        let got = identify(dir.path());
        assert_eq!(
            got,
            EngineFiles::Written {
                engine: "rocksdb",
                version: "10.4.2".into(),
                file: "OPTIONS-000012".into()
            }
        );
        assert!(refuse_other_engine(dir.path(), "rocksdb").is_ok());
        let e = refuse_other_engine(dir.path(), "talus").unwrap_err().to_string();
        assert!(e.contains("rocksdb") && e.contains("OPTIONS-000012"), "{e}");
        std::fs::write(dir.path().join("OPTIONS-000020"), "[Version]\n").unwrap();
        assert!(matches!(identify(dir.path()), EngineFiles::Unknown(_)));
        assert!(refuse_other_engine(dir.path(), "talus").is_ok(), "unknown: the engine decides");
    }
}
