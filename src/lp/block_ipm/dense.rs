//! The dense kernels of the structured interior point (`spec/lp.md` §4.3, spec/crates.md):
//! each output's block component inverted explicitly by faer's Cholesky, whole or by
//! blocks along its nested dissection ([`spd_inverse`]; faer's products, tiled transposes
//! and mirrors), the inverses applied to vectors ([`mul_vec_on`]) and summed into the
//! Schur complement ([`add_inverse`]), and the LU with partial pivoting of the max loss's
//! bordered Schur complement ([`Lu`]).

use super::dissection::Split;

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
/// (row-major, equally column-major), using a [`Work`](super::newton::Work)'s buffers and
/// scratch, by faer's blocked Cholesky (sequential inside; the blocks run in parallel).
/// δ = `shift` is the static regularization of a nearly singular block; if rounding still
/// leaves a non-positive pivot, δ is raised ×10³ (at most 3 times), then `false`, as for a
/// non-finite result. (faer's in-place pivot regularization was not used: on a 2×2
/// singular block it left a zero on L's diagonal.)
///
/// With a dissection (p1, p2 > 0: the inputs ordered [P1, P2, S] with no pair between P1
/// and P2, [`dissect`](super::dissection::dissect)) B = [A1 0 C1; 0 A2 C2; C1ᵀ C2ᵀ D] is
/// inverted by block elimination: X_i = A_i⁻¹C_i, the Schur complement
/// Σ = D − Σ_i C_iᵀX_i (positive definite as B is), Y_i = X_iΣ⁻¹, and
/// B⁻¹ = [A1⁻¹ + Y1X1ᵀ, Y1X2ᵀ, −Y1; ·, A2⁻¹ + Y2X2ᵀ, −Y2; ·, ·, Σ⁻¹] (symmetric). About
/// p1³ + p2³ + m²s flops (s = |S|) instead of m³, and less where A1 and A2 are dissected
/// in turn ([`Split::parts`], [`inverse_at`]).
///
/// With `full` false a dissected block's inverse is left in its *compact* form instead:
/// A1⁻¹ and A2⁻¹ in their diagonal blocks, X = [X1; X2] in the (P, S) block and Σ⁻¹ in
/// the (S, S) block of `out` (the other blocks are not written), with Y in the work
/// buffer for [`add_inverse`]. [`mul_vec_on`] applies it as y_S = Σ⁻¹(r_S − Xᵀr_P),
/// y_P = A⁻¹r_P − X·y_S, reading p1² + p2² + 2(p1 + p2)s + s² entries instead of m²
/// (Rome500's 411-input component: 1.7× fewer; these products are memory-bound).
pub(super) fn spd_inverse(
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
pub(super) fn mul_vec_on(
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
pub(super) fn add_inverse(
    a: &[f64],
    m: usize,
    (p1, p2): (usize, usize),
    y: &[f64],
    acc: &mut [f64],
) {
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

/// LU factorization with partial pivoting of a dense n×n matrix (row-major), computed
/// once per iteration for the max loss's bordered Schur complement
/// ([`Schur`](super::newton::Schur)) and reused by every solve of that iteration (the
/// predictor, the corrector and their refinement steps). faer's `PartialPivLu` was measured slower on OPTMech's (spec/crates.md).
pub(super) struct Lu {
    n: usize,
    /// L (unit lower, below the diagonal) and U, in place.
    a: Vec<f64>,
    /// Row `c` of the factor is row `piv[c]` of the matrix after the swaps before it.
    piv: Vec<usize>,
}

impl Lu {
    /// `None` if a pivot is 0 or not finite.
    pub(super) fn factor(mut a: Vec<f64>, n: usize) -> Option<Lu> {
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
    pub(super) fn solve(&self, mut b: Vec<f64>) -> Option<Vec<f64>> {
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

#[cfg(test)]
mod tests {
    use super::super::newton::Work;
    use super::*;

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
