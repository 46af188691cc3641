//! Closed intervals `[lo, hi]` with exact rational end points.
//!
//! Every operation here is *exact* interval arithmetic on rationals: the result is the
//! smallest interval containing `{f(x, y) : x ∈ self, y ∈ other}` (for `mul`, `div`, `sqr`,
//! `abs` this is the classical end-point formula, which is exact for these
//! monotone-by-orthant operations). The only operation that *loses* information on purpose
//! is [`Interval::round_outward`], which moves the ends outward (lo down, hi up) to dyadic
//! rationals; it therefore still contains every point of the original interval.
//!
//! Containment ("inclusion isotonicity") is the invariant everything else relies on: if
//! `x ∈ X` and `y ∈ Y` then `x ∘ y ∈ X.op(Y)`.

use super::Round;
use super::{f64_down, f64_up, Q};

/// A closed interval of rationals, `lo ≤ hi`. The true value of whatever it encloses lies in
/// `[lo, hi]` (both ends included).
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub lo: Q,
    pub hi: Q,
}

impl Interval {
    /// The degenerate interval `[q, q]`.
    pub fn point(q: Q) -> Interval {
        Interval {
            lo: q.clone(),
            hi: q,
        }
    }

    /// `[lo, hi]`. Panics if `lo > hi` (an empty interval encloses nothing and would make every
    /// later enclosure vacuous, so it is a bug at the call site).
    pub fn new(lo: Q, hi: Q) -> Interval {
        assert!(lo <= hi, "Interval::new: lo > hi ({lo} > {hi})");
        Interval { lo, hi }
    }

    /// `[0, 0]`.
    pub fn zero() -> Interval {
        Interval::point(Q::from(0u32))
    }

    /// `[1, 1]`.
    pub fn one() -> Interval {
        Interval::point(Q::from(1u32))
    }

    /// `lo ≤ q ≤ hi`.
    pub fn contains(&self, q: &Q) -> bool {
        &self.lo <= q && q <= &self.hi
    }

    /// `self ⊆ other`.
    pub fn is_subset_of(&self, other: &Interval) -> bool {
        other.lo <= self.lo && self.hi <= other.hi
    }

    /// `lo == hi`.
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    /// `hi − lo` (exact, ≥ 0).
    pub fn width(&self) -> Q {
        &self.hi - &self.lo
    }

    /// `(lo + hi) / 2` (exact).
    pub fn mid(&self) -> Q {
        (&self.lo + &self.hi) >> 1u64
    }

    /// `(hi − lo) / 2` (exact): every point is within `rad()` of `mid()`.
    pub fn rad(&self) -> Q {
        self.width() >> 1u64
    }

    /// `0 ∈ self`.
    pub fn contains_zero(&self) -> bool {
        self.lo <= 0u32 && self.hi >= 0u32
    }

    /// `max(|lo|, |hi|)` = sup of |x| over the interval.
    pub fn mag(&self) -> Q {
        let a = self.lo.abs();
        let b = self.hi.abs();
        if a >= b {
            a
        } else {
            b
        }
    }

    /// `[lo₁+lo₂, hi₁+hi₂]` (exact).
    pub fn add(&self, other: &Interval) -> Interval {
        Interval {
            lo: &self.lo + &other.lo,
            hi: &self.hi + &other.hi,
        }
    }

    /// `[lo₁−hi₂, hi₁−lo₂]` (exact).
    pub fn sub(&self, other: &Interval) -> Interval {
        Interval {
            lo: &self.lo - &other.hi,
            hi: &self.hi - &other.lo,
        }
    }

    /// `[−hi, −lo]` (exact).
    pub fn neg(&self) -> Interval {
        Interval {
            lo: -&self.hi,
            hi: -&self.lo,
        }
    }

    /// Product: min and max of the four end-point products. `x·y` is bilinear, so on the box
    /// `self × other` its extremes are attained at corners; the result is the exact range.
    pub fn mul(&self, other: &Interval) -> Interval {
        // Fast paths keep the number of big products at two when signs are known.
        if self.lo >= 0u32 && other.lo >= 0u32 {
            return Interval {
                lo: &self.lo * &other.lo,
                hi: &self.hi * &other.hi,
            };
        }
        let p = [
            &self.lo * &other.lo,
            &self.lo * &other.hi,
            &self.hi * &other.lo,
            &self.hi * &other.hi,
        ];
        let mut lo = &p[0];
        let mut hi = &p[0];
        for v in &p[1..] {
            if v < lo {
                lo = v;
            }
            if v > hi {
                hi = v;
            }
        }
        Interval {
            lo: lo.clone(),
            hi: hi.clone(),
        }
    }

    /// Quotient `{x/y}`; `None` when `0 ∈ other` (the range is then unbounded or undefined).
    /// Exact: `1/y` is monotone on an interval excluding 0, so `self · [1/hi, 1/lo]`.
    pub fn div(&self, other: &Interval) -> Option<Interval> {
        if other.contains_zero() {
            return None;
        }
        let inv = Interval {
            lo: Q::from(1u32) / &other.hi,
            hi: Q::from(1u32) / &other.lo,
        };
        Some(self.mul(&inv))
    }

    /// `{|x|}`: exact.
    pub fn abs(&self) -> Interval {
        if self.lo >= 0u32 {
            self.clone()
        } else if self.hi <= 0u32 {
            self.neg()
        } else {
            Interval {
                lo: Q::from(0u32),
                hi: self.mag(),
            }
        }
    }

    /// `{x²}`: exact and sign-aware (`[−1, 2]² = [0, 4]`, not `[−2, 4]`).
    pub fn sqr(&self) -> Interval {
        let a = self.abs();
        Interval {
            lo: &a.lo * &a.lo,
            hi: &a.hi * &a.hi,
        }
    }

    /// `{c·x}` for an exact rational `c` (ends swap when `c < 0`).
    pub fn scale(&self, c: &Q) -> Interval {
        if *c >= 0u32 {
            Interval {
                lo: &self.lo * c,
                hi: &self.hi * c,
            }
        } else {
            Interval {
                lo: &self.hi * c,
                hi: &self.lo * c,
            }
        }
    }

    /// `{x + c}`.
    pub fn add_q(&self, c: &Q) -> Interval {
        Interval {
            lo: &self.lo + c,
            hi: &self.hi + c,
        }
    }

    /// `self ∩ other`, `None` when disjoint. Intersecting two enclosures of the same quantity
    /// is again an enclosure of it.
    pub fn intersect(&self, other: &Interval) -> Option<Interval> {
        let lo = if self.lo >= other.lo {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if self.hi <= other.hi {
            &self.hi
        } else {
            &other.hi
        };
        if lo <= hi {
            Some(Interval {
                lo: lo.clone(),
                hi: hi.clone(),
            })
        } else {
            None
        }
    }

    /// `[lo − e, hi + e]` for `e ≥ 0`.
    pub fn widen(&self, e: &Q) -> Interval {
        debug_assert!(*e >= 0u32);
        Interval {
            lo: &self.lo - e,
            hi: &self.hi + e,
        }
    }

    /// Replace the ends by dyadic rationals with denominator `2^prec_bits`: `lo` rounded down
    /// (floor), `hi` rounded up (ceiling). The result contains `self`, so it still encloses
    /// whatever `self` enclosed; its width grows by less than `2^(1−prec_bits)`. Used to keep
    /// numerator/denominator sizes bounded in long computations.
    pub fn round_outward(&self, prec_bits: u64) -> Interval {
        let p = -(prec_bits as i64);
        Interval {
            lo: self.lo.round_to_pow2_grid(p, Round::Down),
            hi: self.hi.round_to_pow2_grid(p, Round::Up),
        }
    }

    /// `width / min(|lo|, |hi|)`, the relative width; `None` when `0 ∈ self` (no finite
    /// relative width exists).
    pub fn relative_width(&self) -> Option<Q> {
        if self.contains_zero() {
            return None;
        }
        let a = self.lo.abs();
        let b = self.hi.abs();
        let m = if a <= b { a } else { b };
        Some(self.width() / m)
    }

    /// `(a, b)` with `a ≤ lo` and `hi ≤ b`, `a`, `b` the nearest `f64`s in those directions
    /// (±∞ / ±`f64::MAX` beyond the finite range, as [`f64_down`] / [`f64_up`]).
    pub fn to_f64_bounds(&self) -> (f64, f64) {
        (f64_down(&self.lo), f64_up(&self.hi))
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b) = self.to_f64_bounds();
        write!(f, "[{a:e}, {b:e}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn q(a: i64, b: i64) -> Q {
        Q::from_signeds(a, b)
    }
    fn iv(a: i64, b: i64) -> Interval {
        Interval::new(q(a, 1), q(b, 1))
    }

    #[test]
    fn basics() {
        let x = Interval::new(q(-1, 2), q(3, 1));
        assert!(x.contains(&q(0, 1)));
        assert!(!x.contains(&q(4, 1)));
        assert_eq!(x.width(), q(7, 2));
        assert_eq!(x.mid(), q(5, 4));
        assert_eq!(x.sqr(), Interval::new(q(0, 1), q(9, 1)));
        assert_eq!(iv(-3, -2).sqr(), iv(4, 9));
        assert_eq!(x.abs(), Interval::new(q(0, 1), q(3, 1)));
        assert_eq!(iv(-2, 3).mul(&iv(-5, 1)), iv(-15, 10));
        assert!(iv(1, 2).div(&iv(-1, 1)).is_none());
        assert_eq!(
            iv(1, 2).div(&iv(2, 4)).unwrap(),
            Interval::new(q(1, 4), q(1, 1))
        );
        assert_eq!(iv(1, 5).intersect(&iv(2, 8)), Some(iv(2, 5)));
        assert_eq!(iv(2, 8).intersect(&iv(1, 5)), Some(iv(2, 5)));
        assert_eq!(iv(1, 2).intersect(&iv(3, 4)), None);
        assert_eq!(iv(1, 2).add_q(&q(-1, 2)), Interval::new(q(1, 2), q(3, 2)));
        assert_eq!(iv(1, 2).scale(&q(-3, 1)), iv(-6, -3));
        assert_eq!(iv(1, 2).relative_width(), Some(q(1, 1)));
        assert_eq!(x.relative_width(), None);
        assert_eq!(iv(-6, -2).relative_width(), Some(q(2, 1)));
        assert_eq!(x.to_string(), "[-5e-1, 3e0]");
        assert_eq!(iv(1, 2).to_f64_bounds(), (1.0, 2.0));
        assert!(Interval::point(q(1, 3)).is_point() && !x.is_point());
        assert_eq!(x.rad(), q(7, 4));
    }

    /// `⊆` needs both ends inside: each end alone outside is refused.
    #[test]
    fn subsets_need_both_ends_inside() {
        assert!(iv(1, 2).is_subset_of(&iv(0, 3)));
        assert!(iv(1, 2).is_subset_of(&iv(1, 2)));
        assert!(!iv(0, 2).is_subset_of(&iv(1, 3)));
        assert!(!iv(1, 3).is_subset_of(&iv(0, 2)));
        assert!(!iv(0, 3).is_subset_of(&iv(1, 2)));
    }

    #[test]
    #[should_panic]
    fn new_rejects_empty() {
        let _ = Interval::new(q(2, 1), q(1, 1));
    }

    #[test]
    fn round_outward_contains() {
        let x = Interval::new(q(1, 3), q(2, 3));
        let r = x.round_outward(10);
        assert!(r.is_subset_of(&Interval::new(q(1, 3) - q(1, 1024), q(2, 3) + q(1, 1024))));
        assert!(x.is_subset_of(&r));
        assert_eq!(r.lo.denominator(), super::super::N::from(1024u32));
        let n = Interval::new(q(-1, 3), q(-1, 3));
        let r = n.round_outward(4);
        assert!(n.is_subset_of(&r));
        assert_eq!(r, Interval::new(q(-6, 16), q(-5, 16)));
    }

    fn arb_q() -> impl Strategy<Value = Q> {
        (-1000i64..1000, 1i64..50).prop_map(|(a, b)| q(a, b))
    }
    fn arb_iv() -> impl Strategy<Value = (Interval, Q)> {
        (arb_q(), arb_q(), 0u32..=100).prop_map(|(a, b, t)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            // a point of the interval
            let p = &lo + (&hi - &lo) * Q::from_unsigneds(t, 100u32);
            (Interval::new(lo, hi), p)
        })
    }

    proptest! {
        #[test]
        fn ops_contain_pointwise_results((x, a) in arb_iv(), (y, b) in arb_iv(), k in 4u64..40) {
            prop_assert!(x.add(&y).contains(&(&a + &b)));
            prop_assert!(x.sub(&y).contains(&(&a - &b)));
            prop_assert!(x.mul(&y).contains(&(&a * &b)));
            prop_assert!(x.neg().contains(&-&a));
            prop_assert!(x.abs().contains(&a.abs()));
            prop_assert!(x.sqr().contains(&(&a * &a)));
            prop_assert!(x.scale(&b).contains(&(&a * &b)));
            prop_assert!(x.round_outward(k).contains(&a));
            prop_assert!(x.is_subset_of(&x.round_outward(k)));
            if let Some(d) = x.div(&y) {
                prop_assert!(d.contains(&(&a / &b)));
            } else {
                prop_assert!(y.contains_zero());
            }
        }
    }
}
