//! The malachite backend (default): [`Q`], [`Z`], [`N`] over malachite-q / malachite-nz.
//! Every malachite trait of the crate is imported here and nowhere else.

use super::{binops, common, newtype_ops, Round, Signed, Unsigned};
use malachite_base::num::arithmetic::traits::{
    Abs, Ceiling, CeilingSqrt, CheckedSqrt, DivRound, Floor, FloorSqrt, ModPowerOf2, MulShrRound,
    Pow, PowerOf2, RoundToMultipleOfPowerOf2, ShrRound,
};
use malachite_base::num::conversion::traits::RoundingFrom;
use malachite_base::num::logic::traits::SignificantBits;
use malachite_base::rounding_modes::RoundingMode as RM;
use malachite_nz::integer::Integer;
use malachite_nz::natural::Natural;
use malachite_q::Rational;
use std::str::FromStr;

/// An exact rational number.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Q(Rational);
/// An arbitrary-precision integer.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Z(Integer);
/// An arbitrary-precision natural number.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct N(Natural);

/// Comparisons with primitive literals (malachite compares without allocating).
macro_rules! cmp_prim {
    ($T:ident: $($p:ty),*) => {$(
        impl PartialEq<$p> for $T {
            #[inline]
            fn eq(&self, o: &$p) -> bool {
                self.0 == *o
            }
        }
        impl PartialOrd<$p> for $T {
            #[inline]
            fn partial_cmp(&self, o: &$p) -> Option<std::cmp::Ordering> {
                self.0.partial_cmp(o)
            }
        }
    )*};
}
newtype_ops!();

macro_rules! from_prim {
    ($T:ident($I:ident): $($p:ty),*) => {$(
        impl From<$p> for $T {
            #[inline]
            fn from(x: $p) -> $T {
                $T($I::from(x))
            }
        }
    )*};
}
from_prim!(Q(Rational): u8, u32, u64, usize, i32, i64);
from_prim!(Z(Integer): u8, u32, u64, usize, i32, i64);
from_prim!(N(Natural): u8, u32, u64, usize);

impl From<Z> for Q {
    fn from(z: Z) -> Q {
        Q(Rational::from(z.0))
    }
}
impl From<&Z> for Q {
    fn from(z: &Z) -> Q {
        Q(Rational::from(&z.0))
    }
}
impl From<N> for Q {
    fn from(n: N) -> Q {
        Q(Rational::from(n.0))
    }
}
impl From<&N> for Q {
    fn from(n: &N) -> Q {
        Q(Rational::from(&n.0))
    }
}
impl From<N> for Z {
    fn from(n: N) -> Z {
        Z(Integer::from(n.0))
    }
}
impl TryFrom<f64> for Q {
    type Error = ();
    /// The exact value of a finite `f64`; `Err` on NaN and ±∞.
    fn try_from(x: f64) -> Result<Q, ()> {
        Rational::try_from(x).map(Q).map_err(|_| ())
    }
}
impl TryFrom<&Z> for N {
    type Error = ();
    fn try_from(z: &Z) -> Result<N, ()> {
        Natural::try_from(&z.0).map(N).map_err(|_| ())
    }
}
impl TryFrom<&N> for usize {
    type Error = ();
    fn try_from(n: &N) -> Result<usize, ()> {
        usize::try_from(&n.0).map_err(|_| ())
    }
}
impl TryFrom<&N> for u64 {
    type Error = ();
    fn try_from(n: &N) -> Result<u64, ()> {
        u64::try_from(&n.0).map_err(|_| ())
    }
}
impl TryFrom<&Z> for i64 {
    type Error = ();
    fn try_from(z: &Z) -> Result<i64, ()> {
        i64::try_from(&z.0).map_err(|_| ())
    }
}
impl FromStr for N {
    type Err = ();
    /// Decimal digits only.
    fn from_str(s: &str) -> Result<N, ()> {
        Natural::from_str(s).map(N)
    }
}

macro_rules! shifts {
    ($T:ident: $($p:ty),*) => {$(
        impl std::ops::Shl<$p> for $T {
            type Output = $T;
            #[inline]
            fn shl(self, k: $p) -> $T {
                $T(self.0 << k)
            }
        }
        impl std::ops::Shl<$p> for &$T {
            type Output = $T;
            #[inline]
            fn shl(self, k: $p) -> $T {
                $T(&self.0 << k)
            }
        }
        impl std::ops::Shr<$p> for $T {
            type Output = $T;
            #[inline]
            fn shr(self, k: $p) -> $T {
                $T(self.0 >> k)
            }
        }
        impl std::ops::Shr<$p> for &$T {
            type Output = $T;
            #[inline]
            fn shr(self, k: $p) -> $T {
                $T(&self.0 >> k)
            }
        }
        impl std::ops::ShlAssign<$p> for $T {
            #[inline]
            fn shl_assign(&mut self, k: $p) {
                self.0 <<= k
            }
        }
        impl std::ops::ShrAssign<$p> for $T {
            #[inline]
            fn shr_assign(&mut self, k: $p) {
                self.0 >>= k
            }
        }
    )*};
}
// Q: exact multiplication / division by 2^k (k may be negative for i64).
shifts!(Q: u64, i64);
// Z: `<<` exact; N: `>>` floors.
shifts!(Z: u64);
shifts!(N: u64);

fn mode(r: Round) -> RM {
    match r {
        Round::Down => RM::Floor,
        Round::Up => RM::Ceiling,
        Round::Nearest => RM::Nearest,
    }
}

impl Q {
    /// n/d for unsigned primitives (d ≠ 0).
    pub fn from_unsigneds<T: Unsigned>(n: T, d: T) -> Q {
        Q(Rational::from_unsigneds(n.to_u64(), d.to_u64()))
    }
    /// n/d for signed primitives (d ≠ 0).
    pub fn from_signeds<T: Signed>(n: T, d: T) -> Q {
        Q(Rational::from_signeds(n.to_i64(), d.to_i64()))
    }
    /// n/d (d ≠ 0).
    pub fn from_naturals(n: N, d: N) -> Q {
        Q(Rational::from_naturals(n.0, d.0))
    }
    /// n/d (d ≠ 0).
    pub fn from_integers(n: Z, d: Z) -> Q {
        Q(Rational::from_integers(n.0, d.0))
    }
    /// The numerator in lowest terms (signed).
    pub fn numerator(&self) -> Z {
        let n = Integer::from(self.0.numerator_ref());
        Z(if self.0 < 0u32 { -n } else { n })
    }
    /// The denominator in lowest terms (> 0).
    pub fn denominator(&self) -> N {
        N(self.0.denominator_ref().clone())
    }
    /// Whether the denominator is 1.
    pub fn is_integer(&self) -> bool {
        *self.0.denominator_ref() == 1u32
    }
    /// Significant bits of numerator plus denominator (the size the budgets count).
    pub fn bits(&self) -> u64 {
        self.0.numerator_ref().significant_bits() + self.0.denominator_ref().significant_bits()
    }
    /// |q|.
    pub fn abs(&self) -> Q {
        Q((&self.0).abs())
    }
    /// ⌊q⌋.
    pub fn floor(&self) -> Z {
        Z((&self.0).floor())
    }
    /// ⌈q⌉.
    pub fn ceiling(&self) -> Z {
        Z((&self.0).ceiling())
    }
    /// ⌊log₂|q|⌋ for q ≠ 0.
    pub fn floor_log2_abs(&self) -> i64 {
        self.0.floor_log_base_2_abs()
    }
    /// q^e (q ≠ 0 when e < 0).
    pub fn pow(&self, e: i64) -> Q {
        Q((&self.0).pow(e))
    }
    /// √q when it is rational.
    pub fn checked_sqrt(&self) -> Option<Q> {
        (&self.0).checked_sqrt().map(Q)
    }
    /// The multiple of 2^p next to q in direction `r` (`Nearest`: ties to even).
    pub fn round_to_pow2_grid(&self, p: i64, r: Round) -> Q {
        Q((&self.0).round_to_multiple_of_power_of_2(p, mode(r)).0)
    }
    /// q rounded to an `f64` in direction `r`: `Down` gives −∞ below the range and `f64::MAX`
    /// above it, `Up` the mirror, `Nearest` gives ±∞ beyond the range (IEEE round to nearest).
    pub fn to_f64(&self, r: Round) -> f64 {
        f64::rounding_from(&self.0, mode(r)).0
    }
}

impl Z {
    /// |z|.
    pub fn abs(&self) -> Z {
        Z((&self.0).abs())
    }
    /// Significant bits of |z| (0 for 0).
    pub fn bits_abs(&self) -> u64 {
        self.0.unsigned_abs_ref().significant_bits()
    }
    /// ⌊z / 2^b⌋.
    pub fn shr_floor(&self, b: u64) -> Z {
        Z((&self.0).shr_round(b, RM::Floor).0)
    }
    /// ⌈z / 2^b⌉.
    pub fn shr_ceil(&self, b: u64) -> Z {
        Z((&self.0).shr_round(b, RM::Ceiling).0)
    }
    /// ⌊z / d⌋ (d ≠ 0).
    pub fn div_floor(&self, d: &Z) -> Z {
        Z((&self.0).div_round(&d.0, RM::Floor).0)
    }
    /// ⌈z / d⌉ (d ≠ 0).
    pub fn div_ceil(&self, d: &Z) -> Z {
        Z((&self.0).div_round(&d.0, RM::Ceiling).0)
    }
    /// ⌊z·y / 2^b⌋.
    pub fn mul_shr_floor(&self, y: &Z, b: u64) -> Z {
        Z((&self.0).mul_shr_round(&y.0, b, RM::Floor).0)
    }
    /// ⌈z·y / 2^b⌉.
    pub fn mul_shr_ceil(&self, y: &Z, b: u64) -> Z {
        Z((&self.0).mul_shr_round(&y.0, b, RM::Ceiling).0)
    }
    /// ⌊√z⌋ (z ≥ 0).
    pub fn floor_sqrt(&self) -> Z {
        Z((&self.0).floor_sqrt())
    }
    /// ⌈√z⌉ (z ≥ 0).
    pub fn ceiling_sqrt(&self) -> Z {
        Z((&self.0).ceiling_sqrt())
    }
    /// z mod 2^b in [0, 2^b), for b ≤ 64.
    pub fn mod_pow2(&self, b: u64) -> u64 {
        u64::try_from(&(&self.0).mod_power_of_2(b)).expect("residue below 2^64")
    }
}

impl N {
    /// 2^e.
    pub fn power_of_2(e: u64) -> N {
        N(Natural::power_of_2(e))
    }
    /// n^e.
    pub fn pow(&self, e: u64) -> N {
        N((&self.0).pow(e))
    }
    /// Significant bits (0 for 0).
    pub fn bits(&self) -> u64 {
        self.0.significant_bits()
    }
    /// Number of trailing zero bits; `None` for 0.
    pub fn trailing_zeros(&self) -> Option<u64> {
        self.0.trailing_zeros()
    }
}
