//! A primal–dual interior point method that knows the privacy LP's structure
//! (`spec/lp.md` §4.3): every privacy row M\[u\]\[k\]/c − M\[v\]\[k\] ≤ 0 touches one output
//! column k, so the Newton matrix on the variables is K dense n×n blocks plus the coupling
//! of the 2n row-sum and loss rows. Each iteration factorizes the K blocks (Cholesky, then
//! the explicit inverse, in parallel; each block apart on every connected component of the
//! pairs' graph, which for a `--within` LP are its η-components, Qiu 2024 Proposition 3.1,
//! and by blocks along one level of nested dissection where the component's pairs are
//! sparse, [`dissect`]) and solves a (2n+1)×(2n+1) Schur complement: ≈ K·Σ_c n_c³ flops
//! at most, with every row present and no lazy rounds.
//!
//! The LP (variables x = (M column-major by output, then L for the max loss)):
//! min cᵀx s.t. Σ_k M\[u\]\[k\] = 1 (y_u), Σ_k c(u,k)·M\[u\]\[k\] − L ≤ 0 (z_u, max loss
//! only), M\[u\]\[k\]/c_dn(u,v) − M\[v\]\[k\] ≤ 0 (z_uvk), x ≥ 0 (w). Mehrotra
//! predictor–corrector with iterative refinement on the reduced system. L is not
//! eliminated: its Newton entry w_L/x_L → 0 (L is basic), and eliminating it put
//! x_L/w_L ≈ 10¹⁰ on every entry of the loss block, whose LU then lost the rest of the
//! system and stalled the method at a gap of ≈ 10⁻³; ΔL is a border unknown of the Schur
//! complement instead. The dual measured is the one the `lp_dual` verifier would prove
//! ([`bound`]), and the best one is kept. [`solve`] returns its iterate as the solution
//! when that bound is within [`SOLVED_GAP`], else hands the iterate, its working set and
//! support to the lazy rounds (`lp::support`), whose working sets this method then solves
//! from that iterate ([`solve_rows`]; the rows are held output by output,
//! [`Structure::sel`]). Either way the mechanism is repaired exactly and the dual verified
//! exactly: this solver is trusted for nothing. [`solve_local`] solves the localized PMO LP
//! (`lp::local`, spec/lp.md §4.6) the same way: each output has variables for its
//! neighbourhood only ([`Structure::present`]) and its own block layout ([`Layout`]).
//! `MDP_BLOCK_DEBUG=1` prints each iteration's gap, μ, residuals and steps on stderr (the
//! measurements of spec/lp.md §4.3).

use super::ipm::Row;
use super::model::{Objective, PrivacyLp};
use super::simplex::{Dual, Primal, Round, SolveError};
use crate::progress::Progress;
use rayon::prelude::*;
use std::time::Instant;

/// Largest number of iterations (the iterate reached is used as it is).
const MAX_ITER: usize = 400;
/// Relative tolerance on the gap and the residuals.
const TOL: f64 = 1e-10;
/// [`solve`] runs to this relative gap ...
pub const TARGET_GAP: f64 = 1e-9;
/// ... and returns its iterate as the solution if it got within this (gap and primal
/// residual); otherwise its working set.
pub const SOLVED_GAP: f64 = 5e-8;
/// With an aim (a certified relative gap the caller asks for, `mdp build pmo --gap`),
/// [`solve`] stops once its bound is within the aim less this of its objective (both
/// relative, [`aim_met`]): the dual's sparsification ([`DUAL_BUDGET`]) and as much again
/// for the exact repair's uniform mix (≈ 10⁻¹⁵ on Rome500). An aim at or below it is never
/// met early.
const AIM_RESERVE: f64 = 2.0 * DUAL_BUDGET;

/// Whether a primal objective `pobj` and a verifier bound `lb` meet the aim `a`.
fn aim_met(pobj: f64, lb: f64, a: f64) -> bool {
    pobj - lb <= (a - AIM_RESERVE) * pobj.abs()
}
/// A working-set solve ([`solve_rows`]) that stops above this relative gap (its bound's,
/// against its objective) is an error, and Clarabel solves that round. On Rome n = 200
/// the working set's dual residual limits it to 3–7·10⁻⁸ (spec/lp.md §4.3); 10⁻⁶ let
/// small objectives (PMO-like losses ≈ 0.02, where the gap's 1 + |objective| is ≈ 1)
/// through with a bound 2·10⁻⁵ below the optimum.
pub const WORKING_GAP: f64 = 1e-7;
/// Past [`HANDOVER_ITER`] iterations the interior point on every row stops as soon as its
/// relative gap is below [`HANDOVER_GAP`] and hands its iterate, working set and support
/// to the lazy rounds, each of which it then solves itself, started from that iterate
/// ([`solve_rows`]; Clarabel solves a round only if it stops above [`WORKING_GAP`]). On
/// Rome road nodes the whole LP needs ~190 iterations (n = 100) and ~380 (n = 200) to
/// reach 10⁻⁷, while a working set (≈ 5 % of the rows, over the used outputs) started from
/// the 10⁻³ iterate converges in 50–120 much cheaper iterations: n = 100 7.7–8.0 s against
/// 9.5–9.8 s handing over at 10⁻⁴, and 12.8 s with Clarabel's rounds; n = 200 130 s
/// against 260 s (spec/lp.md §4.3). LPs that converge within [`HANDOVER_ITER`] iterations
/// (PMO on Rome500 at ε = 10: 42) are solved whole.
const HANDOVER_ITER: usize = 60;
const HANDOVER_GAP: f64 = 1e-3;
/// The expected loss (PMO) hands over to Clarabel's lazy rounds instead (spec/lp.md
/// §4.3), which cost far more than the structured iterations: only past this many
/// iterations ...
const HANDOVER_ITER_EXPECTED: usize = 100;
/// ... and below this gap (session 12's rule). Under the max loss's rule, 2 000 Rome road
/// nodes (ε = 10/km, η = 2 km; 76 iterations to converge) handed 7.98 million rows to
/// Clarabel at iteration 60, gap 2.5·10⁻⁶.
const HANDOVER_GAP_EXPECTED: f64 = 1e-4;
/// Below this relative gap the iterate's support (its used outputs) seeds the lazy rows
/// (it may stop above [`HANDOVER_GAP`] when its linear algebra loses accuracy).
const SUPPORT_GAP: f64 = 1e-3;
/// An output is in the handed-over support when its column has an entry above this
/// fraction of the largest entry. Looser than [`super::support::SUPPORT_TOL`] since the
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
/// The starting duals are this over n (slacks and x start at 1/K).
const START_DUAL: f64 = 1.0;
/// A privacy row joins the working set when the iterate's slack is below this fraction
/// of x_v, i.e. x_u/c ≥ (1 − NEAR_TIGHT)·x_v: the row is nearly tight (spec/lp.md §4.3).
/// The lazy rounds that follow add rows within the same margin of tight.
pub const NEAR_TIGHT: f64 = 0.05;
/// Most refinement steps per direction.
const REFINE: usize = 10;
/// Refinement stops once the reduced system's relative residual is below
/// [`refine_tol`] (or stops halving), which is this near the optimum ...
const REFINE_TOL: f64 = 1e-12;
/// ... and at most this far from it.
const REFINE_TOL_FAR: f64 = 1e-8;

/// The share of the relative gap a direction's relative residual must reach: for the max
/// loss (session 16) ...
const REFINE_RATIO: f64 = 1e-3;
/// ... and for the expected loss. Session 17, against 10⁻³: Rome500 ε = 10 `--gap 1e-6`
/// wall ratio 0.975 (5 pairs), ε = 2 69.3 s against 73.3 s (one run each), the same
/// iterations and certified bounds. OPTMech (max loss) at Rome n = 200 took 171 s against
/// 128 s (one run each: one more working-set round), so it keeps 10⁻³ (spec/lp.md §4.3).
const REFINE_RATIO_EXPECTED: f64 = 1e-2;

/// The relative residual a direction needs at relative gap `gap`: [`REFINE_RATIO`] (or
/// [`REFINE_RATIO_EXPECTED`]) of the gap, within [[`REFINE_TOL`], [`REFINE_TOL_FAR`]]. Far
/// from the optimum the first solve (≈ 10⁻¹⁰) is already accurate enough, and the
/// refinement step's two products with the block inverses and its row pass are saved
/// (spec/lp.md §4.3).
fn refine_tol(gap: f64, max_loss: bool) -> f64 {
    let ratio = if max_loss {
        REFINE_RATIO
    } else {
        REFINE_RATIO_EXPECTED
    };
    (ratio * gap).clamp(REFINE_TOL, REFINE_TOL_FAR)
}
/// The iteration stops when refinement leaves a relative residual above this ...
const ACCURACY: f64 = 1e-6;
/// ... or above this on a working set ([`solve_rows`]): on Rome n = 200 its last
/// iterations need 10⁻⁴–10⁻³, and stopping at 10⁻⁶ left a relative gap of 1.2·10⁻⁷
/// against 6.4·10⁻⁸ (spec/lp.md §4.3). The directions only steer: the bound kept is the
/// one the verifier proves from the duals reached.
const WORKING_ACCURACY: f64 = 1e-3;
/// A working set's iteration within [`WORKING_GAP`] stops once its bound has not improved
/// for this many iterations (and gives up after three times as many).
const STALL: usize = 10;

/// The memory the structured phase holds for `rows_total` privacy rows (every row of the
/// LP) over n inputs and k outputs, on top of the lazy-row interior point's
/// ([`super::model::memory_estimate`]): [`BYTES_PER_ROW`] per row, the k explicit
/// block inverses (Σ_c n_c² entries each over the pairs' components, counted as n², an
/// upper bound), and the (2n+1)×(2n+1) Schur complement with its per-thread sums and each
/// thread's [`Work`] (counted as 8 such matrices).
pub fn memory_estimate(rows_total: u64, n: u64, k: u64) -> u64 {
    let schur = (2 * n + 1).saturating_mul(2 * n + 1);
    rows_total
        .saturating_mul(BYTES_PER_ROW)
        .saturating_add(n.saturating_mul(n).saturating_mul(k).saturating_mul(8))
        .saturating_add(schur.saturating_mul(8 * 8))
}

/// An upper estimate of the memory [`solve_local`] needs on the neighbourhoods `keep`:
/// its rows (at most Σ_k Σ_{u ∈ V_k} deg(u), at [`BYTES_PER_ROW`]), each output's block
/// inverses (|V_k|² entries, an upper bound for its components'), each worker's block and
/// n×n Schur sums, the Schur complement and its factor, and the n·K-long vectors.
pub fn local_memory_estimate(lp: &PrivacyLp, keep: &[Vec<u32>]) -> u64 {
    let (n, kk) = (lp.n as u64, lp.k() as u64);
    let mut deg = vec![0u64; lp.n];
    lp.pairs.iter().for_each(|&(u, _)| deg[u] += 1);
    let rows: u64 = keep
        .iter()
        .flatten()
        .map(|&u| deg[u as usize])
        .fold(0, u64::saturating_add);
    let blocks: u64 = keep
        .iter()
        .map(|v| (v.len() as u64).saturating_mul(v.len() as u64))
        .fold(0, u64::saturating_add);
    let largest = keep.iter().map(|v| v.len() as u64).max().unwrap_or(0);
    let threads = rayon::current_num_threads().max(1) as u64;
    let per_thread = largest
        .saturating_mul(largest)
        .saturating_mul(3)
        .saturating_add(n.saturating_mul(n));
    rows.saturating_mul(BYTES_PER_ROW).saturating_add(
        blocks
            .saturating_add(threads.saturating_mul(per_thread))
            .saturating_add(n.saturating_mul(n).saturating_mul(3))
            .saturating_add(n.saturating_mul(kk).saturating_mul(16))
            .saturating_mul(8),
    )
}

/// One thread's reusable memory for the block factorizations ([`factor`]): output k's
/// blocks B_k as they are formed (every component's, flat as in [`Structure::offs`]),
/// the Cholesky factor of the block being inverted, and faer's scratch; one per worker
/// thread, kept for the whole run ([`run`]'s pool). Fresh buffers for every block of every
/// iteration (six n×n allocations per block through faer's `Llt`) cost their zeroing and
/// page faults: ≈ 10 % of the time on Rome500; fresh ones per rayon job, ≈ 2 %.
struct Work {
    b: Vec<f64>,
    l: Vec<f64>,
    /// X, Y and Σ of every level of a dissected block ([`Split::scratch`]).
    x: Vec<f64>,
    mem: faer::dyn_stack::MemBuffer,
    /// This thread's share of the per-component Schur sums Σ_k B_k⁻¹ (expected loss only).
    acc: Vec<f64>,
}

impl Work {
    /// For blocks of at most `m` rows, `total` entries in all, and dissected blocks
    /// needing at most `xlen` entries for X, Y and Σ.
    fn new(m: usize, total: usize, xlen: usize) -> Work {
        use faer::linalg::cholesky::llt::{factor, inverse};
        let par = faer::Par::Seq;
        let req = factor::cholesky_in_place_scratch::<f64>(m, par, Default::default())
            .or(inverse::inverse_scratch::<f64>(m, par));
        Work {
            b: vec![0.0; total],
            l: vec![0.0; m * m],
            x: vec![0.0; xlen],
            mem: faer::dyn_stack::MemBuffer::new(req),
            acc: vec![],
        }
    }

    /// A worker's buffers for `st`'s blocks (and its Schur sums, for the expected loss:
    /// per component on the whole LP, n×n on a localized one).
    fn for_structure(st: &Structure) -> Work {
        let total = st.layouts.iter().map(Layout::total).max().unwrap_or(0);
        let comps = || st.layouts.iter().flat_map(|l| l.comps.iter().zip(&l.split));
        let m = comps().map(|(c, _)| c.len()).max().unwrap_or(0);
        let xlen = comps()
            .map(|(c, sp)| sp.scratch(c.len()))
            .max()
            .unwrap_or(0);
        let acc = match (st.max_loss, st.shared()) {
            (true, _) => 0,
            (false, true) => total,
            (false, false) => st.n * st.n,
        };
        Work {
            acc: vec![0.0; acc],
            ..Work::new(m, total, xlen)
        }
    }
}

/// The inverse of the symmetric positive definite `a` (p×p, any strides) plus δI into
/// `dst` (both triangles), by faer's in-place Cholesky on `l` and its `llt::inverse`;
/// `false` on a non-positive pivot.
fn chol_inverse(
    a: faer::MatRef<f64>,
    delta: f64,
    l: &mut [f64],
    stack: &mut faer::dyn_stack::MemStack,
    mut dst: faer::MatMut<f64>,
) -> bool {
    use faer::linalg::cholesky::llt::{factor, inverse};
    let (p, par) = (a.nrows(), faer::Par::Seq);
    let l = &mut l[..p * p];
    let mut lm = faer::MatMut::from_column_major_slice_mut(l, p, p);
    lm.copy_from(a);
    for j in 0..p {
        lm[(j, j)] += delta;
    }
    let chol = factor::cholesky_in_place(
        lm.as_mut(),
        Default::default(),
        par,
        stack,
        Default::default(),
    );
    if chol.is_err() {
        return false;
    }
    // L is the lower triangle (column j holds L[i][j], i ≥ j); clear the rest of A.
    for j in 0..p {
        l[j * p..j * p + j].fill(0.0);
    }
    let lm = faer::MatRef::from_column_major_slice(l, p, p);
    inverse::inverse(dst.as_mut(), lm, par, stack);
    // faer writes the lower triangle: mirror it.
    mirror_lower(dst);
    true
}

/// dst = scale·srcᵀ, in tiles (as [`mirror_lower`]).
fn transpose_into(src: faer::MatRef<f64>, scale: f64, mut dst: faer::MatMut<f64>) {
    const TILE: usize = 32;
    let (r, c) = (src.nrows(), src.ncols());
    for jb in (0..c).step_by(TILE) {
        for ib in (0..r).step_by(TILE) {
            for i in ib..(ib + TILE).min(r) {
                for j in jb..(jb + TILE).min(c) {
                    dst[(j, i)] = scale * src[(i, j)];
                }
            }
        }
    }
}

/// Copy the strict lower triangle of the square `a` onto its upper triangle, in tiles
/// (a plain loop writes across the columns with a stride of a whole column, one cache
/// miss per entry on blocks of hundreds of rows).
fn mirror_lower(mut a: faer::MatMut<f64>) {
    const TILE: usize = 32;
    let p = a.nrows();
    for jb in (0..p).step_by(TILE) {
        for ib in (jb..p).step_by(TILE) {
            for i in ib..(ib + TILE).min(p) {
                for j in jb..(jb + TILE).min(p).min(i) {
                    a[(j, i)] = a[(i, j)];
                }
            }
        }
    }
}

/// Write into `out` the inverse of the symmetric positive (semi)definite m×m matrix `b`
/// (row-major, equally column-major), using a [`Work`]'s buffers and scratch, by faer's
/// blocked Cholesky (sequential inside; the blocks run in parallel). δ = `shift` is the
/// static regularization of a nearly singular block; if rounding still leaves a
/// non-positive pivot, δ is raised ×10³ (at most 3 times), then `false`, as for a
/// non-finite result. (faer's in-place pivot regularization was not used: on a 2×2
/// singular block it left a zero on L's diagonal.)
///
/// With a dissection (p1, p2 > 0: the inputs ordered [P1, P2, S] with no pair between P1
/// and P2, [`dissect`]) B = [A1 0 C1; 0 A2 C2; C1ᵀ C2ᵀ D] is inverted by block
/// elimination: X_i = A_i⁻¹C_i, the Schur complement Σ = D − Σ_i C_iᵀX_i (positive definite
/// as B is), Y_i = X_iΣ⁻¹, and B⁻¹ = [A1⁻¹ + Y1X1ᵀ, Y1X2ᵀ, −Y1; ·, A2⁻¹ + Y2X2ᵀ, −Y2;
/// ·, ·, Σ⁻¹] (symmetric). About p1³ + p2³ + m²s flops (s = |S|) instead of m³, and less
/// where A1 and A2 are dissected in turn ([`Split::parts`], [`inverse_at`]).
///
/// With `full` false a dissected block's inverse is left in its *compact* form instead:
/// A1⁻¹ and A2⁻¹ in their diagonal blocks, X = [X1; X2] in the (P, S) block and Σ⁻¹ in
/// the (S, S) block of `out` (the other blocks are not written), with Y in the work
/// buffer for [`add_inverse`]. [`mul_vec_on`] applies it as y_S = Σ⁻¹(r_S − Xᵀr_P),
/// y_P = A⁻¹r_P − X·y_S, reading p1² + p2² + 2(p1 + p2)s + s² entries instead of m²
/// (Rome500's 411-input component: 1.7× fewer; these products are memory-bound).
fn spd_inverse(
    b: &[f64],
    m: usize,
    split: &Split,
    shift: f64,
    work: (&mut [f64], &mut [f64], &mut faer::dyn_stack::MemBuffer),
    full: bool,
    out: &mut [f64],
) -> bool {
    let (l, x, mem) = work;
    let stack = faer::dyn_stack::MemStack::new(mem);
    let bm = faer::MatRef::from_column_major_slice(b, m, m);
    let mut delta = shift;
    for _ in 0..4 {
        let om = faer::MatMut::from_column_major_slice_mut(out, m, m);
        if inverse_at(bm, split, delta, (l, x, stack), full, om) {
            return true;
        }
        delta *= 1e3;
    }
    false
}

/// One attempt of [`spd_inverse`] at the shift δ, on any (sub)matrix: a dissected block's
/// A_i⁻¹ are inverted the same way, recursively (always in full), with the work entries
/// after this level's X, Y and Σ. `false` on a non-positive pivot or a non-finite result.
fn inverse_at(
    bm: faer::MatRef<f64>,
    split: &Split,
    delta: f64,
    (l, x, stack): (&mut [f64], &mut [f64], &mut faer::dyn_stack::MemStack),
    full: bool,
    mut om: faer::MatMut<f64>,
) -> bool {
    use faer::linalg::matmul::matmul;
    use faer::{Accum, MatMut, MatRef, Par};
    let finite =
        |a: MatRef<f64>| (0..a.ncols()).all(|j| (0..a.nrows()).all(|i| a[(i, j)].is_finite()));
    let (m, (p1, p2)) = (bm.nrows(), split.top());
    if split.parts.is_empty() {
        return chol_inverse(bm, delta, l, stack, om.as_mut()) && finite(om.as_ref());
    }
    let (rs, s) = (p1 + p2, m - p1 - p2);
    // x holds X1, X2 (p_i×s each), then Y1, Y2, then Σ (s×s), then the parts' work.
    let (xs, rest) = x.split_at_mut(rs * s);
    let (ys, rest) = rest.split_at_mut(rs * s);
    let (sig, deeper) = rest.split_at_mut(s * s);
    let mut xm = MatMut::from_column_major_slice_mut(xs, rs, s);
    let mut ym = MatMut::from_column_major_slice_mut(ys, rs, s);
    let mut sm = MatMut::from_column_major_slice_mut(sig, s, s);
    sm.copy_from(bm.submatrix(rs, rs, s, s));
    for j in 0..s {
        sm[(j, j)] += delta;
    }
    for ((r, p), part) in [(0, p1), (p1, p2)].into_iter().zip(&split.parts) {
        let ainv = om.as_mut().submatrix_mut(r, r, p, p);
        if !inverse_at(
            bm.submatrix(r, r, p, p),
            part,
            delta,
            (&mut *l, &mut *deeper, &mut *stack),
            true,
            ainv,
        ) {
            return false;
        }
        let c = bm.submatrix(r, rs, p, s);
        let mut xi = xm.as_mut().submatrix_mut(r, 0, p, s);
        matmul(
            xi.as_mut(),
            Accum::Replace,
            om.as_ref().submatrix(r, r, p, p),
            c,
            1.0,
            Par::Seq,
        );
        matmul(
            sm.as_mut(),
            Accum::Add,
            c.transpose(),
            xi.as_ref(),
            -1.0,
            Par::Seq,
        );
    }
    let sinv = om.as_mut().submatrix_mut(rs, rs, s, s);
    if !chol_inverse(sm.as_ref(), 0.0, l, stack, sinv) {
        return false;
    }
    matmul(
        ym.as_mut(),
        Accum::Replace,
        xm.as_ref(),
        om.as_ref().submatrix(rs, rs, s, s),
        1.0,
        Par::Seq,
    );
    if !full {
        om.as_mut()
            .submatrix_mut(0, rs, rs, s)
            .copy_from(xm.as_ref());
        let o = om.as_ref();
        return finite(o.submatrix(0, 0, p1, p1))
            && finite(o.submatrix(p1, p1, p2, p2))
            && finite(o.submatrix(0, rs, rs, s))
            && finite(o.submatrix(rs, rs, s, s))
            && finite(ym.as_ref());
    }
    // The (P, P) blocks: A⁻¹ on the diagonal blocks (already there), + Y Xᵀ everywhere.
    let (xr, yr) = (xm.as_ref(), ym.as_ref());
    matmul(
        om.as_mut().submatrix_mut(0, 0, p1, p1),
        Accum::Add,
        yr.submatrix(0, 0, p1, s),
        xr.submatrix(0, 0, p1, s).transpose(),
        1.0,
        Par::Seq,
    );
    matmul(
        om.as_mut().submatrix_mut(p1, p1, p2, p2),
        Accum::Add,
        yr.submatrix(p1, 0, p2, s),
        xr.submatrix(p1, 0, p2, s).transpose(),
        1.0,
        Par::Seq,
    );
    matmul(
        om.as_mut().submatrix_mut(p1, 0, p2, p1),
        Accum::Replace,
        yr.submatrix(p1, 0, p2, s),
        xr.submatrix(0, 0, p1, s).transpose(),
        1.0,
        Par::Seq,
    );
    // Exactly symmetric: (P1, P2) from (P2, P1) = Y2X1ᵀ, each diagonal block's upper
    // triangle from its lower (Y_iX_iᵀ in floats is symmetric only to rounding).
    mirror_lower(om.as_mut().submatrix_mut(0, 0, rs, rs));
    // The (P, S) blocks: −Y, and its transpose.
    for j in 0..s {
        for i in 0..rs {
            om[(i, rs + j)] = -yr[(i, j)];
        }
    }
    transpose_into(yr, -1.0, om.as_mut().submatrix_mut(rs, 0, s, rs));
    finite(om.as_ref())
}

/// y\[idx\[i\]\] = Σ_j a\[i\]\[j\]·x\[idx\[j\]\]: the symmetric m×m inverse `a` applied on
/// the entries `idx` of x and y (a component's inputs, m = idx.len()), by faer's matrix
/// products (SIMD chosen at run time: a plain `zip().sum()` dot product is one serial
/// chain of additions, and these products, a few per refinement step, were 40 % of the
/// time on Rome500). A dissected `a` with `compact` is in [`spd_inverse`]'s compact form.
fn mul_vec_on(
    a: &[f64],
    (p1, p2): (usize, usize),
    compact: bool,
    idx: &[u32],
    x: &[f64],
    y: &mut [f64],
) {
    fn col(v: &[f64]) -> faer::MatRef<'_, f64> {
        faer::MatRef::from_column_major_slice(v, v.len(), 1)
    }
    use faer::linalg::matmul::matmul;
    use faer::{Accum, MatMut, MatRef, Par};
    let m = idx.len();
    let xs: Vec<f64> = idx.iter().map(|&j| x[j as usize]).collect();
    let mut ys = vec![0.0; m];
    let am = MatRef::from_column_major_slice(a, m, m);
    if compact && p1 > 0 && p2 > 0 {
        let rs = p1 + p2;
        let s = m - rs;
        let (xp, xsep) = xs.split_at(rs);
        let (yp, ysep) = ys.split_at_mut(rs);
        // t = r_S − Xᵀ r_P, y_S = Σ⁻¹ t.
        let mut t = xsep.to_vec();
        let xmat = am.submatrix(0, rs, rs, s);
        matmul(
            MatMut::from_column_major_slice_mut(&mut t, s, 1),
            Accum::Add,
            xmat.transpose(),
            col(xp),
            -1.0,
            Par::Seq,
        );
        matmul(
            MatMut::from_column_major_slice_mut(ysep, s, 1),
            Accum::Replace,
            am.submatrix(rs, rs, s, s),
            col(&t),
            1.0,
            Par::Seq,
        );
        // y_P = A⁻¹ r_P − X y_S.
        let (y1, y2) = yp.split_at_mut(p1);
        matmul(
            MatMut::from_column_major_slice_mut(y1, p1, 1),
            Accum::Replace,
            am.submatrix(0, 0, p1, p1),
            col(&xp[..p1]),
            1.0,
            Par::Seq,
        );
        matmul(
            MatMut::from_column_major_slice_mut(y2, p2, 1),
            Accum::Replace,
            am.submatrix(p1, p1, p2, p2),
            col(&xp[p1..]),
            1.0,
            Par::Seq,
        );
        matmul(
            MatMut::from_column_major_slice_mut(yp, rs, 1),
            Accum::Add,
            xmat,
            col(ysep),
            -1.0,
            Par::Seq,
        );
    } else {
        matmul(
            MatMut::from_column_major_slice_mut(&mut ys, m, 1),
            Accum::Replace,
            am,
            col(&xs),
            1.0,
            Par::Seq,
        );
    }
    for (&i, v) in idx.iter().zip(ys) {
        y[i as usize] = v;
    }
}

/// acc += the m×m inverse in `a`: whole for (p1, p2) = (0, 0), else in [`spd_inverse`]'s
/// compact form with its Y = XΣ⁻¹ in `y`: B⁻¹ = [A⁻¹ + YXᵀ, −Y; −Yᵀ, Σ⁻¹]. Only the lower
/// triangle of acc is meaningful.
fn add_inverse(a: &[f64], m: usize, (p1, p2): (usize, usize), y: &[f64], acc: &mut [f64]) {
    use faer::linalg::matmul::matmul;
    use faer::{Accum, MatMut, MatRef, Par};
    if p1 == 0 || p2 == 0 {
        acc.iter_mut().zip(a).for_each(|(s, v)| *s += v);
        return;
    }
    let (rs, am) = (p1 + p2, MatRef::from_column_major_slice(a, m, m));
    let s = m - rs;
    let ym = MatRef::from_column_major_slice(&y[..rs * s], rs, s);
    let mut sm = MatMut::from_column_major_slice_mut(acc, m, m);
    for (r, p) in [(0, p1), (p1, p2)] {
        let mut d = sm.as_mut().submatrix_mut(r, r, p, p);
        let ai = am.submatrix(r, r, p, p);
        for j in 0..p {
            for i in j..p {
                d[(i, j)] += ai[(i, j)];
            }
        }
    }
    matmul(
        sm.as_mut().submatrix_mut(0, 0, rs, rs),
        Accum::Add,
        ym,
        am.submatrix(0, rs, rs, s).transpose(),
        1.0,
        Par::Seq,
    );
    for j in 0..s {
        for i in 0..rs {
            sm[(rs + j, i)] -= ym[(i, j)];
        }
        for i in j..s {
            sm[(rs + i, rs + j)] += am[(rs + i, rs + j)];
        }
    }
}

/// Components smaller than this are inverted whole.
const DISSECT_MIN: usize = 64;

/// A block's nested dissection: its inputs ordered [P1, P2, S] with no pair between P1
/// and P2, and each of P1, P2 dissected in turn (`parts`); (0, 0) and no parts for a
/// block inverted whole.
#[derive(Clone, Debug, Default, PartialEq)]
struct Split {
    p1: usize,
    p2: usize,
    parts: Vec<Split>,
}

impl Split {
    fn top(&self) -> (usize, usize) {
        (self.p1, self.p2)
    }

    /// Work entries (X, Y and Σ of every level on the path being inverted) for an m×m
    /// block ([`spd_inverse`]).
    fn scratch(&self, m: usize) -> usize {
        if self.parts.is_empty() {
            return 0;
        }
        let (rs, s) = (self.p1 + self.p2, m - self.p1 - self.p2);
        2 * rs * s
            + s * s
            + self.parts[0]
                .scratch(self.p1)
                .max(self.parts[1].scratch(self.p2))
    }

    /// Levels of dissection.
    fn depth(&self) -> usize {
        self.parts.iter().map(|p| 1 + p.depth()).max().unwrap_or(0)
    }
}

/// Nested dissection of a component of the pairs' graph, from the BFS levels of a
/// pseudo-peripheral input: a pair joins inputs at most one level apart, so one level S
/// separates P1 (the levels before it) from P2 (those after). The level is the one, with
/// at least a fifth of the inputs on each side, that minimizes the block inverse's flops
/// p1³ + p2³ + m²s + 3ms² ([`spd_inverse`]); the dissection is used when that is at most
/// 0.7·m³, and P1 and P2 are dissected in turn (each only if connected: a BFS must reach
/// all of it). Returns the inputs ordered [P1, P2, S] (each part ordered by its own
/// dissection) and the [`Split`], or the component as it is and no split.
fn dissect(comp: &[u32], adj: &[Vec<u32>]) -> (Vec<u32>, Split) {
    let m = comp.len();
    let whole = || (comp.to_vec(), Split::default());
    if m < DISSECT_MIN {
        return whole();
    }
    let member: std::collections::HashSet<u32> = comp.iter().copied().collect();
    let bfs = |root: u32| {
        let mut level = std::collections::HashMap::with_capacity(m);
        level.insert(root, 0usize);
        let mut queue = std::collections::VecDeque::from([root]);
        let mut last = root;
        while let Some(u) = queue.pop_front() {
            last = u;
            let lu = level[&u];
            for &v in adj[u as usize].iter().filter(|v| member.contains(v)) {
                if let std::collections::hash_map::Entry::Vacant(e) = level.entry(v) {
                    e.insert(lu + 1);
                    queue.push_back(v);
                }
            }
        }
        (level, last)
    };
    let (_, far) = bfs(comp[0]);
    let (level, _) = bfs(far);
    if level.len() < m {
        return whole();
    }
    let depth = level.values().max().map_or(0, |d| d + 1);
    let mut count = vec![0usize; depth];
    for d in level.values() {
        count[*d] += 1;
    }
    let mf = m as f64;
    let mut best: Option<(f64, usize)> = None;
    let mut before = 0usize;
    for (l, &s) in count.iter().enumerate() {
        let after = m - before - s;
        if 5 * before >= m && 5 * after >= m {
            let (p1, p2, s) = (before as f64, after as f64, s as f64);
            let flops = p1.powi(3) + p2.powi(3) + mf * mf * s + 3.0 * mf * s * s;
            if best.is_none_or(|(f, _)| flops < f) {
                best = Some((flops, l));
            }
        }
        before += s;
    }
    let Some((_, cut)) = best.filter(|&(f, _)| f <= 0.7 * mf.powi(3)) else {
        return whole();
    };
    let part = |keep: &dyn Fn(usize) -> bool| -> Vec<u32> {
        comp.iter().copied().filter(|u| keep(level[u])).collect()
    };
    let (p1, p2, s) = (part(&|d| d < cut), part(&|d| d > cut), part(&|d| d == cut));
    let ((o1, s1), (o2, s2)) = (dissect(&p1, adj), dissect(&p2, adj));
    let split = Split {
        p1: p1.len(),
        p2: p2.len(),
        parts: vec![s1, s2],
    };
    ([o1, o2, s].concat(), split)
}

/// LU factorization with partial pivoting of a dense n×n matrix (row-major), computed
/// once per iteration for the max loss's bordered Schur complement ([`Schur`]) and reused
/// by every solve of that iteration (the predictor, the corrector and their refinement
/// steps). faer's `PartialPivLu` was measured slower on OPTMech's (spec/crates.md).
struct Lu {
    n: usize,
    /// L (unit lower, below the diagonal) and U, in place.
    a: Vec<f64>,
    /// Row `c` of the factor is row `piv[c]` of the matrix after the swaps before it.
    piv: Vec<usize>,
}

impl Lu {
    /// `None` if a pivot is 0 or not finite.
    fn factor(mut a: Vec<f64>, n: usize) -> Option<Lu> {
        let mut piv = Vec::with_capacity(n);
        for c in 0..n {
            let p = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))?;
            if a[p * n + c] == 0.0 || !a[p * n + c].is_finite() {
                return None;
            }
            piv.push(p);
            if p != c {
                for j in 0..n {
                    a.swap(c * n + j, p * n + j);
                }
            }
            let d = a[c * n + c];
            let (head, tail) = a.split_at_mut((c + 1) * n);
            let rowc = &head[c * n..];
            for rowi in tail.chunks_mut(n) {
                let f = rowi[c] / d;
                rowi[c] = f;
                if f != 0.0 {
                    for (x, y) in rowi[c + 1..].iter_mut().zip(&rowc[c + 1..]) {
                        *x -= f * y;
                    }
                }
            }
        }
        Some(Lu { n, a, piv })
    }

    /// Solve A x = b; `None` if the result is not finite.
    fn solve(&self, mut b: Vec<f64>) -> Option<Vec<f64>> {
        let (n, a) = (self.n, &self.a);
        // The factor's rows carry every later swap (the whole row moves), so all swaps
        // come first, then the unit lower solve.
        for c in 0..n {
            b.swap(c, self.piv[c]);
        }
        for c in 0..n {
            let bc = b[c];
            if bc != 0.0 {
                for i in c + 1..n {
                    b[i] -= a[i * n + c] * bc;
                }
            }
        }
        for c in (0..n).rev() {
            let s = b[c]
                - a[c * n + c + 1..(c + 1) * n]
                    .iter()
                    .zip(&b[c + 1..])
                    .map(|(x, y)| x * y)
                    .sum::<f64>();
            b[c] = s / a[c * n + c];
        }
        b.iter().all(|v| v.is_finite()).then_some(b)
    }
}

/// How an output's block B_k is laid out: the connected components of its privacy rows'
/// graph over the inputs it has variables for, each its inputs in the order of its
/// dissection. No privacy row joins two of them, so B_k is block-diagonal over them and
/// is factorized and inverted component by component ([`factor`]): Σ_c n_c³ flops instead
/// of n³. On the whole LP every output has the same layout (one component for OPTMech,
/// the η-components of a `--within` LP, Qiu 2024 Proposition 3.1); on a localized LP
/// ([`solve_local`]) each output has its own.
struct Layout {
    comps: Vec<Vec<u32>>,
    /// Input u's component and its position in it ([`ABSENT`] when the output has no
    /// variable for u).
    place: Vec<(u32, u32)>,
    /// Each component's nested dissection, its inputs ordered [P1, P2, S] at every level
    /// ([`dissect`]); [`Split::default`] when its block is inverted whole.
    split: Vec<Split>,
    /// Where component c's m_c×m_c block starts in the output's flat block storage
    /// (`offs\[c + 1\] − offs\[c\] = m_c²`; the last entry is Σ_c m_c²).
    offs: Vec<usize>,
}

/// [`Layout::place`] of an input without a variable in the output.
const ABSENT: (u32, u32) = (u32::MAX, u32::MAX);

impl Layout {
    /// The layout of the `n` inputs with `present` (all if `None`) under the privacy rows
    /// `pairs` (pairs of present inputs).
    fn new(n: usize, present: Option<&[bool]>, pairs: &[(usize, usize)], debug: bool) -> Layout {
        let here = |u: usize| present.is_none_or(|p| p[u]);
        let comp = crate::metric::components(n, pairs);
        let mut id = vec![u32::MAX; n];
        let mut comps: Vec<Vec<u32>> = vec![];
        for u in (0..n).filter(|&u| here(u)) {
            let c = &mut id[comp[u] as usize];
            if *c == u32::MAX {
                *c = comps.len() as u32;
                comps.push(vec![]);
            }
            comps[*c as usize].push(u as u32);
        }
        let mut adj = vec![vec![]; n];
        for &(u, v) in pairs {
            adj[u].push(v as u32);
            adj[v].push(u as u32);
        }
        let mut split = Vec::with_capacity(comps.len());
        for c in comps.iter_mut() {
            let (order, sp) = dissect(c, &adj);
            *c = order;
            split.push(sp);
        }
        if debug {
            for (c, sp) in comps
                .iter()
                .zip(&split)
                .filter(|(c, _)| c.len() >= DISSECT_MIN)
            {
                let (p1, p2) = sp.top();
                eprintln!(
                    "component of {}: dissected into {p1} + {p2} + separator {} ({} levels)",
                    c.len(),
                    c.len() - p1 - p2,
                    sp.depth()
                );
            }
        }
        let mut place = vec![ABSENT; n];
        for (c, members) in comps.iter().enumerate() {
            for (l, &u) in members.iter().enumerate() {
                place[u as usize] = (c as u32, l as u32);
            }
        }
        let offs = std::iter::once(0)
            .chain(comps.iter().scan(0, |o, c| {
                *o += c.len() * c.len();
                Some(*o)
            }))
            .collect();
        Layout {
            comps,
            place,
            split,
            offs,
        }
    }

    /// Σ_c m_c²: the entries of the output's block storage.
    fn total(&self) -> usize {
        self.offs[self.comps.len()]
    }
}

/// The structure of one LP: pairs, scaled constants and costs.
struct Structure {
    n: usize,
    kk: usize,
    max_loss: bool,
    /// Privacy pairs (u, v) and 1/c_dn(u, v).
    pairs: Vec<(u32, u32)>,
    /// The block layouts, and output k's (`lay\[k\]`): one shared by every output on the
    /// whole LP.
    layouts: Vec<Layout>,
    lay: Vec<u32>,
    /// On a localized LP ([`solve_local`]), which variables x\[k n + u\] it has: the others
    /// are held at 0 (x = w = 0, no Newton entry) and enter the verifier's bound with their
    /// bare cost ([`bound`]). `None`: every variable.
    present: Option<Vec<bool>>,
    inv_c: Vec<f64>,
    /// The privacy rows present, output by output: on a working set ([`solve_rows`]),
    /// output k's are the pairs `sel[row_off[k]..row_off[k + 1]]` (indices into `pairs`);
    /// on the whole LP (`sel` None) every pair, `every` = 0..P, for every output. Their
    /// slacks and duals are at positions `row_off[k]..` of s and z. The whole LP's rows
    /// are not listed one by one: that would be 4 bytes per row more than
    /// [`BYTES_PER_ROW`] counts.
    sel: Option<Vec<u32>>,
    every: Vec<u32>,
    row_off: Vec<usize>,
    /// cost(u, k), u-major.
    cost: Vec<f64>,
    /// Objective on M (expected loss), block-major k·n + u.
    c_m: Vec<f64>,
}

impl Structure {
    fn nv(&self) -> usize {
        self.n * self.kk + usize::from(self.max_loss)
    }
    /// Output k's block layout.
    fn layout(&self, k: usize) -> &Layout {
        &self.layouts[self.lay[k] as usize]
    }
    /// Whether every output has the same layout (the whole LP).
    fn shared(&self) -> bool {
        self.layouts.len() == 1
    }
    /// Whether variable j (x\[k n + u\], or L) is held at 0 on a localized LP.
    #[inline]
    fn absent(&self, j: usize) -> bool {
        self.present.as_ref().is_some_and(|p| j < p.len() && !p[j])
    }
    /// The variables the LP has.
    fn nv_present(&self) -> usize {
        self.present.as_ref().map_or(self.nv(), |p| {
            p.iter().filter(|&&b| b).count() + usize::from(self.max_loss)
        })
    }
    fn np(&self) -> usize {
        self.row_off[self.kk]
    }
    /// Where output k's privacy rows are in the row-length arrays.
    fn rows(&self, k: usize) -> std::ops::Range<usize> {
        self.row_off[k]..self.row_off[k + 1]
    }
    /// Output k's privacy rows, as pair indices.
    fn out_rows(&self, k: usize) -> &[u32] {
        match &self.sel {
            Some(sel) => &sel[self.rows(k)],
            None => &self.every,
        }
    }
    /// A row-length array cut into its outputs' parts.
    fn by_output<'a, T>(&self, mut v: &'a mut [T]) -> Vec<&'a mut [T]> {
        let mut parts = Vec::with_capacity(self.kk);
        for k in 0..self.kk {
            let (a, b) = v.split_at_mut(self.row_off[k + 1] - self.row_off[k]);
            parts.push(a);
            v = b;
        }
        parts
    }
    /// The entries of output k's flat block buffer ([`Layout::offs`]) that pair `p`'s
    /// privacy row touches: (u, u), (v, v), (u, v), (v, u); and its component.
    #[inline]
    fn pattern(&self, k: usize, p: u32) -> ([usize; 4], usize) {
        let (u, v) = self.pairs[p as usize];
        let ly = self.layout(k);
        let ((c, u), (_, v)) = (ly.place[u as usize], ly.place[v as usize]);
        let (o, m) = (ly.offs[c as usize], ly.comps[c as usize].len());
        let (u, v) = (u as usize, v as usize);
        (
            [o + u * m + u, o + v * m + v, o + u * m + v, o + v * m + u],
            c as usize,
        )
    }
    /// Input `u`'s diagonal entry in output k's flat block buffer, and its component
    /// (`None` if the output has no variable for u).
    #[inline]
    fn diagonal(&self, k: usize, u: usize) -> Option<(usize, usize)> {
        let ly = self.layout(k);
        let (c, l) = ly.place[u];
        if c == u32::MAX {
            return None;
        }
        let (o, m) = (ly.offs[c as usize], ly.comps[c as usize].len());
        Some((o + l as usize * (m + 1), c as usize))
    }
    /// (A_I x) of the privacy row of pair `p` of the output whose column of x is `xk`.
    #[inline]
    fn ax(&self, xk: &[f64], p: usize) -> f64 {
        let (u, v) = self.pairs[p];
        xk[u as usize] * self.inv_c[p] - xk[v as usize]
    }
    /// E x: Σ_k x[k n + u] for each input u (the row sums).
    fn row_sums(&self, x: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut e = vec![0.0; n];
        for xk in x[..n * self.kk].chunks(n) {
            e.iter_mut().zip(xk).for_each(|(a, b)| *a += b);
        }
        e
    }
    /// (A_I x) on the loss rows: Σ_k cost(u,k)·x[k n + u] − L.
    fn loss_rows(&self, x: &[f64], out: &mut [f64]) {
        let (n, kk) = (self.n, self.kk);
        let l = x[n * kk];
        for u in 0..n {
            let mut s = -l;
            for k in 0..kk {
                s += self.cost[u * kk + k] * x[k * n + u];
            }
            out[u] = s;
        }
    }
    /// Add A_Iᵀ z (loss part) to `g`.
    fn loss_rows_t(&self, z: &[f64], g: &mut [f64]) {
        let (n, kk) = (self.n, self.kk);
        for u in 0..n {
            for k in 0..kk {
                g[k * n + u] += self.cost[u * kk + k] * z[u];
            }
            g[n * kk] -= z[u];
        }
    }
}

/// The iterate.
struct Iterate {
    x: Vec<f64>,
    y: Vec<f64>,
    w: Vec<f64>,
    /// Slacks and duals: privacy rows then loss rows.
    s: Vec<f64>,
    z: Vec<f64>,
}

/// Factorized Newton matrix of one iteration.
struct Factor {
    /// inv\[k\]: the inverses of output k's blocks, component c's at `offs\[c\]..offs\[c + 1\]`.
    inv: Vec<Vec<f64>>,
    /// Whether the dissected blocks' inverses are in [`spd_inverse`]'s compact form.
    compact: bool,
    /// The (2n+1)×(2n+1) (max loss) or n×n Schur complement, factorized.
    schur: Schur,
}

/// The factorized Schur complement. Without loss rows (an expected loss) it is Σ_k B_k⁻¹,
/// symmetric positive definite, and faer's Cholesky factorizes it (the module's
/// sequential LU took ≈ 10 % of an iteration at N = 2 000); with them, or if that
/// Cholesky meets a non-positive pivot, the module's LU with partial pivoting.
enum Schur {
    Lu(Lu),
    Llt(faer::linalg::solvers::Llt<f64>),
}

impl Schur {
    /// Solve S x = b; `None` if the result is not finite.
    fn solve(&self, mut b: Vec<f64>) -> Option<Vec<f64>> {
        match self {
            Schur::Lu(lu) => lu.solve(b),
            Schur::Llt(llt) => {
                use faer::linalg::solvers::Solve;
                let n = b.len();
                llt.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut b, n, 1));
                b.iter().all(|v| v.is_finite()).then_some(b)
            }
        }
    }
}

/// v += a·dv (in parallel).
pub(super) fn axpy(v: &mut [f64], dv: &[f64], a: f64) {
    v.par_iter_mut().zip(dv).for_each(|(x, d)| *x += a * d);
}

/// The largest step α with v + α·dv ≥ 0 (∞ if dv ≥ 0), in parallel.
pub(super) fn max_step(v: &[f64], dv: &[f64]) -> f64 {
    v.par_iter()
        .zip(dv.par_iter())
        .filter(|(_, d)| **d < 0.0)
        .map(|(a, d)| -a / d)
        .reduce(|| f64::INFINITY, f64::min)
}

/// What [`solve`] found.
pub enum Outcome {
    /// The interior point converged to a relative gap of at most [`SOLVED_GAP`]: the
    /// mechanism and a dual of the whole LP (every row was present), both to be repaired
    /// and verified exactly by the caller like any float solver's.
    Solved(Primal, Dual),
    /// It stopped short: the rows its iterate holds nearly tight ([`NEAR_TIGHT`]), a
    /// working set to seed the lazy-row interior point with ([`super::support::solve`]),
    /// and the outputs its mechanism uses ([`super::support::used_outputs`]; `None` if it
    /// stopped above [`SUPPORT_GAP`]). Rows it misses are added back by separation and
    /// outputs it misses by pricing, so these affect only speed. With the iterate itself,
    /// which starts the working-set solves ([`solve_rows`]).
    WorkingSet(Vec<Row>, Option<Vec<usize>>, Box<Warm>),
}

/// The block interior point on every privacy row, run to relative gap [`TARGET_GAP`]
/// (spec/lp.md §4.3), or, with `aim` (`mdp build pmo --gap`), until its bound and its
/// objective, or its predictor's primal objective, meet the aim ([`aim_met`]).
pub fn solve(
    lp: &PrivacyLp,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<Outcome, SolveError> {
    let rows_total = lp.pairs.len() as u64 * lp.k() as u64;
    if rows_total > MAX_ROWS {
        return Err(SolveError(format!(
            "--solver block holds every privacy row ({rows_total} here, about {} GB): above its limit of {MAX_ROWS} rows; use --solver ipm (lazy rows)",
            memory_estimate(rows_total, lp.n as u64, lp.k() as u64) >> 30
        )));
    }
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
            .then(|| super::support::used_outputs_above(&mechanism(&st, &it), kk, SUPPORT_TOL));
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
/// the bound then decides).
pub fn solve_local(
    lp: &PrivacyLp,
    keep: &[Vec<u32>],
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<Localized, SolveError> {
    let start = Instant::now();
    let (st, it, end) = run(lp, Rows::Local(keep), TARGET_GAP, aim, progress)?;
    let converged = end.gap <= SOLVED_GAP || end.y_gap <= SOLVED_GAP;
    if !(end.aimed || converged && end.res_p <= SOLVED_GAP) {
        return Err(SolveError(format!(
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

/// The localized LP's rows and block layouts ([`Rows::Local`]): output k's privacy rows
/// are the pairs among `keep\[k\]` in pair order (`sel`, `row_off` of [`Structure`]), its
/// [`Layout`] that of those rows over `keep\[k\]`; and which variables x\[k n + u\] are
/// present ([`Structure::present`]).
fn local_structure(
    lp: &PrivacyLp,
    keep: &[Vec<u32>],
) -> (Vec<u32>, Vec<usize>, Vec<Layout>, Vec<bool>) {
    let (n, kk) = (lp.n, lp.k());
    let per_output: Vec<(Vec<u32>, Layout)> = keep
        .par_iter()
        .map(|ins| {
            let mut here = vec![false; n];
            ins.iter().for_each(|&u| here[u as usize] = true);
            let (ps, rows): (Vec<u32>, Vec<(usize, usize)>) = lp
                .pairs
                .iter()
                .enumerate()
                .filter(|&(_, &(u, v))| here[u] && here[v])
                .map(|(p, &uv)| (p as u32, uv))
                .unzip();
            (ps, Layout::new(n, Some(&here), &rows, false))
        })
        .collect();
    let (mut sel, mut row_off, mut layouts) = (vec![], vec![0], vec![]);
    for (ps, layout) in per_output {
        sel.extend(ps);
        row_off.push(sel.len());
        layouts.push(layout);
    }
    let mut present = vec![false; n * kk];
    for (k, ins) in keep.iter().enumerate() {
        ins.iter().for_each(|&u| present[k * n + u as usize] = true);
    }
    (sel, row_off, layouts, present)
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

/// The LP `lp` (the whole LP of `warm` restricted to its outputs `keep`) with the privacy
/// rows `rows` only, solved by the structured interior point started from `warm`, to
/// relative gap [`TARGET_GAP`]: the lazy rounds' solve after a hand-over (spec/lp.md
/// §4.3). The duals are those of `rows`, in their order (scaled as Clarabel's,
/// [`super::ipm::Solved`]); an error when it stops above [`WORKING_GAP`].
pub(crate) fn solve_rows(
    lp: &PrivacyLp,
    rows: &[Row],
    warm: &Warm,
    keep: &[usize],
    progress: &dyn Progress,
) -> Result<super::ipm::Solved, SolveError> {
    let start = Instant::now();
    // Its iterations are not lazy rounds: only its summary is reported.
    let quiet = crate::progress::Silent;
    let (st, it, end) = run(
        lp,
        Rows::Working(rows, warm, keep),
        TARGET_GAP,
        None,
        &quiet,
    )?;
    if !(end.gap <= WORKING_GAP && end.res_p <= SOLVED_GAP) {
        return Err(SolveError(format!(
            "the structured interior point stopped on the working set at relative gap {:.1e}, primal residual {:.1e} (iteration {})",
            end.gap, end.res_p, end.iterations
        )));
    }
    progress.note(&format!(
        "lp: the structured interior point solved the working set ({} rows over {} outputs) to relative gap {:.1e} in {} iterations ({:.2} s)",
        rows.len(),
        keep.len(),
        end.gap,
        end.iterations,
        start.elapsed().as_secs_f64()
    ));
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
    Ok(super::ipm::Solved {
        m: mechanism(&st, &it),
        objective: end.pobj,
        beta: st
            .max_loss
            .then(|| end.z[st.np()..].iter().map(|z| z.max(0.0)).collect()),
        gamma,
    })
}

/// Pair (u, v)'s index in `pairs` at u·n + v (`u32::MAX` for no pair).
fn pair_index(pairs: &[(u32, u32)], n: usize) -> Vec<u32> {
    let mut pair_of = vec![u32::MAX; n * n];
    for (p, &(u, v)) in pairs.iter().enumerate() {
        pair_of[u as usize * n + v as usize] = p as u32;
    }
    pair_of
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

/// Where [`run`] stopped: the returned iterate's objectives, relative gap and primal
/// residual, and the iterations taken.
struct End {
    pobj: f64,
    /// The verifier's bound Σ_u α_u ([`bound`]) of `z`, in floats (an estimate: the exact
    /// check decides).
    lb: f64,
    /// Relative gap between `pobj` and `lb`.
    gap: f64,
    res_p: f64,
    iterations: usize,
    /// The row duals (privacy rows, then loss rows) of the iterate with the best `lb`.
    z: Vec<f64>,
    /// It stopped at the caller's aim ([`solve`]'s `aim`), short of [`TARGET_GAP`].
    aimed: bool,
    /// The relative gap between the objective and the row-sum duals' Σy (converged in y
    /// while the verifier's bound may lag).
    y_gap: f64,
}

/// The total the verifier normalizes the objective weights by: Σβ, β the loss rows' duals
/// in `z` (negatives as 0), for the max loss; 1 for an expected loss (the prior's).
fn weight_total(st: &Structure, z: &[f64]) -> f64 {
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
fn bound(st: &Structure, it: &Iterate, rd: &[f64]) -> f64 {
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

/// The privacy rows of a working set, output by output in pair order: (`sel`, `row_off`)
/// of [`Structure`], with `pair_of` mapping (u, v) to its pair index (u·n + v).
fn select(rows: &[Row], kk: usize, n: usize, pair_of: &[u32]) -> (Vec<u32>, Vec<usize>) {
    let mut row_off = vec![0usize; kk + 1];
    for &(_, _, k) in rows {
        row_off[k as usize + 1] += 1;
    }
    for k in 0..kk {
        row_off[k + 1] += row_off[k];
    }
    let mut fill = row_off.clone();
    let mut sel = vec![0u32; rows.len()];
    for &(u, v, k) in rows {
        sel[fill[k as usize]] = pair_of[u as usize * n + v as usize];
        fill[k as usize] += 1;
    }
    for k in 0..kk {
        sel[row_off[k]..row_off[k + 1]].sort_unstable();
    }
    (sel, row_off)
}

/// The whole LP's iterate where its structured phase stopped short ([`solve`]): the warm
/// start of the working-set solves ([`solve_rows`]). Its every row is interior, so any
/// working set over any outputs starts from it nearly feasible and centred (the dropped
/// rows' duals are ≈ μ/s, small on slack rows).
pub struct Warm {
    it: Iterate,
    kk: usize,
    /// Pairs of the whole LP (the privacy rows of output k, pair p, are at k·P + p).
    np1: usize,
}

/// The starting iterate of `st` (a working set over the outputs `keep` of the whole LP of
/// `warm`) taken from `warm`.
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

/// The interior point loop on every privacy row of `lp`, or on the working set `rows`
/// started from `warm` (the whole LP's iterate, `lp` its restriction to the outputs
/// `keep`); stops at convergence, at relative gap `target`, on every row also at `aim`
/// ([`solve`]) or the hand-over, or when the reduced system loses accuracy (then the last
/// good iterate is returned).
/// Which privacy rows (and variables) [`run`] solves with.
#[derive(Clone, Copy)]
enum Rows<'a> {
    /// The whole LP: every row, every variable.
    Every,
    /// A working set over the outputs `keep` of the whole LP, started from its iterate.
    Working(&'a [Row], &'a Warm, &'a [usize]),
    /// A localized LP ([`solve_local`]): output k has variables for the inputs `keep\[k\]`
    /// only, and the rows among them.
    Local(&'a [Vec<u32>]),
}

fn run(
    lp: &PrivacyLp,
    rows: Rows,
    target: f64,
    aim: Option<f64>,
    progress: &dyn Progress,
) -> Result<(Structure, Iterate, End), SolveError> {
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
            vec![Layout::new(n, None, &lp.pairs, debug)],
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
        Rows::Local(keep) => {
            let (sel, row_off, layouts, present) = local_structure(lp, keep);
            let lay = (0..kk as u32).collect();
            (Some(sel), row_off, (layouts, lay, Some(present)))
        }
    };
    let st = Structure {
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
    };
    let (nv, np) = (st.nv(), st.np());
    let nv_present = st.nv_present();
    // Each worker thread's block buffers, reused by every iteration (fresh ones per rayon
    // job cost their zeroing: ≈ 2 % of the time on Rome500).
    let pool: Vec<std::sync::Mutex<Work>> = (0..rayon::current_num_threads().max(1))
        .map(|_| std::sync::Mutex::new(Work::for_structure(&st)))
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
    if let Rows::Working(_, warm, keep) = rows {
        it = warm_start(&st, warm, keep);
    } else if let Some(present) = &st.present {
        for (j, &p) in present.iter().enumerate() {
            if !p {
                (it.x[j], it.w[j]) = (0.0, 0.0);
            }
        }
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
                .reduce(|| (0.0, 0.0), |a, b| (a.0.max(b.0), a.1 + b.1))
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
            + it.x.par_iter().zip(&it.w).map(|(a, b)| a * b).sum::<f64>())
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
        end.gap = (pobj - end.lb) / (1.0 + pobj.abs());
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
            eprintln!("it {iter}: pobj {pobj:.12} dobj {dobj:.12} gap {gap:.2e} mu {mu:.2e} rp {res_p:.2e} rd {res_d:.2e} xmin {xmin:.2e} smin {smin:.2e}");
        }
        if gap < TOL && res_p < TOL && res_d < TOL * (1.0 + 1.0 / cmax) {
            break;
        }
        // Converged in y; on a working set, once the verifier's bound has stopped
        // improving instead (its dual residual lags: Rome n = 200 reached a y-gap of
        // 5·10⁻¹⁰ with the bound's gap at 6.4·10⁻⁸).
        if !working && gap < target && res_p < 1e-6 && res_d < 1e-6
            || working && end.gap <= WORKING_GAP && iter >= improved + STALL
            || working && iter >= improved + 3 * STALL
        {
            break;
        }
        if !pobj.is_finite() || !dobj.is_finite() {
            return Err(SolveError(
                "block interior point: non-finite iterate".into(),
            ));
        }
        let t_f = Instant::now();
        let f = factor(&st, &it, &theta, spare.take(), &pool)?;
        let t_f = t_f.elapsed().as_secs_f64();
        let (s_l, z_l) = (&it.s[np..], &it.z[np..]);
        // Predictor (affine) direction.
        let rsz_l: Vec<f64> = s_l.iter().zip(z_l).map(|(s, z)| s * z).collect();
        let rxw_aff: Vec<f64> = it.x.iter().zip(&it.w).map(|(x, w)| x * w).collect();
        let ta = Target::Affine;
        let tol = refine_tol(gap, max_loss);
        let aff = direction(
            &st, &it, &f, &theta, &rd, &rpe, &rp_l, &rsz_l, ta, &rxw_aff, tol,
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
            let dobj: f64 = st.c_m.par_iter().zip(&aff.dx).map(|(c, d)| c * d).sum();
            let pobj_aff = pobj + step * dobj;
            if pobj_aff < pobj && aim_met(pobj_aff, end.lb, a) {
                row_update(&st, &mut it, ta, &aff.dx, step, 0.0);
                axpy(&mut it.x, &aff.dx, step);
                end.pobj = pobj_aff;
                end.gap = (pobj_aff - end.lb) / (1.0 + pobj_aff.abs());
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
            &st, &it, &f, &theta, &rd, &rpe, &rp_l, &rsz_l, tc, &rxw, tol,
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
            eprintln!(
                "  sigma {sigma:.2e} ap {ap:.3} ad {ad:.3} (x {xp:.3} s {:.3} w {wp:.3} z {:.3}) factor {t_f:.3} s",
                sp.min(sp_l),
                zp.min(zp_l)
            );
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

/// The complementarity target r_sz of a Newton direction on the privacy rows. It is
/// recomputed per row from n·K-long vectors in every pass that needs it, so that only s,
/// z and θ are stored per row: the predictor's r_sz = s·z; the corrector's
/// r_sz = s·z + Δs_a·Δz_a − σμ, with the predictor's Δs_a, Δz_a recomputed from its Δx.
#[derive(Clone, Copy)]
enum Target<'a> {
    Affine,
    Corrector { dx: &'a [f64], sigma_mu: f64 },
}

impl Target<'_> {
    /// r_sz of output `k`'s privacy row of pair `p`, whose slack, dual and primal residual
    /// (A_I x + s) are `s`, `z`, `rp`.
    #[inline]
    fn rsz(&self, st: &Structure, k: usize, p: usize, s: f64, z: f64, rp: f64) -> f64 {
        match *self {
            Target::Affine => s * z,
            Target::Corrector { dx, sigma_mu } => {
                let ds = -rp - st.ax(&dx[k * st.n..(k + 1) * st.n], p);
                let dz = (-(s * z) - z * ds) / s;
                s * z + ds * dz - sigma_mu
            }
        }
    }
}

/// Δs and Δz of output `k`'s privacy row of pair `p` along the direction whose Δx column is
/// `dxk` and whose target is `t`: Δs = −r_p − A_I Δx, Δz = (−r_sz − z Δs)/s, with
/// r_p = A_I x + s (`xk`: the iterate's column).
#[inline]
#[allow(clippy::too_many_arguments)]
fn row_step(
    st: &Structure,
    t: Target,
    k: usize,
    p: usize,
    xk: &[f64],
    dxk: &[f64],
    s: f64,
    z: f64,
) -> (f64, f64) {
    let rp = st.ax(xk, p) + s;
    let rsz = t.rsz(st, k, p, s, z, rp);
    let ds = -rp - st.ax(dxk, p);
    (ds, (-rsz - z * ds) / s)
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
        .reduce(|| id, &c)
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
    v.par_iter()
        .zip(dv)
        .zip(w.par_iter().zip(dw))
        .map(|((v, dv), (w, dw))| (v + ap * dv) * (w + ad * dw))
        .sum()
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

/// Form and factorize the Newton matrix: B_k = Σ θ g gᵀ + diag(w/x) per output, their
/// inverses, and the Schur complement on the coupling rows.
fn factor(
    st: &Structure,
    it: &Iterate,
    theta: &[f64],
    spare: Option<Vec<Vec<f64>>>,
    pool: &[std::sync::Mutex<Work>],
) -> Result<Factor, SolveError> {
    let (n, kk) = (st.n, st.kk);
    let mut inv =
        spare.unwrap_or_else(|| (0..kk).map(|k| vec![0.0; st.layout(k).total()]).collect());
    // Without loss rows the Schur complement is Σ_k B_k⁻¹, summed as the blocks are
    // inverted (each thread its own sum): per component on the whole LP, where the
    // dissected inverses stay compact ([`spd_inverse`]), and scattered into n×n sums on a
    // localized LP, whose outputs' components differ. With loss rows it needs the
    // cost-weighted blocks below.
    let compact = !st.max_loss && st.shared();
    for w in pool {
        w.lock().unwrap_or_else(|e| e.into_inner()).acc.fill(0.0);
    }
    inv.par_iter_mut().enumerate().try_for_each(|(k, out)| {
        // This thread's buffers (each worker locks only its own; any other index
        // would only wait).
        let t = rayon::current_thread_index().unwrap_or(0) % pool.len();
        let mut work = pool[t].lock().unwrap_or_else(|e| e.into_inner());
        let Work { b, l, x, mem, acc } = &mut *work;
        // b is all zeros here: fresh, or cleared entry by entry below.
        let th = &theta[st.rows(k)];
        let ly = st.layout(k);
        for (i, &p) in st.out_rows(k).iter().enumerate() {
            let ([uu, vv, uv, vu], _) = st.pattern(k, p);
            let (t, a) = (th[i], st.inv_c[p as usize]);
            b[uu] += t * a * a;
            b[vv] += t;
            b[uv] -= t * a;
            b[vu] -= t * a;
        }
        let mut dmax = vec![0.0f64; ly.comps.len()];
        for u in 0..n {
            let Some((d, c)) = st.diagonal(k, u) else {
                continue;
            };
            let d = &mut b[d];
            *d += it.w[k * n + u] / it.x[k * n + u];
            dmax[c] = dmax[c].max(*d);
        }
        let mut ok = true;
        for (c, comp) in ly.comps.iter().enumerate() {
            let (o, m) = (ly.offs[c], comp.len());
            let (bc, oc) = (&b[o..o + m * m], &mut out[o..o + m * m]);
            let shift = dmax[c] * 1e-14 + 1e-300;
            ok = spd_inverse(bc, m, &ly.split[c], shift, (l, x, mem), !compact, oc);
            if !ok {
                break;
            }
            if compact {
                // Y follows X in the work buffer ([`spd_inverse`]).
                let (p1, p2) = ly.split[c].top();
                let y = &x[(p1 + p2) * (m - p1 - p2)..];
                add_inverse(oc, m, (p1, p2), y, &mut acc[o..o + m * m]);
            } else if !st.max_loss {
                // A localized LP: the whole inverse into this thread's n×n sums.
                for (jb, &j) in comp.iter().enumerate() {
                    let col = &oc[jb * m..(jb + 1) * m];
                    let a = &mut acc[j as usize * n..(j as usize + 1) * n];
                    for (&i, v) in comp.iter().zip(col) {
                        a[i as usize] += v;
                    }
                }
            }
        }
        // Clear the entries written above (B's pattern: the pairs and the diagonal),
        // not the whole buffer: Σ_c n_c² entries per output were ≈ 2 % of the time
        // on Rome500.
        for &p in st.out_rows(k) {
            let ([_, _, uv, vu], _) = st.pattern(k, p);
            b[uv] = 0.0;
            b[vu] = 0.0;
        }
        for u in 0..n {
            if let Some((d, _)) = st.diagonal(k, u) {
                b[d] = 0.0;
            }
        }
        if ok {
            Ok(())
        } else {
            Err(SolveError(format!(
                "block interior point: output {k}'s block is not positive definite"
            )))
        }
    })?;
    let mut acc = vec![
        0.0;
        if st.max_loss {
            0
        } else {
            pool[0].lock().unwrap_or_else(|e| e.into_inner()).acc.len()
        }
    ];
    for w in pool {
        let w = w.lock().unwrap_or_else(|e| e.into_inner());
        acc.iter_mut().zip(&w.acc).for_each(|(a, v)| *a += v);
    }
    let ns = if st.max_loss { 2 * n + 1 } else { n };
    let sums = if compact {
        // Scatter each component's sum (its lower triangle, mirrored); B⁻¹ is 0 between
        // components.
        let mut sums = vec![0.0; ns * ns];
        let ly = &st.layouts[0];
        for (c, comp) in ly.comps.iter().enumerate() {
            let (a, m) = (&acc[ly.offs[c]..ly.offs[c + 1]], comp.len());
            for (jb, &j) in comp.iter().enumerate() {
                for (ia, &i) in comp.iter().enumerate().skip(jb) {
                    let v = a[jb * m + ia];
                    sums[i as usize * ns + j as usize] = v;
                    sums[j as usize * ns + i as usize] = v;
                }
            }
        }
        sums
    } else if !st.max_loss {
        // A localized LP's n×n sums, whole.
        acc
    } else {
        cost_weighted_sums(st, &inv, ns)
    };
    let mut schur = sums;
    if st.max_loss {
        for i in 0..n {
            schur[i * ns + i] += 1.0 / theta[st.np() + i];
            schur[i * ns + 2 * n] = 1.0;
            schur[2 * n * ns + i] = 1.0;
        }
        schur[2 * n * ns + 2 * n] = -it.w[n * kk] / it.x[n * kk];
    }
    let bad = schur.iter().filter(|v| !v.is_finite()).count();
    let llt = (!st.max_loss && bad == 0)
        .then(|| {
            let a = faer::MatRef::from_column_major_slice(&schur, ns, ns);
            faer::linalg::solvers::Llt::new(a, faer::Side::Lower).ok()
        })
        .flatten();
    if let Some(llt) = llt {
        return Ok(Factor {
            inv,
            compact,
            schur: Schur::Llt(llt),
        });
    }
    let schur = Lu::factor(schur, ns).map(Schur::Lu).ok_or_else(|| {
        SolveError(format!(
            "block interior point: singular Schur complement ({bad} non-finite entries)"
        ))
    })?;
    Ok(Factor {
        inv,
        compact,
        schur,
    })
}

/// The max loss's Schur complement blocks (loss rows kept): R = Σ B⁻¹, Q = Σ D B⁻¹,
/// P = Σ D B⁻¹ D (Θ_loss⁻¹ and the border of ΔL are added by [`factor`]), from the full
/// inverses; B⁻¹ is 0 between components.
fn cost_weighted_sums(st: &Structure, inv: &[Vec<f64>], ns: usize) -> Vec<f64> {
    let (n, kk) = (st.n, st.kk);
    inv.par_iter()
        .enumerate()
        .fold(
            || vec![0.0; ns * ns],
            |mut acc, (k, bks)| {
                let ly = st.layout(k);
                for (c, comp) in ly.comps.iter().enumerate() {
                    let (bi, m) = (&bks[ly.offs[c]..ly.offs[c + 1]], comp.len());
                    for (a, &i) in comp.iter().enumerate() {
                        let i = i as usize;
                        for (b, &j) in comp.iter().enumerate() {
                            let (j, v) = (j as usize, bi[a * m + b]);
                            let (di, dj) = (st.cost[i * kk + k], st.cost[j * kk + k]);
                            acc[i * ns + j] += di * v * dj; // P
                            acc[i * ns + n + j] -= di * v; // −Q
                            acc[(n + i) * ns + j] -= v * dj; // −Qᵀ
                            acc[(n + i) * ns + n + j] += v; // R
                        }
                    }
                }
                acc
            },
        )
        .reduce(
            || vec![0.0; ns * ns],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

struct Direction {
    /// Relative residual of the reduced system after refinement.
    accuracy: f64,
    dx: Vec<f64>,
    dy: Vec<f64>,
    dw: Vec<f64>,
    /// Δs and Δz of the loss rows (max loss; the privacy rows' are recomputed by
    /// [`row_step`]).
    ds_l: Vec<f64>,
    dz_l: Vec<f64>,
}

/// Apply the block inverses to the M part of `r` (L's entry, if any, is left 0: L is an
/// unknown of the Schur complement).
fn apply_binv(st: &Structure, f: &Factor, r: &[f64]) -> Vec<f64> {
    let n = st.n;
    let mut t = vec![0.0; st.nv()];
    t[..n * st.kk]
        .par_chunks_mut(n)
        .zip(r[..n * st.kk].par_chunks(n))
        .zip(f.inv.par_iter())
        .enumerate()
        .for_each(|(k, ((tk, rk), bks))| {
            let ly = st.layout(k);
            for (c, comp) in ly.comps.iter().enumerate() {
                mul_vec_on(
                    &bks[ly.offs[c]..ly.offs[c + 1]],
                    ly.split[c].top(),
                    f.compact,
                    comp,
                    rk,
                    tk,
                );
            }
        });
    t
}

/// Solve M Δx − A_Eᵀ Δy = r1, A_E Δx = r2 with the factor (module doc).
fn reduced_solve(
    st: &Structure,
    f: &Factor,
    r1: &[f64],
    r2: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), SolveError> {
    let (n, kk) = (st.n, st.kk);
    let t = apply_binv(st, f, r1);
    // E t and U_M t (U_M: the loss rows' M part; L's column −1 is the border).
    let et = st.row_sums(&t);
    let mut ut = vec![0.0; n];
    if st.max_loss {
        for k in 0..kk {
            for u in 0..n {
                ut[u] += st.cost[u * kk + k] * t[k * n + u];
            }
        }
    }
    let rhs: Vec<f64> = if st.max_loss {
        ut.iter()
            .cloned()
            .chain((0..n).map(|u| r2[u] - et[u]))
            .chain(std::iter::once(-r1[n * kk]))
            .collect()
    } else {
        (0..n).map(|u| r2[u] - et[u]).collect()
    };
    let bad = rhs.iter().filter(|v| !v.is_finite()).count();
    let sol = f.schur.solve(rhs).ok_or_else(|| {
        SolveError(format!(
            "block interior point: non-finite Schur solve ({bad} non-finite entries in the right side)"
        ))
    })?;
    let (p, dy) = if st.max_loss {
        (sol[..n].to_vec(), sol[n..2 * n].to_vec())
    } else {
        (vec![0.0; n], sol[..n].to_vec())
    };
    // Δx_M = B⁻¹(r1 − U_Mᵀ p + Eᵀ Δy); ΔL from the border.
    let mut r = r1.to_vec();
    for k in 0..kk {
        for u in 0..n {
            let mut v = dy[u];
            if st.max_loss {
                v -= st.cost[u * kk + k] * p[u];
            }
            r[k * n + u] += v;
        }
    }
    let mut dx = apply_binv(st, f, &r);
    if st.max_loss {
        dx[n * kk] = sol[2 * n];
    }
    Ok((dx, dy))
}

/// Apply the reduced operator: (M Δx − A_Eᵀ Δy, A_E Δx), M = A_Iᵀ Θ A_I + W/X. The
/// privacy rows are applied in one fused pass per output (row value, times θ, back onto
/// its two variables) instead of through a P·K-long vector: this runs at every
/// refinement step and the rows are most of the memory traffic.
fn apply_reduced(
    st: &Structure,
    it: &Iterate,
    theta: &[f64],
    dx: &[f64],
    dy: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (n, kk, np) = (st.n, st.kk, st.np());
    let mut g: Vec<f64> = (0..st.nv())
        .into_par_iter()
        .map(|j| {
            if st.absent(j) {
                0.0
            } else {
                it.w[j] / it.x[j] * dx[j] - if j < n * kk { dy[j % n] } else { 0.0 }
            }
        })
        .collect();
    if np > 0 {
        g[..n * kk]
            .par_chunks_mut(n)
            .zip(dx[..n * kk].par_chunks(n))
            .enumerate()
            .for_each(|(k, (gk, xk))| {
                let th = &theta[st.rows(k)];
                for (i, &p) in st.out_rows(k).iter().enumerate() {
                    let (u, v) = st.pairs[p as usize];
                    let (u, v, a) = (u as usize, v as usize, st.inv_c[p as usize]);
                    let t = (xk[u] * a - xk[v]) * th[i];
                    gk[u] += t * a;
                    gk[v] -= t;
                }
            });
    }
    if st.max_loss {
        let mut a = vec![0.0; n];
        st.loss_rows(dx, &mut a);
        a.iter_mut().zip(&theta[np..]).for_each(|(v, t)| *v *= t);
        st.loss_rows_t(&a, &mut g);
    }
    (g, st.row_sums(dx))
}

/// The Newton direction for complementarity targets `t` (privacy rows), `rsz_l` (loss
/// rows) and r_xw, with iterative refinement on the reduced system to the relative
/// residual `tol`. `rp_l`: the loss rows' primal residual A_I x + s.
#[allow(clippy::too_many_arguments)]
fn direction(
    st: &Structure,
    it: &Iterate,
    f: &Factor,
    theta: &[f64],
    rd: &[f64],
    rpe: &[f64],
    rp_l: &[f64],
    rsz_l: &[f64],
    t: Target,
    rxw: &[f64],
    tol: f64,
) -> Result<Direction, SolveError> {
    let (n, kk, np) = (st.n, st.kk, st.np());
    // q = S⁻¹(−r_sz + Z r_p) on the inequality rows, applied as A_Iᵀ q without storing
    // it (one pass per output over its privacy rows), then
    // r1 = −r_d − A_Iᵀ q − X⁻¹ r_xw.
    let mut aq = vec![0.0; st.nv()];
    if np > 0 {
        aq[..n * kk]
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(k, gk)| {
                let xk = &it.x[k * n..(k + 1) * n];
                let (sk, zk) = (&it.s[st.rows(k)], &it.z[st.rows(k)]);
                for (i, &p) in st.out_rows(k).iter().enumerate() {
                    let (p, (s, z)) = (p as usize, (sk[i], zk[i]));
                    let (u, v) = st.pairs[p];
                    let rp = st.ax(xk, p) + s;
                    let qi = (-t.rsz(st, k, p, s, z, rp) + z * rp) / s;
                    gk[u as usize] += qi * st.inv_c[p];
                    gk[v as usize] -= qi;
                }
            });
    }
    let (s_l, z_l) = (&it.s[np..], &it.z[np..]);
    if st.max_loss {
        let ql: Vec<f64> = (0..n)
            .map(|u| (-rsz_l[u] + z_l[u] * rp_l[u]) / s_l[u])
            .collect();
        st.loss_rows_t(&ql, &mut aq);
    }
    let r1: Vec<f64> = (0..st.nv())
        .into_par_iter()
        .map(|j| {
            if st.absent(j) {
                0.0
            } else {
                -rd[j] - aq[j] - rxw[j] / it.x[j]
            }
        })
        .collect();
    let r2: Vec<f64> = rpe.iter().map(|v| -v).collect();
    let (mut dx, mut dy) = reduced_solve(st, f, &r1, &r2)?;
    // Iterative refinement on the reduced system, while it keeps halving the residual.
    let norm = |a: &[f64], b: &[f64]| a.iter().chain(b).fold(0.0f64, |m, v| m.max(v.abs()));
    let scale = norm(&r1, &r2).max(1e-300);
    let mut best: Option<(f64, Vec<f64>, Vec<f64>)> = None;
    for _ in 0..REFINE {
        let (g, e) = apply_reduced(st, it, theta, &dx, &dy);
        let c1: Vec<f64> = r1.iter().zip(&g).map(|(a, b)| a - b).collect();
        let c2: Vec<f64> = r2.iter().zip(&e).map(|(a, b)| a - b).collect();
        let res = norm(&c1, &c2);
        if let Some((b, _, _)) = &best {
            if res > 0.5 * b {
                break;
            }
        }
        best = Some((res, dx.clone(), dy.clone()));
        if res <= tol * scale {
            break;
        }
        let (ex, ey) = reduced_solve(st, f, &c1, &c2)?;
        dx.iter_mut().zip(&ex).for_each(|(a, b)| *a += b);
        dy.iter_mut().zip(&ey).for_each(|(a, b)| *a += b);
    }
    let mut accuracy = f64::INFINITY;
    if let Some((r, bx, by)) = best {
        dx = bx;
        dy = by;
        accuracy = r / scale;
    }
    // The loss rows' Δs = −r_p − A_I Δx and Δz = (−r_sz − z Δs)/s.
    let mut ds_l = vec![0.0; s_l.len()];
    if st.max_loss {
        st.loss_rows(&dx, &mut ds_l);
        ds_l.iter_mut().zip(rp_l).for_each(|(d, r)| *d = -r - *d);
    }
    let dz_l: Vec<f64> = (0..ds_l.len())
        .map(|u| (-rsz_l[u] - z_l[u] * ds_l[u]) / s_l[u])
        .collect();
    let dw: Vec<f64> = (0..st.nv())
        .into_par_iter()
        .map(|j| {
            if st.absent(j) {
                0.0
            } else {
                (-rxw[j] - it.w[j] * dx[j]) / it.x[j]
            }
        })
        .collect();
    Ok(Direction {
        accuracy,
        dx,
        dy,
        dw,
        ds_l,
        dz_l,
    })
}

#[cfg(test)]
mod tests {
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

    /// The dissected inverse ([`spd_inverse`] with (p1, p2)) on a positive definite block
    /// with no entry between P1 and P2 (a path's tridiagonal Laplacian plus a diagonal):
    /// B·B⁻¹ = I and B⁻¹ symmetric, for separators of one and of three inputs (and the
    /// compact form applies and sums as the full inverse); the whole
    /// inverse agrees. A wrong sign on the (P, S) blocks, or a missing Y·Xᵀ term, fails it.
    #[test]
    fn dissected_inverse_inverts() {
        for (p1, p2, s) in [(5usize, 4usize, 1usize), (3, 6, 3)] {
            let m = p1 + p2 + s;
            // Order [P1, P2, S]; pairs: a path inside P1, a path inside P2, and every
            // input of S joined to P1's last, P2's last and the next input of S.
            let mut b = vec![0.0; m * m];
            let mut join = |i: usize, j: usize, t: f64| {
                b[i * m + i] += t;
                b[j * m + j] += t;
                b[i * m + j] -= t;
                b[j * m + i] -= t;
            };
            for i in 1..p1 {
                join(i - 1, i, 1.0 + i as f64);
            }
            for i in p1 + 1..p1 + p2 {
                join(i - 1, i, 0.5 * i as f64);
            }
            for q in p1 + p2..m {
                join(p1 - 1, q, 2.0);
                join(p1 + p2 - 1, q, 3.0);
                if q + 1 < m {
                    join(q, q + 1, 1.5);
                }
            }
            for i in 0..m {
                b[i * m + i] += 0.1 * (1 + i % 3) as f64;
            }
            let xlen = 2 * (p1 + p2) * s + s * s;
            let mut w = Work::new(m, 0, xlen);
            let (mut out, mut whole) = (vec![f64::NAN; m * m], vec![f64::NAN; m * m]);
            let work = (&mut w.l[..], &mut w.x[..], &mut w.mem);
            let split = Split {
                p1,
                p2,
                parts: vec![Split::default(); 2],
            };
            assert!(spd_inverse(&b, m, &split, 0.0, work, true, &mut out));
            let work = (&mut w.l[..], &mut w.x[..], &mut w.mem);
            assert!(spd_inverse(
                &b,
                m,
                &Split::default(),
                0.0,
                work,
                true,
                &mut whole
            ));
            for i in 0..m {
                for j in 0..m {
                    let p: f64 = (0..m).map(|k| b[i * m + k] * out[k * m + j]).sum();
                    let want = f64::from(u8::from(i == j));
                    assert!((p - want).abs() < 1e-10, "({i},{j}) {p}");
                    assert_eq!(out[i * m + j], out[j * m + i]);
                    let scale = whole[i * m + j].abs().max(1.0);
                    assert!((out[i * m + j] - whole[i * m + j]).abs() < 1e-10 * scale);
                }
            }
            // The compact form: its products and its sum into a Schur complement are the
            // full inverse's.
            let mut compact = vec![f64::NAN; m * m];
            let work = (&mut w.l[..], &mut w.x[..], &mut w.mem);
            assert!(spd_inverse(&b, m, &split, 0.0, work, false, &mut compact));
            let idx: Vec<u32> = (0..m as u32).collect();
            let r: Vec<f64> = (0..m)
                .map(|i| 1.0 + (i * 7 % 5) as f64 - 0.3 * i as f64)
                .collect();
            let (mut y_full, mut y_compact) = (vec![0.0; m], vec![0.0; m]);
            mul_vec_on(&out, (p1, p2), false, &idx, &r, &mut y_full);
            mul_vec_on(&compact, (p1, p2), true, &idx, &r, &mut y_compact);
            for (a, c) in y_full.iter().zip(&y_compact) {
                assert!((a - c).abs() < 1e-10 * a.abs().max(1.0), "{a} vs {c}");
            }
            let (mut acc_full, mut acc_compact) = (vec![1.0; m * m], vec![1.0; m * m]);
            add_inverse(&out, m, (0, 0), &[], &mut acc_full);
            let y = &w.x[(p1 + p2) * s..];
            add_inverse(&compact, m, (p1, p2), y, &mut acc_compact);
            for j in 0..m {
                for i in j..m {
                    let (a, c) = (acc_full[j * m + i], acc_compact[j * m + i]);
                    assert!(
                        (a - c).abs() < 1e-10 * a.abs().max(1.0),
                        "({i},{j}) {a} vs {c}"
                    );
                }
            }
        }
    }

    /// Nested dissection ([`Split::parts`]): a 20×20 grid's Laplacian (with diagonals)
    /// plus a diagonal, ordered by [`dissect`], is dissected on at least two levels and
    /// inverted recursively as the whole inverse, in full; its compact form's products
    /// agree too.
    #[test]
    fn nested_dissection_inverts() {
        let (w, m) = (20usize, 400usize);
        let mut adj = vec![vec![]; m];
        let mut edges = vec![];
        for i in 0..m {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            for (dx, dy) in [(1i64, 0i64), (0, 1), (1, 1), (1, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if (0..w as i64).contains(&nx) && (0..w as i64).contains(&ny) {
                    let j = ny as usize * w + nx as usize;
                    adj[i].push(j as u32);
                    adj[j].push(i as u32);
                    edges.push((i, j));
                }
            }
        }
        let all: Vec<u32> = (0..m as u32).collect();
        let (order, split) = dissect(&all, &adj);
        assert!(split.depth() >= 2, "{split:?}");
        let mut pos = vec![0usize; m];
        for (a, &u) in order.iter().enumerate() {
            pos[u as usize] = a;
        }
        let mut b = vec![0.0; m * m];
        for &(i, j) in &edges {
            let (a, c, t) = (pos[i], pos[j], 1.0 + ((i * 7 + j) % 5) as f64);
            b[a * m + a] += t;
            b[c * m + c] += t;
            b[a * m + c] -= t;
            b[c * m + a] -= t;
        }
        for a in 0..m {
            b[a * m + a] += 0.05 * (1 + a % 4) as f64;
        }
        let mut wk = Work::new(m, 0, split.scratch(m));
        let mut inv = |sp: &Split, full: bool| {
            let mut out = vec![f64::NAN; m * m];
            let work = (&mut wk.l[..], &mut wk.x[..], &mut wk.mem);
            assert!(spd_inverse(&b, m, sp, 0.0, work, full, &mut out));
            out
        };
        let (nested, whole, compact) = (
            inv(&split, true),
            inv(&Split::default(), true),
            inv(&split, false),
        );
        let big = whole.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (a, c) in nested.iter().zip(&whole) {
            assert!((a - c).abs() < 1e-10 * big, "{a} vs {c}");
        }
        let idx: Vec<u32> = (0..m as u32).collect();
        let r: Vec<f64> = (0..m)
            .map(|i| 1.0 + (i * 7 % 5) as f64 - 0.01 * i as f64)
            .collect();
        let (mut y_full, mut y_compact) = (vec![0.0; m], vec![0.0; m]);
        mul_vec_on(&whole, (0, 0), false, &idx, &r, &mut y_full);
        mul_vec_on(&compact, split.top(), true, &idx, &r, &mut y_compact);
        let ybig = y_full.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (a, c) in y_full.iter().zip(&y_compact) {
            assert!((a - c).abs() < 1e-10 * ybig, "{a} vs {c}");
        }
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

    /// A matrix that needs row swaps (zero leading pivot): the factor-once LU solves it, and
    /// a singular one is refused.
    #[test]
    fn lu_with_pivoting_solves_and_refuses_singular() {
        let a = vec![0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let x = [1.0, -2.0, 0.5];
        let b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| a[i * 3 + j] * x[j]).sum())
            .collect();
        let lu = Lu::factor(a, 3).unwrap();
        for _ in 0..2 {
            let got = lu.solve(b.clone()).unwrap();
            for (g, w) in got.iter().zip(x) {
                assert!((g - w).abs() < 1e-12, "{got:?}");
            }
        }
        assert!(Lu::factor(vec![1.0, 2.0, 2.0, 4.0], 2).is_none());
    }

    /// faer's Cholesky inverse: A·A⁻¹ = I and symmetric; a singular block gets finite
    /// entries from the shift, an indefinite one none.
    #[test]
    fn inverse_spd_inverts_and_regularizes() {
        let inverse = |a: &[f64], m: usize, shift: f64| {
            let mut w = Work::new(m, 0, 0);
            let mut out = vec![f64::NAN; m * m];
            let work = (&mut w.l[..], &mut w.x[..], &mut w.mem);
            spd_inverse(a, m, &Split::default(), shift, work, true, &mut out).then_some(out)
        };
        let n = 5;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = 1.0 / (1 + i + j) as f64 + if i == j { 1.0 } else { 0.0 };
            }
        }
        let inv = inverse(&a, n, 1e-14).unwrap();
        for i in 0..n {
            for j in 0..n {
                let p: f64 = (0..n).map(|k| a[i * n + k] * inv[k * n + j]).sum();
                assert!(
                    (p - f64::from(u8::from(i == j))).abs() < 1e-10,
                    "({i},{j}) {p}"
                );
                assert_eq!(inv[i * n + j], inv[j * n + i]);
            }
        }
        let si = inverse(&[1.0, 1.0, 1.0, 1.0], 2, 1e-12).unwrap();
        assert!(si.iter().all(|v| v.is_finite()), "{si:?}");
        // Indefinite: refused after the shifts.
        let r = inverse(&[1.0, 0.0, 0.0, -1.0], 2, 1e-12);
        assert!(r.is_none(), "{r:?}");
    }
}
