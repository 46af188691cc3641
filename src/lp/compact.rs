//! Compact `lp_dual` certificates (`spec/lp.md` §5.1; issues 33 and 38, compact files).
//!
//! An interior point's dual has a multiplier on nearly every generated row (OPTMech on 80
//! Rome points: 107 446 of them, 10 MB of JSON). Any γ ≥ 0 is a valid certificate, because
//! the verifier computes α itself (§5), so the producer may write a sparser one. With the
//! weights w and the target α fixed, the verifier's conditions T_(u,k) ≥ α_u separate by
//! output k:
//!
//!   for every input u:  Σ_{(u,v,k)} γ − Σ_{(v,u,k)} c_up(v,u) γ + s_u ≥ b_u,
//!   b_u = α_u − w_u c(u,k),  s_u ≥ 0,
//!
//! a system in the multipliers of output k alone. The given γ satisfies it with s = 0, so
//! the LP "minimize Σ_u s_u" over the same rows has optimum 0, and a **vertex** of it (what
//! the simplex returns) has at most one nonzero per constraint: at most n multipliers per
//! output, n·K in all, instead of one per generated row. The new certificate proves
//! Σ_u min_k T′_(u,k) ≥ Σ_u (α_u − max_k s_(u,k)) up to the simplex's tolerance; the
//! caller (`super::pipeline`) takes the safe f64 bound of what it will write as the claim
//! and keeps it only if it is within [`allowance`] of the full certificate's bound.

use super::model::PrivacyLp;
use super::solution::Dual;
use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOptions};
use rayon::prelude::*;
use std::collections::HashMap;

/// Relative amount of the proven bound a compact certificate may always give up (1% of
/// the producers' 10⁻⁷ gap target, `super::TARGET_GAP`).
pub const COMPACT_LOSS: f64 = 1e-9;

/// How much of the proven bound `full` a compact certificate may give up: COMPACT_LOSS
/// (relative), or half the room left between the certified gap (to the written matrix's
/// loss `upper`) and the `target` (relative), whichever is larger. A certificate within
/// the target stays within it up to 2·COMPACT_LOSS (the vertex's and the digits' least
/// allowances where no room is left).
pub fn allowance(full: f64, upper: Option<f64>, target: f64) -> f64 {
    let least = COMPACT_LOSS * full.abs() + 1e-12;
    let room = upper.map_or(0.0, |u| 0.5 * (target * u.abs() - (u - full)));
    if room.is_finite() {
        least.max(room)
    } else {
        least
    }
}

/// A multiplier γ of row (u, v, k).
type Multiplier = (u32, u32, u32, f64);

/// The significant digits tried for the multipliers, fewest first (after them, the
/// shortest decimal of each double, ≤ 17 digits).
pub const DIGITS: [usize; 4] = [6, 8, 10, 12];

/// microlp's feasibility tolerances for the vertex pass, tried in order (the first can
/// fail to converge where constants are extreme).
pub const VERTEX_TOLS: [f64; 3] = [1e-12, 1e-10, 1e-9];

/// The largest right-hand side of each output's system after scaling (see `vertex`).
pub const VERTEX_SCALE: f64 = 1e4;

/// Largest dual (multipliers) the vertex pass takes: one simplex per output over its rows.
pub const VERTEX_MAX_ROWS: usize = 4_000_000;

/// The multipliers of `d` replaced, output by output, by a vertex of the system above
/// (β unchanged), and how many outputs took their vertex. An output keeps its own multipliers where its simplex fails or leaves a
/// term more than `loss`/n below its target (measured in floats with the written values),
/// so the bound loses at most about `loss`. `Err` says why
/// there is no vertex at all: nothing to gain (already ≤ n per output), the dual is too
/// large ([`VERTEX_MAX_ROWS`]), has no weights or infinite terms, or no output's vertex
/// was kept.
pub fn vertex_per_output(
    lp: &PrivacyLp,
    d: &Dual,
    loss: f64,
) -> Result<(Dual, usize), &'static str> {
    let (n, kk) = (lp.n, lp.k());
    if d.gamma.len() <= n * kk {
        return Err("already at most n multipliers per output");
    }
    if d.gamma.len() > VERTEX_MAX_ROWS {
        return Err("over VERTEX_MAX_ROWS multipliers");
    }
    let w = d.weights(lp).ok_or("no weights")?;
    let (_, alpha) = d.terms(lp, &w, None);
    if alpha.iter().any(|a| !a.is_finite()) {
        return Err("a term is not finite");
    }
    let mut by_output: Vec<Vec<(usize, usize, f64)>> = vec![vec![]; kk];
    for &(u, v, k, g) in &d.gamma {
        by_output[k as usize].push((u as usize, v as usize, g));
    }
    let allowed = loss / n as f64;
    let solved: Vec<Option<Vec<Multiplier>>> = by_output
        .par_iter()
        .enumerate()
        .map(|(k, rows)| {
            let b: Vec<f64> = (0..n)
                .map(|u| alpha[u] - w[u] * lp.cost_dn[u * kk + k])
                .collect();
            VERTEX_TOLS.iter().find_map(|&tol| {
                let v = vertex(lp, k, rows, &b, tol)?;
                (shortfall(lp, &v, &b) <= allowed).then_some(v)
            })
        })
        .collect();
    let mut gamma = Vec::with_capacity(n * kk);
    let mut kept = 0;
    for (k, rows) in solved.into_iter().enumerate() {
        match rows {
            Some(rows) => {
                kept += 1;
                gamma.extend(rows);
            }
            None => gamma.extend(
                by_output[k]
                    .iter()
                    .map(|&(u, v, g)| (u as u32, v as u32, k as u32, g)),
            ),
        }
    }
    if kept == 0 {
        return Err("no output's vertex kept the bound");
    }
    let dual = Dual {
        beta: d.beta.clone(),
        gamma,
        objective: d.objective,
        seconds: d.seconds,
    };
    Ok((dual, kept))
}

/// The largest amount by which the multipliers `rows` (all of one output) leave an
/// input's term below its target `b` (0 if none), in floats.
fn shortfall(lp: &PrivacyLp, rows: &[(u32, u32, u32, f64)], b: &[f64]) -> f64 {
    let n = lp.n;
    let mut lhs: HashMap<usize, f64> = HashMap::new();
    for &(u, v, _, g) in rows {
        let (u, v) = (u as usize, v as usize);
        *lhs.entry(u).or_insert(0.0) += g;
        *lhs.entry(v).or_insert(0.0) -= lp.c_up[u * n + v] * g;
    }
    let mut worst: f64 = 0.0;
    for (u, &bu) in b.iter().enumerate() {
        let short = bu - lhs.get(&u).copied().unwrap_or(0.0);
        if short.is_nan() {
            return f64::INFINITY;
        }
        worst = worst.max(short);
    }
    worst
}

/// A vertex of output `k`'s system over `rows` (u, v, γ) with right-hand sides `b`, solved
/// with feasibility tolerance `tol`, as multipliers (u, v, k, γ′ > 0) in the order of
/// `rows`.
fn vertex(
    lp: &PrivacyLp,
    k: usize,
    rows: &[(usize, usize, f64)],
    b: &[f64],
    tol: f64,
) -> Option<Vec<(u32, u32, u32, f64)>> {
    let n = lp.n;
    // The inputs the system constrains: those the rows touch and those with b_u > 0.
    let mut node = vec![usize::MAX; n];
    let mut nodes = vec![];
    let mut touch = |u: usize, node: &mut Vec<usize>| {
        if node[u] == usize::MAX {
            node[u] = nodes.len();
            nodes.push(u);
        }
    };
    for &(u, v, _) in rows {
        touch(u, &mut node);
        touch(v, &mut node);
    }
    for (u, &bu) in b.iter().enumerate() {
        if bu > 0.0 {
            touch(u, &mut node);
        }
    }
    // The system is homogeneous in (z, b): solved for scale·b, its z/scale solves it for b
    // with the simplex's absolute tolerance divided by scale.
    let top = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if !(top > 0.0 && top.is_finite()) {
        return Some(vec![]);
    }
    let scale = VERTEX_SCALE / top;
    let mut p = Problem::new(OptimizationDirection::Minimize);
    let gvars: Vec<_> = rows
        .iter()
        .map(|_| p.add_var(0.0, (0.0, f64::INFINITY)))
        .collect();
    let mut terms: Vec<Vec<(microlp::Variable, f64)>> = vec![vec![]; nodes.len()];
    // The variable of row (u, v) is z = c_up(u,v)·γ (c_up ≥ 1): every coefficient is then
    // −1 or 1/c_up, so the simplex's tolerance (a z a hair below 0, clamped) moves a term
    // by at most that tolerance, not by c_up times it (c_up reaches 10⁸ on Rome).
    for (i, &(u, v, _)) in rows.iter().enumerate() {
        terms[node[u]].push((gvars[i], 1.0 / lp.c_up[u * n + v]));
        terms[node[v]].push((gvars[i], -1.0));
    }
    for (j, mut row) in terms.into_iter().enumerate() {
        let s = p.add_var(1.0, (0.0, f64::INFINITY));
        row.push((s, 1.0));
        p.add_constraint(row, ComparisonOp::Ge, scale * b[nodes[j]]);
    }
    let mut o = SolveOptions::default();
    o.tolerances.feasibility = tol;
    let sol = p.solve_with(o).ok()?.into_solution().ok()?;
    Some(
        rows.iter()
            .zip(&gvars)
            .filter_map(|(&(u, v, _), x)| {
                let g = sol.var_value(*x) / scale / lp.c_up[u * n + v];
                (g > 0.0).then_some((u as u32, v as u32, k as u32, g))
            })
            .collect(),
    )
}
