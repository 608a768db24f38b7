//! sysbench's `--rand-type` distributions for `sysbench.rand.default(a, b)`: `uniform`,
//! `zipfian` (exponent `--rand-zipfian-exp`, default 0.8) and `pareto` (`--rand-pareto-h`,
//! default 0.2), defined as sysbench 1.0's `sb_rand.c` defines them:
//!
//! - zipfian: rejection-inversion sampling (Hörmann and Derflinger, "Rejection-inversion to
//!   generate variates from monotone discrete distributions", 1996) in the form that works for
//!   every positive exponent: `P(k) ∝ 1 / k^exp` over `1..=n`, `n = b - a + 1`, value
//!   `a + k - 1` (so `a` is the most frequent).
//! - pareto: `a + floor((b - a + 1) * u^p)` with `u` uniform in `[0, 1)` and
//!   `p = ln(h) / ln(1 - h)` (h = 0.2: about 80% of the draws fall in the first 20% of the
//!   range), clamped to `b`.
//!
//! Pure functions of a uniform `[0, 1)` source, called by [`super::schema::SbRand::default`].

/// A distribution with its constants computed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Every value alike.
    Uniform,
    /// Zipf's law with this exponent (and the sampler's constants `s`, `hIntegral(1.5) - 1`).
    Zipfian {
        /// The exponent (`--rand_zipfian_exp`).
        exp: f64,
        /// `2 - hIntegralInverse(hIntegral(2.5) - h(2))`.
        s: f64,
        /// `hIntegral(1.5) - 1`.
        hx1: f64,
    },
    /// Pareto with `power = ln(h) / ln(1 - h)`.
    Pareto {
        /// The power applied to a uniform draw.
        power: f64,
    },
}

impl Dist {
    /// Zipfian with exponent `exp` (> 0).
    pub fn zipfian(exp: f64) -> Dist {
        Dist::Zipfian {
            exp,
            s: 2.0 - h_int_inv(h_int(2.5, exp) - h(2.0, exp), exp),
            hx1: h_int(1.5, exp) - 1.0,
        }
    }

    /// Pareto with `h` in (0, 1).
    pub fn pareto(h: f64) -> Dist {
        Dist::Pareto { power: h.ln() / (1.0 - h).ln() }
    }

    /// A value in `a..=b` (`a <= b`), drawing uniform `[0, 1)` numbers from `u`.
    pub fn draw(&self, a: u64, b: u64, mut u: impl FnMut() -> f64) -> u64 {
        let n = b - a + 1;
        match *self {
            Dist::Uniform => a + ((u() * n as f64) as u64).min(n - 1),
            Dist::Pareto { power } => a + ((n as f64 * u().powf(power)) as u64).min(n - 1),
            Dist::Zipfian { exp, s, hx1 } => {
                let hn = h_int(n as f64 + 0.5, exp);
                loop {
                    let v = hn + u() * (hx1 - hn);
                    let x = h_int_inv(v, exp);
                    let k = ((x + 0.5) as u64).clamp(1, n);
                    if k as f64 - x <= s || v >= h_int(k as f64 + 0.5, exp) - h(k as f64, exp) {
                        return a + k - 1;
                    }
                }
            }
        }
    }
}

/// `1 / x^e`.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// The hat function's integral, `(x^(1-e) - 1) / (1-e)` (`ln x` at e = 1).
fn h_int(x: f64, e: f64) -> f64 {
    let lx = x.ln();
    expm1_over_x((1.0 - e) * lx) * lx
}

/// The inverse of [`h_int`].
fn h_int_inv(x: f64, e: f64) -> f64 {
    // Numerical error can push t just below -1, where ln(1 + t) is undefined.
    let t = (x * (1.0 - e)).max(-1.0);
    (ln1p_over_x(t) * x).exp()
}

/// `ln(1 + x) / x`, by its series near 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, by its series near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn histogram(d: Dist, n: u64, draws: usize) -> Vec<f64> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            let v = d.draw(1, n, || rng.gen::<f64>());
            assert!((1..=n).contains(&v), "{v} outside 1..={n}");
            c[(v - 1) as usize] += 1;
        }
        c.iter().map(|&x| x as f64 / draws as f64).collect()
    }

    #[test]
    fn zipfian_follows_one_over_k_to_the_exponent() {
        for exp in [0.8, 1.0, 1.5] {
            let n = 100;
            let p = histogram(Dist::zipfian(exp), n, 400_000);
            let z: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(exp)).sum();
            for k in [1u64, 2, 5, 10, 50] {
                let want = 1.0 / (k as f64).powf(exp) / z;
                let got = p[(k - 1) as usize];
                assert!(
                    (got - want).abs() < 0.1 * want + 0.001,
                    "exp {exp} k {k}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn pareto_puts_most_draws_in_the_first_fifth() {
        let p = histogram(Dist::pareto(0.2), 1000, 200_000);
        let first: f64 = p[..200].iter().sum();
        // P(value <= 20% of n) = P(u^power < 0.2) = 0.2^(1/power) = 0.8 for h = 0.2.
        assert!((first - 0.8).abs() < 0.01, "{first}");
        assert!(p[0] > p[500] * 20.0);
    }

    #[test]
    fn uniform_is_flat_and_ends_are_reached() {
        let p = histogram(Dist::Uniform, 10, 100_000);
        assert!(p.iter().all(|&x| (x - 0.1).abs() < 0.01), "{p:?}");
        assert_eq!(Dist::Uniform.draw(5, 5, || 0.999), 5);
        assert_eq!(Dist::zipfian(0.8).draw(7, 7, || 0.5), 7);
        assert_eq!(Dist::pareto(0.2).draw(1, 3, || 0.999_999), 3);
    }
}
