//! The storage engines under the table tools (`ibench`, `sysbench`, `tpcc` with
//! `--engine=talus|rocksdb`): one opener per talus-table [`Storage`] ([`OpenStorage`]), the
//! answer of a build without the `rocksdb` feature ([`ROCKSDB_NOT_BUILT`]), and the report of
//! the options comparison the RocksDB opener makes (printed, and both OPTIONS texts saved beside
//! the results).
//!
//! Every engine option reaches both engines by RocksDB's name: the tools build one
//! [`talus::Options`] from the options layer; Talus opens with it, and the RocksDB backend
//! passes each option under its RocksDB name and refuses, before writing anything, options
//! whose RocksDB values differ from Talus's unless `--accept_option_diff` names them
//! (talus-table's `storage::rocksdb`). A directory the other engine wrote is refused by name
//! with nothing written (talus-table's `storage::identify`).

use std::path::Path;

use talus_table::storage::options_diff::OptionsReport;
use talus_table::{Db, Storage};

/// What `--engine=rocksdb` answers in a build without the feature.
pub const ROCKSDB_NOT_BUILT: &str = "--engine=rocksdb needs a talus built with the `rocksdb` \
     cargo feature (RocksDB 10.4.2 compiled from source, about 25 minutes on 2 cores): cargo \
     build --release -p talus-cli --features rocksdb (or bench/build_rocksdb_adapter.sh, with \
     RocksDB's own platform flags)";

/// A talus-table storage the tools can open from a directory and Talus's options.
pub trait OpenStorage: Storage {
    /// Opens the database at `dir` with `o` (`o.create_if_missing` decides whether it may be
    /// created); `accept` names options whose values may differ between the engines. Also
    /// returns the options comparison, for an engine that makes one.
    fn open_for(
        dir: &Path,
        o: &talus::Options,
        accept: &[String],
    ) -> Result<(Self, Option<OptionsReport>), String>;
}

impl OpenStorage for Db {
    fn open_for(
        dir: &Path,
        o: &talus::Options,
        _accept: &[String],
    ) -> Result<(Db, Option<OptionsReport>), String> {
        let db = talus_table::open_talus(dir, o.clone())
            .map_err(|e| format!("talus: open {}: {e}", dir.display()))?;
        Ok((db, None))
    }
}

#[cfg(feature = "rocksdb")]
impl OpenStorage for talus_table::storage::rocksdb::RocksDb {
    fn open_for(
        dir: &Path,
        o: &talus::Options,
        accept: &[String],
    ) -> Result<(Self, Option<OptionsReport>), String> {
        let db = Self::open(dir, o, accept)
            .map_err(|e| format!("rocksdb: open {}: {e}", dir.display()))?;
        let report = db.options_report().clone();
        Ok((db, Some(report)))
    }
}

/// The summary line of an options comparison, with one line per accepted difference.
pub fn options_lines(r: &OptionsReport) -> Vec<String> {
    let c = &r.comparison;
    let mut out = vec![format!(
        "options: {} RocksDB options compared with Talus's OPTIONS file, {} accepted \
         difference(s)",
        c.compared,
        c.diffs.len()
    )];
    out.extend(c.lines("talus", "rocksdb"));
    out
}

/// Writes both OPTIONS texts into `dir` (`OPTIONS-talus`, `OPTIONS-rocksdb`).
pub fn save_options(dir: &Path, r: &OptionsReport) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, text) in [("OPTIONS-talus", &r.talus), ("OPTIONS-rocksdb", &r.rocksdb)] {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// Prints `tool: options: ...` for an engine that compared options at open, and saves both
/// OPTIONS texts into `results` when given.
pub fn announce(
    tool: &str,
    r: Option<&OptionsReport>,
    results: Option<&Path>,
) -> Result<(), String> {
    let Some(r) = r else { return Ok(()) };
    for line in options_lines(r) {
        println!("{tool}: {line}");
    }
    match results {
        Some(dir) => save_options(dir, r),
        None => Ok(()),
    }
}

/// `--accept_option_diff=a,b`: the option names, empty ones dropped.
pub fn accept_list(v: Option<&str>) -> Vec<String> {
    v.unwrap_or("").split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}
