//! Mechanism losses (Imola et al. §2): the per-input loss L(M, u) = Σ_k H\[u\]\[k\]·c(u, k),
//! the worst-case loss L(M) = max_u L(M, u) (eq. 1 / eq. 3), the quantile loss L_q (eq. 11)
//! and the prior-weighted expected loss Σ_u π_u L(M, u) / Σ_u π_u (Bordenabe et al.).
//! c(u, k) is `loss.cost` when given, else d(input u, output k).
//!
//! All values are rigorous `f64` enclosures (relative width ≈ K·2^-52).
//!
//! Quantile convention (stated in `spec/mechanism-format.md`): L_q is the linear
//! interpolation of the sorted per-input losses L_(0) ≤ … ≤ L_(n−1) at h = q·(n−1)
//! (numpy's default `quantile`, Hyndman–Fan type 7): L_(⌊h⌋) + (h−⌊h⌋)(L_(⌊h⌋+1) − L_(⌊h⌋)).

use crate::exact::float::FI;
use crate::exact::{f64_down, f64_up, Q};
use crate::mechanism::Matrix;
use crate::privacy::{Prepared, RHO};
use rayon::prelude::*;

/// Where c(u, k) comes from.
pub enum Cost<'a> {
    /// An explicit n×K matrix.
    Matrix(&'a Matrix),
    /// d(u, site_k), with the site index of each column in the (extended) space.
    Distance(&'a [usize]),
}

/// The loss figures of a mechanism.
#[derive(Clone, Debug)]
pub struct Losses {
    pub per_input: Vec<FI>,
    pub max: FI,
    pub quantile: FI,
    pub expected: Option<FI>,
}

/// Enclosure of H\[u\]\[k\] (rigorous for every row; exact conversion for unsafe rows).
pub fn h_fi(p: &Prepared, u: usize, k: usize) -> FI {
    if p.safe[u] {
        let h = p.h[u * p.k + k];
        if h == 0.0 {
            return FI::point(0.0);
        }
        let r = RHO / (1.0 - RHO);
        FI::new(
            FI::point(h).mul_f64(1.0 - r).lo,
            FI::point(h).mul_f64(1.0 + r).hi,
        )
    } else {
        FI::from_q(&p.h_exact(u, k))
    }
}

/// L(M, u) for every input, L(M), L_q and the expected loss.
pub fn losses(p: &Prepared, cost: &Cost, quantile: &Q, prior: Option<&[Q]>) -> Losses {
    let per_input: Vec<FI> = (0..p.n)
        .into_par_iter()
        .map(|u| {
            let mut s = FI::point(0.0);
            for k in 0..p.k {
                let h = h_fi(p, u, k);
                if h.hi == 0.0 {
                    continue;
                }
                let c = match cost {
                    Cost::Matrix(m) => FI::from_q(m.get(u, k)),
                    Cost::Distance(sites) => p.space.fi(u, sites[k]),
                };
                s = s.add(h.mul(c));
            }
            s
        })
        .collect();
    let max = per_input.iter().fold(FI::point(0.0), |a, b| {
        FI::new(a.lo.max(b.lo), a.hi.max(b.hi))
    });
    let quantile = quantile_fi(&per_input, quantile);
    let expected = prior.map(|w| {
        let total: Q = crate::exact::sum_tree(w.to_vec());
        let mut s = FI::point(0.0);
        for (u, wu) in w.iter().enumerate() {
            s = s.add(FI::from_q(&(wu / &total)).mul(per_input[u]));
        }
        s
    });
    Losses {
        per_input,
        max,
        quantile,
        expected,
    }
}

/// The type-7 quantile of values known by enclosures: the j-th order statistic of the true
/// values lies between the j-th smallest lower end and the j-th smallest upper end, and the
/// interpolation has non-negative weights, so it is monotone in both order statistics.
pub fn quantile_fi(values: &[FI], q: &Q) -> FI {
    let n = values.len();
    let mut lo: Vec<f64> = values.iter().map(|x| x.lo).collect();
    let mut hi: Vec<f64> = values.iter().map(|x| x.hi).collect();
    lo.sort_by(f64::total_cmp);
    hi.sort_by(f64::total_cmp);
    let h = q * Q::from(n as u64 - 1);
    let j = crate::exact::floor_usize(&h).expect("0 ≤ h < n");
    let g = &h - Q::from(j as u64);
    let (glo, ghi) = (f64_down(&g), f64_up(&g));
    let g = FI::new(glo, ghi);
    let one_minus = FI::point(1.0).sub(g);
    let at = |v: &[f64], i: usize| v[i.min(n - 1)];
    let lo_v = FI::point(at(&lo, j))
        .mul(one_minus)
        .add(FI::point(at(&lo, j + 1)).mul(g))
        .lo;
    let hi_v = FI::point(at(&hi, j))
        .mul(one_minus)
        .add(FI::point(at(&hi, j + 1)).mul(g))
        .hi;
    FI::new(lo_v.max(at(&lo, j).min(at(&lo, j + 1))), hi_v)
}

/// Largest n·K for which [`exact_max_loss`] computes the worst-case loss in rationals.
pub const EXACT_LOSS_ENTRIES: usize = 100_000;

/// The worst-case loss L(M) = max_u Σ_k M\[u\]\[k\]·c(u,k) / Σ_k M\[u\]\[k\] exactly, when every
/// cost is a rational (an explicit cost matrix, or rational distances: Manhattan,
/// Chebyshev, explicit, graph) and the matrix has at most [`EXACT_LOSS_ENTRIES`] entries;
/// `None` otherwise. Decides a claimed loss whose float enclosure straddles the tolerance
/// (issue 33: a 3-input file was reported inconclusive where the exact value fails it).
pub fn exact_max_loss(matrix: &Matrix, cost: &Cost, space: &crate::metric::Space) -> Option<Q> {
    use crate::metric::ExactDistance;
    if matrix.rows.saturating_mul(matrix.cols) > EXACT_LOSS_ENTRIES {
        return None;
    }
    let mut best: Option<Q> = None;
    for u in 0..matrix.rows {
        let row = matrix.row(u);
        let total: Q = row.iter().sum();
        if total <= 0u32 {
            return None;
        }
        let mut sum = Q::from(0u32);
        for (k, m) in row.iter().enumerate() {
            if *m == 0u32 {
                continue;
            }
            let c = match cost {
                Cost::Matrix(c) => c.row(u)[k].clone(),
                Cost::Distance(sites) => match space.exact(u, sites[k]) {
                    ExactDistance::Rational(q) => q,
                    _ => return None,
                },
            };
            sum += m * &c;
        }
        let l = sum / &total;
        if best.as_ref().is_none_or(|b| l > *b) {
            best = Some(l);
        }
    }
    best
}
