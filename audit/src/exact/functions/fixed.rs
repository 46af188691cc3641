//! Fixed-point interval arithmetic on the grid 2^-w (the module doc of
//! [`functions`](super)): [`Fx`] `{ lo, hi }` stands for `[lo·2^-w, hi·2^-w]`, every
//! operation rounding its lower end down and its upper end up, on integers; and the
//! integer helpers (one-sided shifts, divisions and products) it is built from.

use crate::exact::{Interval, Q, Z};

/// `[lo·2^-w, hi·2^-w]`; the scale `w` is carried by the caller. Invariant `lo ≤ hi`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Fx {
    pub(super) lo: Z,
    pub(super) hi: Z,
}

pub(super) fn zero() -> Z {
    Z::from(0u32)
}
pub(super) fn pow2(w: u64) -> Z {
    Z::from(1u32) << w
}
pub(super) fn bitlen(x: &Z) -> u64 {
    x.bits_abs()
}
fn shr_f(x: &Z, b: u64) -> Z {
    x.shr_floor(b)
}
fn shr_c(x: &Z, b: u64) -> Z {
    x.shr_ceil(b)
}
pub(super) fn div_f(x: &Z, d: &Z) -> Z {
    x.div_floor(d)
}
pub(super) fn div_c(x: &Z, d: &Z) -> Z {
    x.div_ceil(d)
}
/// `floor(x·y / 2^w)`.
pub(super) fn mulshr_f(x: &Z, y: &Z, w: u64) -> Z {
    x.mul_shr_floor(y, w)
}
/// `ceil(x·y / 2^w)`.
pub(super) fn mulshr_c(x: &Z, y: &Z, w: u64) -> Z {
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
pub(super) fn isqrt_u64(n: u64) -> u64 {
    let mut x = 0u64;
    while (x + 1) * (x + 1) <= n {
        x += 1;
    }
    x
}
/// Round half away from zero, for choosing parameters only (saturating).
pub(super) fn round_i64(y: f64) -> i64 {
    if y >= 0.0 {
        (y + 0.5) as i64
    } else {
        (y - 0.5) as i64
    }
}

impl Fx {
    pub(super) fn point(z: Z) -> Fx {
        Fx {
            lo: z.clone(),
            hi: z,
        }
    }
    /// `[floor(q·2^w), ceil(q·2^w)]`: contains `q`.
    pub(super) fn from_q(q: &Q, w: u64) -> Fx {
        let s = q << w;
        Fx {
            lo: s.floor(),
            hi: s.ceiling(),
        }
    }
    /// The rational interval this stands for (exact).
    pub(super) fn to_interval(&self, w: u64) -> Interval {
        Interval {
            lo: Q::from(&self.lo) >> w,
            hi: Q::from(&self.hi) >> w,
        }
    }
    pub(super) fn width(&self) -> Z {
        &self.hi - &self.lo
    }
    pub(super) fn add(&self, o: &Fx) -> Fx {
        Fx {
            lo: &self.lo + &o.lo,
            hi: &self.hi + &o.hi,
        }
    }
    pub(super) fn sub(&self, o: &Fx) -> Fx {
        Fx {
            lo: &self.lo - &o.hi,
            hi: &self.hi - &o.lo,
        }
    }
    pub(super) fn neg(&self) -> Fx {
        Fx {
            lo: -&self.hi,
            hi: -&self.lo,
        }
    }
    pub(super) fn add_z(&self, z: &Z) -> Fx {
        Fx {
            lo: &self.lo + z,
            hi: &self.hi + z,
        }
    }
    /// `[lo − e, hi + e]`, `e ≥ 0`.
    pub(super) fn widen(&self, e: &Z) -> Fx {
        Fx {
            lo: &self.lo - e,
            hi: &self.hi + e,
        }
    }
    /// Exact multiple by 2^b.
    pub(super) fn shl(&self, b: u64) -> Fx {
        Fx {
            lo: &self.lo << b,
            hi: &self.hi << b,
        }
    }
    /// Exact product with an integer.
    pub(super) fn mul_z(&self, k: &Z) -> Fx {
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
    pub(super) fn mul(&self, o: &Fx, w: u64) -> Fx {
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
    pub(super) fn sqr(&self, w: u64) -> Fx {
        let a = self.abs();
        Fx {
            lo: mulshr_f(&a.lo, &a.lo, w),
            hi: mulshr_c(&a.hi, &a.hi, w),
        }
    }
    pub(super) fn abs(&self) -> Fx {
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
    pub(super) fn div(&self, o: &Fx, w: u64) -> Fx {
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
    pub(super) fn sqrt(&self, w: u64) -> Fx {
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
    pub(super) fn rescale(&self, from: u64, to: u64) -> Fx {
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
    pub(super) fn clamp(&self, a: &Z, b: &Z) -> Fx {
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
    pub(super) fn mag(&self) -> Z {
        zmax(self.lo.abs(), self.hi.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fx(a: i64, b: i64) -> Fx {
        Fx {
            lo: Z::from(a.min(b)),
            hi: Z::from(a.max(b)),
        }
    }
    /// The rational `z·2^-w`.
    fn val(z: &Z, w: u64) -> Q {
        Q::from(z) >> w
    }
    /// The tightest enclosure `[floor(lo·2^w), ceil(hi·2^w)]` of `[lo, hi]` on the grid 2^-w:
    /// the specification of every operation (the one that loses nothing beyond the grid).
    fn tightest(lo: &Q, hi: &Q, w: u64) -> Fx {
        Fx {
            lo: (lo << w).floor(),
            hi: (hi << w).ceiling(),
        }
    }
    /// The least and the greatest of `f` at the four corners of `x × y` (on the grid 2^-w).
    fn corners(x: &Fx, y: &Fx, w: u64, f: impl Fn(&Q, &Q) -> Q) -> (Q, Q) {
        let mut v = vec![];
        for s in [&x.lo, &x.hi] {
            for t in [&y.lo, &y.hi] {
                v.push(f(&val(s, w), &val(t, w)));
            }
        }
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (v[0].clone(), v[3].clone())
    }

    proptest! {
        /// Every operation of `Fx` is the tightest grid enclosure of the exact range of its
        /// real operation, computed here in rationals (both ends of each: a lower end one
        /// ulp too high, or an upper end one ulp too low, fails, and so does one too wide).
        #[test]
        fn each_operation_is_the_tightest_grid_enclosure_of_its_exact_range(
            a in -3000i64..3000, b in -3000i64..3000, c in -3000i64..3000, d in -3000i64..3000,
            w in 0u64..12, k in -40i64..40, e in 0i64..50, to in 0u64..16,
        ) {
            let (x, y) = (fx(a, b), fx(c, d));
            let (xl, xh) = (val(&x.lo, w), val(&x.hi, w));
            let (yl, yh) = (val(&y.lo, w), val(&y.hi, w));
            prop_assert_eq!(x.add(&y), tightest(&(&xl + &yl), &(&xh + &yh), w));
            prop_assert_eq!(x.sub(&y), tightest(&(&xl - &yh), &(&xh - &yl), w));
            prop_assert_eq!(x.neg(), tightest(&-&xh, &-&xl, w));
            let kz = Z::from(k);
            let kq = val(&kz, w);
            prop_assert_eq!(x.add_z(&kz), tightest(&(&xl + &kq), &(&xh + &kq), w));
            let ez = Z::from(e);
            let eq = val(&ez, w);
            prop_assert_eq!(x.widen(&ez), tightest(&(&xl - &eq), &(&xh + &eq), w));
            prop_assert_eq!(x.shl(3), tightest(&(&xl << 3u64), &(&xh << 3u64), w));
            let kk = Q::from(k);
            let (p, r) = if k >= 0 { (&xl * &kk, &xh * &kk) } else { (&xh * &kk, &xl * &kk) };
            prop_assert_eq!(x.mul_z(&kz), tightest(&p, &r, w));
            let (lo, hi) = corners(&x, &y, w, |s, t| s * t);
            prop_assert_eq!(x.mul(&y, w), tightest(&lo, &hi, w));
            let sq_lo = if x.lo <= 0u32 && x.hi >= 0u32 {
                Q::from(0u32)
            } else if x.lo > 0u32 {
                &xl * &xl
            } else {
                &xh * &xh
            };
            let sq_hi = if &xl * &xl >= &xh * &xh { &xl * &xl } else { &xh * &xh };
            prop_assert_eq!(x.sqr(w), tightest(&sq_lo, &sq_hi, w));
            prop_assert_eq!(x.abs(), tightest(&sq_lo.checked_sqrt().unwrap(), &sq_hi.checked_sqrt().unwrap(), w));
            prop_assert_eq!(x.mag(), x.lo.abs().max(x.hi.abs()));
            prop_assert_eq!(x.width(), &x.hi - &x.lo);
            if !(y.lo <= 0u32 && y.hi >= 0u32) {
                let (lo, hi) = corners(&x, &y, w, |s, t| s / t);
                prop_assert_eq!(x.div(&y, w), tightest(&lo, &hi, w));
            }
            if x.hi >= 0u32 {
                // ⌊√(max(lo, 0)·2^w)⌋ and ⌈√(hi·2^w)⌉ on the grid: r² ≤ v < (r + 1)².
                let s = x.sqrt(w);
                let v_lo = if x.lo > 0u32 { &x.lo << w } else { Z::from(0u32) };
                let v_hi = &x.hi << w;
                prop_assert!(&s.lo * &s.lo <= v_lo && v_lo < (&s.lo + Z::from(1u32)) * (&s.lo + Z::from(1u32)));
                prop_assert!(&s.hi * &s.hi >= v_hi && (s.hi == 0u32 || v_hi > (&s.hi - Z::from(1u32)) * (&s.hi - Z::from(1u32))));
            }
            prop_assert_eq!(x.rescale(w, to), tightest(&xl, &xh, to));
            let c = x.clamp(&y.lo, &y.hi);
            match (xl.clone().max(yl.clone()), xh.clone().min(yh.clone())) {
                (lo, hi) if lo <= hi => prop_assert_eq!(c, tightest(&lo, &hi, w)),
                _ => prop_assert_eq!(c, y.clone()),
            }
            let r = Q::from_signeds(a, 7);
            prop_assert_eq!(Fx::from_q(&r, w), tightest(&r, &r, w));
            prop_assert_eq!(x.to_interval(w), Interval::new(xl, xh));
        }
    }

    /// The parameter helpers: the floor of √n and rounding half away from zero.
    #[test]
    fn integer_square_roots_and_rounding() {
        for n in 0..=5000u64 {
            let r = isqrt_u64(n);
            assert!(r * r <= n && n < (r + 1) * (r + 1), "isqrt {n} = {r}");
        }
        for (y, r) in [
            (2.5, 3),
            (2.49, 2),
            (-2.5, -3),
            (-2.49, -2),
            (0.0, 0),
            (-0.4, 0),
        ] {
            assert_eq!(round_i64(y), r, "round {y}");
        }
    }
}
