//! Certified LP mechanisms: OPTMech (Imola et al. 2022 §2, the minimax-loss LP) and PMO
//! (Bordenabe et al. 2014; Qiu 2024 §2.2, the prior-weighted expected-loss LP with
//! privacy for pairs within η).
//!
//! [`certified`] is the pipeline every LP mechanism shares (`spec/lp.md`): lazy float
//! solve → exact repair (proved private by the exact check) → float dual → exactly
//! verified `lp_dual` lower bound. The reported gap is the repaired matrix's exact loss
//! minus that bound.

use crate::exact::{f64_down, q_from_f64, Q};
use crate::lp::certificate::{self, Bounded, LpDual};
use crate::lp::model::{Objective, PairSet, PrivacyLp, CAPS};
use crate::lp::repair;
use crate::lp::simplex::{self, Round};
use crate::mechanism::Matrix;
use crate::metric::Space;

/// Initial neighbours per input for the lazy rows.
pub const INITIAL_NEIGHBOURS: usize = 2;

/// A certified LP mechanism and what was measured while building it.
pub struct Built {
    pub matrix: Matrix,
    pub certificate: Option<LpDual>,
    /// The float LP optimum (with the primal's rounded-down constants).
    pub lp_objective: f64,
    /// The certified lower bound (rounded down), when a dual was computed.
    pub lower_bound: Option<f64>,
    /// Privacy rows of the LP's pair set, and those the lazy solve generated.
    pub rows_total: usize,
    pub rows_generated: usize,
    pub rounds: usize,
    /// Uniform-mixing weight of the repair.
    pub t: f64,
    /// The cap on the privacy constants the float solves used (spec/lp.md §2).
    pub cap: f64,
    pub seconds_primal: f64,
    pub seconds_dual: f64,
}

/// Why a build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// Bad parameters (exit 2).
    Input(String),
    /// The float solver or the repair failed (exit 1).
    Solver(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Input(s) | BuildError::Solver(s) => f.write_str(s),
        }
    }
}

/// Solve `lp` with lazy rows, repair it into a mechanism the exact check proves private at
/// `claim_eps` within `claim_within`, and (if `dual`) certify a lower bound on the LP's
/// objective for every mechanism private at `claim_eps` (valid because `lp.eps` =
/// `claim_eps` for OPTMech and PMO). `cost` is the explicit cost matrix the LP used, if
/// any (the verifier reads the same one from the file).
pub fn certified(
    lp: &PrivacyLp,
    claim_eps: &Q,
    claim_within: Option<&Q>,
    cost: Option<&[Q]>,
    dual: bool,
    max_prec: u64,
    progress: &mut dyn FnMut(&Round),
) -> Result<Built, BuildError> {
    // On a numerical failure, retry with a lower cap on the constants (spec/lp.md §2).
    let mut lp_capped;
    let mut lp = lp;
    let mut attempt = 0;
    let primal = loop {
        match simplex::solve_primal(lp, INITIAL_NEIGHBOURS, progress) {
            Ok(p) => break p,
            Err(e) if attempt + 1 < CAPS.len() => {
                attempt += 1;
                eprintln!("lp: {e}; retrying with constants capped at {}", CAPS[attempt]);
                let next = lp.clone_with_cap(CAPS[attempt]);
                lp_capped = next;
                lp = &lp_capped;
            }
            Err(e) => return Err(BuildError::Solver(e.to_string())),
        }
    };
    let rep = repair::repair(lp, &primal.m, claim_eps, claim_within, max_prec).ok_or_else(|| {
        BuildError::Solver("exact repair failed: no uniform mix up to the limit passes the exact check".into())
    })?;
    let mut built = Built {
        matrix: rep.matrix,
        certificate: None,
        lp_objective: primal.objective,
        lower_bound: None,
        rows_total: lp.pairs.len() * lp.k(),
        rows_generated: primal.rows.len(),
        rounds: primal.rounds,
        t: rep.t,
        cap: lp.cap,
        seconds_primal: primal.seconds,
        seconds_dual: 0.0,
    };
    if dual {
        let mut d = simplex::solve_dual(lp, &primal.rows);
        let lower: Vec<f64> = CAPS.iter().copied().filter(|&c| c < lp.cap).collect();
        for cap in lower {
            if d.is_ok() {
                break;
            }
            let next = lp.clone_with_cap(cap);
            lp_capped = next;
            lp = &lp_capped;
            d = simplex::solve_dual(lp, &primal.rows);
        }
        let d = d.map_err(|e| BuildError::Solver(e.to_string()))?;
        built.cap = lp.cap;
        built.seconds_dual = d.seconds;
        let (bounded, prior) = match &lp.objective {
            Objective::MaxLoss => (Bounded::MaxLoss, None),
            Objective::Expected { prior } => (Bounded::ExpectedLoss, Some(prior.as_slice())),
        };
        let mut cert = LpDual {
            bounded,
            value: Q::from(0u32),
            beta: d.beta.map(|b| b.iter().map(|&x| q_from_f64(x)).collect()),
            gamma: d
                .gamma
                .iter()
                .map(|&(u, v, k, g)| (u as usize, v as usize, k as usize, q_from_f64(g)))
                .collect(),
        };
        if cert.beta.as_ref().is_some_and(|b| b.iter().all(|q| *q == 0u32)) {
            cert.beta = Some(vec![Q::from(1u32); lp.n]);
        }
        let sites = lp.outputs.clone();
        let pb = certificate::Problem {
            space: lp.space,
            eps: claim_eps,
            within: claim_within,
            sites: Some(&sites),
            cost,
            prior,
            max_prec,
        };
        cert.value = Q::from(i32::MIN); // placeholder below any bound; replaced by the proof
        let bound = certificate::verify(&cert, &pb, lp.n, lp.k())
            .map_err(|e| BuildError::Solver(format!("own certificate rejected: {}", e.0)))?;
        built.lower_bound = Some(f64_down(&bound));
        cert.value = bound;
        built.certificate = Some(cert);
    }
    Ok(built)
}

/// OPTMech: the mechanism with the least worst-case loss max_u Σ_k M[u][k] d(u,k) among
/// ε·d-private mechanisms on the space (outputs = inputs).
pub fn optimal(
    space: &Space,
    eps: &Q,
    max_prec: u64,
    progress: &mut dyn FnMut(&Round),
) -> Result<Built, BuildError> {
    let lp = optimal_lp(space, eps, max_prec);
    certified(&lp, eps, None, None, true, max_prec, progress)
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
    /// Output k is input `outputs[k]`; all inputs if `None`.
    pub outputs: Option<Vec<usize>>,
}

/// PMO's LP; checks the parameters' sizes.
pub fn pmo_lp<'a>(
    space: &'a Space,
    eps: &Q,
    p: &PmoParams,
    max_prec: u64,
) -> Result<PrivacyLp<'a>, BuildError> {
    let n = space.n();
    let outputs = p.outputs.clone().unwrap_or_else(|| (0..n).collect());
    if outputs.is_empty() {
        return Err(BuildError::Input("--outputs: at least one output is needed".into()));
    }
    if let Some(&o) = outputs.iter().find(|&&o| o >= n) {
        return Err(BuildError::Input(format!("--outputs: index {o} is not an input (n = {n})")));
    }
    let prior = match &p.prior {
        Some(pr) => {
            if pr.len() != n {
                return Err(BuildError::Input(format!(
                    "--prior: has {} weights, the space has {n} points",
                    pr.len()
                )));
            }
            if pr.iter().any(|q| *q < 0u32) || pr.iter().all(|q| *q == 0u32) {
                return Err(BuildError::Input("--prior: weights must be ≥ 0 and not all 0".into()));
            }
            let s: Q = pr.iter().sum();
            pr.iter().map(|q| q / &s).collect()
        }
        None => vec![Q::from(1u32) / Q::from(n as u64); n],
    };
    if let Some(c) = &p.cost {
        if c.len() != n * outputs.len() {
            return Err(BuildError::Input(format!(
                "--cost: has {} entries, expected n × K = {} × {}",
                c.len(),
                n,
                outputs.len()
            )));
        }
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

/// PMO: the mechanism with the least expected loss under the prior.
pub fn pmo(
    space: &Space,
    eps: &Q,
    p: &PmoParams,
    max_prec: u64,
    progress: &mut dyn FnMut(&Round),
) -> Result<Built, BuildError> {
    let lp = pmo_lp(space, eps, p, max_prec)?;
    certified(&lp, eps, p.within, p.cost.as_deref(), true, max_prec, progress)
}
