//! The constants ln 2 (`2·atanh(1/3)`) and π (Machin's formula) as enclosures on the grid
//! 2^-w, by series with rigorous tail bounds, each computed once per precision level and
//! cached ([`ln2`], [`pi`]).

use super::fixed::{div_c, div_f, pow2, zero, Fx};
use crate::exact::{Interval, Z};
use std::sync::Mutex;

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

pub(super) fn ln2_fx(w: u64) -> Fx {
    cached(&LN2_CACHE, w, compute_ln2)
}
pub(super) fn pi_fx(w: u64) -> Fx {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{parse_rational, Q};

    /// `[c, c + 10⁻⁶⁰]` for the first 60 decimals `c` of a constant (mpmath at 80 digits):
    /// the constant lies there, and 10⁻⁶⁰ < 2⁻¹⁹⁹ is finer than every grid tried below.
    fn truth(c60: &str) -> Interval {
        let c = parse_rational(c60).unwrap();
        let ulp = parse_rational("1e-60").unwrap();
        Interval::new(c.clone(), c + ulp)
    }

    /// The series themselves on every grid 2⁻ʷ, w ≤ 190, not through the cache (which
    /// computes at least 64 bits finer and rounds outward, so a lost tail term or rounding
    /// would hide there): each enclosure meets the constant's 10⁻⁶⁰-wide enclosure.
    #[test]
    fn the_series_enclose_their_constants_on_every_grid() {
        let atanh3 = truth("0.346573590279972654708616060729088284037750067180127627060340");
        let atan5 = truth("0.197395559849880758370049765194790293447585103787852101517688");
        let atan239 = truth("0.004184076002074723864538214959285452741048065307631950827019");
        let ln2c = truth("0.693147180559945309417232121458176568075500134360255254120680");
        let pic = truth("3.141592653589793238462643383279502884197169399375105820974944");
        for w in 1..=190u64 {
            for (name, got, want) in [
                ("atanh(1/3)", atanh_inv(3, w), &atanh3),
                ("atan(1/5)", atan_inv(5, w), &atan5),
                ("atan(1/239)", atan_inv(239, w), &atan239),
                ("ln 2", compute_ln2(w), &ln2c),
                ("π", compute_pi(w), &pic),
            ] {
                let got = got.to_interval(w);
                assert!(got.lo <= got.hi, "{name} at 2^-{w}: empty");
                assert!(
                    got.intersect(want).is_some(),
                    "{name} at 2^-{w}: {got:?} misses the constant"
                );
                // The width the tail bounds promise: a few ulps of the grid.
                assert!(
                    got.width() <= Q::from(64u32) >> w,
                    "{name} at 2^-{w}: too wide"
                );
            }
        }
    }

    /// The public, cached forms meet the same enclosures and the width they promise, asked
    /// for in an order that makes the cache serve a coarser request from a finer entry, and
    /// last a finer one than any test asks elsewhere (a cache that served it would be too wide).
    #[test]
    fn the_cached_constants_are_enclosures_of_the_promised_width() {
        let ln2c = truth("0.693147180559945309417232121458176568075500134360255254120680");
        let pic = truth("3.141592653589793238462643383279502884197169399375105820974944");
        for prec in [190u64, 3, 64, 100, 1, 180, 129, 5000] {
            let (l, p) = (ln2(prec), pi(prec));
            assert!(l.intersect(&ln2c).is_some() && p.intersect(&pic).is_some());
            let ulp = Q::from(1u32) >> prec;
            assert!(l.width() <= ulp && p.width() <= ulp, "prec {prec}");
        }
    }
}
