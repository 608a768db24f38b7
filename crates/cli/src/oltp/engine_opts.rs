//! Engine options for `talus sysbench` and `talus tpcc`, parsed in this one place (to be folded
//! into the common options layer of issue 14).
//!
//! Reuses db_bench's flags: every engine option in [`VALUES`]/[`FLAGS`] is db_bench's flag of
//! that name, parsed by db_bench's own parser (`Flags::set`: gflags syntax, booleans `true`,
//! `false`, `1`, `0`, `yes`, `no`) and mapped onto [`talus::Options`] by db_bench's
//! `talus_engine::options`. Three defaults differ from db_bench's (which are RocksDB's
//! db_bench defaults) and follow Talus's and MyRocks's: `--compression_type=lz4`,
//! `--bloom_bits=10`, `--cache_size=33554432`. Two options db_bench does not have yet are
//! parsed here: `--compression_per_level` (RocksDB's list, `kLZ4Compression:kZSTD` or
//! `lz4,zstd`; the last entry applies to deeper levels) and `--bottommost_compression`.
//!
//! SQLite uses only `--cache_size` (its page cache, divided among the connections open at
//! once); the rest are recorded in the results. Everything is validated by
//! [`talus::Options::validate`] before the caller touches a database directory; an error names
//! the flag.

use talus::{CompressionType, Options};

use crate::db_bench::engines::talus_engine;
use crate::db_bench::flags::Flags;
use crate::options::Parsed;

/// Engine options that take a value (db_bench's names, plus the two per-level ones).
pub const VALUES: &[&str] = &[
    "cache_size",
    "cache_type",
    "cache_numshardbits",
    "bloom_bits",
    "block_size",
    "compression_type",
    "compression_per_level",
    "bottommost_compression",
    "write_buffer_size",
    "max_write_buffer_number",
    "level0_file_num_compaction_trigger",
    "level0_slowdown_writes_trigger",
    "level0_stop_writes_trigger",
    "max_bytes_for_level_base",
    "max_bytes_for_level_multiplier",
    "target_file_size_base",
    "num_levels",
    "compaction_style",
    "max_background_jobs",
    "open_files",
    "max_subcompactions",
    "delayed_write_rate",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit",
    "rate_limiter_bytes_per_sec",
    "wal_bytes_per_sync",
];

/// Boolean engine options (`--name`, `--name=true|false|1|0|yes|no`).
pub const FLAGS: &[&str] = &[
    "cache_index_and_filter_blocks",
    "level_compaction_dynamic_level_bytes",
    "intra_l0_compaction",
    "disable_auto_compactions",
];

/// The help text for the engine options.
pub const HELP: &str = "\
engine options (RocksDB/db_bench names; Talus defaults: --compression_type=lz4 --bloom_bits=10
--cache_size=33554432; the rest as `talus db_bench --help`): --cache_size --cache_type
--cache_numshardbits --bloom_bits --block_size --compression_type
--compression_per_level=kLZ4Compression:kZSTD --bottommost_compression=zstd --write_buffer_size
--max_write_buffer_number --level0_file_num_compaction_trigger --level0_slowdown_writes_trigger
--level0_stop_writes_trigger --max_bytes_for_level_base --max_bytes_for_level_multiplier
--target_file_size_base --num_levels --compaction_style=0|1 --max_background_jobs --open_files
--max_subcompactions --delayed_write_rate --soft_pending_compaction_bytes_limit
--hard_pending_compaction_bytes_limit --rate_limiter_bytes_per_sec --wal_bytes_per_sync
--cache_index_and_filter_blocks --level_compaction_dynamic_level_bytes --intra_l0_compaction
--disable_auto_compactions. With --engine=sqlite only --cache_size applies (page cache bytes).
";

/// The parsed engine options.
#[derive(Debug, Clone)]
pub struct EngineOpts {
    /// Talus's options (without `create_if_missing`, which the opener decides).
    pub talus: Options,
    /// Block cache (Talus) or page cache (SQLite) bytes.
    pub cache_size: u64,
    /// The engine options given on the command line, `(name, value)`, in order.
    pub given: Vec<(String, String)>,
}

fn compression(name: &str, v: &str) -> Result<CompressionType, String> {
    CompressionType::parse(v.trim()).map_err(|_| {
        format!("invalid value {v:?} for flag --{name}: expected none, snappy, lz4 or zstd")
    })
}

/// RocksDB's `compression_per_level` list: entries separated by `:` (or `,`).
fn per_level(v: &str) -> Result<Vec<CompressionType>, String> {
    v.split([':', ','])
        .filter(|s| !s.trim().is_empty())
        .map(|s| compression("compression_per_level", s))
        .collect()
}

impl EngineOpts {
    /// Reads the engine options from `p` (already checked against a spec that includes
    /// [`VALUES`] and [`FLAGS`]) and validates them.
    pub fn parse(p: &Parsed) -> Result<EngineOpts, String> {
        let mut f = Flags {
            compression_type: "lz4".into(),
            bloom_bits: 10,
            cache_size: 32 << 20,
            ..Flags::default()
        };
        let mut given = Vec::new();
        let mut compression_per_level = Vec::new();
        let mut bottommost = None;
        for name in VALUES.iter().chain(FLAGS) {
            let value = match p.value(name) {
                Some(v) => v.to_string(),
                None if FLAGS.contains(name) && p.flag(name) => "true".into(),
                None if FLAGS.contains(name) && p.has(name) => "false".into(),
                None => continue,
            };
            match *name {
                "compression_per_level" => compression_per_level = per_level(&value)?,
                "bottommost_compression" => {
                    bottommost = Some(compression("bottommost_compression", &value)?)
                }
                _ => {
                    if !f.set(name, Some(&value))? {
                        return Err(format!("Invalid command-line flag {name}"));
                    }
                }
            }
            given.push((name.to_string(), value));
        }
        crate::db_bench::flags::validate(&f)?;
        let mut talus = talus_engine::options(&f)?;
        talus.compression_per_level = compression_per_level;
        talus.bottommost_compression = bottommost;
        talus.create_if_missing = false;
        talus.validate().map_err(|e| e.to_string())?;
        Ok(EngineOpts { talus, cache_size: f.cache_size.max(0) as u64, given })
    }

    /// `(name, effective value)` of the options that shape the results, for `run.json`.
    pub fn describe(&self) -> Vec<(String, String)> {
        let o = &self.talus;
        let levels: Vec<&str> = o.compression_per_level.iter().map(|c| c.name()).collect();
        let mut v = vec![
            ("cache_size", self.cache_size.to_string()),
            ("compression_type", o.compression.name().to_string()),
            ("compression_per_level", levels.join(":")),
            ("bottommost_compression", o.bottommost_compression.map_or("", |c| c.name()).into()),
            ("bloom_bits", o.bloom_bits_per_key.to_string()),
            ("block_size", o.block_size.to_string()),
            ("write_buffer_size", o.write_buffer_size.to_string()),
            ("max_write_buffer_number", o.max_write_buffer_number.to_string()),
            ("max_bytes_for_level_base", o.max_bytes_for_level_base.to_string()),
            ("target_file_size_base", o.target_file_size_base.to_string()),
            ("max_background_jobs", o.max_background_jobs.to_string()),
            ("rate_limiter_bytes_per_sec", o.rate_limiter_bytes_per_sec.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect::<Vec<_>>();
        for (k, val) in &self.given {
            if !v.iter().any(|(n, _)| n == k) {
                v.push((k.clone(), val.clone()));
            }
        }
        v
    }
}

/// A command's value and flag names plus the engine options, for [`Parsed::check`].
pub fn spec_names(
    values: &[&'static str],
    flags: &[&'static str],
) -> (Vec<&'static str>, Vec<&'static str>) {
    let v = values.iter().chain(VALUES).copied().collect();
    let f = flags.iter().chain(FLAGS).copied().collect();
    (v, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<EngineOpts, String> {
        let mut p = Parsed::parse(args);
        let (v, f) = spec_names(&[], &[]);
        p.check(&crate::options::Spec { values: &v, flags: &f, engine: false })?;
        EngineOpts::parse(&p)
    }

    #[test]
    fn defaults_follow_talus() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.talus.compression, CompressionType::Lz4);
        assert_eq!(o.talus.bloom_bits_per_key, 10);
        assert_eq!(o.cache_size, 32 << 20);
        assert_eq!(o.talus.block_cache_capacity, 32 << 20);
        assert!(o.given.is_empty());
    }

    #[test]
    fn per_level_compression_and_rate_limit() {
        let o = parse(&[
            "--compression_per_level=kLZ4Compression:kLZ4Compression",
            "--bottommost_compression=kZSTD",
            "--rate_limiter_bytes_per_sec=2097152",
            "--cache_size=1048576",
        ])
        .unwrap();
        assert_eq!(o.talus.compression_per_level, vec![CompressionType::Lz4; 2]);
        assert_eq!(o.talus.bottommost_compression, Some(CompressionType::Zstd));
        assert_eq!(o.talus.compression_for_level(5, true), CompressionType::Zstd);
        assert_eq!(o.talus.compression_for_level(5, false), CompressionType::Lz4);
        assert_eq!(o.talus.rate_limiter_bytes_per_sec, 2 << 20);
        assert_eq!(o.cache_size, 1 << 20);
        let d = o.describe();
        assert!(d.contains(&("bottommost_compression".into(), "ZSTD".into())), "{d:?}");
    }

    #[test]
    fn booleans_take_every_spelling() {
        for (v, want) in [
            ("true", true),
            ("1", true),
            ("yes", true),
            ("false", false),
            ("0", false),
            ("no", false),
        ] {
            let o = parse(&[&format!("--intra_l0_compaction={v}")]).unwrap();
            assert_eq!(o.talus.intra_l0_compaction, want, "{v}");
        }
        assert!(parse(&["--intra_l0_compaction"]).unwrap().talus.intra_l0_compaction);
        assert!(parse(&["--intra_l0_compaction=maybe"]).unwrap_err().contains("intra_l0"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (a, want) in [
            ("--compression_type=brotli", "compression_type"),
            ("--compression_per_level=lz4:gzip", "compression_per_level"),
            ("--bottommost_compression=x", "bottommost_compression"),
            ("--write_buffer_size=10", "write_buffer_size"),
            ("--cache_size=abc", "cache_size"),
            ("--no_such_option=1", "no_such_option"),
        ] {
            let e = parse(&[a]).unwrap_err();
            assert!(e.contains(want), "{a}: {e}");
        }
    }
}
