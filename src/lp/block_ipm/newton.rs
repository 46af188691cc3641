//! The Newton system of each iteration of the structured interior point (`spec/lp.md`
//! §4.3): the blocks B_k = Σ θ g gᵀ + diag(w/x) formed, inverted and summed into the Schur
//! complement on the coupling rows ([`factor`], [`Factor`], [`Schur`]; each worker's
//! buffers, [`Work`]), and the predictor's and the corrector's directions solved from it
//! with iterative refinement on the reduced system ([`direction`], to [`refine_tol`]),
//! finished by GMRES where the refinement falls short ([`gmres`], spec/lp.md §4.7). The
//! privacy rows' complementarity targets and their Δs, Δz are recomputed per row
//! ([`Target`], [`row_step`]), not stored.

use super::dense::{add_inverse, mul_vec_on, spd_inverse, Lu};
use super::structure::{Iterate, Layout, Structure};
use crate::lp::LpError;
use rayon::prelude::*;

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
pub(super) fn refine_tol(gap: f64, max_loss: bool) -> f64 {
    let ratio = if max_loss {
        REFINE_RATIO
    } else {
        REFINE_RATIO_EXPECTED
    };
    (ratio * gap).clamp(REFINE_TOL, REFINE_TOL_FAR)
}

/// One thread's reusable memory for the block factorizations ([`factor`]): output k's
/// blocks B_k as they are formed (every component's, flat as in [`Layout::offs`]),
/// the Cholesky factor of the block being inverted, and faer's scratch; one per worker
/// thread, kept for the whole run ([`run`](super::iteration::run)'s pool). Fresh buffers
/// for every block of every iteration (six n×n allocations per block through faer's `Llt`)
/// cost their zeroing and page faults: ≈ 10 % of the time on Rome500; fresh ones per rayon
/// job, ≈ 2 %.
pub(super) struct Work {
    pub(super) b: Vec<f64>,
    pub(super) l: Vec<f64>,
    /// X, Y and Σ of every level of a dissected block
    /// ([`Split::scratch`](super::dissection::Split::scratch)).
    pub(super) x: Vec<f64>,
    pub(super) mem: faer::dyn_stack::MemBuffer,
    /// This part's share of the per-component Schur sums Σ_k B_k⁻¹ (expected loss on the
    /// whole LP only).
    pub(super) acc: Vec<f64>,
}

impl Work {
    /// For blocks of at most `m` rows, `total` entries in all, and dissected blocks
    /// needing at most `xlen` entries for X, Y and Σ.
    pub(super) fn new(m: usize, total: usize, xlen: usize) -> Work {
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

    /// A part's buffers for `st`'s blocks (and its Schur sums, for the expected loss on the
    /// whole LP: per component).
    pub(super) fn for_structure(st: &Structure) -> Work {
        let total = st.layouts.iter().map(Layout::total).max().unwrap_or(0);
        let comps = || st.layouts.iter().flat_map(|l| l.comps.iter().zip(&l.split));
        let m = comps().map(|(c, _)| c.len()).max().unwrap_or(0);
        let xlen = comps()
            .map(|(c, sp)| sp.scratch(c.len()))
            .max()
            .unwrap_or(0);
        let acc = if !st.max_loss && st.shared() {
            total
        } else {
            0
        };
        Work {
            acc: vec![0.0; acc],
            ..Work::new(m, total, xlen)
        }
    }
}

/// Factorized Newton matrix of one iteration.
pub(super) struct Factor {
    /// inv\[k\]: the inverses of output k's blocks, component c's at `offs\[c\]..offs\[c + 1\]`.
    pub(super) inv: Vec<Vec<f64>>,
    /// Whether the dissected blocks' inverses are in [`spd_inverse`]'s compact form.
    compact: bool,
    /// The (2n+1)×(2n+1) (max loss) or n×n Schur complement, factorized.
    schur: Schur,
    /// Seconds spent inverting the blocks (the rest of the factorization is the Schur
    /// complement's sum and factor), for `MDP_BLOCK_DEBUG`.
    pub(super) seconds_blocks: f64,
}

/// The factorized Schur complement. Without loss rows (an expected loss) it is Σ_k B_k⁻¹,
/// symmetric positive definite, and faer's Cholesky factorizes it (the sequential [`Lu`]
/// took ≈ 10 % of an iteration at N = 2 000); with them, or if that Cholesky meets a
/// non-positive pivot, the [`Lu`] with partial pivoting.
pub(super) enum Schur {
    Lu(Lu),
    Llt(faer::linalg::solvers::Llt<f64>),
    /// A localized LP's S where its sparse factor pays (`super::sparse_schur`).
    Sparse(faer::sparse::linalg::solvers::Llt<usize, f64>),
    /// A localized LP's whole reduced system, factored sparse instead of the blocks and S
    /// (`super::sparse_kkt`).
    Kkt(super::sparse_kkt::KktFactor),
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
            Schur::Sparse(llt) => {
                use faer::linalg::solvers::Solve;
                let n = b.len();
                llt.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut b, n, 1));
                b.iter().all(|v| v.is_finite()).then_some(b)
            }
            // Solved whole by `reduced_solve` (`KktPattern::solve`), never through S.
            Schur::Kkt(_) => None,
        }
    }
}

/// The complementarity target r_sz of a Newton direction on the privacy rows. It is
/// recomputed per row from n·K-long vectors in every pass that needs it, so that only s,
/// z and θ are stored per row: the predictor's r_sz = s·z; the corrector's
/// r_sz = s·z + Δs_a·Δz_a − σμ, with the predictor's Δs_a, Δz_a recomputed from its Δx.
#[derive(Clone, Copy)]
pub(super) enum Target<'a> {
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
pub(super) fn row_step(
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

/// Form and factorize the Newton matrix: B_k = Σ θ g gᵀ + diag(w/x) per output, their
/// inverses, and the Schur complement on the coupling rows.
pub(super) fn factor(
    st: &Structure,
    it: &Iterate,
    theta: &[f64],
    spare: Option<Vec<Vec<f64>>>,
    pool: &[std::sync::Mutex<Work>],
) -> Result<Factor, LpError> {
    let (n, kk) = (st.n, st.kk);
    if let Some(kkt) = &st.kkt {
        let t = std::time::Instant::now();
        let f = kkt.factor(st, it, theta).ok_or_else(|| {
            LpError::Numerical("block interior point: the reduced system's LDLᵀ failed".into())
        })?;
        return Ok(Factor {
            inv: vec![],
            compact: false,
            schur: Schur::Kkt(f),
            seconds_blocks: t.elapsed().as_secs_f64(),
        });
    }
    let mut inv =
        spare.unwrap_or_else(|| (0..kk).map(|k| vec![0.0; st.layout(k).total()]).collect());
    // Without loss rows the Schur complement is Σ_k B_k⁻¹: on the whole LP summed per
    // component as the blocks are inverted, where the dissected inverses stay compact
    // ([`spd_inverse`]); on a localized LP, whose outputs' components differ, summed into
    // n×n from the whole inverses afterwards ([`localized_sums`]). With loss rows it needs
    // the cost-weighted blocks ([`cost_weighted_sums`]). The outputs are cut into
    // `pool.len()` ([`super::PARTS`]) contiguous parts, one task and one `Work` each,
    // outputs in ascending order within a part and the parts' sums added in part order:
    // the same sums in the same order on any number of threads (spec/lp.md §4.7).
    let compact = !st.max_loss && st.shared();
    for w in pool {
        w.lock().unwrap_or_else(|e| e.into_inner()).acc.fill(0.0);
    }
    let per = kk.div_ceil(pool.len()).max(1);
    let t_blocks = std::time::Instant::now();
    inv.par_chunks_mut(per)
        .enumerate()
        .try_for_each(|(part, chunk)| {
            let mut work = pool[part].lock().unwrap_or_else(|e| e.into_inner());
            for (o, out) in chunk.iter_mut().enumerate() {
                invert_block(st, it, theta, part * per + o, &mut work, compact, out)?;
            }
            Ok::<(), LpError>(())
        })?;
    let seconds_blocks = t_blocks.elapsed().as_secs_f64();
    // The parts' per-component sums, added in part order (the whole LP's expected loss).
    let mut acc = vec![0.0; if compact { st.layouts[0].total() } else { 0 }];
    for w in pool.iter().filter(|_| compact) {
        let w = w.lock().unwrap_or_else(|e| e.into_inner());
        acc.iter_mut().zip(&w.acc).for_each(|(a, v)| *a += v);
    }
    let ns = if st.max_loss { 2 * n + 1 } else { n };
    if let (Some(sp), false) = (&st.schur, compact) {
        let val = sp.sums(st, &inv);
        let bad = val.iter().filter(|v| !v.is_finite()).count();
        let schur = match (bad, sp.factor(&val)) {
            (0, Some(llt)) => Schur::Sparse(llt),
            _ => Lu::factor(sp.to_dense(&val), ns)
                .map(Schur::Lu)
                .ok_or_else(|| {
                    LpError::Numerical(format!(
                        "block interior point: singular Schur complement ({bad} non-finite entries)"
                    ))
                })?,
        };
        return Ok(Factor {
            inv,
            compact,
            schur,
            seconds_blocks,
        });
    }
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
        localized_sums(st, &inv)
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
            seconds_blocks,
        });
    }
    let schur = Lu::factor(schur, ns).map(Schur::Lu).ok_or_else(|| {
        LpError::Numerical(format!(
            "block interior point: singular Schur complement ({bad} non-finite entries)"
        ))
    })?;
    Ok(Factor {
        inv,
        compact,
        schur,
        seconds_blocks,
    })
}

/// Form output k's block B_k = Σ θ g gᵀ + diag(w/x), invert it into `out` and, on the
/// whole LP's expected loss (`compact`), add its compact inverse to the part's sums. The
/// part's `b` is all zeros on entry and on return.
fn invert_block(
    st: &Structure,
    it: &Iterate,
    theta: &[f64],
    k: usize,
    work: &mut Work,
    compact: bool,
    out: &mut [f64],
) -> Result<(), LpError> {
    let n = st.n;
    let Work { b, l, x, mem, acc } = work;
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
        Err(LpError::Numerical(format!(
            "block interior point: output {k}'s block is not positive definite"
        )))
    }
}

/// A localized LP's Schur complement Σ_k B_k⁻¹ as n×n, from the whole inverses: parallel
/// over columns j, the outputs in ascending order within each (the same sum in the same
/// order on any number of threads).
pub(super) fn localized_sums(st: &Structure, inv: &[Vec<f64>]) -> Vec<f64> {
    let n = st.n;
    let mut sums = vec![0.0; n * n];
    sums.par_chunks_mut(n)
        .enumerate()
        .for_each(|(j, a)| column_terms(st, inv, j, |i, v| a[i] += v));
    sums
}

/// Column j of a localized LP's Σ_k B_k⁻¹ term by term: `add(i, v)` for each output k in
/// ascending order, for each input i of j's component in k's layout (none where k has no
/// variable for j). The dense ([`localized_sums`]) and the sparse
/// (`sparse_schur::SchurPattern::sums`) sums add them in this order.
pub(super) fn column_terms(
    st: &Structure,
    inv: &[Vec<f64>],
    j: usize,
    mut add: impl FnMut(usize, f64),
) {
    for (k, bks) in inv.iter().enumerate() {
        let ly = st.layout(k);
        let (c, jb) = ly.place[j];
        if c == u32::MAX {
            continue;
        }
        let (c, jb) = (c as usize, jb as usize);
        let comp = &ly.comps[c];
        let m = comp.len();
        let col = &bks[ly.offs[c] + jb * m..ly.offs[c] + (jb + 1) * m];
        for (&i, &v) in comp.iter().zip(col) {
            add(i as usize, v);
        }
    }
}

/// The max loss's Schur complement blocks (loss rows kept): R = Σ B⁻¹, Q = Σ D B⁻¹,
/// P = Σ D B⁻¹ D (Θ_loss⁻¹ and the border of ΔL are added by [`factor`]), from the full
/// inverses; B⁻¹ is 0 between components.
fn cost_weighted_sums(st: &Structure, inv: &[Vec<f64>], ns: usize) -> Vec<f64> {
    // Parallel over inputs i (rows i and n + i), the sum over outputs k in ascending order:
    // every entry is added in the same order on any number of threads (spec/lp.md §4.7).
    let (n, kk) = (st.n, st.kk);
    let mut acc = vec![0.0; ns * ns];
    let (top, rest) = acc.split_at_mut(n * ns);
    top.par_chunks_mut(ns)
        .zip(rest[..n * ns].par_chunks_mut(ns))
        .enumerate()
        .for_each(|(i, (pi, ri))| {
            for (k, bks) in inv.iter().enumerate() {
                let ly = st.layout(k);
                let (c, a) = ly.place[i];
                if c == u32::MAX {
                    continue;
                }
                let (c, a) = (c as usize, a as usize);
                let comp = &ly.comps[c];
                let m = comp.len();
                let row = &bks[ly.offs[c] + a * m..ly.offs[c] + (a + 1) * m];
                let di = st.cost[i * kk + k];
                for (&j, &v) in comp.iter().zip(row) {
                    let j = j as usize;
                    let dj = st.cost[j * kk + k];
                    pi[j] += di * v * dj; // P
                    pi[n + j] -= di * v; // −Q
                    ri[j] -= v * dj; // −Qᵀ
                    ri[n + j] += v; // R
                }
            }
        });
    acc
}

pub(super) struct Direction {
    /// Relative residual of the reduced system after refinement.
    pub(super) accuracy: f64,
    pub(super) dx: Vec<f64>,
    pub(super) dy: Vec<f64>,
    pub(super) dw: Vec<f64>,
    /// Δs and Δz of the loss rows (max loss; the privacy rows' are recomputed by
    /// [`row_step`]).
    pub(super) ds_l: Vec<f64>,
    pub(super) dz_l: Vec<f64>,
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
) -> Result<(Vec<f64>, Vec<f64>), LpError> {
    let (n, kk) = (st.n, st.kk);
    if let (Schur::Kkt(kf), Some(kkt)) = (&f.schur, &st.kkt) {
        return kkt.solve(kf, r1, r2).ok_or_else(|| {
            LpError::Numerical(
                "block interior point: non-finite solve of the reduced system".into(),
            )
        });
    }
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
        LpError::Numerical(format!(
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
/// residual `tol`, then GMRES ([`gmres`]) if the refinement stopped above `need` (the
/// residual the iteration stops at) or left more than [`DUAL_SHARE`] of the dual residual
/// `rd`. `rp_l`: the loss rows' primal residual A_I x + s.
#[allow(clippy::too_many_arguments)]
pub(super) fn direction(
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
    need: f64,
) -> Result<Direction, LpError> {
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
    // The reduced system's residual (r1, r2) − A(Δx, Δy).
    let residual = |dx: &[f64], dy: &[f64]| {
        let (g, e) = apply_reduced(st, it, theta, dx, dy);
        let c1: Vec<f64> = r1.iter().zip(&g).map(|(a, b)| a - b).collect();
        let c2: Vec<f64> = r2.iter().zip(&e).map(|(a, b)| a - b).collect();
        (c1, c2)
    };
    let mut best: Option<(f64, Vec<f64>, Vec<f64>)> = None;
    for _ in 0..REFINE {
        let (c1, c2) = residual(&dx, &dy);
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
    // GMRES from the direction so far, to the absolute residual `goal` in at most `steps`
    // steps; kept if its residual is smaller.
    let nx = dx.len();
    let improve = |dx: &[f64], dy: &[f64], goal: f64, steps: usize| {
        let b: Vec<f64> = r1.iter().chain(&r2).copied().collect();
        let x = gmres(
            |x| {
                let (g, e) = apply_reduced(st, it, theta, &x[..nx], &x[nx..]);
                g.into_iter().chain(e).collect()
            },
            |r| {
                let (x, y) = reduced_solve(st, f, &r[..nx], &r[nx..])?;
                Ok(x.into_iter().chain(y).collect())
            },
            &b,
            dx.iter().chain(dy).copied().collect(),
            goal,
            steps,
        )?;
        let (gx, gy) = (x[..nx].to_vec(), x[nx..].to_vec());
        let (c1, c2) = residual(&gx, &gy);
        Ok::<_, LpError>((gx, gy, norm(&c1, &c2) / scale))
    };
    // Where the refinement stops short of what the iteration needs (the factor has lost
    // too much accuracy to be a contraction: near a degenerate optimum, spec/lp.md §4.7),
    // GMRES with the same factor as preconditioner, restarted while it gains.
    for _ in 0..GMRES_CYCLES {
        if accuracy <= need {
            break;
        }
        let (gx, gy, res) = improve(&dx, &dy, tol * scale, GMRES_STEPS)?;
        if !(res < accuracy) {
            break;
        }
        (dx, dy, accuracy) = (gx, gy, res);
    }
    // The error left in the direction's dual equations is what the dual residual settles
    // at: while it is above a tenth of the current dual residual (and above `tol`), one
    // short GMRES cycle.
    let res_d = rd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if accuracy > tol && accuracy * scale > DUAL_SHARE * res_d {
        let (gx, gy, res) = improve(
            &dx,
            &dy,
            (DUAL_SHARE * res_d).max(tol * scale),
            GMRES_DUAL_STEPS,
        )?;
        if res < accuracy {
            (dx, dy, accuracy) = (gx, gy, res);
        }
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

/// GMRES on the reduced system where the refinement leaves a direction less accurate than
/// the iteration needs ([`direction`]'s `need`): at most this many steps per cycle ...
const GMRES_STEPS: usize = 100;
/// ... and this many cycles (each restarted from the last, while it gains). MiniLM text
/// n = 200 (session 26): the working set's first solve stopped at iteration 52, gap
/// 9.4·10⁻⁶, on a direction whose refinement left a relative residual of 0.2; GMRES
/// brings such directions to 10⁻¹⁰–10⁻¹¹ and the solve on to 1.1·10⁻⁷.
const GMRES_CYCLES: usize = 3;
/// Where the direction is accurate enough to go on but its residual is above this share
/// of the current dual residual, one GMRES cycle of at most [`GMRES_DUAL_STEPS`] steps
/// ([`direction`]). NYC road n = 200 (session 26): the refinement left 10⁻⁶–10⁻⁵ of a
/// right side of order 1 (L's row), the dual residual settled at ≈ 3·10⁻⁷ while the
/// primal converged, and the last working set stopped at 3.2·10⁻⁷; with it every working
/// set converges and the certified gap is 1.8·10⁻⁸ (4.2·10⁻⁷).
const DUAL_SHARE: f64 = 0.1;
const GMRES_DUAL_STEPS: usize = 20;

/// GMRES (Saad & Schultz 1986) on A x = b, right-preconditioned by `solve` (x = P⁻¹u,
/// A P⁻¹ u = b), from `x0` until the 2-norm residual is below `goal` (which bounds the max
/// norm) or `steps` steps; the iterate with the least estimated residual of this cycle.
/// Here A is the reduced system ([`apply_reduced`]) and P⁻¹ the factor's solve
/// ([`reduced_solve`]).
fn gmres(
    apply: impl Fn(&[f64]) -> Vec<f64>,
    solve: impl Fn(&[f64]) -> Result<Vec<f64>, LpError>,
    b: &[f64],
    x0: Vec<f64>,
    goal: f64,
    steps: usize,
) -> Result<Vec<f64>, LpError> {
    let dotp = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let r0: Vec<f64> = b.iter().zip(apply(&x0)).map(|(a, b)| a - b).collect();
    let beta = dotp(&r0, &r0).sqrt();
    let mut x = x0;
    if !(beta > goal) || !beta.is_finite() {
        return Ok(x);
    }
    // Arnoldi basis v, the preconditioned vectors z = P⁻¹v, the Hessenberg columns reduced
    // by Givens rotations (cs, sn) to R, and the rotated right side g.
    let mut v: Vec<Vec<f64>> = vec![r0.iter().map(|a| a / beta).collect()];
    let mut zs: Vec<Vec<f64>> = vec![];
    let mut h: Vec<Vec<f64>> = vec![];
    let (mut cs, mut sn): (Vec<f64>, Vec<f64>) = (vec![], vec![]);
    let mut g = vec![beta];
    for j in 0..steps {
        let z = solve(&v[j])?;
        let mut w = apply(&z);
        zs.push(z);
        let mut col = vec![0.0; j + 2];
        for (i, vi) in v.iter().enumerate() {
            let hij = dotp(&w, vi);
            col[i] = hij;
            w.iter_mut().zip(vi).for_each(|(a, b)| *a -= hij * b);
        }
        let hn = dotp(&w, &w).sqrt();
        col[j + 1] = hn;
        for i in 0..j {
            let t = cs[i] * col[i] + sn[i] * col[i + 1];
            col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
            col[i] = t;
        }
        let r = (col[j] * col[j] + hn * hn).sqrt();
        let (c, s) = if r > 0.0 {
            (col[j] / r, hn / r)
        } else {
            (1.0, 0.0)
        };
        cs.push(c);
        sn.push(s);
        col[j] = r;
        col[j + 1] = 0.0;
        g.push(-s * g[j]);
        g[j] *= c;
        h.push(col);
        if g[j + 1].abs() <= goal || !(hn > 0.0) || !hn.is_finite() {
            break;
        }
        v.push(w.iter().map(|a| a / hn).collect());
    }
    // Back substitution R y = g (R's column l is h[l]), x += Σ y_j z_j.
    let m = h.len();
    let mut y = vec![0.0; m];
    for i in (0..m).rev() {
        let t = g[i] - (i + 1..m).map(|l| h[l][i] * y[l]).sum::<f64>();
        y[i] = t / h[i][i];
    }
    if y.iter().all(|v| v.is_finite()) {
        for (yj, zj) in y.iter().zip(&zs) {
            x.iter_mut().zip(zj).for_each(|(a, b)| *a += yj * b);
        }
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::super::sparse_schur::tests::local_structure_of_a_grid;
    use super::*;

    /// On a localized LP (the grid of `sparse_schur`'s tests, whose route is the whole
    /// reduced system's LDLᵀ), at the iterate its interior point reached (relative gap
    /// 10⁻³): the LDLᵀ's solve leaves a residual at rounding level on the unfactored
    /// operator ([`apply_reduced`]) at once, the blocks' route (inverses and the dense
    /// Schur complement, less accurate here: a residual of 0.27 on a solution of 10⁷)
    /// after its refinement, and the two solutions agree; absent variables do not move. A
    /// wrong sign of E's entries, a dropped θ term or a row written at another row's entry
    /// (planted by hand) fails it.
    #[test]
    fn the_reduced_systems_ldlt_solves_as_the_blocks_route_does() {
        local_structure_of_a_grid(|mut st, it| {
            assert!(st.kkt.is_some(), "the grid's route is the LDLᵀ");
            let (n, kk) = (st.n, st.kk);
            let theta: Vec<f64> = it.z.iter().zip(&it.s).map(|(z, s)| z / s).collect();
            let r1: Vec<f64> = (0..n * kk)
                .map(|j| {
                    if st.absent(j) {
                        0.0
                    } else {
                        ((j * 7919) % 13) as f64 - 6.0
                    }
                })
                .collect();
            let r2: Vec<f64> = (0..n).map(|u| ((u * 31) % 5) as f64 - 2.0).collect();
            // The relative residual max|r − A(Δx, Δy)| / max|(Δx, Δy)|, and the residual.
            let residual = |st: &Structure, dx: &[f64], dy: &[f64]| {
                let (g, e) = apply_reduced(st, &it, &theta, dx, dy);
                let c1: Vec<f64> = r1.iter().zip(&g).map(|(a, b)| a - b).collect();
                let c2: Vec<f64> = r2.iter().zip(&e).map(|(a, b)| a - b).collect();
                let res = c1.iter().chain(&c2).fold(0.0f64, |m, v| m.max(v.abs()));
                let big = dx.iter().chain(dy).fold(0.0f64, |m, v| m.max(v.abs()));
                (res / big, c1, c2)
            };
            let solve = |st: &Structure, f: &Factor, steps: usize| {
                let (mut dx, mut dy) = reduced_solve(st, f, &r1, &r2).unwrap();
                for _ in 0..steps {
                    let (_, c1, c2) = residual(st, &dx, &dy);
                    let (ex, ey) = reduced_solve(st, f, &c1, &c2).unwrap();
                    dx.iter_mut().zip(&ex).for_each(|(a, b)| *a += b);
                    dy.iter_mut().zip(&ey).for_each(|(a, b)| *a += b);
                }
                (dx, dy)
            };
            let pool = vec![std::sync::Mutex::new(Work::new(0, 0, 0))];
            let f = factor(&st, &it, &theta, None, &pool).unwrap();
            assert!(matches!(f.schur, Schur::Kkt(_)));
            let (dx, dy) = solve(&st, &f, 0);
            let (res, _, _) = residual(&st, &dx, &dy);
            assert!(res < 1e-12, "the LDLᵀ's relative residual {res}");
            let kkt = st.kkt.take();
            let pool = vec![std::sync::Mutex::new(Work::for_structure(&st))];
            let g = factor(&st, &it, &theta, None, &pool).unwrap();
            assert!(!matches!(g.schur, Schur::Kkt(_)));
            let (ex, ey) = solve(&st, &g, 10);
            let (res, _, _) = residual(&st, &ex, &ey);
            assert!(res < 1e-12, "the blocks' refined relative residual {res}");
            let big = dx.iter().chain(&dy).fold(0.0f64, |m, v| m.max(v.abs()));
            for (a, b) in dx.iter().chain(&dy).zip(ex.iter().chain(&ey)) {
                assert!((a - b).abs() <= 1e-8 * big, "{a} against {b}");
            }
            for j in (0..n * kk).filter(|&j| st.absent(j)) {
                assert_eq!(dx[j], 0.0, "an absent variable moves");
            }
            st.kkt = kkt;
        });
    }

    /// A 30×30 diagonally dominant non-symmetric A, preconditioned by 3·diag(A)⁻¹: the
    /// refinement x += P⁻¹(b − A x) diverges (I − P⁻¹A has eigenvalues near −2), GMRES
    /// with the same preconditioner solves it to the goal (at most 30 steps in exact
    /// arithmetic). Dropping a Givens rotation or the back substitution's coupling
    /// (planted) fails it.
    #[test]
    fn gmres_solves_where_the_refinement_diverges() {
        let m = 30;
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                a[i * m + j] = if i == j { 4.0 + rnd() } else { 0.4 * rnd() };
            }
        }
        let b: Vec<f64> = (0..m).map(|_| rnd()).collect();
        let apply = |x: &[f64]| -> Vec<f64> {
            (0..m)
                .map(|i| (0..m).map(|j| a[i * m + j] * x[j]).sum())
                .collect()
        };
        let solve = |r: &[f64]| Ok((0..m).map(|i| 3.0 * r[i] / a[i * m + i]).collect());
        let res = |x: &[f64]| -> f64 {
            let ax = apply(x);
            b.iter()
                .zip(&ax)
                .map(|(p, q)| (p - q) * (p - q))
                .sum::<f64>()
                .sqrt()
        };
        let mut x = vec![0.0; m];
        for _ in 0..30 {
            let r: Vec<f64> = b.iter().zip(apply(&x)).map(|(p, q)| p - q).collect();
            let d: Vec<f64> = solve(&r).unwrap();
            x.iter_mut().zip(d).for_each(|(p, q)| *p += q);
        }
        assert!(res(&x) > 1.0, "the refinement diverges here: {}", res(&x));
        let x = gmres(apply, solve, &b, vec![0.0; m], 1e-12, m).unwrap();
        assert!(res(&x) <= 1e-10, "GMRES residual {}", res(&x));
        // From a start that already meets the goal, nothing changes.
        let y = gmres(apply, solve, &b, x.clone(), 1e-6, m).unwrap();
        assert_eq!(x, y);
    }
}
