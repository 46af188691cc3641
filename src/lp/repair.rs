//! Exact repair: a float primal of a privacy LP → an exactly stochastic rational matrix
//! that the exact auditor proves ε·d private (`spec/lp.md` §4).
//!
//! 1. Clamp negatives to 0 and normalize rows in `f64` (H).
//! 2. Rows at distance 0 from an earlier input become exact copies of it.
//! 3. Mix with the uniform mechanism U: P = (1−t)H + tU. Per row pair (u, v) in scope and
//!    output k, P is private iff H\[u\]\[k\] − e^{εd} H\[v\]\[k\] ≤ r (e^{εd} − 1)/K with
//!    r = t/(1−t); r is bounded above rigorously (FI arithmetic) over all triples, doubled,
//!    and floored at [`MIN_MIX`] so step 4's rounding is covered.
//! 4. Entries are rounded down to multiples of g = 10^-D; each row's largest entry takes
//!    the remainder, so every row sums to exactly 1 (a terminating decimal file). D is the
//!    coarsest grid (`grid_digits`, between [`MIN_DIGITS`] and [`MAX_DIGITS`]) whose
//!    rounding a mix of at most max([`GRID_MIX`], the LP's own need) covers: the rounding
//!    moves an entry by < g down, or (the largest) by < (K−1)g up, so
//!    P_u − c P_v ≤ −(K−1+c)g suffices, which r ≥ 2K(K + c)g/(c − 1) gives for every
//!    pair (the factor is largest at the smallest c = e^{εd} over pairs with d > 0). Short
//!    entries are what keeps the files compact (issue 33: 30 digits made OPTMech on 80
//!    points write 230 KB of matrix).
//! 5. The exact auditor ([`crate::privacy::check_pure`]) decides the result; if it fails,
//!    r grows 16× and steps 3–5 repeat (never observed; bounded by [`MAX_TRIES`]).

use super::model::PrivacyLp;
use crate::exact::float::FI;
use crate::exact::{q_from_f64, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;
use crate::privacy::exp_eps_d;
use crate::privacy::{self, Decision, Prepared};
use rayon::prelude::*;

/// Finest grid of the written entries: 10^-MAX_DIGITS.
pub const MAX_DIGITS: u64 = 30;
/// Coarsest grid of the written entries: 10^-MIN_DIGITS.
pub const MIN_DIGITS: u64 = 6;
/// Mix the rounding onto a coarser grid may cost (besides what the float solution needs):
/// its loss is at most GRID_MIX·max cost, 10⁻³ of the producers' 10⁻⁷ gap target.
pub const GRID_MIX: f64 = 1e-10;
/// Smallest mixing ratio r = t/(1−t).
pub const MIN_MIX: f64 = 1e-15;
/// Attempts before giving up.
pub const MAX_TRIES: usize = 8;

/// The repaired mechanism and the mixing weight t that made it private.
pub struct Repaired {
    pub matrix: Matrix,
    pub t: f64,
}

/// Repair the float primal `m` (n×K) of `lp` into a mechanism the exact check proves
/// private at `eps` on `scope` (all pairs, or d ≤ η). `None` if even the largest mix fails
/// (never observed).
pub fn repair(
    lp: &PrivacyLp,
    m: &[f64],
    eps: &Q,
    within: Option<&Q>,
    max_prec: u64,
) -> Option<Repaired> {
    repair_matrix(lp.space, m, lp.k(), &lp.zero_pairs, eps, within, max_prec)
}

/// Repair any float matrix `m` (n×`k`, rows need not be normalized) over `space`, whose
/// pairs at distance 0 are `zero`, into a mechanism proved private at `eps` (steps 1–5
/// above). Used by every mechanism computed in floats (LP mechanisms, ConstOPTMech).
pub fn repair_matrix(
    space: &Space,
    m: &[f64],
    k: usize,
    zero: &[(usize, usize)],
    eps: &Q,
    within: Option<&Q>,
    max_prec: u64,
) -> Option<Repaired> {
    let n = space.n();
    debug_assert_eq!(m.len(), n * k);
    let mut h: Vec<f64> = m.iter().map(|&x| x.max(0.0)).collect();
    for u in 0..n {
        let s: f64 = h[u * k..(u + 1) * k].iter().sum();
        for x in &mut h[u * k..(u + 1) * k] {
            *x = if s > 0.0 { *x / s } else { 1.0 / k as f64 };
        }
    }
    let mut rep: Vec<usize> = (0..n).collect();
    for &(a, b) in zero {
        if rep[b] == b {
            rep[b] = rep[a];
        }
    }
    let in_scope = |u: usize, v: usize| -> bool {
        match within {
            None => true,
            Some(eta) => {
                space.cmp_distance(u, v, eta, max_prec) != Some(std::cmp::Ordering::Greater)
            }
        }
    };
    // Largest r needed over all triples (u, v, k) with d(u, v) > 0, rigorously rounded up.
    let kf = k as f64;
    let reps: Vec<usize> = (0..n).filter(|&u| rep[u] == u).collect();
    // Also the smallest c − 1 over those pairs, rounded down (the grid's cost, step 4).
    let (r_needed, c_minus_1) = reps
        .par_iter()
        .map(|&u| {
            let mut worst: f64 = 0.0;
            let mut least = f64::INFINITY;
            for &v in &reps {
                if v == u || space.is_zero(u, v) || !in_scope(u, v) {
                    continue;
                }
                let c = exp_eps_d(space, eps, u, v);
                let denom = c.sub(FI::point(1.0)).lo;
                least = least.min(denom);
                for j in 0..k {
                    // Certainly no violation (the interval's upper end below would be < 0
                    // too: h_u − c_lo·h_v is computed within 2u of the larger term).
                    let (a, b) = (h[u * k + j], c.lo * h[v * k + j]);
                    if a - b < -4.0 * f64::EPSILON * a.max(b) {
                        continue;
                    }
                    let viol = FI::point(h[u * k + j])
                        .sub(c.mul(FI::point(h[v * k + j])))
                        .hi;
                    if viol > 0.0 {
                        let need = if denom > 0.0 {
                            FI::point(viol).mul_f64(kf).div(FI::point(denom)).hi
                        } else {
                            f64::INFINITY
                        };
                        worst = worst.max(need);
                    }
                }
            }
            (worst, least)
        })
        .reduce(|| (0.0, f64::INFINITY), |a, b| (a.0.max(b.0), a.1.min(b.1)));
    let (digits, r_grid) = grid_digits(k, c_minus_1, GRID_MIX.max(r_needed));
    let mut r = (2.0 * r_needed).max(MIN_MIX) + r_grid;
    for _ in 0..MAX_TRIES {
        if !r.is_finite() {
            return None;
        }
        let matrix = mix_and_round(&h, &rep, n, k, r, digits);
        if proved_private(space, &matrix, eps, within, max_prec)? {
            return Some(Repaired {
                matrix,
                t: r / (1.0 + r),
            });
        }
        r *= 16.0;
    }
    None
}

/// A mechanism computed in floats from a formula that is private in exact arithmetic (TEM):
/// kept as it is when the exact check proves it private at `eps` (t = 0), else repaired by
/// [`repair_matrix`] (where the formula's ratio bound is tight, float rounding can overstep
/// it by an ulp). `None` if the repair fails too.
pub fn certify_or_repair(space: &Space, m: Matrix, eps: &Q, max_prec: u64) -> Option<Repaired> {
    if proved_private(space, &m, eps, None, max_prec)? {
        return Some(Repaired { matrix: m, t: 0.0 });
    }
    let f: Vec<f64> = m.data.iter().map(crate::exact::f64_nearest).collect();
    let zero = super::model::zero_pairs(space);
    repair_matrix(space, &f, m.cols, &zero, eps, None, max_prec)
}

/// Whether the exact check proves `m` ε·d private on the pairs in scope (all, or d ≤ η);
/// `None` if the matrix does not fit the space.
fn proved_private(
    space: &Space,
    m: &Matrix,
    eps: &Q,
    within: Option<&Q>,
    max_prec: u64,
) -> Option<bool> {
    let prep = Prepared::new(space, m, within, max_prec).ok()?;
    let ratios = privacy::float_ratios(&prep);
    Some(privacy::check_pure(&prep, &ratios, eps).decision == Decision::Holds)
}

/// The coarsest grid 10^-D (D in [`MIN_DIGITS`]..=[`MAX_DIGITS`]) whose rounding a mix of
/// r_grid = 2K(K + c)·10^-D/(c − 1) ≤ `budget` covers (step 4; `c_minus_1` the smallest
/// e^{εd} − 1 over the pairs in scope, rounded down), and that r_grid (rounded up; 0 at
/// the finest grid, whose rounding [`MIN_MIX`] covers as before). The exact check decides.
fn grid_digits(k: usize, c_minus_1: f64, budget: f64) -> (u64, f64) {
    let kf = k as f64;
    let factor = if c_minus_1.is_finite() && c_minus_1 > 0.0 {
        2.0 * kf * (kf + 1.0 + c_minus_1) / c_minus_1 * (1.0 + 1e-9)
    } else if c_minus_1 == f64::INFINITY {
        // No pair in scope: nothing to prove; the grid still moves ≤ 2K·g of a row's
        // mass, which keeps the loss within the same budget.
        2.0 * kf
    } else {
        return (MAX_DIGITS, 0.0);
    };
    (MIN_DIGITS..MAX_DIGITS)
        .map(|d| (d, factor * 10f64.powi(-(d as i32))))
        .find(|&(_, r)| r <= budget)
        .unwrap_or((MAX_DIGITS, 0.0))
}

/// P = (1−t)H + t/K with t = r/(1+r), rounded down to 10^-`digits`, the largest entry of
/// each row taking the remainder; rows of duplicates copied from their representative.
fn mix_and_round(h: &[f64], rep: &[usize], n: usize, k: usize, r: f64, digits: u64) -> Matrix {
    let rq = q_from_f64(r);
    let one = Q::from(1u32);
    let t = &rq / (&one + &rq);
    let keep = &one - &t;
    let tk = &t / Q::from(k as u64);
    let scale = Q::from(10u32).pow(digits as i64);
    let rows: Vec<Vec<Q>> = (0..n)
        .into_par_iter()
        .map(|u| {
            let row = &h[u * k..(u + 1) * k];
            let big = (0..k)
                .max_by(|&a, &b| row[a].total_cmp(&row[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            let mut out: Vec<Q> = row
                .iter()
                .map(|&x| {
                    let p = &keep * q_from_f64(x) + &tk;
                    crate::exact::floor(&(p * &scale)) / &scale
                })
                .collect();
            let rest: Q = out
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != big)
                .map(|(_, q)| q)
                .sum();
            out[big] = &one - rest;
            out
        })
        .collect();
    let mut data = Vec::with_capacity(n * k);
    for u in 0..n {
        data.extend(rows[rep[u]].iter().cloned());
    }
    Matrix::new(n, k, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricKind;

    /// The grid: r_grid ≤ the budget, coarser for larger c − 1, the finest grid (and no
    /// added mix) when no grid fits, and r_grid = 2K(K + c)·10^-D/(c − 1) rounded up.
    #[test]
    fn grid_digits_fit_the_budget() {
        let (d1, r1) = grid_digits(80, 0.025, 1e-10);
        assert!(r1 <= 1e-10 && r1 > 0.0 && d1 < MAX_DIGITS);
        assert!(r1 >= 2.0 * 80.0 * 81.025 / 0.025 * 10f64.powi(-(d1 as i32)));
        let (d2, _) = grid_digits(80, 2.5, 1e-10);
        assert!(d2 < d1, "{d2} ≥ {d1}");
        assert_eq!(grid_digits(80, 1e-30, 1e-10), (MAX_DIGITS, 0.0));
        assert_eq!(grid_digits(80, 0.0, 1e-10), (MAX_DIGITS, 0.0));
    }

    /// A float matrix with rounding-level violations is repaired onto a grid coarser
    /// than 10⁻³⁰: exactly stochastic, every entry a multiple of 10^-D, proved private,
    /// and within 10⁻⁹ of the input (mass moved per row).
    #[test]
    fn repair_rounds_onto_a_coarse_grid_and_proves_privacy() {
        let pts: Vec<Vec<Q>> = (0..7).map(|i| vec![Q::from_signeds(i * i, 5)]).collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eps = Q::from(1u32);
        let n = space.n();
        // The exponential mechanism at ε (private at ε with slack), pushed over the
        // bound by 10⁻¹³ relative on the diagonal.
        let mut h = vec![0.0; n * n];
        for u in 0..n {
            let z: f64 = (0..n).map(|w| (-space.approx(u, w) / 2.0).exp()).sum();
            for w in 0..n {
                h[u * n + w] =
                    (-space.approx(u, w) / 2.0).exp() / z * if u == w { 1.0 + 1e-13 } else { 1.0 };
            }
        }
        let out = repair_matrix(&space, &h, n, &[], &eps, None, 256).unwrap();
        assert!(proved_private(&space, &out.matrix, &eps, None, 256).unwrap());
        let digits = (0..=MAX_DIGITS)
            .find(|&d| {
                let s = Q::from(10u32).pow(d as i64);
                out.matrix
                    .data
                    .iter()
                    .all(|q| (q * &s).denominator() == 1u32)
            })
            .unwrap();
        assert!(digits < MAX_DIGITS, "{digits} digits");
        for u in 0..n {
            let row: Q = out.matrix.row(u).iter().sum();
            assert_eq!(row, Q::from(1u32));
            let moved: f64 = (0..n)
                .map(|w| (crate::exact::f64_nearest(&out.matrix.row(u)[w]) - h[u * n + w]).abs())
                .sum();
            assert!(moved < 1e-9, "row {u} moved {moved}");
        }
    }
}
