//! A primal–dual interior point for block-angular LPs (`spec/lp.md` §4.5): min cᵀx s.t.
//! A x ≤ b, x ≥ 0, where each variable belongs to one block or to the border, a *local*
//! row touches the variables of one block only, and the few *coupling* rows touch any.
//! ConstOPTMech's reduced LP (Imola et al. 2022 §3.2, (18)–(26)) has this shape: block w
//! is output column w (its weight Y_w and its free entries, u ∈ I(w)) with its rows
//! (22), (25) and (26); the 2n rows (18) and (20) couple the columns; the loss bound k is
//! the border. Clarabel's sparse LDLᵀ spent two thirds of `mdp build constopt`
//! (n = 400, r = 10) factorizing the fill that the dense coupling rows create.
//!
//! Newton's system on x, with D = X⁻¹W and Θ = ZS⁻¹, is
//!   (D + A_Lᵀ Θ_L A_L + A_Cᵀ Θ_C A_C) Δx = r.
//! The first two terms are block diagonal, H = diag(H_b): small dense blocks, factorized
//! (Cholesky, H_b = L_b L_bᵀ) in parallel. A block's variables are ordered with the
//! ones whose coupling columns are sparse (E) first; those are eliminated, and give the
//! Schur complement of the coupling rows
//!   S₀ = Θ_C⁻¹ + Σ_b V_E V_Eᵀ,  V_E = A_CE L_EE⁻ᵀ,
//! symmetric positive definite, whose V_E stay within the few rows their columns touch.
//! The dense ones (F: a ConstOPTMech weight Y_w is in every (18) and (20) row) are
//! *bordered*, like the border x_B: their Schur complements h̃_F = L_FF L_FFᵀ go to zero
//! when they are basic, and eliminating them put x/w ≈ 10¹⁰ rank-one terms into S₀ that
//! lost the rest of it (as `block_ipm`'s first attempt did with the loss bound). The
//! bordered unknowns G = (x_B, x_F), with columns Ã = [A_CB | A_CF − V_E L_FEᵀ], are
//! solved from T = K + Ãᵀ S₀⁻¹ Ã (K = D_B ⊕ diag_b h̃_F), dense, by faer's Cholesky.
//!
//! Mehrotra predictor–corrector from an infeasible start. The factorization is of the
//! system regularized by δ on Θ⁻¹ and ρ on D, and each direction is solved on the
//! *augmented* system [[D, Aᵀ], [A, −Θ⁻¹]] by GMRES preconditioned with it: refining the
//! normal system stalled, since its right-hand side carries Θ·r_p with Θ up to 10¹⁴.
//! The LP must have an interior of some width: a near-equality (ConstOPTMech's slab
//! b·Y_w ≤ M_uw ≤ a·Y_w with a ≈ b) drives its duals and Θ to 10¹⁴ and stalls the method
//! at a gap of 10⁻⁷; `mechanisms::constopt` reparametrizes those slabs before solving.
//! The answer is a float candidate like Clarabel's: the caller repairs and proves the
//! mechanism exactly.

use super::sparse::{Sense, Solution, SparseLp};
use super::vector::{axpy, max_step};
use super::LpError;
use crate::progress::Progress;
use rayon::prelude::*;

/// Largest number of iterations.
const MAX_ITER: usize = 200;
/// Relative tolerance on the gap and on the primal and dual residuals (Clarabel's,
/// [`super::sparse::TOL`], for the same answer).
pub const TOL: f64 = super::sparse::TOL;
/// If the largest of the three has not improved for `STALL` iterations, the best iterate
/// is the answer when it is within this (on cities40, r = 3, the dual residual stays at
/// 3·10⁻⁸ while the gap is 3·10⁻⁹ and the primal residual 3·10⁻¹⁶); an error otherwise.
pub const ACCEPT: f64 = 1e-7;
const STALL: usize = 10;
/// A variable whose column has more than this many coupling non-zeros is *dense*: it is
/// bordered (module doc), not eliminated.
const DENSE_COLUMN: usize = 16;
/// Fraction of the step to the boundary taken.
const STEP: f64 = 0.995;
/// Most GMRES steps per restart, and the relative residual that ends them near the
/// optimum ...
const KRYLOV: usize = 20;
const GMRES_TOL: f64 = 1e-12;
/// ... and at most this far from it: a direction needs a relative residual of 10⁻⁴ of
/// the iterate's error (its largest relative gap or residual), within [`GMRES_TOL`] and
/// this (inexact Newton; spec/lp.md §4.5).
const GMRES_TOL_FAR: f64 = 1e-8;
/// Relative diagonal shift of the dense matrices factorized (a zero pivot of a
/// singular block is not fatal).
const REG: f64 = 1e-13;
/// Static regularization of the factorized system: δ added to the rows' Θ⁻¹ = s/z and ρ
/// to D = w/x. GMRES on the unregularized system removes its effect on the directions.
const REG_DUAL: f64 = 1e-9;
const REG_PRIMAL: f64 = 1e-9;
/// GMRES restarts per direction.
const RESTARTS: usize = 3;

/// One block: its variables, sparse coupling columns first.
struct Block {
    vars: Vec<usize>,
    /// `vars[dense..]` have dense coupling columns.
    dense: usize,
    /// Its local rows.
    rows: Vec<usize>,
    /// The coupling rows (their positions among the coupling rows) that its sparse
    /// variables touch, sorted.
    touched: Vec<u32>,
}

/// The LP in ≤ form with its block structure.
pub struct BlockAngular {
    nv: usize,
    c: Vec<f64>,
    b: Vec<f64>,
    /// Rows (CSR) and columns (CSC) of A.
    rp: Vec<usize>,
    rc: Vec<(u32, f64)>,
    cp: Vec<usize>,
    cr: Vec<(u32, f64)>,
    /// The coupling rows.
    coupling: Vec<usize>,
    /// The coupling part of A's columns (CSC over the coupling rows' positions).
    ccp: Vec<usize>,
    ccr: Vec<(u32, f64)>,
    blocks: Vec<Block>,
    border: Vec<usize>,
    /// Each variable's index in its block (unused for the border).
    place: Vec<u32>,
    /// Each block's first dense variable among the bordered unknowns (the border
    /// first); the last entry is their number.
    goff: Vec<usize>,
}

impl BlockAngular {
    /// The structure of `lp` where `block_of[j]` is variable j's block (`None`: border).
    /// A row is local when its variables all lie in one block. Equality rows are not
    /// supported (an error).
    pub fn new(lp: &SparseLp, block_of: &[Option<u32>]) -> Result<BlockAngular, LpError> {
        let nv = lp.n_vars();
        if block_of.len() != nv {
            return Err(LpError::Unsupported(format!(
                "block-angular: {} block labels for {nv} variables",
                block_of.len()
            )));
        }
        let nb = block_of
            .iter()
            .flatten()
            .map(|&b| b as usize + 1)
            .max()
            .unwrap_or(0);
        let (mut rp, mut rc, mut b) = (vec![0], vec![], vec![]);
        let mut local_of = Vec::with_capacity(lp.rows.len());
        for row in &lp.rows {
            let sign = match row.sense {
                Sense::Le => 1.0,
                Sense::Ge => -1.0,
                Sense::Eq => {
                    return Err(LpError::Unsupported(
                        "block-angular: equality rows are not supported".into(),
                    ))
                }
            };
            rc.extend(row.coefs.iter().map(|&(j, a)| (j as u32, sign * a)));
            rp.push(rc.len());
            b.push(sign * row.rhs);
            let mut blk = row.coefs.iter().map(|&(j, _)| block_of[j]);
            let first = blk.next().flatten();
            local_of.push(first.filter(|&f| blk.all(|o| o == Some(f))));
        }
        let mut cp = vec![0usize; nv + 1];
        for &(j, _) in &rc {
            cp[j as usize + 1] += 1;
        }
        for j in 0..nv {
            cp[j + 1] += cp[j];
        }
        let mut cr = vec![(0u32, 0.0); rc.len()];
        let mut next = cp.clone();
        for i in 0..lp.rows.len() {
            for &(j, a) in &rc[rp[i]..rp[i + 1]] {
                cr[next[j as usize]] = (i as u32, a);
                next[j as usize] += 1;
            }
        }
        let coupling: Vec<usize> = (0..lp.rows.len())
            .filter(|&i| local_of[i].is_none())
            .collect();
        let mut cpos = vec![None; lp.rows.len()];
        for (p, &i) in coupling.iter().enumerate() {
            cpos[i] = Some(p as u32);
        }
        let mut ccp = vec![0usize];
        let mut ccr = vec![];
        for j in 0..nv {
            ccr.extend(
                cr[cp[j]..cp[j + 1]]
                    .iter()
                    .filter_map(|&(i, a)| cpos[i as usize].map(|p| (p, a))),
            );
            ccp.push(ccr.len());
        }
        let ccount = |j: usize| ccp[j + 1] - ccp[j];
        let mut members: Vec<Vec<usize>> = vec![vec![]; nb];
        let mut border = vec![];
        for (j, &bl) in block_of.iter().enumerate() {
            match bl {
                Some(bl) => members[bl as usize].push(j),
                None => border.push(j),
            }
        }
        let mut place = vec![0u32; nv];
        let mut rows_of: Vec<Vec<usize>> = vec![vec![]; nb];
        for (i, l) in local_of.iter().enumerate() {
            if let Some(l) = l {
                rows_of[*l as usize].push(i);
            }
        }
        let mut blocks = Vec::with_capacity(nb);
        for (mut vars, rows) in members.into_iter().zip(rows_of) {
            vars.sort_by_key(|&j| (ccount(j) > DENSE_COLUMN, j));
            let dense = vars
                .iter()
                .position(|&j| ccount(j) > DENSE_COLUMN)
                .unwrap_or(vars.len());
            let mut touched: Vec<u32> = vars[..dense]
                .iter()
                .flat_map(|&j| ccr[ccp[j]..ccp[j + 1]].iter().map(|&(p, _)| p))
                .collect();
            touched.sort_unstable();
            touched.dedup();
            for (t, &j) in vars.iter().enumerate() {
                place[j] = t as u32;
            }
            blocks.push(Block {
                vars,
                dense,
                rows,
                touched,
            });
        }
        let goff = std::iter::once(border.len())
            .chain(blocks.iter().scan(border.len(), |o, bk| {
                *o += bk.vars.len() - bk.dense;
                Some(*o)
            }))
            .collect();
        Ok(BlockAngular {
            nv,
            c: lp.cost.clone(),
            b,
            rp,
            rc,
            cp,
            cr,
            coupling,
            ccp,
            ccr,
            blocks,
            border,
            place,
            goff,
        })
    }

    fn m(&self) -> usize {
        self.b.len()
    }

    /// A x.
    fn ax(&self, x: &[f64]) -> Vec<f64> {
        (0..self.m())
            .into_par_iter()
            .map(|i| {
                self.rc[self.rp[i]..self.rp[i + 1]]
                    .iter()
                    .map(|&(j, a)| a * x[j as usize])
                    .sum()
            })
            .collect()
    }

    /// Aᵀ z.
    fn atz(&self, z: &[f64]) -> Vec<f64> {
        (0..self.nv)
            .into_par_iter()
            .map(|j| {
                self.cr[self.cp[j]..self.cp[j + 1]]
                    .iter()
                    .map(|&(i, a)| a * z[i as usize])
                    .sum()
            })
            .collect()
    }

    /// The coupling part of variable j's column: (position among the coupling rows, a).
    fn ccol(&self, j: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.ccr[self.ccp[j]..self.ccp[j + 1]]
            .iter()
            .map(|&(p, a)| (p as usize, a))
    }

    /// Factorize the normal matrix for D = w/x and θ = z/s (module doc).
    fn factor(&self, d: &[f64], theta: &[f64]) -> Option<Factor> {
        use faer::{MatMut, MatRef, Par};
        let mc = self.coupling.len();
        let ng = self.n_bordered();
        // Per block: L_b, the sparse part of V_E V_Eᵀ over `touched`, and Ã's columns of its
        // dense variables.
        let parts: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = self
            .blocks
            .par_iter()
            .map(|bk| self.factor_block(bk, d, theta))
            .collect::<Option<_>>()?;
        let mut s0 = vec![0.0; mc * mc];
        for (p, &i) in self.coupling.iter().enumerate() {
            s0[p * mc + p] = 1.0 / theta[i];
        }
        // G = [A_CB | Ã] and K = diag(D_B) ⊕ diag_b(L_FF L_FFᵀ).
        let mut g = vec![0.0; mc * ng];
        let mut k = vec![0.0; ng * ng];
        for (t, &j) in self.border.iter().enumerate() {
            for (p, a) in self.ccol(j) {
                g[t * mc + p] += a;
            }
            k[t * ng + t] = d[j];
        }
        for ((bk, (l, sp, at)), &o) in self.blocks.iter().zip(&parts).zip(&self.goff) {
            let t = bk.touched.len();
            for (a, &ra) in bk.touched.iter().enumerate() {
                for (bb, &rb) in bk.touched.iter().enumerate() {
                    s0[rb as usize * mc + ra as usize] += sp[a * t + bb];
                }
            }
            g[o * mc..o * mc + at.len()].copy_from_slice(at);
            let m = bk.vars.len();
            for fa in bk.dense..m {
                for fb in bk.dense..m {
                    let v: f64 = (bk.dense..=fa.min(fb))
                        .map(|c| l[c * m + fa] * l[c * m + fb])
                        .sum();
                    k[(o + fb - bk.dense) * ng + o + fa - bk.dense] = v;
                }
            }
        }
        for p in 0..mc {
            s0[p * mc + p] *= 1.0 + REG;
        }
        let schur = faer::linalg::solvers::Llt::new(
            MatRef::from_column_major_slice(&s0, mc, mc),
            faer::Side::Lower,
        )
        .ok()?;
        drop(s0);
        // W = L_S⁻¹ G and T = K + Wᵀ W.
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            schur.L(),
            MatMut::from_column_major_slice_mut(&mut g, mc, ng),
            Par::Seq,
        );
        let w = g;
        faer::linalg::matmul::matmul(
            MatMut::from_column_major_slice_mut(&mut k, ng, ng),
            faer::Accum::Add,
            MatRef::from_column_major_slice(&w, mc, ng).transpose(),
            MatRef::from_column_major_slice(&w, mc, ng),
            1.0,
            Par::Seq,
        );
        for a in 0..ng {
            k[a * ng + a] *= 1.0 + REG;
        }
        let t = faer::linalg::solvers::Llt::new(
            MatRef::from_column_major_slice(&k, ng, ng),
            faer::Side::Lower,
        )
        .ok()?;
        Some(Factor {
            l: parts.into_iter().map(|p| p.0).collect(),
            schur,
            w,
            t,
        })
    }

    /// The bordered unknowns: the border, then every block's dense variables.
    fn n_bordered(&self) -> usize {
        *self.goff.last().unwrap_or(&self.border.len())
    }

    /// H_b's Cholesky factor L (its E-rows first), the sparse V_E V_Eᵀ over `touched`
    /// (V_E = A_CE L_EE⁻ᵀ), and Ã_CF = A_CF − V_E L_FEᵀ (column-major, mc rows).
    fn factor_block(
        &self,
        bk: &Block,
        d: &[f64],
        theta: &[f64],
    ) -> Option<(Vec<f64>, Vec<f64>, Vec<f64>)> {
        let m = bk.vars.len();
        let mc = self.coupling.len();
        let mut h = vec![0.0; m * m];
        for (t, &j) in bk.vars.iter().enumerate() {
            h[t * m + t] = d[j];
        }
        for &i in &bk.rows {
            let row = &self.rc[self.rp[i]..self.rp[i + 1]];
            for &(ja, a) in row {
                let pa = self.place[ja as usize] as usize;
                for &(jb, bb) in row {
                    let pb = self.place[jb as usize] as usize;
                    h[pb * m + pa] += theta[i] * a * bb;
                }
            }
        }
        for t in 0..m {
            h[t * m + t] *= 1.0 + REG;
        }
        let l = cholesky(h, m)?;
        // Rows of V_Eᵀ = L_EE⁻¹ A_CEᵀ over `touched`.
        let nt = bk.touched.len();
        let mut vs = vec![0.0; bk.dense * nt];
        for t in 0..bk.dense {
            let (done, row) = vs.split_at_mut(t * nt);
            let row = &mut row[..nt];
            for (p, a) in self.ccol(bk.vars[t]) {
                let at = bk.touched.binary_search(&(p as u32)).expect("touched row");
                row[at] += a;
            }
            for i in 0..t {
                let lti = l[i * m + t];
                if lti != 0.0 {
                    for (r, v) in row.iter_mut().zip(&done[i * nt..(i + 1) * nt]) {
                        *r -= lti * v;
                    }
                }
            }
            let ltt = l[t * m + t];
            row.iter_mut().for_each(|r| *r /= ltt);
        }
        let mut at = vec![0.0; (m - bk.dense) * mc];
        for t in bk.dense..m {
            let col = &mut at[(t - bk.dense) * mc..(t - bk.dense + 1) * mc];
            for (p, a) in self.ccol(bk.vars[t]) {
                col[p] += a;
            }
            for i in 0..bk.dense {
                let lti = l[i * m + t];
                if lti != 0.0 {
                    for (v, &r) in vs[i * nt..(i + 1) * nt].iter().zip(&bk.touched) {
                        col[r as usize] -= lti * v;
                    }
                }
            }
        }
        let mut sp = vec![0.0; nt * nt];
        for t in 0..bk.dense {
            let v = &vs[t * nt..(t + 1) * nt];
            for a in 0..nt {
                if v[a] != 0.0 {
                    for bb in 0..nt {
                        sp[a * nt + bb] += v[a] * v[bb];
                    }
                }
            }
        }
        Some((l, sp, at))
    }

    /// Δx = N⁻¹ r for the factorized N (module doc).
    fn apply_inverse(&self, f: &Factor, r: &[f64]) -> Vec<f64> {
        use faer::linalg::solvers::Solve;
        use faer::{MatMut, MatRef, Par};
        let mc = self.coupling.len();
        let ng = self.n_bordered();
        // Per block: t_E = L_EE⁻¹ r_E; g = Σ_b A_CE L_EE⁻ᵀ t_E; r̃_F = r_F − L_FE t_E.
        let te: Vec<Vec<f64>> = self
            .blocks
            .par_iter()
            .zip(&f.l)
            .map(|(bk, l)| {
                let m = bk.vars.len();
                let mut v: Vec<f64> = bk.vars.iter().map(|&j| r[j]).collect();
                lower_solve(l, m, bk.dense, &mut v);
                v
            })
            .collect();
        let mut g = vec![0.0; mc];
        let mut rg = vec![0.0; ng];
        for (t, &j) in self.border.iter().enumerate() {
            rg[t] = r[j];
        }
        for ((bk, (l, v)), &o) in self.blocks.iter().zip(f.l.iter().zip(&te)).zip(&self.goff) {
            let m = bk.vars.len();
            let mut u = v[..bk.dense].to_vec();
            upper_solve(l, m, bk.dense, &mut u);
            for (&j, &uj) in bk.vars[..bk.dense].iter().zip(&u) {
                for (p, a) in self.ccol(j) {
                    g[p] += a * uj;
                }
            }
            for fa in bk.dense..m {
                rg[o + fa - bk.dense] =
                    r[bk.vars[fa]] - (0..bk.dense).map(|c| l[c * m + fa] * v[c]).sum::<f64>();
            }
        }
        // h = L_S⁻¹ g; T Δx_G = r̃_G − Wᵀ h; Δy = L_S⁻ᵀ (h + W Δx_G).
        let lsm = f.schur.L();
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            lsm,
            MatMut::from_column_major_slice_mut(&mut g, mc, 1),
            Par::Seq,
        );
        let w = MatRef::from_column_major_slice(&f.w, mc, ng);
        for (a, x) in rg.iter_mut().enumerate() {
            *x -= (0..mc).map(|p| w[(p, a)] * g[p]).sum::<f64>();
        }
        f.t.solve_in_place(MatMut::from_column_major_slice_mut(&mut rg, ng, 1));
        let xg = rg;
        for (a, &xa) in xg.iter().enumerate() {
            if xa != 0.0 {
                for (p, y) in g.iter_mut().enumerate() {
                    *y += w[(p, a)] * xa;
                }
            }
        }
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(
            lsm.transpose(),
            MatMut::from_column_major_slice_mut(&mut g, mc, 1),
            Par::Seq,
        );
        let dy = g;
        // Δx_E = L_EE⁻ᵀ (L_EE⁻¹ (r_E − A_CEᵀ Δy) − L_FEᵀ Δx_F).
        let mut dx = vec![0.0; self.nv];
        let parts: Vec<Vec<f64>> = self
            .blocks
            .par_iter()
            .zip(&f.l)
            .zip(&self.goff)
            .map(|((bk, l), &o)| {
                let m = bk.vars.len();
                let mut v: Vec<f64> = bk.vars[..bk.dense]
                    .iter()
                    .map(|&j| r[j] - self.ccol(j).map(|(p, a)| a * dy[p]).sum::<f64>())
                    .collect();
                lower_solve(l, m, bk.dense, &mut v);
                for (c, vc) in v.iter_mut().enumerate() {
                    *vc -= (bk.dense..m)
                        .map(|fa| l[c * m + fa] * xg[o + fa - bk.dense])
                        .sum::<f64>();
                }
                upper_solve(l, m, bk.dense, &mut v);
                v.extend((bk.dense..m).map(|fa| xg[o + fa - bk.dense]));
                v
            })
            .collect();
        for (bk, v) in self.blocks.iter().zip(parts) {
            for (&j, vj) in bk.vars.iter().zip(v) {
                dx[j] = vj;
            }
        }
        for (&j, &xt) in self.border.iter().zip(&xg) {
            dx[j] = xt;
        }
        dx
    }

    /// One solve of the augmented system [[D, Aᵀ], [A, −Θ⁻¹]] (Δx, Δz) = (f₁, f₂)
    /// through the normal matrix: N Δx = f₁ + AᵀΘ f₂, Δz = Θ (A Δx − f₂).
    fn solve_augmented_once(
        &self,
        f: &Factor,
        theta: &[f64],
        f1: &[f64],
        f2: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let tf: Vec<f64> = theta.iter().zip(f2).map(|(t, v)| t * v).collect();
        let r: Vec<f64> = self.atz(&tf).iter().zip(f1).map(|(a, b)| a + b).collect();
        let dx = self.apply_inverse(f, &r);
        let adx = self.ax(&dx);
        let dz = (0..adx.len())
            .map(|i| theta[i] * (adx[i] - f2[i]))
            .collect();
        (dx, dz, adx)
    }

    /// K v for the augmented matrix K = [[D, Aᵀ], [A, −Θ⁻¹]] (v = (v_x, v_z) stacked),
    /// with A v_x given when it is already known.
    fn apply_augmented(
        &self,
        d: &[f64],
        theta: &[f64],
        v: &[f64],
        ax: Option<Vec<f64>>,
    ) -> Vec<f64> {
        let (vx, vz) = v.split_at(self.nv);
        let atz = self.atz(vz);
        let ax = ax.unwrap_or_else(|| self.ax(vx));
        let mut out: Vec<f64> = (0..self.nv).map(|j| d[j] * vx[j] + atz[j]).collect();
        out.extend((0..vz.len()).map(|i| ax[i] - vz[i] / theta[i]));
        out
    }

    /// The augmented system K (Δx, Δz) = (f₁, f₂) by restarted GMRES preconditioned (on
    /// the right) with the regularized factorization ([`Self::solve_augmented_once`]), to
    /// the relative residual `tol`. Plain iterative refinement with it contracted too
    /// slowly near the optimum, and the dual residual stopped falling at 10⁻⁷. `None` if
    /// not finite.
    #[allow(clippy::too_many_arguments)]
    fn solve_augmented(
        &self,
        f: &Factor,
        d: &[f64],
        theta: &[f64],
        treg: &[f64],
        f1: &[f64],
        f2: &[f64],
        tol: f64,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let nv = self.nv;
        // The preconditioner's solution and A times its x part (which K then reuses).
        let prec = |r: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let (r1, r2) = r.split_at(nv);
            let (mut x, z, ax) = self.solve_augmented_once(f, treg, r1, r2);
            x.extend(z);
            (x, ax)
        };
        let op = |v: &[f64], ax: Option<Vec<f64>>| self.apply_augmented(d, theta, v, ax);
        let nrm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let b: Vec<f64> = f1.iter().chain(f2).copied().collect();
        let bn = nrm(&b).max(f64::MIN_POSITIVE);
        let (mut x, ax0) = prec(&b);
        let mut ax0 = Some(ax0);
        for _ in 0..RESTARTS {
            let kx = op(&x, ax0.take());
            let r: Vec<f64> = b.iter().zip(&kx).map(|(a, c)| a - c).collect();
            let beta = nrm(&r);
            if !beta.is_finite() {
                return None;
            }
            if beta <= tol * bn {
                break;
            }
            // Arnoldi on K P with modified Gram–Schmidt and Givens rotations.
            let mut v: Vec<Vec<f64>> = vec![r.iter().map(|a| a / beta).collect()];
            let mut h: Vec<Vec<f64>> = vec![];
            let (mut cs, mut sn): (Vec<f64>, Vec<f64>) = (vec![], vec![]);
            let mut gvec = vec![beta];
            let mut zs: Vec<Vec<f64>> = vec![];
            for k in 0..KRYLOV {
                let (z, az) = prec(&v[k]);
                let mut w = op(&z, Some(az));
                zs.push(z);
                let mut hk = vec![0.0; k + 2];
                for (i, vi) in v.iter().enumerate() {
                    let hik: f64 = w.iter().zip(vi).map(|(a, c)| a * c).sum();
                    hk[i] = hik;
                    w.iter_mut().zip(vi).for_each(|(a, c)| *a -= hik * c);
                }
                let wn = nrm(&w);
                hk[k + 1] = wn;
                for i in 0..k {
                    let t = cs[i] * hk[i] + sn[i] * hk[i + 1];
                    hk[i + 1] = -sn[i] * hk[i] + cs[i] * hk[i + 1];
                    hk[i] = t;
                }
                let den = (hk[k] * hk[k] + hk[k + 1] * hk[k + 1]).sqrt();
                if !den.is_finite() || den <= 0.0 {
                    return None;
                }
                cs.push(hk[k] / den);
                sn.push(hk[k + 1] / den);
                hk[k] = den;
                hk[k + 1] = 0.0;
                gvec.push(-sn[k] * gvec[k]);
                gvec[k] *= cs[k];
                h.push(hk);
                let res = gvec[k + 1].abs();
                if res <= tol * bn || wn == 0.0 {
                    break;
                }
                v.push(w.iter().map(|a| a / wn).collect());
            }
            // y = H⁻¹ g (upper triangular), x += Σ y_k z_k.
            let kk = h.len();
            let mut y = vec![0.0; kk];
            for i in (0..kk).rev() {
                let mut t = gvec[i];
                for j in i + 1..kk {
                    t -= h[j][i] * y[j];
                }
                y[i] = t / h[i][i];
            }
            for (yk, zk) in y.iter().zip(&zs) {
                x.iter_mut().zip(zk).for_each(|(a, c)| *a += yk * c);
            }
        }
        if !x.iter().all(|v| v.is_finite()) {
            return None;
        }
        let dz = x.split_off(nv);
        Some((x, dz))
    }
}

/// The factorized normal matrix of one iteration.
struct Factor {
    /// Each block's Cholesky factor (column-major, lower).
    l: Vec<Vec<f64>>,
    /// S₀ = Θ_C⁻¹ + Σ_b V_E V_Eᵀ, factorized.
    schur: faer::linalg::solvers::Llt<f64>,
    /// W = L_S⁻¹ G (mc × bordered, column-major) and T = K + WᵀW, factorized.
    w: Vec<f64>,
    t: faer::linalg::solvers::Llt<f64>,
}

/// The lower Cholesky factor of the m×m symmetric `a` (column-major, lower triangle
/// read); `None` on a non-positive pivot.
fn cholesky(mut a: Vec<f64>, m: usize) -> Option<Vec<f64>> {
    for j in 0..m {
        let mut djj = a[j * m + j];
        for k in 0..j {
            djj -= a[k * m + j] * a[k * m + j];
        }
        if !djj.is_finite() || djj <= 0.0 {
            return None;
        }
        let ljj = djj.sqrt();
        a[j * m + j] = ljj;
        for i in j + 1..m {
            let mut v = a[j * m + i];
            for k in 0..j {
                v -= a[k * m + i] * a[k * m + j];
            }
            a[j * m + i] = v / ljj;
        }
        for i in 0..j {
            a[j * m + i] = 0.0;
        }
    }
    Some(a)
}

/// v ← L⁻¹ v for the leading k×k part of the m×m lower factor `l`.
fn lower_solve(l: &[f64], m: usize, k: usize, v: &mut [f64]) {
    for j in 0..k {
        v[j] /= l[j * m + j];
        let vj = v[j];
        for i in j + 1..k {
            v[i] -= l[j * m + i] * vj;
        }
    }
}

/// v ← L⁻ᵀ v for the leading k×k part of the m×m lower factor `l`.
fn upper_solve(l: &[f64], m: usize, k: usize, v: &mut [f64]) {
    for j in (0..k).rev() {
        let mut s = v[j];
        for i in j + 1..k {
            s -= l[j * m + i] * v[i];
        }
        v[j] = s / l[j * m + j];
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The primal–dual iterate: x, w for x ≥ 0; s, z for the rows.
struct Iterate {
    x: Vec<f64>,
    w: Vec<f64>,
    s: Vec<f64>,
    z: Vec<f64>,
}

struct Direction {
    dx: Vec<f64>,
    dw: Vec<f64>,
    ds: Vec<f64>,
    dz: Vec<f64>,
}

/// Solve `lp` (module doc) with `block_of` its variables' blocks (`None`: border); with
/// `MDP_BLOCK_DEBUG` set, each iteration's gap, residuals and steps are notes on `progress`.
pub fn solve(
    lp: &SparseLp,
    block_of: &[Option<u32>],
    progress: &dyn Progress,
) -> Result<Solution, LpError> {
    let ba = BlockAngular::new(lp, block_of)?;
    ba.solve(progress)
}

impl BlockAngular {
    /// Mehrotra predictor–corrector to relative gap and residuals [`TOL`] (the
    /// `MDP_BLOCK_DEBUG` notes on `progress`, [`solve`]).
    pub fn solve(&self, progress: &dyn Progress) -> Result<Solution, LpError> {
        let (nv, m) = (self.nv, self.m());
        let mut it = Iterate {
            x: vec![1.0; nv],
            w: vec![1.0; nv],
            s: vec![1.0; m],
            z: vec![1.0; m],
        };
        let (bn, cn) = (norm_inf(&self.b), norm_inf(&self.c));
        let debug = std::env::var_os("MDP_BLOCK_DEBUG").is_some();
        let fail = |what: &str, iter: usize| {
            Err(LpError::Stopped(format!(
                "block-angular interior point: {what} at iteration {iter}"
            )))
        };
        // The best iterate so far: (max of gap and residuals, x, objective, z, iteration).
        let mut best: (f64, Vec<f64>, f64, Vec<f64>, usize) =
            (f64::INFINITY, vec![], 0.0, vec![], 0);
        let answer = |best: (f64, Vec<f64>, f64, Vec<f64>, usize)| Solution {
            x: best.1,
            objective: best.2,
            duals: best.3,
        };
        for iter in 0..MAX_ITER {
            let ax = self.ax(&it.x);
            let rp: Vec<f64> = (0..m).map(|i| ax[i] + it.s[i] - self.b[i]).collect();
            let atz = self.atz(&it.z);
            let rd: Vec<f64> = (0..nv).map(|j| self.c[j] + atz[j] - it.w[j]).collect();
            let pobj = dot(&self.c, &it.x);
            let dobj = -dot(&self.b, &it.z);
            let mu = (dot(&it.s, &it.z) + dot(&it.x, &it.w)) / (m + nv) as f64;
            let (ep, ed) = (norm_inf(&rp) / (1.0 + bn), norm_inf(&rd) / (1.0 + cn));
            let gap = (pobj - dobj).abs() / (1.0 + pobj.abs());
            if debug {
                progress.note(&format!(
                    "block-angular {iter}: pobj {pobj:.10e} gap {gap:.2e} res_p {ep:.2e} res_d {ed:.2e} mu {mu:.2e}"
                ));
            }
            if !(gap.is_finite() && ep.is_finite() && ed.is_finite()) {
                return fail("non-finite iterate", iter);
            }
            let err = gap.max(ep).max(ed);
            if err < best.0 {
                best = (err, it.x.clone(), pobj, it.z.clone(), iter);
            }
            if err <= TOL {
                return Ok(answer(best));
            }
            if iter >= best.4 + STALL {
                if best.0 <= ACCEPT {
                    return Ok(answer(best));
                }
                return fail(
                    &format!("stalled at a relative gap or residual of {:.1e}", best.0),
                    iter,
                );
            }
            let theta: Vec<f64> = it.z.iter().zip(&it.s).map(|(z, s)| z / s).collect();
            let d: Vec<f64> = it.w.iter().zip(&it.x).map(|(w, x)| w / x).collect();
            let tol = (1e-4 * err).clamp(GMRES_TOL, GMRES_TOL_FAR);
            // The factorization's system is regularized (static, as Clarabel's): the
            // rows' Θ⁻¹ + δ and D + ρ; GMRES on the true augmented system removes it.
            let treg: Vec<f64> = theta.iter().map(|t| 1.0 / (1.0 / t + REG_DUAL)).collect();
            let dreg: Vec<f64> = d.iter().map(|v| v + REG_PRIMAL).collect();
            let Some(f) = self.factor(&dreg, &treg) else {
                return fail("non-positive pivot", iter);
            };
            let direction = |rsz: &[f64], rxw: &[f64]| -> Option<Direction> {
                // [[D, Aᵀ], [A, −Θ⁻¹]] (Δx, Δz) = (X⁻¹ r_xw − r_d, −r_p − Z⁻¹ r_sz).
                let f1: Vec<f64> = (0..nv).map(|j| rxw[j] / it.x[j] - rd[j]).collect();
                let f2: Vec<f64> = (0..m).map(|i| -rp[i] - rsz[i] / it.z[i]).collect();
                let (dx, dz) = self.solve_augmented(&f, &d, &theta, &treg, &f1, &f2, tol)?;
                let adx = self.ax(&dx);
                let ds: Vec<f64> = (0..m).map(|i| -rp[i] - adx[i]).collect();
                let dw = (0..nv)
                    .map(|j| (rxw[j] - it.w[j] * dx[j]) / it.x[j])
                    .collect();
                Some(Direction { dx, dw, ds, dz })
            };
            let steps = |dr: &Direction| {
                let ap = max_step(&it.x, &dr.dx).min(max_step(&it.s, &dr.ds));
                let ad = max_step(&it.w, &dr.dw).min(max_step(&it.z, &dr.dz));
                (ap, ad)
            };
            let rsz: Vec<f64> = it.s.iter().zip(&it.z).map(|(s, z)| -s * z).collect();
            let rxw: Vec<f64> = it.x.iter().zip(&it.w).map(|(x, w)| -x * w).collect();
            let Some(aff) = direction(&rsz, &rxw) else {
                return fail("non-finite direction", iter);
            };
            let (ap, ad) = steps(&aff);
            let (ap, ad) = (ap.min(1.0), ad.min(1.0));
            let mu_aff = ((0..m)
                .map(|i| (it.s[i] + ap * aff.ds[i]) * (it.z[i] + ad * aff.dz[i]))
                .sum::<f64>()
                + (0..nv)
                    .map(|j| (it.x[j] + ap * aff.dx[j]) * (it.w[j] + ad * aff.dw[j]))
                    .sum::<f64>())
                / (m + nv) as f64;
            let sigma = (mu_aff / mu).clamp(0.0, 1.0).powi(3);
            let rsz: Vec<f64> = (0..m)
                .map(|i| sigma * mu - it.s[i] * it.z[i] - aff.ds[i] * aff.dz[i])
                .collect();
            let rxw: Vec<f64> = (0..nv)
                .map(|j| sigma * mu - it.x[j] * it.w[j] - aff.dx[j] * aff.dw[j])
                .collect();
            let Some(dr) = direction(&rsz, &rxw) else {
                return fail("non-finite direction", iter);
            };
            let (ap, ad) = steps(&dr);
            let (ap, ad) = ((STEP * ap).min(1.0), (STEP * ad).min(1.0));
            if debug {
                progress.note(&format!("  steps {ap:.3} {ad:.3} sigma {sigma:.2e}"));
            }
            axpy(&mut it.x, &dr.dx, ap);
            axpy(&mut it.s, &dr.ds, ap);
            axpy(&mut it.w, &dr.dw, ad);
            axpy(&mut it.z, &dr.dz, ad);
        }
        if best.0 <= ACCEPT {
            return Ok(answer(best));
        }
        fail("iteration limit", MAX_ITER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two blocks of two variables, a local row each, a coupling row and a border
    /// variable: max x0 + x1 + x2 + x3 − t with x0 + x1 ≤ 1, x2 ≤ 0.25, and
    /// x0 + x2 + x3 ≤ 1 + t, t ≤ 0.5 (optimum: x0 + x1 = 1, x2 + x3 ≤ 1 − x0 + t …).
    #[test]
    fn solves_a_small_block_angular_lp_like_clarabel() {
        let mut lp = SparseLp::default();
        let x: Vec<usize> = (0..4).map(|_| lp.var(-1.0)).collect();
        let t = lp.var(1.0);
        lp.row(vec![(x[0], 1.0), (x[1], 1.0)], Sense::Le, 1.0);
        lp.row(vec![(x[2], 1.0)], Sense::Le, 0.25);
        lp.row(vec![(x[3], 2.0), (x[2], -1.0)], Sense::Le, 0.5);
        lp.row(
            vec![(x[0], 1.0), (x[2], 1.0), (x[3], 1.0), (t, -1.0)],
            Sense::Le,
            1.0,
        );
        lp.row(vec![(x[1], 1.0), (x[3], 1.0)], Sense::Ge, 0.1);
        lp.row(vec![(t, 1.0)], Sense::Le, 0.5);
        let blocks = [Some(0), Some(0), Some(1), Some(1), None];
        let ours = solve(&lp, &blocks, &crate::progress::Silent).unwrap();
        let clarabel = lp.solve_ipm().unwrap();
        assert!(
            (ours.objective - clarabel.objective).abs() < 1e-8,
            "{} {}",
            ours.objective,
            clarabel.objective
        );
        for row in &lp.rows {
            let lhs: f64 = row.coefs.iter().map(|&(j, a)| a * ours.x[j]).sum();
            match row.sense {
                Sense::Le => assert!(lhs <= row.rhs + 1e-8),
                _ => assert!(lhs >= row.rhs - 1e-8),
            }
        }
    }

    #[test]
    fn refuses_equalities_and_wrong_labels() {
        let mut lp = SparseLp::default();
        let a = lp.var(1.0);
        lp.row(vec![(a, 1.0)], Sense::Eq, 1.0);
        let silent = crate::progress::Silent;
        assert!(solve(&lp, &[Some(0)], &silent)
            .unwrap_err()
            .to_string()
            .contains("equality"));
        assert!(solve(&lp, &[], &silent)
            .unwrap_err()
            .to_string()
            .contains("labels"));
    }

    #[test]
    fn cholesky_solves_and_refuses_indefinite() {
        let a = vec![4.0, 2.0, 2.0, 3.0];
        let l = cholesky(a, 2).unwrap();
        let mut v = vec![2.0, 1.0];
        lower_solve(&l, 2, 2, &mut v);
        upper_solve(&l, 2, 2, &mut v);
        // [[4, 2], [2, 3]] (x, y) = (2, 1): x = 0.5, y = 0.
        assert!((v[0] - 0.5).abs() < 1e-15 && v[1].abs() < 1e-15);
        assert!(cholesky(vec![1.0, 2.0, 2.0, 1.0], 2).is_none());
    }
}
