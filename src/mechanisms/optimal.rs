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
