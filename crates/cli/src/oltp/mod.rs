//! What `talus sysbench` and `talus tpcc` share: the storage handler interface and its two
//! engines, the engine options, the timed multi-threaded driver and the results files.
//!
//! - `engine`: [`engine::Engine`] / [`engine::Session`], the MySQL-handler-like interface the
//!   benchmarks' statements go through, and [`engine::OltpError`].
//! - `table_engine`: talus-table over Talus or RocksDB (tables, secondary indexes,
//!   snapshot-isolation transactions with first-committer-wins conflicts).
//! - `sqlite_engine` + `sqlite_sql`: SQLite (bundled, WAL), schema and statements generated from
//!   the same table definitions.
//! - `engine_opts`: engine options by RocksDB's names, parsed in one place for both tools.
//! - `checksum`: content checksums of every table and index, equal across engines.
//! - `cpu`: user/system CPU and context switches of the process and of a thread (getrusage).
//! - `driver`: threads, timing, per-interval and total latency histograms and counters.
//! - `results`: `run.json` and CSV files for `talus report`.

pub mod checksum;
pub mod cpu;
pub mod driver;
pub mod engine;
pub mod engine_opts;
pub mod results;
pub mod sqlite_engine;
pub mod sqlite_sql;
pub mod table_engine;

/// Which engine `talus sysbench` and `talus tpcc` drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// Talus through talus-table.
    Talus,
    /// RocksDB through talus-table (a build with the `rocksdb` feature).
    RocksDb,
    /// SQLite (bundled), WAL mode.
    Sqlite,
}

impl EngineKind {
    /// The name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Talus => "talus",
            EngineKind::RocksDb => "rocksdb",
            EngineKind::Sqlite => "sqlite",
        }
    }

    /// Parses `--engine` (`None`: talus); a build without the `rocksdb` feature answers
    /// `--engine=rocksdb` with the feature and the build command.
    pub fn parse(v: Option<&str>) -> Result<EngineKind, String> {
        match v {
            Some("talus") | None => Ok(EngineKind::Talus),
            Some("rocksdb") if cfg!(feature = "rocksdb") => Ok(EngineKind::RocksDb),
            Some("rocksdb") => Err(crate::table_engines::ROCKSDB_NOT_BUILT.to_string()),
            Some("sqlite") => Ok(EngineKind::Sqlite),
            Some(v) => Err(crate::options::bad("engine", v, "talus, rocksdb or sqlite")),
        }
    }
}

/// sysbench spells flags with dashes (`--table-size`) and booleans `on`/`off`; both spellings
/// mean the same here.
pub fn normalize_args(args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| match a.strip_prefix("--") {
            Some(rest) => {
                let (n, v) = rest.split_once('=').map_or((rest, None), |(n, v)| (n, Some(v)));
                let n = n.replace('-', "_");
                let v = match v {
                    Some("on") => Some("true"),
                    Some("off") => Some("false"),
                    v => v,
                };
                match v {
                    Some(v) => format!("--{n}={v}"),
                    None => format!("--{n}"),
                }
            }
            None => a.clone(),
        })
        .collect()
}
