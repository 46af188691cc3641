//! Exact repair: a float primal of a privacy LP → an exactly stochastic rational matrix
//! that the exact auditor proves ε·d private (`spec/lp.md` §4).
//!
//! 1. Clamp negatives to 0 and normalize rows in `f64` (H).
//! 2. Rows at distance 0 from an earlier input become exact copies of it.
//! 3. Mix with the uniform mechanism U: P = (1−t)H + tU. Per row pair (u, v) in scope and
//!    output k, P is private iff H\[u\]\[k\] − e^{εd} H\[v\]\[k\] ≤ r (e^{εd} − 1)/K with
//!    r = t/(1−t); r is bounded above rigorously (FI arithmetic) over all triples, doubled,
//!    and floored at [`MIN_MIX`] so step 4's rounding is covered.
//! 4. Entries are rounded down to multiples of 10^-[`DIGITS`]; each row's largest entry
//!    takes the remainder, so every row sums to exactly 1 (a terminating decimal file).
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

/// Decimal digits of the written entries.
pub const DIGITS: u64 = 30;
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
    let r_needed = reps
        .par_iter()
        .map(|&u| {
            let mut worst: f64 = 0.0;
            for &v in &reps {
                if v == u || space.is_zero(u, v) || !in_scope(u, v) {
                    continue;
                }
                let c = exp_eps_d(space, eps, u, v);
                let denom = c.sub(FI::point(1.0)).lo;
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
            worst
        })
        .reduce(|| 0.0, f64::max);
    let mut r = (2.0 * r_needed).max(MIN_MIX);
    for _ in 0..MAX_TRIES {
        if !r.is_finite() {
            return None;
        }
        let matrix = mix_and_round(&h, &rep, n, k, r);
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

/// P = (1−t)H + t/K with t = r/(1+r), rounded down to 10^-DIGITS, the largest entry of
/// each row taking the remainder; rows of duplicates copied from their representative.
fn mix_and_round(h: &[f64], rep: &[usize], n: usize, k: usize, r: f64) -> Matrix {
    let rq = q_from_f64(r);
    let one = Q::from(1u32);
    let t = &rq / (&one + &rq);
    let keep = &one - &t;
    let tk = &t / Q::from(k as u64);
    let scale = Q::from(10u32).pow(DIGITS as i64);
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
