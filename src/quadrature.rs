//! Rigorous integrals of smooth functions of one variable: Taylor models in `f64` interval
//! arithmetic (spec/geo.md §2.3).
//!
//! A function is written once against [`Taylor`], truncated Taylor series whose coefficients
//! are [`FI`] intervals: evaluated at the point series of t₀ it gives f(t₀)'s Taylor
//! coefficients f_k = f⁽ᵏ⁾(t₀)/k! (enclosed), evaluated at the series of an interval I it
//! gives enclosures of f_k(ξ) for every ξ ∈ I (automatic differentiation by the recurrences
//! of Moore, *Methods and Applications of Interval Analysis*, 1979, ch. 3). On [a, b] with
//! m ∈ [a, b], Taylor's theorem with Lagrange remainder gives, for K even,
//!
//! ∫_a^b f = Σ_{k<K} f_k(m)·((b−m)^{k+1} − (a−m)^{k+1})/(k+1) + f_K(ξ)·((b−m)^{K+1} − (a−m)^{K+1})/(K+1)
//!
//! with the remainder's factor ≥ 0 (t^K ≥ 0), so f_K(I) times it encloses the remainder:
//! [`integrate`] sums these enclosures over an adaptive partition of [a, b] until the
//! enclosure is as narrow as asked. Every operation rounds outward ([`FI`]), so the result
//! holds the integral whatever the tolerance reached.

use crate::exact::float::FI;

/// Taylor order K (even: the remainder's weight t^K keeps its sign).
pub const ORDER: usize = 12;

/// The coefficients f_0 … f_K of a truncated Taylor series, each an [`FI`].
#[derive(Debug, Clone)]
pub struct Taylor(pub Vec<FI>);

fn zero() -> FI {
    FI::point(0.0)
}

impl Taylor {
    /// The identity function's series at `t` (a point or an interval): t, 1, 0, ….
    pub fn var(t: FI) -> Taylor {
        let mut c = vec![zero(); ORDER + 1];
        c[0] = t;
        c[1] = FI::point(1.0);
        Taylor(c)
    }

    /// A constant's series.
    pub fn constant(x: FI) -> Taylor {
        let mut c = vec![zero(); ORDER + 1];
        c[0] = x;
        Taylor(c)
    }

    /// The value's enclosure (the 0th coefficient).
    pub fn value(&self) -> FI {
        self.0[0]
    }

    pub fn add(&self, o: &Taylor) -> Taylor {
        Taylor(self.0.iter().zip(&o.0).map(|(a, b)| *a + *b).collect())
    }

    pub fn sub(&self, o: &Taylor) -> Taylor {
        Taylor(self.0.iter().zip(&o.0).map(|(a, b)| *a - *b).collect())
    }

    /// Multiplication by a constant.
    pub fn scale(&self, c: FI) -> Taylor {
        Taylor(self.0.iter().map(|a| *a * c).collect())
    }

    /// The Cauchy product, c_k = Σ_i a_i b_{k−i}.
    pub fn mul(&self, o: &Taylor) -> Taylor {
        Taylor(
            (0..=ORDER)
                .map(|k| (0..=k).fold(zero(), |acc, i| acc + self.0[i] * o.0[k - i]))
                .collect(),
        )
    }

    /// q = a/b from b·q = a: q_k = (a_k − Σ_{i=1..k} b_i q_{k−i}) / b_0.
    pub fn div(&self, b: &Taylor) -> Taylor {
        let mut q: Vec<FI> = Vec::with_capacity(ORDER + 1);
        for k in 0..=ORDER {
            let s = (1..=k).fold(self.0[k], |acc, i| acc - b.0[i] * q[k - i]);
            q.push(s.div(b.0[0]));
        }
        Taylor(q)
    }

    /// e = exp(a) from e′ = a′e: e_0 = exp(a_0), e_k = (1/k) Σ_{j=1..k} j·a_j·e_{k−j}.
    pub fn exp(&self) -> Taylor {
        let mut e: Vec<FI> = Vec::with_capacity(ORDER + 1);
        e.push(self.0[0].exp());
        for k in 1..=ORDER {
            let s = (1..=k).fold(zero(), |acc, j| {
                acc + (self.0[j] * e[k - j]).mul_f64(j as f64)
            });
            e.push(s.div(FI::point(k as f64)));
        }
        Taylor(e)
    }

    /// s = √a from s² = a: s_0 = √a_0, s_k = (a_k − Σ_{j=1..k−1} s_j s_{k−j}) / (2 s_0).
    pub fn sqrt(&self) -> Taylor {
        let mut s: Vec<FI> = Vec::with_capacity(ORDER + 1);
        s.push(self.0[0].sqrt());
        let two_s0 = s[0].mul_f64(2.0);
        for k in 1..=ORDER {
            let t = (1..k).fold(self.0[k], |acc, j| acc - s[j] * s[k - j]);
            s.push(t.div(two_s0));
        }
        Taylor(s)
    }
}

/// (b − m)^p − (a − m)^p, enclosed.
fn power_difference(a: f64, b: f64, m: f64, p: usize) -> FI {
    let (hb, ha) = (FI::point(b) - FI::point(m), FI::point(a) - FI::point(m));
    let pow = |x: FI| (0..p).fold(FI::point(1.0), |acc, _| acc * x);
    pow(hb) - pow(ha)
}

/// ∫_a^b f for a ≤ b doubles, on one piece: the Taylor model at the midpoint with the
/// remainder enclosed over [a, b] (module doc). Also the remainder's width, to tell
/// truncation from rounding.
fn piece<F: Fn(&Taylor) -> Taylor>(f: &F, a: f64, b: f64) -> (FI, f64) {
    let m = a + (b - a) / 2.0;
    let at_m = f(&Taylor::var(FI::point(m)));
    let over = f(&Taylor::var(FI::new(a, b)));
    let mut sum = zero();
    // Every k < K, odd ones too: m is a rounded midpoint, so their terms are tiny but not 0.
    for k in 0..ORDER {
        sum = sum + at_m.0[k] * power_difference(a, b, m, k + 1).div(FI::point((k + 1) as f64));
    }
    let weight = power_difference(a, b, m, ORDER + 1).div(FI::point((ORDER + 1) as f64));
    let rest = over.0[ORDER] * FI::new(weight.lo.max(0.0), weight.hi.max(0.0));
    (sum + rest, rest.width())
}

/// How deep [`integrate`] bisects before it keeps a piece's enclosure as it is.
const MAX_DEPTH: u32 = 40;

/// An enclosure of ∫_a^b f (a ≤ b, finite doubles), bisecting each piece until its
/// enclosure's width is at most `abs_tol` times its share (b′ − a′)/(b − a) of the range,
/// or until rounding rather than truncation makes most of the width (bisecting would not
/// narrow it), or the depth limit; the enclosure holds either way, only its width depends on
/// the tolerance. `f` must be defined (finite) on [a, b].
pub fn integrate<F: Fn(&Taylor) -> Taylor>(f: &F, a: f64, b: f64, abs_tol: f64) -> FI {
    if a >= b {
        return zero();
    }
    let per_unit = abs_tol / (b - a);
    let mut total = zero();
    let mut stack = vec![(a, b, 0u32)];
    while let Some((lo, hi, depth)) = stack.pop() {
        let (e, truncation) = piece(f, lo, hi);
        let mid = lo + (hi - lo) / 2.0;
        let narrow = e.width() <= per_unit * (hi - lo);
        let rounding = e.width().is_finite() && truncation <= 0.1 * e.width();
        if narrow || rounding || depth >= MAX_DEPTH || mid <= lo || mid >= hi {
            total = total + e;
        } else {
            stack.push((mid, hi, depth + 1));
            stack.push((lo, mid, depth + 1));
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomials_and_exponentials_are_enclosed_tightly() {
        // ∫_0^1 t² = 1/3; ∫_0^2 e^{−t} = 1 − e^{−2}; ∫_0^1 √(1+t) = (2/3)(2√2 − 1);
        // ∫_0^1 1/(1+t²) = π/4.
        let cases: Vec<(Box<dyn Fn(&Taylor) -> Taylor>, f64, f64, f64)> = vec![
            (Box::new(|t: &Taylor| t.mul(t)), 0.0, 1.0, 1.0 / 3.0),
            (
                Box::new(|t: &Taylor| t.scale(FI::point(-1.0)).exp()),
                0.0,
                2.0,
                1.0 - (-2.0f64).exp(),
            ),
            (
                Box::new(|t: &Taylor| t.add(&Taylor::constant(FI::point(1.0))).sqrt()),
                0.0,
                1.0,
                2.0 / 3.0 * (2.0 * 2f64.sqrt() - 1.0),
            ),
            (
                Box::new(|t: &Taylor| {
                    Taylor::constant(FI::point(1.0))
                        .div(&t.mul(t).add(&Taylor::constant(FI::point(1.0))))
                }),
                0.0,
                1.0,
                std::f64::consts::FRAC_PI_4,
            ),
        ];
        for (f, a, b, want) in cases {
            let e = integrate(&f, a, b, 1e-14);
            assert!(
                e.lo <= want + 4e-16 && want - 4e-16 <= e.hi,
                "{e:?} vs {want}"
            );
            assert!(e.width() < 1e-13, "{e:?}");
        }
    }

    #[test]
    fn a_loose_tolerance_still_encloses() {
        // ∫_0^½ e^{t³} = Σ_n (½)^{3n+1} / (n!·(3n+1)).
        let want: f64 = (0..20)
            .map(|n| {
                let fact: f64 = (1..=n).map(|i| i as f64).product();
                0.5f64.powi(3 * n + 1) / (fact * (3 * n + 1) as f64)
            })
            .sum();
        let f = |t: &Taylor| t.mul(t).mul(t).exp();
        for tol in [1.0, 1e-6, 1e-15] {
            let e = integrate(&f, 0.0, 0.5, tol);
            assert!(
                e.lo <= want + 2e-16 && want - 2e-16 <= e.hi,
                "{tol}: {e:?} vs {want}"
            );
        }
    }
}
