//! A primal–dual interior point method that knows the privacy LP's structure
//! (`spec/lp.md` §4.3): every privacy row M\[u\]\[k\]/c − M\[v\]\[k\] ≤ 0 touches one output
//! column k, so the Newton matrix on the variables is K dense n×n blocks plus the coupling
//! of the 2n row-sum and loss rows. Each iteration factorizes the K blocks (Cholesky, then
//! the explicit inverse, in parallel; each block apart on every connected component of the
//! pairs' graph, which for a `--within` LP are its η-components, Qiu 2024 Proposition 3.1,
//! and by blocks along one level of nested dissection where the component's pairs are
//! sparse, `dissect`) and solves a (2n+1)×(2n+1) Schur complement:
//! ≈ K·Σ_c n_c³ flops at most, with every row present and no lazy rounds.
//!
//! The LP (variables x = (M column-major by output, then L for the max loss)):
//! min cᵀx s.t. Σ_k M\[u\]\[k\] = 1 (y_u), Σ_k c(u,k)·M\[u\]\[k\] − L ≤ 0 (z_u, max loss
//! only), M\[u\]\[k\]/c_dn(u,v) − M\[v\]\[k\] ≤ 0 (z_uvk), x ≥ 0 (w). Mehrotra
//! predictor–corrector with iterative refinement on the reduced system. L is not
//! eliminated: its Newton entry w_L/x_L → 0 (L is basic), and eliminating it put
//! x_L/w_L ≈ 10¹⁰ on every entry of the loss block, whose LU then lost the rest of the
//! system and stalled the method at a gap of ≈ 10⁻³; ΔL is a border unknown of the Schur
//! complement instead. The dual measured is the one the `lp_dual` verifier would prove
//! (`bound`), and the best one is kept. [`solve`] returns its iterate
//! as the solution when that bound is within [`SOLVED_GAP`], else hands the iterate, its
//! working set and support to the lazy rounds (`lp::support`), whose working sets this
//! method then solves from that iterate (`solve_rows`; the rows are held output by
//! output, `Structure::sel`). Either way the mechanism is repaired exactly and the dual
//! verified exactly: this solver is trusted for nothing. [`solve_local`] solves the
//! localized PMO LP (`lp::local`, spec/lp.md §4.6) the same way: each output has variables
//! for its neighbourhood only (`Structure::present`) and its own block layout
//! (`Layout`). With `MDP_BLOCK_DEBUG` set, each iteration's gap, μ,
//! residuals and steps (the measurements of spec/lp.md §4.3) and each dissected component
//! go to the caller's [`Progress`] as notes (the `mdp` command prints them on stderr).
//!
//! The parts: this module holds the entry points ([`solve`], [`solve_local`],
//! `solve_rows`), their limits and what they return; `iteration` the
//! predictor–corrector loop; `newton` the Newton system's factorization and directions;
//! `structure` the LP's rows and block layouts; `dense` the dense block kernels
//! (Cholesky, inverses, the Schur complement's LU); `dissection` the blocks' nested
//! dissection.

mod dense;
mod dissection;
mod iteration;
mod newton;
mod sparse_kkt;
mod sparse_schur;
mod structure;

use super::model::PrivacyLp;
use super::Row;
use super::{Dual, LpError, Primal};
use crate::progress::Progress;
use iteration::{run, weight_total, End, Rows};
use rayon::prelude::*;
use std::time::Instant;
use structure::{pair_index, Iterate, Structure};

/// [`solve`] runs to this relative gap ...
pub const TARGET_GAP: f64 = 1e-9;
/// ... and returns its iterate as the solution if it got within this (gap and primal
/// residual); otherwise its working set.
pub const SOLVED_GAP: f64 = 5e-8;
/// A working-set solve (`solve_rows`) that stops above this relative gap (its bound's,
/// against its objective) is an error, and Clarabel solves that round. On Rome n = 200
/// the working set's dual residual limits it to 3–7·10⁻⁸ (spec/lp.md §4.3); 10⁻⁶ let
/// small objectives (PMO-like losses ≈ 0.02, where the gap's 1 + |objective| is ≈ 1)
/// through with a bound 2·10⁻⁵ below the optimum.
pub const WORKING_GAP: f64 = 1e-7;
/// A working-set solve that stops between [`WORKING_GAP`] and this, nearly feasible, is
/// still good enough to find the rows the next lazy round adds
/// (`solve_rows`'s `short`): only a round that adds none needs the accurate solve.
/// MiniLM n = 200 (session 26): the first working set stopped at 1.1·10⁻⁷ and broke
/// 274 321 rows, which Clarabel's solve of that round (≈ 120 000 rows) only confirmed.
pub const SHORT_GAP: f64 = 1e-5;
/// Below this relative gap the iterate's support (its used outputs) seeds the lazy rows
/// (it may stop above [`HANDOVER_GAP`](iteration::HANDOVER_GAP) when its linear algebra
/// loses accuracy).
const SUPPORT_GAP: f64 = 1e-3;
/// An output is in the handed-over support when its column has an entry above this
/// fraction of the largest entry. Looser than [`super::used::SUPPORT_TOL`] since the
/// iterate is interior: at gap 10⁻⁴ on Rome n = 100 it keeps 64 outputs (the lazy rows'
/// own optimum uses 72) and pricing proves the other 36 unneeded; an output it misses
/// enters by pricing.
const SUPPORT_TOL: f64 = 1e-2;
/// The dual's smallest multipliers are dropped while their sum stays within this, relative
/// to |objective| (`Dual::sparsify`; relative, so that a small expected loss keeps its digits).
const DUAL_BUDGET: f64 = 1e-8;
/// The solver keeps 4 doubles per privacy row while it iterates (s, z, θ and the best
/// z); its peak is after the run, when the best z, the nearly tight rows (12 bytes each)
/// and the listed multipliers (24 bytes, plus 9 while `Dual::sparsify` sorts them) are
/// held at once: 53 bytes, counted as 56. LPs with more rows than this (≈ 2.8 GB) are
/// refused before allocating.
pub const MAX_ROWS: u64 = 50_000_000;
const BYTES_PER_ROW: u64 = 56;
/// A privacy row joins the working set when the iterate's slack is below this fraction
/// of x_v, i.e. x_u/c ≥ (1 − NEAR_TIGHT)·x_v: the row is nearly tight (spec/lp.md §4.3).
/// The lazy rounds that follow add rows within the same margin of tight.
pub const NEAR_TIGHT: f64 = 0.05;

/// The outputs' blocks are inverted in this many contiguous parts, each with its own
/// buffers and Schur sums, added in part order: a constant, so that the floating-point
/// sums, and every decision after them, are the same on any number of threads (spec/lp.md
/// §4.7). Eight keep two to eight cores busy.
pub const PARTS: usize = 8;

/// The memory the structured phase holds for `rows_total` privacy rows (every row of the
/// LP) over n inputs and k outputs, on top of the lazy-row interior point's
/// ([`super::model::memory_estimate`]): `BYTES_PER_ROW` per row, the k explicit
/// block inverses (Σ_c n_c² entries each over the pairs' components, counted as n², an
/// upper bound), and the (2n+1)×(2n+1) Schur complement with each of the [`PARTS`] parts'
/// sums and buffers (counted as 8 such matrices).
pub fn memory_estimate(rows_total: u64, n: u64, k: u64) -> u64 {
    let schur = (2 * n + 1).saturating_mul(2 * n + 1);
    rows_total
        .saturating_mul(BYTES_PER_ROW)
        .saturating_add(n.saturating_mul(n).saturating_mul(k).saturating_mul(8))
        .saturating_add(schur.saturating_mul(8 * 8))
}

/// An upper estimate of the memory [`solve_local`] needs on the neighbourhoods `keep`
/// whichever way its Newton systems are factored: its rows (at most
/// Σ_k Σ_{u ∈ V_k} deg(u), at `BYTES_PER_ROW`), the n·K-long vectors and the outputs'
/// layouts (n entries each). The route's own memory is counted once it is chosen
/// (`schur_route_memory`, `sparse_kkt::KktPattern::memory`).
pub fn local_memory_estimate(lp: &PrivacyLp, keep: &[Vec<u32>]) -> u64 {
    let (n, kk) = (lp.n as u64, lp.k() as u64);
    let mut deg = vec![0u64; lp.n];
    lp.pairs.iter().for_each(|&(u, _)| deg[u] += 1);
    let rows: u64 = keep
        .iter()
        .flatten()
        .map(|&u| deg[u as usize])
        .fold(0, u64::saturating_add);
    rows.saturating_mul(BYTES_PER_ROW)
        .saturating_add(n.saturating_mul(kk).saturating_mul(17 * 8))
}

/// The memory the Schur complement's route adds to [`local_memory_estimate`]: each
/// output's block inverses (|V_k|² entries, an upper bound for its components'), each of
/// the [`PARTS`] parts' block buffers, and the n×n Schur sums, the Schur complement and
/// its factor.
fn schur_route_memory(n: usize, keep: &[Vec<u32>]) -> u64 {
    let n = n as u64;
    let blocks: u64 = keep
        .iter()
        .map(|v| (v.len() as u64).saturating_mul(v.len() as u64))
        .fold(0, u64::saturating_add);
    let largest = keep.iter().map(|v| v.len() as u64).max().unwrap_or(0);
    let per_part = largest.saturating_mul(largest).saturating_mul(3);
    blocks
        .saturating_add((PARTS as u64).saturating_mul(per_part))
        .saturating_add(n.saturating_mul(n).saturating_mul(3))
        .saturating_mul(8)
}

/// Refuses `rows` privacy rows over n inputs and k outputs past [`MAX_ROWS`], with the
/// memory they would need.
fn within_row_limit(rows: u64, n: usize, k: usize) -> Result<(), LpError> {
    if rows > MAX_ROWS {
        return Err(LpError::RowLimit {
            rows,
            limit: MAX_ROWS,
            gib: memory_estimate(rows, n as u64, k as u64) >> 30,
        });
    }
    Ok(())
}

/// What [`solve`] found.
pub enum Outcome {
    /// The interior point converged to a relative gap of at most [`SOLVED_GAP`]: the
    /// mechanism and a dual of the whole LP (every row was present), both to be repaired
    /// and verified exactly by the caller like any float solver's.
    Solved(Primal, Dual),
    /// It stopped short: the rows its iterate holds nearly tight ([`NEAR_TIGHT`]), a
    /// working set to seed the lazy-row interior point with (`lp::support::solve`),
    /// and the outputs its mechanism uses ([`super::used::used_outputs`]; `None` if it
    /// stopped above `SUPPORT_GAP`). Rows it misses are added back by separation and
    /// outputs it misses by pricing, so these affect only speed. With the iterate itself,
    /// which starts the working-set solves (`solve_rows`).
    WorkingSet(Vec<Row>, Option<Vec<usize>>, Box<Warm>),
}

/// The block interior point on every privacy row, run to relative gap [`TARGET_GAP`]
/// (spec/lp.md §4.3), or, with `aim` (`mdp build pmo --gap`), until its bound and its
/// objective, or its predictor's primal objective, meet the aim
/// (`aim_met`).
pub fn solve(
    lp: &PrivacyLp,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<Outcome, LpError> {
    within_row_limit(lp.rows_total(), lp.n, lp.k())?;
    let start = Instant::now();
    let (st, it, end) = run(lp, Rows::Every, TARGET_GAP, aim, progress)?;
    let kk = st.kk;
    let rows = near_tight(&st, &it);
    if !(end.aimed || end.gap <= SOLVED_GAP && end.res_p <= SOLVED_GAP) {
        progress.note(&format!(
            "lp: the structured interior point stopped at relative gap {:.1e} (iteration {}, {:.2} s); its {} nearly tight rows seed the lazy rows",
            end.gap,
            end.iterations,
            start.elapsed().as_secs_f64(),
            rows.len()
        ));
        let used = (end.gap <= SUPPORT_GAP)
            .then(|| super::used::used_outputs_above(&mechanism(&st, &it), kk, SUPPORT_TOL));
        let warm = Warm {
            it,
            kk,
            np1: st.pairs.len(),
        };
        return Ok(Outcome::WorkingSet(rows, used, Box::new(warm)));
    }
    let (p, d) = solution(lp, &st, it, &end, rows, start, progress);
    Ok(Outcome::Solved(p, d))
}

/// The localized LP of `lp` (spec/lp.md §4.6): output k has variables for the inputs
/// `keep\[k\]` only (the others held at 0) and the privacy rows among them, solved by the
/// structured interior point with each output's own block layout, to [`TARGET_GAP`] or
/// the caller's aim. Any row duals bound the whole LP (the verifier's bound takes every
/// output's bare cost where an input has no variable), so the dual is a certificate of
/// the whole LP; the mechanism has zeros outside `keep` and is completed by the caller
/// ([`super::local::complete`]). An error when it stops short of [`SOLVED_GAP`], by the
/// verifier's bound and by Σy alike (the caller's check of the completed loss against
/// the bound then decides), or when neither way of factoring its Newton systems fits in
/// `budget` bytes with [`local_memory_estimate`] ([`LpError::OverMemory`]).
pub fn solve_local(
    lp: &PrivacyLp,
    keep: &[Vec<u32>],
    budget: u64,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<Localized, LpError> {
    let start = Instant::now();
    let (st, it, end) = run(lp, Rows::Local(keep, budget), TARGET_GAP, aim, progress)?;
    let converged = end.gap <= SOLVED_GAP || end.y_gap <= SOLVED_GAP;
    if !(end.aimed || converged && end.res_p <= SOLVED_GAP) {
        return Err(LpError::Stopped(format!(
            "the structured interior point stopped on the localized LP at relative gap {:.1e} (iteration {})",
            end.gap, end.iterations
        )));
    }
    let (entering, shortfall) = pricing(&st, &end.z);
    let rows = near_tight(&st, &it);
    let (primal, dual) = solution(lp, &st, it, &end, rows, start, progress);
    Ok(Localized {
        primal,
        dual,
        entering,
        shortfall,
    })
}

/// What [`solve_local`] found.
pub struct Localized {
    pub primal: Primal,
    pub dual: Dual,
    /// The absent variables (u, k) whose bare cost lies below input u's least reduced cost
    /// over its present ones, α_u: they price in, and the bound falls short by
    /// `shortfall` = Σ_u (α_u − min(α_u, least such cost)).
    pub entering: Vec<(u32, u32)>,
    pub shortfall: f64,
}

/// The absent variables that price in against the row duals `z` ([`Localized`]).
fn pricing(st: &Structure, z: &[f64]) -> (Vec<(u32, u32)>, f64) {
    let (n, kk) = (st.n, st.kk);
    let mut g = st.c_m.clone();
    g.par_chunks_mut(n).enumerate().for_each(|(k, gk)| {
        let zk = &z[st.rows(k)];
        for (i, &p) in st.out_rows(k).iter().enumerate() {
            let (u, v) = st.pairs[p as usize];
            gk[u as usize] += zk[i] * st.inv_c[p as usize];
            gk[v as usize] -= zk[i];
        }
    });
    let (mut entering, mut shortfall) = (vec![], 0.0);
    for u in 0..n {
        let alpha = (0..kk)
            .filter(|&k| !st.absent(k * n + u))
            .map(|k| g[k * n + u])
            .fold(f64::INFINITY, f64::min);
        let mut least = alpha;
        for k in (0..kk).filter(|&k| st.absent(k * n + u)) {
            let c = st.c_m[k * n + u];
            if c < alpha {
                entering.push((u as u32, k as u32));
                least = least.min(c);
            }
        }
        shortfall += alpha - least;
    }
    (entering, shortfall)
}

/// The privacy rows the iterate holds nearly tight ([`NEAR_TIGHT`]).
fn near_tight(st: &Structure, it: &Iterate) -> Vec<Row> {
    let mut rows = Vec::new();
    for k in 0..st.kk {
        for (r, &p) in st.rows(k).zip(st.out_rows(k)) {
            let (u, v) = st.pairs[p as usize];
            if it.s[r] < NEAR_TIGHT * it.x[k * st.n + v as usize] {
                rows.push((u, v, k as u32));
            }
        }
    }
    rows
}

/// The converged iterate as the caller's solution: its mechanism, and its best dual
/// (scaled, sparsified) with the bound it proves.
fn solution(
    lp: &PrivacyLp,
    st: &Structure,
    it: Iterate,
    end: &End,
    rows: Vec<Row>,
    start: Instant,
    progress: &dyn Progress,
) -> (Primal, Dual) {
    let (n, kk) = (st.n, st.kk);
    // The iterate's slacks and duals are no longer needed: freed before the multipliers
    // are listed (the peak that BYTES_PER_ROW covers).
    let m = mechanism(st, &it);
    drop(it);
    // The dual of row (u, v, k), scaled M[u][k]/c_dn − M[v][k] ≤ 0 here, is c_dn·γ (as
    // Clarabel's, spec/lp.md §5); rows whose constant was capped are left out (γ = 0).
    // γ scaled by 1/Σβ like β's normalization in the verifier (any γ ≥ 0 is valid).
    let scale = weight_total(st, &end.z);
    let gamma: Vec<(u32, u32, u32, f64)> = (0..kk)
        .flat_map(|k| {
            st.rows(k).zip(st.out_rows(k)).filter_map(move |(r, &p)| {
                let (u, v) = st.pairs[p as usize];
                let z = end.z[r] / scale;
                let c_up = lp.c_up[u as usize * n + v as usize];
                (z > 0.0 && c_up <= lp.cap).then(|| (u, v, k as u32, z * st.inv_c[p as usize]))
            })
        })
        .collect();
    let mut dual = Dual {
        beta: st
            .max_loss
            .then(|| end.z[st.np()..].iter().map(|z| z.max(0.0)).collect()),
        gamma,
        objective: end.lb,
        seconds: 0.0,
    };
    // Most rows are slack and their multipliers ~μ/s. Those of an input's outputs above its
    // minimum drop at no cost (`Dual::drop_above_min`); then dropping the smallest while
    // their sum stays within DUAL_BUDGET of the objective costs the bound at most that much.
    let free = dual.drop_above_min(lp);
    let (dropped, sum) = dual.sparsify(DUAL_BUDGET * end.pobj.abs());
    // The bound after the drop is at least this: the claim's tolerance (`prove`) is
    // measured from it, so the safe f64 bound is claimed and the auditor reproduces it
    // without rationals.
    dual.objective = end.lb - sum;
    progress.note(&format!(
        "lp: the structured interior point converged: relative gap {:.1e} in {} iterations ({:.2} s); {} of {} multipliers kept ({free} dropped above their input's minimum, {dropped} smallest summing to {sum:.1e})",
        end.gap,
        end.iterations,
        start.elapsed().as_secs_f64(),
        dual.gamma.len(),
        dual.gamma.len() + dropped + free
    ));
    (
        Primal {
            m,
            objective: end.pobj,
            rows,
            rounds: end.iterations,
            seconds: start.elapsed().as_secs_f64(),
        },
        dual,
    )
}

/// The LP `lp` (the whole LP restricted to its outputs `keep`) with the privacy rows `rows`
/// only, solved by the structured interior point to relative gap [`TARGET_GAP`], started
/// from `warm` (the whole LP's iterate: the lazy rounds' solve after a hand-over,
/// spec/lp.md §4.3) or cold (an LP past the every-row phase's [`MAX_ROWS`], §4.7). The
/// duals are those of `rows`, in their order (scaled as Clarabel's,
/// [`super::ipm::Solved`]); an error when it stops above [`SHORT_GAP`] or the working set
/// holds more than [`MAX_ROWS`] rows, and the reason when it stops above [`WORKING_GAP`].
pub(crate) fn solve_rows(
    lp: &PrivacyLp,
    rows: &[Row],
    warm: Option<&Warm>,
    keep: &[usize],
    progress: &dyn Progress,
) -> Result<(super::ipm::Solved, Option<String>), LpError> {
    within_row_limit(rows.len() as u64, lp.n, keep.len())?;
    let start = Instant::now();
    // Its iterations are not lazy rounds: only its summary is reported (and the
    // `MDP_BLOCK_DEBUG` notes).
    let quiet = NotesOnly(progress);
    let (st, it, end) = run(
        lp,
        Rows::Working(rows, warm, keep),
        TARGET_GAP,
        None,
        &quiet,
    )?;
    let stopped = format!(
        "the structured interior point stopped on the working set at relative gap {:.1e}, primal residual {:.1e} (iteration {})",
        end.gap, end.res_p, end.iterations
    );
    if !(end.gap <= SHORT_GAP && end.res_p <= SOLVED_GAP) {
        return Err(LpError::Stopped(stopped));
    }
    let short = (end.gap > WORKING_GAP).then_some(stopped);
    if short.is_none() {
        progress.note(&format!(
            "lp: the structured interior point solved the working set ({} rows over {} outputs) to relative gap {:.1e} in {} iterations ({:.2} s)",
            rows.len(),
            keep.len(),
            end.gap,
            end.iterations,
            start.elapsed().as_secs_f64()
        ));
    }
    let n = st.n;
    let pair_of = pair_index(&st.pairs, n);
    let scale = weight_total(&st, &end.z);
    let gamma = rows
        .iter()
        .map(|&(u, v, k)| {
            let p = pair_of[u as usize * n + v as usize];
            // `select` sorted each output's rows by pair.
            let i = st.out_rows(k as usize).partition_point(|&q| q < p);
            end.z[st.row_off[k as usize] + i] / scale * st.inv_c[p as usize]
        })
        .collect();
    let solved = super::ipm::Solved {
        m: mechanism(&st, &it),
        objective: end.pobj,
        beta: st
            .max_loss
            .then(|| end.z[st.np()..].iter().map(|z| z.max(0.0)).collect()),
        gamma,
    };
    Ok((solved, short))
}

/// A reporter that passes on another's notes only: a working set's iterations are not lazy
/// rounds ([`solve_rows`]), but its `MDP_BLOCK_DEBUG` lines are the caller's to show.
struct NotesOnly<'a>(&'a dyn Progress);

impl Progress for NotesOnly<'_> {
    fn note(&self, line: &str) {
        self.0.note(line);
    }
}

/// The iterate's mechanism, n×K row-major.
fn mechanism(st: &Structure, it: &Iterate) -> Vec<f64> {
    let (n, kk) = (st.n, st.kk);
    let mut m = vec![0.0; n * kk];
    for k in 0..kk {
        for u in 0..n {
            m[u * kk + k] = it.x[k * n + u];
        }
    }
    m
}

/// The whole LP's iterate where its structured phase stopped short ([`solve`]): the warm
/// start of the working-set solves (`solve_rows`). Its every row is interior, so any
/// working set over any outputs starts from it nearly feasible and centred (the dropped
/// rows' duals are ≈ μ/s, small on slack rows).
pub struct Warm {
    it: Iterate,
    kk: usize,
    /// Pairs of the whole LP (the privacy rows of output k, pair p, are at k·P + p).
    np1: usize,
}

#[cfg(test)]
mod tests {
    use super::dissection::dissect;
    use super::*;
    use crate::exact::Q;
    use crate::metric::{MetricKind, Space};

    /// Solve `lp` with the structured interior point, which must converge alone, and
    /// check it against Clarabel's optimum of the whole LP: its objective within 10⁻⁷, its
    /// dual's bound below that optimum and within 2·[`SOLVED_GAP`] of it.
    fn solves_alone_to_clarabels_optimum(lp: &PrivacyLp) -> Dual {
        let silent = crate::progress::Silent;
        let Outcome::Solved(p, d) = solve(lp, None, &silent).unwrap() else {
            panic!("the structured interior point did not converge alone");
        };
        let (want, _) = super::super::ipm::solve(lp, &silent).unwrap();
        let rel = |a: f64| (a - want.objective).abs() / want.objective;
        let (got, bound) = (p.objective, d.objective);
        assert!(rel(got) < 1e-7, "{got} vs {}", want.objective);
        assert!(bound <= want.objective * (1.0 + 1e-9), "{bound}");
        assert!(
            rel(bound) <= SOLVED_GAP * 2.0,
            "{bound} vs {}",
            want.objective
        );
        d
    }

    /// PMO with the prior 1 + (5u mod 7) and the cost d, pairs within η.
    fn test_pmo<'a>(space: &'a Space, eta: &Q, eps: u32, outputs: Vec<usize>) -> PrivacyLp<'a> {
        let n = space.n();
        let params = crate::mechanisms::optimal::PmoParams {
            within: Some(eta),
            prior: Some((0..n).map(|u| Q::from(1 + (u as u32 * 5) % 7)).collect()),
            cost: None,
            outputs: Some(outputs),
        };
        crate::mechanisms::optimal::pmo_lp(space, &Q::from(eps), &params, 256).unwrap()
    }

    /// 30 points on a jittered grid (deterministic), ε = 1: the structured interior point
    /// converges on its own (before L was kept in the Schur complement it stalled at a gap
    /// of ≈ 10⁻³ and handed over a working set), its objective matches Clarabel's on the
    /// whole LP, and the bound of the dual it returns is below that optimum and within
    /// [`SOLVED_GAP`] of it.
    #[test]
    fn converges_alone_to_the_lp_optimum() {
        let pts: Vec<Vec<Q>> = (0..30i64)
            .map(|i| {
                let (x, y) = (i % 6, i / 6);
                let jitter = (i * 37 % 11) - 5;
                vec![
                    Q::from_signeds(100 * x + jitter, 100),
                    Q::from_signeds(100 * y - jitter, 100),
                ]
            })
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let lp = crate::mechanisms::optimal::optimal_lp(&space, &Q::from(1u32), 256);
        let d = solves_alone_to_clarabels_optimum(&lp);
        assert!(d.gamma.iter().all(|g| g.3 > 0.0));
        let beta = d.beta.unwrap();
        assert!(beta.iter().all(|b| *b >= 0.0) && beta.iter().sum::<f64>() > 0.0);
    }

    /// A PMO LP whose pairs' graph has four components (three clusters within η = 1 of
    /// one another and one lone point, prior and costs uneven so no component is a copy of
    /// another): every B_k is factorized component by component, and the structured
    /// interior point must still reach Clarabel's optimum of the whole LP, with a dual
    /// bound below it and within [`SOLVED_GAP`]. Factorizing one component with another's
    /// inputs, or dropping a component from the Schur complement, moves the optimum.
    #[test]
    fn components_factorized_apart_give_the_whole_optimum() {
        let mut pts = vec![];
        for (cx, cy, m) in [(0i64, 0i64, 7i64), (500, 0, 5), (0, 500, 6)] {
            for i in 0..m {
                pts.push(vec![
                    Q::from_signeds(100 * cx + 30 * (i % 3) + (i * 7 % 5), 100),
                    Q::from_signeds(100 * cy + 30 * (i / 3) - (i * 3 % 4), 100),
                ]);
            }
        }
        pts.push(vec![Q::from(900u32), Q::from(900u32)]);
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let lp = test_pmo(&space, &Q::from(1u32), 2, vec![0, 3, 8, 12, 15, 18]);
        let comp = crate::metric::components(space.n(), &lp.pairs);
        assert_eq!(comp.iter().max(), Some(&3), "four components expected");
        solves_alone_to_clarabels_optimum(&lp);
    }

    /// A PMO LP on a jittered 10×10 grid with η = 1.5 (each point's pairs are its grid
    /// neighbours and diagonals): one component of 100 inputs, which [`dissect`] splits
    /// along a level of its BFS from a corner, so its inputs are reordered [P1, P2, S] and
    /// every B_k is inverted by blocks. The structured interior point must still reach
    /// Clarabel's optimum of the whole LP with a dual bound within [`SOLVED_GAP`].
    #[test]
    fn dissected_blocks_give_the_whole_optimum() {
        let pts: Vec<Vec<Q>> = (0..100i64)
            .map(|i| {
                let (x, y, j) = (i % 10, i / 10, (i * 37 % 11) - 5);
                vec![
                    Q::from_signeds(100 * x + j, 100),
                    Q::from_signeds(100 * y - j, 100),
                ]
            })
            .collect();
        let (n, space) = (
            pts.len(),
            Space::from_points(MetricKind::Euclidean, pts, None).unwrap(),
        );
        let lp = test_pmo(
            &space,
            &Q::from_signeds(3, 2),
            1,
            vec![0, 9, 22, 45, 54, 77, 90, 99],
        );
        let mut adj = vec![vec![]; n];
        for &(u, v) in &lp.pairs {
            adj[u].push(v as u32);
            adj[v].push(u as u32);
        }
        let all: Vec<u32> = (0..n as u32).collect();
        let (order, split) = dissect(&all, &adj);
        let (p1, p2) = split.top();
        assert!(p1 > 0 && p2 > 0, "the grid is dissected");
        assert_ne!(order, all, "and its inputs reordered");
        solves_alone_to_clarabels_optimum(&lp);
    }

    /// `Dual::drop_above_min` on Clarabel's dual of the same grid LP: it drops rows (most
    /// of an input's outputs are above its minimum) and the bound Σ_u min_k T_(u,k)
    /// (normalized weights, as the verifier) does not fall.
    #[test]
    fn dropping_rows_above_the_minimum_keeps_the_bound() {
        let pts: Vec<Vec<Q>> = (0..20i64)
            .map(|i| vec![Q::from_signeds(i % 5, 1), Q::from_signeds(i / 5 + i % 3, 2)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let lp = crate::mechanisms::optimal::optimal_lp(&space, &Q::from(1u32), 256);
        let (_, mut d) = super::super::ipm::solve(&lp, &crate::progress::Silent).unwrap();
        let (n, k) = (lp.n, lp.k());
        let bound = |d: &Dual| {
            let b = d.beta.as_ref().unwrap();
            let total: f64 = b.iter().map(|x| x.max(0.0)).sum();
            let mut t: Vec<f64> = (0..n * k)
                .map(|j| b[j / k].max(0.0) / total * lp.cost_dn[j])
                .collect();
            for &(u, v, kk, g) in &d.gamma {
                let (u, v, kk) = (u as usize, v as usize, kk as usize);
                t[u * k + kk] += g;
                t[v * k + kk] -= lp.c_up[u * n + v] * g;
            }
            t.chunks(k)
                .map(|r| r.iter().cloned().fold(f64::INFINITY, f64::min))
                .sum::<f64>()
        };
        let (before, rows) = (bound(&d), d.gamma.len());
        let dropped = d.drop_above_min(&lp);
        let after = bound(&d);
        assert!(
            dropped > 0 && d.gamma.len() == rows - dropped,
            "{dropped} of {rows}"
        );
        assert!(after >= before - 1e-12 * before.abs(), "{after} < {before}");
    }
}
