//! A backup's metadata file, `meta/N` (format: `docs/format/backup.md`): which files the
//! backup holds, with their sizes and CRC32C checksums, and a checksum of the file itself.
//!
//! Pure encoding and decoding; the engine (`super`) reads and writes the files.

use crate::error::{Error, Result};

/// The first line of every metadata file.
pub const MAGIC: &str = "talus-backup 1";

/// One file of a backup: its path relative to the backup directory, size and CRC32C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// `shared_checksum/NNNNNN_CRC_SIZE.sst` or `private/N/NAME`.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// CRC32C of the contents (unmasked).
    pub crc: u32,
}

/// A backup's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The backup's id (1, 2, ...).
    pub id: u32,
    /// Seconds since the Unix epoch when it was made.
    pub timestamp: u64,
    /// The last sequence number it holds.
    pub sequence: u64,
    /// Its files.
    pub files: Vec<FileEntry>,
}

impl Meta {
    /// The file's bytes: `MAGIC`, `id`, `timestamp`, `sequence`, one `file` line per file,
    /// then `crc32c <8 hex digits>` over every byte before that line.
    pub fn encode(&self) -> Vec<u8> {
        let mut s = format!(
            "{MAGIC}\nid {}\ntimestamp {}\nsequence {}\n",
            self.id, self.timestamp, self.sequence
        );
        for f in &self.files {
            s.push_str(&format!("file {} {} {:08x}\n", f.path, f.size, f.crc));
        }
        let crc = crc32c::crc32c(s.as_bytes());
        s.push_str(&format!("crc32c {crc:08x}\n"));
        s.into_bytes()
    }

    /// Parses `bytes`, read from `name`; `Error::Corruption` (naming `name` and the offset of
    /// the bad line) for anything but a whole, intact file.
    pub fn decode(bytes: &[u8], name: &str) -> Result<Meta> {
        let bad = |offset: usize, why: &str| Error::corruption(name, offset as u64, why);
        let text = std::str::from_utf8(bytes).map_err(|e| bad(e.valid_up_to(), "not UTF-8"))?;
        let body_end = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
        let (body, tail) = text.split_at(body_end);
        let want = tail
            .strip_prefix("crc32c ")
            .and_then(|h| hex8(h.strip_suffix('\n')?))
            .ok_or_else(|| bad(body_end, "no crc32c line at the end (a truncated file?)"))?;
        if crc32c::crc32c(body.as_bytes()) != want {
            return Err(bad(0, "checksum mismatch"));
        }
        let mut meta = Meta { id: 0, timestamp: 0, sequence: 0, files: Vec::new() };
        let mut offset = 0;
        let mut fields = 0;
        for (i, line) in body.lines().enumerate() {
            let num = |v: &str| v.parse::<u64>().map_err(|_| bad(offset, "a bad number"));
            match (i, line.split_once(' ')) {
                (0, _) if line == MAGIC => {}
                (0, _) => return Err(bad(0, "not a Talus backup metadata file")),
                (_, Some(("id", v))) => {
                    meta.id = u32::try_from(num(v)?).map_err(|_| bad(offset, "id too large"))?;
                    fields |= 1;
                }
                (_, Some(("timestamp", v))) => (meta.timestamp, fields) = (num(v)?, fields | 2),
                (_, Some(("sequence", v))) => (meta.sequence, fields) = (num(v)?, fields | 4),
                (_, Some(("file", v))) => {
                    let parts: Vec<&str> = v.split(' ').collect();
                    let [path, size, crc] = parts[..] else {
                        return Err(bad(offset, "a file line needs a path, a size and a crc"));
                    };
                    if path.is_empty() || path.contains("..") || path.starts_with('/') {
                        return Err(bad(offset, "a file path outside the backup directory"));
                    }
                    let crc = hex8(crc).ok_or_else(|| bad(offset, "bad crc"))?;
                    meta.files.push(FileEntry { path: path.to_string(), size: num(size)?, crc });
                }
                _ => return Err(bad(offset, "an unknown line")),
            }
            offset += line.len() + 1;
        }
        if fields != 7 {
            return Err(bad(body_end, "id, timestamp or sequence missing"));
        }
        Ok(meta)
    }
}

/// Exactly 8 lower-case hex digits, as written.
fn hex8(s: &str) -> Option<u32> {
    let ok = s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ok.then(|| u32::from_str_radix(s, 16).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta {
        Meta {
            id: 3,
            timestamp: 1_700_000_000,
            sequence: 42,
            files: vec![
                FileEntry {
                    path: "shared_checksum/000007_0badf00d_100.sst".into(),
                    size: 100,
                    crc: 0xbadf00d,
                },
                FileEntry { path: "private/3/CURRENT".into(), size: 16, crc: 1 },
            ],
        }
    }

    #[test]
    fn round_trips_and_matches_the_documented_bytes() {
        let m = sample();
        let bytes = m.encode();
        assert_eq!(Meta::decode(&bytes, "meta/3").unwrap(), m);
        let text = String::from_utf8(bytes).unwrap();
        let body = "talus-backup 1\nid 3\ntimestamp 1700000000\nsequence 42\n\
            file shared_checksum/000007_0badf00d_100.sst 100 0badf00d\n\
            file private/3/CURRENT 16 00000001\n";
        assert_eq!(text, format!("{body}crc32c {:08x}\n", crc32c::crc32c(body.as_bytes())));
    }

    #[test]
    fn every_damage_is_corruption_never_a_panic() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            let e = Meta::decode(&bytes[..cut], "meta/3").unwrap_err();
            assert!(e.is_corruption(), "cut at {cut}: {e}");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(Meta::decode(&b, "meta/3").is_err(), "byte {i} bit {bit}");
            }
        }
    }
}
