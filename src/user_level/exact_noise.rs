//! Float-safe K-norm noise for PrivEMDLinear's releases (`spec/user-level.md` §3.1): the
//! released value is round_h(q + Z), the exact query value plus the *real-valued* K-norm
//! noise Z (density ∝ exp(−‖z‖/θ)), rounded to the grid hℤ — sampled exactly.
//!
//! **Why it is private.** round_h is a fixed, data-independent map, so the output is a
//! post-processing of the ideal mechanism q + Z of Lemma 4.2: the same α, δ = 0. The
//! floating-point attacks on Laplace-type noise (Mironov 2012, CCS: the low bits of a
//! float sample reveal the input) need the released value's law to differ from the ideal
//! one; here it is the ideal one, pushed through round_h (and then through the rounding to
//! the nearest double for printing, another fixed map).
//!
//! **How it is exact.** Z is a function F(U) of i.i.d. uniforms and sign bits:
//! E_j = −ln(1 − U_j) ~ Exp(1);
//! * ℓ1: Z_i = θ·S_i·E_i (a product of Laplace laws, ∝ exp(−‖z‖₁/θ));
//! * ℓ∞: Z_i = θ·G·(2V_i − 1), G = E_0 + … + E_d ~ Gamma(d + 1), V uniform in the cube
//!   (Hardt–Talwar: R·U with R ~ Gamma(d+1, θ) and U uniform in the unit ball of the norm
//!   has density ∝ exp(−‖z‖/θ));
//! * ℓ2: Z = θ·G′·X/‖X‖, G′ = E_1 + … + E_d ~ Gamma(d) (the radial law of a density
//!   ∝ exp(−‖z‖₂/θ) in d dimensions is ∝ r^{d−1}e^{−r/θ}) and X standard normal by
//!   Marsaglia's polar method (pairs (V₁, V₂) uniform in the unit disk by exact rejection
//!   from the square, X = V·√(−2 ln s/s), s = V₁² + V₂²): no rejection in d dimensions,
//!   so any d.
//!
//! Each uniform is known as a dyadic interval, refined 64 random bits
//! at a time (`Lazy`, the argument of `privatize::ExactRow`); F is enclosed by rational
//! interval arithmetic (`exact::functions::ln`, directed rounding), and a coordinate is
//! decided once both ends of q_i + Z_i round to the same grid point. round_h is monotone,
//! so a decided point is round_h(q_i + F(U)) for the uniforms' exact values; the grid's
//! boundaries are a null set, so every coordinate is decided after finitely many
//! refinements with probability 1. The output's law is exactly that of round_h(q + Z).
//! (The OpenDP library samples its continuous Laplace the same way; timing side channels
//! are out of scope, `spec/threat-model.md`.)

use super::priv_emd_linear::Norm;
use crate::exact::float::{next_down, next_up, FI};
use crate::exact::{functions, Interval, Q};
use rand::{Rng, RngCore};

/// The grid is 2⁻⁴⁰ of the noise scale (rounded down to a power of two): rounding moves a
/// coordinate by at most θ·2⁻⁴¹, far below the noise.
const GRID_BELOW_SCALE: i64 = 40;

/// The grid step h for noise scale θ > 0: 2^{⌊log₂ θ⌋ − 40}. It depends on θ only (public:
/// l, α and n), never on the data.
pub fn grid(theta: &Q) -> Q {
    pow2(theta.floor_log2_abs() - GRID_BELOW_SCALE)
}

fn pow2(k: i64) -> Q {
    if k >= 0 {
        Q::from(1u32) << k
    } else {
        Q::from(1u32) >> (-k)
    }
}

/// A uniform U ∈ [0, 1) known to lie in [lo, lo + 2^{−bits}), refined by fresh random bits
/// (also the exact Gumbel-max's uniforms, [`crate::privatize::gumbel`]).
#[derive(Clone, Debug)]
pub(crate) struct Lazy {
    lo: Q,
    bits: i64,
}

impl Lazy {
    fn new<R: RngCore + ?Sized>(rng: &mut R) -> Lazy {
        Lazy::of_word(rng.next_u64())
    }

    /// The uniform after its first 64 random bits `w`: [w·2⁻⁶⁴, (w + 1)·2⁻⁶⁴).
    pub(crate) fn of_word(w: u64) -> Lazy {
        Lazy {
            lo: Q::from(w) >> 64u64,
            bits: 64,
        }
    }

    pub(crate) fn refine<R: RngCore + ?Sized>(&mut self, rng: &mut R) {
        self.bits += 64;
        self.lo += Q::from(rng.next_u64()) >> self.bits;
    }

    pub(crate) fn interval(&self) -> Interval {
        Interval::new(self.lo.clone(), &self.lo + pow2(-self.bits))
    }

    /// An `f64` enclosure of [`Self::interval`].
    pub(crate) fn fi(&self) -> FI {
        FI::from_interval(&self.interval())
    }
}

/// An enclosure of −ln(1 − U) (increasing in U); `None` while 1 − U may be 0.
fn exponential(u: &Lazy, prec: u64) -> Option<Interval> {
    let one = Q::from(1u32);
    let v = u.interval();
    let lo = &one - &v.hi;
    if lo <= 0u32 {
        return None;
    }
    let ln = functions::ln(&Interval::new(lo, &one - &v.lo), prec)?;
    Some(ln.neg())
}

/// An enclosure of 2U − 1 ∈ [−1, 1).
fn centered(u: &Lazy) -> Interval {
    let v = u.interval();
    Interval::new(
        Q::from(2u32) * &v.lo - Q::from(1u32),
        Q::from(2u32) * &v.hi - Q::from(1u32),
    )
}

/// min and max of x² over an interval.
fn square_range(x: &Interval) -> (Q, Q) {
    let (a, b) = (&x.lo * &x.lo, &x.hi * &x.hi);
    let max = if a > b { a.clone() } else { b.clone() };
    let min = if x.lo <= 0u32 && x.hi >= 0u32 {
        Q::from(0u32)
    } else if a < b {
        a
    } else {
        b
    };
    (min, max)
}

/// The random inputs of one draw of Z.
struct Draw {
    norm: Norm,
    /// ℓ1: one exponential per coordinate; ℓ∞: the d + 1 exponentials of G; ℓ2: the d of G′.
    exps: Vec<Lazy>,
    /// ℓ1: the signs.
    signs: Vec<bool>,
    /// ℓ∞: the point V of the cube; ℓ2: ⌈d/2⌉ points of the unit disk, two by two.
    cube: Vec<Lazy>,
}

impl Draw {
    fn new<R: Rng + ?Sized>(norm: Norm, d: usize, rng: &mut R) -> Draw {
        match norm {
            Norm::L1 => Draw {
                norm,
                exps: (0..d).map(|_| Lazy::new(rng)).collect(),
                signs: (0..d).map(|_| rng.gen::<bool>()).collect(),
                cube: Vec::new(),
            },
            Norm::Linf => Draw {
                norm,
                exps: (0..=d).map(|_| Lazy::new(rng)).collect(),
                signs: Vec::new(),
                cube: (0..d).map(|_| Lazy::new(rng)).collect(),
            },
            Norm::L2 => Draw {
                norm,
                exps: (0..d).map(|_| Lazy::new(rng)).collect(),
                signs: Vec::new(),
                cube: (0..d.div_ceil(2)).flat_map(|_| in_ball(2, rng)).collect(),
            },
        }
    }

    /// Enclosures of the d coordinates of Z/θ at `prec` bits (`None`: not yet enclosed).
    fn enclose(&self, d: usize, prec: u64) -> Option<Vec<Interval>> {
        match self.norm {
            Norm::L1 => self
                .exps
                .iter()
                .zip(&self.signs)
                .map(|(u, &s)| exponential(u, prec).map(|e| if s { e } else { e.neg() }))
                .collect(),
            Norm::Linf => {
                let g = gamma(&self.exps, prec)?;
                Some(self.cube[..d].iter().map(|u| g.mul(&centered(u))).collect())
            }
            Norm::L2 => {
                let g = gamma(&self.exps, prec)?;
                let mut x = Vec::with_capacity(d + 1);
                for pair in self.cube.chunks_exact(2) {
                    let (v1, v2) = (centered(&pair[0]), centered(&pair[1]));
                    let (a, b) = (square_range(&v1), square_range(&v2));
                    let s = Interval::new(a.0 + b.0, a.1 + b.1);
                    if s.lo <= 0u32 {
                        return None;
                    }
                    let ln_s = functions::ln(&s, prec)?;
                    // −2·ln s/s is decreasing in s on (0, 1): its ends from s's ends.
                    let f = Interval::new(
                        Q::from(-2i32) * &ln_s.hi / &s.hi,
                        Q::from(-2i32) * &ln_s.lo / &s.lo,
                    )
                    .round_outward(prec);
                    let root = functions::sqrt(&f, prec)?;
                    x.push(v1.mul(&root).round_outward(prec));
                    x.push(v2.mul(&root).round_outward(prec));
                }
                x.truncate(d);
                let sum = x
                    .iter()
                    .fold(Interval::point(Q::from(0u32)), |acc, xi| acc.add(&xi.sqr()));
                let norm = functions::sqrt(&sum.round_outward(prec), prec)?;
                if norm.lo <= 0u32 {
                    return None;
                }
                x.iter()
                    .map(|xi| Some(g.mul(&xi.div(&norm)?).round_outward(prec)))
                    .collect()
            }
        }
    }

    fn refine<R: RngCore + ?Sized>(&mut self, rng: &mut R) {
        for u in self.exps.iter_mut().chain(self.cube.iter_mut()) {
            u.refine(rng);
        }
    }

    /// `decide` applied to θ·Z from exact enclosures of this draw, refined 64 bits at a time
    /// until it decides (with probability 1): the map of the exact Z.
    fn decide_exactly<D: Decide, R: RngCore + ?Sized>(
        mut self,
        d: usize,
        theta: &Q,
        decide: &D,
        rng: &mut R,
    ) -> D::Out {
        for round in 0u64.. {
            let prec = 64 * (round + 2);
            if let Some(z) = self.enclose(d, prec) {
                let z: Vec<Interval> = z
                    .iter()
                    .map(|zi| Interval::new(theta * &zi.lo, theta * &zi.hi))
                    .collect();
                if let Some(out) = decide.exact(&z) {
                    return out;
                }
            }
            self.refine(rng);
        }
        unreachable!("the rounds are unbounded")
    }
}

/// Enclosure of the sum of the exponentials −ln(1 − U_j) (a Gamma variable).
fn gamma(exps: &[Lazy], prec: u64) -> Option<Interval> {
    let mut g = Interval::point(Q::from(0u32));
    for u in exps {
        g = g.add(&exponential(u, prec)?);
    }
    Some(g.round_outward(prec))
}

/// A uniform point of the unit ℓ2 ball as d lazy uniforms (V_i = 2U_i − 1): exact rejection
/// from the cube, Σ V_i² < 1 decided on the dyadic boxes (refined while undecided; a box
/// inside the ball stays inside under refinement). Used with d = 2 (acceptance π/4).
fn in_ball<R: RngCore + ?Sized>(d: usize, rng: &mut R) -> Vec<Lazy> {
    let first: Vec<Lazy> = (0..d).map(|_| Lazy::new(rng)).collect();
    in_ball_from(first, rng)
}

/// [`in_ball`] continuing from a first candidate already drawn (`first`), then fresh
/// candidates of its dimension.
fn in_ball_from<R: RngCore + ?Sized>(first: Vec<Lazy>, rng: &mut R) -> Vec<Lazy> {
    let d = first.len();
    let mut first = Some(first);
    loop {
        let mut v: Vec<Lazy> = match first.take() {
            Some(v) => v,
            None => (0..d).map(|_| Lazy::new(rng)).collect(),
        };
        loop {
            let (mut min, mut max) = (Q::from(0u32), Q::from(0u32));
            for u in &v {
                let (a, b) = square_range(&centered(u));
                min += a;
                max += b;
            }
            if max < 1u32 {
                return v;
            }
            if min >= 1u32 {
                break;
            }
            for u in v.iter_mut() {
                u.refine(rng);
            }
        }
    }
}

/// A fixed map of the noise, decided from enclosures of it (the release's post-processing:
/// rounding to a grid, clamping to a region). Both methods receive enclosures of the same
/// Z; a method returns `Some` only when every Z in its enclosures maps to that value, so
/// the value is the map of the exact Z.
pub trait Decide {
    type Out;
    /// From `f64` interval enclosures of Z (the fast path; `None`: not decided).
    fn fast(&self, z: &[FI]) -> Option<Self::Out>;
    /// From rational enclosures of Z (refined until decided).
    fn exact(&self, z: &[Interval]) -> Option<Self::Out>;
}

/// The index whose enclosure's upper end is below every other's lower end: the argmin of
/// quantities known by enclosures, when the enclosures decide it (`None` otherwise).
pub fn decided_argmin<T, K: PartialOrd>(
    items: &[(usize, T)],
    lo: impl Fn(&T) -> K,
    hi: impl Fn(&T) -> K,
) -> Option<usize> {
    let best = items.iter().min_by(|a, b| {
        hi(&a.1)
            .partial_cmp(&hi(&b.1))
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    let top = hi(&best.1);
    items
        .iter()
        .all(|(j, t)| *j == best.0 || lo(t) > top)
        .then_some(best.0)
}

/// The uniform of a 64-bit word as an `f64` enclosure of [w·2⁻⁶⁴, (w + 1)·2⁻⁶⁴].
fn uniform_fi(w: u64) -> FI {
    const SCALE: f64 = 1.0 / 18_446_744_073_709_551_616.0; // 2⁻⁶⁴, exact
    let x = w as f64;
    FI::new(next_down(x) * SCALE, next_up(next_up(x) + 1.0) * SCALE)
}

/// The planar Laplace (the ℓ2 K-norm in two dimensions, density ∝ exp(−‖z‖₂/θ); Andrés et
/// al. 2013, Theorem 4.1's polar form: a Gamma(2, θ) radius and a uniform direction),
/// pushed through the fixed map `decide`, sampled exactly.
///
/// Z = θ·(E₁ + E₂)·V/‖V‖ with E_j = −ln(1 − U_j) and V uniform in the unit disk (exact
/// rejection from the square): the law of [`knorm_rounded`]'s ℓ2 draw in d = 2 (the
/// direction of Marsaglia's normal pair is V/‖V‖). The first try encloses Z in `f64`
/// interval arithmetic ([`FI`], outward rounding, its own `ln`) from the uniforms' first 64
/// bits; only when that does not decide the disk test or the map (an enclosure about 10⁻¹⁵
/// of θ wide straddling a grid line: none in the 20 000 draws of
/// `planar_laplace::tests::releases_follow_the_planar_laplace_law`) do the same uniforms
/// continue as exact dyadic intervals, refined as in [`knorm_rounded`]. Either way the value is the map of Z for the uniforms' exact values.
pub fn planar_decided<D: Decide, R: Rng + ?Sized>(
    theta: &Q,
    theta_f: FI,
    decide: &D,
    rng: &mut R,
) -> D::Out {
    let one = FI::point(1.0);
    let e = [rng.next_u64(), rng.next_u64()];
    let (v, fast_v) = loop {
        let w = [rng.next_u64(), rng.next_u64()];
        let v = [uniform_fi(w[0]), uniform_fi(w[1])].map(|u| u.mul_f64(2.0).sub(one));
        let s = v[0].sqr().add(v[1].sqr());
        if s.hi < 1.0 {
            break (w.map(Lazy::of_word).to_vec(), Some((v, s)));
        }
        if s.lo >= 1.0 {
            continue;
        }
        break (in_ball_from(w.map(Lazy::of_word).to_vec(), rng), None);
    };
    if let Some((v, s)) = fast_v {
        let g = e
            .map(|w| one.sub(uniform_fi(w)).ln().neg())
            .into_iter()
            .fold(FI::point(0.0), FI::add);
        let norm = s.sqrt();
        if norm.lo > 0.0 {
            let r = theta_f.mul(g);
            let z = v.map(|vi| r.mul(vi.div(norm)));
            if let Some(out) = decide.fast(&z) {
                return out;
            }
        }
    }
    Draw {
        norm: Norm::L2,
        exps: e.map(Lazy::of_word).to_vec(),
        signs: Vec::new(),
        cube: v,
    }
    .decide_exactly(2, theta, decide, rng)
}

/// The ℓ2 K-norm noise in `d` dimensions (density ∝ exp(−‖z‖₂/θ): a Gamma(d, θ) radius and a
/// uniform direction; Madlib's noise, Feyisetan et al. 2020) pushed through the fixed map
/// `decide`, sampled exactly: the law of [`knorm_rounded`]'s ℓ2 draw (Z/θ = G·X/‖X‖, G the sum
/// of d exponentials, X Marsaglia's polar normals from ⌈d/2⌉ points of the unit disk).
///
/// As in [`planar_decided`], the first try encloses Z in `f64` interval arithmetic from the
/// uniforms' first 64 bits; when a disk test or the map is not decided there, the same
/// uniforms continue as exact dyadic intervals, refined until `decide` decides. Either way
/// the value is the map of Z for the uniforms' exact values.
pub fn l2_decided<D: Decide, R: Rng + ?Sized>(
    theta: &Q,
    theta_f: FI,
    d: usize,
    decide: &D,
    rng: &mut R,
) -> D::Out {
    let one = FI::point(1.0);
    let exps: Vec<u64> = (0..d).map(|_| rng.next_u64()).collect();
    let mut cube: Vec<Lazy> = Vec::with_capacity(d + 1);
    // The disk points in `f64` while every disk test was decided there.
    let mut fast: Option<Vec<[FI; 2]>> = Some(Vec::with_capacity(d.div_ceil(2)));
    for _ in 0..d.div_ceil(2) {
        loop {
            let w = [rng.next_u64(), rng.next_u64()];
            let v = [uniform_fi(w[0]), uniform_fi(w[1])].map(|u| u.mul_f64(2.0).sub(one));
            let s = v[0].sqr().add(v[1].sqr());
            if s.hi < 1.0 {
                cube.extend(w.map(Lazy::of_word));
                if let Some(f) = fast.as_mut() {
                    f.push(v);
                }
                break;
            }
            if s.lo >= 1.0 {
                continue;
            }
            cube.extend(in_ball_from(w.map(Lazy::of_word).to_vec(), rng));
            fast = None;
            break;
        }
    }
    if let Some(pairs) = fast {
        let mut x: Vec<FI> = Vec::with_capacity(d + 1);
        let mut ok = true;
        for v in &pairs {
            let s = v[0].sqr().add(v[1].sqr());
            if s.lo <= 0.0 {
                ok = false;
                break;
            }
            // −2·ln s / s, then √: Marsaglia's polar normals.
            let root = s.ln().mul_f64(-2.0).div(s).sqrt();
            x.push(v[0].mul(root));
            x.push(v[1].mul(root));
        }
        x.truncate(d);
        let norm = x
            .iter()
            .fold(FI::point(0.0), |a, xi| a.add(xi.sqr()))
            .sqrt();
        if ok && norm.lo > 0.0 {
            let g = exps
                .iter()
                .map(|&w| one.sub(uniform_fi(w)).ln().neg())
                .fold(FI::point(0.0), FI::add);
            let r = theta_f.mul(g);
            let z: Vec<FI> = x.iter().map(|xi| r.mul(xi.div(norm))).collect();
            if let Some(out) = decide.fast(&z) {
                return out;
            }
        }
    }
    Draw {
        norm: Norm::L2,
        exps: exps.into_iter().map(Lazy::of_word).collect(),
        signs: Vec::new(),
        cube,
    }
    .decide_exactly(d, theta, decide, rng)
}

/// round_h(q_i + Z_i) for each coordinate: exact grid points, the law of the ideal K-norm
/// release rounded to hℤ (module docs). `theta` is the noise scale (any value ≥ l·σ), `h`
/// the grid step ([`grid`]).
pub fn knorm_rounded<R: Rng + ?Sized>(
    q: &[Q],
    theta: &Q,
    h: &Q,
    norm: Norm,
    rng: &mut R,
) -> Vec<Q> {
    let d = q.len();
    let mut draw = Draw::new(norm, d, rng);
    let half = Q::from(1u32) >> 1u64;
    let cell = |x: &Q| -> Q { Q::from((x / h + &half).floor()) };
    for round in 0u64.. {
        let prec = 64 * (round + 2);
        if let Some(z) = draw.enclose(d, prec) {
            let decided: Option<Vec<Q>> = q
                .iter()
                .zip(&z)
                .map(|(qi, zi)| {
                    let (lo, hi) = (qi + theta * &zi.lo, qi + theta * &zi.hi);
                    let k = cell(&lo);
                    (k == cell(&hi)).then(|| k * h)
                })
                .collect();
            if let Some(y) = decided {
                return y;
            }
        }
        draw.refine(rng);
    }
    unreachable!("the rounds are unbounded")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::exact::{f64_nearest, parse_rational};
    use crate::privatize::rng;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    /// The Laurent–Massart upper tail of χ²_k at false-alarm e^{−x}: k + 2√(kx) + 2x.
    pub(crate) fn chi2_limit(k: usize, x: f64) -> f64 {
        k as f64 + 2.0 * (k as f64 * x).sqrt() + 2.0 * x
    }

    /// χ² of counts against probabilities (bins with expected count < 5 merged into the
    /// next); returns (statistic, degrees of freedom).
    pub(crate) fn chi2(counts: &[u64], probs: &[f64], n: u64) -> (f64, usize) {
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut c, mut p) = (0u64, 0.0f64);
        for (&ci, &pi) in counts.iter().zip(probs) {
            c += ci;
            p += pi;
            if p * n as f64 >= 5.0 {
                let e = p * n as f64;
                stat += (c as f64 - e).powi(2) / e;
                bins += 1;
                c = 0;
                p = 0.0;
            }
        }
        if p > 0.0 {
            let e = p * n as f64;
            stat += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
        (stat, bins - 1)
    }

    /// The nearest point is decided only when one enclosure lies wholly below every other:
    /// an overlap or a touch (another's lower end equal to the best upper end) is not
    /// decided, whichever order the items come in.
    #[test]
    fn argmin_is_decided_only_when_one_enclosure_is_below_all_others() {
        let f = |v: &[(usize, (f64, f64))]| decided_argmin(v, |e| e.0, |e| e.1);
        assert_eq!(f(&[]), None);
        assert_eq!(f(&[(4, (1.0, 2.0))]), Some(4));
        assert_eq!(
            f(&[(0, (3.0, 4.0)), (1, (1.0, 2.0)), (2, (2.5, 9.0))]),
            Some(1)
        );
        assert_eq!(
            f(&[(1, (1.0, 2.0)), (0, (3.0, 4.0)), (2, (2.5, 9.0))]),
            Some(1)
        );
        assert_eq!(
            f(&[(0, (3.0, 4.0)), (1, (1.0, 2.0)), (2, (1.5, 9.0))]),
            None
        );
        assert_eq!(f(&[(0, (2.0, 4.0)), (1, (1.0, 2.0))]), None);
        assert_eq!(f(&[(0, (1.0, 2.0)), (1, (1.0, 2.0))]), None);
        assert_eq!(f(&[(7, (0.0, 0.0)), (3, (0.0, 1e-300))]), None);
        assert_eq!(f(&[(7, (0.0, 0.0)), (3, (1e-300, 1.0))]), Some(7));
    }

    /// uniform_fi encloses [w·2⁻⁶⁴, (w + 1)·2⁻⁶⁴] and is at most a few ulps wider, at the
    /// ends of the range and in between.
    #[test]
    fn uniform_fi_encloses_the_dyadic_interval() {
        for w in [
            0u64,
            1,
            2,
            12345,
            1 << 52,
            (1 << 53) + 1,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let u = uniform_fi(w);
            let exact = Lazy::of_word(w).interval();
            assert!(
                crate::exact::q_from_f64(u.lo) <= exact.lo
                    && exact.hi <= crate::exact::q_from_f64(u.hi),
                "w = {w}: {u:?}"
            );
            assert!(
                u.hi - u.lo <= 1.01 * 2f64.powi(-64) + 4.0 * f64::EPSILON * u.hi,
                "w = {w}: {u:?}"
            );
        }
    }

    /// d = 1 (every norm is the Laplace law): the rounded releases against the exact
    /// Laplace(θ) probabilities of 40 cells of width θ/4 around an off-grid q, plus tails;
    /// false alarm ≤ e^{−14} per norm. A sampler at 1.1·θ is refuted (power).
    #[test]
    fn one_dimension_is_the_laplace_law() {
        let (theta, q0) = (1.5f64, q("1/3"));
        let t = crate::exact::q_from_f64(theta);
        let h = grid(&t);
        let n = 20_000u64;
        let edges: Vec<f64> = (-20..=20)
            .map(|j| 1.0 / 3.0 + j as f64 * theta / 4.0)
            .collect();
        let cdf = |x: f64| {
            let z = (x - 1.0 / 3.0) / theta;
            if z < 0.0 {
                0.5 * z.exp()
            } else {
                1.0 - 0.5 * (-z).exp()
            }
        };
        let mut probs = vec![cdf(edges[0])];
        probs.extend(edges.windows(2).map(|w| cdf(w[1]) - cdf(w[0])));
        probs.push(1.0 - cdf(*edges.last().unwrap()));
        let run = |scale: &Q, norm: Norm, seed: u64| {
            let mut r = rng(Some(seed));
            let mut counts = vec![0u64; probs.len()];
            for _ in 0..n {
                let y = knorm_rounded(std::slice::from_ref(&q0), scale, &h, norm, &mut r);
                assert!((&y[0] / &h).is_integer(), "on the grid");
                let v = f64_nearest(&y[0]);
                counts[edges.partition_point(|&e| e <= v)] += 1;
            }
            chi2(&counts, &probs, n)
        };
        for (i, norm) in [Norm::L1, Norm::L2, Norm::Linf].into_iter().enumerate() {
            let (stat, k) = run(&t, norm, 40 + i as u64);
            assert!(
                stat < chi2_limit(k, 14.0),
                "{norm:?}: χ² = {stat} with {k} df"
            );
        }
        let wide = crate::exact::q_from_f64(theta * 1.1);
        let (stat, k) = run(&wide, Norm::L1, 50);
        assert!(
            stat > chi2_limit(k, 14.0),
            "power: 1.1·θ not refuted (χ² = {stat})"
        );
    }

    /// d = 2, 3: ‖Z‖/θ ~ Gamma(d, 1) (shells) for every norm, and the sign orthants are
    /// uniform (χ² of shell × orthant cells); false alarm ≤ e^{−14} per case.
    #[test]
    fn norm_shells_follow_the_gamma_law() {
        let theta = Q::from(1u32);
        let h = grid(&theta);
        let n = 12_000u64;
        // P(Gamma(d, 1) ≤ x) = 1 − e^{−x} Σ_{k<d} x^k/k!
        let gamma_cdf = |d: usize, x: f64| {
            let mut term = 1.0;
            let mut s = 0.0;
            for k in 0..d {
                if k > 0 {
                    term *= x / k as f64;
                }
                s += term;
            }
            1.0 - (-x).exp() * s
        };
        let edges: Vec<f64> = (1..=24).map(|j| j as f64 * 0.25).collect();
        for (i, norm) in [Norm::L1, Norm::L2, Norm::Linf].into_iter().enumerate() {
            for d in [2usize, 3] {
                let orthants = 1usize << d;
                let shells = edges.len() + 1;
                let mut probs = Vec::new();
                for s in 0..shells {
                    let lo = if s == 0 {
                        0.0
                    } else {
                        gamma_cdf(d, edges[s - 1])
                    };
                    let hi = if s == edges.len() {
                        1.0
                    } else {
                        gamma_cdf(d, edges[s])
                    };
                    for _ in 0..orthants {
                        probs.push((hi - lo) / orthants as f64);
                    }
                }
                let mut counts = vec![0u64; probs.len()];
                let mut r = rng(Some(60 + 10 * i as u64 + d as u64));
                let zero = vec![Q::from(0u32); d];
                for _ in 0..n {
                    let y: Vec<f64> = knorm_rounded(&zero, &theta, &h, norm, &mut r)
                        .iter()
                        .map(f64_nearest)
                        .collect();
                    let nrm = match norm {
                        Norm::L1 => y.iter().map(|v| v.abs()).sum::<f64>(),
                        Norm::L2 => y.iter().map(|v| v * v).sum::<f64>().sqrt(),
                        Norm::Linf => y.iter().fold(0.0f64, |m, v| m.max(v.abs())),
                    };
                    let o = y
                        .iter()
                        .enumerate()
                        .fold(0, |o, (j, v)| o | ((*v < 0.0) as usize) << j);
                    counts[edges.partition_point(|&e| e <= nrm) * orthants + o] += 1;
                }
                let (stat, k) = chi2(&counts, &probs, n);
                assert!(
                    stat < chi2_limit(k, 14.0),
                    "{norm:?} d = {d}: χ² = {stat} with {k} df"
                );
            }
        }
    }

    /// ℓ2 in 40 dimensions (text embeddings have hundreds): the polar-method direction
    /// needs no rejection in d dimensions; ‖Z‖/θ ~ Gamma(40, 1) in 22 shells (χ², false
    /// alarm ≤ e^{−14}).
    #[test]
    fn high_dimensional_l2_follows_the_gamma_law() {
        let (theta, d, n) = (Q::from(1u32), 40usize, 3_000u64);
        let h = grid(&theta);
        let gamma_cdf = |x: f64| {
            let (mut term, mut s) = (1.0f64, 0.0f64);
            for k in 0..d {
                if k > 0 {
                    term *= x / k as f64;
                }
                s += term;
            }
            1.0 - (-x).exp() * s
        };
        let edges: Vec<f64> = (0..=20).map(|j| 20.0 + 2.0 * j as f64).collect();
        let mut probs = vec![gamma_cdf(edges[0])];
        probs.extend(edges.windows(2).map(|w| gamma_cdf(w[1]) - gamma_cdf(w[0])));
        probs.push(1.0 - gamma_cdf(*edges.last().unwrap()));
        let mut counts = vec![0u64; probs.len()];
        let mut r = rng(Some(90));
        let zero = vec![Q::from(0u32); d];
        for _ in 0..n {
            let y = knorm_rounded(&zero, &theta, &h, Norm::L2, &mut r);
            let nrm = y.iter().map(|v| f64_nearest(v).powi(2)).sum::<f64>().sqrt();
            counts[edges.partition_point(|&e| e <= nrm)] += 1;
        }
        let (stat, k) = chi2(&counts, &probs, n);
        assert!(stat < chi2_limit(k, 14.0), "χ² = {stat} with {k} df");
    }

    /// A grid far below the enclosures' first precision forces refinement rounds; the
    /// outputs stay on the grid and within a few scales of q.
    #[test]
    fn fine_grids_refine_and_stay_on_the_grid() {
        let theta = q("3/2");
        let h = Q::from(1u32) >> 150u64;
        let mut r = rng(Some(7));
        for norm in [Norm::L1, Norm::L2, Norm::Linf] {
            for _ in 0..50 {
                let y = knorm_rounded(&[q("1/3"), q("-2")], &theta, &h, norm, &mut r);
                assert!(y.iter().all(|v| (v / &h).is_integer()));
                assert!((f64_nearest(&y[1]) + 2.0).abs() < 200.0);
            }
        }
    }

    /// `l2_decided` in d = 5: ‖Z‖/θ against Gamma(5) (20 equiprobable bins) and the orthant
    /// of the first three coordinates against uniform, false alarm ≤ e^{−14} each; the radius
    /// of a sampler at 1.1·θ is refuted (power). One configuration of the three goes through a map that the
    /// `f64` enclosures never decide, so the exact path's law is tested too.
    #[test]
    fn l2_noise_in_five_dimensions_has_the_k_norm_law() {
        use std::cell::Cell;
        let d = 5usize;
        // Gamma(5)'s CDF and its 1/20 … 19/20 quantiles (bisection in f64).
        let cdf = |r: f64| {
            1.0 - (-r).exp() * (1.0 + r + r * r / 2.0 + r.powi(3) / 6.0 + r.powi(4) / 24.0)
        };
        let edges: Vec<f64> = (1..20)
            .map(|k| {
                let (mut lo, mut hi) = (0.0f64, 40.0f64);
                for _ in 0..100 {
                    let m = (lo + hi) / 2.0;
                    if cdf(m) < k as f64 / 20.0 {
                        lo = m
                    } else {
                        hi = m
                    }
                }
                lo
            })
            .collect();
        struct Classes<'a> {
            edges2: Vec<f64>,
            edges2_q: Vec<Q>,
            theta2: Q,
            fast_ok: bool,
            exact_calls: &'a Cell<u64>,
        }
        impl Decide for Classes<'_> {
            type Out = (usize, usize);
            fn fast(&self, z: &[FI]) -> Option<(usize, usize)> {
                if !self.fast_ok {
                    return None;
                }
                let t2 = FI::from_q(&self.theta2);
                let r2 = z.iter().fold(FI::point(0.0), |a, x| a.add(x.sqr())).div(t2);
                let lo = self.edges2.iter().filter(|&&e| e <= r2.lo).count();
                let hi = self.edges2.iter().filter(|&&e| e < r2.hi).count();
                let signs: Option<Vec<bool>> = z[..3]
                    .iter()
                    .map(|x| {
                        if x.lo > 0.0 {
                            Some(true)
                        } else if x.hi < 0.0 {
                            Some(false)
                        } else {
                            None
                        }
                    })
                    .collect();
                let o = signs?.iter().fold(0, |a, &b| 2 * a + usize::from(b));
                (lo == hi).then_some((lo, o))
            }
            fn exact(&self, z: &[Interval]) -> Option<(usize, usize)> {
                self.exact_calls.set(self.exact_calls.get() + 1);
                let r2 = z
                    .iter()
                    .fold(Interval::point(Q::from(0u32)), |a, x| a.add(&x.sqr()));
                let (lo_q, hi_q) = (&r2.lo / &self.theta2, &r2.hi / &self.theta2);
                let lo = self.edges2_q.iter().filter(|e| **e <= lo_q).count();
                let hi = self.edges2_q.iter().filter(|e| **e < hi_q).count();
                let mut o = 0;
                for x in &z[..3] {
                    o = 2 * o
                        + if x.lo > 0u32 {
                            1
                        } else if x.hi < 0u32 {
                            0
                        } else {
                            return None;
                        };
                }
                (lo == hi).then_some((lo, o))
            }
        }
        let theta = q("7/10");
        let n = 8_000u64;
        let exact_calls = Cell::new(0);
        let mut g = rng(Some(5));
        let mut draw = |fast_ok: bool, scale: f64| {
            let edges2: Vec<f64> = edges.iter().map(|e| (e * scale) * (e * scale)).collect();
            let c = Classes {
                edges2_q: edges2
                    .iter()
                    .map(|&e| crate::exact::q_from_f64(e))
                    .collect(),
                edges2,
                theta2: &theta * &theta,
                fast_ok,
                exact_calls: &exact_calls,
            };
            l2_decided(&theta, FI::from_q(&theta), d, &c, &mut g)
        };
        for (fast_ok, scale, private) in [(true, 1.0, true), (false, 1.0, true), (true, 1.1, false)]
        {
            let mut radius = vec![0u64; 20];
            let mut orthant = vec![0u64; 8];
            for _ in 0..n {
                let (r, o) = draw(fast_ok, scale);
                radius[r] += 1;
                orthant[o] += 1;
            }
            let (stat, df) = chi2(&radius, &[0.05; 20], n);
            assert_eq!(
                stat < chi2_limit(df, 14.0),
                private,
                "radius χ² = {stat} on {df} (scale {scale}, fast {fast_ok})"
            );
            let (stat, df) = chi2(&orthant, &[0.125; 8], n);
            assert!(stat < chi2_limit(df, 14.0), "orthant χ² = {stat} on {df}");
        }
        assert!(
            exact_calls.get() >= n,
            "{} exact decisions",
            exact_calls.get()
        );
    }
}
