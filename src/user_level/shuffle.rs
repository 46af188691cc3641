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
//!   with δ' ≤ κ·e^{ε}·δ;
//! * a user's m items (Theorem 4.4): α_L = (m·α₀/2)·B_m (local, N = m) and
//!   α_C = (m·α₀/2)·B_{nm} (central, N = n·m), δ_user = m·e^{α}·δ.
//!
//! **Directed rounding.** Every quantity is a rational [`Interval`] built from the rigorous
//! enclosures of `exact::functions` (exp, ln, √) and exact rational arithmetic; a returned
//! α or δ is the upper end of its enclosure, so it is a proven upper bound of the formula,
//! not a float estimate. The precondition on α₀ is proven (α₀ ≤ the lower end of the cap's
//! enclosure) or refused. The inverse ([`max_alpha0`], equations 6–7) bisects on dyadic
//! α₀ and returns one whose forward bound is ≤ the target.

use super::{invalid, positive, probability, UserLevelError};
use crate::exact::{functions, Interval, Q};

/// Working precision (bits) of every enclosure.
const PREC: u64 = 128;
/// α₀ beyond this is refused before any exponential (the precondition caps α₀ at
/// ln(N) < 45 for every N < 2⁶⁴).
const MAX_ALPHA0: u32 = 64;
/// Bisection resolution of [`max_alpha0`]: α₀ on the grid 2⁻⁴⁰.
const GRID_BITS: u64 = 40;

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

/// Enclosure of F_N(t) = ln(1 + tanh(α₀t/2)·B_N(α₀, δ)) (Lemma B.1), t ∈ [0, 1], under the
/// same conditions as [`b_n`].
pub(crate) fn f_n(n_items: u64, alpha0: &Q, delta: &Q, t: &Q) -> Interval {
    let g = tanh_half(&(alpha0 * t));
    let b = b_n(n_items, alpha0, delta);
    ln(&g.mul(&b).add_q(&Q::from(1u32)))
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

/// Theorem 4.3: changing κ of the N items by total distance Δ (0 ≤ Δ ≤ κ ≤ N) costs
/// ε = κ·F_N(Δ/κ) and δ' = Σ_i e^{ε_1+…+ε_{i−1}}·δ ≤ κ·e^{ε}·δ (the bound returned: the
/// sharper Σ_{i<κ} e^{iε/κ}·δ needs the hybrids ordered by distance, `spec/user-level.md`).
pub fn hybrid(
    n_items: u64,
    alpha0: &Q,
    delta: &Q,
    total_distance: &Q,
    changed: u64,
) -> Result<Guarantee, UserLevelError> {
    check_precondition(n_items, alpha0, delta)?;
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
    let eps = f_n(n_items, alpha0, delta, &(total_distance / &k)).scale(&k);
    chained(eps.hi, &k, delta)
}

/// The guarantee (ε, κ·e^{ε}·δ) of κ chained steps (Lemma A.2), from ε's upper end;
/// refused when δ' ≥ 1 (vacuous: the theorem then says nothing).
fn chained(eps: Q, k: &Q, delta: &Q) -> Result<Guarantee, UserLevelError> {
    let d = round(exp(&Interval::point(eps.clone()))?.scale(&(k * delta))).hi;
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

/// Theorem 4.4: PrivEMDItemWise is (α, δ_user)-bounded d_EM-DP (local: α_L over N = m;
/// central: α_C over N = n·m), α = (m·α₀/2)·B_N, δ_user = m·e^{α}·δ. The item-level δ is
/// the `delta` of B_N and of the precondition.
pub fn item_wise(model: Model, alpha0: &Q, delta: &Q) -> Result<Guarantee, UserLevelError> {
    model.check()?;
    let n_items = model.n_items()?;
    check_precondition(n_items, alpha0, delta)?;
    let m = Q::from(model.m());
    let alpha = round(b_n(n_items, alpha0, delta).scale(&(&m * alpha0 / Q::from(2u32))));
    chained(alpha.hi, &m, delta)
}

/// The standard Feldman–McMillan–Talwar bound (FMT21 Theorem 3.1) applied to a user's m
/// items with group privacy: ε = m·F_N(1), δ_user = m·e^{ε}·δ. A user-level DP ε, the
/// same for every pair of datasets (it ignores d_EM): the paper's comparison.
pub fn fmt_group(model: Model, alpha0: &Q, delta: &Q) -> Result<Guarantee, UserLevelError> {
    model.check()?;
    let n_items = model.n_items()?;
    check_precondition(n_items, alpha0, delta)?;
    let m = Q::from(model.m());
    let eps = round(f_n(n_items, alpha0, delta, &Q::from(1u32)).scale(&m));
    chained(eps.hi, &m, delta)
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
/// its precondition holds, its δ is not vacuous and its α is smaller; composition (δ = 0)
/// otherwise.
pub fn best(model: Model, alpha0: &Q, delta: &Q) -> (Guarantee, Bound) {
    let comp = composition(model, alpha0);
    match item_wise(model, alpha0, delta) {
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

/// The inverse (equations 6–7): the largest α₀ (on the grid 2⁻⁴⁰) whose
/// [`item_wise`] guarantee is within (α, δ_user).
#[derive(Clone, Debug, PartialEq)]
pub struct Inverse {
    pub alpha0: Q,
    /// The item-level δ used: δ_user / (m·e^{α}) rounded down.
    pub item_delta: Q,
    /// The forward guarantee at `alpha0` (≤ the target in both coordinates).
    pub guarantee: Guarantee,
}

/// The largest α₀ with [`item_wise`]`(model, α₀, δ_item)` ≤ (α, δ_user), δ_item =
/// δ_user/(m·e^{α}) (so m·e^{α'}·δ_item ≤ δ_user for every α' ≤ α). Bisection is valid
/// because the forward bound is increasing in α₀. An error when no α₀ > 0 satisfies the
/// precondition (too few items for δ).
pub fn max_alpha0(model: Model, alpha: &Q, delta_user: &Q) -> Result<Inverse, UserLevelError> {
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
    let cap = alpha0_cap(n_items, &item_delta).ok_or_else(|| {
        invalid(
            "items",
            format!("N = {n_items} items are too few to amplify at this δ (need N > 16·ln(2/δ))"),
        )
    })?;
    let cap = cap
        .min(Q::from(MAX_ALPHA0))
        .round_to_pow2_grid(-(GRID_BITS as i64), crate::exact::Round::Down);
    let ok = |a0: &Q| -> Option<Guarantee> {
        if *a0 <= 0u32 {
            return None;
        }
        let g = item_wise(model, a0, &item_delta).ok()?;
        (g.alpha <= *alpha && g.delta <= *delta_user).then_some(g)
    };
    let (mut lo, mut hi) = (Q::from(0u32), cap.clone());
    let mut best = ok(&cap).map(|g| (cap.clone(), g));
    if best.is_none() {
        let step = Q::from(1u32) >> GRID_BITS;
        while &hi - &lo > step {
            let mid = ((&lo + &hi) / Q::from(2u32))
                .round_to_pow2_grid(-(GRID_BITS as i64), crate::exact::Round::Down);
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
            "no α₀ ≥ 2^-40 reaches this (α, δ): raise α or δ, or shuffle more items",
        )
    })?;
    Ok(Inverse {
        alpha0,
        item_delta,
        guarantee,
    })
}

/// What an accountant query fixes: the randomizer's α₀, or the target user-level α (then
/// the largest α₀ that meets it, [`max_alpha0`]).
#[derive(Clone, Debug)]
pub enum Target {
    Alpha0(Q),
    Alpha(Q),
}

/// One query of the accountant (`mdp account item-wise`, the Python `account_item_wise`):
/// the α₀ and item δ used, the Theorem 4.4 guarantee, the FMT group-privacy and
/// composition comparisons, and optionally Theorem 4.3's loss at one normalised distance.
#[derive(Clone, Debug)]
pub struct Account {
    pub model: Model,
    pub alpha0: Q,
    pub item_delta: Q,
    pub guarantee: Guarantee,
    /// FMT per item with group privacy ([`fmt_group`]).
    pub fmt_group: Guarantee,
    /// m·α₀ ([`composition`]).
    pub composition: Q,
    /// Theorem 4.3 at normalised d_EM = t (κ = m): (t, the guarantee).
    pub at_distance: Option<(Q, Guarantee)>,
    /// [`super::weak_guarantee`]'s warning for the guarantee, if any.
    pub warning: Option<String>,
}

/// Answer one accountant query; `delta` is the item δ for [`Target::Alpha0`] and the user
/// δ for [`Target::Alpha`]; `distance` ∈ [0, 1] (normalised d_EM).
pub fn account(
    model: Model,
    target: &Target,
    delta: &Q,
    distance: Option<&Q>,
) -> Result<Account, UserLevelError> {
    let (alpha0, item_delta, guarantee) = match target {
        Target::Alpha0(a0) => (a0.clone(), delta.clone(), item_wise(model, a0, delta)?),
        Target::Alpha(alpha) => {
            let inv = max_alpha0(model, alpha, delta)?;
            (inv.alpha0, inv.item_delta, inv.guarantee)
        }
    };
    let fmt = fmt_group(model, &alpha0, &item_delta)?;
    let at_distance = match distance {
        None => None,
        Some(t) => {
            if *t < 0u32 || *t > 1u32 {
                return Err(invalid("distance", "must be in [0, 1] (normalised d_EM)"));
            }
            let m = Q::from(model.m());
            let g = hybrid(model.n_items()?, &alpha0, &item_delta, &(&m * t), model.m())?;
            Some((t.clone(), g))
        }
    };
    let warning = super::weak_guarantee(
        crate::exact::f64_up(&guarantee.alpha),
        crate::exact::f64_up(&guarantee.delta),
    );
    Ok(Account {
        model,
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
            "at_distance": at,
            "model": scope, "items": self.model.m(), "users": users,
            "alpha0": format_rational(&self.alpha0), "alpha0_approx": f64_nearest(&self.alpha0),
            "item_delta": format_rational(&self.item_delta),
            "alpha": format_rational(&self.guarantee.alpha), "alpha_upper": f64_up(&self.guarantee.alpha),
            "delta": format_rational(&self.guarantee.delta), "delta_upper": f64_up(&self.guarantee.delta),
            "fmt_group_epsilon_upper": f64_up(&self.fmt_group.alpha),
            "composition_alpha": f64_up(&self.composition),
            "distance_unit": "normalised (d ≤ 1)", "warning": self.warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_rational;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    #[test]
    fn fmt_readme_example_is_enclosed() {
        // FMT21 Theorem 3.1 at n = 10^5, ε₀ = 4, δ = 10^-6: 0.5346 (textbook form).
        let f = f_n(100_000, &q("4"), &q("1e-6"), &q("1"));
        let (lo, hi) = f.to_f64_bounds();
        assert!(lo > 0.5345 && hi < 0.5347, "{lo} {hi}");
        assert!(f.width() < q("1e-30"));
    }

    #[test]
    fn local_alpha_is_the_linear_slope() {
        // δ must be tiny for the local δ_L = m·e^{α_L}·δ to be below 1.
        let g = item_wise(Model::Local { m: 10_000 }, &q("0.01"), &q("1e-30")).unwrap();
        // α_L = 4α₀(√(m e^{α₀} ln(4/δ)) + e^{α₀})
        let a0: f64 = 0.01;
        let want = 4.0 * a0 * ((1e4 * a0.exp() * (4e30f64).ln()).sqrt() + a0.exp());
        let got = crate::exact::f64_up(&g.alpha);
        assert!(got >= want * (1.0 - 1e-12) && got <= want * (1.0 + 1e-12));
    }

    #[test]
    fn vacuous_delta_is_refused() {
        // α_L ≈ 1003 at m = 10^4, α₀ = ½: m·e^{α_L}·δ ≥ 1 for any useful δ.
        let e = item_wise(Model::Local { m: 10_000 }, &q("0.5"), &q("1e-6")).unwrap_err();
        assert!(e.to_string().contains("vacuous"));
    }

    #[test]
    fn precondition_refused_when_unproven() {
        assert!(item_wise(Model::Local { m: 30 }, &q("1"), &q("1e-6")).is_err());
        assert!(item_wise(Model::Central { n: 100_000, m: 30 }, &q("1"), &q("1e-6")).is_ok());
    }

    #[test]
    fn inverse_meets_target_and_is_nearly_tight() {
        let model = Model::Central { n: 100_000, m: 30 };
        let inv = max_alpha0(model, &q("1"), &q("1e-6")).unwrap();
        assert!(inv.guarantee.alpha <= 1u32 && inv.guarantee.delta <= q("1e-6"));
        let above = &inv.alpha0 + (Q::from(1u32) >> 30u64);
        let g = item_wise(model, &above, &inv.item_delta).unwrap();
        assert!(g.alpha > 1u32 || g.delta > q("1e-6"));
        // The reconstruction's example: α₀ ≈ 1.63 (vs composition α/m = 0.033).
        let a0 = crate::exact::f64_nearest(&inv.alpha0);
        assert!(a0 > 1.4 && a0 < 1.8, "{a0}");
    }
}
