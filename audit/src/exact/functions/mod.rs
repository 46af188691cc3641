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
    x.bits_abs()
}
fn shr_f(x: &Z, b: u64) -> Z {
    x.shr_floor(b)
}
fn shr_c(x: &Z, b: u64) -> Z {
    x.shr_ceil(b)
}
fn div_f(x: &Z, d: &Z) -> Z {
    x.div_floor(d)
}
fn div_c(x: &Z, d: &Z) -> Z {
    x.div_ceil(d)
}
/// `floor(x·y / 2^w)`.
fn mulshr_f(x: &Z, y: &Z, w: u64) -> Z {
    x.mul_shr_floor(y, w)
}
/// `ceil(x·y / 2^w)`.
fn mulshr_c(x: &Z, y: &Z, w: u64) -> Z {
    x.mul_shr_ceil(y, w)
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
            lo: s.floor(),
            hi: s.ceiling(),
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
        zmax(self.lo.abs(), self.hi.abs())
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
/// `atanh_inv`; the series alternates with decreasing terms, so the tail after the last
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
        if k & 1 == 0 {
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

/// Enclosure of π of width ≤ 2^-prec (Machin's formula, see `atan_inv`).
pub fn pi(prec: u64) -> Interval {
    pi_fx(prec + 2).to_interval(prec + 2)
}

/// Enclosure of ln 2 of width ≤ 2^-prec (`2·atanh(1/3)`, positive series with geometric tail
/// bound, see `atanh_inv`).
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
    let e = x.floor_log2_abs();
    let w: i64 = prec as i64 + 4 - e.div_euclid(2);
    let y = x << (2 * w);
    let lo = y.floor().floor_sqrt();
    let hi = y.ceiling().ceiling_sqrt();
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
fn asin_fx(sv: &Fx, cs: &Fx, w: u64, hmax: u64) -> Fx {
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
    }
    .clamp(&zero(), &one); // ⊇ 1 − h = 1 − s²
    asin_fx(&s, &c.sqrt(w), w, hmax)
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
        radius.floor_log2_abs().max(0) as u64
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
        let deficit = (width.floor_log2_abs() - target.floor_log2_abs()).max(1) as u64;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{parse_rational, q_from_f64};
    use proptest::prelude::*;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }
    fn pt(s: &str) -> Interval {
        Interval::point(q(s))
    }
    fn two_pow(e: i64) -> Q {
        Q::from(1u32) << e
    }

    /// The true value of a constant truncated to 40 decimals lies in [c, c + 1e-40].
    fn digits40(s: &str) -> Interval {
        let c = q(s);
        Interval::new(c.clone(), c + q("1e-40"))
    }

    fn check_const(name: &str, f: impl Fn(u64) -> Interval, c40: &str) {
        let truth = digits40(c40);
        let mut last_width: Option<Q> = None;
        for prec in [32u64, 64, 128, 256] {
            let r = f(prec);
            assert!(
                r.intersect(&truth).is_some(),
                "{name} @ {prec}: {r:?} misses the true value"
            );
            let mag = if r.mag() > 1u32 {
                r.mag()
            } else {
                Q::from(1u32)
            };
            assert!(
                r.width() <= mag * two_pow(-(prec as i64)),
                "{name} @ {prec}: too wide"
            );
            if prec >= 160 {
                assert!(r.is_subset_of(&truth.widen(&q("1e-40"))), "{name} @ {prec}");
            }
            if let Some(lw) = last_width {
                // width at 2p is far below width at p: at least p/2 more bits
                assert!(
                    r.width() * two_pow(prec as i64 / 4) <= lw,
                    "{name}: width did not shrink"
                );
            }
            last_width = Some(r.width());
        }
    }

    #[test]
    fn constants_to_40_digits() {
        check_const("pi", pi, "3.1415926535897932384626433832795028841971");
        check_const(
            "e",
            |p| exp(&pt("1"), p),
            "2.7182818284590452353602874713526624977572",
        );
        check_const(
            "ln2",
            |p| ln(&pt("2"), p).unwrap(),
            "0.6931471805599453094172321214581765680755",
        );
        check_const("ln2c", ln2, "0.6931471805599453094172321214581765680755");
        check_const(
            "ln10",
            |p| ln(&pt("10"), p).unwrap(),
            "2.3025850929940456840179914546843642076011",
        );
        check_const(
            "sqrt2",
            |p| sqrt(&pt("2"), p).unwrap(),
            "1.4142135623730950488016887242096980785696",
        );
        check_const(
            "pi/4",
            |p| atan(&pt("1"), p),
            "0.7853981633974483096156608458198757210492",
        );
        check_const(
            "pi/2",
            |p| asin(&pt("1"), p).unwrap(),
            "1.5707963267948966192313216916397514420985",
        );
        check_const(
            "pi/6",
            |p| asin(&pt("1/2"), p).unwrap(),
            "0.5235987755982988730771072305465838140328",
        );
        check_const(
            "1/e",
            |p| exp(&pt("-1"), p),
            "0.3678794411714423215955237701614608674458",
        );
        check_const(
            "sin1",
            |p| sin(&pt("1"), p),
            "0.8414709848078965066525023216302989996225",
        );
        check_const(
            "cos1",
            |p| cos(&pt("1"), p),
            "0.5403023058681397174009366074429766037323",
        );
        check_const(
            "atan1/2",
            |p| atan(&pt("1/2"), p),
            "0.4636476090008061162142562314612144020285",
        );
        check_const(
            "e^100/1e43",
            |p| exp(&pt("100"), p + 150).scale(&q("1e-43")),
            "2.6881171418161354484126255515800135873611",
        );
    }

    /// Exact values that must be hit exactly or contained.
    #[test]
    fn exact_and_special_values() {
        let zero = Interval::zero();
        let one = Interval::one();
        assert_eq!(exp(&zero, 64), one);
        assert_eq!(ln(&one, 64).unwrap(), zero);
        assert_eq!(sin(&zero, 64), zero);
        assert_eq!(cos(&zero, 64), one);
        assert_eq!(atan(&zero, 64), zero);
        assert_eq!(asin(&zero, 64).unwrap(), zero);
        assert_eq!(sqrt(&pt("9/4"), 64).unwrap(), pt("3/2"));
        assert_eq!(sqrt(&zero, 64).unwrap(), zero);
        assert_eq!(sin_pi(&q("0"), 64), zero);
        assert_eq!(sin_pi(&q("1"), 64), zero);
        assert_eq!(sin_pi(&q("-3"), 64), zero);
        assert_eq!(sin_pi(&q("1/2"), 64), one);
        assert_eq!(cos_pi(&q("1/2"), 64), zero);
        assert_eq!(cos_pi(&q("1"), 64), one.neg());
        assert!(sin_pi(&q("1/6"), 64).contains(&q("1/2")));
        assert!(cos_pi(&q("1/3"), 64).contains(&q("1/2")));
        assert!(cos_pi(&q("-2/3"), 64).contains(&q("-1/2")));
        assert!(ln(&zero, 64).is_none());
        assert!(ln(&Interval::new(q("-1"), q("2")), 64).is_none());
        assert!(sqrt(&pt("-1/10"), 64).is_none());
        assert!(asin(&pt("11/10"), 64).is_none());
        assert!(exp_checked(&pt("3000000"), 64).is_none());
        assert!(
            asin(&pt("-1"), 64)
                .unwrap()
                .contains(&(-(pi(200).lo >> 1u64)))
                || {
                    let a = asin(&pt("-1"), 64).unwrap();
                    a.intersect(&pi(200).scale(&q("-1/2"))).is_some()
                }
        );
    }

    /// libm value within the enclosure widened by 4 ulps of the value.
    fn near_libm(r: &Interval, v: f64) -> bool {
        let u = (v.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
        let e = q_from_f64(4.0 * u);
        r.widen(&e).contains(&q_from_f64(v))
    }

    #[test]
    fn against_libm_grid() {
        let xs = [
            -30.5, -7.25, -1.0, -0.3, -1e-5, 1e-9, 0.1, 0.5, 0.75, 1.0, 1.5, 2.0, 3.25, 6.2, 10.0,
            100.0, 700.0,
        ];
        for &x in &xs {
            let qx = Interval::point(q_from_f64(x));
            assert!(near_libm(&exp(&qx, 64), x.exp()), "exp {x}");
            assert!(near_libm(&sin(&qx, 64), x.sin()), "sin {x}");
            assert!(near_libm(&cos(&qx, 64), x.cos()), "cos {x}");
            assert!(near_libm(&atan(&qx, 64), x.atan()), "atan {x}");
            if x > 0.0 {
                assert!(near_libm(&ln(&qx, 64).unwrap(), x.ln()), "ln {x}");
                assert!(near_libm(&sqrt(&qx, 64).unwrap(), x.sqrt()), "sqrt {x}");
            }
            if x.abs() <= 1.0 {
                assert!(near_libm(&asin(&qx, 64).unwrap(), x.asin()), "asin {x}");
            }
        }
    }

    #[test]
    fn width_contract_point_inputs() {
        for prec in [16u64, 53, 64, 100, 200] {
            for s in [
                "1/3",
                "-5/7",
                "12345/100",
                "1e-20",
                "-700.25",
                "3/1000000",
                "999999/1000000",
            ] {
                let x = pt(s);
                let tol = |r: &Interval| {
                    let m = r.mag();
                    let m = if m > 1u32 { m } else { Q::from(1u32) };
                    r.width() <= m * two_pow(-(prec as i64))
                };
                assert!(tol(&exp(&x, prec)), "exp {s} {prec}");
                assert!(tol(&sin(&x, prec)), "sin {s} {prec}");
                assert!(tol(&cos(&x, prec)), "cos {s} {prec}");
                assert!(tol(&atan(&x, prec)), "atan {s} {prec}");
                if x.lo > 0u32 {
                    assert!(tol(&ln(&x, prec).unwrap()), "ln {s} {prec}");
                    assert!(tol(&sqrt(&x, prec).unwrap()), "sqrt {s} {prec}");
                }
                if x.mag() <= 1u32 {
                    assert!(tol(&asin(&x, prec).unwrap()), "asin {s} {prec}");
                }
            }
        }
    }

    #[test]
    fn large_arguments() {
        // exp near the limit: e^(2^21) = 2^(2^21·log2 e); check the exponent and the relation
        // exp(a)·exp(−a) ∋ 1.
        let a = pt("1000000.5");
        let e1 = exp(&a, 64);
        let e2 = exp(&a.neg(), 64);
        assert!(e1.mul(&e2).contains(&Q::from(1u32)));
        let l = ln(&e1, 64).unwrap();
        assert!(l.contains(&a.lo));
        // ln of huge and tiny numbers
        let big = Interval::point(Q::from(10u32) << 3000u64);
        let lb = ln(&big, 64).unwrap();
        let expect = ln(&pt("10"), 80)
            .unwrap()
            .add(&ln2(80).scale(&Q::from(3000u32)));
        assert!(lb.intersect(&expect).is_some());
        let tiny = Interval::point(q("1e-300"));
        let lt = ln(&tiny, 64).unwrap();
        assert!(lt
            .intersect(&ln(&pt("10"), 80).unwrap().scale(&Q::from(-300i32)))
            .is_some());
        // sin of a large argument: sin(10^20) = -0.6452512852657808...
        let s = sin(&pt("1e20"), 64);
        assert!(
            s.intersect(&Interval::new(
                q("-0.64525128526578085"),
                q("-0.64525128526578084")
            ))
            .is_some(),
            "{s:?}"
        );
        let s = sin(&pt("1e60"), 64);
        assert!(near_libm(&s, (1e60f64).sin()) || s.width() < q("1e-18"));
        // atan of large and tiny
        assert!(atan(&pt("1e30"), 64)
            .intersect(&pi(200).scale(&q("1/2")).add_q(&q("-1e-30")))
            .is_some());
        assert!(
            atan(&pt("1e-30"), 64).contains(&q("1e-30"))
                || atan(&pt("1e-30"), 64).width() < q("1e-19")
        );
        // asin very close to 1
        let t = Interval::point(Q::from(1u32) - two_pow(-200));
        let r = asin(&t, 128).unwrap();
        let half_pi = pi(300).scale(&q("1/2"));
        // asin(1 − ε) = π/2 − √(2ε) + O(ε^1.5), √(2ε) = 2^-99.5
        assert!(r.hi < half_pi.lo && r.lo > &half_pi.lo - two_pow(-99));
    }

    #[test]
    fn identities() {
        for s in ["1/7", "2", "-3/2", "22/7", "-100/3", "0.001"] {
            let x = pt(s);
            let sc = sin(&x, 80).sqr().add(&cos(&x, 80).sqr());
            assert!(sc.contains(&Q::from(1u32)), "sin²+cos² {s}");
            let e = exp(&x, 80);
            assert!(ln(&e, 80).unwrap().contains(&x.lo), "ln exp {s}");
            let t = atan(&x, 80);
            // tan(atan x) = x: sin/cos of the enclosure (interval args)
            let back = sin(&t, 80).div(&cos(&t, 80)).unwrap();
            assert!(back.contains(&x.lo), "tan atan {s}");
        }
        for s in ["0.3", "0.99", "1/3", "0.999999"] {
            let x = pt(s);
            let a = asin(&x, 80).unwrap();
            assert!(sin(&a, 80).contains(&x.lo), "sin asin {s}");
        }
    }

    #[test]
    fn interval_inputs_contain_point_values() {
        let x = Interval::new(q("-1/3"), q("5/2"));
        let r = exp(&x, 64);
        for s in ["-1/3", "5/2", "1.08333333"] {
            let p = exp(&pt(s), 64);
            assert!(p.is_subset_of(&r), "exp {s}");
        }
        let r = ln(&Interval::new(q("1/10"), q("30")), 64).unwrap();
        for s in ["1/10", "30", "1", "2.5"] {
            assert!(ln(&pt(s), 64).unwrap().is_subset_of(&r));
        }
        // sin over [0.5, 2]: contains sin at samples (the max 1 at π/2 included)
        let x = Interval::new(q("0.5"), q("2"));
        let r = sin(&x, 64);
        assert!(r.contains(&Q::from(1u32)));
        for k in 0..=30 {
            let t = q("0.5") + Q::from_unsigneds(k as u32, 20u32);
            let p = sin(&Interval::point(t.clone()), 100);
            assert!(p.is_subset_of(&r), "sin at {t}");
            let c = cos(&Interval::point(t.clone()), 100);
            assert!(c.is_subset_of(&cos(&x, 64)), "cos at {t}");
        }
        let r = atan(&Interval::new(q("-20"), q("0.1")), 64);
        assert!(atan(&pt("-3"), 64).is_subset_of(&r));
        let r = asin(&Interval::new(q("0"), q("1")), 64).unwrap();
        assert!(asin(&pt("0.7"), 64).unwrap().is_subset_of(&r));
        let r = sqrt(&Interval::new(q("0"), q("2")), 64).unwrap();
        assert!(r.contains(&Q::from(1u32)) && r.lo == 0u32);
    }

    #[test]
    fn haversine_cities() {
        let r = q("6371.0088");
        let d = haversine(
            &q("41.9028"),
            &q("12.4964"),
            &q("48.8566"),
            &q("2.3522"),
            &r,
            64,
        );
        assert!(
            near_libm(&d, 1105.2816753920786)
                || d.intersect(&Interval::new(q("1105.2816753920"), q("1105.2816753921")))
                    .is_some(),
            "{d:?}"
        );
        assert!(d.width() < q("1e-15"));
        let d = haversine(
            &q("40.7128"),
            &q("-74.0060"),
            &q("51.5074"),
            &q("-0.1278"),
            &r,
            64,
        );
        assert!(
            d.intersect(&Interval::new(q("5570.22987365"), q("5570.22987366")))
                .is_some(),
            "{d:?}"
        );
        // symmetric
        let d2 = haversine(
            &q("51.5074"),
            &q("-0.1278"),
            &q("40.7128"),
            &q("-74.0060"),
            &r,
            64,
        );
        assert!(d.intersect(&d2).is_some());
        // coincident points: exactly 0
        let z = haversine(
            &q("41.9028"),
            &q("12.4964"),
            &q("41.9028"),
            &q("12.4964"),
            &r,
            64,
        );
        assert_eq!(z, Interval::zero());
        // same point with longitudes differing by 360
        let z = haversine(&q("10"), &q("-170"), &q("10"), &q("190"), &r, 64);
        assert!(z.contains(&Q::from(0u32)) && z.width() < q("1e-15"));
        // antipodal: π·R
        let d = haversine(&q("0"), &q("0"), &q("0"), &q("180"), &r, 64);
        let pr = pi(128).scale(&r);
        assert!(d.intersect(&pr).is_some(), "{d:?}");
        assert!(d.width() <= d.mag() * two_pow(-64));
        let d = haversine(&q("90"), &q("0"), &q("-90"), &q("33"), &r, 64);
        assert!(d.intersect(&pr).is_some());
        // tiny distance: 1e-9 degrees of latitude = R·π·1e-9/180
        let d = haversine(&q("0"), &q("0"), &q("1e-9"), &q("0"), &r, 64);
        let t = pi(128).scale(&(q("1e-9") / Q::from(180u32) * &r));
        assert!(d.intersect(&t).is_some(), "{d:?}");
        assert!(d.width() <= two_pow(-64));
    }

    #[test]
    fn chord_vectors() {
        let v = chord_unit_vector(&q("41.9028"), &q("12.4964"), 64);
        let n = v[0].sqr().add(&v[1].sqr()).add(&v[2].sqr());
        assert!(n.contains(&Q::from(1u32)));
        let w = chord_unit_vector(&q("48.8566"), &q("2.3522"), 64);
        let c2 = v[0]
            .sub(&w[0])
            .sqr()
            .add(&v[1].sub(&w[1]).sqr())
            .add(&v[2].sub(&w[2]).sqr());
        // |p1 − p2|² = 4h = 4 sin²(θ/2), θ = d/R
        let r = q("6371.0088");
        let d = haversine(
            &q("41.9028"),
            &q("12.4964"),
            &q("48.8566"),
            &q("2.3522"),
            &r,
            64,
        );
        let half = d.scale(&(Q::from(1u32) / (&r << 1u64)));
        let s = sin(&half, 64).sqr().scale(&Q::from(4u32));
        assert!(c2.intersect(&s).is_some());
        assert_eq!(chord_unit_vector(&q("90"), &q("0"), 64)[2], Interval::one());
        assert_eq!(chord_unit_vector(&q("0"), &q("0"), 64)[0], Interval::one());
    }

    /// Arguments at reduction boundaries and other awkward places: every result must
    /// intersect a much finer enclosure and meet the width contract.
    #[test]
    fn awkward_arguments() {
        let l2 = ln2(300);
        let p = pi(300);
        let mut args: Vec<Q> = vec![];
        for k in [-40i64, -3, -1, 0, 1, 2, 7, 1000] {
            // (k + 1/2)·ln 2 and k·π/4 ± tiny, exactly representable nearby rationals
            let m = Q::from(k) + Q::from_signeds(1, 2);
            args.push(&l2.lo * &m);
            args.push(&p.lo * Q::from(k) / Q::from(4u32));
            args.push(&p.hi * Q::from(k) / Q::from(4u32) + two_pow(-70));
        }
        args.push(Q::from(1u32) - two_pow(-80)); // ln near 1, asin near 1
        args.push(Q::from(1u32) + two_pow(-80));
        args.push(q("1.41421356237309504880168872420969807856967187537694")); // √2 split
        args.push(q("0.70710678118654752440084436210484903928483593768847"));
        args.push(q(
            "123456789012345678901234567890/987654321098765432109876543211",
        ));
        args.push(two_pow(-300));
        for x in args {
            let xi = Interval::point(x.clone());
            let within = |a: &Interval, b: &Interval, prec: u64, name: &str| {
                assert!(a.intersect(b).is_some(), "{name}({x}) inconsistent");
                let m = if a.mag() > 1u32 {
                    a.mag()
                } else {
                    Q::from(1u32)
                };
                assert!(
                    a.width() <= m * two_pow(-(prec as i64)),
                    "{name}({x}) too wide"
                );
            };
            within(&exp(&xi, 60), &exp(&xi, 250), 60, "exp");
            within(&sin(&xi, 60), &sin(&xi, 250), 60, "sin");
            within(&cos(&xi, 60), &cos(&xi, 250), 60, "cos");
            within(&atan(&xi, 60), &atan(&xi, 250), 60, "atan");
            within(&sin_pi(&x, 60), &sin_pi(&x, 250), 60, "sin_pi");
            within(&cos_pi(&x, 60), &cos_pi(&x, 250), 60, "cos_pi");
            if x > 0u32 {
                within(&ln(&xi, 60).unwrap(), &ln(&xi, 250).unwrap(), 60, "ln");
                within(
                    &sqrt(&xi, 60).unwrap(),
                    &sqrt(&xi, 250).unwrap(),
                    60,
                    "sqrt",
                );
            }
            if x.abs() <= 1u32 {
                within(
                    &asin(&xi, 60).unwrap(),
                    &asin(&xi, 250).unwrap(),
                    60,
                    "asin",
                );
            }
        }
        // near-antipodal and tiny-distance haversine meet the contract too
        let r = q("6371.0088");
        for (a, b, c, d) in [
            ("0", "0", "0", "179.9999999"),
            ("0", "0", "1e-12", "0"),
            ("89.9999", "10", "-89.9999", "-170"),
            ("45", "45", "45.0000000001", "45"),
        ] {
            let (a, b, c, d) = (q(a), q(b), q(c), q(d));
            let x = haversine(&a, &b, &c, &d, &r, 60);
            let y = haversine(&a, &b, &c, &d, &r, 200);
            assert!(x.intersect(&y).is_some());
            let m = if x.mag() > 1u32 {
                x.mag()
            } else {
                Q::from(1u32)
            };
            assert!(x.width() <= m * two_pow(-60));
        }
    }

    #[test]
    fn refine_doubles() {
        let mut seen = vec![];
        let r = refine(16, 300, |p| {
            seen.push(p);
            (p >= 100).then_some(p)
        });
        assert_eq!(r, Some(128));
        assert_eq!(seen, vec![16, 32, 64, 128]);
        let mut seen = vec![];
        let r: Option<u64> = refine(16, 100, |p| {
            seen.push(p);
            None
        });
        assert_eq!(r, None);
        assert_eq!(seen, vec![16, 32, 64, 100]);
    }

    fn arb_rat(lo: i64, hi: i64) -> impl Strategy<Value = Q> {
        (lo..hi, 1i64..1_000_000).prop_map(|(a, b)| Q::from_signeds(a, b))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Enclosures at two precisions must intersect (both contain the truth) and the finer
        /// one must be narrower; libm within 4 ulps.
        #[test]
        fn consistent_across_precisions(x in arb_rat(-700_000_000, 700_000_000)) {
            // use the double nearest to x, so libm and we see the same argument
            let xf = crate::exact::f64_nearest(&x);
            let x = q_from_f64(xf);
            let xi = Interval::point(x.clone());
            if let (Some(a), Some(b)) = (exp_checked(&xi, 48), exp_checked(&xi, 160)) {
                prop_assert!(a.intersect(&b).is_some() && b.width() < a.width());
            } else {
                prop_assert!(xf.abs() > EXP_MAX_ARG as f64);
            }
            let a = exp_checked(&xi, 48).unwrap_or_else(|| Interval::point(Q::from(0u32)));
            prop_assert!(xf.abs() > 700.0 || near_libm(&a, xf.exp()));
            let (a, b) = (sin(&xi, 48), sin(&xi, 160));
            prop_assert!(a.intersect(&b).is_some());
            prop_assert!(near_libm(&b, xf.sin()));
            prop_assert!(near_libm(&cos(&xi, 160), xf.cos()));
            prop_assert!(near_libm(&atan(&xi, 160), xf.atan()));
            let (a, b) = (cos(&xi, 48), cos(&xi, 160));
            prop_assert!(a.intersect(&b).is_some());
            let (a, b) = (atan(&xi, 48), atan(&xi, 160));
            prop_assert!(a.intersect(&b).is_some());
            if x > 0u32 {
                let (a, b) = (ln(&xi, 48).unwrap(), ln(&xi, 160).unwrap());
                prop_assert!(a.intersect(&b).is_some());
                prop_assert!(near_libm(&a, xf.ln()));
                let (a, b) = (sqrt(&xi, 48).unwrap(), sqrt(&xi, 160).unwrap());
                prop_assert!(a.intersect(&b).is_some());
            }
            let y = q_from_f64(xf / 700.0);
            if y.abs() <= 1u32 {
                let yi = Interval::point(y.clone());
                let (a, b) = (asin(&yi, 48).unwrap(), asin(&yi, 160).unwrap());
                prop_assert!(a.intersect(&b).is_some());
                prop_assert!(near_libm(&b, crate::exact::f64_nearest(&y).asin()) || (1.0 - crate::exact::f64_nearest(&y).abs()) < 1e-6);
            }
        }

        /// Interval inputs: the result contains fine enclosures at random interior points.
        #[test]
        fn interval_inclusion(a in arb_rat(-8_000_000, 8_000_000), b in arb_rat(-8_000_000, 8_000_000), t in 0u32..=16) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let x = Interval::new(lo.clone(), hi.clone());
            let p = &lo + (&hi - &lo) * Q::from_unsigneds(t, 16u32);
            let pi_ = Interval::point(p.clone());
            prop_assert!(exp(&pi_, 120).is_subset_of(&exp(&x, 40)) || t == 0 || t == 16);
            prop_assert!(exp(&x, 40).intersect(&exp(&pi_, 120)).is_some());
            prop_assert!(sin(&x, 40).intersect(&sin(&pi_, 120)).is_some());
            prop_assert!(cos(&x, 40).intersect(&cos(&pi_, 120)).is_some());
            prop_assert!(atan(&x, 40).intersect(&atan(&pi_, 120)).is_some());
            if t > 0 && t < 16 {
                prop_assert!(sin(&pi_, 120).is_subset_of(&sin(&x, 40)));
                prop_assert!(atan(&pi_, 120).is_subset_of(&atan(&x, 40)));
            }
        }

        #[test]
        fn haversine_consistent(la1 in -90i64..=90, lo1 in -180i64..=180, la2 in -90i64..=90, lo2 in -180i64..=180, f in 0i64..1000) {
            let fr = Q::from_signeds(f, 1000);
            let (a, b, c, d) = (Q::from(la1) - &fr, Q::from(lo1) + &fr, Q::from(la2), Q::from(lo2));
            let r = q("6371.0088");
            let d1 = haversine(&a, &b, &c, &d, &r, 40);
            let d2 = haversine(&a, &b, &c, &d, &r, 120);
            prop_assert!(d1.intersect(&d2).is_some());
            let m = if d1.mag() > 1u32 { d1.mag() } else { Q::from(1u32) };
            prop_assert!(d1.width() <= m * two_pow(-40));
            let (fa, fb, fc, fd) = (crate::exact::f64_nearest(&a).to_radians(), crate::exact::f64_nearest(&b).to_radians(), (la2 as f64).to_radians(), (lo2 as f64).to_radians());
            let h = ((fc - fa) / 2.0).sin().powi(2) + fa.cos() * fc.cos() * ((fd - fb) / 2.0).sin().powi(2);
            let df = 2.0 * 6371.0088 * h.sqrt().min(1.0).asin();
            let tol = q_from_f64(1e-6);
            prop_assert!(d2.widen(&tol).contains(&q_from_f64(df)), "{d2:?} vs {df}");
        }
    }

    /// Timing report (run with `cargo test --release -- --ignored timings --nocapture`).
    #[test]
    #[ignore]
    fn timings() {
        use std::time::Instant;
        fn bench(name: &str, n: u32, mut f: impl FnMut()) {
            f();
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            println!(
                "{name:32} {:8.2} µs",
                t.elapsed().as_secs_f64() * 1e6 / n as f64
            );
        }
        let x = pt("0.7391");
        let y = pt("-12.345");
        let r = q("6371.0088");
        for prec in [53u64, 64, 128, 256, 1024] {
            let n = if prec > 500 { 50 } else { 2000 };
            bench(&format!("exp(0.7391) @{prec}"), n, || {
                std::hint::black_box(exp(&x, prec));
            });
            bench(&format!("exp(-12.345) @{prec}"), n, || {
                std::hint::black_box(exp(&y, prec));
            });
            bench(&format!("ln(0.7391) @{prec}"), n, || {
                std::hint::black_box(ln(&x, prec));
            });
            bench(&format!("ln(12345/1000) @{prec}"), n, || {
                std::hint::black_box(ln(&pt("12.345"), prec));
            });
            bench(&format!("sqrt(0.7391) @{prec}"), n, || {
                std::hint::black_box(sqrt(&x, prec));
            });
            bench(&format!("sin(0.7391) @{prec}"), n, || {
                std::hint::black_box(sin(&x, prec));
            });
            bench(&format!("cos(-12.345) @{prec}"), n, || {
                std::hint::black_box(cos(&y, prec));
            });
            bench(&format!("atan(0.7391) @{prec}"), n, || {
                std::hint::black_box(atan(&x, prec));
            });
            bench(&format!("asin(0.7391) @{prec}"), n, || {
                std::hint::black_box(asin(&x, prec));
            });
            bench(&format!("haversine Rome-Paris @{prec}"), n, || {
                std::hint::black_box(haversine(
                    &q("41.9028"),
                    &q("12.4964"),
                    &q("48.8566"),
                    &q("2.3522"),
                    &r,
                    prec,
                ));
            });
        }
        bench("exp(1e6) @64", 20, || {
            std::hint::black_box(exp(&pt("1000000"), 64));
        });
    }
}
