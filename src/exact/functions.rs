//! Rigorous enclosures of elementary functions with rational end points.
//!
//! # Contract
//!
//! Every public function returns an [`Interval`] that contains `f(t)` for **every** `t` in the
//! input interval (or for the exact rational inputs given). For a point input the width is at
//! most about `2^-prec · max(1, |f|)`: absolute for values below 1, relative above.
//!
//! # How soundness is obtained
//!
//! Internally all series are evaluated in *fixed-point interval arithmetic*: a private type
//! `Fx { lo, hi }` of two integers represents the interval `[lo·2^-w, hi·2^-w]` for a working
//! precision `w` chosen by the caller. Every operation on `Fx` computes the exact result of
//! the corresponding real interval operation and then rounds the lower end **down** (floor)
//! and the upper end **up** (ceiling) to the `2^-w` grid — exactly what
//! [`Interval::round_outward`] does for rational intervals, but on integers so that no gcd
//! is ever computed. By induction every `Fx` value contains the real quantity it stands for.
//! Helpers used everywhere:
//!
//! * `floor(floor(x)/d) = floor(x/d)` and `ceil(ceil(x)/d) = ceil(x/d)` for integers `d > 0`,
//!   so chains of one-sided roundings of non-negative quantities stay one-sided;
//! * a truncated Taylor series is enclosed by adding `[−E, E]` where `E` is a rigorous upper
//!   bound (computed with ceilings) of the Lagrange remainder or of the first omitted term of
//!   an alternating series;
//! * an interval argument `[a, b]` of a function with `|f'| ≤ L` on it is handled by
//!   evaluating at the exact point `a` and widening by `L·(b − a)` (mean value theorem).
//!
//! No `f64` transcendental function (libm) is used anywhere. `f64` appears only to *choose*
//! reduction parameters (e.g. `k ≈ x/ln 2`); any choice is sound, only speed depends on it.
//!
//! The constants ln 2 and π are computed once per precision level by the series
//! `ln 2 = 2·atanh(1/3)` and Machin's formula, and cached (an enclosure rounded outward to a
//! coarser grid is still an enclosure, so a high-precision cache serves every lower request).

use super::{f64_nearest, Interval, Q, Z};
use malachite_base::num::arithmetic::traits::{
    Abs, Ceiling, CeilingSqrt, CheckedSqrt, DivRound, Floor, FloorSqrt, ModPowerOf2, MulShrRound,
    ShrRound,
};
use malachite_base::num::logic::traits::SignificantBits;
use malachite_base::rounding_modes::RoundingMode as RM;
use std::sync::Mutex;

// ---------------------------------------------------------------------------------------------
// Fixed-point interval arithmetic on the grid 2^-w.
// ---------------------------------------------------------------------------------------------

/// `[lo·2^-w, hi·2^-w]`; the scale `w` is carried by the caller. Invariant `lo ≤ hi`.
#[derive(Clone, Debug, PartialEq)]
struct Fx {
    lo: Z,
    hi: Z,
}

fn zero() -> Z {
    Z::from(0u32)
}
fn pow2(w: u64) -> Z {
    Z::from(1u32) << w
}
fn bitlen(x: &Z) -> u64 {
    x.unsigned_abs_ref().significant_bits()
}
fn shr_f(x: &Z, b: u64) -> Z {
    x.shr_round(b, RM::Floor).0
}
fn shr_c(x: &Z, b: u64) -> Z {
    x.shr_round(b, RM::Ceiling).0
}
fn div_f(x: &Z, d: &Z) -> Z {
    x.div_round(d, RM::Floor).0
}
fn div_c(x: &Z, d: &Z) -> Z {
    x.div_round(d, RM::Ceiling).0
}
/// `floor(x·y / 2^w)`.
fn mulshr_f(x: &Z, y: &Z, w: u64) -> Z {
    x.mul_shr_round(y, w, RM::Floor).0
}
/// `ceil(x·y / 2^w)`.
fn mulshr_c(x: &Z, y: &Z, w: u64) -> Z {
    x.mul_shr_round(y, w, RM::Ceiling).0
}
fn zmin(a: Z, b: Z) -> Z {
    if a <= b {
        a
    } else {
        b
    }
}
fn zmax(a: Z, b: Z) -> Z {
    if a >= b {
        a
    } else {
        b
    }
}
/// Integer square root of a `u64` (floor), for choosing parameters only.
fn isqrt_u64(n: u64) -> u64 {
    let mut x = 0u64;
    while (x + 1) * (x + 1) <= n {
        x += 1;
    }
    x
}
/// Round half away from zero, for choosing parameters only (saturating).
fn round_i64(y: f64) -> i64 {
    if y >= 0.0 {
        (y + 0.5) as i64
    } else {
        (y - 0.5) as i64
    }
}

impl Fx {
    fn point(z: Z) -> Fx {
        Fx {
            lo: z.clone(),
            hi: z,
        }
    }
    /// `[floor(q·2^w), ceil(q·2^w)]`: contains `q`.
    fn from_q(q: &Q, w: u64) -> Fx {
        let s = q << w;
        Fx {
            lo: (&s).floor(),
            hi: (&s).ceiling(),
        }
    }
    /// The rational interval this stands for (exact).
    fn to_interval(&self, w: u64) -> Interval {
        Interval {
            lo: Q::from(&self.lo) >> w,
            hi: Q::from(&self.hi) >> w,
        }
    }
    fn width(&self) -> Z {
        &self.hi - &self.lo
    }
    fn add(&self, o: &Fx) -> Fx {
        Fx {
            lo: &self.lo + &o.lo,
            hi: &self.hi + &o.hi,
        }
    }
    fn sub(&self, o: &Fx) -> Fx {
        Fx {
            lo: &self.lo - &o.hi,
            hi: &self.hi - &o.lo,
        }
    }
    fn neg(&self) -> Fx {
        Fx {
            lo: -&self.hi,
            hi: -&self.lo,
        }
    }
    fn add_z(&self, z: &Z) -> Fx {
        Fx {
            lo: &self.lo + z,
            hi: &self.hi + z,
        }
    }
    /// `[lo − e, hi + e]`, `e ≥ 0`.
    fn widen(&self, e: &Z) -> Fx {
        Fx {
            lo: &self.lo - e,
            hi: &self.hi + e,
        }
    }
    /// Exact multiple by 2^b.
    fn shl(&self, b: u64) -> Fx {
        Fx {
            lo: &self.lo << b,
            hi: &self.hi << b,
        }
    }
    /// Exact product with an integer.
    fn mul_z(&self, k: &Z) -> Fx {
        if *k >= 0u32 {
            Fx {
                lo: &self.lo * k,
                hi: &self.hi * k,
            }
        } else {
            Fx {
                lo: &self.hi * k,
                hi: &self.lo * k,
            }
        }
    }
    /// `{x/d}` for an integer `d > 0`, rounded outward.
    fn div_u(&self, d: u64) -> Fx {
        let d = Z::from(d);
        Fx {
            lo: div_f(&self.lo, &d),
            hi: div_c(&self.hi, &d),
        }
    }
    /// Interval product on the grid: exact corner products (the bilinear `x·y` attains its
    /// extremes at corners), then lower end floored, upper end ceiled.
    fn mul(&self, o: &Fx, w: u64) -> Fx {
        if self.lo >= 0u32 && o.lo >= 0u32 {
            return Fx {
                lo: mulshr_f(&self.lo, &o.lo, w),
                hi: mulshr_c(&self.hi, &o.hi, w),
            };
        }
        if self.hi <= 0u32 && o.hi <= 0u32 {
            return Fx {
                lo: mulshr_f(&self.hi, &o.hi, w),
                hi: mulshr_c(&self.lo, &o.lo, w),
            };
        }
        let p1 = &self.lo * &o.lo;
        let p2 = &self.lo * &o.hi;
        let p3 = &self.hi * &o.lo;
        let p4 = &self.hi * &o.hi;
        let lo = zmin(zmin(p1.clone(), p2.clone()), zmin(p3.clone(), p4.clone()));
        let hi = zmax(zmax(p1, p2), zmax(p3, p4));
        Fx {
            lo: shr_f(&lo, w),
            hi: shr_c(&hi, w),
        }
    }
    /// `{x²}`, sign-aware.
    fn sqr(&self, w: u64) -> Fx {
        let a = self.abs();
        Fx {
            lo: mulshr_f(&a.lo, &a.lo, w),
            hi: mulshr_c(&a.hi, &a.hi, w),
        }
    }
    fn abs(&self) -> Fx {
        if self.lo >= 0u32 {
            self.clone()
        } else if self.hi <= 0u32 {
            self.neg()
        } else {
            Fx {
                lo: zero(),
                hi: zmax(-&self.lo, self.hi.clone()),
            }
        }
    }
    /// `{x/y}` for a divisor interval excluding 0 (panics otherwise: internal callers only
    /// divide by quantities ≥ 1). For `y > 0`, `x/y` is increasing in `x` and, for fixed `x`,
    /// monotone in `y` with direction given by the sign of `x`, so the extremes are
    /// `lo/hi_y` or `lo/lo_y` (by sign of lo) and `hi/lo_y` or `hi/hi_y` (by sign of hi).
    fn div(&self, o: &Fx, w: u64) -> Fx {
        if o.hi < 0u32 {
            return self.neg().div(&o.neg(), w);
        }
        assert!(o.lo > 0u32, "Fx::div: divisor interval contains 0");
        let lo = if self.lo >= 0u32 { &o.hi } else { &o.lo };
        let hi = if self.hi >= 0u32 { &o.lo } else { &o.hi };
        Fx {
            lo: div_f(&(&self.lo << w), lo),
            hi: div_c(&(&self.hi << w), hi),
        }
    }
    /// `{√x}` for the part of the interval that is ≥ 0 (callers only use it on quantities
    /// that are ≥ 0 in truth, so clamping the lower end at 0 keeps the enclosure).
    /// √(v·2^-w)·2^w = √(v·2^w), so the ends are integer square roots, floored / ceiled.
    fn sqrt(&self, w: u64) -> Fx {
        assert!(self.hi >= 0u32, "Fx::sqrt of a negative interval");
        let lo = if self.lo > 0u32 {
            (&self.lo << w).floor_sqrt()
        } else {
            zero()
        };
        Fx {
            lo,
            hi: (&self.hi << w).ceiling_sqrt(),
        }
    }
    /// Change the grid from 2^-from to 2^-to (outward rounding when coarsening; exact when
    /// refining).
    fn rescale(&self, from: u64, to: u64) -> Fx {
        if to <= from {
            let d = from - to;
            Fx {
                lo: shr_f(&self.lo, d),
                hi: shr_c(&self.hi, d),
            }
        } else {
            self.shl(to - from)
        }
    }
    /// Intersection with `[a, b]`, a range known to contain the true value (so the result is
    /// still an enclosure). If the two were disjoint the true value could be in neither,
    /// which is impossible when both contain it; we return `[a, b]`-clamped ends anyway.
    fn clamp(&self, a: &Z, b: &Z) -> Fx {
        let lo = if self.lo < *a {
            a.clone()
        } else {
            self.lo.clone()
        };
        let hi = if self.hi > *b {
            b.clone()
        } else {
            self.hi.clone()
        };
        if lo <= hi {
            Fx { lo, hi }
        } else {
            // Unreachable for correct enclosures; stay sound by returning the known range.
            Fx {
                lo: a.clone(),
                hi: b.clone(),
            }
        }
    }
    /// `max(|lo|, |hi|)`.
    fn mag(&self) -> Z {
        zmax((&self.lo).abs(), (&self.hi).abs())
    }
}

// ---------------------------------------------------------------------------------------------
// Constants: ln 2 and π, cached.
// ---------------------------------------------------------------------------------------------

/// `atanh(1/n) = Σ_{k≥0} 1/((2k+1)·n^{2k+1})` on the grid 2^-w, `n ≥ 2`.
///
/// `p_lo = floor(2^w/n^{2k+1})`, `p_hi = ceil(2^w/n^{2k+1})` exactly (iterated floor / ceil
/// divisions by n²), each term is bracketed by `floor(p_lo/(2k+1))`, `ceil(p_hi/(2k+1))`.
/// All terms are positive; once `p_hi ≤ 1` the tail is `Σ_{j≥k} ≤ n^{-(2k+1)}/(1 − n^{-2})
/// ≤ (4/3)·p_hi ≤ 2·p_hi` ulps, added to the upper end.
fn atanh_inv(n: u64, w: u64) -> Fx {
    let n2 = Z::from(n * n);
    let nz = Z::from(n);
    let one = pow2(w);
    let mut p_lo = div_f(&one, &nz);
    let mut p_hi = div_c(&one, &nz);
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut k = 0u64;
    loop {
        if p_hi <= 1u32 {
            s_hi += &p_hi << 1u64;
            break;
        }
        let d = Z::from(2 * k + 1);
        s_lo += div_f(&p_lo, &d);
        s_hi += div_c(&p_hi, &d);
        p_lo = div_f(&p_lo, &n2);
        p_hi = div_c(&p_hi, &n2);
        k += 1;
    }
    Fx { lo: s_lo, hi: s_hi }
}

/// `atan(1/n) = Σ_{k≥0} (−1)^k/((2k+1)·n^{2k+1})` on the grid 2^-w, `n ≥ 2`. Same brackets as
/// [`atanh_inv`]; the series alternates with decreasing terms, so the tail after the last
/// included term is bounded in magnitude by the first omitted term `≤ p_hi` ulps.
fn atan_inv(n: u64, w: u64) -> Fx {
    let n2 = Z::from(n * n);
    let nz = Z::from(n);
    let one = pow2(w);
    let mut p_lo = div_f(&one, &nz);
    let mut p_hi = div_c(&one, &nz);
    let (mut s_lo, mut s_hi) = (zero(), zero());
    let mut k = 0u64;
    loop {
        if p_hi <= 1u32 {
            s_lo -= &p_hi;
            s_hi += &p_hi;
            break;
        }
        let d = Z::from(2 * k + 1);
        let t_lo = div_f(&p_lo, &d);
        let t_hi = div_c(&p_hi, &d);
        if k % 2 == 0 {
            s_lo += t_lo;
            s_hi += t_hi;
        } else {
            s_lo -= t_hi;
            s_hi -= t_lo;
        }
        p_lo = div_f(&p_lo, &n2);
        p_hi = div_c(&p_hi, &n2);
        k += 1;
    }
    Fx { lo: s_lo, hi: s_hi }
}

/// ln 2 = 2·atanh(1/3), computed 2 bits finer and rounded outward.
fn compute_ln2(w: u64) -> Fx {
    atanh_inv(3, w + 2).shl(1).rescale(w + 2, w)
}

/// π = 16·atan(1/5) − 4·atan(1/239) (Machin), computed 8 bits finer and rounded outward.
fn compute_pi(w: u64) -> Fx {
    let a = atan_inv(5, w + 8).mul_z(&Z::from(16u32));
    let b = atan_inv(239, w + 8).mul_z(&Z::from(4u32));
    a.sub(&b).rescale(w + 8, w)
}

type Cache = Mutex<Option<(u64, Fx)>>;
static LN2_CACHE: Cache = Mutex::new(None);
static PI_CACHE: Cache = Mutex::new(None);

fn cached(cache: &Cache, w: u64, compute: fn(u64) -> Fx) -> Fx {
    {
        let g = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cw, v)) = g.as_ref() {
            if *cw >= w {
                return v.rescale(*cw, w);
            }
        }
    }
    let cw = (w + 64).next_multiple_of(256);
    let v = compute(cw);
    let out = v.rescale(cw, w);
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    if g.as_ref().is_none_or(|(c, _)| *c < cw) {
        *g = Some((cw, v));
    }
    out
}

fn ln2_fx(w: u64) -> Fx {
    cached(&LN2_CACHE, w, compute_ln2)
}
fn pi_fx(w: u64) -> Fx {
    cached(&PI_CACHE, w, compute_pi)
}

/// Enclosure of π of width ≤ 2^-prec (Machin's formula, see [`atan_inv`]).
pub fn pi(prec: u64) -> Interval {
    pi_fx(prec + 2).to_interval(prec + 2)
}

/// Enclosure of ln 2 of width ≤ 2^-prec (`2·atanh(1/3)`, positive series with geometric tail
/// bound, see [`atanh_inv`]).
pub fn ln2(prec: u64) -> Interval {
    ln2_fx(prec + 2).to_interval(prec + 2)
}

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
    if x.abs() > Q::from(EXP_MAX_ARG) {
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
    let mut e = x.floor_log_base_2_abs();
    let mut m = x >> e;
    if &m * &m > 2u32 {
        m >>= 1u64;
        e += 1;
    }
    let z = (&m - Q::from(1u32)) / (&m + Q::from(1u32));
    let w = prec + 8;
    let zt = (&(&z << w)).floor();
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

// ---------------------------------------------------------------------------------------------
// sqrt
// ---------------------------------------------------------------------------------------------

/// Enclosure of `√x` for a rational `x ≥ 0`. Exact (a point) when x is the square of a
/// rational. Otherwise, with `w` chosen so `√x·2^w ≥ 2^(prec+3)`:
/// `floor_sqrt(floor(x·4^w)) ≤ √x·2^w ≤ ceil_sqrt(ceil(x·4^w))` (integer square roots are
/// monotone), giving relative width ≤ 2^-(prec+1).
fn sqrt_point(x: &Q, prec: u64) -> Option<Interval> {
    if *x < 0u32 {
        return None;
    }
    if *x == 0u32 {
        return Some(Interval::zero());
    }
    if let Some(r) = x.checked_sqrt() {
        return Some(Interval::point(r));
    }
    let e = x.floor_log_base_2_abs();
    let w: i64 = prec as i64 + 4 - e.div_euclid(2);
    let y = x << (2 * w);
    let lo = Z::from((&y).floor()).floor_sqrt();
    let hi = Z::from((&y).ceiling()).ceiling_sqrt();
    Some(Interval {
        lo: Q::from(lo) >> w,
        hi: Q::from(hi) >> w,
    })
}

/// Enclosure of `{√t : t ∈ x}`; `None` unless `x.lo ≥ 0`. √ is increasing, so the ends come
/// from `sqrt_point` at the two ends (exact integer square roots, see there).
pub fn sqrt(x: &Interval, prec: u64) -> Option<Interval> {
    let lo = sqrt_point(&x.lo, prec)?;
    if x.is_point() {
        return Some(lo);
    }
    let hi = sqrt_point(&x.hi, prec)?;
    Some(Interval {
        lo: lo.lo,
        hi: hi.hi,
    })
}

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
    u64::try_from(&k.mod_power_of_2(2)).expect("residue < 4")
}

/// Reduce `t` (radians, exact rational) as `t = k·π/2 + r`: returns `(k mod 4, r)` with `r`
/// enclosed on the grid 2^-w and `|r| ≤ π/4 + 2^-20` (k is the rounded quotient computed
/// with a coarse π; any integer k would be sound). π/2 is known to `2^-(w + bitlen(k) + 3)`
/// so `k·(π/2)` is accurate to the grid.
fn reduce_half_pi(t: &Q, w: u64) -> (u64, Fx) {
    let k: Z = if t.abs() < Q::from(1u64 << 40) {
        Z::from(round_i64(f64_nearest(t) * std::f64::consts::FRAC_2_PI))
    } else {
        let wb = 64 + t.floor_log_base_2_abs().max(0) as u64;
        let p = pi_fx(wb);
        // 2t/π ≈ 2t·2^wb / p.lo, rounded to nearest
        let y = (t << (wb + 1)) / Q::from(&p.lo) + Q::from_signeds(1, 2);
        (&y).floor()
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
    let k: Z = (&((q << 1u64) + Q::from_signeds(1, 2))).floor();
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
    let lo = (&((Q::from(a) * &f) >> 2u64)).floor();
    let hi = (&((Q::from(b) * &f) >> 2u64)).ceiling();
    (z_mod4(&k), Fx { lo, hi })
}

fn sin_pi_fx(q: &Q, w: u64) -> Fx {
    let (k, r) = reduce_pi_units(q, w);
    sin_quadrant(k, &r, w)
}
fn cos_pi_fx(q: &Q, w: u64) -> Fx {
    let (k, r) = reduce_pi_units(q, w);
    sin_quadrant(k + 1, &r, w)
}

const TRIG_GUARD: u64 = 10;

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

/// Enclosure of `{sin t : t ∈ x}` (radians). Any rational argument is accepted; the cost
/// grows with `log2|t|` (π is computed to that many extra bits). Tuned for |t| ≲ 2π.
pub fn sin(x: &Interval, prec: u64) -> Interval {
    sincos_interval(x, prec, false)
}

/// Enclosure of `{cos t : t ∈ x}` (radians); see [`sin`].
pub fn cos(x: &Interval, prec: u64) -> Interval {
    sincos_interval(x, prec, true)
}

/// Enclosure of `sin(π·q)`; exact reduction of `q` modulo 1/2, so e.g. `sin_pi(0)`,
/// `sin_pi(1)` are exactly 0 and `sin_pi(1/2)` exactly 1. Degrees: `sin_pi(deg/180)`.
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
        if j % 2 == 0 {
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
fn atan_max_halvings(prec: u64) -> u64 {
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
        pi_fx(w + 1).sub(&at) // π on grid 2^-(w+1) = π/2 on grid 2^-w
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

/// `{asin s : s ∈ sv}` for `sv ⊂ [0, 1]` (grid 2^-w) given also an enclosure `c` of
/// `1 − s²` (callers often know it more precisely than by squaring `sv`):
/// `asin s = 2·atan(s / (1 + √(1 − s²)))` (half-angle formula, valid on [−1, 1], the argument
/// stays in [0, 1], no singularity at s = 1).
fn asin_fx(sv: &Fx, c: &Fx, w: u64, hmax: u64) -> Fx {
    let one = pow2(w);
    let c = c.clamp(&zero(), &one);
    let d = c.sqrt(w).add_z(&one);
    let v = sv.div(&d, w);
    let v = v.clamp(&zero(), &one);
    atan_core(&v, w, hmax).shl(1)
}

/// Enclosure of `asin t` for a rational point `t ∈ [−1, 1]`.
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
    let r = asin_fx(&Fx::from_q(&a, w), &Fx::from_q(&c, w), w, hmax);
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

// ---------------------------------------------------------------------------------------------
// Geodesy
// ---------------------------------------------------------------------------------------------

/// `asin(√h)` for the haversine `h` of two points in degrees, on the grid 2^-w.
fn haversine_half_angle(lat1: &Q, lon1: &Q, lat2: &Q, lon2: &Q, w: u64, hmax: u64) -> Fx {
    let one = pow2(w);
    let s1 = sin_pi_fx(&((lat2 - lat1) / Q::from(360u32)), w);
    let s2 = sin_pi_fx(&((lon2 - lon1) / Q::from(360u32)), w);
    let c1 = cos_pi_fx(&(lat1 / Q::from(180u32)), w);
    let c2 = cos_pi_fx(&(lat2 / Q::from(180u32)), w);
    let h = s1.sqr(w).add(&c1.mul(&c2, w).mul(&s2.sqr(w), w));
    // h = (1 − p1·p2)/2 for the unit vectors p1, p2, so h ∈ [0, 1] for any angles.
    let h = h.clamp(&zero(), &one);
    if h.hi == 0u32 {
        return Fx::point(zero());
    }
    let s = h.sqrt(w);
    let c = Fx {
        lo: &one - &h.hi,
        hi: &one - &h.lo,
    }; // ⊇ 1 − h = 1 − s²
    asin_fx(&s, &c, w, hmax)
}

/// Great-circle distance between two points given in **degrees** (latitude, longitude) on a
/// sphere of radius `radius` (≥ 0), by the haversine formula
/// `d = 2R·asin(√h)`, `h = sin²(Δφ/2) + cos φ1·cos φ2·sin²(Δλ/2)`.
///
/// Soundness: every factor is an enclosure (`sin_pi`/`cos_pi` on the exact rationals
/// `Δlat/360`, `lat/180`, …, exact reduction mod 1/2 then Taylor with Lagrange remainder),
/// combined by outward-rounded interval arithmetic; `h` is intersected with [0, 1], which
/// contains the true value for any inputs (`h = (1 − p1·p2)/2` with unit vectors p1, p2);
/// `asin(√h) = 2·atan(√h/(1 + √(1 − h)))` is increasing in h. Coincident points give
/// `Δ = 0` exactly, hence `h = [0, 0]` and the result `[0, 0]`.
///
/// Precision: the working precision is raised (up to `4·prec + 512` extra bits) until the
/// width is ≤ `2^-prec · max(1, d)`; this handles tiny distances (√ amplifies absolute
/// errors of small h) and near-antipodal points (asin has infinite slope at 1), where the
/// cost grows accordingly.
pub fn haversine(lat1: &Q, lon1: &Q, lat2: &Q, lon2: &Q, radius: &Q, prec: u64) -> Interval {
    let hmax = atan_max_halvings(prec) + 2;
    let rbits = if *radius == 0u32 {
        0
    } else {
        radius.floor_log_base_2_abs().max(0) as u64
    };
    let mut extra = 0u64;
    let two_r = radius << 1u64;
    loop {
        let w = prec + hmax + rbits + 16 + extra;
        let a = haversine_half_angle(lat1, lon1, lat2, lon2, w, hmax + extra);
        let d = a.to_interval(w).scale(&two_r).round_outward(w);
        let width = d.width();
        if width == 0u32 {
            return d;
        }
        let mag = d.mag();
        let target = if mag > 1u32 {
            mag >> prec
        } else {
            Q::from(1u32) >> prec
        };
        if width <= target || extra > 4 * prec + 512 {
            return d;
        }
        let deficit = (width.floor_log_base_2_abs() - target.floor_log_base_2_abs()).max(1) as u64;
        extra += 2 * deficit + 8;
    }
}

/// Enclosures of the unit vector `(cos φ·cos λ, cos φ·sin λ, sin φ)` for latitude φ and
/// longitude λ in **degrees** (`sin_pi`/`cos_pi` of `deg/180`, products rounded outward).
pub fn chord_unit_vector(lat: &Q, lon: &Q, prec: u64) -> [Interval; 3] {
    let w = prec + TRIG_GUARD;
    let p = lat / Q::from(180u32);
    let l = lon / Q::from(180u32);
    let (cp, sp) = (cos_pi_fx(&p, w), sin_pi_fx(&p, w));
    let (cl, sl) = (cos_pi_fx(&l, w), sin_pi_fx(&l, w));
    [
        cp.mul(&cl, w).to_interval(w),
        cp.mul(&sl, w).to_interval(w),
        sp.to_interval(w),
    ]
}

// ---------------------------------------------------------------------------------------------
// Refinement driver
// ---------------------------------------------------------------------------------------------

/// Call `f(prec)` for `prec = start, 2·start, 4·start, …` (the last try is exactly
/// `max_prec`) until it returns `Some`; `None` if even `max_prec` does not decide.
pub fn refine<T>(start_prec: u64, max_prec: u64, mut f: impl FnMut(u64) -> Option<T>) -> Option<T> {
    let mut p = start_prec.max(1).min(max_prec.max(1));
    loop {
        if let Some(v) = f(p) {
            return Some(v);
        }
        if p >= max_prec {
            return None;
        }
        p = p.saturating_mul(2).min(max_prec);
    }
}
