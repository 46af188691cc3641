//! The big-number boundary: the exact types [`Q`] (rationals), [`Z`] (integers) and [`N`]
//! (naturals) as newtypes over one of two libraries, chosen by a cargo feature.
//!
//! * `malachite` (default): malachite-q / malachite-nz, the fastest here (LGPL-3.0-only).
//! * `num` (`--no-default-features --features num`): num-rational / num-bigint
//!   (MIT/Apache-2.0), for users who cannot take LGPL. Measured cost: `spec/crates.md`.
//!
//! Both backends give the same inherent API (constructors, `floor`/`ceiling`, shifts,
//! directed-rounding integer operations, exact conversions to and from `f64`), the
//! arithmetic operators for every owned/borrowed combination, and comparisons with `u32` /
//! `i32` literals. The rest of the crate names only these types and the functions of
//! [`crate::exact`], so both builds run the same code and the same test suite
//! (`.ci/run` runs it under both).

#[cfg(feature = "malachite")]
mod malachite;
#[cfg(feature = "malachite")]
pub use self::malachite::{N, Q, Z};

#[cfg(all(feature = "num", not(feature = "malachite")))]
mod num;
#[cfg(all(feature = "num", not(feature = "malachite")))]
pub use self::num::{N, Q, Z};

#[cfg(not(any(feature = "malachite", feature = "num")))]
compile_error!("mdp needs one exact-number backend: enable feature `malachite` or `num`");

/// An unsigned primitive accepted by [`Q::from_unsigneds`].
pub trait Unsigned: Copy {
    fn to_u64(self) -> u64;
}
/// A signed primitive accepted by [`Q::from_signeds`].
pub trait Signed: Copy {
    fn to_i64(self) -> i64;
}
macro_rules! prim {
    ($tr:ident, $f:ident, $to:ty: $($t:ty),*) => {$(
        impl $tr for $t {
            fn $f(self) -> $to {
                self as $to
            }
        }
    )*};
}
prim!(Unsigned, to_u64, u64: u8, u16, u32, u64, usize);
prim!(Signed, to_i64, i64: i8, i16, i32, i64, isize);

/// `op` for every owned/borrowed combination of a newtype whose inner type has all four.
macro_rules! binops {
    ($T:ident: $($Tr:ident $f:ident $TrA:ident $fa:ident),*) => {$(
        impl std::ops::$Tr<$T> for $T {
            type Output = $T;
            #[inline]
            fn $f(self, o: $T) -> $T {
                $T(std::ops::$Tr::$f(self.0, o.0))
            }
        }
        impl std::ops::$Tr<&$T> for $T {
            type Output = $T;
            #[inline]
            fn $f(self, o: &$T) -> $T {
                $T(std::ops::$Tr::$f(self.0, &o.0))
            }
        }
        impl std::ops::$Tr<$T> for &$T {
            type Output = $T;
            #[inline]
            fn $f(self, o: $T) -> $T {
                $T(std::ops::$Tr::$f(&self.0, o.0))
            }
        }
        impl std::ops::$Tr<&$T> for &$T {
            type Output = $T;
            #[inline]
            fn $f(self, o: &$T) -> $T {
                $T(std::ops::$Tr::$f(&self.0, &o.0))
            }
        }
        impl std::ops::$TrA<$T> for $T {
            #[inline]
            fn $fa(&mut self, o: $T) {
                std::ops::$TrA::$fa(&mut self.0, o.0)
            }
        }
        impl std::ops::$TrA<&$T> for $T {
            #[inline]
            fn $fa(&mut self, o: &$T) {
                std::ops::$TrA::$fa(&mut self.0, &o.0)
            }
        }
    )*};
}
pub(crate) use binops;

/// Negation, `Sum`, `Display` / `Debug` for a newtype whose inner type has them.
macro_rules! common {
    ($T:ident) => {
        impl std::ops::Neg for $T {
            type Output = $T;
            #[inline]
            fn neg(self) -> $T {
                $T(-self.0)
            }
        }
        impl std::ops::Neg for &$T {
            type Output = $T;
            #[inline]
            fn neg(self) -> $T {
                $T(-&self.0)
            }
        }
        common!(@fmt $T);
    };
    (@fmt $T:ident) => {
        impl std::fmt::Display for $T {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }
        impl std::fmt::Debug for $T {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }
        impl std::iter::Sum for $T {
            fn sum<I: Iterator<Item = $T>>(it: I) -> $T {
                it.fold($T::from(0u32), |a, b| a + b)
            }
        }
        impl<'a> std::iter::Sum<&'a $T> for $T {
            fn sum<I: Iterator<Item = &'a $T>>(it: I) -> $T {
                it.fold($T::from(0u32), |a, b| a + b)
            }
        }
    };
}
pub(crate) use common;

/// The operators, `Display`, `Sum` and literal comparisons of `Q`, `Z`, `N`, the same in
/// both backends (each backend defines its own `cmp_prim!`).
macro_rules! newtype_ops {
    () => {
        binops!(Q: Add add AddAssign add_assign, Sub sub SubAssign sub_assign,
            Mul mul MulAssign mul_assign, Div div DivAssign div_assign);
        binops!(Z: Add add AddAssign add_assign, Sub sub SubAssign sub_assign,
            Mul mul MulAssign mul_assign, Div div DivAssign div_assign);
        binops!(N: Add add AddAssign add_assign, Sub sub SubAssign sub_assign,
            Mul mul MulAssign mul_assign, Div div DivAssign div_assign, Rem rem RemAssign rem_assign);
        common!(Q);
        common!(Z);
        common!(@fmt N);
        cmp_prim!(Q: u32, i32, u64);
        cmp_prim!(Z: u32, i32);
        cmp_prim!(N: u32);
    };
}
pub(crate) use newtype_ops;

/// Rounding to `f64`: the three directions [`crate::exact::f64_down`], `f64_up` and
/// `f64_nearest` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Down,
    Up,
    Nearest,
}

#[cfg(test)]
mod tests {
    //! Contract tests of the boundary: the same assertions hold under both backends.
    use super::*;

    fn q(a: i64, b: i64) -> Q {
        Q::from_signeds(a, b)
    }

    #[test]
    fn arithmetic_and_order() {
        assert_eq!(q(1, 3) + q(1, 6), q(1, 2));
        assert_eq!(&q(1, 3) - &q(1, 2), q(-1, 6));
        assert_eq!(q(2, 3) * &q(3, 4), q(1, 2));
        assert_eq!(&q(2, 3) / q(4, 3), q(1, 2));
        assert!(q(-1, 2) < 0u32 && q(1, 2) > 0u32 && q(3, 1) == 3u32);
        assert_eq!(q(6, 4).numerator(), Z::from(3u32));
        assert_eq!(q(6, 4).denominator(), N::from(2u32));
        assert_eq!([q(1, 2), q(1, 3)].iter().sum::<Q>(), q(5, 6));
        assert_eq!(format!("{}", q(-6, 4)), "-3/2");
        assert_eq!(format!("{}", q(4, 2)), "2");
    }

    #[test]
    fn floors_shifts_and_powers() {
        assert_eq!(q(-7, 2).floor(), Z::from(-4i32));
        assert_eq!(q(-7, 2).ceiling(), Z::from(-3i32));
        assert_eq!(q(3, 4) << 2u64, q(3, 1));
        assert_eq!(q(3, 4) >> 2u64, q(3, 16));
        assert_eq!(q(3, 4) << -2i64, q(3, 16));
        assert_eq!(q(0, 1) >> 5u64, q(0, 1));
        assert_eq!(q(5, 1).floor_log2_abs(), 2);
        assert_eq!(q(-1, 3).floor_log2_abs(), -2);
        assert_eq!(q(1, 4).floor_log2_abs(), -2);
        assert_eq!(q(2, 3).pow(-2), q(9, 4));
        assert_eq!(q(9, 4).checked_sqrt(), Some(q(3, 2)));
        assert_eq!(q(2, 1).checked_sqrt(), None);
        assert_eq!(q(5, 7).round_to_pow2_grid(-3, Round::Down), q(5, 8));
        assert_eq!(q(5, 7).round_to_pow2_grid(-3, Round::Up), q(6, 8));
        assert_eq!(q(-5, 7).round_to_pow2_grid(-3, Round::Down), q(-6, 8));
        assert_eq!(q(3, 4).bits(), 5);
    }

    #[test]
    fn integers_round_in_the_asked_direction() {
        let x = Z::from(-7i32);
        assert_eq!(x.shr_floor(1), Z::from(-4i32));
        assert_eq!(x.shr_ceil(1), Z::from(-3i32));
        assert_eq!(x.div_floor(&Z::from(2u32)), Z::from(-4i32));
        assert_eq!(x.div_ceil(&Z::from(2u32)), Z::from(-3i32));
        assert_eq!(
            Z::from(3u32).mul_shr_floor(&Z::from(-3i32), 2),
            Z::from(-3i32)
        );
        assert_eq!(
            Z::from(3u32).mul_shr_ceil(&Z::from(-3i32), 2),
            Z::from(-2i32)
        );
        assert_eq!(Z::from(15u32).floor_sqrt(), Z::from(3u32));
        assert_eq!(Z::from(15u32).ceiling_sqrt(), Z::from(4u32));
        assert_eq!(Z::from(16u32).ceiling_sqrt(), Z::from(4u32));
        assert_eq!(Z::from(-5i32).mod_pow2(2), 3);
        assert_eq!(Z::from(-5i32).bits_abs(), 3);
        assert_eq!(N::from(40u32).trailing_zeros(), Some(3));
        assert_eq!(N::from(0u32).trailing_zeros(), None);
        assert_eq!(N::power_of_2(70).bits(), 71);
        assert_eq!(N::from(10u32).pow(3), N::from(1000u32));
        assert_eq!(
            "12345678901234567890123".parse::<N>().unwrap().to_string(),
            "12345678901234567890123"
        );
        assert!("12a".parse::<N>().is_err());
        assert_eq!(usize::try_from(&N::from(7u32)), Ok(7));
        assert_eq!(N::try_from(&Z::from(-1i32)).ok(), None);
    }

    #[test]
    fn conversions_keep_value_and_sign() {
        assert_eq!(Q::from(&N::from(7u32)), q(7, 1));
        assert_eq!(Q::from(&Z::from(-7i32)), q(-7, 1));
        assert_eq!(Q::from(Z::from(-7i32)), q(-7, 1));
        assert_eq!(Z::from(N::from(9u32)), Z::from(9u32));
        assert_eq!(u64::try_from(&N::from(12345u32)), Ok(12345));
        assert_eq!(u64::try_from(&N::power_of_2(64)), Err(()));
        assert_eq!(i64::try_from(&Z::from(-12345i32)), Ok(-12345));
        assert_eq!(i64::try_from(&Z::from(N::power_of_2(63))), Err(()));
        assert_eq!(usize::try_from(&N::power_of_2(64)), Err(()));
        assert_eq!(q(-6, 4).numerator(), Z::from(-3i32));
        assert_eq!(q(0, 5).numerator(), Z::from(0u32));
        assert!(!q(3, 2).is_integer() && q(4, 2).is_integer() && q(0, 1).is_integer());
    }

    #[test]
    fn f64_conversions_are_exact_and_directed() {
        for x in [
            0.1,
            -0.1,
            1.0,
            3.5e-310,
            -5e-324,
            1.7976931348623157e308,
            0.0,
        ] {
            let e = Q::try_from(x).unwrap();
            assert_eq!(e.to_f64(Round::Nearest), x);
            assert_eq!(e.to_f64(Round::Down), x);
            assert_eq!(e.to_f64(Round::Up), x);
        }
        assert!(Q::try_from(f64::NAN).is_err() && Q::try_from(f64::INFINITY).is_err());
        let third = q(1, 3);
        let (d, u, n) = (
            third.to_f64(Round::Down),
            third.to_f64(Round::Up),
            third.to_f64(Round::Nearest),
        );
        assert!(Q::try_from(d).unwrap() < third && Q::try_from(u).unwrap() > third);
        assert_eq!(u, d.next_up());
        assert_eq!(n, 1.0 / 3.0);
        let m = -q(1, 3);
        assert_eq!(m.to_f64(Round::Down), -u);
        assert_eq!(m.to_f64(Round::Up), -d);
        let huge = Q::from(N::power_of_2(2000));
        assert_eq!(huge.to_f64(Round::Down), f64::MAX);
        assert_eq!(huge.to_f64(Round::Up), f64::INFINITY);
        assert_eq!(huge.to_f64(Round::Nearest), f64::INFINITY);
        assert_eq!((-&huge).to_f64(Round::Down), f64::NEG_INFINITY);
        let tiny = Q::from(N::power_of_2(2000)).pow(-1);
        assert_eq!(tiny.to_f64(Round::Down), 0.0);
        assert_eq!(tiny.to_f64(Round::Up), 5e-324);
        assert_eq!(tiny.to_f64(Round::Nearest), 0.0);
        // ties to even: 1 + 2^-53 → 1; 1 + 3·2^-53 → 1 + 2^-51.
        let one = Q::from(1u32);
        assert_eq!(
            (&one + (Q::from(1u32) >> 53u64)).to_f64(Round::Nearest),
            1.0
        );
        assert_eq!(
            (&one + (Q::from(3u32) >> 53u64)).to_f64(Round::Nearest),
            1.0 + 2f64.powi(-51)
        );
    }

    use proptest::prelude::*;

    proptest! {
        /// The directed conversions bracket q by adjacent doubles, and `Nearest` is the closer
        /// of the two: over numerators and denominators from 1 bit to ~1100 bits, so normal,
        /// subnormal and out-of-range results are all reached.
        #[test]
        fn to_f64_brackets_q(n in 1u64.., d in 1u64.., sn in 0u64..1100, sd in 0u64..1100, neg: bool) {
            let x = Q::from_naturals(N::from(n) << sn, N::from(d) << sd);
            let x = if neg { -x } else { x };
            let (lo, hi) = (x.to_f64(Round::Down), x.to_f64(Round::Up));
            let exact = |f: f64| Q::try_from(f).ok();
            prop_assert!(lo <= hi && (lo == hi || hi == lo.next_up()));
            if let Some(l) = exact(lo) { prop_assert!(l <= x); }
            if let Some(h) = exact(hi) { prop_assert!(x <= h); }
            let near = x.to_f64(Round::Nearest);
            prop_assert!(near == lo || near == hi || (near.is_infinite() && lo.abs() == f64::MAX));
            if let (Some(l), Some(h), Some(m)) = (exact(lo), exact(hi), exact(near)) {
                let dist = |y: &Q| (y - &x).abs();
                prop_assert!(dist(&m) <= dist(&l) && dist(&m) <= dist(&h));
            }
        }
    }
}
