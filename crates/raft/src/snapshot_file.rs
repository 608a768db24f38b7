//! The snapshot file (docs/format/raft.md, "Snapshot file"): the bytes openraft sends to a
//! follower and the file `snapshots/<id>.snap` each node keeps as its current snapshot. It is a
//! table file of the node's engine (holding the state machine's key range) followed by a
//! 20-byte trailer that checksums it, so a snapshot damaged on the disk or on the way is
//! refused before anything is installed:
//!
//! | bytes | field |
//! |---|---|
//! | `table_len` | the table file ([`crate::backend::Backend::write_table`]) |
//! | 8 | `table_len`, u64 little-endian |
//! | 4 | CRC32C of the table bytes, u32 little-endian |
//! | 1 | the engine's tag: 1 Talus, 2 RocksDB |
//! | 1 | format version, 1 |
//! | 6 | magic `TRSNAP` |

use talus::Error;

/// The trailer's length.
pub const TRAILER_LEN: usize = 20;
/// The trailer's last six bytes.
pub const MAGIC: &[u8; 6] = b"TRSNAP";
/// The trailer's format version.
pub const FORMAT_VERSION: u8 = 1;

/// Appends the trailer to the table bytes of engine `engine`.
pub fn seal(mut table: Vec<u8>, engine: u8) -> Vec<u8> {
    let len = table.len() as u64;
    let crc = crc32c::crc32c(&table);
    table.extend_from_slice(&len.to_le_bytes());
    table.extend_from_slice(&crc.to_le_bytes());
    table.push(engine);
    table.push(FORMAT_VERSION);
    table.extend_from_slice(MAGIC);
    table
}

/// Checks a snapshot file's trailer (length, checksum, engine `engine`, version, magic) and
/// returns its table bytes; `name` names the file or transfer in the `Corruption` error.
pub fn open<'a>(data: &'a [u8], engine: u8, name: &str) -> Result<&'a [u8], Error> {
    let bad = |offset: usize, detail: String| Error::corruption(name, offset as u64, detail);
    if data.len() < TRAILER_LEN {
        return Err(bad(0, format!("{} bytes: shorter than the trailer", data.len())));
    }
    let at = data.len() - TRAILER_LEN;
    let (table, t) = data.split_at(at);
    let field = |r: std::ops::Range<usize>| t.get(r).unwrap_or(&[]);
    if field(14..20) != MAGIC {
        return Err(bad(at + 14, "no snapshot trailer (magic TRSNAP)".into()));
    }
    let version = field(13..14).first().copied().unwrap_or(0);
    if version != FORMAT_VERSION {
        return Err(bad(at + 13, format!("format version {version}, expected {FORMAT_VERSION}")));
    }
    let tag = field(12..13).first().copied().unwrap_or(0);
    if tag != engine {
        return Err(bad(at + 12, format!("a table of engine {tag}, this node's is {engine}")));
    }
    let len = u64::from_le_bytes(field(0..8).try_into().unwrap_or([0; 8]));
    if len != table.len() as u64 {
        return Err(bad(at, format!("table length {len}, the file holds {}", table.len())));
    }
    let crc = u32::from_le_bytes(field(8..12).try_into().unwrap_or([0; 4]));
    let actual = crc32c::crc32c(table);
    if crc != actual {
        return Err(bad(at + 8, format!("checksum {crc:08x}, the table's is {actual:08x}")));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens_and_matches_the_documented_bytes() {
        let sealed = seal(b"abc".to_vec(), 1);
        // docs/format/raft.md, "Snapshot file": the example trailer of the 3-byte table "abc".
        let want = "616263 0300000000000000 b73f4b36 01 01 545253 4e4150";
        let hex: String = sealed.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, want.replace(' ', ""));
        assert_eq!(open(&sealed, 1, "s").unwrap(), b"abc");
    }

    #[test]
    fn refuses_damage_of_every_byte_and_the_other_engine() {
        let sealed = seal(b"table bytes".to_vec(), 1);
        assert!(open(&sealed, 2, "s").unwrap_err().is_corruption());
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x40;
            assert!(open(&bad, 1, "s").unwrap_err().is_corruption(), "byte {i}");
        }
        for n in 0..sealed.len() {
            assert!(open(&sealed[..n], 1, "s").is_err(), "cut to {n}");
        }
    }
}
