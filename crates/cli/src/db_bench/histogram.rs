//! RocksDB's `HistogramImpl`: the same buckets (1, 2, then ×1.5 rounded to two significant
//! digits), the same percentile interpolation and the same text, so `Microseconds per write:`
//! blocks read exactly like RocksDB's. Single-threaded; per-thread histograms are merged.

use std::fmt::Write as _;
use std::sync::OnceLock;

fn bucket_limits() -> &'static [u64] {
    static LIMITS: OnceLock<Vec<u64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut v: Vec<u64> = vec![1, 2];
        let mut bucket_val = 2.0f64;
        loop {
            bucket_val *= 1.5;
            if bucket_val > u64::MAX as f64 {
                break;
            }
            let mut b = bucket_val as u64;
            let mut pow_of_ten = 1u64;
            while b / 10 > 10 {
                b /= 10;
                pow_of_ten *= 10;
            }
            v.push(b * pow_of_ten);
        }
        v
    })
}

/// A latency histogram (values in microseconds).
#[derive(Clone, Debug)]
pub struct Histogram {
    min: u64,
    max: u64,
    num: u64,
    sum: u64,
    sum_squares: f64,
    buckets: Vec<u64>,
}

impl Default for Histogram {
    fn default() -> Self {
        let limits = bucket_limits();
        Histogram {
            min: limits.last().copied().unwrap_or(u64::MAX),
            max: 0,
            num: 0,
            sum: 0,
            sum_squares: 0.0,
            buckets: vec![0; limits.len()],
        }
    }
}

fn index_for(value: u64) -> usize {
    let limits = bucket_limits();
    let last = limits.len() - 1;
    if value >= limits[last] {
        last
    } else {
        limits.partition_point(|&l| l < value)
    }
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn add(&mut self, value: u64) {
        let i = index_for(value);
        self.buckets[i] += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.num += 1;
        self.sum = self.sum.wrapping_add(value);
        self.sum_squares += (value as f64) * (value as f64);
    }

    /// Adds `other`'s values.
    pub fn merge(&mut self, other: &Histogram) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.num += other.num;
        self.sum = self.sum.wrapping_add(other.sum);
        self.sum_squares += other.sum_squares;
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.num
    }

    /// The smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.num == 0 {
            0
        } else {
            self.min
        }
    }

    /// The sum of the values.
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// The `p`-th percentile, interpolated within its bucket and clamped to `[min, max]`.
    pub fn percentile(&self, p: f64) -> f64 {
        let limits = bucket_limits();
        let threshold = self.num as f64 * (p / 100.0);
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            cumulative += count;
            if cumulative as f64 >= threshold {
                let left = if b == 0 { 0 } else { limits[b - 1] };
                let right = limits[b];
                let left_sum = cumulative - count;
                let pos =
                    if count != 0 { (threshold - left_sum as f64) / count as f64 } else { 0.0 };
                let r = left as f64 + (right - left) as f64 * pos;
                return r.max(self.min as f64).min(self.max as f64);
            }
        }
        self.max as f64
    }

    /// The mean.
    pub fn average(&self) -> f64 {
        if self.num == 0 {
            0.0
        } else {
            self.sum as f64 / self.num as f64
        }
    }

    /// The standard deviation.
    pub fn std_dev(&self) -> f64 {
        if self.num == 0 {
            return 0.0;
        }
        let n = self.num as f64;
        let s = self.sum as f64;
        let var = (self.sum_squares * n - s * s) / (n * n);
        var.max(0.0).sqrt()
    }

    /// The largest value.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// RocksDB's `HistogramStat::ToString`.
    pub fn to_rocksdb_string(&self) -> String {
        let limits = bucket_limits();
        let mut r = String::new();
        let _ = writeln!(
            r,
            "Count: {} Average: {:.4}  StdDev: {:.2}",
            self.num,
            self.average(),
            self.std_dev()
        );
        let (mn, mx) = if self.num == 0 { (0, 0) } else { (self.min, self.max) };
        let _ = writeln!(r, "Min: {}  Median: {:.4}  Max: {}", mn, self.percentile(50.0), mx);
        let _ = writeln!(
            r,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        );
        r.push_str("------------------------------------------------------\n");
        if self.num == 0 {
            return r;
        }
        let mult = 100.0 / self.num as f64;
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            if count == 0 {
                continue;
            }
            cumulative += count;
            let _ = write!(
                r,
                "{} {:>7}, {:>7} ] {:>8} {:>7.3}% {:>7.3}% ",
                if b == 0 { '[' } else { '(' },
                if b == 0 { 0 } else { limits[b - 1] },
                limits[b],
                count,
                mult * count as f64,
                mult * cumulative as f64
            );
            let marks = (mult * count as f64 / 5.0 + 0.5) as usize;
            r.push_str(&"#".repeat(marks));
            r.push('\n');
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_rocksdbs() {
        let l = bucket_limits();
        assert_eq!(&l[..12], &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110]);
        assert_eq!(l.len(), 109);
        assert!(l.contains(&1900) && l.contains(&2900) && l.contains(&9900));
    }

    #[test]
    fn percentiles_against_a_sorted_model() {
        let mut h = Histogram::default();
        let mut vals = Vec::new();
        let mut x = 12345u64;
        for _ in 0..10000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = (x >> 33) % 5000;
            vals.push(v);
            h.add(v);
        }
        vals.sort_unstable();
        for p in [50.0, 75.0, 99.0, 99.9] {
            let exact = vals[((p / 100.0) * vals.len() as f64) as usize - 1] as f64;
            let got = h.percentile(p);
            // Within the width of the bucket (at most 50% of the value at this range).
            assert!((got - exact).abs() <= exact * 0.5 + 2.0, "p{p}: {got} vs {exact}");
        }
        assert_eq!(h.count(), 10000);
        assert_eq!(h.max(), *vals.last().unwrap());
        let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
        assert!((h.average() - mean).abs() < 1e-6);
    }

    #[test]
    fn text_layout_and_merge() {
        let mut a = Histogram::default();
        for v in [3, 3, 4, 5, 100] {
            a.add(v);
        }
        let mut b = Histogram::default();
        b.add(0);
        a.merge(&b);
        let s = a.to_rocksdb_string();
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].starts_with("Count: 6 Average: 19.1667  StdDev:"), "{s}");
        assert!(lines[1].starts_with("Min: 0  Median: "), "{s}");
        assert!(lines[2].starts_with("Percentiles: P50: "), "{s}");
        assert_eq!(lines[4], "[       0,       1 ]        1  16.667%  16.667% ###");
        assert_eq!(lines[5], "(       2,       3 ]        2  33.333%  50.000% #######");
        // Percentile of a single value is that value.
        let mut one = Histogram::default();
        one.add(7);
        assert_eq!(one.percentile(99.99), 7.0);
        assert!(Histogram::default().to_rocksdb_string().contains("Count: 0"));
    }
}
