//! The properties block: [`TableProperties`] as block entries `name -> value`, sorted by name.
//! Numbers are varint64, `talus.compression` is the compression type byte, keys are raw bytes.
//! Unknown names are ignored (newer writers may add some); a known name with a bad value is
//! corruption. `file_size` is not stored: the reader fills it from the file.

use crate::cache::CacheHandle;
use crate::coding::{get_varint64, put_varint64};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::options::CompressionType;

use super::block::Block;
use super::block_builder::BlockBuilder;
use super::TableProperties;

/// Property names, sorted.
const COMPRESSION: &str = "talus.compression";
const DATA_SIZE: &str = "talus.data.size";
const FILTER_SIZE: &str = "talus.filter.size";
const INDEX_SIZE: &str = "talus.index.size";
const INDEX_USER_KEYS: &str = "talus.index.user.keys";
const LARGEST_POINT_KEY: &str = "talus.largest.point.key";
const LARGEST_SEQ: &str = "talus.largest.seq";
const NUM_DATA_BLOCKS: &str = "talus.num.data.blocks";
const NUM_DELETIONS: &str = "talus.num.deletions";
const NUM_ENTRIES: &str = "talus.num.entries";
const NUM_RANGE_DELETIONS: &str = "talus.num.range.deletions";
const RAW_KEY_SIZE: &str = "talus.raw.key.size";
const RAW_VALUE_SIZE: &str = "talus.raw.value.size";
const SMALLEST_POINT_KEY: &str = "talus.smallest.point.key";
const SMALLEST_SEQ: &str = "talus.smallest.seq";

/// Encodes `p` as a finished block.
pub fn encode(p: &TableProperties) -> Vec<u8> {
    let mut b = BlockBuilder::new(1);
    let num = |b: &mut BlockBuilder, name: &str, v: u64| {
        let mut buf = Vec::with_capacity(10);
        put_varint64(&mut buf, v);
        b.add(name.as_bytes(), &buf);
    };
    if let Some(c) = p.compression {
        b.add(COMPRESSION.as_bytes(), &[c as u8]);
    }
    num(&mut b, DATA_SIZE, p.data_size);
    num(&mut b, FILTER_SIZE, p.filter_size);
    num(&mut b, INDEX_SIZE, p.index_size);
    if p.index_key_is_user_key {
        num(&mut b, INDEX_USER_KEYS, 1);
    }
    b.add(LARGEST_POINT_KEY.as_bytes(), &p.largest_point_key);
    num(&mut b, LARGEST_SEQ, p.largest_seq);
    num(&mut b, NUM_DATA_BLOCKS, p.num_data_blocks);
    num(&mut b, NUM_DELETIONS, p.num_deletions);
    num(&mut b, NUM_ENTRIES, p.num_entries);
    num(&mut b, NUM_RANGE_DELETIONS, p.num_range_deletions);
    num(&mut b, RAW_KEY_SIZE, p.raw_key_size);
    num(&mut b, RAW_VALUE_SIZE, p.raw_value_size);
    b.add(SMALLEST_POINT_KEY.as_bytes(), &p.smallest_point_key);
    num(&mut b, SMALLEST_SEQ, p.smallest_seq);
    b.finish().to_vec()
}

/// Decodes the properties block.
pub fn decode(block: &CacheHandle<Block>, file: &str) -> Result<TableProperties> {
    let mut p = TableProperties::default();
    let bad = |d: String| Error::corruption(file, block.offset(), format!("properties: {d}"));
    let mut it = block.iter();
    it.seek_to_first();
    while it.valid() {
        let (name, v) = (it.key(), it.value());
        let num = || -> Result<u64> {
            match get_varint64(v) {
                Some((x, n)) if n == v.len() => Ok(x),
                _ => Err(bad(format!("bad number for {}", String::from_utf8_lossy(name)))),
            }
        };
        match std::str::from_utf8(name).unwrap_or("") {
            COMPRESSION => {
                let c = match v {
                    [b] => CompressionType::from_u8(*b),
                    _ => None,
                };
                p.compression = Some(c.ok_or_else(|| bad("bad compression type".into()))?);
            }
            DATA_SIZE => p.data_size = num()?,
            FILTER_SIZE => p.filter_size = num()?,
            INDEX_SIZE => p.index_size = num()?,
            INDEX_USER_KEYS => p.index_key_is_user_key = num()? == 1,
            LARGEST_POINT_KEY => p.largest_point_key = v.to_vec(),
            LARGEST_SEQ => p.largest_seq = num()?,
            NUM_DATA_BLOCKS => p.num_data_blocks = num()?,
            NUM_DELETIONS => p.num_deletions = num()?,
            NUM_ENTRIES => p.num_entries = num()?,
            NUM_RANGE_DELETIONS => p.num_range_deletions = num()?,
            RAW_KEY_SIZE => p.raw_key_size = num()?,
            RAW_VALUE_SIZE => p.raw_value_size = num()?,
            SMALLEST_POINT_KEY => p.smallest_point_key = v.to_vec(),
            SMALLEST_SEQ => p.smallest_seq = num()?,
            _ => {}
        }
        it.next();
    }
    it.status()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = TableProperties {
            num_entries: 10,
            num_deletions: 2,
            num_range_deletions: 1,
            raw_key_size: 300,
            raw_value_size: 1 << 40,
            data_size: 4096,
            index_size: 50,
            filter_size: 65,
            num_data_blocks: 3,
            smallest_seq: 1,
            largest_seq: 99,
            compression: Some(CompressionType::Zstd),
            file_size: 0,
            smallest_point_key: b"a\0\0\0\0\0\0\0\x01".to_vec(),
            largest_point_key: b"z\0\0\0\0\0\0\0\x01".to_vec(),
            index_key_is_user_key: true,
        };
        let block = CacheHandle::new(Block::new(encode(&p), "t".into(), 0).unwrap());
        assert_eq!(decode(&block, "t").unwrap(), p);
        let v1 = TableProperties { index_key_is_user_key: false, ..p.clone() };
        let block = CacheHandle::new(Block::new(encode(&v1), "t".into(), 0).unwrap());
        assert_eq!(decode(&block, "t").unwrap(), v1);
        // Names are sorted so the block can be searched.
        let mut it = block.iter();
        it.seek_to_first();
        let mut prev = Vec::new();
        while it.valid() {
            assert!(prev.as_slice() < it.key());
            prev = it.key().to_vec();
            it.next();
        }
    }
}
