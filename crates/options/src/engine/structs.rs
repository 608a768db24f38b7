//! The engine options whose values are structs or lists in RocksDB's syntax: `block_cache`
//! (`{id=LRUCache;capacity=1M;num_shard_bits=4;...}`), `compaction_options_universal`,
//! `block_based_table_factory`, `compression_opts` and `filter_policy`.
//!
//! A struct field that Talus also has as a flat option (`block_cache={capacity=..}` and
//! `cache_size`, `{num_shard_bits=..}` and `cache_numshardbits`, ...) is parsed and checked by
//! that option's own setter, so both spellings accept and refuse the same values; the error
//! names the field as `block_cache.capacity`. Pure parsing, like [`super`].

use talus::cache::MetadataChargePolicy;
use talus::options::CacheType;
use talus::Options;

use super::super::number::{double, integer};
use super::super::values::bad;
use super::{boolean, find, set, TABLE_OPTIONS};

/// `{k=v;k=v}` or `k=v;k=v` into pairs (nested braces kept whole); see [`super::super::string`].
fn nested(name: &str, v: &str) -> Result<Vec<(String, String)>, String> {
    let inner = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')).unwrap_or(v);
    super::super::string::split(inner).map_err(|e| format!("option {name}: {e}"))
}

/// Sets flat option `flat` from struct field `key` (`block_cache.capacity`), through the flat
/// option's own setter: one validation whatever the spelling.
fn via(o: &mut Options, flat: &str, key: &str, value: &str) -> Result<(), String> {
    let opt = find(flat).ok_or_else(|| format!("internal: no engine option {flat}"))?;
    (opt.set)(o, key, value.trim())
}

/// `compression_opts` / `bottommost_compression_opts` (`bottommost`):
/// `window_bits:level:strategy[:max_dict_bytes:zstd_max_train_bytes:parallel_threads:enabled...]`
/// or the struct form RocksDB writes (`{window_bits=-14;level=32767;strategy=0;...}`). The level
/// goes to `Options::compression_level` (for `bottommost_compression_opts`, to
/// `bottommost_compression_level`, and only when `enabled` is true, as RocksDB reads it), after
/// the range check zstd's levels set. Dictionary compression (`max_dict_bytes` or
/// `zstd_max_train_bytes` > 0) is refused by name: Talus builds no dictionaries. `window_bits`
/// and `strategy` (zlib's) and the rest are accepted and have no effect.
pub(super) fn compression_opts(
    o: &mut Options,
    name: &str,
    v: &str,
    bottommost: bool,
) -> Result<(), String> {
    let refuse = |what: &str| {
        Err(format!(
            "option {name}={v}: {what} is not supported by Talus (it builds no dictionaries)"
        ))
    };
    let (mut level, mut enabled) = (talus::DEFAULT_COMPRESSION_LEVEL as i64, false);
    if v.contains('=') {
        for (k, val) in nested(name, v)? {
            let key = format!("{name}.{k}");
            match k.as_str() {
                "level" => level = integer::<i64>(&key, &val)?,
                "max_dict_bytes" | "zstd_max_train_bytes" | "max_dict_buffer_bytes"
                    if integer::<i64>(&key, &val)? != 0 =>
                {
                    return refuse("dictionary compression")
                }
                "enabled" => enabled = boolean(&key, &val)?,
                _ => {}
            }
        }
    } else {
        let parts =
            v.split(':').map(|p| integer::<i64>(name, p)).collect::<Result<Vec<i64>, String>>()?;
        if let Some(l) = parts.get(1) {
            level = *l;
        }
        if parts.get(3).is_some_and(|d| *d != 0) || parts.get(4).is_some_and(|d| *d != 0) {
            return refuse("dictionary compression");
        }
        enabled = parts.get(6).is_some_and(|e| *e != 0);
    }
    let level = i32::try_from(level)
        .map_err(|_| format!("option {name}={v}: level {level} is out of range"))?;
    talus::check_compression_level(level).map_err(|e| format!("option {name}={v}: {e}"))?;
    if bottommost {
        o.bottommost_compression_level = enabled.then_some(level);
    } else {
        o.compression_level = level;
    }
    Ok(())
}

/// `filter_policy`: `bloomfilter:BITS[:false]`, `nullptr` (or empty: none); RocksDB's
/// `ribbonfilter` and the block-based filter (`:true`) are refused.
pub(super) fn filter_policy(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v.is_empty() || v == "nullptr" {
        o.bloom_bits_per_key = 0;
        return Ok(());
    }
    let rest = v
        .strip_prefix("bloomfilter:")
        .or_else(|| v.strip_prefix("rocksdb.BuiltinBloomFilter:"))
        .ok_or_else(|| bad(name, v, "bloomfilter:BITS[:false] or nullptr"))?;
    let (bits, block_based) = rest.split_once(':').unwrap_or((rest, "false"));
    if boolean(name, block_based)? {
        return Err(bad(name, v, "a full filter (bloomfilter:BITS:false)"));
    }
    let bits: f64 = double(name, bits)?;
    if !(0.0..=100.0).contains(&bits) {
        return Err(bad(name, v, "0 to 100 bits per key"));
    }
    o.bloom_bits_per_key = bits.round() as u32;
    Ok(())
}

/// The `block_cache` fields that are flat options too, and those options' names.
const CACHE_FIELDS: &[(&str, &str)] = &[
    ("capacity", "cache_size"),
    ("num_shard_bits", "cache_numshardbits"),
    ("high_pri_pool_ratio", "cache_high_pri_pool_ratio"),
    ("estimated_entry_charge", "estimated_entry_charge"),
];

/// `block_cache`: `{id=LRUCache|HyperClockCache;capacity=N;num_shard_bits=N;...}` as an OPTIONS
/// file writes it, or a plain capacity in bytes (`block_cache=1073741824`, `block_cache=1G`, as
/// in option strings). `nullptr` (RocksDB 7.x writes no cache) leaves the cache as it is.
pub(super) fn block_cache(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v == "nullptr" {
        return Ok(());
    }
    if !v.contains('=') {
        return via(o, "cache_size", name, v);
    }
    for (k, val) in nested(name, v)? {
        let key = format!("{name}.{k}");
        if let Some((_, flat)) = CACHE_FIELDS.iter().find(|(field, _)| *field == k) {
            via(o, flat, &key, &val)?;
            continue;
        }
        match k.as_str() {
            "id" => {
                o.cache_type = match val.as_str() {
                    "LRUCache" => CacheType::LruCache,
                    "HyperClockCache" | "AutoHyperClockCache" | "FixedHyperClockCache" => {
                        CacheType::HyperClockCache
                    }
                    _ => return Err(bad(&key, &val, "LRUCache or HyperClockCache")),
                }
            }
            "strict_capacity_limit" => o.block_cache_strict_capacity_limit = boolean(&key, &val)?,
            "metadata_charge_policy" => {
                o.block_cache_metadata_charge_policy = match val.as_str() {
                    "kFullChargeCacheMetadata" => MetadataChargePolicy::FullCharge,
                    "kDontChargeCacheMetadata" => MetadataChargePolicy::DontCharge,
                    _ => {
                        return Err(bad(
                            &key,
                            &val,
                            "kFullChargeCacheMetadata or kDontChargeCacheMetadata",
                        ))
                    }
                }
            }
            "low_pri_pool_ratio" | "use_adaptive_mutex" => {}
            _ => {
                return Err(format!(
                    "unknown option {key:?}: Talus's block cache has no such option"
                ))
            }
        }
    }
    Ok(())
}

/// `compaction_options_universal={size_ratio=..;min_merge_width=..;...}`. RocksDB's fields
/// that Talus does not have are accepted at RocksDB's defaults (which are what Talus does:
/// `max_read_amp=-1` limits the sorted runs by `level0_file_num_compaction_trigger`) and refused
/// otherwise.
pub(super) fn universal(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    for (k, val) in nested(name, v)? {
        let key = format!("{name}.{k}");
        match k.as_str() {
            "size_ratio" => o.size_ratio = integer(&key, &val)?,
            "min_merge_width" => o.min_merge_width = integer(&key, &val)?,
            "max_merge_width" => {
                let w: u64 = integer(&key, &val)?;
                o.max_merge_width = if w >= u64::from(u32::MAX) { usize::MAX } else { w as usize };
            }
            "max_size_amplification_percent" => {
                o.max_size_amplification_percent = integer(&key, &val)?
            }
            // RocksDB's defaults, which are what Talus does.
            "stop_style" if val == "kCompactionStopStyleTotalSize" => {}
            "compression_size_percent" | "max_read_amp" if integer::<i64>(&key, &val)? == -1 => {}
            "allow_trivial_move" | "incremental" | "reduce_file_locking"
                if !boolean(&key, &val)? => {}
            _ => return Err(format!("unsupported option {key}={val}")),
        }
    }
    Ok(())
}

/// `block_based_table_factory={block_size=...;...}` (option strings): every table option.
pub(super) fn table_factory(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    for (k, val) in nested(name, v)? {
        if !TABLE_OPTIONS.contains(&k.as_str()) {
            return Err(format!("unknown option {name}.{k}: Talus's tables have no such option"));
        }
        set(o, &k, &val)?;
    }
    Ok(())
}
