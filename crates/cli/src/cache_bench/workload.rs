//! The workload of `talus cache_bench`, as RocksDB 10's `cache_bench_tool.cc` draws it: keys,
//! operations (cumulative thresholds in the space of a random `u64`), values and the work done
//! with a hit.

use talus::cache::clock::key_for_hash;
use talus::cache::CacheKey;

use super::Flags;

/// splitmix64: small, fast, good enough for key and op selection (RocksDB: `mt19937_64`).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
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
        let n = self.flags.value_bytes as usize;
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&rng.next().to_le_bytes());
        }
        v.truncate(n);
        v
    }
}

/// A 4-lane xxh64-style hash of the value ("do something with the data", as RocksDB's
/// `NPHash64`), so that a hit costs a pass over the value in both tools.
pub(super) fn hash_value(v: &[u8]) -> u64 {
    const P1: u64 = 0x9e37_79b1_85eb_ca87;
    const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let mut acc = [P1, P2, 0, P1.wrapping_neg()];
    let mut chunks = v.chunks_exact(32);
    for c in &mut chunks {
        for (lane, w) in acc.iter_mut().zip(c.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            *lane = lane.wrapping_add(u64::from_le_bytes(b).wrapping_mul(P2)).rotate_left(31);
            *lane = lane.wrapping_mul(P1);
        }
    }
    let mut h = acc.iter().fold(v.len() as u64, |h, a| (h ^ a).rotate_left(27).wrapping_mul(P1));
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(P1);
    }
    h
}
