//! Madlib (Feyisetan et al. 2020, as Algorithm 1 of Carvalho et al.; Theorem 3.1): perturb
//! the embedding φ(w) with noise of density ∝ exp(−ε‖z‖) on R^d and return the nearest
//! vocabulary point. The noise is a uniform direction times a radius with density
//! ∝ r^{d−1} e^{−εr}, i.e. Gamma(shape d, scale 1/ε).
//!
//! Its transition matrix has no closed form: [`estimate`] gives a Monte Carlo **estimate**
//! with confidence intervals, never a certificate (the output says so).

use crate::exact::f64_nearest;
use crate::exact::Q;
use crate::metric::{MetricKind, Space};
use rand::Rng;
use rand_distr::{Distribution, Gamma, StandardNormal};

/// The sampler: the vocabulary's embeddings (as f64) and ε.
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
    points: Vec<Vec<f64>>,
    radius: Gamma<f64>,
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
        let points: Vec<Vec<f64>> = space
            .points()
            .iter()
            .map(|p| p.iter().map(f64_nearest).collect())
            .collect();
        let d = points[0].len() as f64;
        let e = f64_nearest(eps);
        let radius = Gamma::new(d, 1.0 / e).map_err(|e| format!("madlib: {e}"))?;
        Ok(Madlib { points, radius })
    }

    pub fn n(&self) -> usize {
        self.points.len()
    }

    /// One draw of Madlib(w): φ(w) + r·u with u uniform on the sphere, then the nearest
    /// point (ties to the lower index).
    pub fn sample<R: Rng>(&self, w: usize, rng: &mut R) -> usize {
        let x = &self.points[w];
        let mut z: Vec<f64> = (0..x.len()).map(|_| StandardNormal.sample(rng)).collect();
        let norm = z.iter().map(|a| a * a).sum::<f64>().sqrt();
        let r = self.radius.sample(rng);
        for (zi, xi) in z.iter_mut().zip(x) {
            *zi = xi + r * *zi / norm;
        }
        let mut best = (f64::INFINITY, 0);
        for (j, p) in self.points.iter().enumerate() {
            let d2: f64 = p.iter().zip(&z).map(|(a, b)| (a - b) * (a - b)).sum();
            if d2 < best.0 {
                best = (d2, j);
            }
        }
        best.1
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
