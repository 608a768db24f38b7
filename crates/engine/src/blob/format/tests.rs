use super::*;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of `docs/format/blob.md`'s example, exactly (computed independently of this code,
/// with a Python crc32c): a change here is a format change.
#[test]
fn golden_header_record_footer_and_index() {
    let header = BlobHeader { compression: CompressionType::Lz4 }.encode();
    assert_eq!(hex(&header), "54424c420100000004000000d325122a");
    let mut rec = Vec::new();
    let at = encode_record(&mut rec, b"key", b"value");
    assert_eq!(hex(&rec), "0300000005000000d9ba0cb5430f33a56b657976616c7565");
    assert_eq!(at, 19, "the index points at the value, after the 16-byte header and the key");
    assert_eq!(check_record(&rec, b"key", 5).unwrap(), b"value");
    let footer = BlobFooter { blob_count: 1, blob_bytes: 24 }.encode();
    assert_eq!(hex(&footer), "0100000000000000180000000000000054424c42b52ef1f6");
    let mut idx = Vec::new();
    BlobIndex { file_number: 7, offset: 35, size: 5, compression: CompressionType::None }
        .encode(&mut idx);
    assert_eq!(idx, [1, 7, 35, 5, 0]);
    let mut idx = Vec::new();
    BlobIndex { file_number: 300, offset: 35, size: 5, compression: CompressionType::Zstd }
        .encode(&mut idx);
    assert_eq!(hex(&idx), "01ac02230507");
}

#[test]
fn round_trips() {
    for c in [CompressionType::None, CompressionType::Zstd] {
        let h = BlobHeader { compression: c };
        assert_eq!(BlobHeader::decode(&h.encode()).unwrap(), h);
    }
    let f = BlobFooter { blob_count: 9, blob_bytes: 1 << 40 };
    assert_eq!(BlobFooter::decode(&f.encode()).unwrap(), f);
    let i = BlobIndex {
        file_number: 1 << 50,
        offset: 300,
        size: 70000,
        compression: CompressionType::Lz4,
    };
    let mut b = Vec::new();
    i.encode(&mut b);
    assert_eq!(BlobIndex::decode(&b).unwrap(), i);
}

#[test]
fn damage_is_an_error_never_a_panic() {
    let h = BlobHeader { compression: CompressionType::None }.encode();
    for cut in 0..h.len() {
        assert!(BlobHeader::decode(&h[..cut]).is_err());
    }
    for bit in 0..h.len() * 8 {
        let mut bad = h;
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(BlobHeader::decode(&bad).is_err(), "bit {bit}");
    }
    let f = BlobFooter { blob_count: 3, blob_bytes: 99 }.encode();
    for bit in 0..f.len() * 8 {
        let mut bad = f;
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(BlobFooter::decode(&bad).is_err(), "bit {bit}");
    }
    let mut rec = Vec::new();
    encode_record(&mut rec, b"k", b"some value");
    for cut in 0..rec.len() {
        assert!(check_record(&rec[..cut], b"k", 10).is_err());
    }
    for bit in 0..rec.len() * 8 {
        let mut bad = rec.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(check_record(&bad, b"k", 10).is_err(), "bit {bit}");
    }
    assert!(check_record(&rec, b"x", 10).is_err(), "another key");
    assert!(check_record(&rec, b"k", 9).is_err(), "another size");
    // The same record read in two parts (header and key, then the value), as the reader does.
    let (head, stored) = rec.split_at(RECORD_HEADER_LEN + 1);
    assert_eq!(check_record_parts(head, stored, b"k"), Ok(()));
    for bit in 0..rec.len() * 8 {
        let mut bad = rec.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let (head, stored) = bad.split_at(RECORD_HEADER_LEN + 1);
        assert!(check_record_parts(head, stored, b"k").is_err(), "parts, bit {bit}");
    }
    assert!(check_record_parts(head, stored, b"x").is_err(), "parts, another key");
    assert!(check_record_parts(head, &stored[..9], b"k").is_err(), "parts, another size");
    assert!(check_record_parts(&head[..RECORD_HEADER_LEN], stored, b"k").is_err(), "parts, cut");
    let mut idx = Vec::new();
    BlobIndex { file_number: 300, offset: 1 << 20, size: 5, compression: CompressionType::None }
        .encode(&mut idx);
    for cut in 0..idx.len() {
        assert!(BlobIndex::decode(&idx[..cut]).is_err());
    }
    let mut long = idx.clone();
    long.push(0);
    assert!(BlobIndex::decode(&long).is_err());
    idx[0] = 2;
    assert!(BlobIndex::decode(&idx).is_err());
}
