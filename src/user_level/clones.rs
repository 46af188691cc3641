//! The numerical accountant of amplification by shuffling: the hockey-stick divergence of
//! the clones reduction, computed with directed rounding (`spec/user-level.md` §4.6).
//!
//! Feldman, McMillan, Talwar (FOCS 2021, "Hiding among the clones", Lemma 3.3 and their
//! numerical analysis), generalised in `spec/user-level.md` §4.1 steps 1–3: the shuffled
//! outputs of x and x′ (one item changed, by d′ = t) are one post-processing of
//!
//!   P  = (A + Δ, C − A + 1 − Δ),   P′ = (A + 1 − Δ, C − A + Δ),
//!
//! with C ~ Bin(N − 1, p), A ~ Bin(C, ½), Δ ~ Bern(w), p = e^{−α₀} and
//! w = e^{α₀t}/(1 + e^{α₀t}). Any p′ ≤ p and any w′ ∈ [w, 1] give a valid reduction too
//! (the clones' share can only shrink; an α₀t-indistinguishable pair is also
//! ln(w′/(1−w′))-indistinguishable), so [`Clones`] takes p rounded down and w rounded up
//! as exact doubles and every later number is an enclosure of an exact quantity of that
//! pair. w = 1 is the pair (P₁, P₀) of step 4, whose divergence bounds every t (§4.1 step 5).
//!
//! **The sum.** Given C = c (n = c + 1 is observable), the first coordinate a has
//! P(a) − e·P′(a) = (2·B(a)/n)·(κ₁a − κ₂(n − a)), B the Bin(n, ½) law, κ₁ = w − e(1 − w),
//! κ₂ = ew − (1 − w). So D_c = Σ_a (·)₊ is a tail sum of B from the root a₀ = nκ₂/(κ₁ + κ₂),
//! started at B(a₀) from Stirling enclosures of ln k! and continued by the exact ratio
//! (n − a)/(a + 1); the rest of the tail is bounded geometrically. **Blocks.** D_c is
//! non-increasing in c (given C = c + 1 both laws are those of C = c convolved with the same
//! Bern(½): data processing), so Σ_c Pr[C = c]·D_c ≤ Σ_blocks Pr[C ∈ block]·D_{left end};
//! the blocks grow geometrically (width c·2⁻¹²) and the two tails of C beyond the computed
//! range are bounded geometrically and charged D ≤ 1.
//!
//! Floats only: [`FI`] is rigorous `f64` interval arithmetic (IEEE + − × ÷ rounded
//! outward, exp and ln by polynomials with proven remainders), so the returned divergence is
//! a proven upper bound, and [`Clones::smallest_e`] returns an e whose bound was computed and
//! found ≤ δ.

use super::{invalid, UserLevelError};
use crate::exact::float::{add_up, div_up, mul_up, FI};
use rayon::prelude::*;

/// N at most 2³⁶ ≈ 6.9·10¹⁰: ln N! ≈ 1.6·10¹² is then enclosed to ≈ 10⁻³ in doubles, so
/// the binomial terms keep a useful relative accuracy.
pub const MAX_ITEMS: u64 = 1 << 36;
/// At most this many values of C are walked (2²² doubles: 32 MiB); N·p(1−p) up to ≈ 3·10¹⁰.
pub const MAX_SPAN: u64 = 1 << 22;
/// A tail sum of more terms than this is abandoned for the trivial bound D_c ≤ 1 (2²⁴; a
/// guard on the work: only probes far below the answer at the largest N come near it).
const MAX_TERMS: u64 = 1 << 24;
/// Blocks of C grow by this fraction of their left end (2⁻¹²).
const BLOCK_SHIFT: u32 = 12;
/// A tail sum stops once the rest is at most this fraction of what was summed (2⁻²⁴).
const REST_SHIFT: i32 = 24;
/// The search over e stops when its bracket is within this relative width (2⁻¹²): the
/// resolution of every numerical ε.
pub const RESOLUTION: f64 = 1.0 / 4096.0;

/// C ~ Bin(N − 1, p) in blocks: the upper end of each block's mass, and the tails.
#[derive(Clone, Debug)]
pub struct Clones {
    /// (left end c, upper bound of Pr[C ∈ block]); blocks are consecutive.
    blocks: Vec<(u64, f64)>,
    /// Upper bound of Pr[C < first left end] (charged D = 1).
    below: f64,
    /// Upper bound of Pr[C > last computed c] (charged D = 1).
    above: f64,
}

/// The pieces of a search result: e, its ε = ln e (upper end) and the divergence bound there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// The exact double e with D_e ≤ δ (proven).
    pub e: f64,
    /// An upper bound of ln e.
    pub epsilon: f64,
    /// The proven upper bound of D_e(P‖P′) at e (≤ δ).
    pub divergence: f64,
}

/// ln 2 and ½·ln(2π) as intervals.
fn ln2() -> FI {
    FI::point(2.0).ln()
}

fn half_ln_2pi() -> FI {
    let pi = FI::new(
        std::f64::consts::PI,
        crate::exact::float::next_up(std::f64::consts::PI),
    );
    pi.mul_f64(2.0).ln().mul_f64(0.5)
}

/// An enclosure of ln k!: exact k! for k ≤ 18 (18! < 2⁵³), else Stirling's series for
/// ln Γ(x), x = k + 1 ≥ 20, to the x⁻⁵ term; the remainder lies between 0 and the first
/// omitted term −1/(1680x⁷) (Whittaker–Watson §12.33; NIST DLMF 5.11.1 with 5.11.10).
fn ln_factorial(k: u64) -> FI {
    if k <= 18 {
        let f: u64 = (1..=k).product();
        return FI::point(f as f64).ln();
    }
    let x = FI::point((k + 1) as f64); // exact: callers keep k < 2⁵³
    let lnx = x.ln();
    let inv = FI::ONE / x;
    let inv2 = inv * inv;
    let series = inv / FI::point(12.0) - (inv * inv2) / FI::point(360.0)
        + (inv * inv2 * inv2) / FI::point(1260.0);
    let rest = FI::new(-(inv * inv2 * inv2 * inv2 / FI::point(1680.0)).hi, 0.0);
    (x - FI::point(0.5)) * lnx - x + half_ln_2pi() + series + rest
}

/// An enclosure of ln Pr[Bin(n, ½) = a].
fn ln_binomial_half(n: u64, a: u64) -> FI {
    ln_factorial(n) - ln_factorial(a) - ln_factorial(n - a) - ln2().mul_f64(n as f64)
}

/// An upper bound of D_e of the pair given C = c (module docs), with w ≥ ½, e ≥ 1; the
/// tail sum stops once its rest is ≤ 2⁻²⁴ of the sum or ≤ `floor` (or returns 1 past
/// [`MAX_TERMS`]).
fn divergence_at(c: u64, w: FI, e: FI, floor: f64) -> f64 {
    let n = c + 1;
    let one_w = FI::ONE - w;
    let k1 = w - e * one_w;
    let k2 = e * w - one_w;
    if k1.hi <= 0.0 {
        return 0.0; // every coefficient κ₁a − κ₂(n − a) ≤ 0
    }
    let k12 = k1 + k2;
    let nf = FI::point(n as f64);
    let root = nf * k2 / k12;
    // a₀ − n/2 = n(e − 1)/(2(2w − 1)(1 + e)) ≥ 0: no positive term below n/2.
    let mut a = if root.lo > 0.0 {
        (root.lo.floor() as u64).min(n)
    } else {
        0
    }
    .max(n / 2);
    let mut b = ln_binomial_half(n, a).exp();
    let mut sum = 0.0f64;
    let mut terms = 0u64;
    loop {
        let coef = k1.mul_f64(a as f64) - k2.mul_f64((n - a) as f64);
        let term = b * coef;
        if term.hi > 0.0 {
            sum = add_up(sum, term.hi);
        }
        if a == n {
            break;
        }
        let ratio = FI::point((n - a) as f64) / FI::point((a + 1) as f64);
        if ratio.hi < 1.0 {
            // For j ≥ 1: B(a + j) ≤ B(a)·r^j (the ratio falls with a) and
            // coef(a + j) = coef(a) + j·(κ₁ + κ₂): Σ = B(a)·[c₀·r/(1−r) + K·r/(1−r)²].
            let g = geometric(ratio.hi);
            let g2 = div_up(g, (FI::ONE - FI::point(ratio.hi)).lo);
            let rest = mul_up(
                b.hi,
                add_up(mul_up(coef.hi.max(0.0), g), mul_up(k12.hi, g2)),
            );
            if rest <= sum * (2f64).powi(-REST_SHIFT) || rest <= floor {
                sum = add_up(sum, rest);
                break;
            }
        }
        b = b * ratio;
        a += 1;
        terms += 1;
        if terms > MAX_TERMS {
            return 1.0; // the trivial bound D ≤ 1: sound, and the work stays bounded
        }
    }
    mul_up(sum, div_up(2.0, n as f64))
}

impl Clones {
    /// The law of C ~ Bin(N − 1, p) in blocks, its two tails each ≤ `tail` (an error past
    /// [`MAX_SPAN`] values). `p` ∈ [0, 1) is the exact clone probability used (≤ e^{−α₀}).
    pub fn new(n_items: u64, p: f64, tail: f64) -> Result<Clones, UserLevelError> {
        if n_items == 0 || n_items > MAX_ITEMS {
            return Err(invalid(
                "items",
                "the numerical accountant takes N in [1, 2^36]; use --accountant closed",
            ));
        }
        let m = n_items - 1;
        if m == 0 || p <= 0.0 {
            return Ok(Clones {
                blocks: vec![(0, 1.0)],
                below: 0.0,
                above: 0.0,
            });
        }
        let pf = FI::point(p);
        let qf = FI::ONE - pf;
        let odds = pf / qf;
        let mode = (((m + 1) as f64 * p).floor() as u64).min(m);
        let ln_mode = ln_factorial(m) - ln_factorial(mode) - ln_factorial(m - mode)
            + pf.ln().mul_f64(mode as f64)
            + qf.ln().mul_f64((m - mode) as f64);
        let at_mode = ln_mode.exp();
        // At most MAX_SPAN values in all, the mode's included.
        let room = MAX_SPAN as usize - 1;
        // Walk up: q(c+1) = q(c)·(m − c)/(c + 1)·p/(1 − p); ratios fall with c.
        let (up, _, above) = walk(at_mode, mode, true, m - mode, tail, room, |c| {
            FI::point((m - c) as f64) / FI::point((c + 1) as f64) * odds
        })
        .ok_or_else(|| span_error(n_items))?;
        // Walk down: q(c−1) = q(c)·c/(m − c + 1)·(1 − p)/p; ratios rise with c.
        let (down, steps, below) = walk(at_mode, mode, false, mode, tail, room - up.len(), |c| {
            FI::point(c as f64) / FI::point((m - c + 1) as f64) / odds
        })
        .ok_or_else(|| span_error(n_items))?;
        let first = mode - steps;
        let masses: Vec<f64> = down
            .into_iter()
            .rev()
            .chain([at_mode.hi])
            .chain(up)
            .collect();
        let mut blocks = Vec::new();
        let mut i = 0usize;
        while i < masses.len() {
            let left = first + i as u64;
            let width = ((left >> BLOCK_SHIFT) as usize).max(1);
            let end = (i + width).min(masses.len());
            let mass = masses[i..end].iter().fold(0.0, |s, &x| add_up(s, x));
            blocks.push((left, mass.min(1.0)));
            i = end;
        }
        Ok(Clones {
            blocks,
            below,
            above,
        })
    }

    /// The clone count for randomizer level α₀ (p = e^{−α₀} rounded down: a smaller clone
    /// share is a valid reduction too), tails to δ·2⁻³⁰.
    pub fn for_alpha0(
        n_items: u64,
        alpha0: &crate::exact::Q,
        delta: f64,
    ) -> Result<Clones, UserLevelError> {
        let p = FI::from_q(&-alpha0).exp().lo;
        Clones::new(n_items, p, delta * (2f64).powi(-30))
    }

    /// A proven upper bound of D_e(P‖P′) for the pair with weight `w` ∈ [½, 1] (an exact
    /// double) at the exact double `e` ≥ 1; `floor` is the absolute accuracy asked of each
    /// block's tail sum.
    pub fn divergence(&self, w: f64, e: f64, floor: f64) -> f64 {
        let (wf, ef) = (FI::point(w), FI::point(e));
        let per_block: Vec<f64> = self
            .blocks
            .par_iter()
            .map(|&(c, mass)| mul_up(mass, divergence_at(c, wf, ef, floor).min(1.0)))
            .collect();
        per_block
            .into_iter()
            .fold(add_up(self.below, self.above), add_up)
    }

    /// The smallest e (to [`RESOLUTION`], searched geometrically in e − 1) whose divergence
    /// bound for weight `w` is ≤ `delta`; `None` when no bracket is accepted (w = 1 and too
    /// few clones, D ≥ Pr[C = 0], up to e = 2⁶⁵; or, for w < 1, the rounded check at
    /// e = w/(1−w) itself, where the pair is pure ln(w/(1−w))-indistinguishable and the
    /// computed bound is 0 unless rounding blurs κ₁ ≤ 0).
    pub fn smallest_e(&self, w: f64, delta: f64) -> Option<Found> {
        let floor = delta * (2f64).powi(-30);
        let check = |e: f64| -> Option<f64> {
            let d = self.divergence(w, e, floor);
            (d <= delta).then_some(d)
        };
        // The bracket: (lo, hi] with hi accepted.
        let mut hi = if w < 1.0 {
            div_up(w, 1.0 - w)
        } else {
            let mut e = 2.0f64;
            loop {
                if check(e).is_some() {
                    break e;
                }
                if e >= 1.8e19 {
                    return None;
                }
                e *= 16.0;
            }
        };
        let mut hi_d = check(hi)?;
        let mut b_hi = hi - 1.0;
        // Geometric bisection on e − 1 over (lo, b_hi], lo not accepted, from 2⁻⁴⁰·b_hi.
        let mut lo = b_hi * (2f64).powi(-40);
        if let Some(d) = check(1.0 + lo) {
            return Some(found(1.0 + lo, d));
        }
        while b_hi > lo * (1.0 + RESOLUTION) {
            let mid = (lo * b_hi).sqrt();
            let e = 1.0 + mid;
            if e - 1.0 >= b_hi || e - 1.0 <= lo {
                break; // the doubles near 1 leave no point between the two ends
            }
            match check(e) {
                Some(d) => {
                    hi = e;
                    hi_d = d;
                    b_hi = e - 1.0;
                }
                None => lo = mid,
            }
        }
        Some(found(hi, hi_d))
    }
}

/// One walk of the binomial law away from its mode, `limit` steps at most, upward or
/// downward: each step multiplies by `ratio(c)` at the current c, and these ratios fall
/// away from the mode, so the walk stops once the geometric bound of the rest is ≤ `tail`.
/// Returns the upper ends of the probabilities walked (the mode's excluded), the steps taken
/// and the rest's bound (0 at the end of the support); `None` past `room` values.
fn walk(
    at_mode: FI,
    mode: u64,
    upward: bool,
    limit: u64,
    tail: f64,
    room: usize,
    ratio: impl Fn(u64) -> FI,
) -> Option<(Vec<f64>, u64, f64)> {
    let (mut q, mut masses, mut steps) = (at_mode, Vec::new(), 0u64);
    while steps < limit {
        let c = if upward { mode + steps } else { mode - steps };
        let r = ratio(c);
        if r.hi < 1.0 {
            let rest = mul_up(q.hi, geometric(r.hi));
            if rest <= tail {
                return Some((masses, steps, rest));
            }
        }
        q = q * r;
        steps += 1;
        masses.push(q.hi);
        if masses.len() > room {
            return None;
        }
    }
    Some((masses, steps, 0.0))
}

/// An upper bound of Σ_{j≥1} r^j = r/(1 − r) for 0 ≤ r < 1.
fn geometric(r: f64) -> f64 {
    let r = FI::point(r);
    (r / (FI::ONE - r)).hi
}

fn found(e: f64, divergence: f64) -> Found {
    Found {
        e,
        epsilon: FI::point(e).ln().hi,
        divergence,
    }
}

fn span_error(n_items: u64) -> UserLevelError {
    invalid(
        "items",
        format!(
            "N = {n_items}: the numerical accountant walks at most {MAX_SPAN} values of the clone count; use --accountant closed"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force in f64 over every c and a (small N): the same sum without blocks.
    fn brute(n_items: u64, p: f64, w: f64, e: f64) -> f64 {
        let m = n_items - 1;
        let mut total = 0.0;
        let mut table = vec![0.0f64];
        for j in 1..=n_items + 1 {
            table.push(table[j as usize - 1] + (j as f64).ln());
        }
        let lnf = |k: u64| table[k as usize];
        for c in 0..=m {
            let qc = (lnf(m) - lnf(c) - lnf(m - c)
                + c as f64 * p.ln()
                + (m - c) as f64 * (1.0 - p).ln())
            .exp();
            let n = c + 1;
            let mut dc = 0.0;
            for a in 0..=n {
                let b = (lnf(n) - lnf(a) - lnf(n - a) - n as f64 * 2f64.ln()).exp();
                let pa = b * 2.0 * (w * a as f64 + (1.0 - w) * (n - a) as f64) / n as f64;
                let qa = b * 2.0 * ((1.0 - w) * a as f64 + w * (n - a) as f64) / n as f64;
                dc += (pa - e * qa).max(0.0);
            }
            total += qc * dc;
        }
        total
    }

    #[test]
    fn ln_factorial_encloses() {
        for k in [0u64, 1, 5, 18, 19, 20, 50, 170] {
            let f = ln_factorial(k);
            let want: f64 = (1..=k).map(|j| (j as f64).ln()).sum();
            assert!(
                f.lo <= want + 1e-9 * want.max(1.0) && want - 1e-9 * want.max(1.0) <= f.hi,
                "{k}: {f:?} {want}"
            );
            assert!(f.hi - f.lo < 1e-10 * want.max(1.0), "{k}: {f:?}");
        }
    }

    #[test]
    fn divergence_is_above_the_brute_force_and_close_to_it() {
        for &(n, p, w, e) in &[
            (50u64, 0.3, 1.0, 1.5),
            (200, 0.135, 0.88, 1.3),
            (400, 0.6, 0.7, 1.05),
            (1000, 0.05, 1.0, 2.0),
            (3000, 0.37, 0.95, 1.2),
        ] {
            let c = Clones::new(n, p, 1e-300).unwrap();
            let got = c.divergence(w, e, 0.0);
            let want = brute(n, p, w, e);
            assert!(
                got >= want * (1.0 - 1e-9),
                "{n} {p} {w} {e}: {got} < {want}"
            );
            assert!(
                got <= want * 1.05 + 1e-280,
                "{n} {p} {w} {e}: {got} ≫ {want}"
            );
        }
    }
}
