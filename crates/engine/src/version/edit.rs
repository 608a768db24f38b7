//! A change to the tree's shape, and its MANIFEST record encoding (`docs/format/manifest.md`).
//!
//! The encoding is LevelDB's tag stream: a varint32 tag, then that tag's fields, repeated. A
//! decoder never trusts its input: an unknown tag, a truncated field, a bad internal key or a
//! comparator name that is not UTF-8 is `Error::Corruption` naming the MANIFEST and the record's
//! offset. A cut exactly between two fields still decodes (to the fields before the cut): the
//! log record's checksum, not the edit, guards against truncation.

use super::blob_meta::{
    BlobFileAddition, BlobFileGarbage, TAG_BLOB_FILE_ADDITION, TAG_BLOB_FILE_GARBAGE,
    TAG_OLDEST_BLOB_FILE,
};
use super::cf_edit::{is_cf_tag, CfEdit};
use super::FileMetaData;
use crate::coding::{put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};
use crate::key::{parse_internal_key, InternalKey, SequenceNumber};

/// Tag: comparator name (length-prefixed).
pub const TAG_COMPARATOR: u32 = 1;
/// Tag: log number (varint64).
pub const TAG_LOG_NUMBER: u32 = 2;
/// Tag: next file number (varint64).
pub const TAG_NEXT_FILE_NUMBER: u32 = 3;
/// Tag: last sequence number (varint64).
pub const TAG_LAST_SEQUENCE: u32 = 4;
/// Tag: deleted file (varint32 level, varint64 number).
pub const TAG_DELETED_FILE: u32 = 6;
/// Tag: new file (level, number, size, smallest, largest, seq range, entry counts).
pub const TAG_NEW_FILE: u32 = 7;

/// A change to the set of live files and the counters recorded with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// Name of the key comparator (only `leveldb.BytewiseComparator` is supported).
    pub comparator: Option<String>,
    /// WALs numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// Next file number to allocate.
    pub next_file_number: Option<u64>,
    /// Last sequence number used.
    pub last_sequence: Option<SequenceNumber>,
    /// Files removed: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: (level, metadata).
    pub new_files: Vec<(usize, FileMetaData)>,
    /// Blob files added (tag 400).
    pub blob_file_additions: Vec<BlobFileAddition>,
    /// Garbage counted in blob files (tag 401).
    pub blob_file_garbage: Vec<BlobFileGarbage>,
    /// The column family fields (`cf_edit.rs`): which family, created, dropped.
    pub cf: CfEdit,
}

impl VersionEdit {
    /// Appends the encoded edit to `dst`.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if let Some(c) = &self.comparator {
            put_varint32(dst, TAG_COMPARATOR);
            put_length_prefixed(dst, c.as_bytes());
        }
        for (tag, v) in [
            (TAG_LOG_NUMBER, self.log_number),
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
        ] {
            if let Some(v) = v {
                put_varint32(dst, tag);
                put_varint64(dst, v);
            }
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(dst, TAG_DELETED_FILE);
            put_varint32(dst, level as u32);
            put_varint64(dst, number);
        }
        for (level, f) in &self.new_files {
            put_varint32(dst, TAG_NEW_FILE);
            put_varint32(dst, *level as u32);
            put_varint64(dst, f.number);
            put_varint64(dst, f.file_size);
            put_length_prefixed(dst, f.smallest.encoded());
            put_length_prefixed(dst, f.largest.encoded());
            put_varint64(dst, f.smallest_seq);
            put_varint64(dst, f.largest_seq);
            put_varint64(dst, f.num_entries);
            put_varint64(dst, f.num_deletions);
            if f.oldest_blob_file_number != 0 {
                put_varint32(dst, TAG_OLDEST_BLOB_FILE);
                put_varint64(dst, f.number);
                put_varint64(dst, f.oldest_blob_file_number);
            }
        }
        for a in &self.blob_file_additions {
            a.encode(dst);
        }
        for g in &self.blob_file_garbage {
            g.encode(dst);
        }
        self.cf.encode(dst);
    }

    /// Decodes an edit; `file`/`offset` name its record for the error.
    pub fn decode(src: &[u8], file: &str, offset: u64) -> Result<VersionEdit> {
        let mut edit = VersionEdit::default();
        let mut d = Decoder::new(src);
        while !d.is_empty() {
            let field_start = d.position();
            let err = |what: &str| {
                Error::corruption(
                    file,
                    offset,
                    format!("version edit: {what} at byte {field_start} of the record"),
                )
            };
            let tag = d.varint32().ok_or_else(|| err("bad tag"))?;
            match tag {
                TAG_COMPARATOR => {
                    let name = d.length_prefixed().ok_or_else(|| err("truncated comparator"))?;
                    let name = std::str::from_utf8(name)
                        .map_err(|_| err("comparator name is not UTF-8"))?;
                    edit.comparator = Some(name.to_string());
                }
                TAG_LOG_NUMBER => {
                    edit.log_number = Some(d.varint64().ok_or_else(|| err("truncated log number"))?)
                }
                TAG_NEXT_FILE_NUMBER => {
                    let v = d.varint64().ok_or_else(|| err("truncated next file number"))?;
                    edit.next_file_number = Some(v);
                }
                TAG_LAST_SEQUENCE => {
                    let v = d.varint64().ok_or_else(|| err("truncated last sequence"))?;
                    edit.last_sequence = Some(v);
                }
                TAG_DELETED_FILE => {
                    let level = d.varint32().ok_or_else(|| err("truncated deleted file"))?;
                    let number = d.varint64().ok_or_else(|| err("truncated deleted file"))?;
                    edit.deleted_files.push((level as usize, number));
                }
                TAG_NEW_FILE => {
                    let f = decode_new_file(&mut d).ok_or_else(|| err("bad new-file entry"))?;
                    edit.new_files.push(f);
                }
                TAG_BLOB_FILE_ADDITION => {
                    let a = BlobFileAddition::decode(&mut d)
                        .ok_or_else(|| err("bad blob file addition"))?;
                    edit.blob_file_additions.push(a);
                }
                TAG_OLDEST_BLOB_FILE => {
                    let bad = || err("bad oldest blob file");
                    let number = d.varint64().ok_or_else(bad)?;
                    let oldest = d.varint64().ok_or_else(bad)?;
                    // It follows its file's tag 7 in the same edit, once.
                    let f = edit
                        .new_files
                        .iter_mut()
                        .rev()
                        .find(|(_, f)| f.number == number)
                        .map(|(_, f)| f)
                        .filter(|f| f.oldest_blob_file_number == 0 && oldest != 0)
                        .ok_or_else(|| err("oldest blob file of no new file"))?;
                    f.oldest_blob_file_number = oldest;
                }
                TAG_BLOB_FILE_GARBAGE => {
                    let g = BlobFileGarbage::decode(&mut d)
                        .ok_or_else(|| err("bad blob file garbage"))?;
                    edit.blob_file_garbage.push(g);
                }
                t if is_cf_tag(t) => edit.cf.decode_field(t, &mut d).map_err(err)?,
                other => return Err(err(&format!("unknown tag {other}"))),
            }
        }
        Ok(edit)
    }
}

fn decode_new_file(d: &mut Decoder<'_>) -> Option<(usize, FileMetaData)> {
    let level = d.varint32()? as usize;
    let number = d.varint64()?;
    let file_size = d.varint64()?;
    let smallest = d.length_prefixed()?;
    let largest = d.length_prefixed()?;
    parse_internal_key(smallest)?;
    parse_internal_key(largest)?;
    let meta = FileMetaData {
        number,
        file_size,
        smallest: InternalKey(smallest.to_vec()),
        largest: InternalKey(largest.to_vec()),
        smallest_seq: d.varint64()?,
        largest_seq: d.varint64()?,
        num_entries: d.varint64()?,
        num_deletions: d.varint64()?,
        oldest_blob_file_number: 0,
        reader: Default::default(),
    };
    Some((level, meta))
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::key::ValueKind;

    fn random_key(rng: &mut impl Rng) -> InternalKey {
        let len = rng.gen_range(0..20);
        let uk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let kind = if rng.gen() { ValueKind::Put } else { ValueKind::RangeDelete };
        InternalKey::new(&uk, rng.gen_range(0..=crate::key::MAX_SEQUENCE), kind)
    }

    fn random_edit(rng: &mut impl Rng) -> VersionEdit {
        let mut e = VersionEdit::default();
        if rng.gen() {
            e.comparator = Some("leveldb.BytewiseComparator".into());
        }
        let opt = |rng: &mut dyn rand::RngCore| {
            if rng.gen() {
                Some(rng.gen::<u64>() >> rng.gen_range(0..64))
            } else {
                None
            }
        };
        e.log_number = opt(rng);
        e.next_file_number = opt(rng);
        e.last_sequence = opt(rng);
        for _ in 0..rng.gen_range(0..4) {
            e.deleted_files.push((rng.gen_range(0..7), rng.gen::<u64>() >> rng.gen_range(0..64)));
        }
        for _ in 0..rng.gen_range(0..4) {
            let f = FileMetaData {
                number: rng.gen::<u64>() >> rng.gen_range(0..64),
                file_size: rng.gen::<u64>() >> rng.gen_range(0..64),
                smallest: random_key(rng),
                largest: random_key(rng),
                smallest_seq: rng.gen_range(0..1000),
                largest_seq: rng.gen_range(1000..1 << 40),
                num_entries: rng.gen_range(0..1 << 20),
                num_deletions: rng.gen_range(0..1000),
                oldest_blob_file_number: if rng.gen() { rng.gen_range(1..1 << 40) } else { 0 },
                reader: Default::default(),
            };
            e.new_files.push((rng.gen_range(0..7), f));
        }
        e
    }

    fn field_count(e: &VersionEdit) -> usize {
        usize::from(e.comparator.is_some())
            + usize::from(e.log_number.is_some())
            + usize::from(e.next_file_number.is_some())
            + usize::from(e.last_sequence.is_some())
            + e.deleted_files.len()
            + e.new_files.len()
            + e.new_files.iter().filter(|(_, f)| f.oldest_blob_file_number != 0).count()
    }

    #[test]
    fn random_edits_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..500 {
            let e = random_edit(&mut rng);
            let mut buf = Vec::new();
            e.encode(&mut buf);
            assert_eq!(VersionEdit::decode(&buf, "MANIFEST-000001", 0).unwrap(), e);
        }
    }

    #[test]
    fn every_truncation_inside_a_field_is_an_error() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for _ in 0..100 {
            let e = random_edit(&mut rng);
            let mut buf = Vec::new();
            e.encode(&mut buf);
            let mut ok_cuts = 0;
            for cut in 0..=buf.len() {
                match VersionEdit::decode(&buf[..cut], "MANIFEST-000009", 77) {
                    Ok(prefix) => {
                        // Only a cut between fields decodes: to exactly the fields before it.
                        let mut again = Vec::new();
                        prefix.encode(&mut again);
                        assert_eq!(again, &buf[..cut]);
                        ok_cuts += 1;
                    }
                    Err(Error::Corruption { file, offset, .. }) => {
                        assert_eq!((file.as_str(), offset), ("MANIFEST-000009", 77));
                    }
                    Err(other) => panic!("unexpected error {other}"),
                }
            }
            assert_eq!(ok_cuts, field_count(&e) + 1, "{e:?}");
        }
    }

    #[test]
    fn random_bytes_decode_without_panicking() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(6);
        for _ in 0..2000 {
            let mut buf = Vec::new();
            random_edit(&mut rng).encode(&mut buf);
            // Damage a valid encoding in a few places, or use pure noise.
            if rng.gen() || buf.is_empty() {
                buf = (0..rng.gen_range(0..60)).map(|_| rng.gen()).collect();
            } else {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..buf.len());
                    buf[at] = rng.gen();
                }
            }
            match VersionEdit::decode(&buf, "M", 1) {
                Ok(_) => {}
                Err(e) => assert!(e.is_corruption(), "{e}"),
            }
        }
    }

    #[test]
    fn creation_edit_golden_bytes() {
        // docs/format/manifest.md, "Example".
        let e = VersionEdit {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..Default::default()
        };
        let mut buf = Vec::new();
        e.encode(&mut buf);
        let mut want = vec![0x01, 0x1a];
        want.extend_from_slice(b"leveldb.BytewiseComparator");
        want.extend_from_slice(&[0x02, 0x00, 0x03, 0x02, 0x04, 0x00]);
        assert_eq!(buf, want);
        assert_eq!(buf.len(), 34);
    }

    #[test]
    fn blob_file_tags_golden_bytes() {
        // docs/format/manifest.md, "Blob files" (bytes computed independently).
        let e = VersionEdit {
            blob_file_additions: vec![crate::version::blob_meta::BlobFileAddition {
                number: 9,
                blob_count: 2,
                blob_bytes: 300,
                file_size: 356,
                checksum: 0x1122_3344,
            }],
            blob_file_garbage: vec![crate::version::blob_meta::BlobFileGarbage {
                number: 9,
                garbage_count: 1,
                garbage_bytes: 150,
            }],
            ..Default::default()
        };
        let mut buf = Vec::new();
        e.encode(&mut buf);
        let want = [
            0x90, 0x03, 0x09, 0x02, 0xac, 0x02, 0xe4, 0x02, 0x44, 0x33, 0x22, 0x11, 0x91, 0x03,
            0x09, 0x01, 0x96, 0x01,
        ];
        assert_eq!(buf, want);
        assert_eq!(VersionEdit::decode(&buf, "M", 0).unwrap(), e);
        for cut in 1..buf.len() {
            let r = VersionEdit::decode(&buf[..cut], "M", 0);
            if cut != 12 {
                assert!(r.unwrap_err().is_corruption(), "cut at {cut}");
            }
        }
    }

    #[test]
    fn oldest_blob_file_golden_bytes() {
        // docs/format/manifest.md, "Oldest blob file" (bytes computed independently): file 5 at
        // level 1, 1000 bytes, keys "a"@1 and "b"@2 (puts), seqs 1..2, 2 entries, no deletions,
        // its blob indexes pointing into blob files 3 and up.
        let f = FileMetaData {
            number: 5,
            file_size: 1000,
            smallest: InternalKey::new(b"a", 1, ValueKind::Put),
            largest: InternalKey::new(b"b", 2, ValueKind::Put),
            smallest_seq: 1,
            largest_seq: 2,
            num_entries: 2,
            num_deletions: 0,
            oldest_blob_file_number: 3,
            reader: Default::default(),
        };
        let e = VersionEdit { new_files: vec![(1, f.clone())], ..Default::default() };
        let mut buf = Vec::new();
        e.encode(&mut buf);
        let want = [
            0x07, 0x01, 0x05, 0xe8, 0x07, // tag 7, level 1, file 5, 1000 bytes
            0x09, 0x61, 0x01, 0x01, 0, 0, 0, 0, 0, 0, // "a", (1 << 8) | 1
            0x09, 0x62, 0x01, 0x02, 0, 0, 0, 0, 0, 0, // "b", (2 << 8) | 1
            0x01, 0x02, 0x02, 0x00, // seqs 1..2, 2 entries, 0 deletions
            0x92, 0x03, 0x05, 0x03, // tag 402, file 5, oldest blob file 3
        ];
        assert_eq!(buf, want);
        assert_eq!(buf.len(), 33);
        assert_eq!(VersionEdit::decode(&buf, "M", 0).unwrap(), e);

        // Version 2's record (no tag 402) still decodes: the file references no blob file.
        let old = VersionEdit::decode(&buf[..buf.len() - 4], "M", 0).unwrap();
        assert_eq!(old.new_files[0].1, FileMetaData { oldest_blob_file_number: 0, ..f });

        // Tag 402 naming no new file of its edit, blob file 0, or a file twice is corruption.
        let file = &buf[..buf.len() - 4];
        let bad: [Vec<u8>; 4] = [
            vec![0x92, 0x03, 0x05, 0x03],
            [file, &[0x92, 0x03, 0x06, 0x03]].concat(),
            [file, &[0x92, 0x03, 0x05, 0x00]].concat(),
            [&buf[..], &[0x92, 0x03, 0x05, 0x04]].concat(),
        ];
        for rec in bad {
            let err = VersionEdit::decode(&rec, "M", 7).unwrap_err();
            assert!(err.to_string().contains("oldest blob file of no new file"), "{err}");
        }
    }

    #[test]
    fn unknown_tag_and_bad_keys_are_corruption() {
        let mut buf = Vec::new();
        put_varint32(&mut buf, 5); // tag 5 (LevelDB's compact pointer) is not supported
        put_varint32(&mut buf, 1);
        let err = VersionEdit::decode(&buf, "M", 3).unwrap_err();
        assert!(err.to_string().contains("unknown tag 5"), "{err}");

        let mut buf = Vec::new();
        put_varint32(&mut buf, TAG_NEW_FILE);
        put_varint32(&mut buf, 1);
        put_varint64(&mut buf, 9);
        put_varint64(&mut buf, 100);
        put_length_prefixed(&mut buf, b"short"); // shorter than the 8-byte trailer
        put_length_prefixed(&mut buf, &InternalKey::new(b"z", 1, ValueKind::Put).0);
        buf.extend_from_slice(&[0, 0, 0, 0]);
        assert!(VersionEdit::decode(&buf, "M", 3).unwrap_err().is_corruption());

        let mut buf = Vec::new();
        put_varint32(&mut buf, TAG_COMPARATOR);
        put_length_prefixed(&mut buf, &[0xff, 0xfe]);
        assert!(VersionEdit::decode(&buf, "M", 3).unwrap_err().is_corruption());
    }
}
