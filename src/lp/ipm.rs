//! The interior-point side: Clarabel (pure Rust, Goulart & Chen 2024) on a [`PrivacyLp`]
//! with lazy privacy rows. One solve yields both the primal (the mechanism, repaired by
//! [`super::repair`]) and the dual (β on the loss rows, γ on the privacy rows: the
//! `lp_dual` certificate's content, verified by [`super::certificate::verify`]).
//!
//! Measured against microlp's simplex on the same LPs (spec/lp.md §4, spec/crates.md):
//! the full OPTMech LP at n = 30 (27 061 rows) takes Clarabel 0.97 s, while microlp's
//! lazy-row simplex takes 19 s. An interior point method has no warm start, so each lazy
//! round is a fresh solve: LPs up to [`FULL_ROWS`] rows are solved whole; larger ones start
//! from [`LAZY_NEIGHBOURS`] neighbours and add every violated row each round.
//!
//! Clarabel's form: min q'x s.t. Ax + s = b, s ∈ {0}^e × R_+^m. Rows: Σ_k M\[u\]\[k\] = 1
//! (zero cone); Σ_k c(u,k) M\[u\]\[k\] − L ≤ 0 (max loss only); M\[u\]\[k\]/c_dn − M\[v\]\[k\] ≤ 0;
//! −L ≤ 0, −M ≤ 0. The dual z ≥ 0 of a loss row is β_u, of a privacy row c_dn·γ
//! (spec/lp.md §5).

use super::model::{Objective, PrivacyLp};
use super::simplex::{initial_rows, separate_top, Dual, Primal, Round, SolveError};
use crate::progress::Progress;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
    SupportedConeT, ZeroConeT,
};
use std::collections::HashSet;
use std::time::Instant;

/// LPs with at most this many privacy rows are solved whole (one round); larger ones
/// start from the rows of each input's [`LAZY_NEIGHBOURS`] nearest neighbours.
pub const FULL_ROWS: usize = 150_000;
/// Initial neighbours of the lazy start.
pub const LAZY_NEIGHBOURS: usize = 10;
/// Clarabel's gap and feasibility tolerances.
pub const TOL: f64 = 1e-10;

struct Solved {
    m: Vec<f64>,
    objective: f64,
    beta: Option<Vec<f64>>,
    gamma: Vec<f64>,
}

/// One fresh interior-point solve with the given privacy rows.
fn solve_rows(lp: &PrivacyLp, rows: &[(u32, u32, u32)]) -> Result<Solved, SolveError> {
    let (n, kk) = (lp.n, lp.k());
    let max_loss = lp.objective == Objective::MaxLoss;
    let off = usize::from(max_loss); // x = [L?, M row-major]
    let nv = off + n * kk;
    let mv = |u: usize, k: usize| off + u * kk + k;
    let (mut ii, mut jj, mut vv) = (vec![], vec![], vec![]);
    let mut b = vec![];
    let mut row = 0;
    for u in 0..n {
        for k in 0..kk {
            ii.push(row);
            jj.push(mv(u, k));
            vv.push(1.0);
        }
        b.push(1.0);
        row += 1;
    }
    let n_eq = row;
    let loss_row0 = row;
    if max_loss {
        for u in 0..n {
            ii.push(row);
            jj.push(0);
            vv.push(-1.0);
            for k in 0..kk {
                let c = lp.cost_dn[u * kk + k];
                if c != 0.0 {
                    ii.push(row);
                    jj.push(mv(u, k));
                    vv.push(c);
                }
            }
            b.push(0.0);
            row += 1;
        }
    }
    let priv_row0 = row;
    for &(u, v, k) in rows {
        let (u, v, k) = (u as usize, v as usize, k as usize);
        // Scaled by 1/c: (1/c) M[u][k] − M[v][k] ≤ 0, so the dual is z = c·γ and an error
        // in z within the tolerance is not amplified by c in the certificate (spec/lp.md §5).
        ii.extend([row, row]);
        jj.extend([mv(u, k), mv(v, k)]);
        vv.extend([1.0 / lp.c_dn[u * n + v], -1.0]);
        b.push(0.0);
        row += 1;
    }
    // Every variable ≥ 0, L included: a free L makes Clarabel's factorization ≈ 15× slower
    // (measured: full OPTMech LP, n = 40, 25 s → 1.7 s).
    for j in 0..nv {
        ii.push(row);
        jj.push(j);
        vv.push(-1.0);
        b.push(0.0);
        row += 1;
    }
    let m_rows = row;
    let a = CscMatrix::new_from_triplets(m_rows, nv, ii, jj, vv);
    let p = CscMatrix::<f64>::zeros((nv, nv));
    let mut q = vec![0.0; nv];
    if max_loss {
        q[0] = 1.0;
    } else {
        for u in 0..n {
            let w = lp.prior_f64(u);
            for k in 0..kk {
                q[mv(u, k)] = w * lp.cost_dn[u * kk + k];
            }
        }
    }
    let cones: [SupportedConeT<f64>; 2] = [ZeroConeT(n_eq), NonnegativeConeT(m_rows - n_eq)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(TOL)
        .tol_gap_rel(TOL)
        .tol_feas(TOL)
        .build()
        .map_err(|e| SolveError(format!("clarabel settings: {e}")))?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| SolveError(format!("clarabel: {e:?}")))?;
    solver.solve();
    let s = &solver.solution;
    match s.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        other => return Err(SolveError(format!("clarabel: {other:?}"))),
    }
    Ok(Solved {
        m: s.x[off..].to_vec(),
        objective: s.obj_val,
        beta: max_loss.then(|| {
            s.z[loss_row0..loss_row0 + n]
                .iter()
                .map(|z| z.max(0.0))
                .collect()
        }),
        gamma: rows
            .iter()
            .zip(&s.z[priv_row0..priv_row0 + rows.len()])
            .map(|(&(u, v, _), &z)| z / lp.c_dn[u as usize * n + v as usize])
            .collect(),
    })
}

/// Solve (whole, or with lazy rows past [`FULL_ROWS`]); returns the primal and the dual of
/// the final LP.
pub fn solve(lp: &PrivacyLp, progress: &dyn Progress) -> Result<(Primal, Dual), SolveError> {
    let start = Instant::now();
    let all = lp.pairs.len() * lp.k();
    let mut rows = if all <= FULL_ROWS {
        initial_rows(lp, usize::MAX)
    } else {
        initial_rows(lp, LAZY_NEIGHBOURS)
    };
    let mut present: HashSet<(u32, u32, u32)> = rows.iter().copied().collect();
    let mut round = 0;
    loop {
        let s = solve_rows(lp, &rows)?;
        let new = separate_top(lp, &s.m, &present, usize::MAX);
        progress.round(&Round {
            round,
            rows: rows.len(),
            added: new.len(),
            objective: s.objective,
            seconds: start.elapsed().as_secs_f64(),
        });
        if new.is_empty() {
            let seconds = start.elapsed().as_secs_f64();
            let gamma = rows
                .iter()
                .zip(&s.gamma)
                .filter(|&(_, &g)| g > 0.0)
                .map(|(&(u, v, k), &g)| (u, v, k, g))
                .collect();
            return Ok((
                Primal {
                    m: s.m,
                    objective: s.objective,
                    rows,
                    rounds: round + 1,
                    seconds,
                },
                Dual {
                    beta: s.beta,
                    gamma,
                    objective: s.objective,
                    seconds: 0.0,
                },
            ));
        }
        present.extend(new.iter().copied());
        rows.extend(new);
        round += 1;
    }
}
