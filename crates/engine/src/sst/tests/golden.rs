//! The golden tables of `docs/format/sst.md`: two entries, no compression, no filter, with
//! crc32c block checksums (version 2) and with XXH3 ones (version 4); and the partitioned
//! example (version 3). The bytes asserted here are the ones the document shows; change both
//! together.

use super::*;

/// LevelDB's mask, written out independently of `coding::mask_crc`.
#[allow(clippy::manual_rotate)]
fn masked(bytes: &[u8]) -> [u8; 4] {
    let crc = crc32c::crc32c(bytes);
    ((crc >> 15) | (crc << 17)).wrapping_add(0xa282_ead8).to_le_bytes()
}

fn block_crc(block: &[u8], ctype: u8, offset: u64) -> [u8; 4] {
    let mut v = block.to_vec();
    v.push(ctype);
    v.extend_from_slice(&offset.to_le_bytes());
    masked(&v)
}

#[test]
fn golden_layout_matches_the_document() {
    let o = TableBuilderOptions {
        block_size: 4096,
        block_restart_interval: 16,
        bloom_bits_per_key: 0,
        compression: CompressionType::None,
        checksum: ChecksumType::Crc32c,
        ..Default::default()
    };
    let entries = vec![
        (key::make_internal_key(b"a", 1, ValueKind::Put), b"x".to_vec()),
        (key::make_internal_key(b"b", 2, ValueKind::Put), b"yz".to_vec()),
    ];
    let (bytes, props) = build(o, &entries, &[]);

    // Data block at offset 0 (35 bytes).
    #[rustfmt::skip]
    let data: [u8; 35] = [
        0x00, 0x09, 0x01, b'a', 0x01, 0x01, 0, 0, 0, 0, 0, 0, b'x',
        0x00, 0x09, 0x02, b'b', 0x01, 0x02, 0, 0, 0, 0, 0, 0, b'y', b'z',
        0x00, 0x00, 0x00, 0x00, // restart[0] = 0
        0x01, 0x00, 0x00, 0x00, // num_restarts = 1
    ];
    assert_eq!(&bytes[..35], &data);
    assert_eq!(bytes[35], 0x00, "compression type none");
    assert_eq!(&bytes[36..40], &block_crc(&data, 0, 0));

    // Index block at offset 40 (14 bytes), user keys (version 2): "c" -> handle (0, 35).
    #[rustfmt::skip]
    let index: [u8; 14] = [
        0x00, 0x01, 0x02, b'c', 0x00, 0x23,
        0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00,
    ];
    assert_eq!(&bytes[40..54], &index);
    assert_eq!(bytes[54], 0x00);
    assert_eq!(&bytes[55..59], &block_crc(&index, 0, 40));
    assert!(props.index_key_is_user_key);

    // Properties block at 59, then the meta-index, then the footer.
    let n = bytes.len();
    let footer = &bytes[n - 56..];
    assert_eq!(&footer[48..], b"TS_SULAT", "magic 0x54414c55535f5354 as fixed64 LE");
    assert_eq!(&footer[40..44], &[2, 0, 0, 0], "format_version 2");
    assert_eq!(&footer[44..48], &masked(&footer[..44]));
    // metaindex handle, index handle (40, 14), zero padding.
    let (meta, used) = super::super::format::BlockHandle::decode(footer).unwrap();
    assert_eq!(&footer[used..used + 2], &[0x28, 0x0e]);
    assert!(footer[used + 2..40].iter().all(|&b| b == 0));
    assert_eq!(meta.offset + meta.size + 5 + 56, n as u64);
    let props_size = meta.offset - 5 - 59;

    // The meta-index holds exactly "properties" -> (59, props_size).
    let mut want = vec![0x00, 10, 0];
    want.extend_from_slice(b"properties");
    want.push(59);
    crate::coding::put_varint64(&mut want, props_size);
    want[2] = (want.len() - 13) as u8; // value_len
    want.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    let m = meta.offset as usize;
    assert_eq!(&bytes[m..m + meta.size as usize], want.as_slice());

    assert_eq!(props.num_data_blocks, 1);
    assert_eq!(props.data_size, 40);
    assert_eq!(props.index_size, 19);
    assert_eq!(props.filter_size, 0);
    assert_eq!(props.raw_key_size, 18);
    assert_eq!(props.raw_value_size, 3);
    assert_eq!((props.smallest_seq, props.largest_seq), (1, 2));
    let r = open(bytes, None).unwrap();
    assert_eq!(r.get(b"b", 9, false).unwrap(), Some((ValueKind::Put, 2, b"yz".to_vec())));
}

/// The partitioned example of `docs/format/sst.md` (format version 3): every entry its own data
/// block, every index entry its own index partition, every user key its own filter partition.
#[test]
fn golden_partitioned_layout_matches_the_document() {
    let o = TableBuilderOptions {
        block_size: 1,
        block_restart_interval: 16,
        block_size_deviation: 10,
        bloom_bits_per_key: 10,
        compression: CompressionType::None,
        compression_level: crate::DEFAULT_COMPRESSION_LEVEL,
        checksum: ChecksumType::Crc32c,
        partitioned_index: true,
        partition_filters: true,
        metadata_block_size: 1,
    };
    let entries = vec![
        (key::make_internal_key(b"a", 1, ValueKind::Put), b"x".to_vec()),
        (key::make_internal_key(b"b", 2, ValueKind::Put), b"yz".to_vec()),
    ];
    let (bytes, props) = build(o, &entries, &[]);
    let at = |off: usize, block: &[u8]| {
        assert_eq!(&bytes[off..off + block.len()], block, "block at {off}");
        assert_eq!(bytes[off + block.len()], 0, "type none at {off}");
        let end = off + block.len();
        assert_eq!(&bytes[end + 1..end + 5], &block_crc(block, 0, off as u64), "crc at {off}");
    };
    #[rustfmt::skip]
    let data0: [u8; 21] = [0x00, 0x09, 0x01, b'a', 0x01, 0x01, 0, 0, 0, 0, 0, 0, b'x',
                           0, 0, 0, 0, 1, 0, 0, 0];
    #[rustfmt::skip]
    let data1: [u8; 22] = [0x00, 0x09, 0x02, b'b', 0x01, 0x02, 0, 0, 0, 0, 0, 0, b'y', b'z',
                           0, 0, 0, 0, 1, 0, 0, 0];
    at(0, &data0);
    at(26, &data1);
    // Filter partitions: one 64-byte line and k = 7 each, for "a" then "b".
    let fa = crate::sst::filter::build_filter(&[crate::sst::filter::filter_hash(b"a")], 10);
    let fb = crate::sst::filter::build_filter(&[crate::sst::filter::filter_hash(b"b")], 10);
    assert_eq!((fa.len(), fa[64], fb[64]), (65, 7, 7));
    at(53, &fa);
    at(123, &fb);
    // Top-level filter index: "a" -> (53, 65), "b" -> (123, 65).
    #[rustfmt::skip]
    let ftop: [u8; 24] = [0x00, 0x01, 0x02, b'a', 0x35, 0x41,
                          0x00, 0x01, 0x02, b'b', 0x7b, 0x41,
                          0, 0, 0, 0, 6, 0, 0, 0, 2, 0, 0, 0];
    at(193, &ftop);
    // Index partitions (user keys): "a" -> (0, 21); "c" -> (26, 22).
    #[rustfmt::skip]
    let ip0: [u8; 14] = [0x00, 0x01, 0x02, b'a', 0x00, 0x15, 0, 0, 0, 0, 1, 0, 0, 0];
    #[rustfmt::skip]
    let ip1: [u8; 14] = [0x00, 0x01, 0x02, b'c', 0x1a, 0x16, 0, 0, 0, 0, 1, 0, 0, 0];
    at(222, &ip0);
    at(241, &ip1);
    // Top-level index: "a" -> (222, 14), "c" -> (241, 14).
    #[rustfmt::skip]
    let itop: [u8; 26] = [0x00, 0x01, 0x03, b'a', 0xde, 0x01, 0x0e,
                          0x00, 0x01, 0x03, b'c', 0xf1, 0x01, 0x0e,
                          0, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0];
    at(260, &itop);
    assert_eq!((props.index_partitions, props.filter_partitions, props.num_data_blocks), (2, 2, 2));
    assert_eq!((props.index_size, props.top_level_index_size, props.filter_size), (69, 31, 169));
    assert!(props.partitioned_index && props.index_key_is_user_key);

    // Properties at 291, then the meta-index, then the footer (version 3, index -> (260, 26)).
    let n = bytes.len();
    let footer = &bytes[n - 56..];
    assert_eq!(&footer[40..44], &[3, 0, 0, 0], "format_version 3");
    assert_eq!(&footer[44..48], &masked(&footer[..44]));
    let (meta, used) = super::super::format::BlockHandle::decode(footer).unwrap();
    assert_eq!(&footer[used..used + 3], &[0x84, 0x02, 0x1a]);
    let props_size = meta.offset - 5 - 291;
    // The meta-index: "partitionedfilter" -> (193, 24), "properties" -> (291, props_size).
    let mut want = vec![0x00, 17, 3];
    want.extend_from_slice(b"partitionedfilter");
    want.extend_from_slice(&[0xc1, 0x01, 0x18]);
    want.extend_from_slice(&[0x00, 10, 0]);
    want.extend_from_slice(b"properties");
    let v = want.len();
    crate::coding::put_varint64(&mut want, 291);
    crate::coding::put_varint64(&mut want, props_size);
    want[v - 11] = (want.len() - v) as u8; // value_len of the second entry
    want.extend_from_slice(&[0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0]);
    let m = meta.offset as usize;
    assert_eq!(&bytes[m..m + meta.size as usize], want.as_slice());

    let r = open(bytes, None).unwrap();
    assert_eq!(r.get(b"a", 9, false).unwrap(), Some((ValueKind::Put, 1, b"x".to_vec())));
    assert_eq!(r.get(b"b", 9, false).unwrap(), Some((ValueKind::Put, 2, b"yz".to_vec())));
    assert_eq!(r.get(b"c", 9, false).unwrap(), None);
}

/// The version-4 trailer checksum, written out from the document's formula independently of
/// `sst::checksum`.
fn xxh3_trailer(block: &[u8], ctype: u8, offset: u64) -> [u8; 4] {
    let h = xxhash_rust::xxh3::xxh3_64(block) & 0xffff_ffff;
    let t = (u64::from(ctype) * 0x9E37_79B1) & 0xffff_ffff;
    let o = offset.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xffff_ffff;
    ((h ^ t ^ o) as u32).to_le_bytes()
}

/// The version-4 example of `docs/format/sst.md`: the same two entries with XXH3 block
/// checksums. Every block byte is the crc32c table's; the trailers' checksums and the footer's
/// version differ.
#[test]
fn golden_xxh3_layout_matches_the_document() {
    let o = |checksum| TableBuilderOptions {
        block_size: 4096,
        block_restart_interval: 16,
        bloom_bits_per_key: 0,
        compression: CompressionType::None,
        checksum,
        ..Default::default()
    };
    let entries = vec![
        (key::make_internal_key(b"a", 1, ValueKind::Put), b"x".to_vec()),
        (key::make_internal_key(b"b", 2, ValueKind::Put), b"yz".to_vec()),
    ];
    let (bytes, props) = build(o(ChecksumType::Xxh3), &entries, &[]);
    let (crc_bytes, crc_props) = build(o(ChecksumType::Crc32c), &entries, &[]);
    assert_eq!(props, crc_props);
    assert_eq!(bytes.len(), crc_bytes.len());

    // The data block (35 bytes at 0) and the index block (14 bytes at 40) as in version 2, with
    // the trailers the document lists.
    assert_eq!(&bytes[..35], &crc_bytes[..35]);
    assert_eq!(&bytes[35..40], &[0x00, 0xa5, 0xe9, 0x0c, 0xd6], "data block trailer");
    assert_eq!(&bytes[36..40], &xxh3_trailer(&bytes[..35], 0, 0));
    assert_eq!(&bytes[40..54], &crc_bytes[40..54]);
    assert_eq!(&bytes[54..59], &[0x00, 0x32, 0xae, 0x24, 0x14], "index block trailer");
    assert_eq!(&bytes[55..59], &xxh3_trailer(&bytes[40..54], 0, 40));

    // Every block of the file, found from the footer's handles: the same bytes as in the crc32c
    // table, each followed by type 0 and its XXH3 checksum.
    let n = bytes.len();
    let footer = &bytes[n - 56..];
    let (meta, _) = super::super::format::BlockHandle::decode(footer).unwrap();
    let (m, ms) = (meta.offset as usize, meta.size as usize);
    let props_at = 59;
    let props_size = m - 5 - props_at;
    for (off, size) in [(0, 35), (40, 14), (props_at, props_size), (m, ms)] {
        assert_eq!(&bytes[off..off + size], &crc_bytes[off..off + size], "block at {off}");
        assert_eq!(bytes[off + size], 0, "type at {off}");
        let want = xxh3_trailer(&bytes[off..off + size], 0, off as u64);
        assert_eq!(&bytes[off + size + 1..off + size + 5], &want, "checksum at {off}");
    }
    assert_eq!(m + ms + 5 + 56, n);

    // The footer: the same handles, version 4, the crc32c footer checksum, the magic.
    assert_eq!(&footer[..40], &crc_bytes[n - 56..n - 16]);
    assert_eq!(&footer[40..44], &[4, 0, 0, 0], "format_version 4");
    assert_eq!(&footer[44..48], &masked(&footer[..44]), "the footer checksum stays crc32c");
    assert_eq!(&footer[48..], b"TS_SULAT");

    let r = open(bytes, None).unwrap();
    assert_eq!(r.get(b"b", 9, false).unwrap(), Some((ValueKind::Put, 2, b"yz".to_vec())));
    assert_eq!((r.format_version(), r.checksum_type()), (4, ChecksumType::Xxh3));
    r.verify_checksums().unwrap();
}
