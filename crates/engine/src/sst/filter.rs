//! The full-file bloom filter over user keys, cache-local (all probes of a key fall in one
//! 64-byte line, as RocksDB's FastLocalBloom).
//!
//! Layout: `lines: [u8; 64 * num_lines] | k: u8`. A key's hash `h = xxh3_64(user_key)`; its
//! line is `((h as u32 as u64) * num_lines) >> 32`; its probes are derived from `a = h >> 32`:
//! for each of the `k` probes, `a = a * 0x9e3779b9 (mod 2^32)` and the bit is `a >> 23` (0..512)
//! within the line, bit `b` being `line[b / 8] & (1 << (b % 8))`. `k = round(bits_per_key *
//! 0.69)` clamped to 1..=30; `num_lines = ceil(num_keys * bits_per_key / 512)`.
//!
//! Built by the table builder from the hashes of the user keys it saw; read by the table reader.

use crate::error::{Error, Result};

const LINE_BYTES: usize = 64;
const LINE_BITS: u64 = 512;
const GOLDEN: u32 = 0x9e37_79b9;

/// The hash a key is filtered by.
#[inline]
pub fn filter_hash(user_key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(user_key)
}

/// Probes for `bits_per_key`.
pub fn num_probes(bits_per_key: u32) -> u32 {
    ((f64::from(bits_per_key) * 0.69).round() as u32).clamp(1, 30)
}

#[inline]
fn line_of(h: u64, num_lines: u64) -> usize {
    (((h & 0xffff_ffff) * num_lines) >> 32) as usize
}

/// Builds the filter block from key hashes.
pub fn build_filter(hashes: &[u64], bits_per_key: u32) -> Vec<u8> {
    let k = num_probes(bits_per_key);
    let total_bits = (hashes.len() as u64).saturating_mul(u64::from(bits_per_key));
    let num_lines = total_bits.div_ceil(LINE_BITS);
    let len = (num_lines as usize) * LINE_BYTES;
    let mut out = vec![0u8; len + 1];
    for &h in hashes {
        let base = line_of(h, num_lines) * LINE_BYTES;
        let mut a = (h >> 32) as u32;
        for _ in 0..k {
            a = a.wrapping_mul(GOLDEN);
            let bit = (a >> 23) as usize;
            if let Some(byte) = out.get_mut(base + bit / 8) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
    if let Some(last) = out.last_mut() {
        *last = k as u8;
    }
    out
}

/// Checks a filter block's layout (the probe count byte and whole lines).
pub fn validate(data: &[u8], file: &str, offset: u64) -> Result<()> {
    let bad = |d: &str| Error::corruption(file, offset, format!("filter: {d}"));
    let (&k, lines) = data.split_last().ok_or_else(|| bad("empty"))?;
    if !(1..=30).contains(&k) {
        return Err(bad("probe count out of range"));
    }
    if lines.len() % LINE_BYTES != 0 {
        return Err(bad("length is not a whole number of lines"));
    }
    Ok(())
}

/// Probes a whole filter block (`lines | k`, checked by [`validate`]) for hash `h`: false only
/// if the key was certainly not added. Unvalidated bytes give a wrong answer, never a panic.
#[inline]
pub fn may_contain_in(data: &[u8], h: u64) -> bool {
    let Some((&k, lines)) = data.split_last() else {
        return true;
    };
    probe_lines(lines, (lines.len() / LINE_BYTES) as u64, u32::from(k), h)
}

#[inline]
fn probe_lines(data: &[u8], num_lines: u64, k: u32, h: u64) -> bool {
    if num_lines == 0 {
        return true;
    }
    let base = line_of(h, num_lines) * LINE_BYTES;
    let Some(line) = data.get(base..base + LINE_BYTES) else {
        return true;
    };
    let mut a = (h >> 32) as u32;
    for _ in 0..k {
        a = a.wrapping_mul(GOLDEN);
        let bit = (a >> 23) as usize;
        match line.get(bit / 8) {
            Some(b) if b & (1 << (bit % 8)) != 0 => {}
            _ => return false,
        }
    }
    true
}

/// A filter read from a table.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    data: Vec<u8>,
    num_lines: u64,
    k: u32,
}

impl BloomFilter {
    /// Validates the filter block read at `offset` of `file`.
    pub fn new(mut data: Vec<u8>, file: &str, offset: u64) -> Result<BloomFilter> {
        validate(&data, file, offset)?;
        let k = u32::from(data.pop().unwrap_or(1));
        let num_lines = (data.len() / LINE_BYTES) as u64;
        Ok(BloomFilter { data, num_lines, k })
    }

    /// False only if the key was certainly not added.
    pub fn may_contain_hash(&self, h: u64) -> bool {
        probe_lines(&self.data, self.num_lines, self.k, h)
    }

    /// False only if `user_key` was certainly not added.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.may_contain_hash(filter_hash(user_key))
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        self.data.len() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> [u8; 8] {
        i.to_be_bytes()
    }

    #[test]
    fn no_false_negatives_and_low_fp_rate() {
        let n = 100_000u64;
        let hashes: Vec<u64> = (0..n).map(|i| filter_hash(&key(i))).collect();
        let f = BloomFilter::new(build_filter(&hashes, 10), "t", 0).unwrap();
        for i in 0..n {
            assert!(f.may_contain(&key(i)));
        }
        let probes = 200_000u64;
        let fp = (n..n + probes).filter(|&i| f.may_contain(&key(i))).count();
        let rate = fp as f64 / probes as f64;
        eprintln!("bloom false-positive rate at 10 bits/key: {rate:.4}");
        assert!(rate < 0.02, "false positive rate {rate}");
        assert!(rate > 0.0001, "suspiciously low rate {rate}");
    }

    #[test]
    fn probes_and_sizes() {
        assert_eq!(num_probes(10), 7);
        assert_eq!(num_probes(1), 1);
        assert_eq!(num_probes(100), 30);
        assert_eq!(build_filter(&[1, 2, 3], 10).len(), 65);
        let empty = BloomFilter::new(build_filter(&[], 10), "t", 0).unwrap();
        assert!(empty.may_contain(b"x"));
    }

    #[test]
    fn filter_blocks_answer_as_the_owned_filter() {
        use crate::iter::InternalIterator;
        use std::sync::Arc;
        let hashes: Vec<u64> = (0..1000u64).map(|i| filter_hash(&key(i))).collect();
        let bytes = build_filter(&hashes, 10);
        let owned = BloomFilter::new(bytes.clone(), "t", 0).unwrap();
        let block = crate::sst::Block::new_filter(bytes, Arc::from("t"), 9).unwrap();
        let block = crate::cache::CacheHandle::new(block);
        assert_eq!(block.role(), crate::sst::BlockRole::Filter);
        for i in 0..5000u64 {
            let h = filter_hash(&key(i));
            assert_eq!(block.may_contain(h), owned.may_contain_hash(h), "key {i}");
        }
        // A filter block has no entries: iterating it is a corruption, not a panic.
        let mut it = block.iter();
        it.seek_to_first();
        assert!(!it.valid());
        it.seek(b"abcdefgh12345678");
        it.seek_to_last();
        assert!(it.status().is_err());
        assert!(crate::sst::Block::new_filter(vec![0; 64], Arc::from("t"), 9).is_err());
    }

    #[test]
    fn bad_filters_are_corruption() {
        assert!(BloomFilter::new(vec![], "t", 0).is_err());
        assert!(BloomFilter::new(vec![0; 65], "t", 0).is_err());
        assert!(BloomFilter::new(vec![7; 64], "t", 0).is_err());
    }
}
