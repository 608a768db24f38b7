//! Keys and values exactly as RocksDB's db_bench makes them.
//!
//! - [`key_from_int`] is `GenerateKeyFromInt` without a prefix: the key number's low
//!   `min(key_size, 8)` bytes big-endian, then `'0'` padding up to `key_size`.
//! - [`ValueSource`] is `RandomGenerator`: a buffer of at least 1 MiB made of 100-byte pieces,
//!   each a random string of `100 * compression_ratio` bytes repeated (`CompressibleString`),
//!   filled by RocksDB's `Random(301)`; values are consecutive slices of it. The bytes are the
//!   same as RocksDB's, so values compress by the same ratio with any compressor.
//! - [`Rng64`] is the per-thread generator, RocksDB's `Random64`: `std::mt19937_64` seeded
//!   `seed_base + thread counter` as RocksDB does (db_bench's key choices use `Next() % n`,
//!   never `Uniform`). So with the same `--seed`, Talus's db_bench reads and writes exactly the
//!   keys RocksDB's db_bench does, and the `(found of read)` counts of the two can be compared.

use std::sync::Arc;

/// RocksDB's `Random`: the Park-Miller minimal standard generator.
pub struct LegacyRandom {
    seed: u32,
}

impl LegacyRandom {
    const M: u32 = 2_147_483_647;

    /// A generator seeded as RocksDB does (`s & M`, 0 becomes 1).
    pub fn new(s: u32) -> Self {
        let s = s & Self::M;
        LegacyRandom { seed: if s != 0 { s } else { 1 } }
    }

    /// The next value in `[1, M-1]`.
    pub fn next(&mut self) -> u32 {
        let product = u64::from(self.seed) * 16807;
        let mut s = ((product >> 31) + (product & u64::from(Self::M))) as u32;
        if s > Self::M {
            s -= Self::M;
        }
        self.seed = s;
        s
    }

    /// Uniform in `[0, n)`.
    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// RocksDB's `Random64`: the 64-bit Mersenne Twister (`std::mt19937_64`), one per benchmark
/// thread.
#[derive(Clone)]
pub struct Rng64 {
    mt: Box<[u64; MT_N]>,
    index: usize,
}

const MT_N: usize = 312;
const MT_M: usize = 156;
const MT_UPPER: u64 = 0xFFFF_FFFF_8000_0000;
const MT_LOWER: u64 = 0x7FFF_FFFF;

impl Rng64 {
    /// A generator for `seed` (`std::mt19937_64(seed)`).
    pub fn new(seed: u64) -> Self {
        let mut mt = Box::new([0u64; MT_N]);
        mt[0] = seed;
        for i in 1..MT_N {
            let prev = mt[i - 1];
            mt[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Rng64 { mt, index: MT_N }
    }

    fn twist(&mut self) {
        // The standard three loops (libstdc++'s `_M_gen_rand`): no index wraps inside them.
        #[inline(always)]
        fn mix(a: u64, b: u64, m: u64) -> u64 {
            let x = (a & MT_UPPER) | (b & MT_LOWER);
            m ^ (x >> 1) ^ ((x & 1).wrapping_neg() & 0xB502_6F5A_A966_19E9)
        }
        let mt = &mut *self.mt;
        for i in 0..MT_N - MT_M {
            mt[i] = mix(mt[i], mt[i + 1], mt[i + MT_M]);
        }
        for i in MT_N - MT_M..MT_N - 1 {
            mt[i] = mix(mt[i], mt[i + 1], mt[i + MT_M - MT_N]);
        }
        mt[MT_N - 1] = mix(mt[MT_N - 1], mt[0], mt[MT_M - 1]);
        self.index = 0;
    }

    /// The next 64 random bits (`Random64::Next`).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        if self.index >= MT_N {
            self.twist();
        }
        let y = self.mt[self.index];
        self.index += 1;
        temper(y)
    }

    /// Appends `len` bytes of successive outputs to `out`, 8 little-endian bytes each (the last
    /// one cut to what is left): the same bytes as that many `next_u64` calls, in a loop that
    /// runs over the state array without a check per output, written straight into the
    /// vector's spare capacity (no zeroing first: RocksDB's cache_bench fills a `new char[]`).
    pub fn append_le_bytes(&mut self, out: &mut Vec<u8>, len: usize) {
        out.reserve(len);
        let start = out.len();
        // SAFETY: `reserve` made room for `len` bytes after `start`, so `dst` and every write
        // below (whole words at `8 * w` for `w < len / 8`, then the remainder) stay inside the
        // allocation.
        let dst = unsafe { out.as_mut_ptr().add(start) };
        let words = len / 8;
        let mut w = 0;
        while w < words {
            if self.index >= MT_N {
                self.twist();
            }
            let take = (MT_N - self.index).min(words - w);
            for (k, &y) in self.mt[self.index..self.index + take].iter().enumerate() {
                // SAFETY: `w + k < words` (see above).
                unsafe { dst.add(8 * (w + k)).cast::<u64>().write_unaligned(temper(y).to_le()) };
            }
            self.index += take;
            w += take;
        }
        let tail = len % 8;
        if tail != 0 {
            let last = self.next_u64().to_le_bytes();
            // SAFETY: the last `tail` bytes of the `len` reserved ones.
            unsafe { std::ptr::copy_nonoverlapping(last.as_ptr(), dst.add(8 * words), tail) };
        }
        // SAFETY: the writes above initialized all `len` bytes after `start`.
        unsafe { out.set_len(start + len) };
    }
}

/// mt19937_64's tempering of one state word.
#[inline(always)]
fn temper(mut y: u64) -> u64 {
    y ^= (y >> 29) & 0x5555_5555_5555_5555;
    y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
    y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
    y ^ (y >> 43)
}

/// Writes the key for key number `v` into `out` (cleared first): RocksDB's
/// `GenerateKeyFromInt` with no prefix.
#[inline]
pub fn key_from_int(v: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    let n = key_size.min(8);
    let be = v.to_be_bytes();
    out.extend_from_slice(&be[8 - n..]);
    out.resize(key_size, b'0');
}

/// A random key number in `[0, num)`: uniform, or with `exp_range > 0` skewed as RocksDB's
/// `GetRandomKey` (`exp(-U * range)` scaled to `num`, then scattered by a prime multiply).
#[inline]
pub fn random_key(rng: &mut Rng64, num: u64, exp_range: f64) -> u64 {
    let r = rng.next_u64();
    if exp_range == 0.0 {
        return r % num;
    }
    const BIG: u64 = 1 << 62;
    let order = -((r % BIG) as f64) / (BIG as f64) * exp_range;
    let n = (order.exp() * num as f64) as u64;
    n.wrapping_mul(0x5bd1_e995) % num
}

/// How a writer picks key numbers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WriteMode {
    /// 0, 1, 2, ...
    Sequential,
    /// Uniform random in `[0, num)`, with repeats.
    Random,
    /// A random permutation of `[0, num)`.
    UniqueRandom,
}

/// RocksDB's `KeyGenerator`.
pub struct KeyGen {
    mode: WriteMode,
    num: u64,
    next: u64,
    perm: Vec<u64>,
}

impl KeyGen {
    /// A generator of `num` key numbers; the permutation for `UniqueRandom` is shuffled with
    /// `seed` (the seed base, as RocksDB does).
    pub fn new(mode: WriteMode, num: u64, seed: u64) -> Self {
        let mut perm = Vec::new();
        if mode == WriteMode::UniqueRandom {
            perm = (0..num).collect();
            let mut r = Rng64::new(seed);
            for i in (1..perm.len()).rev() {
                let j = (r.next_u64() % (i as u64 + 1)) as usize;
                perm.swap(i, j);
            }
        }
        KeyGen { mode, num, next: 0, perm }
    }

    /// The next key number.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng64) -> u64 {
        match self.mode {
            WriteMode::Sequential => {
                let v = self.next;
                self.next += 1;
                v
            }
            WriteMode::Random => rng.next_u64() % self.num,
            WriteMode::UniqueRandom => {
                // Past the end (more writes than keys) wrap around, as a modulo would.
                let i = (self.next % self.num.max(1)) as usize;
                self.next += 1;
                self.perm.get(i).copied().unwrap_or(0)
            }
        }
    }
}

/// Builds RocksDB's `RandomGenerator` data: at least `max(1 MiB, value_size)` bytes of
/// 100-byte compressible pieces.
pub fn value_data(compression_ratio: f64, value_size: usize) -> Arc<[u8]> {
    let want = value_size.max(1 << 20);
    let mut rnd = LegacyRandom::new(301);
    let mut data = Vec::with_capacity(want + 100);
    let mut piece = Vec::with_capacity(100);
    while data.len() < want {
        // CompressibleString(&rnd, ratio, 100): RandomBinaryString(raw) repeated to 100 bytes.
        let raw = ((100.0 * compression_ratio) as usize).max(1);
        piece.clear();
        for _ in 0..raw {
            piece.push(rnd.uniform(127) as u8);
        }
        let base = data.len();
        while data.len() - base < 100 {
            let take = (100 - (data.len() - base)).min(raw);
            data.extend_from_slice(&piece[..take]);
        }
    }
    data.into()
}

/// One thread's view of the value data: consecutive `value_size` slices, wrapping.
pub struct ValueSource {
    data: Arc<[u8]>,
    pos: usize,
    len: usize,
}

impl ValueSource {
    /// Values of `len` bytes out of `data` (which must hold at least `len` bytes).
    pub fn new(data: Arc<[u8]>, len: usize) -> Self {
        let len = len.min(data.len());
        ValueSource { data, pos: 0, len }
    }

    /// The next value.
    #[inline]
    pub fn generate(&mut self) -> &[u8] {
        if self.pos + self.len > self.data.len() {
            self.pos = 0;
        }
        self.pos += self.len;
        &self.data[self.pos - self.len..self.pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_rocksdb_layout() {
        let mut k = Vec::new();
        key_from_int(0, 16, &mut k);
        assert_eq!(k, b"\0\0\0\0\0\0\0\x0000000000");
        key_from_int(0x0102_0304_0506_0708, 16, &mut k);
        assert_eq!(k, b"\x01\x02\x03\x04\x05\x06\x07\x0800000000");
        key_from_int(258, 10, &mut k);
        assert_eq!(k, b"\0\0\0\0\0\0\x01\x0200");
        // Short keys keep the low bytes, big-endian.
        key_from_int(0x0102_0304, 4, &mut k);
        assert_eq!(k, b"\x01\x02\x03\x04");
        key_from_int(7, 8, &mut k);
        assert_eq!(k, 7u64.to_be_bytes());
        // Order of key numbers is the order of keys.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for v in [0u64, 1, 255, 256, 65535, 1 << 40] {
            key_from_int(v, 16, &mut a);
            key_from_int(v + 1, 16, &mut b);
            assert!(a < b);
        }
    }

    #[test]
    fn rng64_is_mt19937_64() {
        // The C++ standard's check ([rand.predef]): the 10000th output of a
        // default-constructed mt19937_64 (seed 5489).
        let mut r = Rng64::new(5489);
        let mut last = 0;
        for _ in 0..10000 {
            last = r.next_u64();
        }
        assert_eq!(last, 9_981_545_732_273_789_042);
        // First outputs for seed 5489 (the published sequence).
        let mut r = Rng64::new(5489);
        assert_eq!(r.next_u64(), 14_514_284_786_278_117_030);
    }

    #[test]
    fn append_le_bytes_is_successive_outputs() {
        // Across twists (312 words each), with a cut tail, from a state already advanced.
        for len in [0usize, 5, 8, 2496, 2501, 7000] {
            let (mut a, mut b) = (Rng64::new(9), Rng64::new(9));
            for _ in 0..100 {
                a.next_u64();
                b.next_u64();
            }
            let mut got = vec![7u8; 3];
            a.append_le_bytes(&mut got, len);
            assert_eq!(got.drain(..3).collect::<Vec<_>>(), [7, 7, 7]);
            let want: Vec<u8> =
                (0..len.div_ceil(8)).flat_map(|_| b.next_u64().to_le_bytes()).take(len).collect();
            assert_eq!(got, want, "len {len}");
            assert_eq!(a.next_u64(), b.next_u64(), "len {len}: the states continue alike");
        }
    }

    #[test]
    fn legacy_random_matches_rocksdb() {
        // Park-Miller from seed 1: 16807, 282475249, 1622650073 (the published sequence).
        let mut r = LegacyRandom::new(1);
        assert_eq!([r.next(), r.next(), r.next()], [16807, 282_475_249, 1_622_650_073]);
        assert_eq!(LegacyRandom::new(0).next(), 16807);
    }

    #[test]
    fn values_compress_by_the_ratio() {
        let data = value_data(0.5, 100);
        assert!(data.len() >= 1 << 20);
        // Every 100-byte piece is a 50-byte random string repeated twice.
        for piece in data.chunks_exact(100).take(1000) {
            assert_eq!(piece[..50], piece[50..]);
            assert!(piece.iter().all(|&b| b < 127));
        }
        let mut v = ValueSource::new(data.clone(), 100);
        let a = v.generate().to_vec();
        let b = v.generate().to_vec();
        assert_ne!(a, b);
        // A real compressor gets close to the ratio on a long run of values.
        let sample = &data[..64 << 10];
        let c = lz4_flex::block::compress(sample);
        let ratio = c.len() as f64 / sample.len() as f64;
        assert!(ratio > 0.45 && ratio < 0.65, "lz4 ratio {ratio}");
        let data = value_data(1.0, 100);
        let c = lz4_flex::block::compress(&data[..64 << 10]);
        assert!(c.len() as f64 / 65536.0 > 0.9);
    }

    #[test]
    fn unique_random_is_a_permutation() {
        let mut g = KeyGen::new(WriteMode::UniqueRandom, 1000, 42);
        let mut rng = Rng64::new(1);
        let mut seen: Vec<u64> = (0..1000).map(|_| g.next(&mut rng)).collect();
        assert_ne!(seen[..10], (0..10).collect::<Vec<u64>>()[..]);
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<u64>>());
        let mut s = KeyGen::new(WriteMode::Sequential, 10, 0);
        assert_eq!((0..3).map(|_| s.next(&mut rng)).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn random_keys_in_range_and_skewed() {
        let mut rng = Rng64::new(7);
        let mut hist = [0u32; 10];
        for _ in 0..10000 {
            let k = random_key(&mut rng, 1000, 0.0);
            assert!(k < 1000);
            hist[(k / 100) as usize] += 1;
        }
        assert!(hist.iter().all(|&c| c > 800));
        // Skewed: a few keys take most reads.
        let mut counts = std::collections::HashMap::new();
        for _ in 0..10000 {
            let k = random_key(&mut rng, 1000, 10.0);
            assert!(k < 1000);
            *counts.entry(k).or_insert(0u32) += 1;
        }
        let mut c: Vec<u32> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        assert!(c.iter().take(10).sum::<u32>() > 1500);
    }
}
