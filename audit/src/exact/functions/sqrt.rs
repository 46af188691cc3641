//! Enclosures of √ ([`sqrt`]) by exact integer square roots (a point where the argument is
//! the square of a rational).

use crate::exact::{Interval, Q};

/// Enclosure of `√x` for a rational `x ≥ 0`. Exact (a point) when x is the square of a
/// rational. Otherwise, with `w` chosen so `√x·2^w ≥ 2^(prec+3)`:
/// `floor_sqrt(floor(x·4^w)) ≤ √x·2^w ≤ ceil_sqrt(ceil(x·4^w))` (integer square roots are
/// monotone), giving relative width ≤ 2^-(prec+1).
pub(super) fn sqrt_point(x: &Q, prec: u64) -> Option<Interval> {
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
