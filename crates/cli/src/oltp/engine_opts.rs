//! Engine options for `talus sysbench` and `talus tpcc`, through the options layer every tool
//! uses ([`crate::options`]: every engine option by RocksDB's name, `--options_file`,
//! `--options`; the commands' specs set `engine: true`).
//!
//! Three defaults differ from `talus::Options::default()` and follow MyRocks's and the other
//! tools' benchmark setup: `--compression_type=lz4`, `--bloom_bits=10`, `--cache_size=33554432`;
//! statistics are always on (the intervals files' engine-state tickers need them).
//! Talus and RocksDB (both under talus-table) get every option, by its RocksDB name; RocksDB
//! refuses values that differ from Talus's unless `--accept_option_diff=a,b` names them
//! ([`crate::table_engines`]). SQLite uses only `--cache_size` (its page cache, divided among
//! the connections open at once) and the device caps `--io_limit_*` (a throttled VFS); the
//! rest are recorded in the results. Everything is validated by
//! [`talus::Options::validate`] before the caller touches a database directory; an error names
//! the flag.

use talus::{CompressionType, Options};

use crate::options::Parsed;

/// The help text for the engine options.
pub fn help() -> String {
    format!(
        "Talus defaults here: --compression_type=lz4 --bloom_bits=10 --cache_size=33554432, for\n\
         --engine=talus and --engine=rocksdb alike (--accept_option_diff=a,b: options whose RocksDB\n\
         values may differ from Talus's). With --engine=sqlite only --cache_size and --io_limit_*\n\
         apply.\n{}",
        crate::options::engine_help()
    )
}

/// The parsed engine options.
#[derive(Debug, Clone)]
pub struct EngineOpts {
    /// Talus's options (without `create_if_missing`, which the opener decides).
    pub talus: Options,
    /// Block cache (Talus) or page cache (SQLite) bytes.
    pub cache_size: u64,
    /// The engine options given on the command line, `(name, value)`, in order.
    pub given: Vec<(String, String)>,
    /// Options whose values may differ between Talus and RocksDB (`--accept_option_diff`).
    pub accept_option_diff: Vec<String>,
}

impl EngineOpts {
    /// Reads the engine options from `p` (already checked against a spec with `engine: true`)
    /// and validates them.
    pub fn parse(p: &Parsed) -> Result<EngineOpts, String> {
        let base = Options {
            compression: CompressionType::Lz4,
            bloom_bits_per_key: 10,
            block_cache_capacity: 32 << 20,
            // The tickers behind the engine-state columns of the intervals files (stalls,
            // flush and compaction MB, throttle waits, cache hits), as ibench keeps them.
            statistics: true,
            ..Options::default()
        };
        let mut talus = crate::options::engine_options(p, base, &[])?;
        talus.create_if_missing = false;
        talus.validate().map_err(|e| e.to_string())?;
        let given = p
            .names()
            .iter()
            .filter(|n| {
                crate::options::engine::find(n).is_some()
                    || crate::options::LAYER_FLAGS.contains(&n.as_str())
            })
            .map(|n| (n.clone(), p.value(n).map_or_else(|| p.flag(n).to_string(), str::to_string)))
            .collect();
        Ok(EngineOpts {
            cache_size: talus.block_cache_capacity as u64,
            talus,
            given,
            accept_option_diff: crate::table_engines::accept_list(p.value("accept_option_diff")),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<EngineOpts, String> {
        let mut p = Parsed::parse(args);
        p.check(&crate::options::Spec { values: &[], flags: &[], engine: true })?;
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
