//! Where data blocks are cut: `block_size` and `block_size_deviation`.

use super::{build, open, opts};
use crate::key::{self, ValueKind};
use crate::options::CompressionType;
use crate::sst::TableBuilderOptions;

/// Data blocks are closed early within `block_size_deviation` percent of `block_size`, as
/// RocksDB's flush policy does: 16-byte keys (24 with the trailer) and 400-byte values fill a
/// 4 KiB block with 9 entries (3,834 bytes, past the 10% limit of 3,687; a 10th would make
/// 4,263), not the 10 a block cut only on reaching `block_size` holds.
#[test]
fn blocks_close_early_within_block_size_deviation() {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..900u64)
        .map(|i| {
            let k = key::make_internal_key(format!("{i:016}").as_bytes(), 1, ValueKind::Put);
            (k, vec![b'v'; 400])
        })
        .collect();
    let blocks = |deviation: u32| {
        let o = TableBuilderOptions {
            block_size_deviation: deviation,
            ..opts(4096, CompressionType::None)
        };
        let (bytes, props) = build(o, &entries, &[]);
        let r = open(bytes, None).unwrap();
        for (k, v) in &entries {
            let got = r.get(key::user_key(k), 1, false).unwrap();
            assert_eq!(got, Some((ValueKind::Put, 1, v.clone())));
        }
        props.num_data_blocks
    };
    assert_eq!(blocks(10), 100);
    assert_eq!(blocks(0), 90);
    // 50%: closed before any entry that would overflow once past 2,049 bytes: also 9 here.
    assert_eq!(blocks(50), 100);
}
