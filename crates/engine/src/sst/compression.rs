//! Block compression: none, Snappy (`snap::raw`), LZ4 (`lz4_flex::block`) and Zstd
//! (`zstd::bulk`, at the writer's level: 3 by default, `Options::compression_level`). LZ4 and
//! Zstd blocks start with the uncompressed size as a varint32.
//!
//! [`compress`] returns `None` when compression saves less than 1/8 of the block (the caller then
//! stores it uncompressed); [`decompress`] turns every failure into an error string that the
//! caller wraps in `Error::Corruption` with the block's file and offset.

use std::cell::RefCell;

use crate::coding::{encode_varint32, get_varint32};
use crate::options::CompressionType;

/// Largest uncompressed block accepted when decompressing: the largest block the builder can
/// write (`block_size` <= 1 GiB plus one entry <= [`super::builder::MAX_ENTRY_LEN`]).
pub const MAX_UNCOMPRESSED_BLOCK: usize = 3 << 30;

/// Compresses `raw` with `ctype`, or `None` if the type is `None`, compression failed, or it
/// saved less than 1/8 of the size. Allocates the result and a fresh context; a table builder
/// uses a [`BlockCompressor`] instead.
pub fn compress(ctype: CompressionType, raw: &[u8]) -> Option<Vec<u8>> {
    BlockCompressor::default().compress(ctype, raw).map(<[u8]>::to_vec)
}

/// What compressing blocks one after another keeps: an output buffer, grown (zero-filled) when
/// a block may need more room and never shrunk, and the Snappy encoder (its hash table) and
/// zstd's context once a block of that kind was compressed. A table builder owns one, so it
/// neither allocates nor zeroes per block, and zstd does not build a context per block (about
/// 6 us of 27 per 4 KiB block here).
pub struct BlockCompressor {
    out: Vec<u8>,
    snappy: Option<snap::raw::Encoder>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    level: i32,
}

impl Default for BlockCompressor {
    /// A compressor at each library's default level.
    fn default() -> Self {
        BlockCompressor::new(crate::options::DEFAULT_COMPRESSION_LEVEL)
    }
}

impl BlockCompressor {
    /// A compressor at `level` (RocksDB's `compression_opts.level`; checked by
    /// `Options::validate`).
    pub fn new(level: i32) -> Self {
        BlockCompressor { out: Vec::new(), snappy: None, zstd: None, level }
    }

    /// Compresses `raw` with `ctype`: the block's bytes, or `None` as [`compress`] says.
    pub fn compress(&mut self, ctype: CompressionType, raw: &[u8]) -> Option<&[u8]> {
        let len = u32::try_from(raw.len()).ok()?;
        let out = &mut self.out;
        let mut room = |need: usize| {
            if out.len() < need {
                out.resize(need, 0);
            }
        };
        let n = match ctype {
            CompressionType::None => return None,
            CompressionType::Snappy => {
                room(snap::raw::max_compress_len(raw.len()));
                let e = self.snappy.get_or_insert_with(snap::raw::Encoder::new);
                e.compress(raw, out).ok()?
            }
            CompressionType::Lz4 => {
                room(5 + lz4_flex::block::get_maximum_output_size(raw.len()));
                let start = encode_varint32(out, len);
                start + lz4_flex::block::compress_into(raw, &mut out[start..]).ok()?
            }
            CompressionType::Zstd => {
                room(5 + zstd::zstd_safe::compress_bound(raw.len()));
                let z = match &mut self.zstd {
                    Some(z) => z,
                    None => {
                        let level = crate::options::zstd_level(self.level);
                        self.zstd.insert(zstd::bulk::Compressor::new(level).ok()?)
                    }
                };
                let start = encode_varint32(out, len);
                start + z.compress_to_buffer(raw, &mut out[start..]).ok()?
            }
        };
        (n < raw.len() - raw.len() / 8).then(|| &self.out[..n])
    }
}

/// Decompresses a block stored with `ctype` (not `None`).
pub fn decompress(ctype: CompressionType, data: &[u8]) -> Result<Vec<u8>, String> {
    let sized = |data: &[u8]| -> Result<(usize, usize), String> {
        let (n, used) = get_varint32(data).ok_or("bad uncompressed-size prefix")?;
        let n = n as usize;
        if n > MAX_UNCOMPRESSED_BLOCK {
            return Err(format!("uncompressed size {n} too large"));
        }
        Ok((n, used))
    };
    match ctype {
        CompressionType::None => Ok(data.to_vec()),
        CompressionType::Snappy => {
            let n = snap::raw::decompress_len(data).map_err(|e| format!("snappy: {e}"))?;
            if n > MAX_UNCOMPRESSED_BLOCK {
                return Err(format!("uncompressed size {n} too large"));
            }
            snap::raw::Decoder::new().decompress_vec(data).map_err(|e| format!("snappy: {e}"))
        }
        CompressionType::Lz4 => {
            let (n, used) = sized(data)?;
            let v = lz4_flex::block::decompress(data.get(used..).unwrap_or(&[]), n)
                .map_err(|e| format!("lz4: {e}"))?;
            if v.len() != n {
                return Err(format!("lz4: got {} bytes, expected {n}", v.len()));
            }
            Ok(v)
        }
        CompressionType::Zstd => {
            let (n, used) = sized(data)?;
            let v = zstd_decompress(data.get(used..).unwrap_or(&[]), n)?;
            if v.len() != n {
                return Err(format!("zstd: got {} bytes, expected {n}", v.len()));
            }
            Ok(v)
        }
    }
}

thread_local! {
    /// zstd's decompression context, one per thread: `zstd::bulk::decompress` builds one per
    /// block, which took longer than decompressing a 4 KiB block (about 15 of 23 us here).
    /// Built at a thread's first zstd block and kept until the thread exits.
    static ZSTD_DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses one zstd frame of at most `n` bytes with this thread's context. A frame that
/// fails drops the context, so nothing of it can reach the next block.
fn zstd_decompress(src: &[u8], n: usize) -> Result<Vec<u8>, String> {
    ZSTD_DCTX.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| "zstd: context in use".to_string())?;
        let d = match &mut *slot {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
        };
        let r = d.decompress(src, n).map_err(|e| format!("zstd: {e}"));
        if r.is_err() {
            *slot = None;
        }
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [CompressionType; 3] =
        [CompressionType::Snappy, CompressionType::Lz4, CompressionType::Zstd];

    #[test]
    fn round_trip_compressible() {
        let raw: Vec<u8> = (0..4000u32).flat_map(|i| (i % 17).to_le_bytes()).collect();
        for c in ALL {
            let z = compress(c, &raw).expect("compressible");
            assert!(z.len() < raw.len());
            assert_eq!(decompress(c, &z).unwrap(), raw, "{c:?}");
        }
        assert!(compress(CompressionType::None, &raw).is_none());
    }

    /// One compressor across blocks of different sizes and kinds gives each block exactly what
    /// a fresh one gives (nothing of the previous, longer block is left behind; zstd's reused
    /// context carries nothing over).
    #[test]
    fn a_reused_compressor_gives_what_a_fresh_one_gives() {
        let long: Vec<u8> = (0..8000u32).flat_map(|i| (i % 13).to_le_bytes()).collect();
        let short: Vec<u8> = (0..300u32).flat_map(|i| (i % 5).to_le_bytes()).collect();
        let mut buf = BlockCompressor::default();
        for c in ALL {
            for raw in [&long, &short, &long] {
                let fresh = compress(c, raw).expect("compressible");
                let got = buf.compress(c, raw).expect("compressible");
                assert_eq!(got, &fresh[..], "{c:?}");
                assert_eq!(&decompress(c, got).unwrap(), raw, "{c:?}");
            }
        }
    }

    /// The thread's zstd context decompresses a good block right after a garbled one.
    #[test]
    fn a_zstd_block_after_a_bad_one_decompresses() {
        let raw: Vec<u8> = (0..3000u32).flat_map(|i| (i % 11).to_le_bytes()).collect();
        let good = compress(CompressionType::Zstd, &raw).unwrap();
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x5a;
        bad.truncate(bad.len() - 3);
        for _ in 0..3 {
            assert!(decompress(CompressionType::Zstd, &bad).is_err());
            assert_eq!(decompress(CompressionType::Zstd, &good).unwrap(), raw);
        }
    }

    #[test]
    fn incompressible_is_refused_and_garbage_is_an_error() {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut raw = vec![0u8; 4096];
        rng.fill_bytes(&mut raw);
        for c in ALL {
            assert!(compress(c, &raw).is_none(), "{c:?}");
            // Truncated or garbled input never panics.
            let good = compress(c, &vec![7u8; 4096]).unwrap();
            for cut in 0..good.len() {
                let _ = decompress(c, &good[..cut]);
            }
            let _ = decompress(c, &raw);
        }
    }
}
