//! Certified LP mechanisms: OPTMech (Imola et al. 2022 §2, the minimax-loss LP) and PMO
//! (Bordenabe et al. 2014; Qiu 2024 §2.2, the prior-weighted expected-loss LP with
//! privacy for pairs within η).
//!
//! Both are built by the certified pipeline every LP mechanism shares,
//! [`crate::lp::certified`] (`spec/lp.md`).

use crate::exact::Q;
use crate::lp::invalid;
use crate::lp::model::{Objective, PairSet, PrivacyLp};
use crate::lp::{certified, BuildError, Built, Solver};
use crate::metric::Space;
use crate::progress::Progress;

/// OPTMech: the mechanism with the least worst-case loss max_u Σ_k M\[u\]\[k\] d(u,k) among
/// ε·d-private mechanisms on the space (outputs = inputs).
pub fn optimal(
    space: &Space,
    eps: &Q,
    solver: Solver,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    optimal_on(space, eps, None, solver, max_prec, progress)
}

/// OPTMech with its outputs restricted to the inputs `outputs` (all if `None`): Imola et
/// al. §2's LP over the columns k ∈ outputs, the loss d(u, outputs\[k\]).
pub fn optimal_on(
    space: &Space,
    eps: &Q,
    outputs: Option<Vec<usize>>,
    solver: Solver,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let outputs = checked_outputs(outputs, space.n())?;
    let lp = PrivacyLp::new(
        space,
        eps.clone(),
        outputs,
        Objective::MaxLoss,
        None,
        PairSet::All,
        max_prec,
    );
    certified(
        &lp,
        eps,
        None,
        None,
        true,
        solver,
        None,
        u64::MAX,
        max_prec,
        progress,
    )
}

/// OPTMech's LP.
pub fn optimal_lp<'a>(space: &'a Space, eps: &Q, max_prec: u64) -> PrivacyLp<'a> {
    PrivacyLp::new(
        space,
        eps.clone(),
        (0..space.n()).collect(),
        Objective::MaxLoss,
        None,
        PairSet::All,
        max_prec,
    )
}

/// PMO parameters (Qiu 2024 §2.2).
pub struct PmoParams<'p> {
    /// Privacy only for pairs with d ≤ η (all pairs if `None`).
    pub within: Option<&'p Q>,
    /// Prior π over the inputs (normalized here); uniform if `None`.
    pub prior: Option<Vec<Q>>,
    /// n×K cost matrix (row-major); d(u, output) if `None`.
    pub cost: Option<Vec<Q>>,
    /// Output k is input `outputs\[k\]`; all inputs if `None`.
    pub outputs: Option<Vec<usize>>,
}

/// The output set: all n inputs if `None`; else non-empty, each an input index, no
/// repeats (a repeated output is the same column twice).
fn checked_outputs(outputs: Option<Vec<usize>>, n: usize) -> Result<Vec<usize>, BuildError> {
    let outputs = outputs.unwrap_or_else(|| (0..n).collect());
    if outputs.is_empty() {
        return Err(invalid("outputs", "at least one output is needed"));
    }
    if let Some(&o) = outputs.iter().find(|&&o| o >= n) {
        return Err(invalid(
            "outputs",
            format!("index {o} is not an input (n = {n})"),
        ));
    }
    let mut seen = vec![false; n];
    if let Some(&o) = outputs
        .iter()
        .find(|&&o| std::mem::replace(&mut seen[o], true))
    {
        return Err(invalid("outputs", format!("index {o} is given twice")));
    }
    Ok(outputs)
}

/// PMO's LP; checks the parameters' sizes.
pub fn pmo_lp<'a>(
    space: &'a Space,
    eps: &Q,
    p: &PmoParams,
    max_prec: u64,
) -> Result<PrivacyLp<'a>, BuildError> {
    let n = space.n();
    let outputs = checked_outputs(p.outputs.clone(), n)?;
    let prior = match &p.prior {
        Some(pr) => {
            if pr.len() != n {
                return Err(invalid(
                    "prior",
                    format!("has {} weights, the space has {n} points", pr.len()),
                ));
            }
            if pr.iter().any(|q| *q < 0u32) || pr.iter().all(|q| *q == 0u32) {
                return Err(invalid("prior", "weights must be ≥ 0 and not all 0"));
            }
            let s: Q = pr.iter().sum();
            pr.iter().map(|q| q / &s).collect()
        }
        None => vec![Q::from(1u32) / Q::from(n as u64); n],
    };
    if let Some(c) = &p.cost {
        let k = outputs.len();
        if c.len() != n * k {
            return Err(invalid(
                "cost",
                format!("has {} entries, expected n × K = {} × {}", c.len(), n, k),
            ));
        }
        if let Some(j) = c.iter().position(|q| *q < 0u32) {
            return Err(invalid(
                &format!("cost[{}][{}]", j / k, j % k),
                "costs are ≥ 0",
            ));
        }
    }
    if p.within.is_some_and(|eta| *eta <= 0u32) {
        return Err(invalid("within", "η must be > 0"));
    }
    let pairs = match p.within {
        Some(eta) => PairSet::Within(eta),
        None => PairSet::All,
    };
    Ok(PrivacyLp::new(
        space,
        eps.clone(),
        outputs,
        Objective::Expected { prior },
        p.cost.as_deref(),
        pairs,
        max_prec,
    ))
}

/// PMO: the mechanism with the least expected loss under the prior; `aim`, a certified
/// relative gap in (0, 1) to stop at ([`certified`]; `--gap`); `max_memory`, the budget
/// the localized LP's estimate must fit (spec/lp.md §4.6; `--max-memory`).
#[allow(clippy::too_many_arguments)]
pub fn pmo(
    space: &Space,
    eps: &Q,
    p: &PmoParams,
    solver: Solver,
    aim: Option<f64>,
    max_memory: u64,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    if let Some(a) = aim.filter(|a| !(*a > 0.0 && *a < 1.0)) {
        return Err(invalid("gap", format!("{a} is not in (0, 1)")));
    }
    let lp = pmo_lp(space, eps, p, max_prec)?;
    certified(
        &lp,
        eps,
        p.within,
        p.cost.as_deref(),
        true,
        solver,
        aim,
        max_memory,
        max_prec,
        progress,
    )
}

/// OPTMech as a family of [`produce`](mod@crate::produce): the least worst-case loss among ε·d-private
/// mechanisms (Imola et al. §2), written with its `lp_dual` lower bound.
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
/// let family = Family::Optimal(OptMech { solver: Solver::Ipm, outputs: None });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// // The lp_dual certificate proves no private mechanism has a smaller worst-case loss.
/// assert!(out.certified.file().certificate.lp_dual.is_some());
/// ```
#[derive(Clone, Debug)]
pub struct OptMech {
    pub solver: Solver,
    /// The inputs that are the outputs (`--outputs`; all inputs if `None`).
    pub outputs: Option<Vec<usize>>,
}

impl OptMech {
    /// The solver `auto` resolves to for the request, with the LP's outputs and rows.
    fn plan(&self, req: &crate::produce::Request) -> (usize, u64, Solver) {
        let n = req.space.n();
        let k = self.outputs.as_ref().map_or(n, Vec::len);
        let rows = crate::lp::model::rows_upper(n as u64, k as u64);
        let solver = self.solver.resolve(
            n as u64,
            k as u64,
            rows,
            crate::lp::LpKind::MaxLoss,
            req.max_memory,
        );
        (k, rows, solver)
    }
}

impl crate::produce::MechanismFamily for OptMech {
    fn name(&self) -> &'static str {
        "optimal"
    }

    fn paper_name(&self) -> String {
        "OPTMech".into()
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        let (k, rows, solver) = self.plan(req);
        crate::produce::check_lp_memory_rows(req.space.n(), k, rows, solver, req.max_memory)
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        progress: &dyn Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let (_, _, solver) = self.plan(req);
        let built = optimal_on(
            req.space,
            &req.eps,
            self.outputs.clone(),
            solver,
            crate::produce::MAX_PREC,
            progress,
        )?;
        Ok(crate::produce::Assembled {
            fields: self.outputs.as_ref().map_or(
                serde_json::json!({}),
                |o| serde_json::json!({"outputs": {"of_inputs": o}}),
            ),
            ..crate::produce::lp_assembled(built, serde_json::json!({}))
        })
    }
}

/// PMO's parameters (Qiu 2024 §2.2), validated against the space by
/// [`crate::produce::produce`]; [`PmoMech`] and [`crate::benders::BendersMech`] solve them.
#[derive(Clone, Debug, Default)]
pub struct Pmo {
    /// Privacy only for pairs with d ≤ η (Qiu's Definition 2.1); all pairs if `None`.
    pub within: Option<Q>,
    /// n prior weights ≥ 0, not all 0 (uniform if `None`).
    pub prior: Option<Vec<Q>>,
    /// n×K costs ≥ 0, row-major (the distance to the output if `None`).
    pub cost: Option<Vec<Q>>,
    /// The inputs that are the outputs (all inputs if `None`).
    pub outputs: Option<Vec<usize>>,
}

impl Pmo {
    /// The LP's privacy rows over `k` outputs, for the memory estimate and the choice of
    /// `--solver auto`: the ordered pairs within η (by the float distance, widened by
    /// 10⁻⁹ relative so that the count is not below the exact one; all n(n−1) without η)
    /// times k.
    fn privacy_rows(&self, space: &Space, k: usize) -> u64 {
        use rayon::prelude::*;
        let n = space.n();
        if let Some(r) = space.roads() {
            // A graph without its table: the rows are the edges' (lp::model::road_pairs).
            let edges = r
                .edges()
                .iter()
                .filter(|(_, _, w)| self.within.as_ref().is_none_or(|eta| w <= eta))
                .count() as u64;
            return (2 * edges).saturating_mul(k as u64);
        }
        let pairs = match self.within.as_ref().map(crate::exact::f64_up) {
            None => (n as u64).saturating_mul(n.saturating_sub(1) as u64),
            Some(eta) => (0..n)
                .into_par_iter()
                .map(|u: usize| {
                    (0..n)
                        .filter(|&v| v != u && space.approx(u, v) <= eta * (1.0 + 1e-9))
                        .count() as u64
                })
                .sum(),
        };
        pairs.saturating_mul(k as u64)
    }

    /// The prior as written to `loss.prior`: the given weights, or all ones.
    fn prior_or_ones(&self, n: usize) -> Vec<Q> {
        self.prior.clone().unwrap_or_else(|| vec![Q::from(1u32); n])
    }

    /// The file fields PMO's audit reads: `loss.prior` (all ones if none), `loss.cost`,
    /// `outputs`, `neighbors`.
    pub(crate) fn fields(&self, n: usize) -> serde_json::Value {
        use crate::io::number_value;
        use serde_json::json;
        let prior = self.prior_or_ones(n);
        let mut fields =
            json!({"loss": {"prior": prior.iter().map(number_value).collect::<Vec<_>>()}});
        if let Some(c) = &self.cost {
            let k = c.len() / n;
            fields["loss"]["cost"] = (0..n)
                .map(|u| {
                    c[u * k..(u + 1) * k]
                        .iter()
                        .map(number_value)
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        if let Some(o) = &self.outputs {
            fields["outputs"] = json!({"of_inputs": o});
        }
        if let Some(w) = &self.within {
            fields["neighbors"] = json!({"within": number_value(w)});
        }
        fields
    }

    /// An upper end of `matrix`'s expected loss, as the auditor encloses it from the
    /// fields [`Self::fields`] writes (one ulp above its enclosure's upper end).
    pub(crate) fn expected_loss_upper(
        &self,
        space: &Space,
        matrix: &crate::mechanism::Matrix,
    ) -> Option<f64> {
        let n = space.n();
        let prep = crate::privacy::Prepared::new(
            space,
            matrix,
            self.within.as_ref(),
            crate::produce::MAX_PREC,
        )
        .ok()?;
        let cost_matrix = self
            .cost
            .as_ref()
            .map(|c| crate::mechanism::Matrix::new(n, c.len() / n, c.clone()));
        let sites: Vec<usize> = self.outputs.clone().unwrap_or_else(|| (0..n).collect());
        let cost = match &cost_matrix {
            Some(m) => crate::loss::Cost::Matrix(m),
            None => crate::loss::Cost::Distance(&sites),
        };
        let prior = self.prior_or_ones(n);
        let l = crate::loss::losses(&prep, &cost, &Q::from_unsigneds(1u32, 2u32), Some(&prior));
        l.expected.map(|e| e.hi.next_up())
    }

    /// The parameters of [`pmo`] / [`pmo_lp`], which check them against the space (sizes,
    /// η > 0, costs ≥ 0, prior ≥ 0 and not all 0).
    pub fn params(&self) -> PmoParams<'_> {
        PmoParams {
            within: self.within.as_ref(),
            prior: self.prior.clone(),
            cost: self.cost.clone(),
            outputs: self.outputs.clone(),
        }
    }
}

/// PMO as a family of [`produce`](mod@crate::produce): the least expected loss under a prior, privacy
/// within η (Qiu 2024 §2.2), written with its `lp_dual` certificate (expected loss).
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
/// let pmo = Pmo { within: Some(Q::from(10u32)), prior: Some(vec![Q::from(1u32), Q::from(3u32), Q::from(1u32), Q::from(1u32), Q::from(2u32), Q::from(1u32)]), ..Pmo::default() };
/// let family = Family::Pmo(PmoMech { pmo, solver: Solver::Ipm, gap: None });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// assert!(out.certified.file().within.is_some());
/// ```
#[derive(Clone, Debug)]
pub struct PmoMech {
    pub pmo: Pmo,
    pub solver: Solver,
    /// The certified relative gap to stop at (`--gap`; the structured interior point's
    /// own target if `None`).
    pub gap: Option<f64>,
}

impl PmoMech {
    /// The solver `auto` resolves to for the request (within η it may take the localized
    /// LP, spec/lp.md §4.6), with the LP's outputs and privacy rows.
    fn plan(&self, req: &crate::produce::Request) -> (usize, u64, Solver) {
        let n = req.space.n();
        let k = self.pmo.outputs.as_ref().map_or(n, Vec::len);
        let rows = self.pmo.privacy_rows(req.space, k);
        let kind = crate::lp::LpKind::Expected {
            localizable: self.pmo.within.is_some(),
        };
        let solver = self
            .solver
            .resolve(n as u64, k as u64, rows, kind, req.max_memory);
        (k, rows, solver)
    }
}

impl crate::produce::MechanismFamily for PmoMech {
    fn name(&self) -> &'static str {
        "pmo"
    }

    fn paper_name(&self) -> String {
        "PMO".into()
    }

    /// Nothing to check before [`build`](crate::produce::MechanismFamily::build): the
    /// settings are checked against the space by [`pmo`], and the memory where the build
    /// counts the privacy rows (one O(n²) pass) and resolves the solver, before the LP.
    fn check(
        &self,
        _req: &crate::produce::Request,
        _progress: &dyn Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        Ok(())
    }

    /// `auto` kept within η tries the localized LP, which estimates its own memory from
    /// the neighbourhoods (a fraction of the whole LP's: 1 500 points within η were
    /// refused at 9.8 GB and ran in 1.1 GB, issue 33); the whole LP's lazy rows are
    /// checked only if it falls back to them (`lp::solver`).
    fn build(
        &self,
        req: &crate::produce::Request,
        progress: &dyn Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let (k, rows, solver) = self.plan(req);
        if solver != Solver::Auto {
            crate::produce::check_lp_memory_rows(req.space.n(), k, rows, solver, req.max_memory)?;
        }
        let built = pmo(
            req.space,
            &req.eps,
            &self.pmo.params(),
            solver,
            self.gap,
            req.max_memory,
            crate::produce::MAX_PREC,
            progress,
        )?;
        Ok(crate::produce::Assembled {
            fields: self.pmo.fields(req.space.n()),
            ..crate::produce::lp_assembled(built, serde_json::json!({}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lp::pipeline::{certify_dual, problem};
    use crate::lp::{ipm, Dual, TARGET_GAP};
    use crate::mechanism::Matrix;
    use crate::metric::{MetricKind, Space};

    /// [`crate::lp::Dual::sparsify`] (Benders' certificates): the proven bound falls by at
    /// most the dropped multipliers' sum, and the smallest are the ones dropped.
    #[test]
    fn sparsified_dual_loses_at_most_the_dropped_sum() {
        let pts = (0..8)
            .map(|i| vec![Q::from_signeds(7 * i * i % 11, 10)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let (eps, eta) = (Q::from(2u32), Q::from_signeds(1, 2));
        let params = PmoParams {
            within: Some(&eta),
            prior: None,
            cost: None,
            outputs: None,
        };
        let lp = pmo_lp(&space, &eps, &params, 256).unwrap();
        let silent = crate::progress::Silent;
        let (p, d) = ipm::solve(&lp, &silent).unwrap();
        let pb = problem(&lp, &eps, Some(&eta), None, 256);
        let bound = |d: Dual| {
            certify_dual(&lp, p.objective, None, d, &pb, None, TARGET_GAP, &silent)
                .unwrap()
                .lower_bound
                .unwrap_or(0.0)
        };
        let full = bound(d.clone());
        assert!(full > 0.0 && !d.gamma.is_empty());
        let mut dropped_any = false;
        for budget in [0.0, 1e-12, 1e-6, 1e-3, 1e-1, 10.0].map(|b| b * full) {
            let mut s = d.clone();
            let (count, sum) = s.sparsify(budget);
            assert!(sum <= budget, "{sum} > {budget}");
            assert_eq!(s.gamma.len() + count, d.gamma.len());
            let kept_min = s.gamma.iter().map(|g| g.3).fold(f64::INFINITY, f64::min);
            let dropped_max = d
                .gamma
                .iter()
                .filter(|g| !s.gamma.contains(g))
                .map(|g| g.3)
                .fold(0.0, f64::max);
            assert!(
                dropped_max <= kept_min,
                "{dropped_max} dropped, {kept_min} kept"
            );
            // Both proofs may be compacted (spec/lp.md §5.1), each losing at most
            // COMPACT_LOSS of its bound.
            let b = bound(s);
            let slack = (crate::lp::compact::COMPACT_LOSS + 1e-12) * full + 1e-12;
            assert!(b >= full - sum - slack, "{b} < {full} - {sum}");
            dropped_any |= count > 0;
        }
        assert!(dropped_any);
    }

    #[test]
    fn objective_f64_is_the_written_matrix_loss() {
        let pts = vec![
            vec![Q::from(0u32)],
            vec![Q::from(1u32)],
            vec![Q::from(3u32)],
        ];
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eps = Q::from(1u32);
        let lp = PrivacyLp::new(
            &space,
            eps,
            (0..3).collect(),
            Objective::MaxLoss,
            None,
            PairSet::All,
            256,
        );
        let third = Q::from_signeds(1, 3);
        let uniform = Matrix::new(3, 3, vec![third; 9]);
        // Row losses (0+1+3)/3, (1+0+2)/3, (3+2+0)/3: the max is 5/3.
        assert!((lp.objective_f64(&uniform) - 5.0 / 3.0).abs() < 1e-12);
        let prior = vec![
            Q::from_signeds(1, 2),
            Q::from_signeds(1, 4),
            Q::from_signeds(1, 4),
        ];
        let lp = PrivacyLp::new(
            &space,
            Q::from(1u32),
            (0..3).collect(),
            Objective::Expected { prior },
            None,
            PairSet::All,
            256,
        );
        let want = 0.5 * 4.0 / 3.0 + 0.25 * 3.0 / 3.0 + 0.25 * 5.0 / 3.0;
        assert!((lp.objective_f64(&uniform) - want).abs() < 1e-12);
    }
}
