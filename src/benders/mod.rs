//! Benders decomposition of the PMO LP (Qiu 2024 §3), corrected and certified
//! (`spec/benders.md`).
//!
//! The secrets are partitioned ([`partition`]); a master problem holds the master records
//! and one θ per subset ([`master`]); each subset's free records form a subproblem, a pure
//! function run in parallel ([`sub`]) that returns a cut (elastic form: no phase 1). The
//! loop stops at a relative gap, when no cut is found, or at an honest iteration limit.
//! Where the published code is wrong, this is not: pure privacy (no δ slack on the rows),
//! the master records' cost counted once, no artificial bounds on the variables, subsets
//! without free records still enforced (their rows are master rows), the best upper bound
//! kept (per component of the η-graph, Proposition 3.1: `incumbent`), latitude and
//! longitude in their places.
//!
//! **Certified result.** The best incumbent is repaired exactly and audited like `pmo`. The
//! lower bound is an `lp_dual` certificate of the *whole* PMO LP: the master's multipliers
//! on its privacy rows plus, for every cut, its λ times the γ it was computed from
//! (Theorem in `spec/benders.md` §3: the verifier's bound of that Γ is ≥ the master's
//! optimum in exact arithmetic), with the lazy chain rows of Proposition 3.2 ([`chain`])
//! spread on their paths, proved exactly by the same code as `pmo`'s.

pub mod chain;
mod incumbent;
mod lazy;
pub mod master;
pub mod partition;
pub mod remote;
pub mod sub;

use crate::exact::Q;
use crate::lp::model::PrivacyLp;
use crate::lp::repair;
use crate::lp::{invalid, BuildError, Built, LpError};
use crate::mechanisms::optimal::{self, PmoParams};
use crate::metric::Space;
use crate::progress::Progress;
use incumbent::Incumbent;
use master::{Master, StoredCut};
use partition::{Decomposition, MasterSet, Method};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;
use sub::{End, SubInput, SubOutput, SubPair};

/// Settings of the decomposition.
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of subsets C (1..=n); `None`: max(1, round(n/60)).
    pub partitions: Option<usize>,
    pub method: Method,
    pub master: MasterSet,
    /// Stop at (UB − LB)/UB ≤ gap (> 0).
    pub gap: f64,
    /// At most this many iterations (≥ 1; an iteration may solve the master several times
    /// while chain rows are added).
    pub max_iter: usize,
    /// The partition's seed.
    pub seed: u64,
    /// In-out stabilization's first β ∈ [0, 1) (0: plain Kelley cuts at the master's point).
    pub stabilize: f64,
    /// Add Proposition 3.2's chained inequalities to the master lazily ([`chain`]).
    pub chains: bool,
    /// Copy the layer (free records with a row to a master record) into the master
    /// ([`master`]'s module doc; partial Benders decomposition). Off by default: on
    /// Rome500 (ε = 10, C = 8, 30 iterations) it took 278 s against 70 s for a wider gap
    /// (1.0 % against 0.73 %), while small planar instances that stall without it converge
    /// in 2 iterations (spec/benders.md §5).
    pub copies: bool,
    /// The master's privacy rows start from each master record's rows to this many
    /// nearest master records; the others join when a master solve breaks them
    /// ([`master::Master`]; `usize::MAX`: every row from the start).
    pub master_neighbours: usize,
    /// Where the subproblems run ([`remote`]): here (rayon), or by a caller's solver (the
    /// Python package's Dask tasks). The result is the same.
    pub subproblems: remote::Subproblems,
}

/// [`Options::master_neighbours`]'s default. Measured on Rome road nodes (η = 2 km,
/// ε = 10/km, K = 100; spec/benders.md §5): N = 1 000 (201 master records), the master's
/// time over 3 iterations with every row 23.6 s, from 10 neighbours 14.6 s, 2: 3.8 s,
/// 1: 2.9 s; N = 2 000 (658 master records), the first iteration's master solves
/// 179 s from 10 neighbours (618 000 starting rows), 17 s from 3, 9.4 s from 2, 8.3 s
/// from 1 (6 solves against 4), the same bounds throughout.
pub const MASTER_NEIGHBOURS: usize = 2;

impl Default for Options {
    fn default() -> Self {
        Options {
            partitions: None,
            method: Method::KmRec,
            master: MasterSet::Cover,
            gap: 1e-6,
            max_iter: 500,
            seed: 0,
            stabilize: 0.5,
            chains: true,
            copies: false,
            master_neighbours: MASTER_NEIGHBOURS,
            subproblems: remote::Subproblems::Here,
        }
    }
}

/// Why the loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The relative gap reached `gap`.
    Converged,
    /// No subproblem produced a violated cut (LB = UB to the solver's tolerance).
    NoCut,
    /// `max_iter` iterations.
    IterationLimit,
    /// The float solver failed on a master or subproblem after an incumbent was found
    /// (Clarabel's InsufficientProgress or MaxIterations, seen with the penalty raised to
    /// 10⁷× the costs); the loop stops there and its bounds are certified as usual.
    SolverFailed,
}

/// One iteration of the loop (one progress line).
#[derive(Clone, Debug, Serialize)]
pub struct Iteration {
    pub iter: usize,
    pub lb: f64,
    /// This iteration's upper bound: Σ over the open components of their candidates (every
    /// subproblem's x fits, or needs at most `MIX_SLACK` and is mixed with the uniform
    /// rows; `incumbent`) plus the closed components' best, when every open one had one.
    pub ub: Option<f64>,
    /// Σ_c of each component's best upper bound so far.
    pub best_ub: f64,
    pub gap: f64,
    /// Cuts added.
    pub cuts: usize,
    /// Subproblems whose x does not fit the master's values (slack left).
    pub infeasible: usize,
    /// Chain rows added to the master before this iteration's subproblems.
    pub chain_rows: usize,
    /// Components of the η-graph whose own gap is closed (no longer solved).
    pub closed: usize,
    pub penalty: f64,
    pub seconds: f64,
}

/// The decomposition's shape.
#[derive(Clone, Debug, Serialize)]
pub struct Shape {
    pub components: usize,
    pub partitions: usize,
    pub method: Method,
    pub master_set: MasterSet,
    pub master_records: usize,
    pub subproblems: usize,
    pub free_max: usize,
    pub free_mean: f64,
}

/// The loop's result (float): the best incumbent, the bounds and the assembled dual.
pub struct Outcome {
    /// n × K, each component's rows from its best upper bound.
    pub m: Vec<f64>,
    /// The master's optimum at the last solve (a lower bound of the float LP).
    pub lb: f64,
    pub ub: f64,
    pub dual: crate::lp::Dual,
    pub status: Status,
    pub trace: Vec<Iteration>,
    pub shape: Shape,
    pub seconds_master: f64,
    pub seconds_sub: f64,
    /// Master privacy rows the lazy master solves generated (of `dec.master_pairs` × K).
    pub master_rows: usize,
}

/// Subset `s`'s subproblem at the master values `y`.
fn sub_input(lp: &PrivacyLp, s: &partition::Subset, fixed_y: Vec<f64>, penalty: f64) -> SubInput {
    let (n, k) = (lp.n, lp.k());
    let mut local: HashMap<usize, End> = HashMap::new();
    for (i, &u) in s.free.iter().enumerate() {
        local.insert(u, End::Free(i as u32));
    }
    for (i, &u) in s.fixed.iter().enumerate() {
        local.insert(u, End::Fixed(i as u32));
    }
    SubInput {
        k,
        n_free: s.free.len(),
        n_fixed: s.fixed.len(),
        cost: s
            .free
            .iter()
            .flat_map(|&u| {
                let w = lp.prior_f64(u);
                (0..k).map(move |j| w * lp.cost_dn[u * k + j])
            })
            .collect(),
        pairs: s
            .pairs
            .iter()
            .map(|&(u, v)| SubPair {
                a: local[&u],
                b: local[&v],
                c: lp.c_dn[u * n + v],
            })
            .collect(),
        y: fixed_y,
        penalty,
    }
}

/// π_u·max_k c(u,k) for every input: the largest cost a unit of its mass can carry.
fn weighted_max_costs(lp: &PrivacyLp) -> Vec<f64> {
    let k = lp.k();
    (0..lp.n)
        .map(|u| {
            lp.prior_f64(u)
                * lp.cost_dn[u * k..(u + 1) * k]
                    .iter()
                    .cloned()
                    .fold(0.0, f64::max)
        })
        .collect()
}

/// Every subproblem at the master values `y` whose component is still open (`None` for the
/// others), solved where `opts.subproblems` says; those in `constant` (no fixed record) are
/// not solved again. With `cuts` false (the final polish, which needs values and primals
/// only) a subproblem is solved in its aggregated form alone ([`sub::solve_primal`]).
#[allow(clippy::too_many_arguments)]
fn solve_all(
    lp: &PrivacyLp,
    dec: &Decomposition,
    master: &Master,
    constant: &[Option<SubOutput>],
    inc: &Incumbent,
    y: &[f64],
    penalty: f64,
    cuts: bool,
    opts: &Options,
) -> Result<Vec<Option<SubOutput>>, LpError> {
    let todo: Vec<usize> = (0..dec.subsets.len())
        .filter(|&i| inc.active(i) && constant[i].is_none())
        .collect();
    let jobs = todo
        .par_iter()
        .map(|&i| {
            let s = &dec.subsets[i];
            remote::SubJob {
                input: sub_input(lp, s, master.fixed_values(s, y), penalty),
                cuts,
            }
        })
        .collect();
    let mut solved = opts.subproblems.solve(jobs)?.into_iter();
    let mut out: Vec<Option<SubOutput>> = (0..dec.subsets.len())
        .map(|i| constant[i].clone().filter(|_| inc.active(i)))
        .collect();
    for i in todo {
        out[i] = solved.next();
    }
    Ok(out)
}

/// How many of the solved subproblems' x do not fit the master's values.
fn needing_slack(outs: &[Option<SubOutput>]) -> usize {
    outs.iter()
        .flatten()
        .filter(|o| o.slack > SLACK_TOL)
        .count()
}

/// Largest slack (scaled row) below which a subproblem's x is taken to fit the master's
/// values (the exact repair absorbs the rest).
pub(crate) const SLACK_TOL: f64 = 1e-9;

/// Largest slack up to which an iteration's point still gives an incumbent, mixed with
/// the uniform rows ([`incumbent::uniform_mix`]). At the master's optimum a subproblem can be left
/// a slack of 10⁻⁹ by the solves' accuracy, which no penalty removes (a QIU-P33 instance:
/// slack 1.08·10⁻⁹ at LB = OPT, no cut, the penalty raised ×10 six times until Clarabel
/// failed with no upper bound better than 0.2 % above the optimum).
pub(crate) const MIX_SLACK: f64 = 1e-6;

/// The final polish's points: at most this many, each this far from the core towards ŷ.
const POLISH_ROUNDS: usize = 4;
const POLISH_TAU: f64 = 0.5;

/// A subproblem value above θ̂ by more than this (relative) adds its cut: the interior
/// point's own accuracy is about 10⁻⁸ relative here.
const CUT_TOL: f64 = 1e-8;

/// Run the decomposition on `lp` with the partition `dec`.
pub fn solve(
    lp: &PrivacyLp,
    dec: &Decomposition,
    shape: Shape,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<Outcome, BuildError> {
    let start = Instant::now();
    let solver = |err: LpError| BuildError::Lp {
        context: Some("benders"),
        err,
    };
    let mut master = Master::new(lp, dec, opts.chains, opts.copies, opts.master_neighbours);
    if opts.chains {
        progress.note(&format!(
            "benders: {} chained inequalities between master records (Prop. 3.2), added when broken",
            master.chains.len()
        ));
    }
    // The elastic subproblems' first penalty: 10× the largest weighted cost. A much larger
    // one (10³×) left Clarabel's subproblem solutions 10⁻³ from optimal and the loop stalled
    // at a 2 % gap (measured on a 6-point instance); the loop raises it ×10 when it would
    // end on slack. Absolute tolerances: 10⁻⁹ of the largest possible objective
    // Σ_u π_u max_k c(u,k) (relative gaps say nothing where the optimum is ≈ 0).
    let costs = weighted_max_costs(lp);
    let mut penalty = (10.0 * costs.iter().cloned().fold(0.0, f64::max)).max(1e-9);
    let abs_tol = 1e-9 * costs.iter().sum::<f64>();
    let (mut seconds_master, mut seconds_sub) = (0.0, 0.0);
    // Subproblems with no fixed record depend neither on the master nor on the penalty
    // (they have no slack rows): solved once, here.
    let t = Instant::now();
    let fixed_free: Vec<usize> = (0..dec.subsets.len())
        .filter(|&i| dec.subsets[i].fixed.is_empty())
        .collect();
    let jobs = fixed_free
        .iter()
        .map(|&i| remote::SubJob {
            input: sub_input(lp, &dec.subsets[i], vec![], penalty),
            cuts: true,
        })
        .collect();
    let mut solved = opts.subproblems.solve(jobs).map_err(solver)?.into_iter();
    let mut constant: Vec<Option<SubOutput>> = vec![None; dec.subsets.len()];
    for i in fixed_free {
        constant[i] = solved.next();
    }
    seconds_sub += t.elapsed().as_secs_f64();
    let mut inc = Incumbent::new(lp, dec, &costs);
    let mut trace = vec![];
    let t = Instant::now();
    let (mut last, mut chain_rows) = master.solve_with_chains().map_err(solver)?;
    seconds_master += t.elapsed().as_secs_f64();
    let mut status = Status::IterationLimit;
    let mut iter = 0;
    // In-out stabilization (Ben-Ameur & Neto 2007): the subproblems are solved at
    // y_sep = (1 − β)·ŷ + β·y_core, y_core the best incumbents' master values (first the
    // uniform rows, which with uniform subproblem rows are feasible). Any y gives valid
    // cuts; a cut is added when it cuts off the master's (ŷ, θ̂). β halves when the lower
    // bound stalls, and is 0 before "no cut" may end the loop (only a cut-free ŷ proves it).
    let mut beta = opts.stabilize;
    let mut solve_master = false;
    let mut lb_before = f64::NEG_INFINITY;
    loop {
        if solve_master {
            let t = Instant::now();
            let solved = master.solve_with_chains();
            seconds_master += t.elapsed().as_secs_f64();
            match solved {
                Ok(s) => (last, chain_rows) = s,
                Err(e) if inc.total().is_finite() => {
                    progress.note(&format!(
                        "benders: master: {e}; stopping with the incumbent"
                    ));
                    status = Status::SolverFailed;
                    break;
                }
                Err(e) => return Err(solver(e)),
            }
        }
        solve_master = true;
        let y_sep = mix(&last.y, &inc.core, beta);
        let t = Instant::now();
        let outs = solve_all(
            lp, dec, &master, &constant, &inc, &y_sep, penalty, true, opts,
        );
        seconds_sub += t.elapsed().as_secs_f64();
        let outs = match outs {
            Ok(outs) => outs,
            Err(e @ LpError::Remote(_)) => return Err(solver(e)),
            Err(e) if inc.total().is_finite() => {
                progress.note(&format!("benders: {e}; stopping with the incumbent"));
                status = Status::SolverFailed;
                break;
            }
            Err(e) => return Err(solver(e)),
        };
        let this_ub = inc.offer(lp, dec, &y_sep, &outs);
        let infeasible = needing_slack(&outs);
        let mut cuts = 0;
        for (i, out) in outs.into_iter().enumerate() {
            let Some(out) = out else { continue };
            let s = &dec.subsets[i];
            let at_hat = out.cut.constant
                + out
                    .cut
                    .coef
                    .iter()
                    .zip(master.fixed_values(s, &last.y))
                    .map(|(g, y)| g * y)
                    .sum::<f64>();
            if at_hat > last.theta[i] + CUT_TOL * at_hat.abs() + 1e-3 * abs_tol {
                master.cuts.push(StoredCut {
                    subset: i,
                    cut: out.cut,
                });
                cuts += 1;
            }
        }
        let closed = inc.close(lp, dec, &last.y, &last.theta, opts.gap);
        let best_ub = inc.total();
        let gap = relative_gap(best_ub, last.objective);
        let it = Iteration {
            iter,
            lb: last.objective,
            ub: this_ub,
            best_ub,
            gap,
            cuts,
            infeasible,
            chain_rows,
            closed,
            penalty,
            seconds: start.elapsed().as_secs_f64(),
        };
        progress.note(&format!(
            "benders: iter {:>3}  LB {:.12e}  UB {:.12e}  gap {:.2e}  cuts +{}  chains +{}  infeasible {}  closed {}/{}  {:.2} s",
            it.iter, it.lb, it.best_ub, it.gap, it.cuts, it.chain_rows, it.infeasible, closed, inc.components(), it.seconds
        ));
        trace.push(it);
        iter += 1;
        if within_gap(best_ub, last.objective, opts.gap, abs_tol) {
            status = Status::Converged;
            break;
        }
        if cuts == 0 && beta > 0.0 {
            // No cut at y_sep: separate at ŷ itself before concluding (the master is not
            // solved again, so the next iteration adds no chain row).
            beta = 0.0;
            solve_master = false;
            chain_rows = 0;
        } else if cuts == 0 {
            if infeasible == 0 || penalty > 1e12 {
                status = Status::NoCut;
                break;
            }
            // The elastic optimum still leaves slack: the penalty was below the LP's
            // multipliers. Cuts made with it stay valid (Q_P grows with P).
            penalty *= 10.0;
            progress.note(&format!(
                "benders: raising the subproblems' penalty to {penalty:.1e}"
            ));
        }
        if last.objective <= lb_before + 1e-6 * last.objective.abs() + abs_tol {
            beta = if beta < 0.01 { 0.0 } else { beta / 2.0 };
        }
        lb_before = last.objective;
        if iter >= opts.max_iter {
            break;
        }
    }
    // Primal polish: when the loop ends above the gap, its last master point ŷ usually
    // needs slack. The incumbents' master values (the core) fit, and the values that fit
    // form a convex set, so the point halfway from the core to ŷ is tried; while it
    // improves some component's incumbent (which moves the core there), halfway again, at
    // most POLISH_ROUNDS points. A point that improves nothing ends it: if it needs slack,
    // so do the points nearer to ŷ on the same segment (spec/benders.md §5).
    for round in 1..=POLISH_ROUNDS {
        if within_gap(inc.total(), last.objective, opts.gap, abs_tol) {
            break;
        }
        let y_try = mix(&last.y, &inc.core, POLISH_TAU);
        let t = Instant::now();
        let outs = solve_all(
            lp, dec, &master, &constant, &inc, &y_try, penalty, false, opts,
        );
        seconds_sub += t.elapsed().as_secs_f64();
        let outs = match outs {
            Ok(outs) => outs,
            Err(e @ LpError::Remote(_)) => return Err(solver(e)),
            Err(_) => break,
        };
        let before = inc.total();
        let this = inc.offer(lp, dec, &y_try, &outs);
        progress.note(&format!(
            "benders: polish {round}: best UB {:.12e}{}, {} subproblems need slack ({:.2} s)",
            inc.total(),
            this.map(|ub| format!(" (this point {ub:.12e})"))
                .unwrap_or_default(),
            needing_slack(&outs),
            t.elapsed().as_secs_f64()
        ));
        if inc.total() >= before {
            break;
        }
    }
    let ub = inc.total();
    if !ub.is_finite() {
        return Err(BuildError::NoIncumbent { iterations: iter });
    }
    let m = inc.m;
    if status == Status::IterationLimit {
        progress.note(&format!(
            "benders: iteration limit {} reached at relative gap {:.2e} (after the polish)",
            opts.max_iter,
            relative_gap(ub, last.objective)
        ));
    }
    let dual = assemble(lp, dec, &master, &last);
    Ok(Outcome {
        m,
        lb: last.objective,
        ub,
        dual,
        status,
        trace,
        shape,
        seconds_master,
        seconds_sub,
        master_rows: master.rows_present(),
    })
}

/// The loop's stopping rule, also each component's ([`Incumbent::close`]): a finite upper
/// bound `ub` within `gap`·|ub| + `abs_tol` of the lower bound `lb`.
pub(crate) fn within_gap(ub: f64, lb: f64, gap: f64, abs_tol: f64) -> bool {
    ub.is_finite() && ub - lb <= gap * ub.abs() + abs_tol
}

/// (ub − lb)/|ub|, at least 0; ∞ before an upper bound exists.
fn relative_gap(ub: f64, lb: f64) -> f64 {
    if ub.is_finite() {
        ((ub - lb) / ub.abs().max(1e-300)).max(0.0)
    } else {
        f64::INFINITY
    }
}

/// (1 − t)·a + t·b.
fn mix(a: &[f64], b: &[f64], t: f64) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (1.0 - t) * x + t * y)
        .collect()
}

/// The whole LP's multipliers Γ = γ_master + the chain rows' γ spread on their paths
/// ([`chain::spread`]) + Σ_cuts λ·γ(cut) (`spec/benders.md` §3), rows
/// whose c_up exceeds the cap left out (as `ipm`), in global (u, v, k).
fn assemble(
    lp: &PrivacyLp,
    dec: &Decomposition,
    master: &Master,
    last: &master::MasterSolution,
) -> crate::lp::Dual {
    let (n, k) = (lp.n, lp.k());
    let mut acc: HashMap<(u32, u32, u32), f64> = HashMap::new();
    for (r, &g) in last.gamma.iter().enumerate() {
        if g > 0.0 {
            let (u, v) = master.pairs_global[r / k];
            *acc.entry((u as u32, v as u32, (r % k) as u32)).or_default() += g;
        }
    }
    let gmax = last.chain_gamma.iter().cloned().fold(0.0, f64::max);
    for (&(ci, t), &g) in master.chain_rows.iter().zip(&last.chain_gamma) {
        // Leaving a multiplier out keeps Γ valid (any Γ ≥ 0 is); the interior point gives
        // every row one, and the negligible ones would only lengthen the exact proof.
        if g > 1e-14 * gmax {
            for (u, v, j, h) in chain::spread(lp, &master.chains[ci], t, g) {
                *acc.entry((u as u32, v as u32, j as u32)).or_default() += h;
            }
        }
    }
    let lmax = last.cut_duals.iter().cloned().fold(0.0, f64::max);
    for (c, &lambda) in master.cuts.iter().zip(&last.cut_duals) {
        if lambda <= 1e-14 * lmax || lambda.is_nan() {
            continue;
        }
        let s = &dec.subsets[c.subset];
        for &(row, g) in &c.cut.gamma {
            let (p, j) = (row as usize / k, row as usize % k);
            let (u, v) = s.pairs[p];
            *acc.entry((u as u32, v as u32, j as u32)).or_default() += lambda * g;
        }
    }
    let mut gamma: Vec<(u32, u32, u32, f64)> = acc
        .into_iter()
        .filter(|&((u, v, _), g)| g > 0.0 && lp.c_up[u as usize * n + v as usize] <= lp.cap)
        .map(|((u, v, j), g)| (u, v, j, g))
        .collect();
    gamma.sort_unstable_by_key(|&(u, v, j, _)| (u, v, j));
    crate::lp::Dual {
        beta: None,
        gamma,
        objective: last.objective,
        seconds: 0.0,
    }
}

/// The certificate's smallest multipliers are dropped while their sum (the most the
/// bound can lose, [`crate::lp::Dual::sparsify`]) stays within this fraction of the loop's
/// final gap UB − LB.
const CERT_BUDGET: f64 = 1e-3;

/// What [`benders`] reports besides the mechanism.
pub struct Report {
    pub status: Status,
    pub iterations: usize,
    pub lb_float: f64,
    pub ub_float: f64,
    pub trace: Vec<Iteration>,
    pub shape: Shape,
    pub seconds_partition: f64,
    pub seconds_master: f64,
    pub seconds_sub: f64,
}

/// PMO by Benders decomposition, certified: the repaired incumbent (proved private
/// exactly) and an `lp_dual` lower bound of the whole PMO LP. Needs η (`p.within`).
pub fn benders(
    space: &Space,
    eps: &Q,
    p: &PmoParams,
    opts: &Options,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<(Built, Report), BuildError> {
    let within = p
        .within
        .ok_or_else(|| invalid("within", "Benders needs η (privacy for pairs within η)"))?;
    if !(opts.gap > 0.0 && opts.gap.is_finite()) {
        return Err(invalid("gap", "must be > 0"));
    }
    if !(0.0..1.0).contains(&opts.stabilize) {
        return Err(invalid("stabilize", "must be in [0, 1)"));
    }
    if opts.max_iter < 1 {
        return Err(invalid("max-iter", "must be ≥ 1"));
    }
    let n = space.n();
    let c = opts
        .partitions
        .unwrap_or(((n as f64 / 60.0).round() as usize).max(1));
    // Checked before the LP's n² tables are built (partition checks it for library callers).
    partition::check_partitions(c, n)?;
    let lp = optimal::pmo_lp(space, eps, p, max_prec)?;
    let t = Instant::now();
    let part = partition::partition(space, &lp.pairs, c, opts.method, opts.seed)?;
    let dec = partition::decompose(n, &lp.pairs, &part, opts.master);
    let free: Vec<usize> = dec.subsets.iter().map(|s| s.free.len()).collect();
    let shape = Shape {
        components: crate::metric::components(n, &lp.pairs)
            .iter()
            .map(|&c| c as usize + 1)
            .max()
            .unwrap_or(0),
        partitions: part.iter().map(|&p| p as usize + 1).max().unwrap_or(0),
        method: opts.method,
        master_set: opts.master,
        master_records: dec.master.len(),
        subproblems: dec.subsets.len(),
        free_max: free.iter().copied().max().unwrap_or(0),
        free_mean: free.iter().sum::<usize>() as f64 / free.len().max(1) as f64,
    };
    let seconds_partition = t.elapsed().as_secs_f64();
    progress.note(&format!(
        "benders: {} records, {} components, {} subsets, {} master records ({}), largest subproblem {} records",
        n,
        shape.components,
        shape.partitions,
        shape.master_records,
        opts.master.name(),
        shape.free_max
    ));
    let t = Instant::now();
    let out = solve(&lp, &dec, shape, opts, progress)?;
    let seconds_primal = t.elapsed().as_secs_f64();
    let rep = repair::repair(&lp, &out.m, eps, Some(within), max_prec).ok_or(BuildError::Repair)?;
    // The certificate without its smallest multipliers: the bound may fall by their sum,
    // at most CERT_BUDGET of the loop's gap (plus 10⁻⁹ relative), and the file shrinks
    // (spec/benders.md §3).
    let mut dual = out.dual;
    let before = dual.gamma.len();
    let budget = CERT_BUDGET * (out.ub - out.lb).max(0.0) + 1e-9 * out.lb.abs();
    let (dropped, sum) = dual.sparsify(budget);
    progress.note(&format!(
        "benders: certificate keeps {} of {before} multipliers (the {dropped} dropped sum to {sum:.2e}, the most the bound can lose)",
        dual.gamma.len()
    ));
    let pb = crate::lp::pipeline::problem(&lp, eps, Some(within), p.cost.as_deref(), max_prec);
    let proof = crate::lp::pipeline::certify_dual(
        &lp,
        out.lb,
        None,
        dual,
        &pb,
        None,
        crate::lp::TARGET_GAP,
        progress,
    )?;
    let rows_generated =
        out.master_rows + dec.subsets.iter().map(|s| s.pairs.len()).sum::<usize>() * lp.k();
    let built = Built {
        matrix: rep.matrix,
        certificate: proof.certificate,
        lp_objective: out.ub,
        lower_bound: proof.lower_bound,
        rows_total: lp.pairs.len() * lp.k(),
        rows_generated,
        rounds: out.trace.len(),
        t: rep.t,
        cap: lp.cap,
        seconds_primal,
        seconds_dual: proof.seconds,
    };
    Ok((
        built,
        Report {
            status: out.status,
            iterations: out.trace.len(),
            lb_float: out.lb,
            ub_float: out.ub,
            trace: out.trace,
            shape: out.shape,
            seconds_partition,
            seconds_master: out.seconds_master,
            seconds_sub: out.seconds_sub,
        },
    ))
}

/// PMO solved by Benders decomposition (Qiu 2024 §3) as a family of [`produce`](mod@crate::produce),
/// for spaces too large for the whole LP; needs `pmo.within`. Certified like PMO (exact
/// repair, `lp_dual` of the whole LP) and written with a `benders` certificate (lower and
/// upper bound).
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # let pts = (0..12).map(|i| vec![Q::from(i), Q::from(i % 3)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("1").unwrap());
/// let pmo = Pmo { within: Some(Q::from(3u32)), ..Pmo::default() };
/// let options = mdp::benders::Options { partitions: Some(3), ..Default::default() };
/// let out = produce(&req, &Family::Benders(BendersMech { pmo, options }), &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug)]
pub struct BendersMech {
    pub pmo: optimal::Pmo,
    pub options: Options,
}

impl crate::produce::MechanismFamily for BendersMech {
    fn name(&self) -> &'static str {
        "benders"
    }

    fn paper_name(&self) -> String {
        "PMO (Benders)".into()
    }

    /// The settings are checked against the space by [`benders`]; its master and
    /// subproblems are sized by the partition it chooses.
    fn check(
        &self,
        _req: &crate::produce::Request,
        _progress: &dyn Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        Ok(())
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        progress: &dyn Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        use serde_json::json;
        let (built, report) = benders(
            req.space,
            &req.eps,
            &self.pmo.params(),
            &self.options,
            crate::produce::MAX_PREC,
            progress,
        )?;
        let upper = self.pmo.expected_loss_upper(req.space, &built.matrix);
        let mut a = crate::produce::lp_assembled(
            built,
            json!({"benders": {
                "status": report.status,
                "iterations": report.iterations,
                "lb_float": report.lb_float,
                "ub_float": report.ub_float,
                "shape": report.shape,
                "seconds_partition": report.seconds_partition,
                "seconds_master": report.seconds_master,
                "seconds_subproblems": report.seconds_sub,
                "trace": report.trace,
            }}),
        );
        if let (Some(cert), Some(upper)) = (a.certificate.as_mut(), upper) {
            let lower = cert["lower_bound"]["value"].clone();
            cert["benders"] = json!({"objective": "expected_loss", "lower": lower, "upper": upper});
        }
        a.fields = self.pmo.fields(req.space.n());
        Ok(a)
    }
}
