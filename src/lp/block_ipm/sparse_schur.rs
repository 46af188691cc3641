//! A localized LP's Schur complement held sparse (`spec/lp.md` §4.6, issue 56).
//!
//! On a localized LP output k has variables only for its neighbourhood V_k, and its block
//! inverse B_k⁻¹ is zero between two components of its rows' graph; so entry (i, j) of the
//! Schur complement S = Σ_k B_k⁻¹ can be non-zero only if some output holds i and j in one
//! component. That pattern follows the city's geography (inputs farther apart than two
//! neighbourhood radii never share an output), and S is factored by faer's supernodal
//! sparse Cholesky after an approximate minimum degree ordering ([`SchurPattern`]) unless
//! the factor would hold more than the dense path's n × n ([`SchurPattern::pays`]).
//! Measured on Rome road nodes (η = 2 km, ε = 10/km, K = 100; `benches/reports/schur_sparse.md`):
//! the pattern holds 23–28 % of the lower triangle, but the ordering's fill leaves the
//! factor nearly dense (53 % of n(n+1)/2 at n = 1 000, 90 % at 2 000, and at 5 000 faer's
//! supernodes store 141 %); even so the sparse factorization's iterations were 1.4× faster
//! at n = 5 000 (1.66 s against 2.34 s) and faster at every size measured.
//! The same sums in the same order as the dense path ([`SchurPattern::sums`]): only the
//! factorization differs, and the floats it returns are trusted for nothing (the exact
//! repair, the exact dual check and the audit decide).

use super::newton::column_terms;
use super::structure::Structure;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::Side;
use rayon::prelude::*;

/// The lower triangle's pattern of a localized LP's S (CSC, rows sorted), its symbolic
/// Cholesky (AMD ordering, supernodal or simplicial as faer chooses) and the sizes that
/// decide whether it is used.
pub(super) struct SchurPattern {
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    symbolic: SymbolicLlt<usize>,
    /// Entries of S's lower triangle (diagonal included).
    pub(super) pattern_nnz: usize,
    /// Entries faer stores for the Cholesky factor L after the fill-reducing ordering
    /// (a supernode's whole rectangle counted).
    pub(super) factor_len: usize,
}

impl SchurPattern {
    /// The pattern of Σ_k B_k⁻¹ over the outputs' layouts, its symbolic factorization and
    /// fill; `None` if faer refuses it (out of memory).
    pub(super) fn of(st: &Structure) -> Option<SchurPattern> {
        let n = st.n;
        let cols: Vec<Vec<usize>> = (0..n)
            .into_par_iter()
            .map_init(
                || vec![false; n],
                |seen, j| {
                    let mut rows = vec![];
                    for k in 0..st.kk {
                        let ly = st.layout(k);
                        let (c, _) = ly.place[j];
                        if c == u32::MAX {
                            continue;
                        }
                        for &i in &ly.comps[c as usize] {
                            let i = i as usize;
                            if i >= j && !seen[i] {
                                seen[i] = true;
                                rows.push(i);
                            }
                        }
                    }
                    if !seen[j] {
                        rows.push(j); // an input no output holds keeps its diagonal
                    }
                    rows.iter().for_each(|&i| seen[i] = false);
                    rows.sort_unstable();
                    rows
                },
            )
            .collect();
        let mut col_ptr = Vec::with_capacity(n + 1);
        col_ptr.push(0);
        for c in &cols {
            col_ptr.push(col_ptr.last().copied().unwrap_or(0) + c.len());
        }
        let row_idx: Vec<usize> = cols.into_iter().flatten().collect();
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let counted = faer::sparse::linalg::cholesky::factorize_symbolic_cholesky(
            pattern,
            Side::Lower,
            Default::default(),
            Default::default(),
        )
        .ok()?;
        let symbolic = SymbolicLlt::try_new(pattern, Side::Lower).ok()?;
        Some(SchurPattern {
            n,
            pattern_nnz: row_idx.len(),
            factor_len: counted.len_val(),
            col_ptr,
            row_idx,
            symbolic,
        })
    }

    /// Whether the sparse factor is used: where it stores at most the dense path's n × n
    /// entries (module doc: it was the faster at every size measured). `MDP_SCHUR=dense`
    /// or `sparse` forces a path, for the benchmarks that compare them
    /// (`benches/schur_sparse.py`).
    pub(super) fn pays(&self) -> bool {
        match std::env::var("MDP_SCHUR").as_deref() {
            Ok("dense") => false,
            Ok("sparse") | Ok("kkt") => true,
            _ => self.factor_len <= self.n.saturating_mul(self.n),
        }
    }

    /// S's lower triangle on the pattern, from the outputs' whole block inverses `inv`:
    /// parallel over columns j, the outputs in ascending order within each (the sums of
    /// the dense path, `newton::localized_sums`, in the same order).
    pub(super) fn sums(&self, st: &Structure, inv: &[Vec<f64>]) -> Vec<f64> {
        let n = self.n;
        let mut val = vec![0.0; self.row_idx.len()];
        let mut cols: Vec<&mut [f64]> = Vec::with_capacity(n);
        let mut rest = val.as_mut_slice();
        for j in 0..n {
            let (a, b) = rest.split_at_mut(self.col_ptr[j + 1] - self.col_ptr[j]);
            cols.push(a);
            rest = b;
        }
        cols.into_par_iter().enumerate().for_each_init(
            || vec![u32::MAX; n],
            |pos, (j, a)| {
                let rows = &self.row_idx[self.col_ptr[j]..self.col_ptr[j + 1]];
                rows.iter()
                    .enumerate()
                    .for_each(|(p, &i)| pos[i] = p as u32);
                column_terms(st, inv, j, |i, v| {
                    if i >= j {
                        a[pos[i] as usize] += v;
                    }
                });
                rows.iter().for_each(|&i| pos[i] = u32::MAX);
            },
        );
        val
    }

    /// The sparse Cholesky factor of S from its lower triangle `val` ([`Self::sums`]);
    /// `None` at a non-positive pivot.
    pub(super) fn factor(&self, val: &[f64]) -> Option<Llt<usize, f64>> {
        let sym = SymbolicSparseColMatRef::new_checked(
            self.n,
            self.n,
            &self.col_ptr,
            None,
            &self.row_idx,
        );
        Llt::try_new_with_symbolic(
            self.symbolic.clone(),
            SparseColMatRef::new(sym, val),
            Side::Lower,
        )
        .ok()
    }

    /// S as a dense column-major n × n matrix (both triangles) from `val`, for the LU that
    /// takes over at a non-positive pivot.
    pub(super) fn to_dense(&self, val: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for p in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[p];
                a[j * n + i] = val[p];
                a[i * n + j] = val[p];
            }
        }
        a
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::iteration::{run, Rows};
    use super::super::newton::localized_sums;
    use super::super::structure::Iterate;
    use super::*;
    use crate::exact::Q;
    use crate::metric::{MetricKind, Space};

    /// A localized PMO LP on a jittered 12 × 12 grid (η = 1.5, ε = 12, eight outputs, each
    /// with the neighbourhood of its cell): its structure, whose outputs' components
    /// differ; and the iterate its interior point reached (relative gap 10⁻³).
    pub(in super::super) fn local_structure_of_a_grid(check: impl FnOnce(Structure, Iterate)) {
        let pts: Vec<Vec<Q>> = (0..144i64)
            .map(|i| {
                let (x, y, j) = (i % 12, i / 12, (i * 37 % 11) - 5);
                vec![
                    Q::from_signeds(100 * x + j, 100),
                    Q::from_signeds(100 * y - j, 100),
                ]
            })
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let outputs = vec![0, 11, 30, 65, 78, 100, 132, 143];
        let params = crate::mechanisms::optimal::PmoParams {
            within: Some(&Q::from_signeds(3, 2)),
            prior: None,
            cost: None,
            outputs: Some(outputs),
        };
        let lp = crate::mechanisms::optimal::pmo_lp(&space, &Q::from(12u32), &params, 256).unwrap();
        let cells = crate::lp::local::cells(&lp).unwrap();
        let keep = crate::lp::local::neighbourhoods(&lp, &cells).unwrap();
        let silent = crate::progress::Silent;
        let (st, it, _) = run(&lp, Rows::Local(&keep, u64::MAX), 1e-3, None, &silent).unwrap();
        check(st, it);
    }

    /// The sparse sums are the dense path's entry by entry (every entry of S outside the
    /// pattern is 0 there), the pattern is that of S, and the sparse Cholesky solves S x = b
    /// as the dense LU does, on symmetric positive definite blocks standing for the B_k⁻¹.
    #[test]
    fn sparse_sums_and_factor_match_the_dense_path() {
        local_structure_of_a_grid(|st, _| {
            let st = &st;
            let n = st.n;
            let sp = SchurPattern::of(st).unwrap();
            assert!(sp.pattern_nnz < n * (n + 1) / 2, "the pattern is sparse");
            assert!(sp.factor_len >= sp.pattern_nnz);
            // Each component's block: m·I + a symmetric part with entries in (0, 1): S's entries
            // are then > 0 exactly on its pattern.
            let inv: Vec<Vec<f64>> = (0..st.kk)
                .map(|k| {
                    let ly = st.layout(k);
                    let mut b = vec![0.0; ly.total()];
                    for (c, comp) in ly.comps.iter().enumerate() {
                        let m = comp.len();
                        for a in 0..m {
                            for d in 0..m {
                                let (lo, hi) = (a.min(d), a.max(d));
                                let v = (1 + (lo * 31 + hi * 17 + k * 7 + c) % 97) as f64 / 98.0;
                                b[ly.offs[c] + a * m + d] = v + if a == d { m as f64 } else { 0.0 };
                            }
                        }
                    }
                    b
                })
                .collect();
            let dense = localized_sums(st, &inv);
            let val = sp.sums(st, &inv);
            assert_eq!(sp.to_dense(&val), dense);
            let nonzero = dense.iter().filter(|v| **v != 0.0).count();
            assert_eq!(nonzero, 2 * sp.pattern_nnz - n, "the pattern is S's");
            let llt = sp.factor(&val).expect("S is positive definite");
            let b: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 2.0).collect();
            let mut x = b.clone();
            {
                use faer::linalg::solvers::Solve;
                llt.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut x, n, 1));
            }
            for i in 0..n {
                let r: f64 = (0..n).map(|j| dense[j * n + i] * x[j]).sum::<f64>() - b[i];
                assert!(r.abs() < 1e-9, "residual {r} at {i}");
            }
        });
    }
}
