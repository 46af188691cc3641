//! Madlib (Feyisetan et al. 2020, as Algorithm 1 of Carvalho et al.; Theorem 3.1): perturb
//! the embedding φ(w) with noise of density ∝ exp(−ε‖z‖) on R^d and return the nearest
//! vocabulary point. The noise is a uniform direction times a radius with density
//! ∝ r^{d−1} e^{−εr}, i.e. Gamma(shape d, scale 1/ε).
//!
//! Sampled exactly (spec/geo.md §5): the noise is the exact ℓ2 K-norm draw
//! ([`crate::user_level::exact_noise::l2_decided`]) and the nearest point a fixed map of it,
//! decided from enclosures of the exact noise (in `f64` intervals first, then exact
//! rationals): the release is the nearest point to φ(w) + Z for the uniforms' exact values,
//! ties (identical embeddings) to the lowest index.
//!
//! Its transition matrix has no closed form: [`estimate`] gives a Monte Carlo **estimate**
//! with confidence intervals, never a certificate (the output says so).

use crate::exact::float::FI;
use crate::exact::{Interval, Q};
use crate::metric::{MetricKind, Space};
use crate::user_level::exact_noise::{decided_argmin, l2_decided, Decide};
use rand::Rng;

/// The sampler: the vocabulary's embeddings (exact and enclosed) and θ = 1/ε.
///
/// Madlib is applied, not certified: its matrix has no closed form, so there is no
/// [`crate::produce::Family`] for it; `mdp privatize --sampler madlib` and [`estimate`]
/// use it. Draws come from the caller's generator (OS-seeded ChaCha20 by default,
/// [`crate::privatize::rng`]; a seed only in tests):
///
/// ```
/// use mdp::mechanisms::madlib::Madlib;
/// let (space, _) = mdp::builtin::space("cities40").unwrap();
/// let m = Madlib::new(&space, &mdp::exact::parse_rational("20").unwrap()).unwrap();
/// let mut rng = mdp::privatize::rng(Some(7));
/// let w = m.sample(3, &mut rng);
/// assert!(w < space.n());
/// ```
pub struct Madlib {
    points: Vec<Vec<Q>>,
    fpoints: Vec<Vec<FI>>,
    /// The points compared: the first of each set of identical embeddings.
    distinct: Vec<usize>,
    theta: Q,
    theta_f: FI,
}

/// The nearest of the distinct points to φ(w) + Z, decided when one point's squared
/// distance is below every other's for every Z in the enclosure.
struct Nearest<'a> {
    m: &'a Madlib,
    w: usize,
}

impl Decide for Nearest<'_> {
    type Out = usize;

    fn fast(&self, z: &[FI]) -> Option<usize> {
        let y: Vec<FI> = self.m.fpoints[self.w]
            .iter()
            .zip(z)
            .map(|(x, z)| *x + *z)
            .collect();
        let d: Vec<(usize, FI)> = self
            .m
            .distinct
            .iter()
            .map(|&j| {
                let p = &self.m.fpoints[j];
                (
                    j,
                    y.iter()
                        .zip(p)
                        .fold(FI::point(0.0), |a, (yi, pi)| a + (*yi - *pi).sqr()),
                )
            })
            .collect();
        decided_argmin(&d, |e| e.lo, |e| e.hi)
    }

    fn exact(&self, z: &[Interval]) -> Option<usize> {
        let y: Vec<Interval> = self.m.points[self.w]
            .iter()
            .zip(z)
            .map(|(x, z)| z.add_q(x))
            .collect();
        let d: Vec<(usize, Interval)> = self
            .m
            .distinct
            .iter()
            .map(|&j| {
                let p = &self.m.points[j];
                let s = y
                    .iter()
                    .zip(p)
                    .fold(Interval::point(Q::from(0u32)), |a, (yi, pi)| {
                        a.add(&yi.add_q(&-pi.clone()).sqr())
                    });
                (j, s)
            })
            .collect();
        decided_argmin(&d, |e| e.lo.clone(), |e| e.hi.clone())
    }
}

impl Madlib {
    /// Needs a Euclidean space given by points (the embeddings).
    pub fn new(space: &Space, eps: &Q) -> Result<Madlib, String> {
        if space.kind() != MetricKind::Euclidean || space.points().is_empty() {
            return Err(
                "madlib: needs a vocabulary with embeddings (a euclidean space given by points)"
                    .into(),
            );
        }
        if *eps <= 0u32 {
            return Err("madlib: ε must be > 0".into());
        }
        let points: Vec<Vec<Q>> = space.points().to_vec();
        let fpoints = points
            .iter()
            .map(|p| p.iter().map(FI::from_q).collect())
            .collect();
        let mut first: std::collections::HashMap<&[Q], usize> = std::collections::HashMap::new();
        let distinct = points
            .iter()
            .enumerate()
            .filter(|(j, p)| *first.entry(p.as_slice()).or_insert(*j) == *j)
            .map(|(j, _)| j)
            .collect();
        let theta = Q::from(1u32) / eps;
        let theta_f = FI::from_q(&theta);
        Ok(Madlib {
            points,
            fpoints,
            distinct,
            theta,
            theta_f,
        })
    }

    pub fn n(&self) -> usize {
        self.points.len()
    }

    /// One draw of Madlib(w): the point nearest to φ(w) + Z, Z the exact ℓ2 K-norm noise at
    /// θ = 1/ε (module doc); ties to the lowest index.
    pub fn sample<R: Rng>(&self, w: usize, rng: &mut R) -> usize {
        let d = self.points[w].len();
        l2_decided(&self.theta, self.theta_f, d, &Nearest { m: self, w }, rng)
    }
}

/// A Monte Carlo estimate of a sampler's matrix and worst-case loss.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Estimate {
    pub samples_per_input: usize,
    /// Empirical frequencies (n × n).
    pub matrix: Vec<Vec<f64>>,
    /// Per-input mean loss and its half-width at the stated confidence (normal
    /// approximation on the sample mean, Bonferroni over the n inputs).
    pub row_loss: Vec<(f64, f64)>,
    /// max_w of the row losses, with the interval [max lower, max upper].
    pub loss_max: (f64, [f64; 2]),
    pub confidence: f64,
    pub note: &'static str,
}

/// Estimate the matrix of `sample` on `space` from `k` draws per input.
pub fn estimate<R: Rng>(
    space: &Space,
    k: usize,
    confidence: f64,
    rng: &mut R,
    mut sample: impl FnMut(usize, &mut R) -> usize,
) -> Estimate {
    let n = space.n();
    let z = normal_quantile(1.0 - (1.0 - confidence) / (2.0 * n as f64));
    let mut matrix = vec![vec![0.0; n]; n];
    let mut row_loss = vec![];
    for w in 0..n {
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..k {
            let y = sample(w, rng);
            matrix[w][y] += 1.0;
            let d = if y == w { 0.0 } else { space.approx(w, y) };
            s += d;
            s2 += d * d;
        }
        let mean = s / k as f64;
        let var = (s2 / k as f64 - mean * mean).max(0.0) * k as f64 / (k as f64 - 1.0).max(1.0);
        row_loss.push((mean, z * (var / k as f64).sqrt()));
        for x in &mut matrix[w] {
            *x /= k as f64;
        }
    }
    let lo = row_loss.iter().map(|(m, h)| m - h).fold(0.0, f64::max);
    let hi = row_loss.iter().map(|(m, h)| m + h).fold(0.0, f64::max);
    let point = row_loss.iter().map(|(m, _)| *m).fold(0.0, f64::max);
    Estimate {
        samples_per_input: k,
        matrix,
        row_loss,
        loss_max: (point, [lo, hi]),
        confidence,
        note: "Monte Carlo estimate of the matrix and loss: NOT a certificate",
    }
}

/// Φ^{-1}(p) for p ∈ (0, 1) (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.383_577_518_672_69e2,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    let pl = 0.02425;
    if p < pl {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - pl {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_rational;
    use crate::user_level::exact_noise::tests::{chi2, chi2_limit};

    /// In one dimension Madlib is the Laplace(1/ε) release snapped to the nearest point, so its
    /// row is exact: P(x + Z in the Voronoi interval of j). The draws of the exact sampler
    /// against it (χ², false alarm ≤ e^{−14}), a duplicate point never released (ties to the
    /// lowest index), and a sampler at 1.2·ε refuted (power).
    #[test]
    fn one_dimension_is_the_snapped_laplace() {
        let xs = [0i64, 1, 3, 3, 7];
        let pts = xs.iter().map(|&x| vec![Q::from(x)]).collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let laplace_cdf = |t: f64, e: f64| {
            if t < 0.0 {
                0.5 * (e * t).exp()
            } else {
                1.0 - 0.5 * (-e * t).exp()
            }
        };
        // Voronoi intervals of the distinct points 0, 1, 3, 7 (index 3 duplicates 2).
        let bounds = [f64::NEG_INFINITY, 0.5, 2.0, 5.0, f64::INFINITY];
        let cols = [0usize, 1, 2, 4];
        let eps = 0.8;
        let n = 20_000u64;
        let mut g = crate::privatize::rng(Some(3));
        for (sampled_at, private) in [(0.8, true), (0.96, false)] {
            let m = Madlib::new(&space, &parse_rational(&sampled_at.to_string()).unwrap()).unwrap();
            for w in [0usize, 2, 4] {
                let x = xs[w] as f64;
                let mut counts = [0u64; 4];
                for _ in 0..n {
                    let y = m.sample(w, &mut g);
                    assert_ne!(y, 3, "the duplicate of point 2 is never released");
                    counts[cols.iter().position(|&c| c == y).unwrap()] += 1;
                }
                let probs: Vec<f64> = (0..4)
                    .map(|k| laplace_cdf(bounds[k + 1] - x, eps) - laplace_cdf(bounds[k] - x, eps))
                    .collect();
                let (stat, df) = chi2(&counts, &probs, n);
                if private {
                    assert!(stat < chi2_limit(df, 14.0), "w = {w}: χ² = {stat} on {df}");
                } else if w == 2 {
                    assert!(
                        stat >= chi2_limit(df, 14.0),
                        "1.2·ε not refuted: χ² = {stat}"
                    );
                }
            }
        }
    }
}
