//! The interior-point side: Clarabel (pure Rust, Goulart & Chen 2024) on a [`PrivacyLp`]
//! with lazy privacy rows. One solve yields both the primal (the mechanism, repaired by
//! [`super::repair`]) and the dual (β on the loss rows, γ on the privacy rows: the
//! `lp_dual` certificate's content, verified by [`crate::certificate::verify`]).
//!
//! Measured against microlp's simplex on the same LPs (spec/lp.md §4, spec/crates.md):
//! the full OPTMech LP at n = 30 (27 061 rows) takes Clarabel 0.97 s, while microlp's
//! lazy-row simplex takes 19 s. An interior point method has no warm start, so each lazy
//! round is a fresh solve: LPs up to [`FULL_ROWS`] rows are solved whole; larger ones start
//! from [`LAZY_NEIGHBOURS`] neighbours and add every violated row each round.
//!
//! The LP is lowered to the one float model ([`super::sparse::SparseLp`], rows in
//! [`PrivacyLp::to_sparse`]'s layout, privacy rows as M\[u\]\[k\]/c_dn − M\[v\]\[k\] ≤ 0) and
//! solved by its Clarabel adapter. The dual z ≥ 0 of a loss row is β_u, of a privacy row
//! c_dn·γ (spec/lp.md §5).

use super::model::{Objective, PrivacyLp, RowForm};
use super::simplex::{initial_rows, near_tight, separate_top};
use super::{Dual, LpError, Primal, Round, Row};
use crate::progress::Progress;
use std::collections::HashSet;
use std::time::Instant;

/// LPs with at most this many privacy rows are solved whole (one round); larger ones
/// start from the rows of each input's [`LAZY_NEIGHBOURS`] nearest neighbours.
pub const FULL_ROWS: usize = 150_000;
/// Initial neighbours of the lazy start.
pub const LAZY_NEIGHBOURS: usize = 10;

/// One working-set solve: the mechanism (n×K row-major), its objective, the loss rows'
/// duals β (max loss) and the privacy rows' γ (in the order of the rows solved).
pub(crate) struct Solved {
    pub m: Vec<f64>,
    pub objective: f64,
    pub beta: Option<Vec<f64>>,
    pub gamma: Vec<f64>,
}

/// One fresh interior-point solve with the given privacy rows: the LP lowered to the one
/// float model ([`PrivacyLp::to_sparse`], privacy rows scaled by 1/c_dn) and solved by its
/// Clarabel adapter; the duals of the loss rows are β, of a privacy row c_dn·γ.
pub(crate) fn solve_rows(lp: &PrivacyLp, rows: &[(u32, u32, u32)]) -> Result<Solved, LpError> {
    let n = lp.n;
    let max_loss = lp.objective == Objective::MaxLoss;
    let sol = lp.to_sparse(rows, RowForm::Scaled).solve_ipm()?;
    // Row layout of `to_sparse`: n sums, n loss rows (max loss only), the privacy rows.
    let loss_row0 = n;
    let priv_row0 = n + if max_loss { n } else { 0 };
    Ok(Solved {
        m: sol.x[usize::from(max_loss)..].to_vec(),
        objective: sol.objective,
        beta: max_loss.then(|| {
            sol.duals[loss_row0..loss_row0 + n]
                .iter()
                .map(|z| z.max(0.0))
                .collect()
        }),
        gamma: rows
            .iter()
            .zip(&sol.duals[priv_row0..priv_row0 + rows.len()])
            .map(|(&(u, v, _), &z)| z / lp.c_dn[u as usize * n + v as usize])
            .collect(),
    })
}

/// Solve (whole, or with lazy rows past [`FULL_ROWS`]); returns the primal and the dual of
/// the final LP.
pub fn solve(lp: &PrivacyLp, progress: &dyn Progress) -> Result<(Primal, Dual), LpError> {
    solve_from(lp, start_rows(lp), 0.0, progress)
}

/// The first round's privacy rows: all of them up to [`FULL_ROWS`], else those of each
/// input's [`LAZY_NEIGHBOURS`] nearest neighbours.
pub fn start_rows(lp: &PrivacyLp) -> Vec<(u32, u32, u32)> {
    if lp.pairs.len() * lp.k() <= FULL_ROWS {
        initial_rows(lp, usize::MAX)
    } else {
        initial_rows(lp, LAZY_NEIGHBOURS)
    }
}

/// [`solve`] from a given working set of privacy rows (e.g. the active rows found by
/// [`super::block_ipm::solve`]): violated rows are added each round until none is.
/// With `margin` > 0, a round that finds violated rows also adds those held within
/// `margin` of tight ([`near_tight`]): fewer rounds of one or a few rows each (spec/lp.md
/// §4.3).
pub fn solve_from(
    lp: &PrivacyLp,
    rows: Vec<(u32, u32, u32)>,
    margin: f64,
    progress: &dyn Progress,
) -> Result<(Primal, Dual), LpError> {
    solve_rounds(lp, rows, margin, 0, Instant::now(), progress)
}

/// [`solve_from`]'s loop, numbering its rounds from `first` and timing from `start` (a
/// caller that ran the first rounds itself continues here: [`super::support`]).
pub(crate) fn solve_rounds(
    lp: &PrivacyLp,
    mut rows: Vec<(u32, u32, u32)>,
    margin: f64,
    first: usize,
    start: Instant,
    progress: &dyn Progress,
) -> Result<(Primal, Dual), LpError> {
    let mut present: HashSet<(u32, u32, u32)> = rows.iter().copied().collect();
    let mut round = first;
    loop {
        let s = solve_rows(lp, &rows)?;
        let (p, d, new) = finish_round(lp, &rows, &present, margin, round, start, progress, s);
        if new.is_empty() {
            return Ok((p, d));
        }
        present.extend(new.iter().copied());
        rows.extend(new);
        round += 1;
    }
}

/// One round after its solve `s` (by Clarabel or another solver of the same rows): its
/// primal and dual, and the rows the next round would add (violated ones, widened by
/// `margin` as in [`solve_from`]); none means the solution is optimal for the whole LP.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_round(
    lp: &PrivacyLp,
    rows: &[(u32, u32, u32)],
    present: &HashSet<(u32, u32, u32)>,
    margin: f64,
    round: usize,
    start: Instant,
    progress: &dyn Progress,
    s: Solved,
) -> (Primal, Dual, Vec<Row>) {
    let mut new = separate_top(lp, &s.m, present, usize::MAX);
    if !new.is_empty() && margin > 0.0 {
        new = near_tight(lp, &s.m, present, margin);
    }
    progress.round(&Round {
        round,
        rows: rows.len(),
        added: new.len(),
        objective: s.objective,
        seconds: start.elapsed().as_secs_f64(),
    });
    let seconds = start.elapsed().as_secs_f64();
    // Rows whose constant was capped (c_up above the cap) are not rows of the relaxation
    // the certificate proves (spec/lp.md §2): their γ, which the verifier would weigh with
    // the true c_up ≫ cap, is left out (γ = 0 is valid).
    let gamma = rows
        .iter()
        .zip(&s.gamma)
        .filter(|&(&(u, v, _), &g)| g > 0.0 && lp.c_up[u as usize * lp.n + v as usize] <= lp.cap)
        .map(|(&(u, v, k), &g)| (u, v, k, g))
        .collect();
    (
        Primal {
            m: s.m,
            objective: s.objective,
            rows: rows.to_vec(),
            rounds: round + 1,
            seconds,
        },
        Dual {
            beta: s.beta,
            gamma,
            objective: s.objective,
            seconds: 0.0,
        },
        new,
    )
}
