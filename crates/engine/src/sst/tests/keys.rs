//! Keys in a table: the builder refuses out-of-order and malformed keys, index separators fall
//! between neighbouring keys, approximate offsets grow with the key, and the index's key form
//! (user keys or internal keys) follows block boundaries.

use super::*;

#[test]
fn builder_rejects_out_of_order_and_malformed_keys() {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(
        opts(4096, CompressionType::None),
        Box::new(MemWritable(buf)),
        "x.sst".into(),
    );
    b.add(&key::make_internal_key(b"b", 5, ValueKind::Put), b"").unwrap();
    assert!(b.add(&key::make_internal_key(b"a", 5, ValueKind::Put), b"").is_err());
    assert!(b.add(&key::make_internal_key(b"b", 5, ValueKind::Put), b"").is_err());
    assert!(b.add(b"short", b"").is_err());
    b.add(&key::make_internal_key(b"b", 4, ValueKind::Put), b"").unwrap();
    assert_eq!(b.num_entries(), 2);
    assert!(b.file_size_estimate() > 0);
}

#[test]
fn separators_are_between_keys() {
    use crate::sst::builder::{shortest_separator, shortest_successor};
    let mut rng = StdRng::seed_from_u64(5);
    let entries = random_entries(&mut rng, 3000);
    for w in entries.windows(2) {
        let s = shortest_separator(&w[0].0, &w[1].0);
        assert!(key::compare_internal(&w[0].0, &s).is_le());
        assert!(key::compare_internal(&s, &w[1].0).is_lt());
    }
    for (k, _) in &entries {
        assert!(key::compare_internal(k, &shortest_successor(k)).is_le());
    }
    let a = key::make_internal_key(b"abc", 1, ValueKind::Put);
    let b = key::make_internal_key(b"abx", 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), b"abd");
    // The differing byte can't grow (0x56 + 1 is the limit's byte): a later byte grows instead.
    let a = key::make_internal_key(&[0x12, 0x34, 0x56, 0x78, 0x9a], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x12, 0x34, 0x57, 0x00], 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), &[0x12, 0x34, 0x56, 0x79]);
    let a = key::make_internal_key(&[0x12, 0xff, 0xff, 0x01], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x13, 0x00], 1, ValueKind::Put);
    assert_eq!(key::user_key(&shortest_separator(&a, &b)), &[0x12, 0xff, 0xff, 0x02]);
    // Nothing shorter: a prefix of the next key, or only 0xff bytes after the difference.
    let a = key::make_internal_key(b"ab", 1, ValueKind::Put);
    let b = key::make_internal_key(b"abc", 1, ValueKind::Put);
    assert_eq!(shortest_separator(&a, &b), a);
    let a = key::make_internal_key(&[0x01, 0xff], 1, ValueKind::Put);
    let b = key::make_internal_key(&[0x02], 1, ValueKind::Put);
    assert_eq!(shortest_separator(&a, &b), a);
    // Exhaustively over short keys from a small alphabet.
    let alphabet = [0u8, 1, 2, 0xfe, 0xff];
    let mut keys: Vec<Vec<u8>> = vec![vec![]];
    for len in 1..=3 {
        let mut k = vec![0usize; len];
        loop {
            keys.push(k.iter().map(|&i| alphabet[i]).collect());
            let mut j = 0;
            while j < len && k[j] == alphabet.len() - 1 {
                k[j] = 0;
                j += 1;
            }
            if j == len {
                break;
            }
            k[j] += 1;
        }
    }
    keys.sort();
    for (i, ua) in keys.iter().enumerate() {
        for ub in &keys[i + 1..] {
            let a = key::make_internal_key(ua, 7, ValueKind::Put);
            let b = key::make_internal_key(ub, 9, ValueKind::Put);
            let s = shortest_separator(&a, &b);
            assert!(key::compare_internal(&a, &s).is_le(), "{ua:?} {ub:?}");
            assert!(key::compare_internal(&s, &b).is_lt(), "{ua:?} {ub:?}");
            assert!(key::user_key(&s).len() <= ua.len(), "{ua:?} {ub:?}");
        }
    }
}

#[test]
fn approximate_offsets_increase() {
    let mut rng = StdRng::seed_from_u64(11);
    let entries = random_entries(&mut rng, 1000);
    let (bytes, props) = build(opts(256, CompressionType::None), &entries, &[]);
    let r = open(bytes, None).unwrap();
    let mut last = 0;
    for (k, _) in &entries {
        let off = r.approximate_offset_of(k);
        assert!(off >= last && off < props.data_size);
        last = off;
    }
    let past = key::make_internal_key(
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        0,
        ValueKind::Put,
    );
    assert_eq!(r.approximate_offset_of(&past), props.data_size);
}

/// The index has user keys (format version 2) unless some user key's versions span two data
/// blocks; either way every version is found by `get`, `seek` and `seek_for_prev`.
#[test]
fn index_key_form_follows_block_boundaries() {
    // One version per user key, tiny blocks: user-key index.
    let single: Vec<(Vec<u8>, Vec<u8>)> = (0..300u32)
        .map(|i| {
            (key::make_internal_key(format!("k{i:04}").as_bytes(), 5, ValueKind::Put), vec![1; 20])
        })
        .collect();
    // Forty versions of one user key in the middle: they cannot share one 64-byte block.
    let mut spanning = single.clone();
    spanning.retain(|(k, _)| key::user_key(k) != b"k0150");
    for seq in 1..=40u64 {
        spanning.push((
            key::make_internal_key(b"k0150", seq, ValueKind::Put),
            seq.to_le_bytes().to_vec(),
        ));
    }
    spanning.sort_by(|a, b| key::compare_internal(&a.0, &b.0));
    for (entries, user_keys) in [(&single, true), (&spanning, false)] {
        let (bytes, props) = build(opts(64, CompressionType::None), entries, &[]);
        assert_eq!(props.index_key_is_user_key, user_keys);
        assert!(props.num_data_blocks > 50);
        let r = Arc::new(open(bytes, None).unwrap());
        for (k, v) in entries.iter() {
            let p = key::parse_internal_key(k).unwrap();
            let got = r.get(p.user_key, p.seq, false).unwrap();
            assert_eq!(got, Some((p.kind, p.seq, v.clone())), "{:?}@{}", p.user_key, p.seq);
            let mut it = r.iter(false);
            it.seek(k);
            assert!(it.valid() && it.key() == k.as_slice());
            it.seek_for_prev(k);
            assert!(it.valid() && it.key() == k.as_slice());
        }
        assert_eq!(r.get(b"k0150x", 99, false).unwrap(), None);
        let entries_back = r.index_entries().unwrap();
        assert_eq!(entries_back.len() as u64, props.num_data_blocks);
        assert!(entries_back.iter().all(|(sep, _)| key::parse_internal_key(sep).is_some()));
    }
}
