//! `talus ibench` flags: parsed and fully validated before anything touches `--db` (the step
//! order too: [`super::step_order`]).
//!
//! Owns [`Config`] and [`parse`]. Called once by [`super::run`]. Every error names the flag it is
//! about (`invalid value "x" for flag --num: ...`, `Invalid command-line flag bogus`). Engine
//! options use RocksDB's names and Talus's defaults, and reach `--engine=talus` and
//! `--engine=rocksdb` alike (the same talus-table layer over either; see
//! [`crate::table_engines`]); with `--engine=sqlite` only `--cache_size` (the page cache, in
//! bytes, shared by the connections open at once), `--sync` (`synchronous=FULL` instead of
//! `NORMAL`) and the device caps `--io_limit_*` (a throttled VFS: [`super::sqlite_vfs`]) apply,
//! the rest are recorded in `run.json` only. `--sync` and `--disable_wal` are
//! the `WriteOptions` of every row write.

use crate::options::{bad, Parsed, Spec};

/// Which engine the benchmark drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// Talus through the talus-table layer.
    Talus,
    /// RocksDB through the same talus-table layer (a build with the `rocksdb` feature).
    RocksDb,
    /// SQLite (bundled), one database file per table, WAL mode.
    Sqlite,
}

impl EngineKind {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Talus => "talus",
            EngineKind::RocksDb => "rocksdb",
            EngineKind::Sqlite => "sqlite",
        }
    }
}

pub use super::step_order::Step;

impl Config {
    /// How many tables the run has: one per client, or one shared.
    pub fn tables(&self) -> usize {
        if self.shared_table {
            1
        } else {
            self.clients
        }
    }

    /// The table client `c` writes and queries.
    pub fn table_of(&self, client: usize) -> usize {
        if self.shared_table {
            0
        } else {
            client
        }
    }
}

/// Secondary indexes the schema defines (`schema::INDEXES`, which checks it at compile time).
pub const MAX_SECONDARY_INDEXES: usize = 3;

/// Everything the benchmark was asked to do.
#[derive(Clone)]
pub struct Config {
    /// Engine under test.
    pub engine: EngineKind,
    /// Database directory.
    pub db: std::path::PathBuf,
    /// Steps in the order they run.
    pub steps: Vec<Step>,
    /// Rows per client for l.i0.
    pub num: u64,
    /// Rows per client for l.i1.
    pub num_i1: u64,
    /// Rows per client for l.i2.
    pub num_i2: u64,
    /// Rows l.i2 deletes from the PK tail per row it inserts.
    pub deletes_per_insert_i2: u64,
    /// Seconds per query step.
    pub seconds: f64,
    /// Clients; each has its own table, or all share table 0 (`shared_table`).
    pub clients: usize,
    /// All clients insert into one table (post 003's one collection) instead of one each.
    pub shared_table: bool,
    /// The first secondary index is UNIQUE (see [`super::schema::index_specs`]).
    pub unique_index: bool,
    /// Options whose values may differ between Talus and RocksDB (`--engine=rocksdb`).
    pub accept_option_diff: Vec<String>,
    /// Where to keep interval and summary data.
    pub results: Option<std::path::PathBuf>,
    /// Rows per insert commit.
    pub rows_per_commit: usize,
    /// Distinct cash register ids.
    pub cashregisters: i32,
    /// Distinct product ids.
    pub products: i32,
    /// Distinct customer ids.
    pub customers: i32,
    /// Prices are in `0..max_price`.
    pub max_price: i32,
    /// Length of the data column.
    pub data_length: usize,
    /// Fraction of the data column that is random (the rest is one repeated byte).
    pub data_random: f64,
    /// Seconds between interval lines.
    pub interval: f64,
    /// In l.i1 and the q steps, delete as many rows from the PK tail as are inserted.
    pub delete_per_insert: bool,
    /// Seed for the row and query generators.
    pub seed: u64,
    /// Block cache (talus) or page cache (sqlite) bytes (`--cache_size`).
    pub cache_size: u64,
    /// The talus engine's options: Talus's defaults, then `--options_file`, `--options` and
    /// every engine option given (see [`crate::options`]).
    pub db_options: talus::Options,
    /// Engine options given on the command line (`name`, `value`), for run.json.
    pub engine_args: Vec<(String, String)>,
    /// fsync each commit.
    pub sync: bool,
    /// Skip the WAL (talus).
    pub disable_wal: bool,
    /// Sort memory for l.x's external sort (talus).
    pub sort_memory_bytes: u64,
    /// Secondary indexes l.x creates, l.i1 maintains and the q steps query (0 to 3: the first
    /// N of marketsegment, registersegment, pdc).
    pub secondary_indexes: usize,
    /// Every this many milliseconds, drop the page cache of the files under `--db`
    /// (`posix_fadvise(POSIX_FADV_DONTNEED)`) after measuring what it held (0: off); see
    /// [`super::pagecache`].
    pub drop_page_cache_ms: u64,
    /// Partitioned index and filters: `kTwoLevelIndexSearch` + `partition_filters` (talus;
    /// also settable as `--index_type=kTwoLevelIndexSearch --partition_filters`).
    pub partition_index_and_filters: bool,
}

const VALUES: &[&str] = &[
    "engine",
    "db",
    "steps",
    "num",
    "num_i1",
    "num_i2",
    "seconds",
    "clients",
    "results",
    "rows_per_commit",
    "cashregisters",
    "products",
    "customers",
    "max_price",
    "data_length",
    "data_random",
    "interval",
    "seed",
    "sort_memory_bytes",
    "secondary_indexes",
    "drop_page_cache_ms",
    "deletes_per_insert_i2",
    "accept_option_diff",
];
const FLAGS: &[&str] = &[
    "delete_per_insert",
    "sync",
    "disable_wal",
    "help",
    "partition_index_and_filters",
    "shared_table",
    "unique_index",
];

/// The `--help` text.
pub const HELP: &str = "\
usage: talus ibench --engine=talus|rocksdb|sqlite --db=DIR [options]

  --engine=rocksdb      RocksDB 10.4.2 under the same table layer (a build with --features rocksdb)
  --steps=l.i0,l.x,l.i1,q100,q500   steps to run, in order (also l.i2, q1000, and check: a
                        checksum of every table and index, equal across engines for one
                        --seed): l.i0 first (it creates the tables), l.x before the steps
                        that use the indexes
  --num=1000000         rows per client loaded by l.i0 (PK order, no secondary index)
  --num_i1=100000       rows per client inserted by l.i1 (the secondary indexes maintained)
  --num_i2=10000        rows per client inserted by l.i2, which deletes
  --deletes_per_insert_i2=2  rows from the PK tail per row inserted
  --secondary_indexes=3 secondary indexes l.x creates (0-3; q steps need at least 1)
  --seconds=60          seconds per query step
  --clients=1           clients; each has its own table
  --shared_table        all clients insert into one table (post 003) instead of one each
  --unique_index        l.x makes the first index UNIQUE (every insert reads to check it)
  --accept_option_diff=a,b  with --engine=rocksdb, options that may differ from Talus's
  --results=DIR         keep run.json, summary.csv and <step>.intervals.csv here
  --rows_per_commit=1000  --cashregisters=1000  --products=10000  --customers=100000
  --max_price=500  --data_length=10  --data_random=0.5  --interval=1  --seed=0
  --delete_per_insert   l.i1 and q steps delete as many rows from the PK tail as they insert
  --drop_page_cache_ms=0  every N ms measure, then drop (POSIX_FADV_DONTNEED), the page cache
                        of the files under --db (both engines; bounds SQLite's OS cache)
--sync / --disable_wal: the WriteOptions of every row write (talus: through talus-table;
sqlite: synchronous=FULL for --sync)   --partition_index_and_filters
--sort_memory_bytes=67108864 (l.x's external sort)
every talus engine option by RocksDB's name (Talus's defaults) is accepted: see below.
with --engine=sqlite only --cache_size (page cache bytes), --sync and --io_limit_* apply.
";

fn num<T: std::str::FromStr>(p: &Parsed, name: &str, default: T, what: &str) -> Result<T, String> {
    match p.value(name) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| bad(name, v, what)),
    }
}

fn positive(p: &Parsed, name: &str, default: u64) -> Result<u64, String> {
    let v: u64 = num(p, name, default, "a positive integer")?;
    if v == 0 {
        return Err(bad(name, "0", "a positive integer"));
    }
    Ok(v)
}

fn positive_i32(p: &Parsed, name: &str, default: i32) -> Result<i32, String> {
    let v: i32 = num(p, name, default, "a positive 32-bit integer")?;
    if v <= 0 {
        return Err(bad(name, &v.to_string(), "a positive 32-bit integer"));
    }
    Ok(v)
}

fn seconds(p: &Parsed, name: &str, default: f64) -> Result<f64, String> {
    let v: f64 = num(p, name, default, "a positive number of seconds")?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad(name, p.value(name).unwrap_or(""), "a positive number of seconds"));
    }
    Ok(v)
}

/// Parses and validates `args`; `Ok(None)` means `--help` was asked for.
pub fn parse(args: &[String]) -> Result<Option<Config>, String> {
    let mut p = Parsed::parse(args);
    p.check(&Spec { values: VALUES, flags: FLAGS, engine: true })?;
    if let Some(w) = p.positional.first() {
        return Err(format!("unexpected argument {w:?} (options are --name=value)"));
    }
    if p.flag("help") {
        return Ok(None);
    }
    let engine = match p.value("engine") {
        Some("talus") | None => EngineKind::Talus,
        Some("rocksdb") if cfg!(feature = "rocksdb") => EngineKind::RocksDb,
        Some("rocksdb") => return Err(crate::table_engines::ROCKSDB_NOT_BUILT.to_string()),
        Some("sqlite") => EngineKind::Sqlite,
        Some(v) => return Err(bad("engine", v, "talus, rocksdb or sqlite")),
    };
    let db = match p.value("db") {
        Some(d) if !d.is_empty() => std::path::PathBuf::from(d),
        _ => return Err("flag --db is required (--db=DIR)".into()),
    };
    let steps_s = p.value("steps").unwrap_or("l.i0,l.x,l.i1,q100,q500");
    let mut steps = Vec::new();
    for s in steps_s.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        steps.push(Step::parse(s).ok_or_else(|| {
            bad("steps", s, "a list of l.i0, l.x, l.i1, l.i2, q100, q500, q1000")
        })?);
    }
    if steps.is_empty() {
        return Err(bad("steps", steps_s, "at least one step"));
    }
    let data_random: f64 = num(&p, "data_random", 0.5, "a fraction in [0, 1]")?;
    if !(0.0..=1.0).contains(&data_random) {
        return Err(bad("data_random", &data_random.to_string(), "a fraction in [0, 1]"));
    }
    let mut db_options = crate::options::engine_options(&p, talus::Options::default(), &[])?;
    if p.flag("partition_index_and_filters") {
        db_options.index_type = talus::IndexType::TwoLevelIndexSearch;
        db_options.partition_filters = true;
    }
    let engine_args: Vec<(String, String)> = p
        .names()
        .iter()
        .filter(|n| {
            crate::options::engine::find(n).is_some()
                || crate::options::LAYER_FLAGS.contains(&n.as_str())
        })
        .map(|n| (n.clone(), p.value(n).unwrap_or("true").to_string()))
        .collect();
    let clients = positive(&p, "clients", 1)?;
    if clients > 1024 {
        return Err(bad("clients", &clients.to_string(), "at most 1024"));
    }
    let rows_per_commit = positive(&p, "rows_per_commit", 1000)?;
    let data_length: u64 = num(&p, "data_length", 10, "a length in bytes")?;
    if data_length > 1 << 20 {
        return Err(bad("data_length", &data_length.to_string(), "at most 1048576"));
    }
    let mut cfg = Config {
        engine,
        db,
        steps,
        num: num(&p, "num", 1_000_000, "a number of rows")?,
        num_i1: num(&p, "num_i1", 100_000, "a number of rows")?,
        num_i2: num(&p, "num_i2", 10_000, "a number of rows")?,
        deletes_per_insert_i2: num(&p, "deletes_per_insert_i2", 2, "a number of rows")?,
        seconds: seconds(&p, "seconds", 60.0)?,
        clients: clients as usize,
        shared_table: p.flag("shared_table"),
        unique_index: p.flag("unique_index"),
        accept_option_diff: crate::table_engines::accept_list(p.value("accept_option_diff")),
        results: p.value("results").map(std::path::PathBuf::from),
        rows_per_commit: rows_per_commit as usize,
        cashregisters: positive_i32(&p, "cashregisters", 1000)?,
        products: positive_i32(&p, "products", 10_000)?,
        customers: positive_i32(&p, "customers", 100_000)?,
        max_price: positive_i32(&p, "max_price", 500)?,
        data_length: data_length as usize,
        data_random,
        interval: seconds(&p, "interval", 1.0)?,
        delete_per_insert: p.flag("delete_per_insert"),
        seed: num(&p, "seed", 0, "an unsigned integer")?,
        cache_size: db_options.block_cache_capacity as u64,
        db_options,
        engine_args,
        sync: p.flag("sync"),
        disable_wal: p.flag("disable_wal"),
        sort_memory_bytes: positive(&p, "sort_memory_bytes", 64 << 20)?,
        secondary_indexes: num(&p, "secondary_indexes", 3usize, "0, 1, 2 or 3")?,
        drop_page_cache_ms: num(&p, "drop_page_cache_ms", 0, "milliseconds")?,
        partition_index_and_filters: p.flag("partition_index_and_filters"),
    };
    if cfg.secondary_indexes > MAX_SECONDARY_INDEXES {
        return Err(bad("secondary_indexes", &cfg.secondary_indexes.to_string(), "0, 1, 2 or 3"));
    }
    super::step_order::check(&cfg.steps, cfg.secondary_indexes, None)?;
    // Only l.i0 makes a database; every other list opens the one in --db, whatever an OPTIONS
    // file says.
    cfg.db_options.create_if_missing = cfg.steps.contains(&Step::LoadI0);
    if cfg.engine == EngineKind::Sqlite {
        // The page cache and the device caps (a throttled VFS) apply; the rest is recorded.
        let applies = |n: &str| n == "cache_size" || n.starts_with("io_limit_");
        for (name, _) in cfg.engine_args.iter().filter(|(n, _)| !applies(n)) {
            eprintln!("ibench: --{name} does not apply to --engine=sqlite (recorded only)");
        }
        for name in [
            "disable_wal",
            "sort_memory_bytes",
            "partition_index_and_filters",
            "accept_option_diff",
        ] {
            if p.has(name) {
                eprintln!("ibench: --{name} does not apply to --engine=sqlite (recorded only)");
            }
        }
    }
    Ok(Some(cfg))
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(describe(self)).finish()
    }
}

/// The options as (name, value) pairs, for run.json.
pub fn describe(c: &Config) -> Vec<(&'static str, String)> {
    let steps: Vec<String> = c.steps.iter().map(|s| s.name()).collect();
    vec![
        ("engine", c.engine.name().into()),
        ("db", c.db.display().to_string()),
        ("steps", steps.join(",")),
        ("num", c.num.to_string()),
        ("num_i1", c.num_i1.to_string()),
        ("num_i2", c.num_i2.to_string()),
        ("deletes_per_insert_i2", c.deletes_per_insert_i2.to_string()),
        ("seconds", c.seconds.to_string()),
        ("clients", c.clients.to_string()),
        ("shared_table", c.shared_table.to_string()),
        ("unique_index", c.unique_index.to_string()),
        ("rows_per_commit", c.rows_per_commit.to_string()),
        ("cashregisters", c.cashregisters.to_string()),
        ("products", c.products.to_string()),
        ("customers", c.customers.to_string()),
        ("max_price", c.max_price.to_string()),
        ("data_length", c.data_length.to_string()),
        ("data_random", c.data_random.to_string()),
        ("interval", c.interval.to_string()),
        ("delete_per_insert", c.delete_per_insert.to_string()),
        ("seed", c.seed.to_string()),
        ("cache_size", c.cache_size.to_string()),
        ("compression_type", c.db_options.compression.name().into()),
        ("write_buffer_size", c.db_options.write_buffer_size.to_string()),
        ("max_write_buffer_number", c.db_options.max_write_buffer_number.to_string()),
        ("compaction_style", format!("{:?}", c.db_options.compaction_style).to_lowercase()),
        ("max_background_jobs", c.db_options.max_background_jobs.to_string()),
        ("max_subcompactions", c.db_options.max_subcompactions.to_string()),
        ("intra_l0_compaction", c.db_options.intra_l0_compaction.to_string()),
        (
            "level0_file_num_compaction_trigger",
            c.db_options.level0_file_num_compaction_trigger.to_string(),
        ),
        ("level0_slowdown_writes_trigger", c.db_options.level0_slowdown_writes_trigger.to_string()),
        ("level0_stop_writes_trigger", c.db_options.level0_stop_writes_trigger.to_string()),
        ("cache_type", c.db_options.cache_type.name().into()),
        ("estimated_entry_charge", c.db_options.estimated_entry_charge.to_string()),
        ("bloom_bits", c.db_options.bloom_bits_per_key.to_string()),
        ("block_size", c.db_options.block_size.to_string()),
        ("target_file_size_base", c.db_options.target_file_size_base.to_string()),
        ("max_bytes_for_level_base", c.db_options.max_bytes_for_level_base.to_string()),
        ("sync", c.sync.to_string()),
        ("disable_wal", c.disable_wal.to_string()),
        ("sort_memory_bytes", c.sort_memory_bytes.to_string()),
        ("secondary_indexes", c.secondary_indexes.to_string()),
        ("drop_page_cache_ms", c.drop_page_cache_ms.to_string()),
        ("use_direct_reads", c.db_options.use_direct_reads.to_string()),
        (
            "use_direct_io_for_flush_and_compaction",
            c.db_options.use_direct_io_for_flush_and_compaction.to_string(),
        ),
        ("partition_index_and_filters", c.partition_index_and_filters.to_string()),
        ("cache_index_and_filter_blocks", c.db_options.cache_index_and_filter_blocks.to_string()),
        ("metadata_block_size", c.db_options.metadata_block_size.to_string()),
        ("compaction_readahead_size", c.db_options.compaction_readahead_size.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_and_steps() {
        let c = parse(&args(&["--db=/x", "--steps=l.i0,l.x,q1000"])).unwrap().unwrap();
        assert_eq!(c.engine, EngineKind::Talus);
        assert_eq!(c.steps, vec![Step::LoadI0, Step::CreateIndexes, Step::Query(1000)]);
        assert!(c.db_options.create_if_missing, "l.i0 creates the database");
        let c = parse(&args(&["--db=/x", "--steps=q100", "--create_if_missing"])).unwrap().unwrap();
        assert!(!c.db_options.create_if_missing, "only l.i0 creates the database");
        assert_eq!(c.rows_per_commit, 1000);
        assert_eq!(c.customers, 100_000);
        assert_eq!(Step::Query(500).name(), "q500");
    }

    #[test]
    fn errors_name_the_flag() {
        for (a, want) in [
            ("--bogus=1", "bogus"),
            ("--num=ten", "--num"),
            ("--steps=l.i0,q7", "--steps"),
            ("--engine=mysql", "--engine"),
            ("--data_random=2", "--data_random"),
            ("--compression_type=brotli", "--compression_type"),
            ("--interval=0", "--interval"),
            ("--clients=0", "--clients"),
            ("--compaction_style=fifo", "--compaction_style"),
            ("--secondary_indexes=4", "--secondary_indexes"),
            ("--drop_page_cache_ms=x", "--drop_page_cache_ms"),
        ] {
            let e = parse(&args(&["--db=/x", a])).unwrap_err();
            assert!(e.contains(want), "{a}: {e}");
        }
        assert!(parse(&args(&["--num=1"])).unwrap_err().contains("--db"));
        // A build without the feature names it and the command that builds it.
        let e = parse(&args(&["--db=/x", "--engine=rocksdb"]));
        if cfg!(feature = "rocksdb") {
            assert_eq!(e.unwrap().unwrap().engine, EngineKind::RocksDb);
        } else {
            let e = e.unwrap_err();
            assert!(
                e.contains("`rocksdb` cargo feature") && e.contains("--features rocksdb"),
                "{e}"
            );
        }
        let e = parse(&args(&["--db=/x", "--secondary_indexes=0", "--steps=l.i0,q100"]));
        assert!(e.unwrap_err().contains("--secondary_indexes"));
        let c = parse(&args(&["--db=/x", "--secondary_indexes=0", "--steps=l.i0,l.x,l.i1"]));
        assert_eq!(c.unwrap().unwrap().secondary_indexes, 0);
    }
}
