//! The num backend (`--no-default-features --features num`): [`Q`], [`Z`], [`N`] over
//! num-rational / num-bigint (MIT/Apache-2.0). Same API and contract as the malachite
//! backend; the directed roundings are written out here from exact integer division.

use super::{binops, common, newtype_ops, Round, Signed, Unsigned};
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer as _;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::str::FromStr;

/// An exact rational number (always in lowest terms, denominator > 0).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Q(BigRational);
/// An arbitrary-precision integer.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Z(BigInt);
/// An arbitrary-precision natural number.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct N(BigUint);

/// Comparisons with primitive literals (through the big value of the literal).
macro_rules! cmp_prim {
    ($T:ident: $($p:ty),*) => {$(
        impl PartialEq<$p> for $T {
            #[inline]
            #[allow(clippy::cmp_owned)] // num has no comparison with primitives
            fn eq(&self, o: &$p) -> bool {
                *self == $T::from(*o)
            }
        }
        impl PartialOrd<$p> for $T {
            #[inline]
            fn partial_cmp(&self, o: &$p) -> Option<std::cmp::Ordering> {
                Some(self.cmp(&$T::from(*o)))
            }
        }
    )*};
}

newtype_ops!();

macro_rules! from_prim {
    ($($p:ty),*) => {$(
        impl From<$p> for Q {
            #[inline]
            fn from(x: $p) -> Q {
                Q(BigRational::from_integer(BigInt::from(x)))
            }
        }
        impl From<$p> for Z {
            #[inline]
            fn from(x: $p) -> Z {
                Z(BigInt::from(x))
            }
        }
    )*};
}
from_prim!(u8, u32, u64, usize, i32, i64);
macro_rules! from_unsigned {
    ($($p:ty),*) => {$(
        impl From<$p> for N {
            #[inline]
            fn from(x: $p) -> N {
                N(BigUint::from(x))
            }
        }
    )*};
}
from_unsigned!(u8, u32, u64, usize);

impl From<Z> for Q {
    fn from(z: Z) -> Q {
        Q(BigRational::from_integer(z.0))
    }
}
impl From<&Z> for Q {
    fn from(z: &Z) -> Q {
        Q(BigRational::from_integer(z.0.clone()))
    }
}
impl From<N> for Q {
    fn from(n: N) -> Q {
        Q(BigRational::from_integer(BigInt::from(n.0)))
    }
}
impl From<&N> for Q {
    fn from(n: &N) -> Q {
        Q(BigRational::from_integer(BigInt::from(n.0.clone())))
    }
}
impl From<N> for Z {
    fn from(n: N) -> Z {
        Z(BigInt::from(n.0))
    }
}
impl TryFrom<f64> for Q {
    type Error = ();
    /// The exact value of a finite `f64`; `Err` on NaN and ±∞.
    fn try_from(x: f64) -> Result<Q, ()> {
        if !x.is_finite() {
            return Err(());
        }
        BigRational::from_float(x).map(Q).ok_or(())
    }
}
impl TryFrom<&Z> for N {
    type Error = ();
    fn try_from(z: &Z) -> Result<N, ()> {
        z.0.to_biguint().map(N).ok_or(())
    }
}
impl TryFrom<&N> for usize {
    type Error = ();
    fn try_from(n: &N) -> Result<usize, ()> {
        n.0.to_usize().ok_or(())
    }
}
impl TryFrom<&N> for u64 {
    type Error = ();
    fn try_from(n: &N) -> Result<u64, ()> {
        n.0.to_u64().ok_or(())
    }
}
impl TryFrom<&Z> for i64 {
    type Error = ();
    fn try_from(z: &Z) -> Result<i64, ()> {
        z.0.to_i64().ok_or(())
    }
}
impl FromStr for N {
    type Err = ();
    /// Decimal digits only.
    fn from_str(s: &str) -> Result<N, ()> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(());
        }
        BigUint::from_str(s).map(N).map_err(|_| ())
    }
}

/// q·2^k in lowest terms without a gcd: a reduced fraction with an even denominator has an
/// odd numerator, so only powers of two can cancel.
fn scale2(q: &BigRational, k: i64) -> BigRational {
    let (n, d) = (q.numer(), q.denom());
    if n.is_zero() || k == 0 {
        return q.clone();
    }
    let k_abs = k.unsigned_abs();
    if k > 0 {
        let s = d.trailing_zeros().unwrap_or(0).min(k_abs);
        BigRational::new_raw(n << (k_abs - s), d >> s)
    } else {
        let s = n.trailing_zeros().unwrap_or(0).min(k_abs);
        BigRational::new_raw(n >> s, d << (k_abs - s))
    }
}

macro_rules! shifts_q {
    ($($p:ty),*) => {$(
        impl std::ops::Shl<$p> for Q {
            type Output = Q;
            fn shl(self, k: $p) -> Q {
                Q(scale2(&self.0, k as i64))
            }
        }
        impl std::ops::Shl<$p> for &Q {
            type Output = Q;
            fn shl(self, k: $p) -> Q {
                Q(scale2(&self.0, k as i64))
            }
        }
        impl std::ops::Shr<$p> for Q {
            type Output = Q;
            fn shr(self, k: $p) -> Q {
                Q(scale2(&self.0, -(k as i64)))
            }
        }
        impl std::ops::Shr<$p> for &Q {
            type Output = Q;
            fn shr(self, k: $p) -> Q {
                Q(scale2(&self.0, -(k as i64)))
            }
        }
        impl std::ops::ShlAssign<$p> for Q {
            fn shl_assign(&mut self, k: $p) {
                self.0 = scale2(&self.0, k as i64)
            }
        }
        impl std::ops::ShrAssign<$p> for Q {
            fn shr_assign(&mut self, k: $p) {
                self.0 = scale2(&self.0, -(k as i64))
            }
        }
    )*};
}
shifts_q!(u64, i64);

impl std::ops::Shl<u64> for Z {
    type Output = Z;
    fn shl(self, k: u64) -> Z {
        Z(self.0 << k)
    }
}
impl std::ops::Shl<u64> for &Z {
    type Output = Z;
    fn shl(self, k: u64) -> Z {
        Z(&self.0 << k)
    }
}
impl std::ops::ShlAssign<u64> for Z {
    fn shl_assign(&mut self, k: u64) {
        self.0 <<= k
    }
}
impl std::ops::Shr<u64> for Z {
    type Output = Z;
    /// ⌊z / 2^k⌋ (as malachite).
    fn shr(self, k: u64) -> Z {
        self.shr_floor(k)
    }
}
impl std::ops::Shr<u64> for &Z {
    type Output = Z;
    fn shr(self, k: u64) -> Z {
        self.shr_floor(k)
    }
}
impl std::ops::ShrAssign<u64> for Z {
    fn shr_assign(&mut self, k: u64) {
        *self = self.shr_floor(k)
    }
}
impl std::ops::Shl<u64> for N {
    type Output = N;
    fn shl(self, k: u64) -> N {
        N(self.0 << k)
    }
}
impl std::ops::Shl<u64> for &N {
    type Output = N;
    fn shl(self, k: u64) -> N {
        N(&self.0 << k)
    }
}
impl std::ops::Shr<u64> for N {
    type Output = N;
    fn shr(self, k: u64) -> N {
        N(self.0 >> k)
    }
}
impl std::ops::Shr<u64> for &N {
    type Output = N;
    fn shr(self, k: u64) -> N {
        N(&self.0 >> k)
    }
}
impl std::ops::ShlAssign<u64> for N {
    fn shl_assign(&mut self, k: u64) {
        self.0 <<= k
    }
}
impl std::ops::ShrAssign<u64> for N {
    fn shr_assign(&mut self, k: u64) {
        self.0 >>= k
    }
}

fn pow2(k: u64) -> BigInt {
    BigInt::one() << k
}

/// ⌊log₂(n/d)⌋ for n, d > 0.
fn floor_log2(n: &BigUint, d: &BigUint) -> i64 {
    let e = n.bits() as i64 - d.bits() as i64;
    let below = if e >= 0 {
        *n < (d << e as u64)
    } else {
        (n << e.unsigned_abs()) < *d
    };
    if below {
        e - 1
    } else {
        e
    }
}

/// 2^k as an `f64`, for −1074 ≤ k ≤ 1023.
fn pow2_f64(k: i64) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// n/d > 0 rounded to `f64` in direction `r` (for `Down`/`Up` as if the value were positive).
fn positive_to_f64(n: &BigUint, d: &BigUint, r: Round) -> f64 {
    let e = floor_log2(n, d);
    let overflow = if r == Round::Down {
        f64::MAX
    } else {
        f64::INFINITY
    };
    if e > 1023 {
        return overflow;
    }
    // Keep the bits down to 2^(max(e, −1022) − 52): 53 for normal results, fewer for subnormal.
    let lsb = e.max(-1022) - 52;
    let (num, den) = if lsb <= 0 {
        (n << lsb.unsigned_abs(), d.clone())
    } else {
        (n.clone(), d << lsb as u64)
    };
    let (mut m, rem) = num.div_rem(&den);
    let up = match r {
        Round::Down => false,
        Round::Up => !rem.is_zero(),
        Round::Nearest => match (rem << 1u32).cmp(&den) {
            Ordering::Greater => true,
            Ordering::Equal => m.bit(0),
            Ordering::Less => false,
        },
    };
    if up {
        m += 1u32;
    }
    let m = m.to_u64().expect("at most 2^53");
    // m·2^lsb is representable (m ≤ 2^53, lsb ≥ −1074) unless it rounded past f64::MAX.
    if lsb + 64 - m.leading_zeros() as i64 > 1024 {
        return overflow;
    }
    if lsb >= -1022 {
        m as f64 * pow2_f64(lsb)
    } else {
        (m as f64 * pow2_f64(lsb + 200)) * pow2_f64(-200)
    }
}

impl Q {
    /// n/d for unsigned primitives (d ≠ 0).
    pub fn from_unsigneds<T: Unsigned>(n: T, d: T) -> Q {
        Q(BigRational::new(
            BigInt::from(n.to_u64()),
            BigInt::from(d.to_u64()),
        ))
    }
    /// n/d for signed primitives (d ≠ 0).
    pub fn from_signeds<T: Signed>(n: T, d: T) -> Q {
        Q(BigRational::new(
            BigInt::from(n.to_i64()),
            BigInt::from(d.to_i64()),
        ))
    }
    /// n/d (d ≠ 0).
    pub fn from_naturals(n: N, d: N) -> Q {
        Q(BigRational::new(BigInt::from(n.0), BigInt::from(d.0)))
    }
    /// n/d (d ≠ 0).
    pub fn from_integers(n: Z, d: Z) -> Q {
        Q(BigRational::new(n.0, d.0))
    }
    /// The numerator in lowest terms (signed).
    pub fn numerator(&self) -> Z {
        Z(self.0.numer().clone())
    }
    /// The denominator in lowest terms (> 0).
    pub fn denominator(&self) -> N {
        N(self.0.denom().magnitude().clone())
    }
    /// Whether the denominator is 1.
    pub fn is_integer(&self) -> bool {
        self.0.denom().is_one()
    }
    /// Significant bits of numerator plus denominator (the size the budgets count).
    pub fn bits(&self) -> u64 {
        self.0.numer().bits() + self.0.denom().bits()
    }
    /// |q|.
    pub fn abs(&self) -> Q {
        if self.0.numer().sign() == Sign::Minus {
            Q(-&self.0)
        } else {
            self.clone()
        }
    }
    /// ⌊q⌋.
    pub fn floor(&self) -> Z {
        Z(self.0.numer().div_floor(self.0.denom()))
    }
    /// ⌈q⌉.
    pub fn ceiling(&self) -> Z {
        Z(-((-self.0.numer()).div_floor(self.0.denom())))
    }
    /// ⌊log₂|q|⌋ for q ≠ 0.
    pub fn floor_log2_abs(&self) -> i64 {
        floor_log2(self.0.numer().magnitude(), self.0.denom().magnitude())
    }
    /// q^e (q ≠ 0 when e < 0).
    pub fn pow(&self, e: i64) -> Q {
        let k = u32::try_from(e.unsigned_abs()).expect("exponent below 2^32");
        let (n, d) = (self.0.numer().pow(k), self.0.denom().pow(k));
        if e >= 0 {
            Q(BigRational::new_raw(n, d))
        } else {
            Q(BigRational::new(d, n))
        }
    }
    /// √q when it is rational.
    pub fn checked_sqrt(&self) -> Option<Q> {
        if self.0.numer().sign() == Sign::Minus {
            return None;
        }
        let (n, d) = (self.0.numer(), self.0.denom());
        let (a, b) = (n.sqrt(), d.sqrt());
        (&a * &a == *n && &b * &b == *d).then(|| Q(BigRational::new_raw(a, b)))
    }
    /// The multiple of 2^p next to q in direction `r` (`Nearest`: ties to even).
    pub fn round_to_pow2_grid(&self, p: i64, r: Round) -> Q {
        let s = self >> p;
        let k = match r {
            Round::Down => s.floor(),
            Round::Up => s.ceiling(),
            Round::Nearest => {
                let f = s.floor();
                match (&s - Q::from(f.clone()))
                    .0
                    .cmp(&BigRational::new_raw(1.into(), 2.into()))
                {
                    Ordering::Greater => f + Z::from(1u32),
                    Ordering::Equal if f.0.is_odd() => f + Z::from(1u32),
                    _ => f,
                }
            }
        };
        Q::from(k) << p
    }
    /// q rounded to an `f64` in direction `r`: `Down` gives −∞ below the range and `f64::MAX`
    /// above it, `Up` the mirror, `Nearest` gives ±∞ beyond the range (IEEE round to nearest).
    pub fn to_f64(&self, r: Round) -> f64 {
        let (n, d) = (self.0.numer().magnitude(), self.0.denom().magnitude());
        match self.0.numer().sign() {
            Sign::NoSign => 0.0,
            Sign::Plus => positive_to_f64(n, d, r),
            Sign::Minus => {
                let mirrored = match r {
                    Round::Down => Round::Up,
                    Round::Up => Round::Down,
                    Round::Nearest => Round::Nearest,
                };
                -positive_to_f64(n, d, mirrored)
            }
        }
    }
}

impl Z {
    /// |z|.
    pub fn abs(&self) -> Z {
        Z(num_traits::Signed::abs(&self.0))
    }
    /// Significant bits of |z| (0 for 0).
    pub fn bits_abs(&self) -> u64 {
        self.0.bits()
    }
    /// ⌊z / 2^b⌋.
    pub fn shr_floor(&self, b: u64) -> Z {
        Z(self.0.div_floor(&pow2(b)))
    }
    /// ⌈z / 2^b⌉.
    pub fn shr_ceil(&self, b: u64) -> Z {
        Z(-((-&self.0).div_floor(&pow2(b))))
    }
    /// ⌊z / d⌋ (d ≠ 0).
    pub fn div_floor(&self, d: &Z) -> Z {
        Z(self.0.div_floor(&d.0))
    }
    /// ⌈z / d⌉ (d ≠ 0).
    pub fn div_ceil(&self, d: &Z) -> Z {
        Z(-((-&self.0).div_floor(&d.0)))
    }
    /// ⌊z·y / 2^b⌋.
    pub fn mul_shr_floor(&self, y: &Z, b: u64) -> Z {
        (self * y).shr_floor(b)
    }
    /// ⌈z·y / 2^b⌉.
    pub fn mul_shr_ceil(&self, y: &Z, b: u64) -> Z {
        (self * y).shr_ceil(b)
    }
    /// ⌊√z⌋ (z ≥ 0).
    pub fn floor_sqrt(&self) -> Z {
        Z(self.0.sqrt())
    }
    /// ⌈√z⌉ (z ≥ 0).
    pub fn ceiling_sqrt(&self) -> Z {
        let s = self.0.sqrt();
        if &s * &s == self.0 {
            Z(s)
        } else {
            Z(s + 1u32)
        }
    }
    /// z mod 2^b in [0, 2^b), for b ≤ 64.
    pub fn mod_pow2(&self, b: u64) -> u64 {
        self.0
            .mod_floor(&pow2(b))
            .to_u64()
            .expect("residue below 2^64")
    }
}

impl N {
    /// 2^e.
    pub fn power_of_2(e: u64) -> N {
        N(BigUint::one() << e)
    }
    /// n^e.
    pub fn pow(&self, e: u64) -> N {
        N(self.0.pow(u32::try_from(e).expect("exponent below 2^32")))
    }
    /// Significant bits (0 for 0).
    pub fn bits(&self) -> u64 {
        self.0.bits()
    }
    /// Number of trailing zero bits; `None` for 0.
    pub fn trailing_zeros(&self) -> Option<u64> {
        self.0.trailing_zeros()
    }
}
