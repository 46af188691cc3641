//! Exact arithmetic: the rational number type, exact parsing of decimal / rational
//! literals, rigorous rational enclosures of transcendental functions
//! ([`interval`], [`functions`]) and rigorous `f64` interval arithmetic ([`float`]).
//!
//! The crate reaches big numbers only through [`Q`], [`N`], [`Z`] (newtypes defined in the
//! private `backend` module over malachite, the default, or num-rational under the `num`
//! feature; see `spec/crates.md`) and the functions of this module.

mod backend;
pub mod float;
pub mod functions;
pub mod interval;
pub mod number;

pub use backend::{Round, Signed, Unsigned, N, Q, Z};
pub use interval::Interval;
pub use number::{format_rational, parse_rational, NumberError};

/// The size of an exact number: significant bits of its numerator and denominator (what
/// the `--max-bits` and `--max-number-bits` budgets count).
pub fn bits(q: &Q) -> u64 {
    q.bits()
}

/// ⌊q⌋.
pub fn floor(q: &Q) -> Q {
    Q::from(q.floor())
}

/// ⌊q⌋ as a `usize`, if q ≥ 0 and it fits.
pub fn floor_usize(q: &Q) -> Option<usize> {
    let n = N::try_from(&q.floor()).ok()?;
    usize::try_from(&n).ok()
}

/// ⌊q·2^e / d⌋ (or ⌈·⌉ when `up`) for q ≥ 0 and d > 0, in integers: one division, however
/// long q's numerator and denominator are.
pub fn scaled_div(q: &Q, e: i64, d: &N, up: bool) -> N {
    let num = N::try_from(&q.numerator()).expect("q ≥ 0");
    let (mut num, mut den) = (num, q.denominator() * d);
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
    q.to_f64(Round::Down)
}

/// The smallest `f64` that is ≥ `q` (+∞ above the range, `-f64::MAX` below it).
pub fn f64_up(q: &Q) -> f64 {
    q.to_f64(Round::Up)
}

/// The `f64` nearest to `q` (ties to even); ±∞ beyond the range.
pub fn f64_nearest(q: &Q) -> f64 {
    q.to_f64(Round::Nearest)
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

    #[test]
    fn floors_and_scaled_divisions_are_exact() {
        let q = |a: i64, b: i64| Q::from_signeds(a, b);
        assert_eq!(floor(&q(7, 2)), q(3, 1));
        assert_eq!(floor(&q(-7, 2)), q(-4, 1));
        assert_eq!(floor_usize(&q(7, 2)), Some(3));
        assert_eq!(floor_usize(&q(-1, 2)), None);
        assert_eq!(floor_usize(&(Q::from(1u32) << 70u64)), None);
        assert_eq!(bits(&q(-5, 12)), 3 + 4);
        // ⌊(5/3)·2³/7⌋ = ⌊40/21⌋ = 1, ⌈·⌉ = 2; ⌊(5/3)·2⁻²/1⌋ = 0, ⌈·⌉ = 1; exact quotients stay
        let n = |x: u32| N::from(x);
        assert_eq!(scaled_div(&q(5, 3), 3, &n(7), false), n(1));
        assert_eq!(scaled_div(&q(5, 3), 3, &n(7), true), n(2));
        assert_eq!(scaled_div(&q(5, 3), -2, &n(1), false), n(0));
        assert_eq!(scaled_div(&q(5, 3), -2, &n(1), true), n(1));
        assert_eq!(scaled_div(&q(21, 2), 1, &n(7), true), n(3));
        assert_eq!(scaled_div(&q(21, 2), 1, &n(7), false), n(3));
    }

    #[test]
    fn doubles_are_bounds_in_their_direction() {
        let third = Q::from_signeds(1, 3);
        let (d, u, m) = (f64_down(&third), f64_up(&third), f64_nearest(&third));
        assert!(q_from_f64(d) < third && third < q_from_f64(u));
        assert_eq!(crate::exact::float::next_up(d), u);
        assert_eq!(m, 1.0 / 3.0);
        assert_eq!(f64_down(&Q::from(3u32)), 3.0);
        assert_eq!(f64_up(&Q::from(3u32)), 3.0);
        assert_eq!(q_from_f64(0.75), Q::from_signeds(3, 4));
    }
}
