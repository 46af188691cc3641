//! Enclosures of the trigonometric functions: sin and cos ([`sin`], [`cos`]; reduction by
//! π/2 and Taylor series with the Lagrange remainder), their π-unit forms with exact
//! reduction ([`sin_pi`], [`cos_pi`], degrees as `deg/180`), and atan and asin ([`atan`],
//! [`asin`]; halvings by the tangent half-angle formula and the alternating series).

use super::constants::pi_fx;
use super::fixed::{
    bitlen, div_c, div_f, isqrt_u64, mulshr_c, mulshr_f, pow2, round_i64, zero, Fx,
};
use super::sqrt::sqrt_point;
use crate::exact::{f64_nearest, Interval, Q, Z};

// ---------------------------------------------------------------------------------------------
// sin / cos
// ---------------------------------------------------------------------------------------------

/// Enclosure of `sin(a)` (`n0 = 1`) or `cos(a)` (`n0 = 0`) for the exact grid point
/// `0 ≤ a·2^-w ≤ 1`.
///
/// `m_n` brackets `a^n/n!` (one-sided chains `m ← m·a²/((n+1)(n+2))`), terms alternate. When
/// `m_hi(n) ≤ 1` ulp we stop: the partial sum is the Taylor polynomial of degree `n−2`, which
/// equals that of degree `n−1` (the skipped coefficient is 0), so Lagrange bounds the error by
/// `max|f^{(n)}|·a^n/n! ≤ m_hi(n)`.
fn sincos_series(a: &Z, w: u64, n0: u64) -> Fx {
    let one = pow2(w);
    debug_assert!(*a >= 0u32 && *a <= one);
    let a2_lo = mulshr_f(a, a, w);
    let a2_hi = mulshr_c(a, a, w);
    let (mut m_lo, mut m_hi) = if n0 == 0 {
        (one.clone(), one)
    } else {
        (a.clone(), a.clone())
    };
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut neg = false;
    let mut n = n0;
    loop {
        if m_hi <= 1u32 {
            s_lo -= &m_hi;
            s_hi += &m_hi;
            break;
        }
        if neg {
            s_lo -= &m_hi;
            s_hi -= &m_lo;
        } else {
            s_lo += &m_lo;
            s_hi += &m_hi;
        }
        neg = !neg;
        let d = Z::from((n + 1) * (n + 2));
        m_lo = div_f(&mulshr_f(&m_lo, &a2_lo, w), &d);
        m_hi = div_c(&mulshr_c(&m_hi, &a2_hi, w), &d);
        n += 2;
    }
    Fx { lo: s_lo, hi: s_hi }
}

/// Enclosure of `{sin t : t ∈ r}` (`want_sin`) or `{cos t : t ∈ r}` for `r ⊂ [−1, 1]`:
/// evaluated at the exact point `r.lo` (odd/even symmetry for the sign), then widened by
/// `r.hi − r.lo` on both sides (|sin'|, |cos'| ≤ 1), then clamped to [−1, 1].
fn sincos_fx(r: &Fx, w: u64, want_sin: bool) -> Fx {
    let one = pow2(w);
    assert!(r.mag() <= one, "sincos_fx: reduced argument too large");
    let a = &r.lo;
    let am = a.abs();
    let mut s = sincos_series(&am, w, if want_sin { 1 } else { 0 });
    if want_sin && *a < 0u32 {
        s = s.neg();
    }
    s.widen(&r.width()).clamp(&-&one, &one)
}

/// `sin(r + q·π/2)` from an enclosure of `r`: q = 0: sin r, 1: cos r, 2: −sin r, 3: −cos r.
fn sin_quadrant(q: u64, r: &Fx, w: u64) -> Fx {
    match q % 4 {
        0 => sincos_fx(r, w, true),
        1 => sincos_fx(r, w, false),
        2 => sincos_fx(r, w, true).neg(),
        _ => sincos_fx(r, w, false).neg(),
    }
}

fn z_mod4(k: &Z) -> u64 {
    k.mod_pow2(2)
}

/// Reduce `t` (radians, exact rational) as `t = k·π/2 + r`: returns `(k mod 4, r)` with `r`
/// enclosed on the grid 2^-w and `|r| ≤ π/4 + 2^-20` (k is the rounded quotient computed
/// with a coarse π; any integer k would be sound). π/2 is known to `2^-(w + bitlen(k) + 3)`
/// so `k·(π/2)` is accurate to the grid.
fn reduce_half_pi(t: &Q, w: u64) -> (u64, Fx) {
    let k: Z = if t.abs() < 1u64 << 40 {
        Z::from(round_i64(f64_nearest(t) * std::f64::consts::FRAC_2_PI))
    } else {
        let wb = 64 + t.floor_log2_abs().max(0) as u64;
        let p = pi_fx(wb);
        // 2t/π ≈ 2t·2^wb / p.lo, rounded to nearest
        let y = (t << (wb + 1)) / Q::from(&p.lo) + Q::from_signeds(1, 2);
        y.floor()
    };
    if k == 0u32 {
        return (0, Fx::from_q(t, w));
    }
    let wr = w + bitlen(&k) + 4;
    // π at grid 2^-(wr−1) has the same integers as π/2 on grid 2^-wr.
    let half_pi = pi_fx(wr - 1);
    let r = Fx::from_q(t, wr).sub(&half_pi.mul_z(&k)).rescale(wr, w);
    (z_mod4(&k), r)
}

/// Reduce `sin(π·q)`: `q = k/2 + f` exactly with `|f| ≤ 1/4`, returns `(k mod 4, r ⊇ π·f)`.
/// `f = 0` gives the exact point `r = [0, 0]` (so e.g. `sin_pi(0) = [0, 0]` exactly).
fn reduce_pi_units(q: &Q, w: u64) -> (u64, Fx) {
    let k: Z = ((q << 1u64) + Q::from_signeds(1, 2)).floor();
    let f = q - (Q::from(&k) >> 1u64);
    if f == 0u32 {
        return (z_mod4(&k), Fx::point(zero()));
    }
    let p = pi_fx(w + 2);
    let (a, b) = if f > 0u32 {
        (&p.lo, &p.hi)
    } else {
        (&p.hi, &p.lo)
    };
    let lo = ((Q::from(a) * &f) >> 2u64).floor();
    let hi = ((Q::from(b) * &f) >> 2u64).ceiling();
    (z_mod4(&k), Fx { lo, hi })
}

pub(super) fn sin_pi_fx(q: &Q, w: u64) -> Fx {
    let (k, r) = reduce_pi_units(q, w);
    sin_quadrant(k, &r, w)
}
pub(super) fn cos_pi_fx(q: &Q, w: u64) -> Fx {
    let (k, r) = reduce_pi_units(q, w);
    sin_quadrant(k + 1, &r, w)
}

pub(super) const TRIG_GUARD: u64 = 10;

/// Enclosure of `sin(t)` for a rational point (radians): reduction by π/2 (see
/// `reduce_half_pi`), Taylor series with Lagrange remainder (see `sincos_series`).
fn sin_point(t: &Q, prec: u64, cos: bool) -> Interval {
    if *t == 0u32 {
        return if cos {
            Interval::one()
        } else {
            Interval::zero()
        };
    }
    let w = prec + TRIG_GUARD;
    let (k, r) = reduce_half_pi(t, w);
    sin_quadrant(k + cos as u64, &r, w).to_interval(w)
}

/// Interval argument: point → `sin_point`; otherwise evaluate at the midpoint `m` and widen by
/// the radius ρ (`|sin t − sin m| ≤ |t − m| ≤ ρ`), round outward, clamp to [−1, 1].
fn sincos_interval(x: &Interval, prec: u64, cos: bool) -> Interval {
    if x.is_point() {
        return sin_point(&x.lo, prec, cos);
    }
    let m = sin_point(&x.mid(), prec, cos);
    let r = m.widen(&x.rad()).round_outward(prec + TRIG_GUARD);
    let unit = Interval::new(Q::from(-1i32), Q::from(1u32));
    r.intersect(&unit).unwrap_or(unit)
}

/// Enclosure of `{sin t : t ∈ x}` (radians).
///
/// Soundness: a point `t` is reduced as `t = k·π/2 + r` with `r` enclosed using π to
/// `bitlen(k) + 4` extra bits (so `|r| ≤ π/4 + ε`), then `±sin r` or `±cos r` by the Taylor
/// series with the Lagrange remainder `|r|^n/n!` (see `sincos_series`), evaluated at the
/// exact lower end of the enclosure of `r` and widened by its width (|derivative| ≤ 1).
/// A proper interval is evaluated at its midpoint `m` and widened by the radius ρ
/// (`|sin t − sin m| ≤ |t − m|`), then rounded outward and intersected with [−1, 1].
/// Any rational argument is accepted; the cost grows with `log2|t|`. Tuned for |t| ≲ 2π.
pub fn sin(x: &Interval, prec: u64) -> Interval {
    sincos_interval(x, prec, false)
}

/// Enclosure of `{cos t : t ∈ x}` (radians): `cos t = sin(t + π/2)` is handled by shifting
/// the quadrant of the same reduction; soundness argument as for [`sin`].
pub fn cos(x: &Interval, prec: u64) -> Interval {
    sincos_interval(x, prec, true)
}

/// Enclosure of `sin(π·q)`. `q = k/2 + f` is split *exactly* (`|f| ≤ 1/4`), `π·f` is
/// enclosed from the π enclosure times the exact rational `f`, then the quadrant's
/// `±sin`/`±cos` Taylor series with Lagrange remainder (see `sincos_series`). Exact results
/// where they should be: `sin_pi(0)`, `sin_pi(1)` are `[0, 0]`, `sin_pi(1/2)` is `[1, 1]`.
/// Degrees: `sin_pi(deg/180)`.
pub fn sin_pi(q: &Q, prec: u64) -> Interval {
    let w = prec + TRIG_GUARD;
    sin_pi_fx(q, w).to_interval(w)
}

/// Enclosure of `cos(π·q)`; see [`sin_pi`].
pub fn cos_pi(q: &Q, prec: u64) -> Interval {
    let w = prec + TRIG_GUARD;
    cos_pi_fx(q, w).to_interval(w)
}

// ---------------------------------------------------------------------------------------------
// atan / asin
// ---------------------------------------------------------------------------------------------

/// Alternating series `atan(a) = Σ (−1)^j a^{2j+1}/(2j+1)` at the exact grid point
/// `0 ≤ a·2^-w ≤ 1/2`; `p_j` brackets `a^{2j+1}`. Terms decrease, so the tail after the last
/// included term is bounded by the first omitted one, `≤ t_hi`.
fn atan_series(a: &Z, w: u64) -> Fx {
    let a2_lo = mulshr_f(a, a, w);
    let a2_hi = mulshr_c(a, a, w);
    let (mut p_lo, mut p_hi) = (a.clone(), a.clone());
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut j = 0u64;
    loop {
        let d = Z::from(2 * j + 1);
        let t_lo = div_f(&p_lo, &d);
        let t_hi = div_c(&p_hi, &d);
        if t_hi <= 1u32 {
            s_lo -= &t_hi;
            s_hi += &t_hi;
            break;
        }
        if j & 1 == 0 {
            s_lo += t_lo;
            s_hi += t_hi;
        } else {
            s_lo -= t_hi;
            s_hi -= t_lo;
        }
        p_lo = mulshr_f(&p_lo, &a2_lo, w);
        p_hi = mulshr_c(&p_hi, &a2_hi, w);
        j += 1;
    }
    Fx { lo: s_lo, hi: s_hi }
}

/// Bits below 1 to which atan arguments are halved before the series (speed only).
fn atan_target(w: u64) -> u64 {
    isqrt_u64(w) / 2 + 1
}
/// Maximum number of halvings (the loop ends earlier; this bounds the guard bits needed).
pub(super) fn atan_max_halvings(prec: u64) -> u64 {
    atan_target(prec + 64) + 4
}

/// Enclosure of `{atan t : t ∈ u}` for `u ⊂ [0, ∞)` on the grid 2^-w.
///
/// Halving: `atan t = 2·atan(t/(1 + √(1 + t²)))` (tangent half-angle formula), applied to the
/// interval by outward-rounded interval arithmetic (`sqr`, `sqrt`, `div` with divisor ≥ 1), at
/// least once and until `u ≤ 2^-target` or `max` halvings. Then the series at the exact point
/// `u.lo` (`u.lo ≤ 1/2`), widened up by `u.hi − u.lo` (atan increasing, slope ≤ 1), then
/// multiplied by `2^h` exactly. Each doubling doubles the absolute error, covered by `h`
/// guard bits in the caller's `w`.
fn atan_core(u: &Fx, w: u64, max_halvings: u64) -> Fx {
    assert!(u.lo >= 0u32);
    let one = pow2(w);
    let thresh = pow2(w - atan_target(w));
    let mut u = u.clone();
    let mut h = 0u64;
    while h == 0 || (u.hi > thresh && h < max_halvings) {
        let d = u.sqr(w).add_z(&one).sqrt(w).add_z(&one);
        u = u.div(&d, w);
        h += 1;
    }
    assert!(u.hi <= pow2(w - 1), "atan_core: halving did not converge");
    let s = atan_series(&u.lo, w);
    let s = Fx {
        lo: s.lo,
        hi: s.hi + u.width(),
    };
    s.shl(h)
}

/// Enclosure of `atan t` for a rational point. Odd symmetry; `|t| > 1` uses
/// `atan|t| = π/2 − atan(1/|t|)` (`1/|t|` exact); then `atan_core`.
fn atan_point(t: &Q, prec: u64) -> Interval {
    if *t == 0u32 {
        return Interval::zero();
    }
    let hmax = atan_max_halvings(prec);
    let w = prec + hmax + 8;
    let a = t.abs();
    let r = if a <= 1u32 {
        atan_core(&Fx::from_q(&a, w), w, hmax)
    } else {
        let inv = Q::from(1u32) / &a;
        let at = atan_core(&Fx::from_q(&inv, w), w, hmax);
        pi_fx(w - 1).sub(&at) // π on grid 2^-(w−1) has the integers of π/2 on grid 2^-w
    };
    let r = if *t < 0u32 { r.neg() } else { r };
    r.to_interval(w)
}

/// Enclosure of `{atan t : t ∈ x}`; atan is increasing, so ends from `atan_point` (reduction
/// to `|t| ≤ 1`, halving via the half-angle formula, alternating series with remainder ≤ next
/// term).
pub fn atan(x: &Interval, prec: u64) -> Interval {
    let lo = atan_point(&x.lo, prec);
    if x.is_point() {
        return lo;
    }
    let hi = atan_point(&x.hi, prec);
    Interval {
        lo: lo.lo,
        hi: hi.hi,
    }
}

/// `{asin s : s ∈ sv}` for `sv ⊂ [0, 1]` (grid 2^-w) given also an enclosure `cs` of
/// `√(1 − s²)` (callers know it more precisely than by squaring `sv`):
/// `asin s = 2·atan(s / (1 + √(1 − s²)))` (tangent half-angle formula with θ = asin s,
/// `cos θ = √(1 − s²)`; valid on [−1, 1], the argument stays in [0, 1], no singularity at
/// s = 1). Both enclosures are clamped to [0, 1], which contains the true values.
pub(super) fn asin_fx(sv: &Fx, cs: &Fx, w: u64, hmax: u64) -> Fx {
    let one = pow2(w);
    let d = cs.clamp(&zero(), &one).add_z(&one);
    let v = sv.clamp(&zero(), &one).div(&d, w);
    let v = v.clamp(&zero(), &one);
    atan_core(&v, w, hmax).shl(1)
}

/// Enclosure of `asin t` for a rational point `t ∈ [−1, 1]`. `√(1 − t²)` is enclosed with
/// *relative* precision from the exact rational `1 − t²` (`sqrt_point`), so arguments very
/// close to ±1 keep full absolute precision.
fn asin_point(t: &Q, prec: u64) -> Option<Interval> {
    let a = t.abs();
    if a > 1u32 {
        return None;
    }
    if *t == 0u32 {
        return Some(Interval::zero());
    }
    let hmax = atan_max_halvings(prec);
    let w = prec + hmax + 10;
    let c = Q::from(1u32) - &a * &a; // exact
    let cs = sqrt_point(&c, w).expect("1 − t² ≥ 0");
    let cs = Fx {
        lo: (&cs.lo << w).floor(),
        hi: (&cs.hi << w).ceiling(),
    };
    let r = asin_fx(&Fx::from_q(&a, w), &cs, w, hmax);
    let r = if *t < 0u32 { r.neg() } else { r };
    Some(r.to_interval(w))
}

/// Enclosure of `{asin t : t ∈ x}` for `x ⊂ [−1, 1]` (`None` otherwise). asin is increasing,
/// so ends from the point algorithm `asin t = 2·atan(t/(1 + √(1 − t²)))`; `asin(±1) = ±π/2`
/// needs no special case. Near ±1 asin has unbounded slope, but a *point* near 1 is still
/// enclosed to `2^-prec` (the square root is of the exact rational `1 − t²`).
pub fn asin(x: &Interval, prec: u64) -> Option<Interval> {
    let lo = asin_point(&x.lo, prec)?;
    if x.is_point() {
        return Some(lo);
    }
    let hi = asin_point(&x.hi, prec)?;
    Some(Interval {
        lo: lo.lo,
        hi: hi.hi,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points `i/n · top` of the grid 2⁻ʷ for `i = 0..=n`.
    fn grid(w: u64, top: &Q, n: u32) -> Vec<Z> {
        (0..=n)
            .map(|i| ((top * Q::from_unsigneds(i, n)) << w).floor())
            .collect()
    }

    /// The series alone on 1001 points of the grid 2⁻⁴⁰ (the callers' guard bits would hide
    /// a lost remainder of an ulp): each contains the value at 300 bits, irrational for a ≠ 0,
    /// so a coarse enclosure leaving out part of the fine one misses the truth.
    #[test]
    fn the_sin_and_cos_series_contain_their_values_on_the_grid() {
        let w = 40;
        for a in grid(w, &Q::from(1u32), 1000) {
            let t = Interval::point(Q::from(&a) >> w);
            for (n0, fine) in [(1, sin(&t, 300)), (0, cos(&t, 300))] {
                let got = sincos_series(&a, w, n0).to_interval(w);
                assert!(
                    fine.is_subset_of(&got),
                    "n0 {n0} at {t:?}: {got:?} misses {fine:?}"
                );
            }
        }
    }

    /// The exact reduction `q = k/2 + f` of `sin_pi`: the enclosure of `π·f` on the grid 2⁻⁴⁰
    /// contains `π·f` with π at 300 bits (its ends come from π's two ends, by the sign of f),
    /// at 2001 rationals in [−5/2, 5/2], and k mod 4 is the quadrant.
    #[test]
    fn the_pi_unit_reduction_contains_pi_times_its_remainder() {
        let w = 40;
        let pi300 = super::super::pi(300);
        for i in -1000i64..=1000 {
            let q = Q::from_signeds(i, 400) + Q::from_signeds(1, 104_729);
            let k = ((&q << 1u64) + Q::from_signeds(1, 2)).floor();
            let f = &q - (Q::from(&k) >> 1u64);
            let (quadrant, r) = reduce_pi_units(&q, w);
            assert_eq!(quadrant, k.mod_pow2(2), "quadrant of {q}");
            assert!(f.abs() <= Q::from_signeds(1, 4));
            let fine = pi300.scale(&f);
            assert!(fine.is_subset_of(&r.to_interval(w)), "π·{f}: {r:?}");
        }
    }

    /// `atan_series` on [0, 1/2] and `atan_core` (halvings, then the series) on [0, 4], each
    /// at 1001 points of the grid 2⁻⁴⁰, against atan at 300 bits; `atan_core` also on
    /// intervals of 1000 ulps (both ends inside).
    #[test]
    fn the_atan_series_and_core_contain_atan_on_the_grid() {
        let w = 40;
        for a in grid(w, &Q::from_signeds(1, 2), 1000) {
            let t = Interval::point(Q::from(&a) >> w);
            let got = atan_series(&a, w).to_interval(w);
            let fine = atan(&t, 300);
            assert!(
                fine.is_subset_of(&got),
                "series at {t:?}: {got:?} misses {fine:?}"
            );
        }
        let hmax = atan_max_halvings(20);
        let wc = 20 + hmax + 8;
        for a in grid(wc, &Q::from(4u32), 1000) {
            let hi = &a + Z::from(1000u32);
            let got = atan_core(
                &Fx {
                    lo: a.clone(),
                    hi: hi.clone(),
                },
                wc,
                hmax,
            )
            .to_interval(wc);
            for end in [&a, &hi] {
                let fine = atan(&Interval::point(Q::from(end) >> wc), 300);
                assert!(fine.is_subset_of(&got), "core: {got:?} misses {fine:?}");
            }
        }
    }
}
