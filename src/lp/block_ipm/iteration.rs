//! The structured interior point's iteration (`spec/lp.md` §4.3): Mehrotra's
//! predictor–corrector on every row of the LP, on a working set started from the whole
//! LP's iterate, or on a localized LP ([`run`], [`Rows`], [`warm_start`]); when it stops
//! (convergence, the caller's aim, the hand-over to the lazy rounds, lost accuracy:
//! [`End`]); the verifier's bound it measures and keeps the best of ([`bound`]); and the
//! privacy rows' step lengths and updates, recomputed row by row along each direction
//! ([`row_steps`], [`row_update`]).

use super::newton::{direction, factor, refine_tol, row_step, Target, Work};
use super::sparse_kkt::KktPattern;
use super::sparse_schur::SchurPattern;
use super::structure::{local_structure, pair_index, select, Iterate, Layout, Structure};
use super::{Warm, DUAL_BUDGET, PARTS, SOLVED_GAP, WORKING_GAP};
use crate::lp::model::{Objective, PrivacyLp};
use crate::lp::vector::{axpy, dot, max_step, sum_by};
use crate::lp::Row;
use crate::lp::{LpError, Round};
use crate::progress::Progress;
use rayon::prelude::*;
use std::time::Instant;

/// Largest number of iterations (the iterate reached is used as it is).
const MAX_ITER: usize = 400;
/// Relative tolerance on the gap and the residuals.
const TOL: f64 = 1e-10;
/// With an aim (a certified relative gap the caller asks for, `mdp build pmo --gap`),
/// [`solve`](super::solve) stops once its bound is within the aim less this of its
/// objective (both relative, [`aim_met`]): the dual's sparsification ([`DUAL_BUDGET`]) and
/// as much again for the exact repair's uniform mix (≈ 10⁻¹⁵ on Rome500). An aim at or
/// below it is never met early.
const AIM_RESERVE: f64 = 2.0 * DUAL_BUDGET;

/// Whether a primal objective `pobj` and a verifier bound `lb` meet the aim `a`.
pub(super) fn aim_met(pobj: f64, lb: f64, a: f64) -> bool {
    pobj - lb <= (a - AIM_RESERVE) * pobj.abs()
}
/// Past [`HANDOVER_ITER`] iterations the interior point on every row stops as soon as its
/// relative gap is below [`HANDOVER_GAP`] and hands its iterate, working set and support to
/// the lazy rounds, each of which it then solves itself, started from that iterate
/// ([`solve_rows`](super::solve_rows); Clarabel solves a round only if it stops above
/// [`WORKING_GAP`]). On Rome road nodes the whole LP needs ~190 iterations (n = 100) and
/// ~380 (n = 200) to reach 10⁻⁷, while a working set (≈ 5 % of the rows, over the used
/// outputs) started from the 10⁻³ iterate converges in 50–120 much cheaper iterations:
/// n = 100 7.7–8.0 s against 9.5–9.8 s handing over at 10⁻⁴, and 12.8 s with Clarabel's
/// rounds; n = 200 130 s against 260 s (spec/lp.md §4.3). LPs that converge within
/// [`HANDOVER_ITER`] iterations (PMO on Rome500 at ε = 10: 42) are solved whole.
const HANDOVER_ITER: usize = 60;
pub(super) const HANDOVER_GAP: f64 = 1e-3;
/// The expected loss (PMO) hands over to Clarabel's lazy rounds instead (spec/lp.md
/// §4.3), which cost far more than the structured iterations: only past this many
/// iterations ...
const HANDOVER_ITER_EXPECTED: usize = 100;
/// ... and below this gap (session 12's rule). Under the max loss's rule, 2 000 Rome road
/// nodes (ε = 10/km, η = 2 km; 76 iterations to converge) handed 7.98 million rows to
/// Clarabel at iteration 60, gap 2.5·10⁻⁶.
const HANDOVER_GAP_EXPECTED: f64 = 1e-4;
/// The starting duals are this over n (slacks and x start at 1/K).
const START_DUAL: f64 = 1.0;
/// The iteration stops when refinement leaves a relative residual above this ...
const ACCURACY: f64 = 1e-6;
/// ... or above this on a working set ([`solve_rows`](super::solve_rows)): on Rome n = 200
/// its last iterations need 10⁻⁴–10⁻³, and stopping at 10⁻⁶ left a relative gap of 1.2·10⁻⁷
/// against 6.4·10⁻⁸ (spec/lp.md §4.3). The directions only steer: the bound kept is the one
/// the verifier proves from the duals reached.
const WORKING_ACCURACY: f64 = 1e-3;
/// A working set's iteration within [`WORKING_GAP`] stops once its bound has not improved
/// for this many iterations (and gives up after three times as many once it is nearly
/// feasible, primal residual ≤ [`SOLVED_GAP`], or after ten times as many in any case:
/// started from the hand-over's iterate without
/// the unused outputs' mass, it is ≈ 10⁻¹ infeasible while the warm duals' bound is
/// already near its best, and on planar ε = 2 at n = 300 it was given up at iteration
/// 31–35, residual 0.11, and Clarabel took 200–300 s over each such round; session 25,
/// `benches/reports/optmech_matrix_n300_s21.md`).
const STALL: usize = 10;

/// Where [`run`] stopped: the returned iterate's objectives, relative gap and primal
/// residual, and the iterations taken.
pub(super) struct End {
    pub(super) pobj: f64,
    /// The verifier's bound Σ_u α_u ([`bound`]) of `z`, in floats (an estimate: the exact
    /// check decides).
    pub(super) lb: f64,
    /// Relative gap between `pobj` and `lb`.
    pub(super) gap: f64,
    pub(super) res_p: f64,
    pub(super) iterations: usize,
    /// The row duals (privacy rows, then loss rows) of the iterate with the best `lb`.
    pub(super) z: Vec<f64>,
    /// It stopped at the caller's aim ([`solve`](super::solve)'s `aim`), short of
    /// [`TARGET_GAP`](super::TARGET_GAP).
    pub(super) aimed: bool,
    /// The relative gap between the objective and the row-sum duals' Σy (converged in y
    /// while the verifier's bound may lag).
    pub(super) y_gap: f64,
}

/// The total the verifier normalizes the objective weights by: Σβ, β the loss rows' duals
/// in `z` (negatives as 0), for the max loss; 1 for an expected loss (the prior's).
pub(super) fn weight_total(st: &Structure, z: &[f64]) -> f64 {
    if st.max_loss {
        z[st.np()..].iter().map(|z| z.max(0.0)).sum()
    } else {
        1.0
    }
}

/// The bound the `lp_dual` verifier would compute from the row duals (spec/lp.md §5),
/// in floats: with S = Σβ (max loss; 1 for an expected loss) and g = A_Iᵀz + c the
/// reduced costs before the row-sum duals (g_(u,k) = w_u c(u,k) + Σγ − Σ c·γ, scaled by
/// S), Σ_u min_k g_(u,k) / S. `g` is c + A_Iᵀz, from r_d = g − y − w.
pub(super) fn bound(st: &Structure, it: &Iterate, rd: &[f64]) -> f64 {
    let (n, kk) = (st.n, st.kk);
    let scale = weight_total(st, &it.z);
    if scale.is_nan() || scale <= 0.0 {
        return f64::NEG_INFINITY;
    }
    (0..n)
        .map(|u| {
            (0..kk)
                .map(|k| {
                    let j = k * n + u;
                    if st.absent(j) {
                        // No rows and no variable: the verifier's bare cost.
                        st.c_m[j]
                    } else {
                        rd[j] + it.y[u] + it.w[j]
                    }
                })
                .fold(f64::INFINITY, f64::min)
        })
        .sum::<f64>()
        / scale
}

/// The starting iterate of `st` (a working set over the outputs `keep` of the whole LP of
/// `warm`) taken from `warm`.
/// The localized LP's start (issue 56): each input's unit of mass over its present
/// outputs, x[u][k] ∝ e^{−ε·cost(u, k)/4}, so the row sums hold; each privacy row's slack
/// x_v − x_u/c is then positive where the costs are distances (the ratio of two rows'
/// entries stays within e^{ε·d/2} < c, away from a neighbourhood's edge), and is floored
/// at 10⁻³·x_v elsewhere; w = μ/x and z = μ/s at the default start's μ. The uniform start
/// 1/K left the row sums at |{k : u ∈ V_k}|/K (0.05 on 10⁴ Rome road nodes with K = 500)
/// and the first 20–30 steps near 0.
fn localized_start(st: &Structure, eps: f64, it: &mut Iterate) {
    let (n, kk) = (st.n, st.kk);
    let present = st.present.as_ref().expect("a localized LP");
    let mu = START_DUAL / st.nv_present().max(1) as f64;
    let mut sum = vec![0.0; n];
    for k in 0..kk {
        for u in 0..n {
            let j = k * n + u;
            it.x[j] = if present[j] {
                (-0.25 * eps * st.cost[u * kk + k]).exp().max(1e-300)
            } else {
                0.0
            };
            sum[u] += it.x[j];
        }
    }
    for k in 0..kk {
        for u in 0..n {
            let j = k * n + u;
            if present[j] {
                it.x[j] /= sum[u];
                it.w[j] = mu / it.x[j];
            } else {
                it.w[j] = 0.0;
            }
        }
        let xk = &it.x[k * n..(k + 1) * n];
        for (i, &p) in st.rows(k).zip(st.out_rows(k)) {
            let (_, v) = st.pairs[p as usize];
            let slack = -st.ax(xk, p as usize);
            it.s[i] = slack.max(1e-3 * xk[v as usize]).max(1e-300);
            it.z[i] = mu / it.s[i];
        }
    }
}

fn warm_start(st: &Structure, warm: &Warm, keep: &[usize]) -> Iterate {
    let (n, w) = (st.n, &warm.it);
    let np = st.np();
    let mut it = Iterate {
        x: Vec::with_capacity(st.nv()),
        y: w.y.clone(),
        w: Vec::with_capacity(st.nv()),
        s: vec![0.0; np],
        z: vec![0.0; np],
    };
    for &k in keep {
        it.x.extend_from_slice(&w.x[k * n..(k + 1) * n]);
        it.w.extend_from_slice(&w.w[k * n..(k + 1) * n]);
    }
    if st.max_loss {
        it.x.push(w.x[n * warm.kk]);
        it.w.push(w.w[n * warm.kk]);
    }
    for (j, &k) in keep.iter().enumerate() {
        for (r, &p) in st.rows(j).zip(st.out_rows(j)) {
            it.s[r] = w.s[k * warm.np1 + p as usize];
            it.z[r] = w.z[k * warm.np1 + p as usize];
        }
    }
    let np_full = warm.kk * warm.np1;
    it.s.extend_from_slice(&w.s[np_full..]);
    it.z.extend_from_slice(&w.z[np_full..]);
    it
}

/// Which privacy rows (and variables) [`run`] solves with.
#[derive(Clone, Copy)]
pub(super) enum Rows<'a> {
    /// The whole LP: every row, every variable.
    Every,
    /// A working set over the outputs `keep` of the whole LP, started from its iterate
    /// when given, else cold like [`Rows::Every`] (an LP over the every-row phase's
    /// limit, spec/lp.md §4.7).
    Working(&'a [Row], Option<&'a Warm>, &'a [usize]),
    /// A localized LP ([`solve_local`](super::solve_local)): output k has variables for the
    /// inputs `keep\[k\]` only, and the rows among them; the memory budget in bytes its
    /// factorization's route must fit in (with the rest of the LP).
    Local(&'a [Vec<u32>], u64),
}

/// How a localized LP's Newton systems are factored (spec/lp.md §4.10): the whole reduced
/// system as one sparse LDLᵀ ([`KktPattern`]) where its factor stores fewer entries than
/// the block inverses of the other route, else the blocks inverted and their Schur
/// complement, sparse where that pays ([`SchurPattern`]) or dense; `MDP_SCHUR=kkt`,
/// `sparse` or `dense` forces one (for the benchmarks that compare them). The route must
/// fit in `budget` bytes with the rest of the LP ([`super::local_memory_estimate`]), else
/// [`LpError::OverMemory`].
fn choose_route(
    st: &mut Structure,
    lp: &PrivacyLp,
    keep: &[Vec<u32>],
    budget: u64,
    progress: &dyn Progress,
) -> Result<(), LpError> {
    let n = st.n;
    let base = super::local_memory_estimate(lp, keep);
    let schur_need = base.saturating_add(super::schur_route_memory(n, keep));
    let forced = KktPattern::forced();
    let t = Instant::now();
    if forced != Some(false) {
        if let Some(p) = KktPattern::of(st) {
            let need = base.saturating_add(p.memory());
            let inverses: usize = st.layouts.iter().map(Layout::total).sum();
            let pays =
                need <= budget && forced.unwrap_or(p.factor_len < inverses || schur_need > budget);
            progress.note(&format!(
                "lp: the reduced system ({} unknowns, {} entries in its lower triangle): its LDLᵀ factor stores {} entries against the block inverses' {inverses}, about {} MiB in all ({:.1} s): {}",
                p.dim(),
                p.pattern_nnz,
                p.factor_len,
                need >> 20,
                t.elapsed().as_secs_f64(),
                if pays { "factored whole" } else { "not used" }
            ));
            if pays {
                st.kkt = Some(p);
                return Ok(());
            }
        }
    }
    if schur_need > budget {
        return Err(LpError::OverMemory {
            need_mib: schur_need >> 20,
            budget_mib: budget >> 20,
        });
    }
    st.schur = SchurPattern::of(st).filter(|p| {
        let pays = p.pays();
        progress.note(&format!(
            "Schur complement {n}×{n}: {} entries in its lower triangle ({:.1} %), its Cholesky factor after AMD stored in {} ({:.1} % of n(n+1)/2): factored {}",
            p.pattern_nnz,
            100.0 * p.pattern_nnz as f64 / (n as f64 * (n as f64 + 1.0) / 2.0),
            p.factor_len,
            100.0 * p.factor_len as f64 / (n as f64 * (n as f64 + 1.0) / 2.0),
            if pays { "sparse" } else { "dense" }
        ));
        pays
    });
    Ok(())
}

/// The interior point loop on every privacy row of `lp`, or on the working set `rows`
/// (`lp` the whole LP's restriction to the outputs `keep`) started from `warm` (the whole
/// LP's iterate) or cold; stops at convergence, at relative gap `target`, on every row also at `aim`
/// ([`solve`](super::solve)) or the hand-over, or when the reduced system loses accuracy
/// (then the last good iterate is returned). Every fifth iteration is a round on
/// `progress`; with `MDP_BLOCK_DEBUG` set, every iteration's measurements are notes on it.
pub(super) fn run(
    lp: &PrivacyLp,
    rows: Rows,
    target: f64,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<(Structure, Iterate, End), LpError> {
    let start = Instant::now();
    let (n, kk) = (lp.n, lp.k());
    let max_loss = lp.objective == Objective::MaxLoss;
    let pairs: Vec<(u32, u32)> = lp
        .pairs
        .iter()
        .map(|&(u, v)| (u as u32, v as u32))
        .collect();
    let inv_c: Vec<f64> = lp
        .pairs
        .iter()
        .map(|&(u, v)| 1.0 / lp.c_dn[u * n + v])
        .collect();
    let mut c_m = vec![0.0; n * kk];
    if !max_loss {
        for u in 0..n {
            for k in 0..kk {
                c_m[k * n + u] = lp.prior_f64(u) * lp.cost_dn[u * kk + k];
            }
        }
    }
    let debug = std::env::var_os("MDP_BLOCK_DEBUG").is_some();
    let np1 = pairs.len();
    let whole = || {
        (
            vec![Layout::new(n, None, &lp.pairs, debug.then_some(progress))],
            vec![0; kk],
            None,
        )
    };
    let (sel, row_off, (layouts, lay, present)) = match rows {
        Rows::Every => (None, (0..=kk).map(|k| k * np1).collect(), whole()),
        Rows::Working(rows, _, _) => {
            let (sel, row_off) = select(rows, kk, n, &pair_index(&pairs, n));
            (Some(sel), row_off, whole())
        }
        Rows::Local(keep, _) => {
            let (sel, row_off, layouts, present) = local_structure(lp, keep);
            let lay = (0..kk as u32).collect();
            (Some(sel), row_off, (layouts, lay, Some(present)))
        }
    };
    let mut st = Structure {
        n,
        kk,
        max_loss,
        pairs,
        layouts,
        lay,
        present,
        inv_c,
        sel,
        every: (0..np1 as u32).collect(),
        row_off,
        cost: lp.cost_dn.clone(),
        c_m,
        schur: None,
        kkt: None,
    };
    if let (Rows::Local(keep, budget), false) = (rows, max_loss) {
        choose_route(&mut st, lp, keep, budget, progress)?;
    }
    let (nv, np) = (st.nv(), st.np());
    let nv_present = st.nv_present();
    // Each part's block buffers ([`PARTS`], a constant: the sums do not depend on the
    // number of threads), reused by every iteration (fresh ones per rayon job cost their
    // zeroing: ≈ 2 % of the time on Rome500).
    let pool: Vec<std::sync::Mutex<Work>> = (0..PARTS)
        .map(|_| {
            std::sync::Mutex::new(if st.kkt.is_some() {
                Work::new(0, 0, 0)
            } else {
                Work::for_structure(&st)
            })
        })
        .collect();
    // A working set's directions may be less accurate (below).
    let working = matches!(rows, Rows::Working(..));
    let accuracy = if working { WORKING_ACCURACY } else { ACCURACY };
    let nl = if max_loss { n } else { 0 };
    let ni = np + nl;
    let (handover_iter, handover_gap) = if max_loss {
        (HANDOVER_ITER, HANDOVER_GAP)
    } else {
        (HANDOVER_ITER_EXPECTED, HANDOVER_GAP_EXPECTED)
    };
    // Scale: costs up to `cmax`.
    let cmax = lp.cost_dn.iter().cloned().fold(0.0, f64::max).max(1e-300);
    // Start: the uniform mechanism, L above its loss, slacks and duals of order 1; or the
    // whole LP's iterate.
    let mut it = Iterate {
        x: vec![1.0 / kk as f64; nv],
        y: vec![0.0; n],
        w: vec![START_DUAL / n as f64; nv],
        s: vec![1.0 / kk as f64; ni],
        z: vec![START_DUAL / n as f64; ni],
    };
    if let Rows::Working(_, Some(warm), keep) = rows {
        it = warm_start(&st, warm, keep);
    } else if st.present.is_some() {
        localized_start(&st, crate::exact::f64_nearest(&lp.eps), &mut it);
    } else if max_loss {
        it.x[n * kk] = cmax;
        for u in 0..n {
            it.z[np + u] = 1.0 / n as f64;
            it.s[np + u] = cmax;
        }
        it.w[n * kk] = 1.0 / cmax;
    }
    // The row-length arrays are s, z (in the iterate) and θ = z/s, reused by every
    // iteration (at n = 200 each is 64 MB, and fresh ones cost their page faults every
    // time); everything else a privacy row needs is recomputed from n·K-long vectors in
    // the pass that needs it ([`Target`], [`row_step`]).
    let mut theta = vec![0.0; ni];
    let mut rd = vec![0.0; nv];
    let mut end = End {
        pobj: f64::NAN,
        lb: f64::NEG_INFINITY,
        gap: f64::INFINITY,
        res_p: f64::INFINITY,
        iterations: 0,
        z: vec![],
        aimed: false,
        y_gap: f64::INFINITY,
    };
    // Whether `end` describes the current iterate (not when MAX_ITER ran out after a step).
    let mut measured = false;
    // The iteration whose bound is `end.lb`.
    let mut improved = 0;
    // The previous iteration's block inverses, whose memory the next factorization reuses.
    let mut spare: Option<Vec<Vec<f64>>> = None;
    for iter in 0..MAX_ITER {
        // r_d = c + A_Iᵀ z − A_Eᵀ y − w. The privacy rows' pass (one per output) adds their
        // part of A_Iᵀ z and gives their largest primal residual |A_I x + s|, their Σ s·z
        // and θ = z/s.
        rd.par_iter_mut().enumerate().for_each(|(j, r)| {
            let c = if j < n * kk { st.c_m[j] } else { 1.0 };
            let y = if j < n * kk { it.y[j % n] } else { 0.0 };
            *r = if st.absent(j) { 0.0 } else { c - y - it.w[j] };
        });
        let (res_pi, sz_p) = if np > 0 {
            rd[..n * kk]
                .par_chunks_mut(n)
                .zip(st.by_output(&mut theta[..np]))
                .enumerate()
                .map(|(k, (gk, th))| {
                    let xk = &it.x[k * n..(k + 1) * n];
                    let (sk, zk) = (&it.s[st.rows(k)], &it.z[st.rows(k)]);
                    let (mut m, mut sz) = (0.0f64, 0.0);
                    for (i, &p) in st.out_rows(k).iter().enumerate() {
                        let (p, (s, z)) = (p as usize, (sk[i], zk[i]));
                        let (u, v) = st.pairs[p];
                        m = m.max((st.ax(xk, p) + s).abs());
                        sz += s * z;
                        th[i] = z / s;
                        gk[u as usize] += z * st.inv_c[p];
                        gk[v as usize] -= z;
                    }
                    (m, sz)
                })
                // Collected in output order and added in that order (reproducible).
                .collect::<Vec<(f64, f64)>>()
                .into_iter()
                .fold((0.0f64, 0.0f64), |a, b| (a.0.max(b.0), a.1 + b.1))
        } else {
            (0.0, 0.0)
        };
        // The loss rows (n of them, max loss only): residual r_p, θ and A_Iᵀ z explicitly.
        let mut rp_l = vec![0.0; nl];
        if max_loss {
            st.loss_rows(&it.x, &mut rp_l);
            for u in 0..n {
                rp_l[u] += it.s[np + u];
                theta[np + u] = it.z[np + u] / it.s[np + u];
            }
            st.loss_rows_t(&it.z[np..], &mut rd);
        }
        let mut rpe = st.row_sums(&it.x);
        rpe.iter_mut().for_each(|r| *r -= 1.0);
        let pobj: f64 = if max_loss {
            it.x[n * kk]
        } else {
            st.c_m.iter().zip(&it.x).map(|(a, b)| a * b).sum()
        };
        let dobj: f64 = it.y.iter().sum();
        let mu = (sz_p
            + it.s[np..]
                .iter()
                .zip(&it.z[np..])
                .map(|(a, b)| a * b)
                .sum::<f64>()
            + dot(&it.x, &it.w))
            / (ni + nv_present) as f64;
        let res_p = rp_l.iter().chain(&rpe).fold(res_pi, |m, v| m.max(v.abs()));
        let res_d = rd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let gap = (pobj - dobj).abs() / (1.0 + pobj.abs());
        end.y_gap = gap;
        // Near the optimum the dual residual can grow while the primal settles: the dual
        // kept is the one whose verifier bound is best (spec/lp.md §4.3).
        let lb = bound(&st, &it, &rd);
        if lb > end.lb {
            end.lb = lb;
            end.z.clone_from(&it.z);
            improved = iter;
        }
        end.pobj = pobj;
        end.res_p = res_p;
        end.iterations = iter;
        // |objective − bound|: a bound above the objective (seen at −0.4 on a working set
        // warm-started from a far iterate, 2026-11-27) is no convergence, only noise near 0.
        end.gap = (pobj - end.lb).abs() / (1.0 + pobj.abs());
        measured = true;
        // The caller's aim: the verifier's bound within the aim of the objective, relative
        // to it (a certified gap, unlike `gap`'s 1 + |objective|), on a nearly feasible
        // iterate.
        end.aimed =
            !working && aim.is_some_and(|a| aim_met(pobj, end.lb, a) && res_p <= SOLVED_GAP);
        if end.aimed
            || end.gap <= target && res_p <= target
            || (matches!(rows, Rows::Every) && iter >= handover_iter && end.gap <= handover_gap)
        {
            break;
        }
        if iter % 5 == 0 {
            progress.round(&Round {
                round: iter,
                rows: np,
                added: 0,
                objective: pobj,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        if std::env::var_os("MDP_BLOCK_DEBUG").is_some() {
            let xmin = (0..nv)
                .filter(|&j| !st.absent(j))
                .map(|j| it.x[j])
                .fold(f64::INFINITY, f64::min);
            let smin = it.s.par_iter().cloned().reduce(|| f64::INFINITY, f64::min);
            progress.note(&format!("it {iter}: pobj {pobj:.12} dobj {dobj:.12} gap {gap:.2e} mu {mu:.2e} rp {res_p:.2e} rd {res_d:.2e} xmin {xmin:.2e} smin {smin:.2e}"));
        }
        if gap < TOL && res_p < TOL && res_d < TOL * (1.0 + 1.0 / cmax) {
            break;
        }
        // Converged in y; on a working set, once the verifier's bound has stopped
        // improving instead (its dual residual lags: Rome n = 200 reached a y-gap of
        // 5·10⁻¹⁰ with the bound's gap at 6.4·10⁻⁸).
        if !working && gap < target && res_p < 1e-6 && res_d < 1e-6
            || working && end.gap <= WORKING_GAP && iter >= improved + STALL
            || working && iter >= improved + 3 * STALL && res_p <= SOLVED_GAP
            || working && iter >= improved + 10 * STALL
        {
            break;
        }
        if !pobj.is_finite() || !dobj.is_finite() {
            return Err(LpError::Numerical(
                "block interior point: non-finite iterate".into(),
            ));
        }
        let t_f = Instant::now();
        let f = factor(&st, &it, &theta, spare.take(), &pool)?;
        let t_f = t_f.elapsed().as_secs_f64();
        let t_blocks = f.seconds_blocks;
        let (s_l, z_l) = (&it.s[np..], &it.z[np..]);
        // Predictor (affine) direction.
        let rsz_l: Vec<f64> = s_l.iter().zip(z_l).map(|(s, z)| s * z).collect();
        let rxw_aff: Vec<f64> = it.x.iter().zip(&it.w).map(|(x, w)| x * w).collect();
        let ta = Target::Affine;
        let tol = refine_tol(gap, max_loss);
        let aff = direction(
            &st, &it, &f, &theta, &rd, &rpe, &rp_l, &rsz_l, ta, &rxw_aff, tol, accuracy,
        )?;
        if aff.accuracy > accuracy {
            break;
        }
        let (sp, zp) = row_steps(&st, &it, ta, &aff.dx);
        let ap = max_step(&it.x, &aff.dx)
            .min(max_step(s_l, &aff.ds_l))
            .min(sp)
            .min(1.0);
        let ad = max_step(&it.w, &aff.dw)
            .min(max_step(z_l, &aff.dz_l))
            .min(zp)
            .min(1.0);
        // The caller's aim, with the predictor's primal point: its step lowers the loss
        // more than the centred one (which lags the dual near the end: Rome500 at iteration
        // 37, 9.4·10⁻⁷ above the optimum against the dual's 1.6·10⁻⁷ below), keeps x, s ≥ 0
        // and scales the primal residual by 1 − α. If the aim is met there, the iterate
        // takes that primal step only and the run stops (expected loss, every row).
        // The step factor (fraction of the way to the boundary) of this iteration's steps.
        let eta = 0.995f64.max(1.0 - mu).min(0.9999);
        if let Some(a) = aim.filter(|_| !working && !max_loss && res_p <= SOLVED_GAP) {
            let step = eta * ap;
            let dobj: f64 = dot(&st.c_m, &aff.dx);
            let pobj_aff = pobj + step * dobj;
            if pobj_aff < pobj && aim_met(pobj_aff, end.lb, a) {
                row_update(&st, &mut it, ta, &aff.dx, step, 0.0);
                axpy(&mut it.x, &aff.dx, step);
                end.pobj = pobj_aff;
                end.gap = (pobj_aff - end.lb).abs() / (1.0 + pobj_aff.abs());
                end.aimed = true;
                break;
            }
        }
        let mu_aff = (row_complementarity(&st, &it, ta, &aff.dx, ap, ad)
            + complementarity(s_l, &aff.ds_l, z_l, &aff.dz_l, ap, ad)
            + complementarity(&it.x, &aff.dx, &it.w, &aff.dw, ap, ad))
            / (ni + nv_present) as f64;
        let sigma = (mu_aff / mu).powi(3).clamp(0.0, 1.0);
        // Corrector: r_sz = S z + ΔS_a Δz_a − σμ (the privacy rows' recomputed per row).
        let sigma_mu = sigma * mu;
        let rsz_l: Vec<f64> = (0..nl)
            .map(|u| s_l[u] * z_l[u] + aff.ds_l[u] * aff.dz_l[u] - sigma_mu)
            .collect();
        let rxw: Vec<f64> = (0..nv)
            .into_par_iter()
            .map(|j| {
                if st.absent(j) {
                    0.0
                } else {
                    it.x[j] * it.w[j] + aff.dx[j] * aff.dw[j] - sigma_mu
                }
            })
            .collect();
        let tc = Target::Corrector {
            dx: &aff.dx,
            sigma_mu,
        };
        let d = direction(
            &st, &it, &f, &theta, &rd, &rpe, &rp_l, &rsz_l, tc, &rxw, tol, accuracy,
        )?;
        if d.accuracy > accuracy {
            break;
        }
        let (sp, zp) = row_steps(&st, &it, tc, &d.dx);
        let (xp, sp_l) = (max_step(&it.x, &d.dx), max_step(s_l, &d.ds_l));
        let (wp, zp_l) = (max_step(&it.w, &d.dw), max_step(z_l, &d.dz_l));
        let ap = (eta * xp.min(sp).min(sp_l)).min(1.0);
        let ad = (eta * wp.min(zp).min(zp_l)).min(1.0);
        if std::env::var_os("MDP_BLOCK_DEBUG").is_some() {
            progress.note(&format!(
                "  sigma {sigma:.2e} ap {ap:.3} ad {ad:.3} (x {xp:.3} s {:.3} w {wp:.3} z {:.3}) factor {t_f:.3} s (blocks {t_blocks:.3} s)",
                sp.min(sp_l),
                zp.min(zp_l)
            ));
        }
        // The rows first: their Δs, Δz are recomputed from the current x.
        row_update(&st, &mut it, tc, &d.dx, ap, ad);
        axpy(&mut it.s[np..], &d.ds_l, ap);
        axpy(&mut it.z[np..], &d.dz_l, ad);
        axpy(&mut it.x, &d.dx, ap);
        axpy(&mut it.y, &d.dy, ad);
        axpy(&mut it.w, &d.dw, ad);
        measured = false;
        spare = Some(f.inv);
    }
    if !measured {
        end.gap = f64::INFINITY;
    }
    Ok((st, it, end))
}

/// Fold `f(acc, s, z, Δs, Δz)` over the privacy rows along the direction Δx = `dx` with
/// target `t`, one pass per output in parallel.
fn fold_rows<A, F, C>(st: &Structure, it: &Iterate, t: Target, dx: &[f64], id: A, f: F, c: C) -> A
where
    A: Copy + Send + Sync,
    F: Fn(A, f64, f64, f64, f64) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let n = st.n;
    if st.np() == 0 {
        return id;
    }
    (0..st.kk)
        .into_par_iter()
        .map(|k| {
            let (xk, dxk) = (&it.x[k * n..(k + 1) * n], &dx[k * n..(k + 1) * n]);
            let (sk, zk) = (&it.s[st.rows(k)], &it.z[st.rows(k)]);
            st.out_rows(k).iter().enumerate().fold(id, |a, (i, &p)| {
                let (ds, dz) = row_step(st, t, k, p as usize, xk, dxk, sk[i], zk[i]);
                f(a, sk[i], zk[i], ds, dz)
            })
        })
        // Collected in output order and combined in that order (reproducible).
        .collect::<Vec<A>>()
        .into_iter()
        .fold(id, &c)
}

/// The largest steps the privacy rows allow along Δx with target `t`: (α_p with
/// s + α_pΔs ≥ 0, α_d with z + α_dΔz ≥ 0), ∞ where nothing decreases.
fn row_steps(st: &Structure, it: &Iterate, t: Target, dx: &[f64]) -> (f64, f64) {
    fold_rows(
        st,
        it,
        t,
        dx,
        (f64::INFINITY, f64::INFINITY),
        |(p, d), s, z, ds, dz| {
            (
                if ds < 0.0 { p.min(-s / ds) } else { p },
                if dz < 0.0 { d.min(-z / dz) } else { d },
            )
        },
        |a, b| (a.0.min(b.0), a.1.min(b.1)),
    )
}

/// Σ (s + α_pΔs)(z + α_dΔz) over the privacy rows along Δx with target `t`.
fn row_complementarity(
    st: &Structure,
    it: &Iterate,
    t: Target,
    dx: &[f64],
    ap: f64,
    ad: f64,
) -> f64 {
    fold_rows(
        st,
        it,
        t,
        dx,
        0.0,
        |a, s, z, ds, dz| a + (s + ap * ds) * (z + ad * dz),
        |a, b| a + b,
    )
}

/// Σ (v + α_pΔv)(w + α_dΔw) of two explicit vector pairs.
fn complementarity(v: &[f64], dv: &[f64], w: &[f64], dw: &[f64], ap: f64, ad: f64) -> f64 {
    sum_by(v.len(), |i| (v[i] + ap * dv[i]) * (w[i] + ad * dw[i]))
}

/// s += α_pΔs, z += α_dΔz on the privacy rows (before x moves: Δs, Δz are recomputed
/// from the current x).
fn row_update(st: &Structure, it: &mut Iterate, t: Target, dx: &[f64], ap: f64, ad: f64) {
    let (n, np) = (st.n, st.np());
    if np == 0 {
        return;
    }
    let x = &it.x;
    st.by_output(&mut it.s[..np])
        .into_par_iter()
        .zip(st.by_output(&mut it.z[..np]))
        .enumerate()
        .for_each(|(k, (sk, zk))| {
            let (xk, dxk) = (&x[k * n..(k + 1) * n], &dx[k * n..(k + 1) * n]);
            for (i, &p) in st.out_rows(k).iter().enumerate() {
                let (ds, dz) = row_step(st, t, k, p as usize, xk, dxk, sk[i], zk[i]);
                sk[i] += ap * ds;
                zk[i] += ad * dz;
            }
        });
}
