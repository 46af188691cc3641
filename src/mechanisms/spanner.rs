//! SpannerMech (Imola et al. 2022, Appendix A; Bordenabe et al. 2014): the OPTMech LP with
//! privacy rows only on the edges of a greedy (2k−1)-spanner, solved at ε/(2k−1). By
//! Theorem 4 (chaining the rows along a spanner path of length ≤ (2k−1)·d) the result is
//! ε·d private; the exact audit proves it for the matrix actually written.
//!
//! The greedy spanner (Althöfer et al. 1993) visits pairs by increasing distance and adds
//! (u, v) unless the spanner already has a path of length ≤ t·d(u, v). Here that test is
//! rigorous: path lengths are upper bounds (upward-rounded sums of distance enclosures'
//! upper ends) and t·d uses the enclosure's lower end, so the stretch bound it leaves is a
//! proof, re-checked by [`verify_stretch`].

use crate::exact::float::{add_up, mul_down, FI};
use crate::exact::Q;
use crate::lp::model::{Objective, PairSet, PrivacyLp};
use crate::lp::{certified, BuildError, Built, Solver};
use crate::metric::Space;
use crate::progress::Progress;

fn dist_fi(space: &Space, u: usize, v: usize) -> FI {
    if space.is_zero(u, v) {
        FI::point(0.0)
    } else {
        space.fi(u, v)
    }
}

/// The greedy t-spanner's edges (u < v) and the n×n upper bounds on its path lengths.
pub fn greedy_spanner(space: &Space, t: f64) -> (Vec<(usize, usize)>, Vec<f64>) {
    let n = space.n();
    let mut pairs: Vec<(f64, usize, usize)> = (0..n)
        .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
        .map(|(u, v)| (space.approx(u, v), u, v))
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let mut dg = vec![f64::INFINITY; n * n];
    for u in 0..n {
        dg[u * n + u] = 0.0;
    }
    let mut edges = vec![];
    for (_, u, v) in pairs {
        let d = dist_fi(space, u, v);
        if dg[u * n + v] <= mul_down(t, d.lo) {
            continue;
        }
        edges.push((u, v));
        let w = d.hi;
        // Relax every pair through the new edge (both orientations), rounding up.
        for a in 0..n {
            let (au, av) = (dg[a * n + u], dg[a * n + v]);
            if au.is_infinite() && av.is_infinite() {
                continue;
            }
            for b in 0..n {
                let via1 = add_up(add_up(au, w), dg[v * n + b]);
                let via2 = add_up(add_up(av, w), dg[u * n + b]);
                let best = via1.min(via2);
                if best < dg[a * n + b] {
                    dg[a * n + b] = best;
                }
            }
        }
    }
    (edges, dg)
}

/// Prove that the spanner's stretch is ≤ `t`: for every pair, either (u, v) is an edge
/// (d_G = d), or a path's upward-rounded length is ≤ t × the downward-rounded d(u, v), or
/// u and v are the same point and a path of length exactly 0 joins them.
/// Returns the largest proven ratio bound (1 when every pair is an edge), or the first pair
/// that could not be proven.
pub fn verify_stretch(
    space: &Space,
    edges: &[(usize, usize)],
    t: f64,
) -> Result<f64, (usize, usize)> {
    let n = space.n();
    let mut adj = vec![false; n * n];
    for &(u, v) in edges {
        adj[u * n + v] = true;
        adj[v * n + u] = true;
    }
    let graph = space.upper_adjacency(&|u, v| adj[u * n + v].then(|| dist_fi(space, u, v).hi));
    let mut worst: f64 = 1.0;
    for u in 0..n {
        let dg = space.shortest_paths_upper(u, &graph);
        for v in 0..n {
            if v == u || adj[u * n + v] {
                continue;
            }
            // Two copies of one point (d = 0 exactly): a path of length exactly 0 proves
            // d_G = 0 ≤ t·0 (its zero-length edges hold the rows equal, as the pair needs).
            if space.is_zero(u, v) && dg[v] == 0.0 {
                continue;
            }
            let d = dist_fi(space, u, v);
            if !(dg[v].is_finite() && d.lo > 0.0 && dg[v] <= mul_down(t, d.lo)) {
                return Err((u, v));
            }
            // dg ≤ t·d.lo rounded down, so dg/d.lo ≤ t exactly: the quotient's outward
            // rounding must not report more.
            worst = worst.max(FI::point(dg[v]).div(FI::point(d.lo)).hi.min(t));
        }
    }
    Ok(worst)
}

/// The LP SpannerMech solves (Imola et al. 2022 §3.1): OPTMech's max-loss LP at
/// ε/(2k − 1) with privacy rows only on the spanner's `edges` (both directions).
pub fn spanner_lp<'a>(
    space: &'a Space,
    eps: &Q,
    k: u32,
    edges: &'a [(usize, usize)],
    max_prec: u64,
) -> PrivacyLp<'a> {
    PrivacyLp::new(
        space,
        eps / Q::from(2 * u64::from(k) - 1),
        (0..space.n()).collect(),
        Objective::MaxLoss,
        None,
        PairSet::Edges(edges),
        max_prec,
    )
}

/// SpannerMech with stretch 2k − 1. Returns the mechanism, the edges and the verified
/// stretch bound.
pub fn spanner_mech(
    space: &Space,
    eps: &Q,
    k: u32,
    solver: Solver,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<(Built, Vec<(usize, usize)>, f64), BuildError> {
    if k < 1 {
        return Err(crate::lp::invalid("k", "must be ≥ 1"));
    }
    let t = (2 * u64::from(k) - 1) as f64;
    let (edges, _) = greedy_spanner(space, t);
    let stretch = verify_stretch(space, &edges, t)
        .map_err(|(u, v)| BuildError::StretchUnproven { stretch: t, u, v })?;
    let lp = spanner_lp(space, eps, k, &edges, max_prec);
    // No dual: a bound for the spanner LP is not a bound for ε·d-private mechanisms.
    let built = certified(
        &lp,
        eps,
        None,
        None,
        false,
        solver,
        None,
        u64::MAX,
        max_prec,
        progress,
    )?;
    Ok((built, edges, stretch))
}

/// SpannerMech as a family of [`produce`](mod@crate::produce): OPTMech's rows on a greedy
/// (2k−1)-spanner at ε/(2k−1), 1 ≤ k ≤ n (Imola et al. App. A, Theorem 4); no
/// certificate (a spanner LP bound is no bound on OPTMech).
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # use mdp::lp::Solver;
/// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
/// let family = Family::Spanner(SpannerMech { k: 2, solver: Solver::Ipm });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug)]
pub struct SpannerMech {
    pub k: u64,
    pub solver: Solver,
}

/// SpannerMech's k: 1 ≤ k ≤ n (beyond n the stretch 2k − 1 exceeds any path's hops).
pub fn check_spanner_k(k: u64, n: usize) -> Result<u32, crate::produce::ProduceError> {
    if k < 1 || k > n.max(1) as u64 {
        return Err(crate::produce::invalid(
            "k",
            format!("must be in 1..={} (the number of inputs)", n.max(1)),
        ));
    }
    Ok(k as u32)
}

impl crate::produce::MechanismFamily for SpannerMech {
    fn name(&self) -> &'static str {
        "spanner"
    }

    fn paper_name(&self) -> String {
        format!("SpannerMech(k={})", self.k)
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        let n = req.space.n();
        check_spanner_k(self.k, n)?;
        crate::produce::check_lp_memory(n, n, self.solver, req.max_memory)
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        progress: &dyn Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let k = check_spanner_k(self.k, req.space.n())?;
        let (b, edges, stretch) = spanner_mech(
            req.space,
            &req.eps,
            k,
            self.solver,
            crate::produce::MAX_PREC,
            progress,
        )?;
        Ok(crate::produce::lp_assembled(
            b,
            serde_json::json!({"k": k, "spanner_edges": edges.len(), "stretch_bound": stretch}),
        ))
    }
}
