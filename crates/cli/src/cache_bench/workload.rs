//! The workload of `talus cache_bench`, as RocksDB 10's `cache_bench_tool.cc` draws it: keys,
//! operations (cumulative thresholds in the space of a random `u64`), values and the work done
//! with a hit.

use talus::cache::clock::key_for_hash;
use talus::cache::CacheKey;

use super::Flags;
use crate::db_bench::keygen::Rng64;

/// RocksDB's `Random64` (`std::mt19937_64`, db_bench's [`Rng64`]): the generator RocksDB's
/// cache_bench draws keys, operations and value bytes from, so both tools do the same work per
/// operation outside the cache.
pub(super) struct Rng(Rng64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(Rng64::new(seed))
    }

    #[inline]
    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub(super) fn uniform(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// One operation of the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// Lookup; on a miss insert, keeping a handle either way.
    LookupInsert,
    /// Insert, keeping a handle.
    Insert,
    /// Insert without keeping a handle.
    BlindInsert,
    /// Lookup, keeping a handle on a hit.
    Lookup,
    Erase,
}

/// The workload shared by all threads.
pub(super) struct Workload {
    pub(super) flags: Flags,
    pub(super) max_key: u64,
    max_log: u32,
    lookup_insert: u64,
    insert: u64,
    blind_insert: u64,
    lookup: u64,
}

impl Workload {
    pub(super) fn new(flags: &Flags) -> Workload {
        let max_key =
            (flags.cache_size as f64 / flags.resident_ratio / f64::from(flags.value_bytes)) as u64;
        let mut max_log = 0;
        if flags.skewed {
            let mut m = max_key;
            while m > 1 {
                m >>= 1;
                max_log += 1;
            }
        }
        let hundredth = u64::MAX / 100;
        let lookup_insert = hundredth * flags.lookup_insert_percent;
        let insert = lookup_insert + hundredth * flags.insert_percent;
        let blind_insert = insert + hundredth * flags.blind_insert_percent;
        let lookup = blind_insert + hundredth * flags.lookup_percent;
        Workload {
            flags: flags.clone(),
            max_key,
            max_log,
            lookup_insert,
            insert,
            blind_insert,
            lookup,
        }
    }

    /// The operation a random draw selects.
    pub(super) fn op(&self, draw: u64) -> Op {
        if draw < self.lookup_insert {
            Op::LookupInsert
        } else if draw < self.insert {
            Op::Insert
        } else if draw < self.blind_insert {
            Op::BlindInsert
        } else if draw < self.lookup {
            Op::Lookup
        } else {
            Op::Erase
        }
    }

    /// A key: the minimum of `skew + 1` uniform draws scaled to `max_key` (RocksDB), or with
    /// `--skewed` a log-uniform draw (Talus only). With `--degenerate_hash_bits=b` the key is
    /// made so that the low `b` bits of its hash (where the clock table starts probing) are
    /// the same for every key, as RocksDB does for its clock cache.
    pub(super) fn key(&self, rng: &mut Rng) -> CacheKey {
        let k = if self.flags.skewed {
            let log = rng.uniform(u64::from(self.max_log) + 1);
            let k = rng.uniform(1u64 << log);
            if k > self.max_key {
                k - self.max_key
            } else {
                k
            }
        } else {
            let mut raw = rng.next();
            for _ in 0..self.flags.skew {
                raw = raw.min(rng.next());
            }
            ((u128::from(raw) * u128::from(self.max_key)) >> 64) as u64
        };
        match self.flags.degenerate_hash_bits {
            0 => (k, 0),
            bits => {
                // An injective spread of `k` above the fixed low bits.
                let spread = k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k >> 29);
                let low = 0x9e37_79b9_7f4a_7c13u64 & ((1u64 << bits) - 1);
                key_for_hash((spread << bits) | low)
            }
        }
    }

    /// A value of `value_bytes` random bytes (RocksDB fills 8 bytes at a time too).
    pub(super) fn value(&self, rng: &mut Rng) -> Vec<u8> {
        // One draw per 8 bytes, as RocksDB's `createValue` (`EncodeFixed64(rv + i, rnd.Next())`).
        // Not zeroed first (RocksDB's `AllocateBlock` is uninitialized): one pass over the bytes.
        let n = self.flags.value_bytes as usize;
        let mut v = Vec::with_capacity(n);
        rng.0.append_le_bytes(&mut v, n);
        v
    }
}

/// A hash of the value ("do something with the data"): XXH3-64, the function family of RocksDB's
/// `NPHash64` (its `Hash64` is a vendored XXH3), so a hit costs both tools a like pass over the
/// value (before: a 4-lane xxh64-style loop, several times slower per byte).
pub(super) fn hash_value(v: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(v)
}
