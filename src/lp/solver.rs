//! Which float solver finds an LP mechanism's candidate, and the one place where
//! `auto` is resolved (`spec/lp.md` §4.3, §4.6): the structured interior point on every
//! row where its iterate fits the row limit and the memory budget, else for a PMO within η
//! the localized LP, else Clarabel's lazy rows.

use super::model::{self, Objective, PrivacyLp};
use super::{block_ipm, ipm, local, simplex, support, Dual, LpError, Primal};
use crate::progress::Progress;

/// Initial neighbours per input for the simplex's lazy rows.
pub const INITIAL_NEIGHBOURS: usize = 2;

/// Which float LP solver finds the candidates (spec/lp.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// Clarabel's interior point method: primal and dual in one solve (default).
    Ipm,
    /// microlp's simplex (vertex solutions; the dual is a second LP solve).
    Simplex,
    /// The structured interior point of [`super::block_ipm`] on every row, then on the
    /// lazy rounds' working sets from its hand-over iterate (Clarabel where one of those
    /// stops short; spec/lp.md §4.3).
    Block,
    /// For OPTMech and PMO ([`Solver::resolve`], called by [`mod@crate::produce`]):
    /// [`Solver::Block`] when its every-row iterate fits the row limit and the memory
    /// budget; else, for a PMO within η, the localized LP (spec/lp.md §4.6) and
    /// [`Solver::Ipm`] if it does not apply or fails; else `Ipm`. SpannerMech passes `Auto`
    /// to `solve_float` as it is (the localized LP does not apply to a max loss: Clarabel's
    /// lazy rows), and ConstOPTMech decides its own (`mechanisms::constopt`; measured in
    /// spec/lp.md §4.3, §4.5).
    Auto,
}

/// The LP `auto` is resolved for ([`Solver::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpKind {
    /// The max loss (OPTMech): past the every-row phase's row limit the structured interior
    /// point still solves it, by column generation over restricted LPs (spec/lp.md §4.7).
    MaxLoss,
    /// The expected loss (PMO); `localizable` within η (the localized LP, spec/lp.md §4.6).
    Expected { localizable: bool },
}

impl Solver {
    /// `auto` resolved for an LP of `kind` over `n` inputs and `k` outputs with `rows`
    /// privacy rows and the memory budget `max_memory` (bytes): [`Solver::Block`] where it
    /// fits the budget ([`memory_need`]) and either its every-row iterate holds the rows
    /// ([`block_ipm::MAX_ROWS`]) or the loss is the max loss (column generation); else, for
    /// a localizable PMO, `Auto` itself, which `solve_float` takes to the localized LP and
    /// then to Clarabel's lazy rows; else [`Solver::Ipm`]. Any other choice is returned as
    /// it is.
    pub fn resolve(self, n: u64, k: u64, rows: u64, kind: LpKind, max_memory: u64) -> Solver {
        match self {
            Solver::Auto
                if (rows <= block_ipm::MAX_ROWS || kind == LpKind::MaxLoss)
                    && memory_need(n, k, rows, Solver::Block) <= max_memory =>
            {
                Solver::Block
            }
            Solver::Auto if kind == (LpKind::Expected { localizable: true }) => Solver::Auto,
            Solver::Auto => Solver::Ipm,
            s => s,
        }
    }
}

/// Estimated peak memory (bytes) of solving an LP over `n` inputs and `k` outputs with
/// `rows` privacy rows by `solver`: the lazy-row working set
/// ([`model::memory_estimate`]), plus for [`Solver::Block`] its structured phase's
/// iterate ([`block_ipm::memory_estimate`]) over every row, or over at most
/// [`block_ipm::MAX_ROWS`] (past that it holds working sets only, and refuses larger ones).
pub fn memory_need(n: u64, k: u64, rows: u64, solver: Solver) -> u64 {
    let need = model::memory_estimate(n, k);
    if solver == Solver::Block {
        need.saturating_add(block_ipm::memory_estimate(
            rows.min(block_ipm::MAX_ROWS),
            n,
            k,
        ))
    } else {
        need
    }
}

/// The float primal and, if asked, the float dual.
pub(crate) fn solve_float(
    lp: &PrivacyLp,
    solver: Solver,
    dual: bool,
    aim: Option<f64>,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<(Primal, Option<Dual>), LpError> {
    match solver {
        Solver::Ipm => ipm::solve(lp, progress).map(|(p, d)| (p, dual.then_some(d))),
        Solver::Auto => {
            // `auto` reaches here where `Solver::resolve` kept it (a PMO within η whose whole
            // LP is past the structured solver's budget) or unresolved (SpannerMech): the
            // localized LP if it applies, else Clarabel's lazy rows.
            if let Some((p, d)) = solve_localized(lp, aim, max_memory, progress) {
                return Ok((p, dual.then_some(d)));
            }
            // The early check (`produce`) left this to the localized LP's own estimate;
            // the whole LP's is checked here, before it is built.
            let need = memory_need(lp.n as u64, lp.k() as u64, 0, Solver::Ipm);
            if need > max_memory {
                return Err(LpError::OverMemory {
                    need_mib: need >> 20,
                    budget_mib: max_memory >> 20,
                });
            }
            ipm::solve(lp, progress).map(|(p, d)| (p, dual.then_some(d)))
        }
        Solver::Block => {
            // The localized LP where it applies; past the every-row phase's limit (max loss)
            // column generation over restricted LPs; else the structured interior point on
            // every row, then its lazy rounds (spec/lp.md §4.3). Either way the result is
            // repaired and verified exactly.
            if let Some((p, d)) = solve_localized(lp, aim, max_memory, progress) {
                return Ok((p, dual.then_some(d)));
            }
            let found =
                if lp.objective == Objective::MaxLoss && lp.rows_total() > block_ipm::MAX_ROWS {
                    solve_by_outputs(lp, aim, FIRST_OUTPUTS, block_ipm::MAX_ROWS, progress)
                } else {
                    solve_block(lp, aim, progress)
                };
            found.map(|(p, d)| (p, dual.then_some(d)))
        }
        Solver::Simplex => {
            let p = simplex::solve_primal(lp, INITIAL_NEIGHBOURS, progress)?;
            let d = if dual {
                Some(simplex::solve_dual(lp, &p.rows)?)
            } else {
                None
            };
            Ok((p, d))
        }
    }
}

/// The localized LP (spec/lp.md §4.6) when it applies: solved by the structured interior
/// point on each output's neighbourhood, its mechanism completed. Absent variables that
/// price in against its dual become seeds of their outputs' neighbourhoods and the LP is
/// solved again (at most [`LOCAL_ROUNDS`] times). `None` (with a note) when it does not
/// apply, fails, or its completed loss is further from its dual's bound than the aim (else
/// [`block_ipm::SOLVED_GAP`]): the whole LP is then solved.
pub(crate) fn solve_localized(
    lp: &PrivacyLp,
    aim: Option<f64>,
    max_memory: u64,
    progress: &dyn Progress,
) -> Option<(Primal, Dual)> {
    let mut seeds = local::cells(lp)?;
    let start = std::time::Instant::now();
    for round in 1..=LOCAL_ROUNDS {
        let Some(keep) = local::neighbourhoods(lp, &seeds) else {
            if round > 1 {
                progress.note(
                    "lp: the grown neighbourhoods hold over half the variables; solving the whole LP",
                );
            }
            return None;
        };
        let held: usize = keep.iter().map(Vec::len).sum();
        let need = block_ipm::local_memory_estimate(lp, &keep);
        if need > max_memory {
            progress.note(&format!(
                "lp: the localized LP ({held} of {} variables) needs about {} MiB, over the memory budget; not localized",
                lp.n * lp.k(),
                need >> 20
            ));
            return None;
        }
        progress.note(&format!(
            "lp: localized LP (round {round}): {held} of {} variables (outputs' neighbourhoods, chained decay {})",
            lp.n * lp.k(),
            local::DECAY
        ));
        let found = match block_ipm::solve_local(lp, &keep, max_memory, aim, progress) {
            Ok(x) => x,
            Err(e) => {
                progress.note(&format!("lp: {e}; solving the whole LP"));
                return None;
            }
        };
        let (mut p, d) = (found.primal, found.dual);
        let spills = local::complete(lp, &mut p.m, &keep);
        let (upper, r) = local::repaired_loss_estimate(lp, &p.m);
        let slack = match aim {
            Some(a) => a * upper.abs(),
            None => block_ipm::SOLVED_GAP * (1.0 + upper.abs()),
        };
        if upper - d.objective <= slack {
            p.objective = upper;
            p.seconds = start.elapsed().as_secs_f64();
            return Some((p, d));
        }
        if found.entering.is_empty() && spills.is_empty() || round == LOCAL_ROUNDS {
            progress.note(&format!(
                "lp: the localized LP's completed loss {upper:.10e} (the repair's mix ≈ {r:.1e} included) is {:.1e} above its bound {:.10e}; solving the whole LP",
                upper - d.objective,
                d.objective
            ));
            return None;
        }
        progress.note(&format!(
            "lp: {} absent variables price in (the bound falls {:.1e} short) and {} completed entries spill over {:.0e} (the repair's mix ≈ {r:.1e}): they join their outputs' neighbourhoods",
            found.entering.len(),
            found.shortfall,
            spills.len(),
            local::SPILL
        ));
        for (u, k) in found.entering.into_iter().chain(spills) {
            seeds[k as usize].push(u);
        }
    }
    None
}

/// The outputs column generation begins with past the every-row phase's limit
/// ([`support::spread_outputs`]; the others enter by pricing, [`solve_by_outputs`]).
/// Planar n = 500, ε = 2 (spec/lp.md §4.7): a first round over all 500 outputs took 898 s
/// (2.2 s of block factorization per iteration) and its optimum used 37; the LP over 64
/// used 44 of them, and 103 more entered.
const FIRST_OUTPUTS: usize = 64;

/// Most solves of the localized LP before the whole LP is solved instead.
const LOCAL_ROUNDS: usize = 3;

/// The structured interior point on every row; if it stops short, its working set,
/// support and iterate start the lazy rounds, which it solves (spec/lp.md §4.3); if it
/// fails, the lazy rows start as `--solver ipm`'s do.
fn solve_block(
    lp: &PrivacyLp,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<(Primal, Dual), LpError> {
    let start = std::time::Instant::now();
    let (mut used, mut warm) = (None, None);
    let rows = match block_ipm::solve(lp, aim, progress) {
        Ok(block_ipm::Outcome::Solved(p, d)) => return Ok((p, d)),
        Ok(block_ipm::Outcome::WorkingSet(mut rows, u, w)) => {
            // The structured rounds serve the max loss (OPTMech); on PMO (Rome500
            // at ε = 2) they took > 300 s against Clarabel's 106 s (spec/lp.md §4.3).
            used = u;
            if lp.objective == Objective::MaxLoss {
                warm = Some(w);
            }
            let mut seen: std::collections::HashSet<_> = rows.iter().copied().collect();
            rows.extend(
                simplex::initial_rows(lp, 2)
                    .into_iter()
                    .filter(|r| seen.insert(*r)),
            );
            rows.sort_unstable();
            rows
        }
        Err(e) => {
            progress.note(&format!(
                "lp: {e}; the lazy rows start from the nearest neighbours instead"
            ));
            ipm::start_rows(lp)
        }
    };
    let rounds = match warm.as_deref() {
        Some(w) => support::Rounds::Structured(Some(w)),
        None => support::Rounds::Clarabel,
    };
    let (mut p, d) = support::solve(lp, rows, used, rounds, block_ipm::NEAR_TIGHT, progress)?;
    // The primal's seconds include the structured phase.
    p.seconds = start.elapsed().as_secs_f64();
    Ok((p, d))
}

/// A max-loss LP past the every-row phase's row limit (`limit`: [`block_ipm::MAX_ROWS`]),
/// by column generation (spec/lp.md §4.7): `solve_block` on the LP restricted to a set
/// of outputs (a restriction: its mechanisms padded with zero columns are mechanisms of
/// the whole LP), beginning with `first` (`FIRST_OUTPUTS`) spread over the space; every
/// other output priced against its dual (`support::price`), those that cannot be priced
/// added, until none enters. The set only grows, so this ends; once the restricted LP's
/// rows pass the limit too, the structured interior point solves cold working sets over
/// the outputs kept so far.
pub fn solve_by_outputs(
    lp: &PrivacyLp,
    aim: Option<f64>,
    first: usize,
    limit: u64,
    progress: &dyn Progress,
) -> Result<(Primal, Dual), LpError> {
    let start = std::time::Instant::now();
    let kk = lp.k();
    let mut keep = support::spread_outputs(lp, first);
    let mut round = 0;
    loop {
        round += 1;
        let sub = support::restrict(lp, &keep);
        if sub.rows_total() > limit {
            progress.note(&format!(
                "lp: the LP over {} outputs has {} privacy rows, past the every-row phase's limit ({limit}); the structured interior point solves the lazy rounds' working sets over them from a cold start",
                keep.len(),
                sub.rows_total(),
            ));
            let rounds = support::Rounds::Structured(None);
            return support::solve(
                lp,
                ipm::start_rows(lp),
                Some(keep),
                rounds,
                block_ipm::NEAR_TIGHT,
                progress,
            );
        }
        progress.note(&format!(
            "lp: column generation round {round}: the LP over {} of {kk} outputs ({} privacy rows), the others priced against its dual",
            keep.len(),
            sub.rows_total()
        ));
        let (ps, ds) = solve_block(&sub, aim, progress)?;
        let priced = support::price_noted(lp, &keep, &ds, "outputs outside the LP", progress);
        if priced.entering.is_empty() {
            let (mut p, d) = support::lift(lp, &keep, ps, ds, priced.gamma);
            p.seconds = start.elapsed().as_secs_f64();
            return Ok((p, d));
        }
        keep.extend(priced.entering);
        keep.sort_unstable();
    }
}
