//! Rigorous enclosures of elementary functions with rational end points.
//!
//! # Contract
//!
//! Every public function returns an [`Interval`](super::Interval) that contains `f(t)` for **every** `t` in the
//! input interval (or for the exact rational inputs given). For a point input the width is at
//! most about `2^-prec · max(1, |f|)`: absolute for values below 1, relative above.
//!
//! # How soundness is obtained
//!
//! Internally all series are evaluated in *fixed-point interval arithmetic*: a private type
//! `Fx { lo, hi }` of two integers represents the interval `[lo·2^-w, hi·2^-w]` for a working
//! precision `w` chosen by the caller. Every operation on `Fx` computes the exact result of
//! the corresponding real interval operation and then rounds the lower end **down** (floor)
//! and the upper end **up** (ceiling) to the `2^-w` grid — exactly what
//! [`Interval::round_outward`](super::Interval::round_outward) does for rational intervals, but on integers so that no gcd
//! is ever computed. By induction every `Fx` value contains the real quantity it stands for.
//! Helpers used everywhere:
//!
//! * `floor(floor(x)/d) = floor(x/d)` and `ceil(ceil(x)/d) = ceil(x/d)` for integers `d > 0`,
//!   so chains of one-sided roundings of non-negative quantities stay one-sided;
//! * a truncated Taylor series is enclosed by adding `[−E, E]` where `E` is a rigorous upper
//!   bound (computed with ceilings) of the Lagrange remainder or of the first omitted term of
//!   an alternating series;
//! * an interval argument `[a, b]` of a function with `|f'| ≤ L` on it is handled by
//!   evaluating at the exact point `a` and widening by `L·(b − a)` (mean value theorem).
//!
//! No `f64` transcendental function (libm) is used anywhere. `f64` appears only to *choose*
//! reduction parameters (e.g. `k ≈ x/ln 2`); any choice is sound, only speed depends on it.
//!
//! The constants ln 2 and π are computed once per precision level by the series
//! `ln 2 = 2·atanh(1/3)` and Machin's formula, and cached (an enclosure rounded outward to a
//! coarser grid is still an enclosure, so a high-precision cache serves every lower request).
//!
//! The parts: fixed-point interval arithmetic (`fixed`), the cached constants ln 2 and π
//! (`constants`), [`exp`] and [`ln`] (`exp_ln`), [`sqrt()`] (`sqrt`), [`sin`], [`cos`],
//! [`atan`], [`asin`] and their π-unit forms (`trig`), the haversine distance and chord
//! unit vectors (`geodesy`); the refinement driver [`refine`] is here.

mod constants;
mod exp_ln;
mod fixed;
mod geodesy;
mod sqrt;
mod trig;

pub use constants::{ln2, pi};
pub use exp_ln::{exp, exp_checked, ln, EXP_MAX_ARG};
pub use geodesy::{chord_unit_vector, haversine};
pub use sqrt::sqrt;
pub use trig::{asin, atan, cos, cos_pi, sin, sin_pi};

/// Call `f(prec)` for `prec = start, 2·start, 4·start, …` (the last try is exactly
/// `max_prec`) until it returns `Some`; `None` if even `max_prec` does not decide.
pub fn refine<T>(start_prec: u64, max_prec: u64, mut f: impl FnMut(u64) -> Option<T>) -> Option<T> {
    let mut p = start_prec.max(1).min(max_prec.max(1));
    loop {
        if let Some(v) = f(p) {
            return Some(v);
        }
        if p >= max_prec {
            return None;
        }
        p = p.saturating_mul(2).min(max_prec);
    }
}

#[cfg(test)]
mod tests;
