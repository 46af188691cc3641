//! The exponential mechanism and the weighted exponential mechanism EXPMECH_Y (Imola et
//! al. 2022, §3.1):
//!
//!   Pr[EXPMECH_Y(w_i) = w_j] = Y_j e^{−ε d(w_i, w_j)/2} / Σ_k Y_k e^{−ε d(w_i, w_k)/2},
//!
//! ε·d private for every Y > 0 (Proposition 1: each factor of the ratio
//! H\[u\]\[w\]/H\[v\]\[w\] = (e^{−εd(u,w)/2}/e^{−εd(v,w)/2}) · (Z_v/Z_u) is ≤ e^{εd(u,v)/2} by the
//! triangle inequality). The plain mechanism is Y = 1.
//!
//! The matrix is computed in `f64` (log-sum-exp, relative error ~1e-15) and each entry is
//! written as the exact rational value of its float; the result is then *proven* private
//! by the auditor rather than trusted. The Z-ratio factor is strictly below e^{εd/2} for
//! d(u,v) > 0 (the k = v term), which leaves the slack the rounding needs; `mdp build`
//! refuses to write a file whose audit does not pass.

use crate::exact::{f64_nearest, q_from_f64, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;

/// EXPMECH_Y on `space` at privacy level `eps`; `weights` = None is the plain mechanism.
pub fn weighted_exponential(space: &Space, eps: &Q, weights: Option<&[Q]>) -> Matrix {
    softmax_rows(space.n(), space.n(), logits(space, eps, weights))
}

/// The exponential mechanism's logits: log Y_j − ε d(w_i, w_j)/2.
fn logits<'a>(
    space: &'a Space,
    eps: &Q,
    weights: Option<&[Q]>,
) -> impl Fn(usize, usize) -> f64 + 'a {
    let e = f64_nearest(eps);
    let logy: Vec<f64> = match weights {
        Some(w) => w.iter().map(|y| f64_nearest(y).ln()).collect(),
        None => vec![0.0; space.n()],
    };
    move |i, j| logy[j] - e * space.approx(i, j) / 2.0
}

/// The size in bits of the exact entries [`weighted_exponential`] would produce (an
/// estimate from above: 64 bits of mantissa and exponent per entry plus its binary
/// exponent), so a caller can refuse an ε whose entries e^{−εd/2} need unbounded numbers
/// before building them.
pub fn exact_bits(space: &Space, eps: &Q, weights: Option<&[Q]>) -> f64 {
    softmax_bits(space.n(), space.n(), logits(space, eps, weights))
}

/// [`exact_bits`] for any softmax (TEM's truncated scores too).
pub fn softmax_bits(rows: usize, cols: usize, logit: impl Fn(usize, usize) -> f64) -> f64 {
    let mut total = 0.0;
    for i in 0..rows {
        let l: Vec<f64> = (0..cols).map(|j| logit(i, j)).collect();
        let mx = l.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ln_z = l.iter().map(|x| (x - mx).exp()).sum::<f64>().ln() + mx;
        for x in &l {
            if x.is_finite() {
                total += 64.0 + ((ln_z - x) / std::f64::consts::LN_2).max(0.0);
            } else if x.is_nan() || *x > 0.0 {
                return f64::INFINITY;
            }
        }
    }
    total
}

/// The rows × cols matrix whose row i is the softmax of `logit(i, ·)` (log-sum-exp in
/// `f64`, each entry the exact rational [`exp_as_rational`] of its float; a logit of −∞
/// gives an exact 0). Shared by the exponential mechanisms and TEM; the result is proved
/// private by the auditor, not trusted.
pub fn softmax_rows(rows: usize, cols: usize, logit: impl Fn(usize, usize) -> f64) -> Matrix {
    let mut data = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        let logits: Vec<f64> = (0..cols).map(|j| logit(i, j)).collect();
        let mx = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ln_z = logits.iter().map(|l| (l - mx).exp()).sum::<f64>().ln() + mx;
        data.extend(logits.iter().map(|&l| {
            if l == f64::NEG_INFINITY {
                Q::from(0u32)
            } else {
                exp_as_rational(l - ln_z)
            }
        }));
    }
    Matrix::new(rows, cols, data)
}

/// A rational close to e^l (relative error ~|l|·2^-52), also far below the `f64` range:
/// e^l = m·2^k with k = ⌊l/ln 2⌋ and m = e^{l − k ln 2} ∈ [1, 2), so an entry never
/// underflows to an exact 0 (which would make the mechanism non-private).
pub fn exp_as_rational(l: f64) -> Q {
    if l > -700.0 {
        return q_from_f64(l.exp());
    }
    let k = (l / std::f64::consts::LN_2).floor();
    let m = (l - k * std::f64::consts::LN_2).exp();
    let shift = (-k) as u64;
    q_from_f64(m) / Q::from(crate::exact::N::from(1u32) << shift)
}

/// The plain exponential mechanism (Y = 1).
pub fn exponential(space: &Space, eps: &Q) -> Matrix {
    weighted_exponential(space, eps, None)
}
