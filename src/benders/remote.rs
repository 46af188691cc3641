//! Where the subproblems run (`spec/benders.md` §6): each one is a pure function of
//! serializable data ([`SubJob`] → [`SubOutput`]), so a batch can be solved here on rayon
//! ([`Subproblems::Here`]) or elsewhere ([`Subproblems::Elsewhere`]: the Python package
//! sends the batch as JSON texts to Dask workers, which call [`solve_text`]). The master
//! stays with the caller. Nothing a remote solver returns is trusted for the certificate:
//! a cut is recomputed here from its γ and valid for any γ ≥ 0 (§3), the lower bound is the
//! exactly verified `lp_dual`, and the incumbent is repaired and audited exactly; a
//! malformed answer is an error.

use super::sub::{self, SubInput, SubOutput};
use crate::lp::LpError;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One subproblem to solve: its cut too (`cuts`), or its value and primal only (the final
/// polish, [`sub::solve_primal`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubJob {
    pub input: SubInput,
    pub cuts: bool,
}

/// Solves a batch of subproblems; the outputs in the jobs' order.
pub trait SubSolver: Send + Sync {
    fn solve(&self, jobs: Vec<SubJob>) -> Result<Vec<SubOutput>, LpError>;
}

/// Where the loop's subproblems run.
#[derive(Clone, Default)]
pub enum Subproblems {
    /// In this process, in parallel (rayon).
    #[default]
    Here,
    /// By this solver (e.g. tasks on a cluster).
    Elsewhere(Arc<dyn SubSolver>),
}

impl std::fmt::Debug for Subproblems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Subproblems::Here => "Here",
            Subproblems::Elsewhere(_) => "Elsewhere",
        })
    }
}

impl Subproblems {
    pub(crate) fn solve(&self, jobs: Vec<SubJob>) -> Result<Vec<SubOutput>, LpError> {
        let n = jobs.len();
        if n == 0 {
            return Ok(vec![]);
        }
        let out = match self {
            Subproblems::Here => jobs.par_iter().map(solve_job).collect(),
            Subproblems::Elsewhere(s) => s.solve(jobs),
        }?;
        if out.len() != n {
            return Err(LpError::Remote(format!(
                "{} subproblem results for {n} subproblems",
                out.len()
            )));
        }
        Ok(out)
    }
}

/// Solve one job where it is (the pure function the workers run).
pub fn solve_job(job: &SubJob) -> Result<SubOutput, LpError> {
    if job.cuts {
        sub::solve_subproblem(&job.input)
    } else {
        sub::solve_primal(&job.input)
    }
}

/// Largest number of LP variables (n_free·K) and pairs a job from elsewhere may ask for:
/// the subproblems of a 10⁵-record input at K = 100 split 100 ways.
const MAX_VARS: usize = 1 << 24;
const MAX_PAIRS: usize = 1 << 24;
/// Rows (pairs · K) a job may ask for.
const MAX_ROWS: usize = 1 << 26;

/// Why a job's text was refused before any work.
fn malformed(what: impl std::fmt::Display) -> LpError {
    LpError::Remote(format!("malformed subproblem: {what}"))
}

/// A job's shape checked before it is solved: sizes within bounds, vectors of their
/// declared lengths, pair ends in range, every number finite (constants ≥ 1, costs and
/// values ≥ 0, penalty > 0).
pub fn check(job: &SubJob) -> Result<(), LpError> {
    let s = &job.input;
    let vars = s.n_free.checked_mul(s.k).filter(|&v| v <= MAX_VARS);
    let fixed = s.n_fixed.checked_mul(s.k).filter(|&v| v <= MAX_VARS);
    let (Some(vars), Some(fixed)) = (vars, fixed) else {
        return Err(malformed("too many variables"));
    };
    if s.k == 0 || s.n_free == 0 {
        return Err(malformed("no outputs or no free records"));
    }
    if s.cost.len() != vars || s.y.len() != fixed {
        return Err(malformed("cost or y of the wrong length"));
    }
    if s.pairs.len() > MAX_PAIRS || s.pairs.len().saturating_mul(s.k) > MAX_ROWS {
        return Err(malformed("too many pairs"));
    }
    let nonneg = |x: &f64| x.is_finite() && *x >= 0.0;
    if !s.cost.iter().all(nonneg) || !s.y.iter().all(nonneg) {
        return Err(malformed("a cost or value that is not finite and ≥ 0"));
    }
    if !(s.penalty.is_finite() && s.penalty > 0.0) {
        return Err(malformed("penalty not finite and > 0"));
    }
    let in_range = |e: &sub::End| match *e {
        sub::End::Free(i) => (i as usize) < s.n_free,
        sub::End::Fixed(i) => (i as usize) < s.n_fixed,
    };
    for p in &s.pairs {
        if !in_range(&p.a) || !in_range(&p.b) || !p.c.is_finite() || !(p.c >= 1.0) {
            return Err(malformed(
                "a pair end out of range or a constant not finite and ≥ 1",
            ));
        }
        if matches!((p.a, p.b), (sub::End::Fixed(_), sub::End::Fixed(_))) {
            return Err(malformed("a pair between two fixed records"));
        }
    }
    Ok(())
}

/// A job as the text a worker receives.
pub fn job_text(job: &SubJob) -> String {
    serde_json::to_string(job).expect("a job serializes")
}

/// A worker's call: the job's text → its output's text (checked first, then solved here).
pub fn solve_text(text: &str) -> Result<String, LpError> {
    let job: SubJob = serde_json::from_str(text).map_err(malformed)?;
    check(&job)?;
    let out = solve_job(&job)?;
    serde_json::to_string(&out).map_err(|e| LpError::Remote(e.to_string()))
}

/// A worker's answer read back (a malformed one is an error, not a cut). Its cut is
/// recomputed here from its multipliers γ ([`sub::cut_of`], valid for any γ ≥ 0), so the
/// master never takes a worker's constant or coefficients; its value must be at least its
/// primal's cost (a forged low value is refused). What stays the worker's word: the primal
/// and its slack, which decide only whether a point is offered as an incumbent (every
/// incumbent is repaired and audited exactly here), and so the loop's float bounds.
pub fn output_of(text: &str, job: &SubJob) -> Result<SubOutput, LpError> {
    let mut out: SubOutput = serde_json::from_str(text)
        .map_err(|e| LpError::Remote(format!("malformed subproblem result: {e}")))?;
    let s = &job.input;
    let bad = |what: &str| {
        Err(LpError::Remote(format!(
            "malformed subproblem result: {what}"
        )))
    };
    if out.x.len() != s.n_free * s.k || !out.x.iter().all(|x| x.is_finite()) {
        return bad("the primal's size or values");
    }
    if !(out.slack.is_finite() && out.slack >= 0.0 && out.value.is_finite()) {
        return bad("its value or slack");
    }
    let cost: f64 = s.cost.iter().zip(&out.x).map(|(c, x)| c * x.max(0.0)).sum();
    if out.value < cost * (1.0 - 1e-9) {
        return bad("a value below its primal's cost");
    }
    let rows = s.pairs.len() * s.k;
    if out
        .cut
        .gamma
        .iter()
        .any(|&(r, g)| r as usize >= rows || !(g.is_finite() && g >= 0.0))
    {
        return bad("a multiplier off its rows or not finite and ≥ 0");
    }
    out.cut = sub::cut_of(s, std::mem::take(&mut out.cut.gamma));
    Ok(out)
}

/// A batch's answers read back in the jobs' order ([`output_of`] each); a count other than
/// the jobs' is an error (extra answers are not ignored).
pub fn outputs_of(texts: &[String], jobs: &[SubJob]) -> Result<Vec<SubOutput>, LpError> {
    if texts.len() != jobs.len() {
        return Err(LpError::Remote(format!(
            "{} results for {} subproblems",
            texts.len(),
            jobs.len()
        )));
    }
    texts
        .iter()
        .zip(jobs)
        .map(|(t, j)| output_of(t, j))
        .collect()
}
