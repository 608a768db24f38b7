use super::*;
use crate::cache::CacheHandle;
use crate::iter::InternalIterator;
use crate::sst::block_builder::BlockBuilder;
use crate::sst::tests::{check_equivalent, random_entries};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn build_block(entries: &[(Vec<u8>, Vec<u8>)], restart: usize) -> CacheHandle<Block> {
    let mut b = BlockBuilder::new(restart);
    for (k, v) in entries {
        b.add(k, v);
    }
    assert_eq!(b.size_estimate(), b.finish().len());
    CacheHandle::new(Block::new(b.finish().to_vec(), "t".into(), 0).unwrap())
}

/// The bytes of a block of `keys` (in order) with restart interval `interval`, each key's value
/// its position (`u32`, little-endian).
fn numbered(keys: &[Vec<u8>], interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(interval);
    for (i, k) in keys.iter().enumerate() {
        b.add(k, &(i as u32).to_le_bytes());
    }
    b.finish().to_vec()
}

#[test]
fn iterator_matches_model_for_many_shapes() {
    let mut rng = StdRng::seed_from_u64(42);
    for &(n, restart) in &[(0usize, 16usize), (1, 16), (2, 1), (50, 1), (100, 4), (300, 16)] {
        let entries = random_entries(&mut rng, n);
        let block = build_block(&entries, restart);
        let mut it = block.iter();
        // Forward and backward scans.
        it.seek_to_first();
        for (k, v) in &entries {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()));
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in entries.iter().rev() {
            assert_eq!(it.key(), k.as_slice());
            it.prev();
        }
        assert!(!it.valid());
        it.status().unwrap();
        check_equivalent(&mut it, &entries, &mut rng, 2000);
    }
}

#[test]
fn prefix_compression_shares_bytes() {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..64u32)
        .map(|i| {
            let uk = format!("a-long-common-prefix-{i:04}");
            (crate::key::make_internal_key(uk.as_bytes(), 1, crate::key::ValueKind::Put), vec![])
        })
        .collect();
    let full: usize = entries.iter().map(|e| e.0.len()).sum();
    let block = build_block(&entries, 16);
    assert!(block.data().len() < full / 2, "{} vs {full}", block.data().len());
    let mut it = block.iter();
    it.seek(&entries[37].0);
    assert_eq!(it.key(), entries[37].0.as_slice());
}

#[test]
fn bad_restart_arrays_are_rejected() {
    assert!(Block::new(vec![], "t".into(), 9).unwrap_err().is_corruption());
    // Zero restarts; more restarts than bytes.
    assert!(Block::new(vec![0, 0, 0, 0], "t".into(), 9).is_err());
    assert!(Block::new(vec![0xff, 0, 0, 0], "t".into(), 9).is_err());
    // A restart point beyond the entries.
    let mut d = vec![50, 0, 0, 0];
    d.extend_from_slice(&[1, 0, 0, 0]);
    let e = Block::new(d, "f.sst".into(), 77).unwrap_err();
    assert!(e.to_string().contains("f.sst") && e.to_string().contains("77"), "{e}");
    // A first restart point that is not 0 (entries would be skipped: a seek takes the first
    // restart point as offset 0 without reading it).
    let mut d = vec![0u8, 1, 1, b'k', b'v'];
    d.extend_from_slice(&[2, 0, 0, 0, 1, 0, 0, 0]);
    let e = Block::new(d, "f.sst".into(), 5).unwrap_err();
    assert!(e.to_string().contains("first restart point"), "{e}");
    // The empty block.
    let b = CacheHandle::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0], "t".into(), 0).unwrap());
    let mut it = b.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"anything");
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn bad_entry_makes_iterator_invalid_with_corruption() {
    // shared = 5 on the first entry (no previous key).
    let mut d = vec![5, 1, 0, b'x'];
    d.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    let b = CacheHandle::new(Block::new(d, "t".into(), 3).unwrap());
    let mut it = b.iter();
    it.seek_to_first();
    assert!(!it.valid());
    assert!(it.status().unwrap_err().is_corruption());
    // value_len beyond the block.
    let mut d = vec![0, 1, 100, b'x'];
    d.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    let b = CacheHandle::new(Block::new(d, "t".into(), 3).unwrap());
    let mut it = b.iter();
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_err());
}

#[test]
fn restart_seek_agrees_with_the_iterator_or_asks_for_a_scan() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    let mut scans = 0;
    for n in [0usize, 1, 2, 7, 100] {
        let mut keys: Vec<Vec<u8>> = (0..n)
            .map(|_| (0..rng.gen_range(0..6)).map(|_| rng.gen_range(b'a'..b'f')).collect())
            .collect();
        keys.sort();
        keys.dedup();
        for interval in [1usize, 4] {
            let block =
                Block::with_role(numbered(&keys, interval), Arc::from("t"), 0, BlockRole::Index)
                    .unwrap();
            let block = CacheHandle::new(block);
            for _ in 0..200 {
                let t: Vec<u8> =
                    (0..rng.gen_range(0..6)).map(|_| rng.gen_range(b'a'..b'g')).collect();
                let mut it = block.iter();
                it.seek_bytewise(&t);
                let want = it.valid().then(|| it.value().to_vec());
                let got = match block.seek_restarts_bytewise(&t).unwrap() {
                    RestartSeek::Value(v) => Some(v.to_vec()),
                    RestartSeek::PastEnd => None,
                    RestartSeek::Scan => {
                        assert!(interval > 1, "interval 1 never needs a scan");
                        scans += 1;
                        continue;
                    }
                };
                assert_eq!(got, want, "interval {interval} keys {keys:?} target {t:?}");
            }
        }
    }
    assert!(scans > 0, "blocks with longer intervals must fall back to the iterator");
}

#[test]
fn restart_seek_reports_a_damaged_restart_entry() {
    let mut b = crate::sst::block_builder::BlockBuilder::new(1);
    for k in [&b"a"[..], b"b", b"c"] {
        b.add(k, b"v");
    }
    let mut data = b.finish().to_vec();
    // Entry "b" (at offset 5: 3 header bytes, key, value each) claims a shared prefix.
    assert_eq!(&data[5..8], &[0, 1, 1]);
    data[5] = 1;
    let block = Block::with_role(data, Arc::from("t"), 7, BlockRole::Index).unwrap();
    let e = block.seek_restarts_bytewise(b"b").unwrap_err();
    assert!(e.is_corruption(), "{e}");
}

#[test]
fn borrowed_block_iterates_as_its_owner_and_owned_outlives_it() {
    let mut rng = StdRng::seed_from_u64(7);
    let entries = random_entries(&mut rng, 120);
    let owner = build_block(&entries, 4);
    let borrowed = BlockRef::Borrowed(&owner);
    let mut it = borrowed.iter();
    check_equivalent(&mut it, &entries, &mut rng, 500);
    // Borrowed means the very handle the owner keeps (no count taken, no copy).
    assert!(matches!(borrowed, BlockRef::Borrowed(h) if CacheHandle::ptr_eq(h, &owner)));
    let owned = borrowed.into_owned();
    drop(it);
    drop(owner);
    // The owned reference keeps the block alive after its owner is gone.
    let mut it = owned.iter();
    it.seek_to_first();
    for (k, v) in &entries {
        assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()));
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn failed_borrowing_iterator_reports_its_error() {
    let it: BlockIter<BlockRef<'_>> = BlockIter::failed(Error::corruption("f", 9, "boom"));
    assert!(!it.valid());
    assert!(it.status().is_err());
}

/// A block with the search array of `prefixes.rs` seeks exactly as one without it: both the
/// iterator's bytewise seek and the restart seek, on keys with a long shared prefix, keys that
/// differ only past 8 bytes, short keys and binary bytes, interval 1 and 4.
#[test]
fn search_prefixes_seek_as_the_plain_search() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut built = 0;
    for shape in 0..4 {
        let mut keys: Vec<Vec<u8>> = (0..rng.gen_range(2..400))
            .map(|_| {
                let tail: Vec<u8> = match shape {
                    0 => (0..rng.gen_range(0..12)).map(|_| rng.gen_range(0..4u8)).collect(),
                    1 => rng.gen_range(0u64..1000).to_be_bytes().to_vec(),
                    2 => [b"12345678".as_slice(), &[rng.gen_range(0..8u8)]].concat(),
                    _ => (0..rng.gen_range(0..3)).map(|_| rng.gen()).collect(),
                };
                [b"user/".as_slice(), &tail].concat()
            })
            .collect();
        keys.sort();
        keys.dedup();
        for interval in [1usize, 4] {
            let bytes = numbered(&keys, interval);
            let plain =
                Block::with_role(bytes.clone(), Arc::from("t"), 0, BlockRole::Index).unwrap();
            let mut fast = Block::with_role(bytes, Arc::from("t"), 0, BlockRole::Index).unwrap();
            fast.build_search_prefixes();
            if fast.prefixes.is_some() {
                built += 1;
            }
            assert!(fast.charge() >= plain.charge());
            let (plain, fast) = (CacheHandle::new(plain), CacheHandle::new(fast));
            for i in 0..600 {
                let t: Vec<u8> = if i % 3 == 0 {
                    let mut k = keys[rng.gen_range(0..keys.len())].clone();
                    match rng.gen_range(0..3) {
                        0 => {}
                        1 => k.push(rng.gen_range(0..3)),
                        _ => {
                            k.pop();
                        }
                    }
                    k
                } else {
                    let mut k = b"user/".to_vec();
                    k.truncate(rng.gen_range(3..6));
                    k.extend((0..rng.gen_range(0..10)).map(|_| rng.gen_range(0..5u8)));
                    k
                };
                let (mut a, mut f) = (plain.iter(), fast.iter());
                a.seek_bytewise(&t);
                f.seek_bytewise(&t);
                let want = a.valid().then(|| (a.key().to_vec(), a.value().to_vec()));
                assert_eq!(f.valid().then(|| (f.key().to_vec(), f.value().to_vec())), want);
                let lb = keys.partition_point(|k| k.as_slice() < t.as_slice());
                assert_eq!(want.map(|w| w.0), keys.get(lb).cloned(), "target {t:?}");
                assert_eq!(
                    fast.seek_restarts_bytewise(&t).unwrap(),
                    plain.seek_restarts_bytewise(&t).unwrap(),
                    "interval {interval} target {t:?}"
                );
            }
        }
    }
    assert_eq!(built, 8, "every sorted block gets the array");
}

/// A block without entries (a table of range tombstones only has such an index): a bytewise seek
/// finds nothing and reports nothing.
#[test]
fn bytewise_seeks_of_an_empty_block_find_nothing() {
    let block = Block::with_role(numbered(&[], 1), Arc::from("t"), 0, BlockRole::Index).unwrap();
    assert_eq!(block.seek_restarts_bytewise(b"k").unwrap(), RestartSeek::PastEnd);
    let block = CacheHandle::new(block);
    let mut it = block.iter();
    it.seek_bytewise(b"k");
    assert!(!it.valid());
    it.status().unwrap();
}
