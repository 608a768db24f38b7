//! TPC-C's random inputs (clause 2.1.6 and 4.3.2): uniform ranges, NURand, customer last
//! names from syllables, a-strings and n-strings, zip codes, and "ORIGINAL" data.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The syllables of customer last names (clause 4.3.2.3).
const SYLLABLES: [&str; 10] =
    ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// NURand's C constants for one run (clause 2.1.6: chosen once; the run's C for last names
/// must differ from the load's by the rule of clause 2.1.6.1, which `C_LAST_RUN` satisfies
/// with `C_LAST_LOAD`).
pub const C_LAST_LOAD: u64 = 157;
/// C for last names during the run (|157 - 223| = 66, within 65..=119 and not 96 or 112).
pub const C_LAST_RUN: u64 = 223;
/// C for customer ids.
pub const C_ID: u64 = 259;
/// C for item ids.
pub const C_ITEM: u64 = 7911;

/// A thread's random source.
pub struct TpccRand {
    rng: StdRng,
}

impl TpccRand {
    /// Seeded from `seed` and a stream number.
    pub fn new(seed: u64, stream: u64) -> TpccRand {
        TpccRand { rng: StdRng::seed_from_u64(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)) }
    }

    /// Uniform in `lo..=hi`.
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.gen_range(lo..=hi)
    }

    /// NURand(A, x, y) with constant `c`: `(((rand(0, A) | rand(x, y)) + C) % (y - x + 1)) + x`.
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: u64) -> i64 {
        let r = (self.uniform(0, a) | self.uniform(x, y)) + c as i64;
        r % (y - x + 1) + x
    }

    /// `a`-string of random length in `lo..=hi` (letters and digits).
    pub fn astring(&mut self, lo: usize, hi: usize) -> String {
        const CH: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let n = self.rng.gen_range(lo..=hi);
        (0..n).map(|_| char::from(CH[self.rng.gen_range(0..CH.len())])).collect()
    }

    /// `n`-string (digits) of random length in `lo..=hi`.
    pub fn nstring(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.gen_range(lo..=hi);
        (0..n).map(|_| char::from(b'0' + self.rng.gen_range(0..10u8))).collect()
    }

    /// A zip code: 4 random digits then `11111`.
    pub fn zip(&mut self) -> String {
        let mut z = self.nstring(4, 4);
        z.push_str("11111");
        z
    }

    /// Two random letters.
    pub fn state(&mut self) -> String {
        (0..2).map(|_| char::from(b'A' + self.rng.gen_range(0..26u8))).collect()
    }

    /// Item or stock data: an a-string of 26..=50, 10% containing "ORIGINAL".
    pub fn data(&mut self) -> String {
        let mut s = self.astring(26, 50);
        if self.rng.gen_range(0..10) == 0 {
            let at = self.rng.gen_range(0..=s.len() - 8);
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    /// A percentage roll: true with probability `pct`%.
    pub fn pct(&mut self, pct: i64) -> bool {
        self.uniform(1, 100) <= pct
    }

    /// A random permutation of `1..=n`.
    pub fn permutation(&mut self, n: i64) -> Vec<i64> {
        let mut v: Vec<i64> = (1..=n).collect();
        for i in (1..v.len()).rev() {
            let j = self.rng.gen_range(0..=i);
            v.swap(i, j);
        }
        v
    }
}

/// The last name for number `n` in `0..=999` (three syllables by its digits).
pub fn last_name(n: i64) -> String {
    let n = n.clamp(0, 999) as usize;
    let mut s = String::with_capacity(15);
    for d in [n / 100, (n / 10) % 10, n % 10] {
        s.push_str(SYLLABLES[d]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ranges() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        let mut r = TpccRand::new(1, 2);
        for _ in 0..1000 {
            let v = r.nurand(1023, 1, 3000, C_ID);
            assert!((1..=3000).contains(&v));
            let l = r.nurand(255, 0, 999, C_LAST_RUN);
            assert!((0..=999).contains(&l));
        }
        let d = r.data();
        assert!((26..=50).contains(&d.len()));
        assert_eq!(r.zip().len(), 9);
        let mut p = r.permutation(50);
        p.sort();
        assert_eq!(p, (1..=50).collect::<Vec<_>>());
        let originals = (0..2000).filter(|_| r.data().contains("ORIGINAL")).count();
        assert!((100..=300).contains(&originals), "{originals}");
    }
}
