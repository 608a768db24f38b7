//! The flags of `talus cache_bench` (RocksDB 10's names and defaults): [`SPEC`], the parsed
//! [`Flags`] and [`parse`], which checks the percentages and ranges. Pure; called by
//! `cache_bench::run` before anything is built.

use crate::options::{Parsed, Spec};

pub(super) const SPEC: Spec<'static> = Spec {
    values: &[
        "cache_type",
        "cache_size",
        "num_shard_bits",
        "threads",
        "ops_per_thread",
        "value_bytes",
        "value_bytes_estimate",
        "resident_ratio",
        "skew",
        "degenerate_hash_bits",
        "pinned_ratio",
        "lookup_insert_percent",
        "insert_percent",
        "blind_insert_percent",
        "lookup_percent",
        "erase_percent",
        "seed",
    ],
    flags: &["skewed", "populate_cache", "lean", "histograms", "help"],
    engine: false,
};

/// Which cache a `--cache_type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Lru,
    FixedClock,
    AutoClock,
}

/// The parsed flags.
#[derive(Debug, Clone)]
pub(super) struct Flags {
    pub(super) kind: Kind,
    pub(super) cache_type: String,
    pub(super) cache_size: u64,
    /// `None`: automatic, as RocksDB's -1.
    pub(super) num_shard_bits: Option<u32>,
    pub(super) threads: u32,
    pub(super) ops_per_thread: u64,
    pub(super) value_bytes: u32,
    pub(super) value_bytes_estimate: u32,
    pub(super) resident_ratio: f64,
    pub(super) skew: u32,
    pub(super) skewed: bool,
    pub(super) degenerate_hash_bits: u32,
    pub(super) pinned_ratio: f64,
    pub(super) populate_cache: bool,
    pub(super) lean: bool,
    pub(super) histograms: bool,
    pub(super) seed: u64,
    pub(super) lookup_insert_percent: u64,
    pub(super) insert_percent: u64,
    pub(super) blind_insert_percent: u64,
    pub(super) lookup_percent: u64,
    pub(super) erase_percent: u64,
}

pub(super) fn parse(p: &Parsed) -> Result<Flags, String> {
    let num = |name: &str, default: u64| -> Result<u64, String> {
        Ok(p.number(name)?.unwrap_or(default))
    };
    let small = |name: &str, default: u64| -> Result<u32, String> {
        u32::try_from(num(name, default)?).map_err(|_| format!("{name} is too large"))
    };
    let real = |name: &str, default: f64| p.get_or(name, default, "a number");
    let boolean = |name: &str, default: bool| p.flag_or(name, default);
    let cache_type = p.value("cache_type").unwrap_or("lru_cache").to_string();
    let kind = match cache_type.as_str() {
        "lru_cache" => Kind::Lru,
        "hyper_clock_cache" | "fixed_hyper_clock_cache" | "clock_cache" => Kind::FixedClock,
        "auto_hyper_clock_cache" => Kind::AutoClock,
        other => {
            return Err(crate::options::bad(
                "cache_type",
                other,
                "lru_cache, hyper_clock_cache or auto_hyper_clock_cache",
            ))
        }
    };
    let num_shard_bits = match p.value("num_shard_bits") {
        None | Some("-1") => None,
        Some(_) => p.get::<u32>("num_shard_bits", "-1 or a shard bit count")?,
    };
    let f = Flags {
        kind,
        cache_type,
        cache_size: num("cache_size", 1 << 30)?,
        num_shard_bits,
        threads: small("threads", 16)?,
        ops_per_thread: num("ops_per_thread", 2_000_000)?,
        value_bytes: small("value_bytes", 8192)?,
        value_bytes_estimate: small("value_bytes_estimate", 0)?,
        resident_ratio: real("resident_ratio", 0.25)?,
        skew: small("skew", 5)?,
        skewed: p.flag("skewed"),
        degenerate_hash_bits: small("degenerate_hash_bits", 0)?,
        pinned_ratio: real("pinned_ratio", 0.25)?,
        populate_cache: boolean("populate_cache", true),
        lean: p.flag("lean"),
        histograms: boolean("histograms", true),
        seed: match num("seed", 0)? {
            0 => u64::from(std::process::id()),
            s => s,
        },
        lookup_insert_percent: num("lookup_insert_percent", 82)?,
        insert_percent: num("insert_percent", 2)?,
        blind_insert_percent: num("blind_insert_percent", 5)?,
        lookup_percent: num("lookup_percent", 10)?,
        erase_percent: num("erase_percent", 1)?,
    };
    let total = f.lookup_insert_percent
        + f.insert_percent
        + f.blind_insert_percent
        + f.lookup_percent
        + f.erase_percent;
    if total != 100 {
        return Err("Percentages must add to 100.".to_string());
    }
    if f.value_bytes == 0 || f.threads == 0 || f.resident_ratio.is_nan() || f.resident_ratio <= 0.0
    {
        return Err("value_bytes, threads and resident_ratio must be positive".to_string());
    }
    let max_bits = talus::options::MAX_CACHE_SHARD_BITS;
    if f.num_shard_bits.is_some_and(|b| b > max_bits) {
        return Err(format!("num_shard_bits must be at most {max_bits}"));
    }
    if f.degenerate_hash_bits > 40 {
        return Err("degenerate_hash_bits must be at most 40".to_string());
    }
    if f.pinned_ratio.is_nan() || f.pinned_ratio < 0.0 {
        return Err("pinned_ratio must not be negative".to_string());
    }
    Ok(f)
}
