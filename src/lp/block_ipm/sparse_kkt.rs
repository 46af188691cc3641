//! A localized LP's whole Newton system factored sparse, with no block inverse and no
//! Schur complement (`spec/lp.md` §4.10, issue 56 part 2).
//!
//! The reduced system of an expected loss is [[M, Eᵀ], [E, 0]] (Δx, −Δy) = (r1, r2): M the
//! outputs' blocks B_k = Σ θ g gᵀ + diag(w/x), each with the pattern of its privacy rows
//! over its neighbourhood V_k (road edges: a few entries a row), and E the row sums. The
//! route of [`super::newton::factor`] inverts every B_k (dense |V_k|², Σ_k |V_k|³ flops) and
//! factors S = Σ_k B_k⁻¹ (n × n; at city scale nearly dense after ordering, spec/lp.md §4.8).
//! This module instead factors the whole system as one sparse LDLᵀ (faer's supernodal
//! factorization) in an order that follows the city ([`KktPattern::of`]): the inputs are
//! ordered by approximate minimum degree on their road graph, and each input's unknowns are
//! taken together, first its variables x\[k n + u\] (output by output), then its row sum's
//! y_u. So the factor's fill is that of the road graph's, with blocks of the unknowns of
//! two inputs, and not that of S, whose entries join every two inputs two neighbourhood
//! radii apart.
//!
//! *Why no pivoting is needed.* Eliminating whole inputs (their x, then their y) keeps the
//! system's form: with a set G of inputs eliminated, the rest's x-block becomes
//! M_RR − M_RG (K_GG⁻¹)_xx M_GR, and (K_GG⁻¹)_xx = M_GG⁻¹ − M_GG⁻¹E_Gᵀ(E_G M_GG⁻¹E_Gᵀ)⁻¹E_G M_GG⁻¹
//! ⪯ M_GG⁻¹, so it stays ⪰ M_RR − M_RG M_GG⁻¹ M_GR ≻ 0; no y of the rest touches G. So every
//! x pivot is positive, and y_u's, after its x's, is −E_u M̃⁻¹ E_uᵀ < 0. faer's dynamic
//! regularization with these signs only guards against rounding ([`KktPattern::factor`]).
//! The floats this returns are trusted for nothing: the refinement and GMRES of
//! [`super::newton::direction`] measure each direction's residual on the unfactored
//! operator, and the exact repair, the exact dual check and the audit decide.

use super::structure::{Iterate, Structure};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LdltRef, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Par, Side};
use rayon::prelude::*;

/// The pattern of a localized LP's reduced system (lower triangle, CSC, rows sorted), in
/// the numbering x unknowns first (the present variables in the order k·n + u) then the n
/// row sums; where each iteration's values go; and its symbolic LDLᵀ in the order of the
/// module doc.
pub(super) struct KktPattern {
    /// Unknowns: `nx` present variables, then n row sums.
    nx: usize,
    n: usize,
    /// The unknown of variable k·n + u (`u32::MAX` where it is absent).
    idx: Vec<u32>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Each privacy row's off-diagonal entry (row-length, in the order of `s` and `z`).
    row_pos: Vec<usize>,
    /// Unknown of output k's first variable (`out_start[k]..out_start[k + 1]` are output
    /// k's x unknowns, whose columns hold every entry its block writes).
    out_start: Vec<usize>,
    symbolic: SymbolicCholesky<usize>,
    /// +1 for an x unknown, −1 for a row sum, in the original numbering.
    signs: Vec<i8>,
    /// Entries of the pattern's lower triangle and of the factor faer stores.
    pub(super) pattern_nnz: usize,
    pub(super) factor_len: usize,
}

/// The inputs ordered by faer's approximate minimum degree on their graph: the pairs
/// `used` by some output's rows (`None` if faer refuses the scratch memory).
fn inputs_by_amd(n: usize, pairs: &[(u32, u32)], used: &[bool]) -> Option<Vec<usize>> {
    use faer::sparse::linalg::amd;
    let mut adj: Vec<(usize, usize)> = pairs
        .iter()
        .zip(used)
        .filter(|(_, &b)| b)
        .map(|(&(u, v), _)| (u.min(v) as usize, u.max(v) as usize))
        .filter(|(a, b)| a != b)
        .collect();
    adj.sort_unstable();
    adj.dedup();
    let mut g_ptr = vec![0usize; n + 1];
    adj.iter().for_each(|&(a, _)| g_ptr[a + 1] += 1);
    for u in 0..n {
        g_ptr[u + 1] += g_ptr[u];
    }
    let g_idx: Vec<usize> = adj.iter().map(|&(_, b)| b).collect();
    let graph = SymbolicSparseColMatRef::new_checked(n, n, &g_ptr, None, &g_idx);
    let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
    let mut mem = MemBuffer::try_new(amd::order_scratch::<usize>(n, g_idx.len())).ok()?;
    amd::order(
        &mut perm,
        &mut perm_inv,
        graph,
        amd::Control::default(),
        MemStack::new(&mut mem),
    )
    .ok()?;
    Some(perm)
}

/// The order of the module doc, as faer's forward and inverse permutations (new → old,
/// old → new): input by input in `inputs`' order, its x unknowns (those c < `nx` with
/// `input[c]` = u, ascending), then its row sum nx + u.
fn input_grouped(inputs: &[usize], input: &[u32], nx: usize) -> (Vec<usize>, Vec<usize>) {
    let mut of_input: Vec<Vec<usize>> = vec![Vec::new(); inputs.len()];
    for (c, &u) in input.iter().enumerate().take(nx) {
        of_input[u as usize].push(c);
    }
    let mut fwd = Vec::with_capacity(nx + inputs.len());
    for &u in inputs {
        fwd.extend_from_slice(&of_input[u]);
        fwd.push(nx + u);
    }
    let mut inv = vec![0usize; fwd.len()];
    for (new, &old) in fwd.iter().enumerate() {
        inv[old] = new;
    }
    (fwd, inv)
}

/// One iteration's factor ([`KktPattern::factor`]).
pub(super) struct KktFactor {
    values: Vec<f64>,
}

impl KktPattern {
    /// The pattern over `st`'s outputs (a localized LP with an expected loss), its order
    /// and symbolic factorization; `None` if an input has no variable (its row sum would be
    /// a zero row) or faer refuses it (out of memory).
    pub(super) fn of(st: &Structure) -> Option<KktPattern> {
        let (n, kk) = (st.n, st.kk);
        let present = st.present.as_ref()?;
        let mut idx = vec![u32::MAX; n * kk];
        let mut nx = 0usize;
        let mut out_start = Vec::with_capacity(kk + 1);
        // Each x unknown's input, and whether every input has one.
        let mut input: Vec<u32> = Vec::new();
        let mut held = vec![false; n];
        for k in 0..kk {
            out_start.push(nx);
            for u in 0..n {
                if present[k * n + u] {
                    idx[k * n + u] = u32::try_from(nx).ok()?;
                    input.push(u as u32);
                    held[u] = true;
                    nx += 1;
                }
            }
        }
        out_start.push(nx);
        if held.contains(&false) {
            return None;
        }
        let dim = nx + n;
        // Each x column: its diagonal, its rows' partners of larger number, its row sum.
        let mut below: Vec<(u32, u32)> = Vec::with_capacity(st.np());
        let mut used = vec![false; st.pairs.len()];
        for k in 0..kk {
            for &p in st.out_rows(k) {
                let (u, v) = st.pairs[p as usize];
                let (a, b) = (idx[k * n + u as usize], idx[k * n + v as usize]);
                below.push((a.min(b), a.max(b)));
                used[p as usize] = true;
            }
        }
        below.par_sort_unstable();
        below.dedup();
        let mut col_ptr = Vec::with_capacity(dim + 1);
        let mut row_idx = Vec::with_capacity(2 * nx + below.len() + n);
        let mut next = 0usize;
        for c in 0..dim {
            col_ptr.push(row_idx.len());
            row_idx.push(c);
            if c < nx {
                while next < below.len() && below[next].0 as usize == c {
                    row_idx.push(below[next].1 as usize);
                    next += 1;
                }
                row_idx.push(nx + input[c] as usize);
            }
        }
        col_ptr.push(row_idx.len());
        drop(below);
        // Each row's off-diagonal entry, by a search in its column.
        let mut row_pos = vec![0usize; st.np()];
        {
            let parts = st.by_output(&mut row_pos);
            parts.into_par_iter().enumerate().for_each(|(k, part)| {
                for (i, &p) in st.out_rows(k).iter().enumerate() {
                    let (u, v) = st.pairs[p as usize];
                    let (a, b) = (idx[k * n + u as usize], idx[k * n + v as usize]);
                    let (c, r) = (a.min(b) as usize, a.max(b) as usize);
                    let col = &row_idx[col_ptr[c]..col_ptr[c + 1]];
                    part[i] = col_ptr[c] + col.partition_point(|&x| x < r);
                }
            });
        }
        let inputs = inputs_by_amd(n, &st.pairs, &used)?;
        let (fwd, inv) = input_grouped(&inputs, &input, nx);
        let pattern = SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Lower,
            SymmetricOrdering::Custom(PermRef::new_checked(&fwd, &inv, dim)),
            Default::default(),
        )
        .ok()?;
        let signs = (0..dim).map(|c| if c < nx { 1 } else { -1 }).collect();
        Some(KktPattern {
            nx,
            n,
            pattern_nnz: row_idx.len(),
            factor_len: symbolic.len_val(),
            idx,
            col_ptr,
            row_idx,
            row_pos,
            out_start,
            symbolic,
            signs,
        })
    }

    /// Unknowns of the reduced system.
    pub(super) fn dim(&self) -> usize {
        self.nx + self.n
    }

    /// The bytes this route holds besides the rest of the LP: the pattern (row indices and
    /// each iteration's values, and faer's permuted copy of both), the unknowns' numbers,
    /// the factor's values and its symbolic row indices (at most one per value).
    pub(super) fn memory(&self) -> u64 {
        let (nnz, len) = (self.pattern_nnz as u64, self.factor_len as u64);
        nnz.saturating_mul(32)
            .saturating_add((self.idx.len() as u64).saturating_mul(4))
            .saturating_add(self.row_pos.len() as u64 * 8)
            .saturating_add(len.saturating_mul(16))
    }

    /// Whether this path is used (`MDP_SCHUR=kkt` forces it, `dense` or `sparse` the
    /// Schur complement's).
    pub(super) fn forced() -> Option<bool> {
        match std::env::var("MDP_SCHUR").as_deref() {
            Ok("kkt") => Some(true),
            Ok("dense") | Ok("sparse") => Some(false),
            _ => None,
        }
    }

    /// The reduced system's values for the iterate's w/x and the privacy rows' θ,
    /// factored; `None` if faer's factorization fails or a value is not finite.
    pub(super) fn factor(&self, st: &Structure, it: &Iterate, theta: &[f64]) -> Option<KktFactor> {
        let n = self.n;
        let mut values = vec![0.0; self.row_idx.len()];
        // Output k's entries lie in the columns of its x unknowns: one contiguous range.
        let mut parts: Vec<&mut [f64]> = Vec::with_capacity(st.kk);
        let mut rest = values.as_mut_slice();
        let mut at = 0usize;
        for k in 0..st.kk {
            let end = self.col_ptr[self.out_start[k + 1]];
            let (a, b) = rest.split_at_mut(end - at);
            parts.push(a);
            rest = b;
            at = end;
        }
        // What is left (`rest`) is the row sums' diagonal: 0.
        parts.into_par_iter().enumerate().for_each(|(k, vals)| {
            let base = self.col_ptr[self.out_start[k]];
            let th = &theta[st.rows(k)];
            let pos = &self.row_pos[st.rows(k)];
            let diag = |u: usize| self.col_ptr[self.idx[k * n + u] as usize] - base;
            for u in 0..n {
                let c = self.idx[k * n + u];
                if c == u32::MAX {
                    continue;
                }
                let c = c as usize;
                vals[self.col_ptr[c] - base] = it.w[k * n + u] / it.x[k * n + u];
                vals[self.col_ptr[c + 1] - 1 - base] = 1.0;
            }
            for (i, &p) in st.out_rows(k).iter().enumerate() {
                let (u, v) = st.pairs[p as usize];
                let (t, a) = (th[i], st.inv_c[p as usize]);
                vals[diag(u as usize)] += t * a * a;
                vals[diag(v as usize)] += t;
                vals[pos[i] - base] -= t * a;
            }
        });
        if !values.iter().all(|v| v.is_finite()) {
            return None;
        }
        let dmax = (0..self.nx)
            .map(|c| values[self.col_ptr[c]])
            .fold(0.0f64, f64::max);
        let dim = self.dim();
        let mut l = vec![0.0; self.symbolic.len_val()];
        let par = Par::Seq;
        let mut mem = MemBuffer::try_new(
            self.symbolic
                .factorize_numeric_ldlt_scratch::<f64>(par, Default::default()),
        )
        .ok()?;
        let sym =
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx);
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: dmax * 1e-14 + 1e-300,
            dynamic_regularization_epsilon: f64::MIN_POSITIVE,
        };
        self.symbolic
            .factorize_numeric_ldlt(
                &mut l,
                SparseColMatRef::new(sym, &values),
                Side::Lower,
                reg,
                par,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .ok()?;
        Some(KktFactor { values: l })
    }

    /// Solve M Δx − Eᵀ Δy = r1, E Δx = r2 (n·K-long r1, whose absent entries are
    /// ignored; Δx 0 there); `None` if the result is not finite.
    pub(super) fn solve(
        &self,
        f: &KktFactor,
        r1: &[f64],
        r2: &[f64],
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let dim = self.dim();
        let mut b = vec![0.0; dim];
        for (j, &c) in self.idx.iter().enumerate() {
            if c != u32::MAX {
                b[c as usize] = r1[j];
            }
        }
        b[self.nx..].copy_from_slice(r2);
        let par = Par::Seq;
        let mut mem =
            MemBuffer::try_new(self.symbolic.solve_in_place_scratch::<f64>(1, par)).ok()?;
        LdltRef::new(&self.symbolic, &f.values).solve_in_place_with_conj(
            Conj::No,
            faer::MatMut::from_column_major_slice_mut(&mut b, dim, 1),
            par,
            MemStack::new(&mut mem),
        );
        if !b.iter().all(|v| v.is_finite()) {
            return None;
        }
        let mut dx = vec![0.0; r1.len()];
        for (j, &c) in self.idx.iter().enumerate() {
            if c != u32::MAX {
                dx[j] = b[c as usize];
            }
        }
        let dy = b[self.nx..].iter().map(|v| -v).collect();
        Some((dx, dy))
    }
}

#[cfg(test)]
mod tests {
    use super::input_grouped;

    /// Three inputs ordered 2, 0, 1, with x unknowns 0..5 of inputs [0, 2, 2, 1, 0]: each
    /// input's unknowns come together, its variables (ascending) before its row sum, and
    /// the two arrays are inverse permutations.
    #[test]
    fn each_input_is_eliminated_whole_its_row_sum_last() {
        let (fwd, inv) = input_grouped(&[2, 0, 1], &[0, 2, 2, 1, 0], 5);
        assert_eq!(fwd, vec![1, 2, 7, 0, 4, 5, 3, 6]);
        for (new, &old) in fwd.iter().enumerate() {
            assert_eq!(inv[old], new);
        }
    }
}
