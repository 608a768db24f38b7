//! Options of a `talus stress` worker run: parsed from the command line ([`Config::from_args`]),
//! turned into `talus::Options` ([`Config::db_options`]) and, by the crash driver, back into a
//! command line for a child process ([`Config::to_args`]).
//!
//! The names a worker accepts and its `--help` text are in `spec.rs` (re-exported here).

use std::path::PathBuf;

use talus::{CompactionStyle, CompressionType, Options, WalRecoveryMode};

use crate::options::{engine, Parsed};

mod spec;

use spec::FIELDS;
pub use spec::{SPEC, USAGE};

/// Everything one worker run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Database directory.
    pub db: PathBuf,
    /// Expected-state file (outside the database directory); `None`: kept in memory for the
    /// run only (as db_stress without `--expected_values_dir`).
    pub expected_state: Option<PathBuf>,
    /// Replace the database (and remove the expected-state file) before the run: `talus
    /// stress`'s `--destroy_db_initially`, default true without `--expected_state` (the state
    /// then starts empty, so the database must too) and false with one (the file describes
    /// the database).
    pub destroy_db_initially: bool,
    /// Workload threads.
    pub threads: usize,
    /// Keys are ids `0..max_key`.
    pub max_key: u64,
    /// Operations per thread before the run ends.
    pub ops_per_thread: u64,
    /// Seconds before the run ends.
    pub duration: u64,
    /// Seed of every random choice.
    pub seed: u64,
    /// Stop after the first verification.
    pub verify_only: bool,
    /// Writes use `sync=true`.
    pub sync: bool,
    /// Puts are written as merge operands (db_stress's `--use_merge`), merged by the `put`
    /// operator the database always has.
    pub use_merge: bool,
    /// Writes use `disable_wal=true`.
    pub disable_wal: bool,
    /// After a `sync=0` run, require every acknowledged write (a process crash loses none);
    /// with 0 accept any older valid version.
    pub strict_unsynced: bool,
    /// Largest filler after the 12-byte value prefix; only used when the expected-state file
    /// is created (it is stored there, since values are checked against it).
    pub value_size_max: usize,
    /// Op mix in percent: get, put, delete, delete_range, batch, iterator, snapshot.
    pub mix: [u32; 7],
    /// Keys in one delete_range, at most.
    pub max_delrange: u64,
    /// Each thread verifies a chunk of keys every this many ops (0: never).
    pub verify_every: u64,
    /// One op in this many is a flush (0: never).
    pub flush_one_in: u64,
    /// One op in this many is a compact_range over a random range (0: never).
    pub compact_range_one_in: u64,
    /// One op in this many ingests an external SST of a few keys (0: never).
    pub ingest_one_in: u64,
    /// One op in this many makes a checkpoint and checks it (0: never; db_stress's name).
    pub checkpoint_one_in: u64,
    /// One op in this many makes a backup, verifies, restores and checks it (0: never).
    pub backup_one_in: u64,
    /// Column families (db_stress's `--column_families`): key K lives in family K % N.
    pub column_families: usize,
    /// Whitebox kill points (`talus-cli` built with `--features kill-points`): each pass at an
    /// armed point kills the worker with odds 1 in this (0: none armed).
    pub kill_random_test: u64,
    /// The kill points armed, by name prefix (empty: all).
    pub kill_points: Vec<String>,
    /// The database options below.
    pub compression: CompressionType,
    /// `block_size`.
    pub block_size: usize,
    /// `write_buffer_size`.
    pub write_buffer_size: usize,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: usize,
    /// `bloom_bits_per_key`.
    pub bloom_bits: u32,
    /// `block_cache_capacity`.
    pub cache_size: usize,
    /// `target_file_size_base`.
    pub target_file_size_base: u64,
    /// `max_bytes_for_level_base`.
    pub max_bytes_for_level_base: u64,
    /// `level0_file_num_compaction_trigger`.
    pub l0_trigger: usize,
    /// `max_background_jobs`.
    pub max_background_jobs: usize,
    /// `compaction_style`.
    pub compaction_style: CompactionStyle,
    /// `max_subcompactions`.
    pub max_subcompactions: usize,
    /// `cache_type`.
    pub cache_type: talus::options::CacheType,
    /// `intra_l0_compaction`.
    pub intra_l0_compaction: bool,
    /// `max_open_files`.
    pub max_open_files: i64,
    /// `wal_recovery_mode`.
    pub wal_recovery_mode: WalRecoveryMode,
    /// `use_direct_reads`.
    pub use_direct_reads: bool,
    /// `use_direct_io_for_flush_and_compaction`.
    pub direct_writes: bool,
    /// `index_type`.
    pub index_type: talus::IndexType,
    /// `partition_filters` (only with the two-level index).
    pub partition_filters: bool,
    /// `metadata_block_size`.
    pub metadata_block_size: usize,
    /// `checksum` (the block checksum, and so the format version, of new tables).
    pub checksum: talus::ChecksumType,
    /// `--workload=table`: the table-layer workload (`table.rs`) instead of key-value ops.
    pub table_workload: bool,
    /// `--options_file`, `--options`, `--ignore_unknown_options` and the engine options not in
    /// the fields above, as given (`name`, `value`; applied before the fields, respectively
    /// after them: see [`Config::db_options`]).
    pub extra: Vec<(String, String)>,
}

/// Names of the op mix entries, in `Config::mix` order.
pub const MIX_NAMES: [&str; 7] = [
    "readpercent",
    "writepercent",
    "delpercent",
    "delrangepercent",
    "batchpercent",
    "iterpercent",
    "snapshotpercent",
];

impl Config {
    /// Defaults for database `db` with expected state `expected_state` (`None`: in memory).
    pub fn new(db: PathBuf, expected_state: Option<PathBuf>) -> Config {
        Config {
            db,
            destroy_db_initially: expected_state.is_none(),
            expected_state,
            threads: 8,
            max_key: 100_000,
            ops_per_thread: 1_000_000_000,
            duration: 60,
            seed: 1,
            verify_only: false,
            sync: true,
            use_merge: false,
            disable_wal: false,
            strict_unsynced: true,
            value_size_max: 100,
            mix: [25, 30, 10, 5, 10, 15, 5],
            max_delrange: 10,
            verify_every: 2000,
            flush_one_in: 2000,
            compact_range_one_in: 10_000,
            ingest_one_in: 5_000,
            checkpoint_one_in: 0,
            backup_one_in: 0,
            column_families: 1,
            kill_random_test: 0,
            kill_points: Vec::new(),
            compression: CompressionType::Lz4,
            block_size: 4096,
            write_buffer_size: 4 << 20,
            max_write_buffer_number: 2,
            bloom_bits: 10,
            cache_size: 32 << 20,
            target_file_size_base: 2 << 20,
            max_bytes_for_level_base: 8 << 20,
            l0_trigger: 4,
            max_background_jobs: 2,
            compaction_style: CompactionStyle::Level,
            max_subcompactions: 1,
            cache_type: talus::options::CacheType::LruCache,
            intra_l0_compaction: true,
            max_open_files: -1,
            wal_recovery_mode: WalRecoveryMode::PointInTimeRecovery,
            use_direct_reads: false,
            direct_writes: false,
            index_type: talus::IndexType::BinarySearch,
            partition_filters: false,
            metadata_block_size: 4096,
            checksum: talus::ChecksumType::Xxh3,
            table_workload: false,
            extra: Vec::new(),
        }
    }

    /// Parses a worker's command line (checked against [`SPEC`] already).
    pub fn from_args(p: &Parsed) -> Result<Config, String> {
        let db = p.value("db").ok_or("--db=DIR is required")?;
        let exp = p.value("expected_state").map(PathBuf::from);
        let mut c = Config::new(PathBuf::from(db), exp);
        c.destroy_db_initially = p.flag_or("destroy_db_initially", c.destroy_db_initially);
        let num = |name: &str, d: u64| -> Result<u64, String> { Ok(p.number(name)?.unwrap_or(d)) };
        let small = |name: &str, d: usize| -> Result<usize, String> {
            usize::try_from(num(name, d as u64)?).map_err(|_| format!("{name} is too large"))
        };
        c.threads = small("threads", c.threads)?.max(1);
        c.max_key = num("max_key", c.max_key)?;
        if c.max_key == 0 || c.max_key > 1 << 28 {
            return Err("--max_key must be between 1 and 2^28".into());
        }
        c.ops_per_thread = num("ops_per_thread", c.ops_per_thread)?;
        c.duration = num("duration", c.duration)?;
        c.seed = num("seed", c.seed)?;
        c.verify_only = p.flag("verify_only");
        c.sync = p.flag_or("sync", c.sync);
        c.use_merge = p.flag_or("use_merge", c.use_merge);
        c.disable_wal = p.flag_or("disable_wal", c.disable_wal);
        c.strict_unsynced = p.flag_or("strict_unsynced", c.strict_unsynced);
        c.value_size_max = small("value_size_max", c.value_size_max)?.min(1 << 20);
        for (i, name) in MIX_NAMES.iter().enumerate() {
            c.mix[i] = u32::try_from(num(name, u64::from(c.mix[i]))?)
                .map_err(|_| format!("{name} is too large"))?;
        }
        let sum: u32 = c.mix.iter().sum();
        if sum != 100 {
            return Err(format!(
                "the op percentages ({}) add up to {sum}, not 100",
                MIX_NAMES.join(", ")
            ));
        }
        c.max_delrange = num("max_delrange", c.max_delrange)?.max(1);
        c.verify_every = num("verify_every", c.verify_every)?;
        c.flush_one_in = num("flush_one_in", c.flush_one_in)?;
        c.compact_range_one_in = num("compact_range_one_in", c.compact_range_one_in)?;
        c.ingest_one_in = num("ingest_one_in", c.ingest_one_in)?;
        c.checkpoint_one_in = num("checkpoint_one_in", c.checkpoint_one_in)?;
        c.backup_one_in = num("backup_one_in", c.backup_one_in)?;
        c.column_families = small("column_families", c.column_families)?;
        if !(1..=64).contains(&c.column_families) {
            return Err("--column_families must be between 1 and 64".into());
        }
        c.kill_random_test = num("kill_random_test", c.kill_random_test)?;
        c.kill_points = super::kill::parse_points(p.value("kill_points"))?;
        for name in p.names() {
            let layer = crate::options::LAYER_FLAGS.contains(&name.as_str());
            if layer || (!FIELDS.contains(&name.as_str()) && engine::find(name).is_some()) {
                c.extra.push((name.clone(), p.value(name).unwrap_or("true").to_string()));
            }
        }
        let o = crate::options::engine_options(p, c.db_options()?, &[])?;
        c.set_fields(&o);
        c.table_workload = parse_workload(p.value("workload"))?;
        if c.table_workload && c.column_families > 1 {
            return Err("--workload=table runs with one column family only".into());
        }
        Ok(c)
    }

    /// Copies the engine options this configuration keeps as fields (`spec::FIELDS`) from `o`.
    pub fn set_fields(&mut self, o: &Options) {
        let c = self;
        c.compression = o.compression;
        c.block_size = o.block_size;
        c.write_buffer_size = o.write_buffer_size;
        c.max_write_buffer_number = o.max_write_buffer_number;
        c.bloom_bits = o.bloom_bits_per_key;
        c.cache_size = o.block_cache_capacity;
        c.target_file_size_base = o.target_file_size_base;
        c.max_bytes_for_level_base = o.max_bytes_for_level_base;
        c.l0_trigger = o.level0_file_num_compaction_trigger;
        c.max_background_jobs = o.max_background_jobs;
        c.compaction_style = o.compaction_style;
        c.max_subcompactions = o.max_subcompactions;
        c.cache_type = o.cache_type;
        c.intra_l0_compaction = o.intra_l0_compaction;
        c.max_open_files = o.max_open_files;
        c.wal_recovery_mode = o.wal_recovery_mode;
        c.use_direct_reads = o.use_direct_reads;
        c.direct_writes = o.use_direct_io_for_flush_and_compaction;
        c.index_type = o.index_type;
        c.partition_filters = o.partition_filters;
        c.metadata_block_size = o.metadata_block_size;
        c.checksum = o.checksum;
    }

    /// The database options of this run: `--options_file` and `--options` first, then the
    /// fields, then the other engine options given (all checked when parsed; the OPTIONS file
    /// is read again, so an error names it).
    pub fn db_options(&self) -> Result<Options, String> {
        let mut base = Options::default();
        let layer = |n: &str| crate::options::LAYER_FLAGS.contains(&n);
        let ignore = self.extra.iter().any(|(n, v)| {
            n == "ignore_unknown_options" && crate::options::gflags::parse_bool(v) == Some(true)
        });
        for (name, value) in self.extra.iter().filter(|(n, _)| layer(n)) {
            match name.as_str() {
                "options_file" => {
                    crate::options::apply_file(&mut base, value, ignore)?;
                }
                "options" => crate::options::apply_string(&mut base, value)?,
                _ => {}
            }
        }
        let mut o = Options {
            create_if_missing: true,
            compression: self.compression,
            block_size: self.block_size,
            write_buffer_size: self.write_buffer_size,
            max_write_buffer_number: self.max_write_buffer_number,
            bloom_bits_per_key: self.bloom_bits,
            block_cache_capacity: self.cache_size,
            target_file_size_base: self.target_file_size_base,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            level0_file_num_compaction_trigger: self.l0_trigger,
            max_background_jobs: self.max_background_jobs,
            compaction_style: self.compaction_style,
            max_subcompactions: self.max_subcompactions,
            cache_type: self.cache_type,
            intra_l0_compaction: self.intra_l0_compaction,
            max_open_files: self.max_open_files,
            wal_recovery_mode: self.wal_recovery_mode,
            use_direct_reads: self.use_direct_reads,
            use_direct_io_for_flush_and_compaction: self.direct_writes,
            index_type: self.index_type,
            partition_filters: self.partition_filters,
            metadata_block_size: self.metadata_block_size,
            checksum: self.checksum,
            // Always: operands written by an earlier run with --use_merge stay readable.
            merge_operator: talus::merge::builtin_by_name("put"),
            ..base
        };
        for (name, value) in self.extra.iter().filter(|(n, _)| !layer(n)) {
            engine::set(&mut o, name, value)?;
        }
        Ok(o)
    }

    /// The command line (after `stress`) that makes a worker run with this configuration.
    pub fn to_args(&self) -> Vec<String> {
        let b = |v: bool| u8::from(v).to_string();
        let mut a = vec![
            format!("--db={}", self.db.display()),
            format!("--destroy_db_initially={}", b(self.destroy_db_initially)),
            format!("--threads={}", self.threads),
            format!("--max_key={}", self.max_key),
            format!("--ops_per_thread={}", self.ops_per_thread),
            format!("--duration={}", self.duration),
            format!("--seed={}", self.seed),
            format!("--sync={}", b(self.sync)),
            format!("--use_merge={}", b(self.use_merge)),
            format!("--disable_wal={}", b(self.disable_wal)),
            format!("--strict_unsynced={}", b(self.strict_unsynced)),
            format!("--value_size_max={}", self.value_size_max),
            format!("--max_delrange={}", self.max_delrange),
            format!("--verify_every={}", self.verify_every),
            format!("--flush_one_in={}", self.flush_one_in),
            format!("--compact_range_one_in={}", self.compact_range_one_in),
            format!("--ingest_one_in={}", self.ingest_one_in),
            format!("--checkpoint_one_in={}", self.checkpoint_one_in),
            format!("--backup_one_in={}", self.backup_one_in),
            format!("--column_families={}", self.column_families),
            format!("--compression={}", compression_name(self.compression)),
            format!("--block_size={}", self.block_size),
            format!("--write_buffer_size={}", self.write_buffer_size),
            format!("--max_write_buffer_number={}", self.max_write_buffer_number),
            format!("--bloom_bits={}", self.bloom_bits),
            format!("--cache_size={}", self.cache_size),
            format!("--target_file_size_base={}", self.target_file_size_base),
            format!("--max_bytes_for_level_base={}", self.max_bytes_for_level_base),
            format!("--level0_file_num_compaction_trigger={}", self.l0_trigger),
            format!("--max_background_jobs={}", self.max_background_jobs),
            format!(
                "--compaction_style={}",
                match self.compaction_style {
                    CompactionStyle::Universal => "universal",
                    _ => "level",
                }
            ),
            format!("--max_subcompactions={}", self.max_subcompactions),
            format!(
                "--cache_type={}",
                match self.cache_type {
                    talus::options::CacheType::HyperClockCache => "hyper_clock_cache",
                    _ => "lru_cache",
                }
            ),
            format!("--intra_l0_compaction={}", b(self.intra_l0_compaction)),
            format!("--max_open_files={}", self.max_open_files),
            format!("--wal_recovery_mode={}", self.wal_recovery_mode.name()),
            format!("--use_direct_reads={}", b(self.use_direct_reads)),
            format!("--use_direct_io_for_flush_and_compaction={}", b(self.direct_writes)),
            format!(
                "--index_type={}",
                if self.index_type == talus::IndexType::TwoLevelIndexSearch { 2 } else { 0 }
            ),
            format!("--partition_filters={}", b(self.partition_filters)),
            format!("--metadata_block_size={}", self.metadata_block_size),
            format!("--checksum={}", self.checksum.rocksdb_name()),
        ];
        if let Some(e) = &self.expected_state {
            a.push(format!("--expected_state={}", e.display()));
        }
        for (name, v) in MIX_NAMES.iter().zip(self.mix) {
            a.push(format!("--{name}={v}"));
        }
        if self.verify_only {
            a.push("--verify_only".into());
        }
        if self.table_workload {
            a.push("--workload=table".into());
        }
        if self.kill_random_test > 0 {
            a.push(format!("--kill_random_test={}", self.kill_random_test));
            a.push(format!("--kill_points={}", self.kill_points.join(",")));
        }
        for (name, value) in &self.extra {
            a.push(format!("--{name}={value}"));
        }
        a
    }

    /// The options a person reading a cycle line wants to see.
    pub fn brief(&self) -> String {
        format!(
            "sync={} use_merge={} disable_wal={} compression={} block_size={} write_buffer_size={} \
             bloom_bits={} cache_size={} cache_type={:?} max_open_files={} jobs={} \
             subcompactions={} intra_l0={} style={:?} wal_recovery={} direct_reads={} \
             direct_writes={} index={} partition_filters={} metadata_block_size={} checksum={}",
            u8::from(self.sync),
            u8::from(self.use_merge),
            u8::from(self.disable_wal),
            self.compression.name(),
            self.block_size,
            self.write_buffer_size,
            self.bloom_bits,
            self.cache_size,
            self.cache_type,
            self.max_open_files,
            self.max_background_jobs,
            self.max_subcompactions,
            u8::from(self.intra_l0_compaction),
            self.compaction_style,
            self.wal_recovery_mode.name(),
            u8::from(self.use_direct_reads),
            u8::from(self.direct_writes),
            self.index_type.name(),
            u8::from(self.partition_filters),
            self.metadata_block_size,
            self.checksum.name(),
        )
    }
}

fn compression_name(c: CompressionType) -> &'static str {
    match c {
        CompressionType::None => "none",
        CompressionType::Snappy => "snappy",
        CompressionType::Lz4 => "lz4",
        CompressionType::Zstd => "zstd",
    }
}

/// `--workload=kv|table` (default kv): true for the table workload.
pub fn parse_workload(v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("kv") => Ok(false),
        Some("table") => Ok(true),
        Some(other) => Err(format!("workload: unknown workload {other:?} (kv or table)")),
    }
}

#[cfg(test)]
mod tests;

impl Config {
    /// Changes the configuration so that the kill point `point` is reached within a cycle (the
    /// driver's rotation, [`super::kill`]).
    pub fn steer_to(&mut self, point: &str) {
        if point.starts_with("wal.sync") {
            self.sync = true;
            self.disable_wal = false;
        }
        if point.starts_with("wal.") {
            self.disable_wal = false;
        }
        if point == "direct.tail_written" {
            self.direct_writes = true;
        }
        if point.starts_with("ingest.") {
            self.ingest_one_in = 50;
        }
        if point.starts_with("checkpoint.") {
            self.checkpoint_one_in = 100;
        }
        if point.starts_with("backup.") {
            self.backup_one_in = 100;
        }
        if point.starts_with("flush.")
            || point.starts_with("compaction.")
            || point.starts_with("wal.switch")
            || point.starts_with("wal.prepare")
            || point.starts_with("manifest.append")
            || point == "obsolete.deleting"
        {
            self.write_buffer_size = self.write_buffer_size.min(256 << 10);
            self.l0_trigger = self.l0_trigger.min(2);
            self.flush_one_in = self.flush_one_in.min(500);
        }
    }
}
