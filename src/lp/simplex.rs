//! The floating-point side: microlp's dual simplex on a [`PrivacyLp`], with **lazy
//! privacy rows** and warm starts, and the dual LP whose solution becomes the `lp_dual`
//! certificate.
//!
//! Floats only *find* candidates here. Nothing this module returns is trusted: the
//! primal goes through [`super::repair`] and the exact audit, the dual through
//! [`crate::certificate::verify`] (`spec/lp.md` §4–§5).
//!
//! Lazy rows (issue 3, item 4): start from every row of each input's `initial_neighbours`
//! nearest neighbours, solve, separate the rows the float solution violates (per
//! (u, k) the [`PER_ENTRY`] most violated pairs), add them (warm: microlp's dual simplex
//! re-optimizes from the previous basis; or, past [`WARM_LIMIT`] rows, one fresh solve),
//! repeat until no row is violated by more than [`SEPARATION_TOL`].

use super::model::{Objective, PrivacyLp};
use crate::progress::Progress;
use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOptions, Variable};
use rayon::prelude::*;
use std::time::Instant;

/// A row counts as violated when M\[u\]\[k\] − c M\[v\]\[k\] exceeds this.
pub const SEPARATION_TOL: f64 = 1e-9;
/// microlp's feasibility tolerance for our solves.
pub const FEASIBILITY_TOL: f64 = 1e-9;

use super::error::LpError;
use super::solution::{Dual, Primal};
use crate::progress::Round;

fn options() -> SolveOptions {
    let mut o = SolveOptions::default();
    o.tolerances.feasibility = FEASIBILITY_TOL;
    o
}

/// microlp's error (infeasible or unbounded, which the privacy LPs never are: the uniform
/// mechanism is feasible and costs are ≥ 0; or numerical trouble).
fn err(e: impl std::fmt::Display) -> LpError {
    LpError::Microlp(e.to_string())
}

/// The rows (u, v, k) for every pair among each input's `r` nearest neighbours in the
/// LP's pair set.
pub fn initial_rows(lp: &PrivacyLp, r: usize) -> Vec<(u32, u32, u32)> {
    let n = lp.n;
    let mut by_u: Vec<Vec<usize>> = vec![vec![]; n];
    for &(u, v) in &lp.pairs {
        by_u[u].push(v);
    }
    let mut rows = vec![];
    for (u, vs) in by_u.iter_mut().enumerate() {
        vs.sort_by(|&a, &b| lp.space.approx(u, a).total_cmp(&lp.space.approx(u, b)));
        for &v in vs.iter().take(r) {
            for k in 0..lp.k() {
                rows.push((u as u32, v as u32, k as u32));
            }
        }
    }
    rows
}

/// Per (u, k), the `per_entry` pairs of the LP whose rows the values violate most (by
/// more than [`SEPARATION_TOL`]) and are not yet present.
pub fn separate_top(
    lp: &PrivacyLp,
    m: &[f64],
    present: &std::collections::HashSet<(u32, u32, u32)>,
    per_entry: usize,
) -> Vec<(u32, u32, u32)> {
    let (n, kk) = (lp.n, lp.k());
    let mut by_u: Vec<Vec<usize>> = vec![vec![]; n];
    for &(u, v) in &lp.pairs {
        by_u[u].push(v);
    }
    (0..n)
        .into_par_iter()
        .flat_map_iter(|u| {
            let by_u = &by_u;
            (0..kk).flat_map(move |k| {
                let mut viol: Vec<(f64, usize)> = by_u[u]
                    .iter()
                    .map(|&v| (m[u * kk + k] - lp.c_dn[u * n + v] * m[v * kk + k], v))
                    .filter(|&(x, v)| {
                        x > SEPARATION_TOL && !present.contains(&(u as u32, v as u32, k as u32))
                    })
                    .collect();
                viol.sort_by(|a, b| b.0.total_cmp(&a.0));
                viol.truncate(per_entry);
                viol.into_iter()
                    .map(move |(_, v)| (u as u32, v as u32, k as u32))
            })
        })
        .collect()
}

/// The privacy rows not in `present` that `m` (n×K, row-major) holds within a fraction
/// `margin` of tight, m\[u\]\[k\] ≥ (1 − margin)·c_dn(u,v)·m\[v\]\[k\] with m\[u\]\[k\] above
/// [`SEPARATION_TOL`], and the violated ones ([`separate_top`]'s): the rows likely to be
/// violated next round besides those violated now.
pub fn near_tight(
    lp: &PrivacyLp,
    m: &[f64],
    present: &std::collections::HashSet<(u32, u32, u32)>,
    margin: f64,
) -> Vec<(u32, u32, u32)> {
    rows_where(lp, m, present, |mu, c, mv| {
        let (violated, near) = row_state(mu, c, mv, margin);
        violated || near
    })
}

/// The privacy rows (u, v, k) of `lp`'s pairs, not in `present`, for which
/// `keep(m[u][k], c_dn(u, v), m[v][k])` holds (`m` n×K, row-major).
pub fn rows_where(
    lp: &PrivacyLp,
    m: &[f64],
    present: &std::collections::HashSet<(u32, u32, u32)>,
    keep: impl Fn(f64, f64, f64) -> bool + Sync,
) -> Vec<(u32, u32, u32)> {
    let (n, kk) = (lp.n, lp.k());
    let keep = &keep;
    lp.pairs
        .par_iter()
        .flat_map_iter(|&(u, v)| {
            let c = lp.c_dn[u * n + v];
            (0..kk).filter_map(move |k| {
                let row = (u as u32, v as u32, k as u32);
                (keep(m[u * kk + k], c, m[v * kk + k]) && !present.contains(&row)).then_some(row)
            })
        })
        .collect()
}

/// The lazy-row rule for one row M_u ≤ c·M_v at values `mu`, `mv`: whether it is broken
/// (by more than [`SEPARATION_TOL`]) and whether it is held within `margin` of tight
/// (mu ≥ (1 − margin)·c·mv with mu above the tolerance). With mu, mv ≥ 0 a broken row is
/// also near tight.
pub fn row_state(mu: f64, c: f64, mv: f64, margin: f64) -> (bool, bool) {
    (
        mu - c * mv > SEPARATION_TOL,
        mu > SEPARATION_TOL && mu >= (1.0 - margin) * c * mv,
    )
}

/// Rows added per (u, k) and round: the most violated ones (measured in spec/lp.md §4).
pub const PER_ENTRY: usize = 3;

/// Solve the primal with lazy rows, reporting every round to `progress`.
pub fn solve_primal(
    lp: &PrivacyLp,
    initial_neighbours: usize,
    progress: &dyn Progress,
) -> Result<Primal, LpError> {
    solve_primal_from(lp, initial_rows(lp, initial_neighbours), progress)
}

/// [`solve_primal`] starting from the given rows.
pub fn solve_primal_from(
    lp: &PrivacyLp,
    mut rows: Vec<(u32, u32, u32)>,
    progress: &dyn Progress,
) -> Result<Primal, LpError> {
    let start = Instant::now();
    let (mut sol, m) = solve_fresh(lp, &rows)?;
    let mut present: std::collections::HashSet<(u32, u32, u32)> = rows.iter().copied().collect();
    let mut round = 0;
    loop {
        let values: Vec<f64> = m.iter().map(|&v| sol.var_value(v)).collect();
        let new = separate_top(lp, &values, &present, PER_ENTRY);
        progress.round(&Round {
            round,
            rows: rows.len(),
            added: new.len(),
            objective: sol.objective(),
            seconds: start.elapsed().as_secs_f64(),
        });
        if new.is_empty() {
            return Ok(Primal {
                m: values,
                objective: sol.objective(),
                rows,
                rounds: round + 1,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        present.extend(new.iter().copied());
        rows.extend(new.iter().copied());
        if new.len() > WARM_LIMIT {
            // Many rows: one solve from scratch beats many warm re-optimizations.
            (sol, _) = solve_fresh(lp, &rows)?;
        } else {
            for r in new {
                sol = sol
                    .add_constraint(privacy_row(lp, &m, r), ComparisonOp::Le, 0.0)
                    .map_err(err)?
                    .into_solution()
                    .map_err(|_| LpError::Interrupted)?;
            }
        }
        round += 1;
    }
}

/// Rounds that add more rows than this re-solve from scratch instead of warm-adding each
/// row (microlp re-optimizes after every added row; measured in spec/lp.md §4).
pub const WARM_LIMIT: usize = 64;

fn privacy_row(lp: &PrivacyLp, m: &[Variable], (u, v, k): (u32, u32, u32)) -> [(Variable, f64); 2] {
    let (n, kk) = (lp.n, lp.k());
    let (u, v, k) = (u as usize, v as usize, k as usize);
    [(m[u * kk + k], 1.0), (m[v * kk + k], -lp.c_dn[u * n + v])]
}

/// Build the primal with the given privacy rows and solve it from scratch.
fn solve_fresh(
    lp: &PrivacyLp,
    rows: &[(u32, u32, u32)],
) -> Result<(microlp::Solution, Vec<Variable>), LpError> {
    let (n, kk) = (lp.n, lp.k());
    let mut p = Problem::new(OptimizationDirection::Minimize);
    let max_loss = lp.objective == Objective::MaxLoss;
    let l = max_loss.then(|| p.add_var(1.0, (0.0, f64::INFINITY)));
    let m: Vec<Variable> = (0..n * kk)
        .map(|i| {
            let obj = if max_loss {
                0.0
            } else {
                lp.prior_f64(i / kk) * lp.cost_dn[i]
            };
            p.add_var(obj, (0.0, 1.0))
        })
        .collect();
    for u in 0..n {
        let row: Vec<(Variable, f64)> = (0..kk).map(|k| (m[u * kk + k], 1.0)).collect();
        p.add_constraint(row, ComparisonOp::Eq, 1.0);
        if let Some(l) = l {
            let mut row: Vec<(Variable, f64)> = (0..kk)
                .filter(|&k| lp.cost_dn[u * kk + k] != 0.0)
                .map(|k| (m[u * kk + k], lp.cost_dn[u * kk + k]))
                .collect();
            row.push((l, -1.0));
            p.add_constraint(row, ComparisonOp::Le, 0.0);
        }
    }
    for &r in rows {
        p.add_constraint(privacy_row(lp, &m, r), ComparisonOp::Le, 0.0);
    }
    let sol = p
        .solve_with(options())
        .map_err(err)?
        .into_solution()
        .map_err(|_| LpError::Interrupted)?;
    Ok((sol, m))
}

/// Solve the dual of the relaxation on the given privacy rows (`c_up`, costs rounded
/// down; rows with c_up above the LP's cap left out):
///
/// max Σ_u α_u  s.t.  α_u − w_u c(u,k) − Σ_{(u,v,k)} γ + Σ_{(v,u,k)} c_up(v,u) γ ≤ 0  ∀(u,k),
/// w = β with Σβ = 1, β ≥ 0 (MaxLoss) or w = π (Expected); γ ≥ 0.
pub fn solve_dual(lp: &PrivacyLp, rows: &[(u32, u32, u32)]) -> Result<Dual, LpError> {
    let start = Instant::now();
    let (n, kk) = (lp.n, lp.k());
    let max_loss = lp.objective == Objective::MaxLoss;
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let alpha: Vec<Variable> = (0..n)
        .map(|_| p.add_var(1.0, (f64::NEG_INFINITY, f64::INFINITY)))
        .collect();
    let beta: Option<Vec<Variable>> = max_loss.then(|| {
        (0..n)
            .map(|_| p.add_var(0.0, (0.0, f64::INFINITY)))
            .collect()
    });
    let kept: Vec<(u32, u32, u32)> = rows
        .iter()
        .copied()
        .filter(|&(u, v, _)| lp.c_up[u as usize * n + v as usize] <= lp.cap)
        .collect();
    let gamma: Vec<Variable> = kept
        .iter()
        .map(|_| p.add_var(0.0, (0.0, f64::INFINITY)))
        .collect();
    // Column entries per (u, k). The variable is g = c_up·γ: a bound violation of g within
    // the solver's tolerance is then not amplified by c_up (up to 2^20) in row (v, k).
    let mut entries: Vec<Vec<(Variable, f64)>> = vec![vec![]; n * kk];
    for (i, &(u, v, k)) in kept.iter().enumerate() {
        let (u, v, k) = (u as usize, v as usize, k as usize);
        entries[u * kk + k].push((gamma[i], -1.0 / lp.c_up[u * n + v]));
        entries[v * kk + k].push((gamma[i], 1.0));
    }
    for u in 0..n {
        for k in 0..kk {
            let mut row = std::mem::take(&mut entries[u * kk + k]);
            row.push((alpha[u], 1.0));
            let c = lp.cost_dn[u * kk + k];
            match &beta {
                Some(b) => {
                    if c != 0.0 {
                        row.push((b[u], -c));
                    }
                    p.add_constraint(row, ComparisonOp::Le, 0.0);
                }
                None => p.add_constraint(row, ComparisonOp::Le, lp.prior_f64(u) * c),
            }
        }
    }
    if let Some(b) = &beta {
        let row: Vec<(Variable, f64)> = b.iter().map(|&v| (v, 1.0)).collect();
        p.add_constraint(row, ComparisonOp::Eq, 1.0);
    }
    let sol = p
        .solve_with(options())
        .map_err(err)?
        .into_solution()
        .map_err(|_| LpError::Interrupted)?;
    let gamma_values = kept
        .iter()
        .zip(&gamma)
        .filter_map(|(&(u, v, k), &g)| {
            let x = sol.var_value(g) / lp.c_up[u as usize * n + v as usize];
            (x > 0.0).then_some((u, v, k, x))
        })
        .collect();
    Ok(Dual {
        beta: beta.map(|b| b.iter().map(|&v| sol.var_value(v).max(0.0)).collect()),
        gamma: gamma_values,
        objective: sol.objective(),
        seconds: start.elapsed().as_secs_f64(),
    })
}
