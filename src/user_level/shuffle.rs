//! The privacy accountant of PrivEMDItemWise (Algorithm 2): item-wise release by an
//! α₀·d-private randomizer followed by a uniform shuffle (Imola et al. 2024, §4.2;
//! `spec/user-level.md`, "Shuffle accountant").
//!
//! With d ≤ 1 (normalised units, [`super::Units`]) and N items shuffled together:
//!
//! * B_N(α₀, δ) = 8·√(e^{α₀}·ln(4/δ)/N) + 8·e^{α₀}/N;
//! * F_N(t) = ln(1 + tanh(α₀t/2)·B_N) bounds the loss of changing one item by distance t
//!   (Lemma B.1), provided α₀ ≤ ln(N / (16·ln(2/δ)));
//! * changing κ items by total distance Δ costs κ·F_N(Δ/κ) (Theorem 4.3, F_N concave),
//!   with δ' ≤ κ·e^{ε(κ−1)/κ}·δ;
//! * a user's m items (Theorem 4.4): α_L = (m·α₀/2)·B_m (local, N = m) and
//!   α_C = (m·α₀/2)·B_{nm} (central, N = n·m), δ_user = m·e^{α(m−1)/m}·δ.
//!
//! **Two accountants** ([`Accountant`]). *Closed*: F_N as above (FMT21 Lemma A.1's closed
//! form, under its precondition). *Numerical*: the hockey-stick divergence of the clones
//! reduction computed with directed rounding ([`super::clones`]), for any α₀ and N: one
//! item at distance t directly, and everywhere else through B = e^{ε₁} − 1, ε₁ the
//! numerical bound of the pair (P₁, P₀) (§4.1 step 5 turns any such B into
//! F_N(t) ≤ ln(1 + tanh(α₀t/2)·B), so every theorem below holds with B in place of B_N).
//! The default takes the tighter of the two proven values.
//!
//! **Directed rounding.** The closed form's quantities are rational [`Interval`]s built
//! from the rigorous enclosures of `exact::functions` (exp, ln, √); the numerical
//! accountant's are outward-rounded `f64` intervals (`exact::float::FI`, [`super::clones`]).
//! A returned α or δ is the upper end of its enclosure, a proven upper bound, not a float
//! estimate. The closed form's precondition on α₀ is proven (α₀ ≤ the lower end of the
//! cap's enclosure) or refused. The inverse ([`max_alpha0`], equations 6–7) bisects on
//! dyadic α₀ (grid 2⁻⁴⁰; numerical 2⁻²⁴, with the slope (α₀/2)·B, not the piecewise one)
//! and returns one whose forward bound is ≤ the target.

use super::clones::Clones;
use super::{invalid, positive, probability, UserLevelError};
use crate::exact::float::FI;
use crate::exact::{f64_down, functions, q_from_f64, Interval, Q};

/// Working precision (bits) of every enclosure.
const PREC: u64 = 128;
/// α₀ beyond this is refused before any exponential (the precondition caps α₀ at
/// ln(N) < 45 for every N < 2⁶⁴).
const MAX_ALPHA0: u32 = 64;
/// Bisection resolution of [`max_alpha0`]: α₀ on the grid 2⁻⁴⁰.
const GRID_BITS: u64 = 40;
/// The same for the numerical accountant (one divergence per step): 2⁻²⁴.
const NUMERICAL_GRID_BITS: u64 = 24;

/// Who shuffles: each user their own m items (local, N = m), or the curator all n·m items
/// (central / shuffle model, N = n·m).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Local { m: u64 },
    Central { n: u64, m: u64 },
}

impl Model {
    /// Items per user.
    pub fn m(self) -> u64 {
        match self {
            Model::Local { m } | Model::Central { m, .. } => m,
        }
    }

    /// N, the number of items shuffled together.
    pub fn n_items(self) -> Result<u64, UserLevelError> {
        match self {
            Model::Local { m } => Ok(m),
            Model::Central { n, m } => n
                .checked_mul(m)
                .ok_or_else(|| invalid("users", "n·m exceeds 2^64")),
        }
    }

    fn check(self) -> Result<(), UserLevelError> {
        if self.m() == 0 {
            return Err(invalid("items", "must be ≥ 1"));
        }
        if let Model::Central { n: 0, .. } = self {
            return Err(invalid("users", "must be ≥ 1"));
        }
        self.n_items().map(|_| ())
    }
}

/// A proven (α, δ): both are upper bounds of the theorem's values.
#[derive(Clone, Debug, PartialEq)]
pub struct Guarantee {
    pub alpha: Q,
    pub delta: Q,
}

/// Which evaluation of Lemma B.1's per-item loss F_N an accountant query uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Accountant {
    /// FMT21 Lemma A.1's closed form B_N (needs the precondition (P)).
    Closed,
    /// The clones divergence with directed rounding ([`super::clones`]), for any α₀.
    Numerical,
    /// Both, and the tighter proven value (the default).
    #[default]
    Tighter,
}

impl Accountant {
    /// `closed`, `numerical` or `tighter`.
    pub fn from_name(s: &str) -> Option<Accountant> {
        match s {
            "closed" => Some(Accountant::Closed),
            "numerical" => Some(Accountant::Numerical),
            "tighter" => Some(Accountant::Tighter),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Accountant::Closed => "closed",
            Accountant::Numerical => "numerical",
            Accountant::Tighter => "tighter",
        }
    }

    /// The concrete accountants this choice evaluates.
    fn each(self) -> &'static [Accountant] {
        match self {
            Accountant::Closed => &[Accountant::Closed],
            Accountant::Numerical => &[Accountant::Numerical],
            Accountant::Tighter => &[Accountant::Numerical, Accountant::Closed],
        }
    }
}

fn point(q: &Q) -> Interval {
    Interval::point(q.clone())
}

fn round(x: Interval) -> Interval {
    x.round_outward(PREC)
}

/// An enclosure of e^x; an error (not a panic) when x is beyond what can be enclosed
/// usefully (|x| > 2²¹: such a δ bound would be vacuous anyway).
fn exp(x: &Interval) -> Result<Interval, UserLevelError> {
    functions::exp_checked(x, PREC).map(round).ok_or_else(|| {
        invalid(
            "alpha",
            "the bound e^α is beyond 2^(2^21): the guarantee would be vacuous",
        )
    })
}

fn ln(x: &Interval) -> Interval {
    round(functions::ln(x, PREC).expect("ln of a positive enclosure"))
}

fn sqrt(x: &Interval) -> Interval {
    round(functions::sqrt(x, PREC).expect("√ of a non-negative enclosure"))
}

fn check_alpha0(alpha0: &Q) -> Result<(), UserLevelError> {
    positive(alpha0, "alpha0")?;
    if *alpha0 > MAX_ALPHA0 {
        return Err(invalid(
            "alpha0",
            format!("above {MAX_ALPHA0} (amplification needs α₀ ≤ ln N)"),
        ));
    }
    Ok(())
}

/// Enclosure of ln(4/δ) (and of ln(2/δ) with `num = 2`).
fn ln_over(num: u32, delta: &Q) -> Interval {
    ln(&point(&(Q::from(num) / delta)))
}

/// Enclosure of B_N(α₀, δ) = 8·√(e^{α₀}·ln(4/δ)/N) + 8·e^{α₀}/N, for N ≥ 1 and
/// 0 < α₀ ≤ 64 (callers check both through [`check_precondition`]).
pub(crate) fn b_n(n_items: u64, alpha0: &Q, delta: &Q) -> Interval {
    let e = round(functions::exp(&point(alpha0), PREC));
    let n = Q::from(n_items);
    let inv_n = Q::from(1u32) / &n;
    let root = sqrt(&e.mul(&ln_over(4, delta)).scale(&inv_n));
    round(root.add(&e.scale(&inv_n)).scale(&Q::from(8u32)))
}

/// Enclosure of tanh(x/2) = (e^x − 1)/(e^x + 1) for x ≥ 0, from the two ends of e^x (the
/// map is increasing in e^x, so no dependency widening).
fn tanh_half(x: &Q) -> Interval {
    let e = round(functions::exp(&point(x), PREC));
    let f = |v: &Q| (v - Q::from(1u32)) / (v + Q::from(1u32));
    round(Interval::new(f(&e.lo), f(&e.hi)))
}

/// The precondition of Lemma B.1 / Theorem 4.3, proven: α₀ ≤ ln(N / (16·ln(2/δ))).
pub fn check_precondition(n_items: u64, alpha0: &Q, delta: &Q) -> Result<(), UserLevelError> {
    check_alpha0(alpha0)?;
    probability(delta, "delta")?;
    if n_items == 0 {
        return Err(invalid("items", "must be ≥ 1"));
    }
    let cap = alpha0_cap(n_items, delta);
    match cap {
        Some(c) if *alpha0 <= c => Ok(()),
        _ => Err(invalid(
            "alpha0",
            format!(
                "amplification by shuffling needs α₀ ≤ ln(N/(16·ln(2/δ))) with N = {n_items}: too few items for this α₀ and δ"
            ),
        )),
    }
}

/// A rational lower bound of ln(N / (16·ln(2/δ))), the largest α₀ the theorems allow;
/// `None` when that bound is not positive.
pub fn alpha0_cap(n_items: u64, delta: &Q) -> Option<Q> {
    let denom = ln_over(2, delta).scale(&Q::from(16u32));
    let ratio_lo = Q::from(n_items) / &denom.hi;
    if ratio_lo <= 1u32 {
        return None;
    }
    let cap = ln(&Interval::point(ratio_lo)).lo;
    (cap > 0u32).then_some(cap)
}

/// Enclosure of tanh(x/2) = (e^x − 1)/(e^x + 1) for an enclosure x ≥ 0 (increasing in e^x).
fn tanh_half_fi(x: FI) -> FI {
    let e = x.exp();
    let f = |v: f64| {
        let v = FI::point(v);
        (v - FI::ONE) / (v + FI::ONE)
    };
    if e.hi.is_infinite() {
        return FI::new(f(e.lo).lo, 1.0);
    }
    FI::new(f(e.lo).lo, f(e.hi).hi.min(1.0))
}

/// Lemma B.1 at (N, α₀, δ) from one accountant (closed or numerical): for every t ∈ [0, 1]
/// the loss of one item changed by t is F_N(t) ≤ F̃(t) = ln(1 + tanh(α₀t/2)·B), with B the
/// closed form's B_N, or e^{ε₁} − 1 for the numerical bound ε₁ of the pair (P₁, P₀)
/// (`spec/user-level.md` §4.1 step 5; §4.6). F̃ is concave (§4.2 step 4), so every theorem
/// of §4.2–4.5 holds with this B. Without a B (numerically: no e ≤ 2⁶⁴ hides the pair
/// (P₁, P₀), too few clones) the trivial F(t) ≤ α₀·t stands in for F̃.
pub(crate) struct ItemBound {
    alpha0: Q,
    b: Option<Interval>,
    /// The numerical accountant's law of the clone count, and δ as an exact double (≤ δ).
    clones: Option<(Clones, f64)>,
}

impl ItemBound {
    /// `accountant` is `Closed` or `Numerical`.
    pub(crate) fn new(
        accountant: Accountant,
        n_items: u64,
        alpha0: &Q,
        delta: &Q,
    ) -> Result<ItemBound, UserLevelError> {
        let mut bound = ItemBound {
            alpha0: alpha0.clone(),
            b: None,
            clones: None,
        };
        match accountant {
            Accountant::Closed => {
                check_precondition(n_items, alpha0, delta)?;
                bound.b = Some(b_n(n_items, alpha0, delta));
            }
            _ => {
                check_alpha0(alpha0)?;
                probability(delta, "delta")?;
                let d = f64_down(delta);
                if d <= 0.0 {
                    return Err(invalid("delta", "below the smallest positive double"));
                }
                let clones = Clones::for_alpha0(n_items, alpha0, d)?;
                bound.b = clones
                    .smallest_e(1.0, d)
                    .map(|e| Interval::point(q_from_f64(e.e) - Q::from(1u32)));
                bound.clones = Some((clones, d));
            }
        }
        Ok(bound)
    }

    /// An upper bound of min(F̃(t), α₀·t), F̃(t) = ln(1 + tanh(α₀t/2)·B): concave in t (a
    /// minimum of two concave functions), and ≥ F_N(t) (F(t) ≤ α₀·t always: the shuffled
    /// release post-processes an α₀·d-private one).
    fn f_concave(&self, t: &Q) -> Q {
        let linear = &self.alpha0 * t;
        match &self.b {
            Some(b) => {
                let g = tanh_half(&linear);
                ln(&g.mul(b).add_q(&Q::from(1u32))).hi.min(linear)
            }
            None => linear,
        }
    }

    /// An upper bound of F_N(t), t ∈ [0, 1]: the smallest of F̃(t), α₀·t and, numerically,
    /// the divergence of the pair at t itself.
    pub(crate) fn f(&self, t: &Q) -> Q {
        let concave = self.f_concave(t);
        let Some((clones, d)) = &self.clones else {
            return concave;
        };
        if *t <= 0u32 {
            return Q::from(0u32);
        }
        // w rounded up: a larger w is a valid reduction too (module docs of `clones`).
        let e = FI::from_q(&(&self.alpha0 * t)).exp();
        let w = if e.hi.is_finite() {
            (FI::point(e.hi) / (FI::point(e.hi) + FI::ONE)).hi.min(1.0)
        } else {
            1.0
        };
        match clones.smallest_e(w, *d) {
            Some(found) if q_from_f64(found.epsilon) < concave => q_from_f64(found.epsilon),
            _ => concave,
        }
    }

    /// λ with F_N(s) ≤ λ·s for every s ∈ [0, 1] (the slope of Theorem 4.4's linear bound,
    /// per item), never above α₀. Closed: (α₀/2)·B_N (§4.3). Numerical: the smaller of (α₀/2)·B and the
    /// piecewise bound of §4.6: on [2^{−k−1}, 2^{−k}] the pair at s is bounded through
    /// D(P₁‖P₀) ≤ δ/γ_k with γ_k = tanh(α₀2^{−k}/2) ≥ γ(s), so F(s)/s ≤
    /// ln(1 + tanh(α₀2^{−k−1}/2)·B_k)/2^{−k−1} (F̃_k(s)/s falls with s), B_k the
    /// numerical B at δ/γ_k; [0, 2^{−k−1}] is bounded by (α₀/2)·B_{k+1}.
    pub(crate) fn slope(&self) -> Q {
        let half = &self.alpha0 / Q::from(2u32);
        let basic = match &self.b {
            Some(b) => round(b.scale(&half)).hi.min(self.alpha0.clone()),
            None => self.alpha0.clone(),
        };
        let Some((clones, d)) = &self.clones else {
            return basic;
        };
        let a0 = FI::from_q(&self.alpha0);
        let b_at = |k: i32| -> Option<f64> {
            let gamma = tanh_half_fi(a0.mul_f64((2f64).powi(-k))).hi;
            let dk = (FI::point(*d) / FI::point(gamma)).lo;
            if dk >= 1.0 {
                return Some(0.0);
            }
            clones
                .smallest_e(1.0, dk)
                .map(|f| (FI::point(f.e) - FI::ONE).hi)
        };
        let half_a0 = a0.mul_f64(0.5);
        let mut best = 0.0f64;
        let Some(mut b_k) = b_at(0) else {
            return basic;
        };
        for k in 0..40 {
            let s = (2f64).powi(-k - 1);
            let g = tanh_half_fi(a0.mul_f64(s));
            let lam = ((g * FI::point(b_k) + FI::ONE).ln() / FI::point(s)).hi;
            best = best.max(lam);
            let Some(next) = b_at(k + 1) else {
                return basic;
            };
            b_k = next;
            let rest = (half_a0 * FI::point(b_k)).hi;
            // Past α₀ the cap F(s) ≤ α₀·s decides; otherwise stop once [0, 2^{−k−1}] can
            // no longer raise the maximum.
            if rest <= best || rest >= a0.hi || k == 39 {
                best = best.max(rest);
                break;
            }
        }
        // F(s) ≤ α₀·s always (the shuffled release post-processes an α₀·d-private one).
        [q_from_f64(best), basic, self.alpha0.clone()]
            .into_iter()
            .min()
            .expect("three candidates")
    }
}

/// Theorem 4.3: changing κ of the N items by total distance Δ (0 ≤ Δ ≤ κ ≤ N) costs
/// ε = κ·F̃(Δ/κ) (one item: F_N(Δ), `ItemBound::f`) and δ' = Σ_i e^{ε_1+…+ε_{i−1}}·δ ≤
/// κ·e^{ε(κ−1)/κ}·δ (`chained`).
pub fn hybrid(
    n_items: u64,
    alpha0: &Q,
    delta: &Q,
    total_distance: &Q,
    changed: u64,
    accountant: Accountant,
) -> Result<Guarantee, UserLevelError> {
    if changed == 0 || changed > n_items {
        return Err(invalid("changed", "must be in [1, N]"));
    }
    let k = Q::from(changed);
    if *total_distance < 0u32 || *total_distance > k {
        return Err(invalid(
            "distance",
            "the total distance must be in [0, κ] (d ≤ 1)",
        ));
    }
    tighter(accountant, |acc| {
        let item = ItemBound::new(acc, n_items, alpha0, delta)?;
        let eps = if changed == 1 {
            item.f(total_distance)
        } else {
            &k * item.f_concave(&(total_distance / &k))
        };
        chained(eps, &k, delta)
    })
}

/// The guarantee with the smaller α of the accountants `accountant` stands for (the first
/// one's error when none gives one).
fn tighter(
    accountant: Accountant,
    mut one: impl FnMut(Accountant) -> Result<Guarantee, UserLevelError>,
) -> Result<Guarantee, UserLevelError> {
    let mut each = accountant.each().iter().map(|&acc| one(acc));
    let first = each.next().expect("at least one accountant");
    each.fold(first, |a, b| better(a, b, |a, b| b.alpha < a.alpha))
}

/// The better of two accountants' answers: an answer over an error (the first error when
/// both fail), and of two answers the second only when `second_better` says so.
fn better<T>(
    first: Result<T, UserLevelError>,
    second: Result<T, UserLevelError>,
    second_better: impl Fn(&T, &T) -> bool,
) -> Result<T, UserLevelError> {
    match (first, second) {
        (Ok(a), Ok(b)) => Ok(if second_better(&a, &b) { b } else { a }),
        (Err(_), Ok(b)) => Ok(b),
        (a, Err(_)) => a,
    }
}

/// The guarantee (ε, κ·e^{ε(κ−1)/κ}·δ) of κ chained steps (Lemma A.2 with the hybrids in
/// increasing order of distance, `spec/user-level.md` §4.2 steps 2–3: Σ_{i<κ} e^{iε/κ}·δ ≤
/// κ·e^{ε(κ−1)/κ}·δ, increasing in κ, so κ = m bounds every κ ≤ m; one item: δ itself),
/// from ε's upper end; refused when δ' ≥ 1 (vacuous: the theorem then says nothing).
fn chained(eps: Q, k: &Q, delta: &Q) -> Result<Guarantee, UserLevelError> {
    let exponent = &eps * (k - Q::from(1u32)) / k;
    let d = round(exp(&Interval::point(exponent))?.scale(&(k * delta))).hi;
    if d >= 1u32 {
        return Err(invalid(
            "delta",
            "the user-level δ bound is ≥ 1 (vacuous): lower α₀ or δ",
        ));
    }
    Ok(Guarantee {
        alpha: eps,
        delta: d,
    })
}

/// Theorem 4.4: PrivEMDItemWise is (α, δ_user)-bounded d_EM-DP (local: N = m; central:
/// N = n·m), α = m·λ with λ the per-item slope (`ItemBound::slope`; closed:
/// (α₀/2)·B_N), δ_user = m·e^{α(m−1)/m}·δ (`chained`). The item-level δ is the `delta`
/// of Lemma B.1.
pub fn item_wise(
    model: Model,
    alpha0: &Q,
    delta: &Q,
    accountant: Accountant,
) -> Result<Guarantee, UserLevelError> {
    model.check()?;
    let n_items = model.n_items()?;
    let m = Q::from(model.m());
    tighter(accountant, |acc| {
        let item = ItemBound::new(acc, n_items, alpha0, delta)?;
        chained(&m * item.slope(), &m, delta)
    })
}

/// The standard Feldman–McMillan–Talwar bound (FMT21 Theorem 3.1) applied to a user's m
/// items with group privacy: ε = m·F_N(1), δ_user = m·e^{ε(m−1)/m}·δ. A user-level DP ε, the
/// same for every pair of datasets (it ignores d_EM): the paper's comparison. With m = 1
/// (central model) it is the one-item bound F_N(1) itself.
pub fn fmt_group(
    model: Model,
    alpha0: &Q,
    delta: &Q,
    accountant: Accountant,
) -> Result<Guarantee, UserLevelError> {
    model.check()?;
    let n_items = model.n_items()?;
    let m = Q::from(model.m());
    tighter(accountant, |acc| {
        let item = ItemBound::new(acc, n_items, alpha0, delta)?;
        chained(&m * item.f(&Q::from(1u32)), &m, delta)
    })
}

/// Which theorem a [`best`] guarantee comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Theorem 4.4 (amplification by shuffling).
    Shuffling,
    /// Basic composition (no amplification at this N, α₀, δ).
    Composition,
}

impl Bound {
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Shuffling => "Theorem 4.4 (shuffling)",
            Bound::Composition => "composition (no amplification at this N, α₀, δ)",
        }
    }
}

/// The better of [`item_wise`] and [`composition`] for a user's m items: Theorem 4.4 when
/// an accountant proves it, its δ is not vacuous and its α is smaller; composition
/// (δ = 0) otherwise.
pub fn best(model: Model, alpha0: &Q, delta: &Q, accountant: Accountant) -> (Guarantee, Bound) {
    let comp = composition(model, alpha0);
    match item_wise(model, alpha0, delta, accountant) {
        Ok(g) if g.alpha < comp => (g, Bound::Shuffling),
        _ => (
            Guarantee {
                alpha: comp,
                delta: Q::from(0u32),
            },
            Bound::Composition,
        ),
    }
}

/// Basic composition: matching items along the optimal permutation of Lemma 2.1, the
/// shuffled (multiset) item-wise release is (m·α₀)·d_EM-private with δ = 0, with or
/// without amplification (a release in the data's own order is not: it reveals which
/// item changed).
pub fn composition(model: Model, alpha0: &Q) -> Q {
    Q::from(model.m()) * alpha0
}

/// The inverse (equations 6–7): the largest α₀ (on the grid 2⁻⁴⁰, numerical: 2⁻²⁴) whose
/// [`item_wise`] guarantee is within (α, δ_user).
#[derive(Clone, Debug, PartialEq)]
pub struct Inverse {
    pub alpha0: Q,
    /// The item-level δ used: δ_user / (m·e^{α}) rounded down.
    pub item_delta: Q,
    /// The forward guarantee at `alpha0` (≤ the target in both coordinates).
    pub guarantee: Guarantee,
    /// The accountant that proved it.
    pub accountant: Accountant,
}

/// The largest α₀ with a Theorem 4.4 guarantee within (α, δ_user), δ_item =
/// δ_user/(m·e^{α}) (so m·e^{α'}·δ_item ≤ δ_user for every α' ≤ α). Bisection is valid
/// because the forward bound is increasing in α₀ (and each answer is checked forward). An
/// error when no α₀ ≥ the grid step reaches the target. With [`Accountant::Tighter`], the
/// larger α₀ of the two.
pub fn max_alpha0(
    model: Model,
    alpha: &Q,
    delta_user: &Q,
    accountant: Accountant,
) -> Result<Inverse, UserLevelError> {
    let mut each = accountant
        .each()
        .iter()
        .map(|&acc| max_alpha0_with(model, alpha, delta_user, acc));
    let first = each.next().expect("at least one accountant");
    each.fold(first, |a, b| better(a, b, |a, b| b.alpha0 > a.alpha0))
}

fn max_alpha0_with(
    model: Model,
    alpha: &Q,
    delta_user: &Q,
    accountant: Accountant,
) -> Result<Inverse, UserLevelError> {
    model.check()?;
    positive(alpha, "alpha")?;
    probability(delta_user, "delta")?;
    let n_items = model.n_items()?;
    let m = Q::from(model.m());
    // δ_user ≥ m·e^{α}·δ_item: beyond α = 1000 the item δ would be below 2^-1400.
    if *alpha > 1000u32 {
        return Err(invalid("alpha", "must be ≤ 1000"));
    }
    let e_alpha = exp(&point(alpha))?;
    // Rounded down onto a grid fine enough to keep δ_item > 0.
    let raw = delta_user / (&m * &e_alpha.hi);
    let bits = PREC as i64 - raw.floor_log2_abs();
    let item_delta = raw.round_to_pow2_grid(-bits, crate::exact::Round::Down);
    let (grid, cap) = match accountant {
        Accountant::Closed => {
            let cap = alpha0_cap(n_items, &item_delta).ok_or_else(|| {
                invalid(
                    "items",
                    format!("N = {n_items} items are too few to amplify at this δ (need N > 16·ln(2/δ))"),
                )
            })?;
            (GRID_BITS, cap.min(Q::from(MAX_ALPHA0)))
        }
        _ => (NUMERICAL_GRID_BITS, Q::from(MAX_ALPHA0)),
    };
    let cap = cap.round_to_pow2_grid(-(grid as i64), crate::exact::Round::Down);
    let d_item = f64_down(&item_delta);
    let ok = |a0: &Q| -> Option<Guarantee> {
        if *a0 <= 0u32 {
            return None;
        }
        let g = match accountant {
            Accountant::Closed => item_wise(model, a0, &item_delta, Accountant::Closed).ok()?,
            // One divergence per α₀: the slope (α₀/2)·B with the B the target needs,
            // B = 2α/(m·α₀) rounded down, is proven when D(P₁‖P₀) ≤ δ at e = 1 + B.
            _ => {
                let clones = Clones::for_alpha0(n_items, a0, d_item).ok()?;
                let b = FI::from_q(&(Q::from(2u32) * alpha / (&m * a0))).lo;
                let e = (FI::ONE + FI::point(b)).lo;
                if e <= 1.0 || clones.divergence(1.0, e, d_item * (2f64).powi(-30)) > d_item {
                    return None;
                }
                let slope = a0 * (q_from_f64(e) - Q::from(1u32)) / Q::from(2u32);
                chained(&m * slope, &m, &item_delta).ok()?
            }
        };
        (g.alpha <= *alpha && g.delta <= *delta_user).then_some(g)
    };
    let (mut lo, mut hi) = (Q::from(0u32), cap.clone());
    let mut best = ok(&cap).map(|g| (cap.clone(), g));
    if best.is_none() {
        let step = Q::from(1u32) >> grid;
        while &hi - &lo > step {
            let mid = ((&lo + &hi) / Q::from(2u32))
                .round_to_pow2_grid(-(grid as i64), crate::exact::Round::Down);
            match ok(&mid) {
                Some(g) => {
                    best = Some((mid.clone(), g));
                    lo = mid;
                }
                None => hi = mid,
            }
        }
    }
    let (alpha0, guarantee) = best.ok_or_else(|| {
        invalid(
            "alpha",
            format!("no α₀ ≥ 2^-{grid} reaches this (α, δ): raise α or δ, or shuffle more items"),
        )
    })?;
    Ok(Inverse {
        alpha0,
        item_delta,
        guarantee,
        accountant,
    })
}

/// What an accountant query fixes: the randomizer's α₀, or the target user-level α (then
/// the largest α₀ that meets it, [`max_alpha0`]).
#[derive(Clone, Debug)]
pub enum Target {
    Alpha0(Q),
    Alpha(Q),
}

/// One query of the accountant (`mdp account item-wise`, the Python `account_item_wise`)
/// by one accountant: the α₀ and item δ used, the Theorem 4.4 guarantee, the FMT
/// group-privacy and composition comparisons, and optionally Theorem 4.3's loss at one
/// normalised distance.
#[derive(Clone, Debug)]
pub struct Account {
    pub model: Model,
    /// `Closed` or `Numerical`.
    pub accountant: Accountant,
    pub alpha0: Q,
    pub item_delta: Q,
    pub guarantee: Guarantee,
    /// FMT per item with group privacy ([`fmt_group`]; m = 1: the one-item F_N(1)).
    pub fmt_group: Guarantee,
    /// m·α₀ ([`composition`]).
    pub composition: Q,
    /// Theorem 4.3 at normalised d_EM = t (κ = m): (t, the guarantee).
    pub at_distance: Option<(Q, Guarantee)>,
    /// [`super::weak_guarantee`]'s warning for the guarantee, if any.
    pub warning: Option<String>,
}

/// The answer of both accountants and the one used: the choice, or with
/// [`Accountant::Tighter`] the smaller α (for an α₀) or the larger α₀ (for a target α).
#[derive(Clone, Debug)]
pub struct Accounts {
    pub used: Account,
    pub closed: Result<Account, UserLevelError>,
    pub numerical: Result<Account, UserLevelError>,
}

/// Answer one accountant query by both accountants; `delta` is the item δ for
/// [`Target::Alpha0`] and the user δ for [`Target::Alpha`]; `distance` ∈ [0, 1]
/// (normalised d_EM); `choice` names the one used (an error when it fails).
pub fn account(
    model: Model,
    target: &Target,
    delta: &Q,
    distance: Option<&Q>,
    choice: Accountant,
) -> Result<Accounts, UserLevelError> {
    if let Some(t) = distance {
        if *t < 0u32 || *t > 1u32 {
            return Err(invalid("distance", "must be in [0, 1] (normalised d_EM)"));
        }
    }
    let closed = account_with(model, target, delta, distance, Accountant::Closed);
    let numerical = account_with(model, target, delta, distance, Accountant::Numerical);
    let used = match choice {
        Accountant::Closed => closed.clone()?,
        Accountant::Numerical => numerical.clone()?,
        Accountant::Tighter => better(numerical.clone(), closed.clone(), |n, c| match target {
            Target::Alpha0(_) => c.guarantee.alpha < n.guarantee.alpha,
            Target::Alpha(_) => c.alpha0 > n.alpha0,
        })?,
    };
    Ok(Accounts {
        used,
        closed,
        numerical,
    })
}

fn account_with(
    model: Model,
    target: &Target,
    delta: &Q,
    distance: Option<&Q>,
    accountant: Accountant,
) -> Result<Account, UserLevelError> {
    let (alpha0, item_delta, guarantee) = match target {
        Target::Alpha0(a0) => (
            a0.clone(),
            delta.clone(),
            item_wise(model, a0, delta, accountant)?,
        ),
        Target::Alpha(alpha) => {
            let inv = max_alpha0(model, alpha, delta, accountant)?;
            (inv.alpha0, inv.item_delta, inv.guarantee)
        }
    };
    let fmt = fmt_group(model, &alpha0, &item_delta, accountant)?;
    let at_distance = match distance {
        None => None,
        Some(t) => {
            let m = Q::from(model.m());
            let g = hybrid(
                model.n_items()?,
                &alpha0,
                &item_delta,
                &(&m * t),
                model.m(),
                accountant,
            )?;
            Some((t.clone(), g))
        }
    };
    let warning = super::weak_guarantee(
        crate::exact::f64_up(&guarantee.alpha),
        crate::exact::f64_up(&guarantee.delta),
    );
    Ok(Account {
        model,
        accountant,
        composition: composition(model, &alpha0),
        alpha0,
        item_delta,
        guarantee,
        fmt_group: fmt,
        at_distance,
        warning,
    })
}

impl Account {
    /// The `--json` record: exact values and their proven float upper ends.
    pub fn json(&self) -> serde_json::Value {
        use crate::exact::{f64_nearest, f64_up, format_rational};
        let (scope, users) = match self.model {
            Model::Local { .. } => ("local", None),
            Model::Central { n, .. } => ("central", Some(n)),
        };
        let at = self.at_distance.as_ref().map(|(t, g)| {
            serde_json::json!({"distance": format_rational(t), "epsilon_upper": f64_up(&g.alpha), "delta_upper": f64_up(&g.delta)})
        });
        serde_json::json!({
            "accountant": self.accountant.name(),
            "at_distance": at,
            "model": scope, "items": self.model.m(), "users": users,
            "alpha0": format_rational(&self.alpha0), "alpha0_approx": f64_nearest(&self.alpha0),
            "item_delta": format_rational(&self.item_delta),
            "alpha": format_rational(&self.guarantee.alpha), "alpha_upper": f64_up(&self.guarantee.alpha),
            "delta": format_rational(&self.guarantee.delta), "delta_upper": f64_up(&self.guarantee.delta),
            "fmt_group_epsilon_upper": f64_up(&self.fmt_group.alpha),
            "fmt_group_delta_upper": f64_up(&self.fmt_group.delta),
            "composition_alpha": f64_up(&self.composition),
            "distance_unit": "normalised (d ≤ 1)", "warning": self.warning,
        })
    }
}

impl Accounts {
    /// The used account's record, with both accountants' records (or their errors) under
    /// `closed` and `numerical`.
    pub fn json(&self) -> serde_json::Value {
        let each = |r: &Result<Account, UserLevelError>| match r {
            Ok(a) => a.json(),
            Err(e) => serde_json::json!({"error": e.to_string()}),
        };
        let mut v = self.used.json();
        v["closed"] = each(&self.closed);
        v["numerical"] = each(&self.numerical);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_rational;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    const C: Accountant = Accountant::Closed;

    #[test]
    fn fmt_readme_example_is_enclosed() {
        // FMT21 Theorem 3.1 at n = 10^5, ε₀ = 4, δ = 10^-6: 0.5346 (textbook form).
        let item = ItemBound::new(Accountant::Closed, 100_000, &q("4"), &q("1e-6")).unwrap();
        let f = item.f_concave(&q("1"));
        let v = crate::exact::f64_nearest(&f);
        assert!(v > 0.5345 && v < 0.5347, "{v}");
        assert_eq!(item.f(&q("1")), f);
    }

    #[test]
    fn local_alpha_is_the_linear_slope() {
        // δ must be tiny for the local δ_L = m·e^{α_L}·δ to be below 1.
        let g = item_wise(Model::Local { m: 10_000 }, &q("0.01"), &q("1e-30"), C).unwrap();
        // α_L = 4α₀(√(m e^{α₀} ln(4/δ)) + e^{α₀})
        let a0: f64 = 0.01;
        let want = 4.0 * a0 * ((1e4 * a0.exp() * (4e30f64).ln()).sqrt() + a0.exp());
        let got = crate::exact::f64_up(&g.alpha);
        assert!(got >= want * (1.0 - 1e-12) && got <= want * (1.0 + 1e-12));
    }

    #[test]
    fn vacuous_delta_is_refused() {
        // α_L ≈ 1003 at m = 10^4, α₀ = ½: m·e^{α_L}·δ ≥ 1 for any useful δ.
        let e = item_wise(Model::Local { m: 10_000 }, &q("0.5"), &q("1e-6"), C).unwrap_err();
        assert!(e.to_string().contains("vacuous"));
    }

    #[test]
    fn precondition_refused_when_unproven() {
        assert!(item_wise(Model::Local { m: 30 }, &q("1"), &q("1e-6"), C).is_err());
        assert!(item_wise(Model::Central { n: 100_000, m: 30 }, &q("1"), &q("1e-6"), C).is_ok());
    }

    #[test]
    fn inverse_meets_target_and_is_nearly_tight() {
        let model = Model::Central { n: 100_000, m: 30 };
        let inv = max_alpha0(model, &q("1"), &q("1e-6"), C).unwrap();
        assert!(inv.guarantee.alpha <= 1u32 && inv.guarantee.delta <= q("1e-6"));
        let above = &inv.alpha0 + (Q::from(1u32) >> 30u64);
        let g = item_wise(model, &above, &inv.item_delta, C).unwrap();
        assert!(g.alpha > 1u32 || g.delta > q("1e-6"));
        // The reconstruction's example: α₀ ≈ 1.63 (vs composition α/m = 0.033).
        let a0 = crate::exact::f64_nearest(&inv.alpha0);
        assert!(a0 > 1.4 && a0 < 1.8, "{a0}");
    }
}
