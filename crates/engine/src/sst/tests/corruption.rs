//! Every single-bit flip of a small table is caught (Corruption from open/get/iter/verify) or
//! harmless (the exact data comes back); never a wrong value, never a panic.

use super::*;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn small_table(c: CompressionType) -> (Vec<u8>, Entries, Vec<RangeTombstone>) {
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
    let (bytes, _) = build(opts(200, c), &entries, &ts);
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
    for c in [CompressionType::None, CompressionType::Snappy] {
        let (bytes, entries, ts) = small_table(c);
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
        assert_eq!(caught, bytes.len() * 8, "{c:?}");
    }
}

#[test]
fn truncated_and_garbage_files_are_corruption() {
    let (bytes, _, _) = small_table(CompressionType::Lz4);
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
