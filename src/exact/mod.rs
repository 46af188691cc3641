//! Exact arithmetic: the rational number type, exact parsing of decimal / rational
//! literals, rigorous rational enclosures of transcendental functions
//! ([`interval`], [`functions`]) and rigorous `f64` interval arithmetic ([`float`]).
//!
//! Every other module reaches the exact number type only through [`Q`], [`N`], [`Z`] and
//! the functions of this module (no other module imports a malachite trait), so the
//! big-number library (malachite, LGPL-3.0-only; see `spec/crates.md`) is used in
//! `exact` alone.

pub mod float;
pub mod functions;
pub mod interval;
pub mod number;

pub use interval::Interval;
pub use number::{format_rational, parse_rational, NumberError};

/// The exact rational number type used everywhere.
pub type Q = malachite_q::Rational;
/// Arbitrary-precision natural numbers (numerators / denominators of [`Q`]).
pub type N = malachite_nz::natural::Natural;
/// Arbitrary-precision integers.
pub type Z = malachite_nz::integer::Integer;

use malachite_base::num::arithmetic::traits::{Floor, FloorLogBase2, Pow, PowerOf2};
use malachite_base::num::conversion::traits::RoundingFrom;
use malachite_base::num::logic::traits::SignificantBits;
use malachite_base::rounding_modes::RoundingMode;

/// The size of an exact number: significant bits of its numerator and denominator (what
/// the `--max-bits` and `--max-number-bits` budgets count).
pub fn bits(q: &Q) -> u64 {
    q.numerator_ref().significant_bits() + q.denominator_ref().significant_bits()
}

/// ⌊q⌋.
pub fn floor(q: &Q) -> Q {
    Q::from(q.clone().floor())
}

/// ⌊q⌋ as a `usize`, if q ≥ 0 and it fits.
pub fn floor_usize(q: &Q) -> Option<usize> {
    let n = N::try_from(&q.clone().floor()).ok()?;
    usize::try_from(&n).ok()
}

/// ⌊log₂ q⌋ for q > 0.
pub fn floor_log2(q: &Q) -> i64 {
    q.floor_log_base_2()
}

/// 2^e as a natural number.
pub fn pow2(e: u64) -> N {
    N::power_of_2(e)
}

/// base^e, exactly (e may be negative).
pub fn pow(base: &Q, e: i64) -> Q {
    base.pow(e)
}

/// ⌊q·2^e / d⌋ (or ⌈·⌉ when `up`) for q ≥ 0 and d > 0, in integers: one division, however
/// long q's numerator and denominator are.
pub fn scaled_div(q: &Q, e: i64, d: &N, up: bool) -> N {
    let (mut num, mut den) = (q.numerator_ref().clone(), q.denominator_ref() * d);
    if e >= 0 {
        num <<= e as u64;
    } else {
        den <<= e.unsigned_abs();
    }
    if up {
        num += &den - N::from(1u32);
    }
    num / den
}

/// The largest `f64` that is ≤ `q` (−∞ below the range, `f64::MAX` above it).
pub fn f64_down(q: &Q) -> f64 {
    f64::rounding_from(q, RoundingMode::Floor).0
}

/// The smallest `f64` that is ≥ `q` (+∞ above the range, `-f64::MAX` below it).
pub fn f64_up(q: &Q) -> f64 {
    f64::rounding_from(q, RoundingMode::Ceiling).0
}

/// The `f64` nearest to `q` (ties to even); saturates at ±`f64::MAX`.
pub fn f64_nearest(q: &Q) -> f64 {
    f64::rounding_from(q, RoundingMode::Nearest).0
}

/// The exact rational value of a finite `f64`. Panics on NaN / infinity, which callers
/// rule out first.
pub fn q_from_f64(x: f64) -> Q {
    Q::try_from(x).expect("finite f64")
}

/// The exact sum of `terms` by pairwise (tree) addition: with m terms of b bits and
/// distinct denominators, the left-to-right sum costs Θ(m²·b) (its partial sums grow to
/// m·b bits); the tree costs Θ(m·b·log m).
pub fn sum_tree(mut terms: Vec<Q>) -> Q {
    if terms.is_empty() {
        return Q::from(0u32);
    }
    while terms.len() > 1 {
        let mut next = Vec::with_capacity(terms.len().div_ceil(2));
        let mut it = terms.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => a + b,
                None => a,
            });
        }
        terms = next;
    }
    terms.pop().expect("one term")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_tree_is_the_exact_sum() {
        let terms: Vec<Q> = (1..=37u32).map(|i| Q::from_unsigneds(1u32, i)).collect();
        let plain: Q = terms.iter().sum();
        assert_eq!(sum_tree(terms), plain);
        assert_eq!(sum_tree(vec![]), Q::from(0u32));
    }
}
