//! Byte formatting shared by the tools, matching RocksDB's `ldb`/`sst_dump` output:
//! hex is `0x` + uppercase digits on `ldb` (`0x6B31`) and bare uppercase digits in `sst_dump`
//! and internal-key displays (`'6B31' seq:5, type:1`); non-hex output writes the raw bytes, so
//! `ldb dump | ldb load` round-trips any key without newlines or ` ==> ` in it.
//!
//! Everything writes straight into a `Write` (normally a locked, buffered stdout): no per-key
//! `String` is built on the scan paths.

use std::io::{self, Write};

use talus::key::parse_internal_key;

const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `bytes` as uppercase hex, with a `0x` prefix if `prefix`.
pub fn write_hex(out: &mut dyn Write, bytes: &[u8], prefix: bool) -> io::Result<()> {
    if prefix {
        out.write_all(b"0x")?;
    }
    let mut buf = [0u8; 128];
    for chunk in bytes.chunks(buf.len() / 2) {
        let mut n = 0;
        for &b in chunk {
            if let Some(pair) = buf.get_mut(n..n + 2) {
                pair[0] = HEX_DIGITS[usize::from(b >> 4)];
                pair[1] = HEX_DIGITS[usize::from(b & 0xf)];
            }
            n += 2;
        }
        out.write_all(buf.get(..n).unwrap_or(&[]))?;
    }
    Ok(())
}

/// `bytes` as `0x`-prefixed uppercase hex (for messages, not hot paths).
#[cfg(test)]
pub fn to_hex(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(2 + bytes.len() * 2);
    // Writing into a Vec cannot fail.
    let _ = write_hex(&mut v, bytes, true);
    String::from_utf8_lossy(&v).into_owned()
}

/// Writes `bytes` as `0x` hex if `hex`, else raw.
pub fn write_bytes(out: &mut dyn Write, bytes: &[u8], hex: bool) -> io::Result<()> {
    if hex {
        write_hex(out, bytes, true)
    } else {
        out.write_all(bytes)
    }
}

/// A blob index (the value of a `BlobIndex` entry) as RocksDB's `BlobIndex::DebugString` shows
/// it: `[blob ref] file:N offset:O size:S compression: C`; an index that does not decode shows
/// as `[bad blob ref: why] ` and its bytes in hex. `ldb --decode_blob_index` and `sst_dump`.
pub fn write_blob_index(out: &mut dyn Write, v: &[u8]) -> io::Result<()> {
    match talus::blob::format::BlobIndex::decode(v) {
        Ok(i) => write!(
            out,
            "[blob ref] file:{} offset:{} size:{} compression: {}",
            i.file_number,
            i.offset,
            i.size,
            i.compression.name()
        ),
        Err(e) => {
            write!(out, "[bad blob ref: {e}] ")?;
            write_hex(out, v, false)
        }
    }
}

/// Parses RocksDB's hex input: `0x` (or `0X`) then an even number of hex digits, either case.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let Some(digits) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) else {
        return Err(format!("Invalid hex input {s}.  Must start with 0x"));
    };
    if digits.len() % 2 != 0 {
        return Err(format!("Invalid hex input {s}: odd number of hex digits"));
    }
    let nibble = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("Invalid hex input {s}: {:?} is not a hex digit", char::from(c))),
        }
    };
    digits.as_bytes().chunks_exact(2).map(|p| Ok(nibble(p[0])? << 4 | nibble(p[1])?)).collect()
}

/// Decodes a command-line key or value: hex if `hex`, else the word's bytes.
pub fn decode_input(s: &str, hex: bool) -> Result<Vec<u8>, String> {
    if hex {
        parse_hex(s)
    } else {
        Ok(s.as_bytes().to_vec())
    }
}

/// Writes an internal key RocksDB's way: `'user_key' seq:N, type:K` (user key in bare hex if
/// `hex`, else raw). Returns false, after writing `'<hex>' (bad internal key)`, if `ikey` does
/// not parse.
pub fn write_internal_key(out: &mut dyn Write, ikey: &[u8], hex: bool) -> io::Result<bool> {
    match parse_internal_key(ikey) {
        Some(p) => {
            out.write_all(b"'")?;
            if hex {
                write_hex(out, p.user_key, false)?;
            } else {
                out.write_all(p.user_key)?;
            }
            write!(out, "' seq:{}, type:{}", p.seq, p.kind as u8)?;
            Ok(true)
        }
        None => {
            out.write_all(b"'")?;
            write_hex(out, ikey, false)?;
            out.write_all(b"' (bad internal key)")?;
            Ok(false)
        }
    }
}

/// Writes `bytes` with printable ASCII as is and everything else as `\xNN` (for the raw dump's
/// ASCII column and for messages).
pub fn write_escaped(out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    for &b in bytes {
        if b.is_ascii_graphic() || b == b' ' {
            out.write_all(&[b])?;
        } else {
            write!(out, "\\x{b:02X}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use talus::key::{make_internal_key, ValueKind};

    #[test]
    fn hex_matches_rocksdb() {
        assert_eq!(to_hex(b"k1"), "0x6B31");
        assert_eq!(to_hex(&[0x01, 0x02, 0xff, 0x00]), "0x0102FF00");
        assert_eq!(to_hex(b""), "0x");
        let mut v = Vec::new();
        write_hex(&mut v, &[0xab], false).unwrap();
        assert_eq!(v, b"AB");
    }

    #[test]
    fn hex_round_trips_random_bytes_of_any_length() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for len in [0usize, 1, 2, 63, 64, 65, 200] {
            let b: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let h = to_hex(&b);
            assert_eq!(parse_hex(&h).unwrap(), b);
            assert_eq!(parse_hex(&h.to_lowercase().replacen("0x", "0X", 1)).unwrap(), b);
        }
    }

    #[test]
    fn bad_hex_is_refused_with_the_input_named() {
        assert!(parse_hex("6B31").unwrap_err().contains("Must start with 0x"));
        assert!(parse_hex("0x6B3").unwrap_err().contains("odd"));
        assert!(parse_hex("0x6G").unwrap_err().contains("0x6G"));
        assert!(parse_hex("0xé1").is_err());
        assert_eq!(parse_hex("0x").unwrap(), b"");
        assert_eq!(decode_input("0x41", false).unwrap(), b"0x41");
        assert_eq!(decode_input("0x41", true).unwrap(), b"A");
    }

    #[test]
    fn internal_keys_print_as_sst_dump_does() {
        let k = make_internal_key(b"k1", 5, ValueKind::Put);
        let mut v = Vec::new();
        assert!(write_internal_key(&mut v, &k, false).unwrap());
        assert_eq!(String::from_utf8(v).unwrap(), "'k1' seq:5, type:1");
        let mut v = Vec::new();
        let k = make_internal_key(b"k1", 9, ValueKind::Delete);
        assert!(write_internal_key(&mut v, &k, true).unwrap());
        assert_eq!(String::from_utf8(v).unwrap(), "'6B31' seq:9, type:0");
        let mut v = Vec::new();
        assert!(!write_internal_key(&mut v, b"abc", false).unwrap());
        assert_eq!(String::from_utf8(v).unwrap(), "'616263' (bad internal key)");
    }

    #[test]
    fn escaping() {
        let mut v = Vec::new();
        write_escaped(&mut v, b"a b\n\xff").unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "a b\\x0A\\xFF");
    }
}
