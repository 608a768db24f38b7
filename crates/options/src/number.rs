//! Numbers in engine option values, as RocksDB reads them (`util/string_util.cc`:
//! `ParseUint64`, `ParseInt64`, `ParseInt`, `ParseSizeT`, `ParseDouble`), but strict.
//!
//! An integer is an optional sign, decimal digits and at most one size suffix: `k`/`K` (2^10),
//! `m`/`M` (2^20), `g`/`G` (2^30), `t`/`T` (2^40); `write_buffer_size=64k` is 65536 and
//! `block_cache={capacity=1M}` 1048576, whichever way the option is spelled (a flag, an option
//! string, a nested struct, an OPTIONS file: [`super::engine`] parses every one with
//! [`integer`]). A double is Rust's `f64` syntax (`8`, `8.5`, `1e3`), finite, with no suffix
//! (RocksDB's `ParseDouble` takes none either).
//!
//! Where RocksDB reads a value silently wrong, Talus refuses it, naming the option: anything after
//! the suffix (RocksDB stops at the first non-digit and ignores the rest, so `3x` is 3 and `1kb`
//! is 1024), a value that overflows the option's type (RocksDB shifts past 64 bits and wraps), a
//! negative value for an unsigned option (RocksDB's `stoull("-1")` is 2^64 - 1), `0x10` (RocksDB
//! reads 0). RocksDB's `ParseInt` (its `int` options: `num_levels`, `max_open_files`, ...) has
//! no `t` and reads `3t` as 3; Talus takes `t` everywhere, and 2^40 is out of range for every
//! option that is an `int` in RocksDB. Pure; every error names the option and the value.

use super::values::bad;

/// An integer type an option can have; its range as `i128`.
pub trait OptionInt: Sized {
    /// The smallest value.
    const MIN: i128;
    /// The largest value.
    const MAX: i128;
    /// `v` as `Self`; only called with `MIN <= v <= MAX`.
    fn from_i128(v: i128) -> Option<Self>;
}

macro_rules! option_int {
    ($($t:ty),*) => {$(
        impl OptionInt for $t {
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    )*};
}

option_int!(u8, u16, u32, u64, usize, i32, i64, isize);

/// What a malformed integer is told it should be.
pub const INTEGER: &str = "an integer, optionally with a k/m/g/t suffix (64k = 65536)";

/// `v` (trimmed) as an integer with RocksDB's optional size suffix, `None` if malformed; the
/// result may be out of any option's range (checked by [`integer`]).
pub fn parse_integer(v: &str) -> Option<i128> {
    let v = v.trim();
    let (negative, rest) = match v.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let digits_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (digits, suffix) = rest.split_at(digits_end);
    // u64::MAX has 20 digits; a longer number is out of range for every option anyway.
    if digits.is_empty() || digits.len() > 24 {
        return None;
    }
    let shift = match suffix {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        _ => return None,
    };
    let n: i128 = digits.parse().ok()?;
    let n = n.checked_mul(1i128 << shift)?;
    Some(if negative { -n } else { n })
}

/// Option `name`'s value `v` as a `T`; `Err` names the option, the value and what was expected
/// (the syntax, or `T`'s range).
pub fn integer<T: OptionInt>(name: &str, v: &str) -> Result<T, String> {
    let n = parse_integer(v).ok_or_else(|| bad(name, v, INTEGER))?;
    if n < T::MIN || n > T::MAX {
        return Err(bad(name, v, &format!("an integer from {} to {}", T::MIN, T::MAX)));
    }
    T::from_i128(n).ok_or_else(|| bad(name, v, INTEGER))
}

/// Option `name`'s value `v` as a finite double.
pub fn double(name: &str, v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(bad(name, v, "a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_suffixes_in_either_case() {
        for (v, want) in [
            ("0", 0i128),
            ("64", 64),
            ("64k", 64 << 10),
            ("64K", 64 << 10),
            ("1m", 1 << 20),
            ("1M", 1 << 20),
            ("2g", 2 << 30),
            ("2G", 2 << 30),
            ("3t", 3 << 40),
            ("3T", 3 << 40),
            ("-14", -14),
            ("-1k", -1024),
            ("+5", 5),
            (" 7 ", 7),
            ("18446744073709551615", u64::MAX as i128),
        ] {
            assert_eq!(parse_integer(v), Some(want), "{v}");
        }
    }

    #[test]
    fn what_rocksdb_reads_silently_wrong_is_refused() {
        // RocksDB: 3x = 3, 1kb = 1024, 0x10 = 0, "" throws, 1.5k = 1, k throws.
        for v in ["3x", "1kb", "0x10", "", "1.5k", "k", "-", "1 k", "1e3", "1_000", "kk1"] {
            assert_eq!(parse_integer(v), None, "{v}");
        }
    }

    #[test]
    fn the_range_is_the_options_type() {
        assert_eq!(integer::<u64>("x", "16383t"), Ok(16383u64 << 40));
        assert_eq!(integer::<usize>("write_buffer_size", "64k"), Ok(65536));
        assert_eq!(integer::<i64>("max_open_files", "-1"), Ok(-1));
        let e = integer::<u64>("write_buffer_size", "-1").unwrap_err();
        assert!(e.contains("--write_buffer_size") && e.contains("from 0 to"), "{e}");
        let e = integer::<u64>("x", "16777216t").unwrap_err();
        assert!(e.contains("from 0 to 18446744073709551615"), "{e}");
        let e = integer::<u32>("bloom_bits", "4g").unwrap_err();
        assert!(e.contains("4294967295"), "{e}");
        let e = integer::<i32>("compaction_thread_nice", "3t").unwrap_err();
        assert!(e.contains("-2147483648"), "{e}");
        let e = integer::<usize>("block_size", "16kb").unwrap_err();
        assert!(e.contains("--block_size") && e.contains("k/m/g/t"), "{e}");
        assert!(integer::<u64>("x", "99999999999999999999999999").is_err());
    }

    #[test]
    fn doubles_take_no_suffix() {
        assert_eq!(double("m", "8"), Ok(8.0));
        assert_eq!(double("m", " 8.5 "), Ok(8.5));
        assert_eq!(double("m", "1e1"), Ok(10.0));
        for v in ["8k", "inf", "NaN", "", "8x"] {
            assert!(double("m", v).unwrap_err().contains("--m"), "{v}");
        }
    }
}
