//! Enclosures of exp ([`exp`], [`exp_checked`]: reduction by ln 2, halvings, Taylor series
//! with the Lagrange remainder, outward-rounded squarings) and ln ([`ln`]: reduction to
//! [1/√2, √2] and the atanh series).

use super::constants::ln2_fx;
use super::fixed::{div_c, div_f, isqrt_u64, mulshr_c, mulshr_f, pow2, round_i64, zero, Fx};
use crate::exact::{f64_nearest, Interval, Q, Z};

// ---------------------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------------------

/// Largest |x| accepted by [`exp`] / [`exp_checked`]: 2^21 ≈ 2.1·10^6. exp(±2^21) has a
/// binary exponent of about ±3.0·10^6, i.e. a ≈ 380 KB numerator or denominator.
pub const EXP_MAX_ARG: u64 = 1 << 21;

/// Number of argument halvings for exp at a given precision (speed only).
fn exp_halvings(prec: u64) -> u64 {
    (isqrt_u64(prec + 16) / 2 + 2).min(40)
}

/// Enclosure of `{exp(t) : t ∈ v}` for `v ⊂ [−1/2, 1/2]` on the grid 2^-w.
///
/// Evaluated at the exact point `a = v.lo`: `m_j` brackets `|a|^j/j!` (ceil/floor chain of
/// one-sided roundings), the partial sums take signs `(−1)^j` when `a < 0`. Once
/// `m_hi(N) ≤ 1` ulp we stop: by Lagrange `|exp(a) − Σ_{j<N} a^j/j!| = e^ξ |a|^N/N! ≤
/// e^{1/2}·m_hi(N) ≤ 2·m_hi(N)`. For `t ∈ [a, b]`, `exp(a) ≤ exp(t) ≤ exp(a) + e^{1/2}(b − a)`
/// (mean value theorem), so the upper end is raised by `2·(b − a)`.
fn exp_small(v: &Fx, w: u64) -> Fx {
    let half = pow2(w - 1);
    assert!(v.mag() <= half, "exp_small: argument too large");
    let a = &v.lo;
    let neg = *a < 0u32;
    let am = a.abs();
    let one = pow2(w);
    let (mut m_lo, mut m_hi) = (one.clone(), one.clone());
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut j = 0u64;
    loop {
        if m_hi <= 1u32 {
            let e = &m_hi << 1u64;
            s_lo -= &e;
            s_hi += &e;
            break;
        }
        if neg && j % 2 == 1 {
            s_lo -= &m_hi;
            s_hi -= &m_lo;
        } else {
            s_lo += &m_lo;
            s_hi += &m_hi;
        }
        j += 1;
        let d = Z::from(j);
        m_lo = div_f(&mulshr_f(&m_lo, &am, w), &d);
        m_hi = div_c(&mulshr_c(&m_hi, &am, w), &d);
    }
    s_hi += v.width() << 1u64;
    Fx { lo: s_lo, hi: s_hi }
}

/// Enclosure of `exp(x)` for a rational point, `None` when `|x| > EXP_MAX_ARG`.
///
/// Reduction: `k ≈ x/ln 2` (any integer is sound), `r = x − k·ln 2` enclosed with ln 2 known
/// to `2^-(wl)` (so `|k|·err(ln 2) ≤ 2^-(w+s)`), `v = r/2^s` with `|v| ≤ 0.35·2^-s`,
/// `exp(x) = 2^k · exp(v)^(2^s)`. `exp(v)` by [`exp_small`]; squaring a positive enclosure
/// `[lo, hi]` gives `[lo², hi²]` (monotone), rounded outward; the final `2^k` is an exact
/// shift of the rational ends. Each squaring at most doubles the relative error (plus one
/// ulp), so `w = prec + s + 12` leaves ≥ 4 guard bits for the relative width.
fn exp_point(x: &Q, prec: u64) -> Option<Interval> {
    if *x == 0u32 {
        return Some(Interval::one());
    }
    if x.abs() > EXP_MAX_ARG {
        return None;
    }
    let xf = f64_nearest(x);
    let k = round_i64(xf * std::f64::consts::LOG2_E);
    let s = exp_halvings(prec);
    let w = prec + s + 12;
    let kbits = 64 - k.unsigned_abs().leading_zeros() as u64;
    let wl = w + s + kbits + 4;
    let l = ln2_fx(wl);
    let r = Fx::from_q(x, wl).sub(&l.mul_z(&Z::from(k)));
    // v = r / 2^s on the grid 2^-w: (r·2^wl)/2^(wl − w + s)
    let v = r.rescale(wl, w - s);
    let mut y = exp_small(&v, w);
    for _ in 0..s {
        y = y.sqr(w);
    }
    let sh = k - w as i64;
    Some(Interval {
        lo: Q::from(&y.lo) << sh,
        hi: Q::from(&y.hi) << sh,
    })
}

/// Enclosure of `{exp(t) : t ∈ x}`; `None` if an end exceeds `EXP_MAX_ARG` in magnitude.
/// exp is increasing, so the result is `[lower end of exp(x.lo), upper end of exp(x.hi)]`
/// with each end from the point algorithm (see `exp_point`: argument reduction by ln 2 and
/// 2^s halvings, Taylor series with Lagrange remainder, outward-rounded squarings).
///
/// Cost grows like `O(log|x|)` extra bits and `O(|x|)` bits of output (the result is
/// `≈ 2^(1.44·x)`); at `|x| = 10^6` the ends have about 1.4·10^6 bits.
pub fn exp_checked(x: &Interval, prec: u64) -> Option<Interval> {
    let lo = exp_point(&x.lo, prec)?;
    if x.is_point() {
        return Some(lo);
    }
    let hi = exp_point(&x.hi, prec)?;
    Some(Interval {
        lo: lo.lo,
        hi: hi.hi,
    })
}

/// [`exp_checked`] that panics when `|x| > EXP_MAX_ARG` (2^21): such a value cannot be
/// enclosed usefully and is a bug at the call site (it would need ≥ 3·10^6-bit numbers).
pub fn exp(x: &Interval, prec: u64) -> Interval {
    exp_checked(x, prec).unwrap_or_else(|| panic!("exp: |argument| > {EXP_MAX_ARG}: {x}"))
}

// ---------------------------------------------------------------------------------------------
// ln
// ---------------------------------------------------------------------------------------------

/// Enclosure of `atanh(z)` for the exact grid point `z·2^-w`, `|z| ≤ 0.18·2^w`.
/// Positive-term series on `|z|` (`p_j` brackets `|z|^{2j+1}`), tail after the last term
/// `≤ term/(1 − z²) ≤ 2·term_hi`; odd function, so the sign is applied at the end.
fn atanh_series(z: &Z, w: u64) -> Fx {
    let zm = z.abs();
    let z2_lo = mulshr_f(&zm, &zm, w);
    let z2_hi = mulshr_c(&zm, &zm, w);
    let (mut p_lo, mut p_hi) = (zm.clone(), zm);
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut j = 0u64;
    loop {
        let d = Z::from(2 * j + 1);
        let t_lo = div_f(&p_lo, &d);
        let t_hi = div_c(&p_hi, &d);
        if t_hi <= 1u32 {
            s_hi += &t_hi << 1u64;
            break;
        }
        s_lo += t_lo;
        s_hi += t_hi;
        p_lo = mulshr_f(&p_lo, &z2_lo, w);
        p_hi = mulshr_c(&p_hi, &z2_hi, w);
        j += 1;
    }
    let s = Fx { lo: s_lo, hi: s_hi };
    if *z < 0u32 {
        s.neg()
    } else {
        s
    }
}

/// Enclosure of `ln x` for a rational `x > 0`.
///
/// `x = m·2^e` exactly with `m ∈ [1/√2, √2]` (e from the binary logarithm, one exact halving
/// if `m² > 2`); `ln x = e·ln 2 + 2·atanh(z)`, `z = (m−1)/(m+1)` exact rational with
/// `|z| ≤ 3 − 2√2 < 0.1716`. `z` is floored to the grid (`z̃ ≤ z < z̃ + 2^-w`) and atanh is
/// increasing with slope `1/(1−z²) < 2`, so `atanh(z) ∈ atanh(z̃) + [0, 2 ulps]`.
/// ln 2 is taken `bitlen(e) + 2` bits finer so `e·ln 2` is still accurate to the grid.
fn ln_point(x: &Q, prec: u64) -> Option<Interval> {
    if *x <= 0u32 {
        return None;
    }
    if *x == 1u32 {
        return Some(Interval::zero());
    }
    // A rational far longer than the precision asks for (a hostile file's entry) is first
    // enclosed by two dyadics with prec + 64 significant bits (ln is increasing), so the
    // exact steps below never run on its full size.
    let w = prec + 64;
    let e = x.floor_log2_abs();
    let size = x.bits();
    if size > 4 * w + e.unsigned_abs() {
        let sh = w as i64 - e;
        let t = x << sh;
        let (lo, hi) = (Q::from(t.clone().floor()) >> sh, Q::from(t.ceiling()) >> sh);
        return Some(Interval {
            lo: ln_reduced(&lo, prec)?.lo,
            hi: ln_reduced(&hi, prec)?.hi,
        });
    }
    ln_reduced(x, prec)
}

/// [`ln_point`] on x > 0 of any size (the algorithm described there; the caller bounds the size).
fn ln_reduced(x: &Q, prec: u64) -> Option<Interval> {
    if *x == 1u32 {
        return Some(Interval::zero());
    }
    let mut e = x.floor_log2_abs();
    let mut m = x >> e;
    if &m * &m > 2u32 {
        m >>= 1u64;
        e += 1;
    }
    let z = (&m - Q::from(1u32)) / (&m + Q::from(1u32));
    let w = prec + 8;
    let zt = (&z << w).floor();
    let a = atanh_series(&zt, w);
    let a = Fx {
        lo: a.lo,
        hi: a.hi + Z::from(2u32),
    }
    .shl(1); // 2·atanh(z), still on 2^-w
    let ebits = 64 - e.unsigned_abs().leading_zeros() as u64;
    let wl = w + ebits + 2;
    let el = ln2_fx(wl).mul_z(&Z::from(e));
    let r = a.rescale(w, wl).add(&el).rescale(wl, w);
    Some(r.to_interval(w))
}

/// Enclosure of `{ln t : t ∈ x}`; `None` unless `x.lo > 0`. ln is increasing, so the ends
/// come from the point algorithm (see `ln_point`) at `x.lo` (lower) and `x.hi` (upper).
pub fn ln(x: &Interval, prec: u64) -> Option<Interval> {
    let lo = ln_point(&x.lo, prec)?;
    if x.is_point() {
        return Some(lo);
    }
    let hi = ln_point(&x.hi, prec)?;
    Some(Interval {
        lo: lo.lo,
        hi: hi.hi,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points `i/n · half` of the grid 2⁻ʷ for `i = −n..=n` (exact grid integers).
    fn grid(w: u64, half: &Q, n: i64) -> Vec<Z> {
        (-n..=n)
            .map(|i| ((half * Q::from_signeds(i, n)) << w).floor())
            .collect()
    }

    /// The series alone, not the rounding of the caller around it (which works with guard
    /// bits that hide a lost remainder term of an ulp): on 2001 points of the grid 2⁻⁴⁰,
    /// each enclosure contains the value at 300 bits (irrational for v ≠ 0, so a coarse
    /// enclosure leaving out part of the fine one misses the truth), and an interval
    /// argument contains the values at both of its ends.
    #[test]
    fn exp_small_contains_exp_on_the_grid() {
        let w = 40;
        for z in grid(w, &Q::from_signeds(1, 2), 1000) {
            let v = Q::from(&z) >> w;
            let fine = exp(&Interval::point(v.clone()), 300);
            let got = exp_small(&Fx::point(z.clone()), w).to_interval(w);
            assert!(
                fine.is_subset_of(&got),
                "exp_small({v}) = {got:?} misses {fine:?}"
            );
            let hi = &z + Z::from(1000u32);
            if Q::from(&hi) >> w <= Q::from_signeds(1, 2) {
                let wide = exp_small(
                    &Fx {
                        lo: z,
                        hi: hi.clone(),
                    },
                    w,
                )
                .to_interval(w);
                let top = exp(&Interval::point(Q::from(&hi) >> w), 300);
                assert!(
                    fine.is_subset_of(&wide) && top.is_subset_of(&wide),
                    "at {v}"
                );
            }
        }
    }

    /// `atanh_series` on 2001 points of the grid 2⁻⁴⁰ in [−0.18, 0.18], against
    /// `atanh z = ln((1 + z)/(1 − z))/2` at 300 bits (see `exp_small_contains_exp_on_the_grid`).
    #[test]
    fn atanh_series_contains_atanh_on_the_grid() {
        let w = 40;
        let one = Q::from(1u32);
        for z in grid(w, &Q::from_signeds(18, 100), 1000) {
            let x = Q::from(&z) >> w;
            let got = atanh_series(&z, w).to_interval(w);
            let fine = ln(&Interval::point((&one + &x) / (&one - &x)), 300)
                .unwrap()
                .scale(&Q::from_signeds(1, 2));
            assert!(
                fine.is_subset_of(&got),
                "atanh({x}) = {got:?} misses {fine:?}"
            );
        }
    }

    /// A rational longer than `4·(prec + 64) + |e|` bits is first rounded to two dyadics
    /// (`ln_point`): for `x = 2^±500·(1 + 3⁻⁷⁰⁰)` (about 2 700 bits) the enclosure at 64 bits
    /// contains `ln(3⁷⁰⁰ + 1) − ln(3⁷⁰⁰) ± 500·ln 2` at 300 bits, which the exact path computes
    /// (each of its arguments is shorter than that bound).
    #[test]
    fn long_rationals_are_rounded_to_dyadics_first() {
        let p = Q::from(3u32).pow(700);
        let num = &p + Q::from(1u32);
        let ratio = ln(&Interval::point(num.clone()), 300)
            .unwrap()
            .sub(&ln(&Interval::point(p.clone()), 300).unwrap());
        for e in [-500i64, 500] {
            let x = (&num / &p) << e;
            assert!(x.bits() > 4 * (64 + 64) + 500, "the long path is taken");
            let got = ln(&Interval::point(x), 64).unwrap();
            let fine = ratio.add(&super::super::ln2(300).scale(&Q::from(e)));
            assert!(fine.is_subset_of(&got), "2^{e}: {got:?} misses {fine:?}");
            assert!(got.width() <= Q::from(512u32) >> 64u64, "2^{e}: too wide");
        }
    }
}
