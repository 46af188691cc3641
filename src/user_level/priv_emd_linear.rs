//! Linear queries under d_EM privacy: Theorem 4.1 (sensitivity ≤ l·d_EM for an
//! l-Lipschitz column map), Algorithm 1 PrivEMDLinear and Lemma 4.2 (its scales)
//! (Imola et al. 2024, §4.1; `spec/user-level.md`, "PrivEMDLinear").
//!
//! A query is a d×k matrix Q given by its columns f(x) = Q[:, x], one per site; its value
//! on a dataset X is the mean q(X) = (1/|X|)·Σ_{x∈X} f(x) (equation 5). The release is
//! q(X) + R·U with U uniform in the unit ball of the norm and R ~ Gamma(d+1, l·σ): the
//! density ∝ exp(−‖z − q‖/(l·σ)) (the K-norm mechanism), σ = 1/α (local, unbounded) or
//! 1/(α·n) (central, bounded: n users of equal size).
//!
//! * l is computed, not trusted: [`lipschitz`] returns a proven upper bound of
//!   max_{x≠x'} ‖f(x) − f(x')‖ / d(x, x') (exact norms for l1/l∞, rounded up for l2;
//!   distances rounded down).
//! * q(X) is summed exactly; the release is round_h(q(X) + Z) with the real-valued noise Z
//!   sampled exactly from the ChaCha20 generator of [`crate::privatize::rng`] (OS-seeded
//!   unless a test passes a seed) and h = 2⁻⁴⁰ of the scale ([`super::exact_noise`]):
//!   float-safe, the law of the ideal mechanism rounded (`spec/user-level.md` §3.1).
//!   [`PrivEmdLinear::noise`] (floats) serves the utility experiments only.

use super::{invalid, positive, Budget, UserLevelError};
use crate::exact::{f64_nearest, f64_up, functions, Interval, Q};
use crate::metric::{ExactDistance, MetricKind, Space};
use rand::Rng;
use rand_distr::{Distribution, Exp1, Gamma, StandardNormal};

/// The norm of the query's range (the K of the K-norm mechanism).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    L1,
    L2,
    Linf,
}

impl Norm {
    pub fn from_name(s: &str) -> Option<Norm> {
        match s {
            "l1" => Some(Norm::L1),
            "l2" => Some(Norm::L2),
            "linf" => Some(Norm::Linf),
            _ => None,
        }
    }

    /// An enclosure of ‖v‖ (exact for l1 and l∞).
    fn enclosure(self, v: &[Q]) -> Interval {
        match self {
            Norm::L1 => Interval::point(v.iter().map(|x| x.abs()).sum()),
            Norm::Linf => Interval::point(v.iter().map(|x| x.abs()).max().unwrap_or_default()),
            Norm::L2 => {
                let s: Q = v.iter().map(|x| x * x).sum();
                functions::sqrt(&Interval::point(s), 64).expect("a sum of squares is ≥ 0")
            }
        }
    }
}

/// A linear query: one column f(x) ∈ Q^d per site, the norm of its range, and the names
/// of its d components with their units (`lat_deg`, `distance_km`, …), which label every
/// release.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearQuery {
    pub columns: Vec<Vec<Q>>,
    pub norm: Norm,
    pub components: Vec<String>,
}

/// The name of a distance-valued component on `space`: `distance_km` on lat/lon spaces
/// with the Earth's radius (distances in km), `distance` (the space's own unit) otherwise.
fn distance_component(space: &Space) -> String {
    match crate::import::distance_unit(space) {
        "" => "distance".into(),
        unit => format!("distance_{unit}"),
    }
}

impl LinearQuery {
    /// From columns of equal length d ≥ 1, one per site of `space`.
    pub fn new(
        space: &Space,
        columns: Vec<Vec<Q>>,
        norm: Norm,
    ) -> Result<LinearQuery, UserLevelError> {
        if columns.len() != space.n() {
            return Err(invalid(
                "query",
                format!(
                    "{} columns for a space of {} sites",
                    columns.len(),
                    space.n()
                ),
            ));
        }
        let d = columns.first().map_or(0, |c| c.len());
        if d == 0 {
            return Err(invalid("query", "columns must have dimension ≥ 1"));
        }
        if let Some(x) = columns.iter().position(|c| c.len() != d) {
            return Err(invalid(
                format!("query[{x}]"),
                format!("dimension differs from {d}"),
            ));
        }
        let components = (0..d).map(|i| format!("q{i}")).collect();
        Ok(LinearQuery {
            columns,
            norm,
            components,
        })
    }

    /// The same query with its components named (one name per component).
    fn named(mut self, names: Vec<String>) -> LinearQuery {
        debug_assert_eq!(names.len(), self.dim());
        self.components = names;
        self
    }

    /// Dimension d of the range.
    pub fn dim(&self) -> usize {
        self.columns[0].len()
    }

    /// The average location: f(x) = the site's coordinates (spaces with points). For a
    /// normed space the map is 1-Lipschitz in its own norm.
    pub fn average(space: &Space, norm: Norm) -> Result<LinearQuery, UserLevelError> {
        if space.points().len() < space.n() {
            return Err(invalid("query", "average needs a space with points"));
        }
        let q = LinearQuery::new(space, space.points()[..space.n()].to_vec(), norm)?;
        let names = match space.kind() {
            MetricKind::Haversine => vec!["lat_deg".into(), "lon_deg".into()],
            _ => (0..q.dim()).map(|i| format!("x{i}")).collect(),
        };
        Ok(q.named(names))
    }

    /// Distance to a site c: f(x) = d(x, c) (rational distances exact, others at the
    /// nearest rational of a 2⁻⁶⁴ enclosure; l is computed for the map actually used).
    pub fn distance_to(space: &Space, c: usize) -> Result<LinearQuery, UserLevelError> {
        let cols = (0..space.n())
            .map(|x| vec![distance_q(space, x, c)])
            .collect();
        Ok(
            LinearQuery::new(space, check_site(space, c, cols)?, Norm::L1)?
                .named(vec![distance_component(space)]),
        )
    }

    /// A kernel-smoothed region indicator: f(x) = 1 within `radius` of site c, falling
    /// linearly to 0 over `width` beyond it (Lipschitz constant 1/width).
    pub fn region(
        space: &Space,
        c: usize,
        radius: &Q,
        width: &Q,
    ) -> Result<LinearQuery, UserLevelError> {
        positive(width, "width")?;
        let cols = (0..space.n())
            .map(|x| {
                let over = distance_q(space, x, c) - radius;
                let v = if over <= 0u32 {
                    Q::from(1u32)
                } else {
                    (Q::from(1u32) - over / width).max(Q::from(0u32))
                };
                vec![v]
            })
            .collect();
        Ok(
            LinearQuery::new(space, check_site(space, c, cols)?, Norm::L1)?
                .named(vec!["region_weight".into()]),
        )
    }

    /// Similarity with a vector c: f(x) = ⟨x, c⟩ (spaces with points).
    pub fn similarity(space: &Space, c: &[Q]) -> Result<LinearQuery, UserLevelError> {
        let pts = space.points();
        if pts.len() < space.n() || pts.first().is_none_or(|p| p.len() != c.len()) {
            return Err(invalid(
                "query",
                "similarity needs a space with points of the vector's dimension",
            ));
        }
        let cols = pts[..space.n()]
            .iter()
            .map(|p| vec![p.iter().zip(c).map(|(a, b)| a * b).sum()])
            .collect();
        Ok(LinearQuery::new(space, cols, Norm::L1)?.named(vec!["similarity".into()]))
    }

    /// q(X) = (1/|X|)·Σ f(x), exact.
    pub fn value(&self, items: &[usize]) -> Vec<Q> {
        let mut s = vec![Q::from(0u32); self.dim()];
        for &x in items {
            for (a, b) in s.iter_mut().zip(&self.columns[x]) {
                *a += b;
            }
        }
        let n = Q::from(items.len() as u64);
        s.into_iter().map(|a| a / &n).collect()
    }
}

fn check_site(space: &Space, c: usize, cols: Vec<Vec<Q>>) -> Result<Vec<Vec<Q>>, UserLevelError> {
    if c >= space.n() {
        return Err(invalid("center", "outside the space"));
    }
    Ok(cols)
}

/// d(x, c) as a rational: exact when rational, else the midpoint of a 2⁻⁶⁴ enclosure.
fn distance_q(space: &Space, x: usize, c: usize) -> Q {
    if c >= space.n() {
        return Q::from(0u32);
    }
    match space.exact(x, c) {
        ExactDistance::Rational(q) => q,
        _ => space.enclosure(x, c, 64).mid(),
    }
}

/// A proven upper bound of the Lipschitz constant l = max_{x≠x'} ‖f(x) − f(x')‖/d(x, x')
/// (Theorem 4.1 then gives Δ_EM(q) ≤ l). Errors when two sites at distance 0 have
/// different columns (no finite l), or past the budget (k² pairs).
pub fn lipschitz(
    space: &Space,
    query: &LinearQuery,
    budget: &mut Budget,
) -> Result<Q, UserLevelError> {
    let k = space.n();
    let mut best = Q::from(0u32);
    for x in 0..k {
        budget.spend((k * query.dim()) as u64, "lipschitz constant")?;
        for y in x + 1..k {
            let diff: Vec<Q> = query.columns[x]
                .iter()
                .zip(&query.columns[y])
                .map(|(a, b)| a - b)
                .collect();
            let num = query.norm.enclosure(&diff).hi;
            if num == 0u32 {
                continue;
            }
            if space.is_zero(x, y) {
                return Err(invalid(
                    format!("query[{x}]"),
                    format!("sites {x} and {y} are at distance 0 but have different columns"),
                ));
            }
            let d = space.enclosure(x, y, 64).lo;
            if d <= 0u32 {
                return Err(invalid(
                    "space",
                    format!("cannot bound d({x}, {y}) away from 0"),
                ));
            }
            let r = num / d;
            if r > best {
                best = r;
            }
        }
    }
    if best == 0u32 {
        return Err(invalid(
            "query",
            "constant query (l = 0): nothing to release",
        ));
    }
    // Rounded up onto a 2^-64 relative grid (keeps the number short).
    let e = best.floor_log2_abs();
    Ok(best.round_to_pow2_grid(e - 64, crate::exact::Round::Up))
}

/// Who adds the noise (Lemma 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Each user releases q(X_i): σ = 1/α, α-unbounded local d_EM-DP.
    Local,
    /// The curator releases q of all n users' items (equal sizes): σ = 1/(α·n),
    /// α-bounded central d_EM-DP.
    Central { n: u64 },
}

/// PrivEMDLinear (Algorithm 1) for a query, its computed l, α and the scope.
#[derive(Clone, Debug)]
pub struct PrivEmdLinear {
    pub query: LinearQuery,
    pub l: Q,
    pub alpha: Q,
    pub scope: Scope,
    /// l·σ rounded up to a double (a larger scale only adds privacy).
    scale: f64,
    gamma: Gamma<f64>,
}

impl PrivEmdLinear {
    pub fn new(
        space: &Space,
        query: LinearQuery,
        alpha: &Q,
        scope: Scope,
        budget: &mut Budget,
    ) -> Result<PrivEmdLinear, UserLevelError> {
        let l = lipschitz(space, &query, budget)?;
        PrivEmdLinear::with_lipschitz(query, l, alpha, scope)
    }

    /// The same with l already computed by [`lipschitz`] for this query and space (the
    /// caller vouches for it: l must be an upper bound of the Lipschitz constant).
    pub fn with_lipschitz(
        query: LinearQuery,
        l: Q,
        alpha: &Q,
        scope: Scope,
    ) -> Result<PrivEmdLinear, UserLevelError> {
        positive(alpha, "alpha")?;
        positive(&l, "lipschitz")?;
        if let Scope::Central { n: 0 } = scope {
            return Err(invalid("users", "must be ≥ 1"));
        }
        let sigma_l = match scope {
            Scope::Local => &l / alpha,
            Scope::Central { n } => &l / (alpha * Q::from(n)),
        };
        let scale = f64_up(&sigma_l);
        if !scale.is_finite() || scale <= 0.0 {
            return Err(invalid("alpha", "noise scale l·σ outside the double range"));
        }
        let gamma = Gamma::new(query.dim() as f64 + 1.0, scale)
            .map_err(|e| invalid("alpha", format!("noise scale: {e}")))?;
        Ok(PrivEmdLinear {
            query,
            l,
            alpha: alpha.clone(),
            scope,
            scale,
            gamma,
        })
    }

    /// The noise scale l·σ actually used (rounded up).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// A K-norm noise vector R·U (module doc) in floating point: for the utility
    /// experiments only (`evaluation`); releases use [`Self::release_value`].
    pub fn noise<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        let r: f64 = self.gamma.sample(rng);
        let u = unit_ball(self.query.norm, self.query.dim(), rng);
        u.into_iter().map(|x| r * x).collect()
    }

    /// The release for a dataset (local: one user's items; central: all items).
    pub fn release<R: Rng + ?Sized>(&self, items: &[usize], rng: &mut R) -> Vec<f64> {
        self.release_value(&self.query.value(items), rng)
    }

    /// The release for a query value computed elsewhere (streaming sums): round_h(q + Z)
    /// sampled exactly ([`super::exact_noise`], float-safe), printed as the nearest doubles
    /// (a fixed map of the exact grid point: post-processing).
    pub fn release_value<R: Rng + ?Sized>(&self, q: &[Q], rng: &mut R) -> Vec<f64> {
        self.release_exact(q, rng).iter().map(f64_nearest).collect()
    }

    /// round_h(q + Z) as exact grid points (h = [`Self::granularity`]).
    pub fn release_exact<R: Rng + ?Sized>(&self, q: &[Q], rng: &mut R) -> Vec<Q> {
        let theta = crate::exact::q_from_f64(self.scale);
        super::exact_noise::knorm_rounded(q, &theta, &self.granularity(), self.query.norm, rng)
    }

    /// The grid step h of the released values (2⁻⁴⁰ of the scale, a power of two).
    pub fn granularity(&self) -> Q {
        super::exact_noise::grid(&crate::exact::q_from_f64(self.scale))
    }
}

/// A uniform point of the unit ball of `norm` in dimension d: l2 by a Gaussian direction
/// and radius V^{1/d}; l1 by signed coordinates E_i / Σ_{j≤d+1} E_j (E i.i.d. Exp(1),
/// the first d coordinates of a uniform point of the (d+1)-simplex); l∞ coordinate-wise.
pub fn unit_ball<R: Rng + ?Sized>(norm: Norm, d: usize, rng: &mut R) -> Vec<f64> {
    match norm {
        Norm::Linf => (0..d).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        Norm::L1 => {
            let e: Vec<f64> = (0..=d).map(|_| Exp1.sample(rng)).collect();
            let s: f64 = e.iter().sum();
            e[..d]
                .iter()
                .map(|x| if rng.gen::<bool>() { x / s } else { -x / s })
                .collect()
        }
        Norm::L2 => loop {
            let g: Vec<f64> = (0..d).map(|_| StandardNormal.sample(rng)).collect();
            let n = g.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.0 {
                let r = rng.gen::<f64>().powf(1.0 / d as f64);
                break g.into_iter().map(|x| r * x / n).collect();
            }
        },
    }
}
