//! The latency histogram of `talus cache_bench`: buckets a quarter of a power of two wide.

/// Latency histogram: buckets a quarter of a power of two wide.
pub(super) struct Histogram {
    buckets: Vec<u64>,
    pub(super) count: u64,
    pub(super) sum: u128,
    pub(super) max: u64,
}

impl Histogram {
    pub(super) fn new() -> Histogram {
        Histogram { buckets: vec![0; 64 * 4], count: 0, sum: 0, max: 0 }
    }

    pub(super) fn bucket(ns: u64) -> usize {
        if ns < 4 {
            return ns as usize;
        }
        let log = 63 - ns.leading_zeros() as usize;
        let frac = ((ns >> (log - 2)) & 3) as usize;
        log * 4 + frac
    }

    /// The upper bound of bucket `i`.
    pub(super) fn bound(i: usize) -> u64 {
        if i < 4 {
            return i as u64;
        }
        let (log, frac) = (i / 4, (i % 4) as u64);
        ((4 + frac + 1) << (log - 2)).saturating_sub(1)
    }

    pub(super) fn add(&mut self, ns: u64) {
        if let Some(b) = self.buckets.get_mut(Self::bucket(ns)) {
            *b += 1;
        }
        self.count += 1;
        self.sum += u128::from(ns);
        self.max = self.max.max(ns);
    }

    pub(super) fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }

    pub(super) fn percentile(&self, p: f64) -> u64 {
        let want = (self.count as f64 * p / 100.0).ceil() as u64;
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want && n > 0 {
                return Self::bound(i).min(self.max);
            }
        }
        self.max
    }
}
