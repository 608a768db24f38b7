//! Every single-bit flip of a small table is caught (Corruption from open/get/iter/verify) or
//! harmless (the exact data comes back); never a wrong value, never a panic. For both block
//! checksums; and a footer that names the wrong checksum (its version rewritten) is caught at
//! the first block read.

use super::*;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn small_table(
    c: CompressionType,
    checksum: ChecksumType,
) -> (Vec<u8>, Entries, Vec<RangeTombstone>) {
    let mut entries = Vec::new();
    for i in 0..24u32 {
        let uk = format!("key{:03}", i * 3);
        for seq in [20 + i as u64, 5] {
            let kind = if i % 5 == 0 && seq == 5 { ValueKind::Delete } else { ValueKind::Put };
            entries.push((
                key::make_internal_key(uk.as_bytes(), seq, kind),
                vec![b'a' + (i % 26) as u8; 12],
            ));
        }
    }
    let ts = vec![RangeTombstone { start: b"key010".to_vec(), end: b"key020".to_vec(), seq: 7 }];
    let (bytes, _) = build(TableBuilderOptions { checksum, ..opts(200, c) }, &entries, &ts);
    (bytes, entries, ts)
}

fn expect_corruption<T: std::fmt::Debug>(r: &Result<T>, at: usize) {
    if let Err(e) = r {
        assert!(e.is_corruption(), "flip at {at}: non-corruption error {e}");
    }
}

/// Checks one (possibly corrupted) table image against the expected content.
fn check_image(
    bytes: Vec<u8>,
    entries: &[(Vec<u8>, Vec<u8>)],
    ts: &[RangeTombstone],
    at: usize,
) -> bool {
    let r = match open(bytes, None) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            assert!(e.is_corruption(), "flip at {at}: open gave {e}");
            return true;
        }
    };
    let mut detected = false;
    assert_eq!(
        r.range_tombstones().to_tombstones(),
        FragmentedTombstones::new(ts.to_vec()).to_tombstones(),
        "flip at {at}"
    );
    let v = r.verify_checksums();
    expect_corruption(&v, at);
    detected |= v.is_err();
    for (k, val) in entries {
        let p = key::parse_internal_key(k).unwrap();
        let got = r.get(p.user_key, p.seq, false);
        expect_corruption(&got, at);
        match got {
            Ok(g) => assert_eq!(g, Some((p.kind, p.seq, val.clone())), "flip at {at}"),
            Err(_) => detected = true,
        }
    }
    // Forward and backward scans: a correct prefix, then either the end or an error.
    let mut it = r.iter(false);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert_eq!((it.key(), it.value()), (entries[n].0.as_slice(), entries[n].1.as_slice()));
        n += 1;
        it.next();
    }
    if n < entries.len() {
        assert!(it.status().unwrap_err().is_corruption(), "flip at {at}: short scan, no error");
        detected = true;
    }
    let mut it = r.iter(false);
    it.seek_to_last();
    let mut n = 0;
    while it.valid() {
        let (k, v) = &entries[entries.len() - 1 - n];
        assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()), "flip at {at}");
        n += 1;
        it.prev();
    }
    if n < entries.len() {
        assert!(it.status().unwrap_err().is_corruption(), "flip at {at}: short scan, no error");
        detected = true;
    }
    detected
}

#[test]
fn every_bit_flip_is_caught_or_harmless() {
    let cases =
        ChecksumType::ALL.map(|k| [(CompressionType::None, k), (CompressionType::Snappy, k)]);
    for (c, checksum) in cases.into_iter().flatten() {
        let (bytes, entries, ts) = small_table(c, checksum);
        assert!(!check_image(bytes.clone(), &entries, &ts, usize::MAX));
        let mut caught = 0;
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[at] ^= 1 << bit;
                if check_image(b, &entries, &ts, at) {
                    caught += 1;
                }
            }
        }
        // Every byte is covered by a checksum, so every flip must be detected.
        assert_eq!(caught, bytes.len() * 8, "{c:?} {checksum:?}");
    }
}

/// Rewrites the footer's format version to `version`, with a valid footer checksum.
fn claim_version(bytes: &mut [u8], version: u32) {
    use crate::sst::format::FOOTER_LEN;
    let n = bytes.len();
    bytes[n - 16..n - 12].copy_from_slice(&version.to_le_bytes());
    let crc = crate::coding::mask_crc(crc32c::crc32c(&bytes[n - FOOTER_LEN..n - 12]));
    bytes[n - 12..n - 8].copy_from_slice(&crc.to_le_bytes());
}

/// A file that records the offset of every read.
struct Recording(MemRandom, Mutex<Vec<u64>>);

impl RandomAccessFile for Recording {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.1.lock().unwrap().push(offset);
        self.0.read_exact_at(offset, buf)
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
}

/// A version-4 (XXH3) table whose footer claims version 3 (or 2, 1) is read with crc32c: its
/// first block read (the meta-index, at open, right after the footer) fails as Corruption
/// naming that block, and so does a crc32c table (version 2) claiming version 4. Never wrong
/// data: nothing is decoded from a block whose checksum did not match.
#[test]
fn a_footer_naming_the_wrong_checksum_fails_the_first_block_read() {
    use crate::sst::format::{Footer, FOOTER_LEN};
    for (checksum, claims) in [
        (ChecksumType::Xxh3, 3),
        (ChecksumType::Xxh3, 2),
        (ChecksumType::Xxh3, 1),
        (ChecksumType::Crc32c, 4),
    ] {
        let (mut bytes, _, _) = small_table(CompressionType::None, checksum);
        let n = bytes.len();
        let footer = Footer::decode(&bytes[n - FOOTER_LEN..], "t", 0).unwrap();
        assert_eq!(footer.checksum_type(), checksum);
        claim_version(&mut bytes, claims);
        let lied = Footer::decode(&bytes[n - FOOTER_LEN..], "t", 0).unwrap();
        assert_eq!((lied.version, lied.metaindex), (claims, footer.metaindex), "footer decodes");
        let file = Arc::new(Recording(MemRandom(bytes), Mutex::new(Vec::new())));
        let e = TableReader::open(Arc::clone(&file) as _, 7, "mem.sst".into(), None)
            .err()
            .expect("a table whose footer names the wrong checksum opened");
        let what = format!("{checksum:?} claiming {claims}: {e}");
        match &e {
            Error::Corruption { offset, detail, .. } => {
                assert_eq!(*offset, footer.metaindex.offset, "{what}");
                assert!(detail.contains("block checksum mismatch"), "{what}");
            }
            _ => panic!("{what}"),
        }
        let reads = file.1.lock().unwrap().clone();
        assert_eq!(reads, vec![(n - FOOTER_LEN) as u64, footer.metaindex.offset], "{what}");
    }
}

#[test]
fn truncated_and_garbage_files_are_corruption() {
    let (bytes, _, _) = small_table(CompressionType::Lz4, ChecksumType::Xxh3);
    for len in 0..bytes.len() {
        let e = open(bytes[..len].to_vec(), None).err().expect("truncated table opened");
        assert!(e.is_corruption(), "len {len}: {e}");
    }
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..200 {
        let mut g = vec![0u8; rng.gen_range(0..300)];
        rng.fill(g.as_mut_slice());
        assert!(open(g, None).is_err());
    }
}

#[test]
fn garbage_blocks_never_panic() {
    // Decode random bytes (and mutated real blocks) directly as blocks.
    let mut rng = StdRng::seed_from_u64(4);
    let entries = random_entries(&mut rng, 60);
    let mut bb = super::super::block_builder::BlockBuilder::new(4);
    for (k, v) in &entries {
        bb.add(k, v);
    }
    let good = bb.finish().to_vec();
    for round in 0..3000 {
        let mut data = if round % 3 == 0 {
            let mut g = vec![0u8; rng.gen_range(0..200)];
            rng.fill(g.as_mut_slice());
            g
        } else {
            good.clone()
        };
        for _ in 0..rng.gen_range(1..4) {
            if !data.is_empty() {
                let i = rng.gen_range(0..data.len());
                data[i] = rng.gen();
            }
        }
        let Ok(block) = Block::new(data, "g".into(), 0) else { continue };
        let block = crate::cache::CacheHandle::new(block);
        let mut it = block.iter();
        let mut rng2 = StdRng::seed_from_u64(round);
        for _ in 0..50 {
            match rng2.gen_range(0..6) {
                0 => it.seek_to_first(),
                1 => it.seek_to_last(),
                2 => it.seek(&entries[rng2.gen_range(0..entries.len())].0),
                3 => it.seek_for_prev(&entries[rng2.gen_range(0..entries.len())].0),
                4 => it.next(),
                _ => it.prev(),
            }
            if it.valid() {
                let _ = (it.key(), it.value());
            } else if let Err(e) = it.status() {
                assert!(e.is_corruption());
            }
        }
    }
}
