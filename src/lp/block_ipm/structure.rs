//! The structure of one LP as the structured interior point holds it (`spec/lp.md` §4.3,
//! §4.6): its privacy pairs, scaled constants and costs ([`Structure`]); which privacy rows
//! each output has, held output by output (every pair on the whole LP, a working set's rows
//! in pair order, [`select`], or a localized LP's rows among each output's neighbourhood,
//! [`local_structure`]); each output's block layout over the connected components of its
//! rows' graph, in the order of their nested dissection ([`Layout`]); and the iterate laid
//! out on them ([`Iterate`]).

use super::dissection::{dissect, Split, DISSECT_MIN};
use crate::lp::model::PrivacyLp;
use crate::lp::Row;
use crate::progress::Progress;
use rayon::prelude::*;

/// How an output's block B_k is laid out: the connected components of its privacy rows'
/// graph over the inputs it has variables for, each its inputs in the order of its
/// dissection. No privacy row joins two of them, so B_k is block-diagonal over them and
/// is factorized and inverted component by component ([`factor`](super::newton::factor)):
/// Σ_c n_c³ flops instead of n³. On the whole LP every output has the same layout (one
/// component for OPTMech, the η-components of a `--within` LP, Qiu 2024 Proposition 3.1);
/// on a localized LP ([`solve_local`](super::solve_local)) each output has its own.
pub(super) struct Layout {
    pub(super) comps: Vec<Vec<u32>>,
    /// Input u's component and its position in it ([`ABSENT`] when the output has no
    /// variable for u).
    pub(super) place: Vec<(u32, u32)>,
    /// Each component's nested dissection, its inputs ordered [P1, P2, S] at every level
    /// ([`dissect`]); [`Split::default`] when its block is inverted whole.
    pub(super) split: Vec<Split>,
    /// Where component c's m_c×m_c block starts in the output's flat block storage
    /// (`offs\[c + 1\] − offs\[c\] = m_c²`; the last entry is Σ_c m_c²).
    pub(super) offs: Vec<usize>,
}

/// [`Layout::place`] of an input without a variable in the output.
const ABSENT: (u32, u32) = (u32::MAX, u32::MAX);

impl Layout {
    /// The layout of the `n` inputs with `present` (all if `None`) under the privacy rows
    /// `pairs` (pairs of present inputs); with `debug`, each dissected component is noted
    /// there (`MDP_BLOCK_DEBUG`).
    pub(super) fn new(
        n: usize,
        present: Option<&[bool]>,
        pairs: &[(usize, usize)],
        debug: Option<&dyn Progress>,
    ) -> Layout {
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
        if let Some(progress) = debug {
            for (c, sp) in comps
                .iter()
                .zip(&split)
                .filter(|(c, _)| c.len() >= DISSECT_MIN)
            {
                let (p1, p2) = sp.top();
                progress.note(&format!(
                    "component of {}: dissected into {p1} + {p2} + separator {} ({} levels)",
                    c.len(),
                    c.len() - p1 - p2,
                    sp.depth()
                ));
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
    pub(super) fn total(&self) -> usize {
        self.offs[self.comps.len()]
    }
}

/// The structure of one LP: pairs, scaled constants and costs.
pub(super) struct Structure {
    pub(super) n: usize,
    pub(super) kk: usize,
    pub(super) max_loss: bool,
    /// Privacy pairs (u, v) and 1/c_dn(u, v).
    pub(super) pairs: Vec<(u32, u32)>,
    /// The block layouts, and output k's (`lay\[k\]`): one shared by every output on the
    /// whole LP.
    pub(super) layouts: Vec<Layout>,
    pub(super) lay: Vec<u32>,
    /// On a localized LP ([`solve_local`](super::solve_local)), which variables x\[k n + u\]
    /// it has: the others are held at 0 (x = w = 0, no Newton entry) and enter the
    /// verifier's bound with their bare cost ([`bound`](super::iteration::bound)). `None`:
    /// every variable.
    pub(super) present: Option<Vec<bool>>,
    pub(super) inv_c: Vec<f64>,
    /// The privacy rows present, output by output: on a working set
    /// ([`solve_rows`](super::solve_rows)), output k's are the pairs
    /// `sel[row_off[k]..row_off[k + 1]]` (indices into `pairs`); on the whole LP (`sel`
    /// None) every pair, `every` = 0..P, for every output. Their slacks and duals are at
    /// positions `row_off[k]..` of s and z. The whole LP's rows are not listed one by one:
    /// that would be 4 bytes per row more than [`BYTES_PER_ROW`](super::BYTES_PER_ROW)
    /// counts.
    pub(super) sel: Option<Vec<u32>>,
    pub(super) every: Vec<u32>,
    pub(super) row_off: Vec<usize>,
    /// cost(u, k), u-major.
    pub(super) cost: Vec<f64>,
    /// Objective on M (expected loss), block-major k·n + u.
    pub(super) c_m: Vec<f64>,
    /// On a localized LP with an expected loss, S's sparsity and symbolic factor where the
    /// sparse Cholesky pays ([`SchurPattern::pays`]); `None`: S is factored dense.
    pub(super) schur: Option<super::sparse_schur::SchurPattern>,
    /// On a localized LP with an expected loss, the whole reduced system's pattern and
    /// symbolic LDLᵀ where it is factored instead of the blocks and S
    /// ([`KktPattern`](super::sparse_kkt::KktPattern)).
    pub(super) kkt: Option<super::sparse_kkt::KktPattern>,
}

impl Structure {
    pub(super) fn nv(&self) -> usize {
        self.n * self.kk + usize::from(self.max_loss)
    }
    /// Output k's block layout.
    pub(super) fn layout(&self, k: usize) -> &Layout {
        &self.layouts[self.lay[k] as usize]
    }
    /// Whether every output has the same layout (the whole LP).
    pub(super) fn shared(&self) -> bool {
        self.layouts.len() == 1
    }
    /// Whether variable j (x\[k n + u\], or L) is held at 0 on a localized LP.
    #[inline]
    pub(super) fn absent(&self, j: usize) -> bool {
        self.present.as_ref().is_some_and(|p| j < p.len() && !p[j])
    }
    /// The variables the LP has.
    pub(super) fn nv_present(&self) -> usize {
        self.present.as_ref().map_or(self.nv(), |p| {
            p.iter().filter(|&&b| b).count() + usize::from(self.max_loss)
        })
    }
    pub(super) fn np(&self) -> usize {
        self.row_off[self.kk]
    }
    /// Where output k's privacy rows are in the row-length arrays.
    pub(super) fn rows(&self, k: usize) -> std::ops::Range<usize> {
        self.row_off[k]..self.row_off[k + 1]
    }
    /// Output k's privacy rows, as pair indices.
    pub(super) fn out_rows(&self, k: usize) -> &[u32] {
        match &self.sel {
            Some(sel) => &sel[self.rows(k)],
            None => &self.every,
        }
    }
    /// A row-length array cut into its outputs' parts.
    pub(super) fn by_output<'a, T>(&self, mut v: &'a mut [T]) -> Vec<&'a mut [T]> {
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
    pub(super) fn pattern(&self, k: usize, p: u32) -> ([usize; 4], usize) {
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
    pub(super) fn diagonal(&self, k: usize, u: usize) -> Option<(usize, usize)> {
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
    pub(super) fn ax(&self, xk: &[f64], p: usize) -> f64 {
        let (u, v) = self.pairs[p];
        xk[u as usize] * self.inv_c[p] - xk[v as usize]
    }
    /// E x: Σ_k x[k n + u] for each input u (the row sums).
    pub(super) fn row_sums(&self, x: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut e = vec![0.0; n];
        for xk in x[..n * self.kk].chunks(n) {
            e.iter_mut().zip(xk).for_each(|(a, b)| *a += b);
        }
        e
    }
    /// (A_I x) on the loss rows: Σ_k cost(u,k)·x[k n + u] − L.
    pub(super) fn loss_rows(&self, x: &[f64], out: &mut [f64]) {
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
    pub(super) fn loss_rows_t(&self, z: &[f64], g: &mut [f64]) {
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
pub(super) struct Iterate {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) w: Vec<f64>,
    /// Slacks and duals: privacy rows then loss rows.
    pub(super) s: Vec<f64>,
    pub(super) z: Vec<f64>,
}

/// The localized LP's rows and block layouts
/// ([`Rows::Local`](super::iteration::Rows::Local)): output k's privacy rows are the pairs
/// among `keep\[k\]` in pair order (`sel`, `row_off` of [`Structure`]), its [`Layout`]
/// that of those rows over `keep\[k\]`; and which variables x\[k n + u\] are present
/// ([`Structure::present`]).
pub(super) fn local_structure(
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
            (ps, Layout::new(n, Some(&here), &rows, None))
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

/// Pair (u, v)'s index in `pairs` at u·n + v (`u32::MAX` for no pair).
pub(super) fn pair_index(pairs: &[(u32, u32)], n: usize) -> Vec<u32> {
    let mut pair_of = vec![u32::MAX; n * n];
    for (p, &(u, v)) in pairs.iter().enumerate() {
        pair_of[u as usize * n + v as usize] = p as u32;
    }
    pair_of
}

/// The privacy rows of a working set, output by output in pair order: (`sel`, `row_off`)
/// of [`Structure`], with `pair_of` mapping (u, v) to its pair index (u·n + v).
pub(super) fn select(rows: &[Row], kk: usize, n: usize, pair_of: &[u32]) -> (Vec<u32>, Vec<usize>) {
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
