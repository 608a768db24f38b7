//! [`FileCrc`]: the crc32c of a whole blob file, built from crcs already computed instead of a
//! second pass over its bytes.
//!
//! The MANIFEST records each blob file's crc32c (`docs/format/manifest.md`, tag 400). Every
//! record already carries the crc32c of its key and stored value (`format.rs`), so hashing the
//! record's bytes again for the file's crc was a third pass over every value (after the WAL
//! record's and the blob record's). A crc of a concatenation follows from the parts' crcs:
//! `crc(A ++ B) = crc(A) * x^(8 |B|) + crc(B)` in GF(2)[x] modulo the Castagnoli polynomial
//! (zlib's `crc32_combine`, which the `crc32c` crate also has, but computing `x^(8 |B|)` bit by
//! bit with 32x32 matrices: microseconds per call, more than hashing 4 KiB). Here the power is
//! a product of precomputed `x^(2^k)` ([`X2N`], a const table) and one multiplication per set
//! bit of the length, and [`FileCrc`] keeps the last length's power, so a file of equal-sized
//! records costs one 32-step multiplication and a crc of its 16-byte header per record.
//!
//! Pure arithmetic; no IO, no locks.

/// The Castagnoli polynomial, bit-reflected (as crc32c computes).
const POLY: u32 = 0x82F6_3B78;

/// `a * b mod P`, both reflected polynomials (bit 31 is `x^0`). zlib's `multmodp`.
const fn multmodp(a: u32, mut b: u32) -> u32 {
    let mut m: u32 = 1 << 31;
    let mut p: u32 = 0;
    loop {
        if a & m != 0 {
            p ^= b;
            if a & (m - 1) == 0 {
                return p;
            }
        }
        m >>= 1;
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
    }
}

/// `X2N[k] = x^(2^k) mod P` (reflected), for `k < 64`.
const X2N: [u32; 64] = {
    let mut t = [0u32; 64];
    let mut p: u32 = 1 << 30; // x^1
    let mut k = 0;
    while k < 64 {
        t[k] = p;
        p = multmodp(p, p);
        k += 1;
    }
    t
};

/// `x^(8 n) mod P`: the operator that appends `n` bytes' worth of shifting to a crc.
fn x8nmodp(mut n: u64) -> u32 {
    let mut p: u32 = 1 << 31; // x^0
    let mut k = 3; // 8 n = n * 2^3
    while n != 0 {
        if n & 1 != 0 {
            p = multmodp(X2N[k & 63], p);
        }
        n >>= 1;
        k += 1;
    }
    p
}

/// The crc32c of `A ++ B` from `crc(A)`, `crc(B)` and the length of `B`.
pub fn combine(crc_a: u32, crc_b: u32, len_b: u64) -> u32 {
    if len_b == 0 {
        return crc_a;
    }
    multmodp(x8nmodp(len_b), crc_a) ^ crc_b
}

/// The crc32c of a file appended piece by piece, each piece given with its own crc.
#[derive(Debug, Clone, Copy)]
pub struct FileCrc {
    crc: u32,
    /// The length whose power is in `last_power` (0: none yet).
    last_len: u64,
    last_power: u32,
}

impl FileCrc {
    /// The crc of `first`, the file's first bytes.
    pub fn new(first: &[u8]) -> FileCrc {
        FileCrc { crc: crc32c::crc32c(first), last_len: 0, last_power: 0 }
    }

    /// Appends `len` bytes whose crc32c is `crc`.
    pub fn append_crc(&mut self, crc: u32, len: u64) {
        if len == 0 {
            return;
        }
        if len != self.last_len {
            self.last_len = len;
            self.last_power = x8nmodp(len);
        }
        self.crc = multmodp(self.last_power, self.crc) ^ crc;
    }

    /// Appends `bytes` (hashed here: for the small pieces, headers and footers).
    pub fn append(&mut self, bytes: &[u8]) {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
    }

    /// The crc32c of everything appended.
    pub fn value(&self) -> u32 {
        self.crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
            .collect()
    }

    #[test]
    fn combine_equals_the_crc_of_the_concatenation() {
        for (la, lb) in
            [(0, 0), (0, 1), (1, 0), (1, 1), (16, 4096), (35, 4112), (7, 16_400), (1000, 999_983)]
        {
            let a = bytes(la, 1);
            let b = bytes(lb, 2);
            let whole = crc32c::crc32c(&[a.as_slice(), b.as_slice()].concat());
            let got = combine(crc32c::crc32c(&a), crc32c::crc32c(&b), lb as u64);
            assert_eq!(got, whole, "{la} + {lb}");
            // The crate's own (slow) combine agrees.
            assert_eq!(crc32c::crc32c_combine(crc32c::crc32c(&a), crc32c::crc32c(&b), lb), whole);
        }
    }

    #[test]
    fn file_crc_of_pieces_equals_one_pass() {
        let header = bytes(16, 3);
        let mut f = FileCrc::new(&header);
        let mut all = header.clone();
        // Equal lengths (the cached power) and changing ones, hashed and given by crc.
        for (i, len) in [4112usize, 4112, 4112, 20, 0, 16_400, 16_400, 1].into_iter().enumerate() {
            let piece = bytes(len, i as u32);
            if i % 3 == 2 {
                f.append(&piece);
            } else {
                f.append_crc(crc32c::crc32c(&piece), len as u64);
            }
            all.extend_from_slice(&piece);
            assert_eq!(f.value(), crc32c::crc32c(&all), "after piece {i}");
        }
    }

    #[test]
    fn a_wrong_length_gives_a_wrong_crc() {
        // The length matters: the check above cannot pass by ignoring it.
        let a = bytes(10, 1);
        let b = bytes(100, 2);
        let whole = crc32c::crc32c(&[a.as_slice(), b.as_slice()].concat());
        assert_ne!(combine(crc32c::crc32c(&a), crc32c::crc32c(&b), 99), whole);
    }
}
