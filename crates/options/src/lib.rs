//! Every engine option by RocksDB's name, parsed into [`talus::Options`]: one table
//! ([`engine`]) that RocksDB's option strings ([`string`], [`apply_string`]), OPTIONS files
//! ([`file`](mod@file), [`apply_file`]), the tools' command-line flags (`talus-cli`'s `options::gflags`)
//! and the Python binding's keyword arguments (`crates/python`) all go through, with RocksDB's
//! numbers ([`number`]: `64k`, `1M`) and boolean spellings ([`values`]).
//!
//! Pure parsing apart from [`file::read`] (a bounded, never blocking read of one regular file):
//! no state, no locks. Every error is a `String` naming the option and the value; nothing is
//! applied to the caller's [`talus::Options`] by a call that fails part-way through an OPTIONS
//! file (an option string applies its pairs in order and stops at the first bad one, so the
//! callers apply it to a scratch copy first).
//!
//! ```
//! let mut o = talus::Options::default();
//! talus_options::apply_string(&mut o, "write_buffer_size=1M;compression=kZSTD").unwrap();
//! assert_eq!(o.write_buffer_size, 1 << 20);
//! talus_options::engine::set(&mut o, "max_write_buffer_number", "4").unwrap();
//! assert!(talus_options::engine::set(&mut o, "no_such_option", "1").is_err());
//! ```

pub mod engine;
pub mod file;
pub mod number;
pub mod string;
pub mod values;

/// Reads the OPTIONS file at `path` ([`file::read`]) and applies it to `o` ([`file::apply`]);
/// `Err` starts with `--options_file=PATH:`.
pub fn apply_file(
    o: &mut talus::Options,
    path: &str,
    ignore_unknown: bool,
) -> Result<file::Applied, String> {
    let at = |e: String| format!("--options_file={path}: {e}");
    let text = file::read(std::path::Path::new(path)).map_err(at)?;
    file::apply(o, &text, ignore_unknown).map_err(at)
}

/// Applies a RocksDB option string (`k=v;k=v`) to `o`, pair by pair (a bad pair leaves the
/// ones before it applied).
pub fn apply_string(o: &mut talus::Options, s: &str) -> Result<(), String> {
    for (k, v) in string::split(s)? {
        engine::set(o, &k, &v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_string_with_nested_table_options() {
        let mut o = talus::Options::default();
        apply_string(
            &mut o,
            "write_buffer_size=1048576;compression_per_level=kNoCompression:kLZ4Compression:kZSTD;\
             bottommost_compression=kZSTD;compression_opts=-14:32767:0;\
             block_based_table_factory={block_size=16384;filter_policy=bloomfilter:10:false;\
             block_cache={id=LRUCache;capacity=4096}}",
        )
        .unwrap();
        assert_eq!(o.write_buffer_size, 1 << 20);
        assert_eq!(o.compression_per_level.len(), 3);
        assert_eq!(o.bottommost_compression, Some(talus::CompressionType::Zstd));
        assert_eq!((o.block_size, o.bloom_bits_per_key, o.block_cache_capacity), (16384, 10, 4096));
        let e = apply_string(&mut o, "block_based_table_factory={write_buffer_size=1}");
        assert!(e.unwrap_err().contains("write_buffer_size"));
        apply_string(&mut o, "compression_opts=-14:1:0").unwrap();
        assert_eq!(o.compression_level, 1, "post 002's zstd level 1");
        assert!(apply_string(&mut o, "compression_opts=-14:99:0").unwrap_err().contains("level"));
    }
}
