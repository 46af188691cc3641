//! Rigorous `f64` interval arithmetic for the fast filter.
//!
//! An [`FI`] `[lo, hi]` stands for the set of reals `x` with `lo ≤ x ≤ hi`; `lo = −∞` /
//! `hi = +∞` mean "unbounded on that side". Invariants (checked by [`FI::new`]): no NaN,
//! `lo ≤ hi`, `lo < +∞`, `hi > −∞`.
//!
//! # Rounding
//!
//! IEEE-754 `+ − × ÷ √` are correctly rounded to nearest, so the exact result `x` of an
//! operation on two doubles satisfies `next_down(RN(x)) ≤ x ≤ next_up(RN(x))` — including at
//! binade boundaries, in the subnormal range (absolute error ≤ half the subnormal spacing)
//! and on overflow (`RN(x) = +∞` implies `x > f64::MAX = next_down(+∞)`). Each end is moved
//! one step outward unless the operation is *known* exact:
//!
//! * sums: Knuth's TwoSum gives the exact rounding error `e` with `a + b = s + e` whenever no
//!   intermediate overflows (checked: a non-finite `e` falls back to widening). `e = 0` ⇒
//!   exact, and the sign of `e` tells which single end needs widening;
//! * products/quotients: exact when the result is finite, above `f64::MIN_POSITIVE` in
//!   magnitude (so no subnormal rounding) and the significands are short enough
//!   (`bits(a) + bits(b) ≤ 53`, or one factor / the divisor is a power of two);
//! * zero operands: `0·y = 0` exactly, also for `y = ±∞` (end-point convention for unbounded
//!   intervals: the set `{x·y}` with `x = 0` is `{0}`), so no `0·∞ = NaN` arises.
//!
//! # NaN hygiene and infinities
//!
//! No operation produces NaN from valid inputs: `∞ − ∞` cannot occur because lower ends are
//! never `+∞` and upper ends never `−∞`; `0·∞` is defined as 0 (above); `∞/∞` is avoided by
//! the sign-case formulas of [`FI::div`]; a divisor containing 0 yields `[−∞, +∞]`;
//! [`FI::sqrt`] of an interval entirely below 0 and [`FI::ln`] of one with `hi ≤ 0` return the
//! uninformative `[0, +∞]` / `[−∞, +∞]` (callers apply them to quantities that are ≥ 0 / > 0
//! in truth, so this only happens on a caller bug and stays sound). Overflow gives `hi = +∞`
//! (and `lo ≥ f64::MAX`), underflow of exp gives `lo = 0`.
//!
//! No libm function is used: `exp`/`ln` are implemented here by Taylor/atanh polynomials in
//! `FI` arithmetic with rigorous remainders; `f64::sqrt` is the IEEE square root.

use super::{f64_down, f64_up, q_from_f64, Interval, Q};

const MANT_MASK: u64 = 0x000f_ffff_ffff_ffff;

/// The least `f64` greater than `x` (`+∞` stays `+∞`, `−∞ ↦ −f64::MAX`, `±0 ↦` the least
/// positive subnormal). Bit-level, same semantics as `f64::next_up` (Rust ≥ 1.86).
#[inline]
pub fn next_up(x: f64) -> f64 {
    let bits = x.to_bits();
    if x.is_nan() || bits == f64::INFINITY.to_bits() {
        return x;
    }
    let abs = bits & 0x7fff_ffff_ffff_ffff;
    let next = if abs == 0 {
        1
    } else if bits == abs {
        bits + 1
    } else {
        bits - 1
    };
    f64::from_bits(next)
}

/// The greatest `f64` less than `x` (`−∞` stays, `+∞ ↦ f64::MAX`).
#[inline]
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// Number of significant bits of a normal `x` (1 for powers of two); 64 for zero, subnormal
/// or non-finite (meaning "unknown / long").
#[inline]
fn sig_bits(x: f64) -> u32 {
    if !x.is_normal() {
        return 64;
    }
    let m = (x.to_bits() & MANT_MASK) | (1u64 << 52);
    53 - m.trailing_zeros()
}

/// Exact error of `s = RN(a + b)` (TwoSum), or NaN/∞ if an intermediate overflowed.
#[inline]
fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

/// A lower bound of `a + b` (the largest double ≤ a + b when TwoSum applies).
#[inline]
pub fn add_down(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_nan() {
        return f64::NEG_INFINITY;
    }
    if !s.is_finite() {
        return next_down(s);
    }
    let e = two_sum_err(a, b, s);
    if !e.is_finite() || e < 0.0 {
        next_down(s)
    } else {
        s
    }
}

/// An upper bound of `a + b`.
#[inline]
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_nan() {
        return f64::INFINITY;
    }
    if !s.is_finite() {
        return next_up(s);
    }
    let e = two_sum_err(a, b, s);
    if !e.is_finite() || e > 0.0 {
        next_up(s)
    } else {
        s
    }
}

/// `RN(a·b)` is exact: finite, normal with magnitude > MIN_POSITIVE (if the exact product
/// were below MIN_POSITIVE its rounding would be ≤ MIN_POSITIVE), and the exact product
/// has ≤ 53 significant bits.
#[inline]
fn mul_is_exact(a: f64, b: f64, p: f64) -> bool {
    if !(p.is_finite() && p.abs() > f64::MIN_POSITIVE) {
        return false;
    }
    let (ka, kb) = (sig_bits(a), sig_bits(b));
    ka == 1 || kb == 1 || ka + kb <= 53
}

/// A lower bound of `a·b` (with `0·±∞ = 0`).
#[inline]
pub fn mul_down(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if mul_is_exact(a, b, p) {
        p
    } else {
        next_down(p)
    }
}

/// An upper bound of `a·b` (with `0·±∞ = 0`).
#[inline]
pub fn mul_up(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if mul_is_exact(a, b, p) {
        p
    } else {
        next_up(p)
    }
}

/// `a/b` end-point value: `0/b = 0`, `finite/±∞ = 0` (limit), `∞/∞` never requested (NaN is
/// mapped to the vacuous bound by the callers below).
#[inline]
fn div_exact_case(a: f64, b: f64) -> Option<f64> {
    if a == 0.0 || (b.is_infinite() && a.is_finite()) {
        return Some(0.0);
    }
    None
}

/// A lower bound of `a/b`, `b ≠ 0`.
#[inline]
pub fn div_down(a: f64, b: f64) -> f64 {
    if let Some(v) = div_exact_case(a, b) {
        return v;
    }
    let q = a / b;
    if q.is_nan() {
        return f64::NEG_INFINITY;
    }
    if q.is_finite() && q.abs() > f64::MIN_POSITIVE && sig_bits(b) == 1 {
        q
    } else {
        next_down(q)
    }
}

/// An upper bound of `a/b`, `b ≠ 0`.
#[inline]
pub fn div_up(a: f64, b: f64) -> f64 {
    if let Some(v) = div_exact_case(a, b) {
        return v;
    }
    let q = a / b;
    if q.is_nan() {
        return f64::INFINITY;
    }
    if q.is_finite() && q.abs() > f64::MIN_POSITIVE && sig_bits(b) == 1 {
        q
    } else {
        next_up(q)
    }
}

/// `√x` is exactly `s = RN(√x)` when `s` has ≤ 26 bits (so `s·s` is computed exactly) and
/// `s·s == x`.
#[inline]
fn sqrt_is_exact(x: f64, s: f64) -> bool {
    x.is_normal() && sig_bits(s) <= 26 && s * s == x
}

/// A lower bound of `√x` for `x ≥ 0`.
#[inline]
pub fn sqrt_down(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let s = x.sqrt();
    if s.is_infinite() || sqrt_is_exact(x, s) {
        s
    } else {
        next_down(s).max(0.0)
    }
}

/// An upper bound of `√x` for `x ≥ 0`.
#[inline]
pub fn sqrt_up(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let s = x.sqrt();
    if s.is_infinite() || sqrt_is_exact(x, s) {
        s
    } else {
        next_up(s)
    }
}

/// `2^e` for `−1022 ≤ e ≤ 1023` (exact, normal).
#[inline]
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// A rigorous `f64` interval. See the module documentation for the invariants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FI {
    pub lo: f64,
    pub hi: f64,
}

/// Split of ln 2 (fdlibm's `ln2_hi`, 32 significant bits, so `k·LN2_HI` is exact for
/// `|k| < 2^21`) and a two-double enclosure of the remainder `ln 2 − LN2_HI`; the test
/// `ln2_split_encloses` checks `LN2_HI + LN2_LO_DOWN ≤ ln 2 ≤ LN2_HI + LN2_LO_UP` against the
/// rational enclosure of ln 2.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO_DOWN: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
const LN2_LO_UP: f64 = f64::from_bits(0x3DEA_39EF_3579_3C77);
const LN2_LO: FI = FI {
    lo: LN2_LO_DOWN,
    hi: LN2_LO_UP,
};

#[allow(clippy::should_implement_trait)] // method names requested by callers; ops traits below
impl FI {
    /// `[−∞, +∞]`.
    pub const ENTIRE: FI = FI {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };
    /// `[0, 0]`.
    pub const ZERO: FI = FI { lo: 0.0, hi: 0.0 };
    /// `[1, 1]`.
    pub const ONE: FI = FI { lo: 1.0, hi: 1.0 };

    /// `[lo, hi]`; panics on NaN, `lo > hi`, `lo = +∞` or `hi = −∞`.
    pub fn new(lo: f64, hi: f64) -> FI {
        assert!(
            !lo.is_nan()
                && !hi.is_nan()
                && lo <= hi
                && lo != f64::INFINITY
                && hi != f64::NEG_INFINITY,
            "FI::new: invalid interval [{lo}, {hi}]"
        );
        FI { lo, hi }
    }

    /// The exact double `x` as `[x, x]`. Panics on NaN; `+∞` becomes `[f64::MAX, +∞]` and `−∞`
    /// becomes `[−∞, −f64::MAX]` ("beyond the finite range").
    pub fn point(x: f64) -> FI {
        assert!(!x.is_nan(), "FI::point(NaN)");
        if x == f64::INFINITY {
            FI {
                lo: f64::MAX,
                hi: x,
            }
        } else if x == f64::NEG_INFINITY {
            FI {
                lo: x,
                hi: -f64::MAX,
            }
        } else {
            FI { lo: x, hi: x }
        }
    }

    /// The tightest `f64` interval containing the rational `q` (`[f64_down(q), f64_up(q)]`).
    pub fn from_q(q: &Q) -> FI {
        FI {
            lo: f64_down(q),
            hi: f64_up(q),
        }
    }

    /// Hull of the `f64` bounds of a rational interval.
    pub fn from_interval(x: &Interval) -> FI {
        let (lo, hi) = x.to_f64_bounds();
        FI { lo, hi }
    }

    /// The rational interval `[lo, hi]`, `None` if an end is infinite.
    pub fn to_interval(&self) -> Option<Interval> {
        if self.lo.is_finite() && self.hi.is_finite() {
            Some(Interval {
                lo: q_from_f64(self.lo),
                hi: q_from_f64(self.hi),
            })
        } else {
            None
        }
    }

    /// `lo ≤ x ≤ hi`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// `lo ≤ q ≤ hi`, compared exactly.
    pub fn contains_q(&self, q: &Q) -> bool {
        (self.lo == f64::NEG_INFINITY || q_from_f64(self.lo) <= *q)
            && (self.hi == f64::INFINITY || *q <= q_from_f64(self.hi))
    }

    /// Upper bound of `hi − lo`.
    pub fn width(&self) -> f64 {
        add_up(self.hi, -self.lo)
    }

    pub fn neg(self) -> FI {
        FI {
            lo: -self.hi,
            hi: -self.lo,
        }
    }

    pub fn abs(self) -> FI {
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            FI {
                lo: 0.0,
                hi: self.hi.max(-self.lo),
            }
        }
    }

    pub fn add(self, o: FI) -> FI {
        FI {
            lo: add_down(self.lo, o.lo),
            hi: add_up(self.hi, o.hi),
        }
    }

    pub fn sub(self, o: FI) -> FI {
        FI {
            lo: add_down(self.lo, -o.hi),
            hi: add_up(self.hi, -o.lo),
        }
    }

    /// Product by the classical sign-case table (bilinear ⇒ extremes at corners; the signs
    /// of the ends tell which corners), each end rounded outward; only the straddle×straddle
    /// case needs four products.
    pub fn mul(self, o: FI) -> FI {
        let (a1, a2, b1, b2) = (self.lo, self.hi, o.lo, o.hi);
        if a1 >= 0.0 {
            if b1 >= 0.0 {
                FI {
                    lo: mul_down(a1, b1),
                    hi: mul_up(a2, b2),
                }
            } else if b2 <= 0.0 {
                FI {
                    lo: mul_down(a2, b1),
                    hi: mul_up(a1, b2),
                }
            } else {
                FI {
                    lo: mul_down(a2, b1),
                    hi: mul_up(a2, b2),
                }
            }
        } else if a2 <= 0.0 {
            if b1 >= 0.0 {
                FI {
                    lo: mul_down(a1, b2),
                    hi: mul_up(a2, b1),
                }
            } else if b2 <= 0.0 {
                FI {
                    lo: mul_down(a2, b2),
                    hi: mul_up(a1, b1),
                }
            } else {
                FI {
                    lo: mul_down(a1, b2),
                    hi: mul_up(a1, b1),
                }
            }
        } else if b1 >= 0.0 {
            FI {
                lo: mul_down(a1, b2),
                hi: mul_up(a2, b2),
            }
        } else if b2 <= 0.0 {
            FI {
                lo: mul_down(a2, b1),
                hi: mul_up(a1, b1),
            }
        } else {
            FI {
                lo: mul_down(a1, b2).min(mul_down(a2, b1)),
                hi: mul_up(a1, b1).max(mul_up(a2, b2)),
            }
        }
    }

    /// `self · c` for an exact double `c`.
    pub fn mul_f64(self, c: f64) -> FI {
        self.mul(FI::point(c))
    }

    /// `{x/y}`; `[−∞, +∞]` when `0 ∈ o`. For `y > 0`: `x/y` increases in `x`; for fixed
    /// `x ≥ 0` it decreases in `y`, for `x < 0` it increases — so the lower end is
    /// `lo/hi_y` or `lo/lo_y` by the sign of `lo`, the upper end `hi/lo_y` or `hi/hi_y`.
    /// (This never forms `∞/∞`: an infinite numerator end is only divided by the finite
    /// `lo_y`.) `y < 0` is reduced to `−(x/(−y))`.
    pub fn div(self, o: FI) -> FI {
        if o.hi < 0.0 {
            return self.div(o.neg()).neg();
        }
        if o.lo <= 0.0 {
            return FI::ENTIRE;
        }
        let lo = if self.lo >= 0.0 {
            div_down(self.lo, o.hi)
        } else {
            div_down(self.lo, o.lo)
        };
        let hi = if self.hi >= 0.0 {
            div_up(self.hi, o.lo)
        } else {
            div_up(self.hi, o.hi)
        };
        FI { lo, hi }
    }

    /// `{x²}`, sign-aware.
    pub fn sqr(self) -> FI {
        let a = self.abs();
        FI {
            lo: mul_down(a.lo, a.lo),
            hi: mul_up(a.hi, a.hi),
        }
    }

    /// `{√x : x ∈ self, x ≥ 0}` (lower end clamped at 0). If `hi < 0` (no non-negative
    /// point: a caller bug) returns the uninformative `[0, +∞]`.
    pub fn sqrt(self) -> FI {
        if self.hi < 0.0 {
            return FI {
                lo: 0.0,
                hi: f64::INFINITY,
            };
        }
        FI {
            lo: sqrt_down(self.lo.max(0.0)),
            hi: sqrt_up(self.hi),
        }
    }

    /// Hull.
    pub fn hull(self, o: FI) -> FI {
        FI {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    /// `{exp x}`: exp is increasing, so `[lower(exp(lo)), upper(exp(hi))]`; see
    /// `exp_point` for the per-end algorithm. `lo ≥ 0` always; `hi = +∞` on overflow.
    pub fn exp(self) -> FI {
        if self.lo == self.hi {
            return exp_point(self.lo);
        }
        FI {
            lo: exp_point(self.lo).lo,
            hi: exp_point(self.hi).hi,
        }
    }

    /// `{ln x : x ∈ self, x > 0}`. Requires `lo > 0` for a finite lower end; with `lo ≤ 0 <
    /// hi` the lower end is `−∞`; with `hi ≤ 0` (no point in the domain) `[−∞, +∞]`.
    pub fn ln(self) -> FI {
        if self.hi <= 0.0 {
            return FI::ENTIRE;
        }
        if self.lo == self.hi {
            return ln_point(self.lo);
        }
        let lo = if self.lo > 0.0 {
            ln_point(self.lo).lo
        } else {
            f64::NEG_INFINITY
        };
        FI {
            lo,
            hi: ln_point(self.hi).hi,
        }
    }
}

impl std::ops::Add for FI {
    type Output = FI;
    fn add(self, o: FI) -> FI {
        FI::add(self, o)
    }
}
impl std::ops::Sub for FI {
    type Output = FI;
    fn sub(self, o: FI) -> FI {
        FI::sub(self, o)
    }
}
impl std::ops::Mul for FI {
    type Output = FI;
    fn mul(self, o: FI) -> FI {
        FI::mul(self, o)
    }
}
/// `[−∞, +∞]` when the divisor contains 0 (see [`FI::div`]).
impl std::ops::Div for FI {
    type Output = FI;
    fn div(self, o: FI) -> FI {
        FI::div(self, o)
    }
}
impl std::ops::Neg for FI {
    type Output = FI;
    fn neg(self) -> FI {
        FI::neg(self)
    }
}

/// Degree of the exp polynomial and number of atanh terms (see `exp_poly`, `ln_point`).
const EXP_N: usize = 6;
const LN_N: usize = 5;
/// Table granularity: exp reduces by multiples of ln2/64, ln by the nearest j/64.
const TBL: i32 = 64;

/// Rigorous tables, computed once from the exact rational enclosures of
/// [`functions`](super::functions) and rounded outward to doubles, so every entry is an
/// enclosure by construction:
/// `inv_fact\[j\] ∋ 1/j!`, `inv_odd\[j\] ∋ 1/(2j+1)`, `exp2\[j\] ∋ 2^(j/64)` (`j < 64`),
/// `ln_c[j − 48] ∋ ln(j/64)` (`48 ≤ j ≤ 96`; `ln(64/64) = 0` exactly).
struct Tables {
    inv_fact: [FI; EXP_N + 1],
    inv_odd: [FI; LN_N],
    exp2: [FI; TBL as usize],
    ln_c: [FI; 49],
}

fn tables() -> &'static Tables {
    use super::functions;
    static T: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut f = Q::from(1u32);
        let inv_fact = std::array::from_fn(|j| {
            if j > 0 {
                f *= Q::from(j as u64);
            }
            FI::from_q(&(Q::from(1u32) / &f))
        });
        let inv_odd =
            std::array::from_fn(|j| FI::from_q(&Q::from_unsigneds(1u64, 2 * j as u64 + 1)));
        let l2 = functions::ln2(120);
        let exp2 = std::array::from_fn(|j| {
            let arg = l2.scale(&Q::from_unsigneds(j as u64, TBL as u64));
            FI::from_interval(&functions::exp(&arg, 100))
        });
        let ln_c = std::array::from_fn(|i| {
            let c = Q::from_unsigneds(48 + i as u64, TBL as u64);
            FI::from_interval(&functions::ln(&Interval::point(c), 100).expect("c > 0"))
        });
        Tables {
            inv_fact,
            inv_odd,
            exp2,
            ln_c,
        }
    })
}

/// `{a·r}` for `a > 0` (checked by the caller) and any `r`: two products (the sign of `r`'s
/// ends decides which end of `a` pairs with them).
#[inline]
fn mul_pos(a: FI, r: FI) -> FI {
    debug_assert!(a.lo > 0.0);
    FI {
        lo: if r.lo >= 0.0 {
            mul_down(a.lo, r.lo)
        } else {
            mul_down(a.hi, r.lo)
        },
        hi: if r.hi >= 0.0 {
            mul_up(a.hi, r.hi)
        } else {
            mul_up(a.lo, r.hi)
        },
    }
}

/// Cheap outward steps for *finite* doubles inside the polynomial kernels: always one step
/// (never an exactness test), which is sound for any correctly rounded result (see the
/// module docs). `±0 ↦ ±` the least subnormal; `f64::MAX ↦ ∞` outward; `±∞` stay.
#[inline(always)]
fn up1(x: f64) -> f64 {
    let b = x.to_bits();
    if x > 0.0 {
        if x == f64::INFINITY {
            x
        } else {
            f64::from_bits(b + 1)
        }
    } else if x < 0.0 {
        f64::from_bits(b - 1)
    } else {
        f64::from_bits(1)
    }
}
#[inline(always)]
fn down1(x: f64) -> f64 {
    -up1(-x)
}
/// `{a·r + c}` for finite `a > 0`, finite `r`, `c`: `mul_pos` and `add` with plain one-step
/// widening (used in the Horner loops; each end is rounded outward once per operation).
#[inline(always)]
fn fma_pos_w(a: FI, r: FI, c: FI) -> FI {
    let lo = if r.lo >= 0.0 {
        a.lo * r.lo
    } else {
        a.hi * r.lo
    };
    let hi = if r.hi >= 0.0 {
        a.hi * r.hi
    } else {
        a.lo * r.hi
    };
    FI {
        lo: down1(down1(lo) + c.lo),
        hi: up1(up1(hi) + c.hi),
    }
}

/// Enclosure of `e^r` for `r ∈ R`, `|R| ≤ 1/2`: Horner form `Σ_{j≤N} c_j r^j` with
/// `c_j ∋ 1/j!` evaluated in `FI` (inclusion isotonicity: the nested interval expression
/// contains the polynomial's value at every `r ∈ R`), plus the Lagrange remainder
/// `|e^r − P_N(r)| ≤ e^ρ ρ^{N+1}/(N+1)! ≤ 2ρ^{N+1}/(N+1)!` (ρ = max|R| ≤ 1/2, e^{1/2} < 2),
/// bounded above with upward rounding. `mul_pos` is used only after checking that the
/// running enclosure is positive, else the general product.
fn exp_poly(r: FI) -> FI {
    let t = tables();
    let rho = r.lo.abs().max(r.hi.abs());
    assert!(rho <= 0.5, "exp_poly: reduced argument too large");
    let mut acc = t.inv_fact[EXP_N];
    for j in (0..EXP_N).rev() {
        acc = if acc.lo > 0.0 {
            fma_pos_w(acc, r, t.inv_fact[j])
        } else {
            acc.mul(r).add(t.inv_fact[j])
        };
    }
    // E = 2·ρ^7/7!, rounded up.
    const _: () = assert!(EXP_N == 6);
    let r2 = mul_up(rho, rho);
    let r4 = mul_up(r2, r2);
    let r7 = mul_up(mul_up(r4, r2), rho);
    let e = mul_up(div_up(r7, 5040.0), 2.0);
    FI {
        lo: add_down(acc.lo, -e),
        hi: add_up(acc.hi, e),
    }
}

/// Multiply an enclosure of a positive quantity by `2^k` (|k| ≤ 1100) in at most two steps
/// (exact while the result stays normal; widened by one subnormal step otherwise; overflow
/// gives `+∞` / `f64::MAX` per `mul_up` / `mul_down`).
fn scale_pow2(x: FI, k: i32) -> FI {
    let mut x = x;
    let mut k = k;
    while k != 0 {
        let step = k.clamp(-1022, 1023);
        let f = pow2(step); // > 0, so ends keep their order
        x = FI {
            lo: mul_down(x.lo, f),
            hi: mul_up(x.hi, f),
        };
        k -= step;
    }
    x
}

/// `LN2_HI/64`, exact (power-of-two scaling of a normal double), 32 significant bits.
const LN2_HI_64: f64 = LN2_HI / 64.0;
/// `[LN2_LO_DOWN/64, LN2_LO_UP/64]`, exact scalings, so it encloses `(ln 2 − LN2_HI)/64`.
const LN2_LO_64: FI = FI {
    lo: LN2_LO_DOWN / 64.0,
    hi: LN2_LO_UP / 64.0,
};

/// Enclosure of `e^x` for one double `x` (used for each end of [`FI::exp`]).
///
/// * `x > 709.79 > ln(f64::MAX)`: `[f64::MAX, +∞]`;
/// * `x < −745.2`: `e^x < e^{−745.2} < 2^{−1074}`, so `[0, 2^{−1074}]`;
/// * otherwise `K = round(64·x·log2 e)` (|K| < 2^17; any integer is sound), `K = 64k + j`
///   with `0 ≤ j < 64`; `r = (x − K·LN2_HI/64) − K·[LN2_LO/64]` in `FI` (`K·LN2_HI/64` is
///   exact: ≤ 17 + 32 bits), so `R ∋ x − K·ln2/64` and `|R| ≤ ln2/128 + tiny`;
///   `e^x = 2^k · 2^{j/64} · e^r` with `2^{j/64}` from the table, `e^r` from [`exp_poly`],
///   and an exact-or-widened power-of-two scaling.
fn exp_point(x: f64) -> FI {
    if x == f64::NEG_INFINITY {
        return FI::ZERO;
    }
    if x == f64::INFINITY || x > 709.79 {
        return FI {
            lo: f64::MAX,
            hi: f64::INFINITY,
        };
    }
    if x < -745.2 {
        return FI {
            lo: 0.0,
            hi: f64::from_bits(1),
        };
    }
    if x == 0.0 {
        return FI::ONE;
    }
    let y = x * (TBL as f64 * std::f64::consts::LOG2_E);
    let kk = if y >= 0.0 {
        (y + 0.5) as i32
    } else {
        (y - 0.5) as i32
    };
    let (k, j) = (kk.div_euclid(TBL), kk.rem_euclid(TBL) as usize);
    let kf = kk as f64;
    let t = FI::point(x).sub(FI::point(mul_exact_checked(kf, LN2_HI_64)));
    let r = t.sub(FI::point(kf).mul(LN2_LO_64));
    let p = exp_poly(r);
    let p = mul_pos(tables().exp2[j], p);
    let out = scale_pow2(p, k);
    FI {
        lo: out.lo.max(0.0),
        hi: out.hi,
    }
}

/// `a·b` where the caller knows the product is exact (short significands); asserted.
#[inline]
fn mul_exact_checked(a: f64, b: f64) -> f64 {
    let p = a * b;
    debug_assert!(p == 0.0 || mul_is_exact(a, b, p));
    if p != 0.0 && !mul_is_exact(a, b, p) {
        // Cannot happen for |a| < 2^17 integer, b with 32 bits; keep a hard check anyway.
        panic!("mul_exact_checked: inexact product {a}·{b}");
    }
    p
}

/// Enclosure of `ln x` for one double `x > 0` (used for each end of [`FI::ln`]).
///
/// `x = m·2^e` exactly (subnormals pre-scaled by `2^54`), `m ∈ [1, 2)`, halved (exactly) if
/// `m ≥ 1.5` so `m ∈ [0.75, 1.5)`; `c = j/64` with `j = round(64m) ∈ [48, 96]`, so
/// `|m − c| ≤ 1/128` and `m − c` is exact (Sterbenz: `c/2 ≤ m ≤ 2c`);
/// `ln m = ln c + 2·atanh(z)`, `z = (m − c)/(m + c)` in `FI` (`|z| ≤ 0.0053`, `y = z² <
/// 2.8·10^-5`); `atanh z = z·Σ_{i≥0} y^i/(2i+1)`: the first `N` terms by Horner in `FI`, the
/// tail `Σ_{i≥N} y^i/(2i+1) ≤ y^N/((2N+1)(1−y))` bounded above;
/// `ln x = e·LN2_HI + e·[LN2_LO] + [ln c] + 2·atanh z` (`e·LN2_HI` exact: ≤ 11 + 32 bits).
/// Near `x = 1`, `c = 1` and `ln c = 0` exactly, so the result keeps relative accuracy.
fn ln_point(x: f64) -> FI {
    debug_assert!(x > 0.0);
    if x == f64::INFINITY {
        return FI {
            lo: f64::MAX,
            hi: f64::INFINITY,
        };
    }
    if x == 1.0 {
        return FI::ZERO;
    }
    let (mut xs, mut e) = (x, 0i32);
    if !x.is_normal() {
        xs = x * pow2(54); // exact: subnormal times 2^54 is normal
        e = -54;
    }
    let bits = xs.to_bits();
    e += ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mut m = f64::from_bits((bits & MANT_MASK) | (1023u64 << 52));
    if m >= 1.5 {
        m *= 0.5; // exact
        e += 1;
    }
    let j = (m * TBL as f64 + 0.5) as i32; // 48..=96
    let c = j as f64 / TBL as f64; // exact
    let t = tables();
    let mi = FI::point(m);
    let ci = FI::point(c);
    let z = mi.sub(ci).div(mi.add(ci));
    let y = z.sqr();
    let mut acc = t.inv_odd[LN_N - 1];
    for i in (0..LN_N - 1).rev() {
        acc = fma_pos_w(acc, y, t.inv_odd[i]); // acc ≥ 1/(2N−1) > 0, y ≥ 0
    }
    // tail ≤ y^N / ((2N+1)(1 − y))
    let yh = y.hi;
    let mut p = 1.0f64;
    for _ in 0..LN_N {
        p = mul_up(p, yh);
    }
    let tail = div_up(div_up(p, (2 * LN_N + 1) as f64), add_down(1.0, -yh));
    let s = FI {
        lo: acc.lo,
        hi: add_up(acc.hi, tail),
    };
    let atanh2 = z.mul(s).mul_f64(2.0);
    let lnm = t.ln_c[(j - 48) as usize].add(atanh2);
    if e == 0 {
        return lnm;
    }
    let ef = e as f64;
    FI::point(ef)
        .mul(FI::point(LN2_HI))
        .add(FI::point(ef).mul(LN2_LO))
        .add(lnm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{functions, N};
    use proptest::prelude::*;

    fn qf(x: f64) -> Q {
        q_from_f64(x)
    }

    #[test]
    fn ln2_split_encloses() {
        let l = functions::ln2(200);
        let hi = qf(LN2_HI);
        assert!(
            hi.clone() + qf(LN2_LO_DOWN) <= l.lo,
            "LN2_LO_DOWN too large"
        );
        assert!(l.hi <= hi.clone() + qf(LN2_LO_UP), "LN2_LO_UP too small");
        assert_eq!(next_up(LN2_LO_DOWN), LN2_LO_UP);
        assert_eq!(sig_bits(LN2_HI), 32);
    }

    #[test]
    fn tables_enclose() {
        let t = tables();
        let l2 = functions::ln2(300);
        for j in 0..TBL as usize {
            let e = functions::exp(&l2.scale(&Q::from_unsigneds(j as u64, 64u64)), 200);
            assert!(
                t.exp2[j].contains_q(&e.lo) && t.exp2[j].contains_q(&e.hi),
                "2^({j}/64)"
            );
            assert!(t.exp2[j].hi <= next_up(t.exp2[j].lo));
        }
        for (i, c) in t.ln_c.iter().enumerate() {
            let l = functions::ln(
                &Interval::point(Q::from_unsigneds(48 + i as u64, 64u64)),
                200,
            )
            .unwrap();
            assert!(
                c.contains_q(&l.lo) && c.contains_q(&l.hi),
                "ln({}/64)",
                48 + i
            );
        }
        assert_eq!(t.ln_c[16], FI::ZERO);
        assert_eq!(t.inv_fact[0], FI::ONE);
        assert_eq!(t.inv_fact[2], FI::point(0.5));
        assert!(t.inv_odd[1].contains_q(&Q::from_unsigneds(1u32, 3u32)));
    }

    #[test]
    fn next_up_down() {
        assert_eq!(next_up(1.0), 1.0 + f64::EPSILON);
        assert_eq!(next_down(1.0), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(next_up(0.0), f64::from_bits(1));
        assert_eq!(next_up(-0.0), f64::from_bits(1));
        assert_eq!(next_down(0.0), -f64::from_bits(1));
        assert_eq!(next_up(f64::MAX), f64::INFINITY);
        assert_eq!(next_down(f64::INFINITY), f64::MAX);
        assert_eq!(next_up(f64::NEG_INFINITY), -f64::MAX);
        assert_eq!(next_up(f64::INFINITY), f64::INFINITY);
        assert_eq!(next_down(f64::NEG_INFINITY), f64::NEG_INFINITY);
        for x in [1.5f64, -3.25e-310, 7e300, -1.0, f64::MIN_POSITIVE] {
            assert_eq!(
                next_up(x),
                f64::from_bits(if x > 0.0 {
                    x.to_bits() + 1
                } else {
                    x.to_bits() - 1
                })
            );
            assert_eq!(next_down(next_up(x)), x);
        }
    }

    #[test]
    fn exact_cases_are_tight() {
        let a = FI::point(3.0);
        let b = FI::point(0.5);
        assert_eq!(a.add(b), FI::point(3.5));
        assert_eq!(a.mul(b), FI::point(1.5));
        assert_eq!(a.div(FI::point(4.0)), FI::point(0.75));
        assert_eq!(FI::point(9.0).sqrt(), FI::point(3.0));
        assert_eq!(a.add(FI::ZERO), a);
        assert_eq!(
            FI::point(1234567.0).mul(FI::point(7654321.0)),
            FI::point(1234567.0 * 7654321.0)
        );
        // 0.1 + 0.2 is inexact: one side widened only
        let s = FI::point(0.1).add(FI::point(0.2));
        assert!(s.contains_q(&(qf(0.1) + qf(0.2))));
        assert!(s.hi == next_up(s.lo) || s.lo == s.hi);
    }

    #[test]
    fn infinities_never_give_nan() {
        let pos = FI::new(0.0, f64::INFINITY);
        let unit = FI::new(0.0, 1.0);
        let all = FI::ENTIRE;
        let big = FI::new(1.0, f64::INFINITY);
        let neg = FI::new(f64::NEG_INFINITY, -1.0);
        let cases = [
            pos.mul(unit),
            all.mul(unit),
            all.mul(FI::ZERO),
            big.div(big),
            neg.div(big),
            big.div(neg),
            all.div(FI::new(1.0, 2.0)),
            FI::ONE.div(unit),
            pos.add(neg),
            pos.sub(big),
            big.sqr(),
            neg.sqr(),
            all.sqr(),
            big.sqrt(),
            all.sqrt(),
            big.exp(),
            neg.exp(),
            all.exp(),
            big.ln(),
            pos.ln(),
            all.ln(),
            FI::point(f64::INFINITY).mul(FI::point(-2.0)),
            FI::point(f64::MAX).add(FI::point(f64::MAX)),
            FI::point(f64::MAX).mul(FI::point(3.0)),
        ];
        for (i, c) in cases.iter().enumerate() {
            assert!(
                !c.lo.is_nan() && !c.hi.is_nan() && c.lo <= c.hi,
                "case {i}: {c:?}"
            );
            assert!(
                c.lo != f64::INFINITY && c.hi != f64::NEG_INFINITY,
                "case {i}: {c:?}"
            );
        }
        assert_eq!(FI::ONE.div(unit), FI::ENTIRE);
        assert_eq!(pos.mul(unit), FI::new(0.0, f64::INFINITY));
        assert_eq!(big.div(big).lo, 0.0);
        assert_eq!(big.div(big).hi, f64::INFINITY);
        let o = FI::point(f64::MAX).add(FI::point(f64::MAX));
        assert_eq!((o.lo, o.hi), (f64::MAX, f64::INFINITY));
    }

    #[test]
    fn exp_special_ranges() {
        assert_eq!(FI::ZERO.exp(), FI::ONE);
        let o = FI::point(710.0).exp();
        assert_eq!((o.lo, o.hi), (f64::MAX, f64::INFINITY));
        let u = FI::point(-800.0).exp();
        assert!(u.lo == 0.0 && u.hi > 0.0 && u.hi < 1e-320);
        for x in [
            709.78, 709.0, -708.4, -730.5, -744.0, -745.1, 1e-300, -1e-300, 5e-324, 0.34657,
            -0.34658, 1.0, 88.7,
        ] {
            let e = FI::point(x).exp();
            let r = functions::exp(&Interval::point(qf(x)), 128);
            assert!(
                e.contains_q(&r.lo) && e.contains_q(&r.hi),
                "exp({x}) = {e:?}"
            );
            // tight: a few ulps in the normal range
            if x > -708.0 && x < 709.7 {
                assert!(
                    e.hi <= e.lo * (1.0 + 8.0 * f64::EPSILON),
                    "exp({x}) too wide: {e:?}"
                );
            }
        }
    }

    #[test]
    fn ln_values() {
        for x in [
            1.0f64,
            2.0,
            0.5,
            10.0,
            1e300,
            1e-300,
            5e-324,
            f64::MAX,
            1.0000000000000002,
            0.9999999999999999,
            std::f64::consts::SQRT_2,
            std::f64::consts::FRAC_1_SQRT_2,
        ] {
            let l = FI::point(x).ln();
            let r = functions::ln(&Interval::point(qf(x)), 128).unwrap();
            assert!(
                l.contains_q(&r.lo) && l.contains_q(&r.hi),
                "ln({x}) = {l:?} vs {r}"
            );
            assert!(
                l.width() <= 4e-15 * l.hi.abs().max(1e-300) || l.width() < 1e-300,
                "ln({x}) too wide: {l:?}"
            );
        }
        assert_eq!(FI::new(0.0, 1.0).ln().lo, f64::NEG_INFINITY);
        assert_eq!(FI::new(-1.0, 0.0).ln(), FI::ENTIRE);
    }

    fn finite_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>().prop_filter("finite", |x| x.is_finite()),
            -1e6f64..1e6,
            (-1000i64..1000).prop_map(|k| k as f64),
            (-1e-300f64..1e-300),
            Just(0.0),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
        ]
    }

    fn arb_fi() -> impl Strategy<Value = (FI, f64)> {
        (finite_f64(), finite_f64(), 0u32..=8).prop_map(|(a, b, t)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            // a double inside the interval
            let p = match t {
                0 => lo,
                8 => hi,
                _ => {
                    let m = lo / 2.0 + hi / 2.0;
                    m.clamp(lo, hi)
                }
            };
            (FI::new(lo, hi), p)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn point_ops_contain_exact(a in finite_f64(), b in finite_f64()) {
            let (x, y) = (FI::point(a), FI::point(b));
            let (qa, qb) = (qf(a), qf(b));
            prop_assert!(x.add(y).contains_q(&(&qa + &qb)));
            prop_assert!(x.sub(y).contains_q(&(&qa - &qb)));
            prop_assert!(x.mul(y).contains_q(&(&qa * &qb)));
            prop_assert!(x.mul_f64(b).contains_q(&(&qa * &qb)));
            prop_assert!(x.sqr().contains_q(&(&qa * &qa)));
            prop_assert!(x.neg().contains_q(&-&qa));
            if b != 0.0 {
                prop_assert!(x.div(y).contains_q(&(&qa / &qb)));
            } else {
                prop_assert_eq!(x.div(y), FI::ENTIRE);
            }
            let s = x.abs().sqrt();
            let qa_abs = if a < 0.0 { -&qa } else { qa.clone() };
            let lo = qf(s.lo);
            prop_assert!(&lo * &lo <= qa_abs);
            if s.hi.is_finite() {
                let hi = qf(s.hi);
                prop_assert!(qa_abs <= &hi * &hi);
            }
            // at most 2 ulps wide when finite and normal
            let m = x.mul(y);
            if m.lo.is_normal() && m.hi.is_normal() && m.lo.abs() > 1e-290 {
                prop_assert!(m.hi <= next_up(next_up(m.lo)));
            }
        }

        #[test]
        fn interval_ops_contain_pointwise((x, a) in arb_fi(), (y, b) in arb_fi()) {
            let (qa, qb) = (qf(a), qf(b));
            prop_assert!(x.add(y).contains_q(&(&qa + &qb)));
            prop_assert!(x.sub(y).contains_q(&(&qa - &qb)));
            prop_assert!(x.mul(y).contains_q(&(&qa * &qb)));
            prop_assert!(x.sqr().contains_q(&(&qa * &qa)));
            let qabs = if a < 0.0 { -&qa } else { qa.clone() };
            prop_assert!(x.abs().contains_q(&qabs));
            if b != 0.0 {
                prop_assert!(x.div(y).contains_q(&(&qa / &qb)));
            }
            // The sign-case table picks the extreme corners: each end is the directed
            // product at a corner where the exact product is least (greatest).
            let corners: Vec<(f64, f64, Q)> = [(x.lo, y.lo), (x.lo, y.hi), (x.hi, y.lo), (x.hi, y.hi)]
                .map(|(a, b)| (a, b, qf(a) * qf(b)))
                .into();
            let least = corners.iter().map(|c| &c.2).min().unwrap();
            let most = corners.iter().map(|c| &c.2).max().unwrap();
            let p = x.mul(y);
            prop_assert!(corners.iter().any(|(a, b, e)| e == least && mul_down(*a, *b) == p.lo), "{:?}", p);
            prop_assert!(corners.iter().any(|(a, b, e)| e == most && mul_up(*a, *b) == p.hi), "{:?}", p);
            let (m, big) = (if x.lo > 0.0 { x.lo } else if x.hi < 0.0 { -x.hi } else { 0.0 }, x.lo.abs().max(x.hi.abs()));
            prop_assert_eq!(x.sqr(), FI { lo: mul_down(m, m), hi: mul_up(big, big) });
            prop_assert_eq!(x.abs(), FI { lo: m, hi: big });
            for r in [x.add(y), x.sub(y), x.mul(y), x.div(y), x.sqr(), x.sqrt(), x.exp(), x.ln()] {
                prop_assert!(!r.lo.is_nan() && !r.hi.is_nan() && r.lo <= r.hi);
            }
        }

        #[test]
        fn from_q_is_tight(n in -1_000_000_000i64..1_000_000_000, d in 1i64..1_000_000) {
            let q = Q::from_signeds(n, d);
            let f = FI::from_q(&q);
            prop_assert!(f.contains_q(&q));
            prop_assert!(f.hi == f.lo || f.hi == next_up(f.lo));
        }

        #[test]
        fn exp_contains_rational_enclosure(x in -700.0f64..700.0) {
            let e = FI::point(x).exp();
            let r = functions::exp(&Interval::point(qf(x)), 128);
            prop_assert!(e.contains_q(&r.lo) && e.contains_q(&r.hi), "exp({}) = {:?}", x, e);
            // The reduction x − k·ln 2 carries |k|·ulp(ln 2) of uncertainty: the width grows
            // linearly with |x| (≈ 1e-13 relative at |x| = 700), fine for a filter.
            prop_assert!(e.hi <= e.lo * (1.0 + (8.0 + 2.0 * x.abs()) * f64::EPSILON), "exp({}) = {:?}", x, e);
        }

        #[test]
        fn exp_interval_contains_points(a in -740.0f64..705.0, b in -740.0f64..705.0) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let e = FI::new(lo, hi).exp();
            let m = lo / 2.0 + hi / 2.0;
            for t in [lo, hi, m] {
                let r = functions::exp(&Interval::point(qf(t)), 80);
                prop_assert!(e.contains_q(&r.lo) && e.contains_q(&r.hi));
            }
        }

        #[test]
        fn ln_contains_rational_enclosure(bits in 1u64..0x7FF0_0000_0000_0000u64) {
            let x = f64::from_bits(bits);
            let l = FI::point(x).ln();
            let r = functions::ln(&Interval::point(qf(x)), 100).unwrap();
            prop_assert!(l.contains_q(&r.lo) && l.contains_q(&r.hi), "ln({}) = {:?}", x, l);
        }
    }

    /// A double with at most `bits` significant bits: ±m·2^k, m < 2^bits.
    fn short(bits: u32) -> impl Strategy<Value = f64> {
        (1u64..(1u64 << bits), -60i32..60, any::<bool>())
            .prop_map(|(m, k, neg)| if neg { -(m as f64) } else { m as f64 } * 2f64.powi(k))
    }

    /// The widest a directed operation may be: its end is the tightest double bound
    /// `t` of the exact value or, when the operation cannot tell the result is exact,
    /// one step beyond `t`.
    fn within_one_step(down: f64, up: f64, exact: &Q) -> Result<(), TestCaseError> {
        let (t_lo, t_hi) = (f64_down(exact), f64_up(exact));
        prop_assert!(down <= t_lo && down >= next_down(t_lo), "{down} vs {t_lo}");
        prop_assert!(up >= t_hi && up <= next_up(t_hi), "{up} vs {t_hi}");
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Sums are the tightest bounds (TwoSum tells the sign of the error); products,
        /// quotients and roots are at most one step wider, and exactly the value when it
        /// is known exact: short significands, a power-of-two divisor, a perfect square.
        #[test]
        fn directed_operations_are_tight(a in finite_f64(), b in finite_f64(), sa in short(27), sb in short(26)) {
            let (qa, qb) = (qf(a), qf(b));
            let lim = qf(f64::MAX / 4.0);
            let small = |q: &Q| q.abs() <= lim;
            let sum = &qa + &qb;
            if small(&sum) {
                prop_assert_eq!((add_down(a, b), add_up(a, b)), (f64_down(&sum), f64_up(&sum)));
            }
            let normal = |q: &Q| small(q) && q.abs() > qf(f64::MIN_POSITIVE);
            let prod = &qa * &qb;
            if normal(&prod) {
                within_one_step(mul_down(a, b), mul_up(a, b), &prod)?;
            }
            if b != 0.0 {
                let quot = &qa / &qb;
                if normal(&quot) {
                    within_one_step(div_down(a, b), div_up(a, b), &quot)?;
                }
            }
            if a > 0.0 && a.is_normal() {
                let (lo, hi) = (sqrt_down(a), sqrt_up(a));
                prop_assert!(qf(lo) * qf(lo) <= qa && qa <= qf(hi) * qf(hi));
                prop_assert!(hi <= next_up(next_up(lo)));
            }
            // Known exact: 27 + 26 ≤ 53 significant bits, powers of two, perfect squares.
            let (pa, pb) = (qf(sa), qf(sb));
            let p = sa * sb;
            prop_assert_eq!(qf(p), &pa * &pb);
            prop_assert_eq!((mul_down(sa, sb), mul_up(sa, sb)), (p, p));
            let two = 2f64.powi(sb.abs().log2().floor() as i32);
            prop_assert_eq!((div_down(sa, two), div_up(sa, two)), (sa / two, sa / two));
            let r = sb.abs();
            if r < 2f64.powi(26) && r.fract() == 0.0 {
                prop_assert_eq!((sqrt_down(r * r), sqrt_up(r * r)), (r, r));
            }
        }
    }

    /// The membership tests that every containment test above relies on: false outside
    /// each end, also against an infinite end; the rational form only of finite ends; the
    /// width an upper bound of hi − lo; the points beyond the finite range.
    #[test]
    fn membership_width_and_conversions() {
        let x = FI::new(1.0, 2.0);
        assert!(x.contains(1.0) && x.contains(2.0) && x.contains(1.5));
        assert!(!x.contains(0.5) && !x.contains(2.5) && !x.contains(f64::NAN));
        let third = Q::from_signeds(1, 3);
        assert!(FI::from_q(&third).contains_q(&third));
        assert!(!x.contains_q(&third) && !x.contains_q(&Q::from(3u32)));
        assert!(x.contains_q(&Q::from(1u32)) && x.contains_q(&Q::from(2u32)));
        let up = FI::new(1.0, f64::INFINITY);
        assert!(up.contains_q(&Q::from(N::power_of_2(2000))) && !up.contains_q(&third));
        let down = FI::new(f64::NEG_INFINITY, 0.0);
        assert!(down.contains_q(&-Q::from(N::power_of_2(2000))) && !down.contains_q(&third));
        assert!(FI::ENTIRE.contains_q(&third));
        assert_eq!(
            x.to_interval(),
            Some(Interval {
                lo: Q::from(1u32),
                hi: Q::from(2u32)
            })
        );
        assert_eq!(up.to_interval(), None);
        assert_eq!(down.to_interval(), None);
        assert_eq!(FI::new(0.25, 0.75).width(), 0.5);
        assert_eq!(FI::new(0.0, 0.1).width(), 0.1);
        let w = FI::new(-0.1, 0.2).width();
        assert!(qf(w) >= qf(0.2) + qf(0.1) && w <= next_up(0.2 + 0.1));
        assert_eq!(up.width(), f64::INFINITY);
        assert_eq!(
            FI::point(f64::NEG_INFINITY),
            FI {
                lo: f64::NEG_INFINITY,
                hi: -f64::MAX
            }
        );
        assert_eq!(
            FI::point(f64::INFINITY),
            FI {
                lo: f64::MAX,
                hi: f64::INFINITY
            }
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The kernels' helpers: `mul_pos` is `FI::mul` for a positive factor, `up1` and
        /// `down1` are `next_up` and `next_down`, and `fma_pos_w` contains a·r + c for every
        /// point of its arguments (the corners, in exact rationals).
        #[test]
        fn the_kernel_helpers_are_the_general_operations((a, _) in arb_fi(), (r, _) in arb_fi(), (c, _) in arb_fi()) {
            prop_assert_eq!(up1(r.lo), next_up(r.lo));
            prop_assert_eq!(down1(r.hi), next_down(r.hi));
            if a.lo > 0.0 && a.hi < 1e300 && r.lo.abs().max(r.hi.abs()) < 1e300 && c.lo.abs().max(c.hi.abs()) < 1e300 {
                prop_assert_eq!(mul_pos(a, r), a.mul(r));
                let f = fma_pos_w(a, r, c);
                for (x, y, z) in [(a.lo, r.lo, c.lo), (a.hi, r.lo, c.lo), (a.lo, r.hi, c.hi), (a.hi, r.hi, c.hi)] {
                    prop_assert!(f.contains_q(&(qf(x) * qf(y) + qf(z))), "{:?}", f);
                }
            }
        }
    }

    #[test]
    fn one_step_helpers_at_the_ends_of_the_range() {
        for x in [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            1.0,
            -1.0,
            f64::MAX,
            -f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(up1(x), next_up(x), "up1({x})");
            assert_eq!(down1(x), next_down(x), "down1({x})");
        }
    }

    /// The exactness tests at their edges: 53 significant bits in all are exact, 54 are
    /// not known to be; a product at `f64::MIN_POSITIVE` or below is widened (it may have
    /// been rounded as a subnormal); `0·∞ = 0`; a quotient with a divisor that is not a
    /// power of two is widened even when it happens to be exact.
    #[test]
    fn exactness_is_decided_at_its_edges() {
        let a = (1u64 << 26) as f64 + 1.0; // 27 bits
        let b = (1u64 << 25) as f64 + 1.0; // 26 bits
        assert_eq!(sig_bits(a), 27);
        assert_eq!(sig_bits(b), 26);
        assert_eq!(sig_bits(8.0), 1);
        assert_eq!(sig_bits(0.75), 2);
        assert_eq!(sig_bits(0.0), 64);
        assert_eq!(sig_bits(f64::from_bits(3)), 64);
        assert_eq!(sig_bits(f64::INFINITY), 64);
        assert_eq!((mul_down(a, b), mul_up(a, b)), (a * b, a * b));
        assert_eq!(mul_down(a, a), next_down(a * a)); // 27 + 27 bits: not known exact
        assert_eq!(mul_up(a, a), next_up(a * a));
        assert_eq!((mul_down(a, 0.5), mul_up(a, 0.5)), (a / 2.0, a / 2.0));
        assert_eq!((mul_down(0.5, a), mul_up(0.5, a)), (a / 2.0, a / 2.0));
        // A power of two times 53 significant bits, in either order, is exact.
        let t = 1.0 / 3.0;
        assert_eq!(sig_bits(t), 53);
        assert_eq!((mul_down(t, 0.5), mul_up(t, 0.5)), (t / 2.0, t / 2.0));
        assert_eq!((mul_down(8.0, t), mul_up(8.0, t)), (t * 8.0, t * 8.0));
        let m = f64::MIN_POSITIVE;
        assert_eq!(mul_down(m, 1.0), next_down(m));
        assert_eq!(mul_up(m * 2.0, 0.5), next_up(m));
        assert_eq!(
            (mul_down(m * 4.0, 0.5), mul_up(m * 4.0, 0.5)),
            (m * 2.0, m * 2.0)
        );
        assert_eq!(
            (mul_down(0.0, f64::INFINITY), mul_up(f64::INFINITY, 0.0)),
            (0.0, 0.0)
        );
        assert_eq!((mul_down(-3.0, 0.0), mul_up(0.0, -3.0)), (0.0, 0.0));
        assert_eq!(mul_up(f64::MAX, 2.0), f64::INFINITY);
        assert_eq!(mul_down(f64::MAX, 2.0), f64::MAX);
        assert_eq!(
            (div_down(6.0, 3.0), div_up(6.0, 3.0)),
            (next_down(2.0), next_up(2.0))
        );
        assert_eq!((div_down(6.0, 4.0), div_up(6.0, 4.0)), (1.5, 1.5));
        assert_eq!(div_down(m, 2.0), next_down(m / 2.0));
        assert_eq!(
            (div_down(m * 4.0, 2.0), div_up(m * 4.0, 2.0)),
            (m * 2.0, m * 2.0)
        );
        assert_eq!((div_down(0.0, 3.0), div_up(0.0, -3.0)), (0.0, 0.0));
        // A result that rounds up to f64::MIN_POSITIVE from the subnormal range is not
        // exact: (2⁻¹⁰²¹ − 2⁻¹⁰⁷⁴)/2 = 2⁻¹⁰²² − 2⁻¹⁰⁷⁵ is a tie, rounded to even, 2⁻¹⁰²².
        let a = next_down(m * 2.0);
        assert_eq!(a / 2.0, m);
        let half = qf(a) / Q::from(2u32);
        assert!(qf(div_down(a, 2.0)) < half && half < qf(div_up(a, 2.0)));
        assert!(qf(div_down(-a, 2.0)) < -&half && -&half < qf(div_up(-a, 2.0)));
        assert!(qf(mul_down(a, 0.5)) < half && half < qf(mul_up(a, 0.5)));
        assert!(qf(mul_down(-a, 0.5)) < -&half && -&half < qf(mul_up(0.5, -a)));
        assert_eq!(
            (
                div_down(5.0, f64::INFINITY),
                div_up(-5.0, f64::NEG_INFINITY)
            ),
            (0.0, 0.0)
        );
        assert_eq!(div_up(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(div_down(f64::INFINITY, f64::INFINITY), f64::NEG_INFINITY);
        assert_eq!(div_up(1.0, 3.0), next_up(1.0 / 3.0));
        assert_eq!(div_down(1.0, 3.0), next_down(1.0 / 3.0));
        // √: exact on squares of ≤ 26-bit integers (and only where s·s is computed exactly),
        // 0 and below give 0, +∞ stays.
        let s = ((1u64 << 26) - 1) as f64;
        assert_eq!((sqrt_down(s * s), sqrt_up(s * s)), (s, s));
        assert_eq!(
            (sqrt_down(2.0), sqrt_up(2.0)),
            (next_down(2f64.sqrt()), next_up(2f64.sqrt()))
        );
        assert_eq!((sqrt_down(0.0), sqrt_up(-1.0)), (0.0, 0.0));
        assert_eq!(sqrt_up(f64::INFINITY), f64::INFINITY);
        assert_eq!(sqrt_down(5e-324), next_down(5e-324f64.sqrt()));
        // Sums: exact or one step in the direction of the error; overflow one step outward.
        assert_eq!((add_down(1.0, 2.0), add_up(1.0, 2.0)), (3.0, 3.0));
        let (x, y) = (1.0, f64::EPSILON / 4.0); // 1 + 2⁻⁵⁴ rounds to 1, error > 0
        assert_eq!((add_down(x, y), add_up(x, y)), (1.0, next_up(1.0)));
        assert_eq!((add_down(x, -y), add_up(x, -y)), (next_down(1.0), 1.0));
        assert_eq!(add_up(f64::MAX, f64::MAX), f64::INFINITY);
        assert_eq!(add_down(f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(
            add_down(f64::INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(add_up(f64::INFINITY, f64::NEG_INFINITY), f64::INFINITY);
        assert_eq!(pow2(-1022), f64::MIN_POSITIVE);
        assert_eq!(pow2(1023), 2f64.powi(1023));
        assert_eq!(pow2(0), 1.0);
    }

    /// Timing report (`cargo test --release -- --ignored fi_timings --nocapture`).
    #[test]
    #[ignore]
    fn fi_timings() {
        use std::time::Instant;
        let n = 1_000_000;
        let xs: Vec<f64> = (0..1000).map(|i| -700.0 + 1.4 * i as f64).collect();
        let t = Instant::now();
        let mut acc = 0.0;
        for i in 0..n {
            acc += FI::point(xs[i % 1000]).exp().hi;
        }
        println!(
            "FI::exp  {:.1} ns  ({acc:e})",
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        );
        let t = Instant::now();
        for i in 0..n {
            acc += FI::point(1.0 + xs[i % 1000].abs()).ln().hi;
        }
        println!(
            "FI::ln   {:.1} ns  ({acc:e})",
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        );
        let t = Instant::now();
        let mut a = FI::new(0.9, 1.1);
        for i in 0..n {
            a = a
                .mul(FI::point(xs[i % 1000].abs() * 1e-3 + 0.5))
                .add(FI::point(0.25))
                .sqrt();
        }
        println!(
            "FI mul+add+sqrt {:.1} ns  ({a:?})",
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        );
    }
}
#[cfg(test)]
mod micro {
    use super::*;
    #[test]
    #[ignore]
    fn micro_timings() {
        use std::hint::black_box;
        use std::time::Instant;
        let n = 2_000_000;
        macro_rules! b {
            ($name:expr, $e:expr) => {{
                let t = Instant::now();
                for i in 0..n {
                    let v = black_box(0.001 * (i % 97) as f64 + 0.1);
                    black_box($e(v));
                }
                println!(
                    "{:20} {:.1} ns",
                    $name,
                    t.elapsed().as_secs_f64() * 1e9 / n as f64
                );
            }};
        }
        b!("add", |v: f64| FI::point(v).add(FI::point(0.3)));
        b!("mul", |v: f64| FI::point(v).mul(FI::point(0.3)));
        b!("div", |v: f64| FI::point(v).div(FI::point(0.3)));
        b!("tables", |_v: f64| tables().exp2[3]);
        b!("exp_poly", |v: f64| exp_poly(FI::point(v * 0.01)));
        b!("exp_point", |v: f64| exp_point(v));
        b!("ln_point", |v: f64| ln_point(v));
        b!("next_up", |v: f64| next_up(v));
        b!("plain mul", |v: f64| v * 0.3);
        b!("plain sqrt", |v: f64| v.sqrt());
        b!("add_down", |v: f64| add_down(v, 0.3));
        b!("mul_down", |v: f64| mul_down(v, 0.3));
    }
}
