//! ConstOPTMech (Imola et al. 2022, §3.2, Algorithm 1, Theorems 1 and 2, appendix proof
//! eqs. (18)–(26)).
//!
//! P_CONSTOPTMECH(ε') adds to OPTMech's LP weights Y_v ≥ 0 and the equalities
//!   M_uv = Y_v e^{−ε' d(u,v)}   for u ∉ I(v)                                   (4)
//! for a replacement function I, relaxes Σ_v M_uv = 1 to ≥ 1 and penalizes the excess
//! with λ: L̃(M, w) = Σ_u M_wu d(u, w) + λ Σ_u M_wu (6). Substituting (4) gives the
//! *reduced* LP built here directly (never the full LP), over k, Y and the free entries
//! M_uv (u ∈ I(v)):
//!   (18) Σ_{v: w∈I(v)} M_wv (d(w,v)+λ) + Σ_{v: w∉I(v)} Y_v e^{−ε'd(w,v)} (d(w,v)+λ) ≤ k
//!        (the paper's (18) drops the λ term of (6); it belongs there);
//!   (19) M_uv ≥ 0;  (20) Σ_{v: u∈I(v)} M_uv + Σ_{v: u∉I(v)} Y_v e^{−ε'd(u,v)} ≥ 1;
//!   (22) M_uw ≤ e^{ε'd(u,v)} M_vw for u ≠ v in I(w);
//!   (25) M_uw ≤ Y_w min_{v∉I(w)} e^{ε'(d(u,v) − d(v,w))} for u ∈ I(w);
//!   (26) Y_w max_{u∉I(w)} e^{−ε'(d(u,w) + d(u,v))} ≤ M_vw for v ∈ I(w)
//!        (the paper prints e^{−ε'd(u,w)} ≤ M_vw e^{ε'd(u,v)} with u both inside the max
//!        and outside it; the correct form, from (24), moves e^{ε'd(u,v)} into the max).
//! (21) holds for every Y by the triangle inequality and is dropped.
//!
//! Algorithm 1 solves at ε' = ε/2 and normalizes the rows: Theorem 2 (normalization at
//! most doubles ε, as in Proposition 1) makes the result ε·d private. The float optimum is
//! normalized, repaired ([`crate::lp::repair::repair_matrix`]) and proved private at ε by
//! the exact checker; the uniform mix the repair needed is reported.
//!
//! Counts (`spec/mechanisms.md`): with S₁ = Σ_w |I(w)| and S₂ = Σ_w |I(w)|(|I(w)|−1),
//! variables 1 + n + S₁; rows (18) n, (20) n, (19) S₁ (bounds), (22) S₂, (25) S₁',
//! (26) S₁' (S₁' = S₁ without the sets I(w) = W); non-zeros n(n+1) + n² + S₁ + 4S₁' + 2S₂.

use crate::exact::Q;
use crate::lp::block_angular;
use crate::lp::model::zero_pairs;
use crate::lp::repair;
use crate::lp::sparse::{Sense, Solution, SparseLp};
use crate::lp::{invalid, BuildError, Solver};
use crate::mechanism::Matrix;
use crate::metric::Space;
use crate::progress::Progress;

/// A replacement function: `sets\[v\]` = I(v), the inputs u whose entry M_uv is left to the
/// LP; every other entry of column v follows the weighted exponential mechanism (4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub sets: Vec<Vec<usize>>,
}

impl Replacement {
    /// I_NN,r (5): u ∈ I(v) iff v is one of the r nearest neighbours of u other than u
    /// itself (ties by index). Then Σ_v |I(v)| = n·r exactly, and r = n − 1 frees every
    /// off-diagonal entry (the diagonal M_vv = Y_v is then free through Y_v): the full LP.
    pub fn nearest_neighbours(space: &Space, r: usize) -> Replacement {
        let n = space.n();
        let mut sets = vec![vec![]; n];
        for u in 0..n {
            for v in space.nearest_neighbours(u, r) {
                sets[v].push(u);
            }
        }
        for s in &mut sets {
            s.sort_unstable();
        }
        Replacement { sets }
    }

    /// S₁ = Σ_w |I(w)|.
    pub fn s1(&self) -> usize {
        self.sets.iter().map(Vec::len).sum()
    }

    /// Σ |I(w)| over the w with I(w) ≠ W: the rows of (25) and of (26) (for I(w) = W the
    /// min and max run over nothing and the rows vanish).
    pub fn s1_proper(&self) -> usize {
        let n = self.sets.len();
        self.sets.iter().map(Vec::len).filter(|&l| l < n).sum()
    }

    /// A user-given I: `sets\[v\]` lists inputs < n without repeats.
    pub fn from_sets(n: usize, mut sets: Vec<Vec<usize>>) -> Result<Replacement, String> {
        if sets.len() != n {
            return Err(format!("replacement: {} sets for {n} inputs", sets.len()));
        }
        for (v, s) in sets.iter_mut().enumerate() {
            s.sort_unstable();
            if let Some(&u) = s.iter().find(|&&u| u >= n) {
                return Err(format!("replacement[{v}]: input {u} out of range 0..{n}"));
            }
            if s.windows(2).any(|w| w[0] == w[1]) {
                return Err(format!("replacement[{v}]: an input is listed twice"));
            }
        }
        Ok(Replacement { sets })
    }

    /// S₂ = Σ_w |I(w)|(|I(w)| − 1): the ordered pairs u ≠ v of (22).
    pub fn s2(&self) -> usize {
        self.sets
            .iter()
            .map(|s| s.len() * s.len().saturating_sub(1))
            .sum()
    }
}

/// Sizes of an LP, in the paper's terms (the bounds (19) counted as rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub variables: usize,
    pub rows: usize,
    pub nonzeros: usize,
}

/// The exact sizes of the reduced LP for `repl` on n inputs (module doc).
pub fn reduced_counts(n: usize, repl: &Replacement) -> Counts {
    let (s1, s1p, s2) = (repl.s1(), repl.s1_proper(), repl.s2());
    Counts {
        variables: 1 + n + s1,
        rows: 2 * n + s1 + s2 + 2 * s1p,
        nonzeros: n * (n + 1) + n * n + s1 + 4 * s1p + 2 * s2,
    }
}

/// Theorem 1's stated bounds: n + 1 + Σ|I| variables, 2n + Σ(2|I|² + 3|I|) rows,
/// 2n² + Σ(2|I|² + 5|I|) non-zeros. The proof counts (22) as Σ|I|² rows, the statement
/// as Σ2|I|²; the true count is Σ|I|(|I|−1) ([`reduced_counts`]), so the proof's figure
/// is the tighter valid bound and the statement's is twice it.
pub fn theorem1_bounds(n: usize, repl: &Replacement) -> Counts {
    let s1 = repl.s1();
    let sq: usize = repl.sets.iter().map(|s| s.len() * s.len()).sum();
    Counts {
        variables: n + 1 + s1,
        rows: 2 * n + 2 * sq + 3 * s1,
        nonzeros: 2 * n * n + 2 * sq + 5 * s1,
    }
}

/// Corollary 1's bounds for I_NN,r: nr + n + 1 variables, n²r + 3nr + 2n rows,
/// 2n² + 5nr + 2n²r non-zeros.
pub fn corollary1_bounds(n: usize, r: usize) -> Counts {
    Counts {
        variables: n * r + n + 1,
        rows: n * n * r + 3 * n * r + 2 * n,
        nonzeros: 2 * n * n + 5 * n * r + 2 * n * n * r,
    }
}

/// The reduced LP and where its variables are.
pub struct ReducedLp {
    pub lp: SparseLp,
    /// Index of Y_v.
    pub y: Vec<usize>,
    /// `free\[v\]` = [(u, index of M_uv)] for u ∈ I(v).
    pub free: Vec<Vec<(usize, usize)>>,
    /// `affine\[v\]\[i\]` = (β, γ): M_uv = β·Y_v + γ·x_j for free\[v\]\[i\] = (u, j).
    pub affine: Vec<Vec<(f64, f64)>>,
    /// e^{−ε' d(u,v)} (n×n, float, nearest).
    pub decay: Vec<f64>,
    /// d(u, v) (n×n, float).
    pub d: Vec<f64>,
    pub counts: Counts,
}

/// The float constants of the LPs, from one rigorous enclosure of each distance (a
/// haversine enclosure costs ~100 interval operations, so it is computed once).
struct Table {
    /// d(u, v) (midpoint; 0 for duplicates).
    d: Vec<f64>,
    /// e^{ε'd(u,v)} rounded down: the privacy factors, so a feasible point is private up
    /// to the solver's tolerance.
    c: Vec<f64>,
    /// e^{−ε'd(u,v)} (nearest): the weighted exponential entries (4).
    decay: Vec<f64>,
}

impl Table {
    fn new(space: &Space, eps: &Q) -> Table {
        use rayon::prelude::*;
        let n = space.n();
        let e = crate::exact::float::FI::from_q(eps);
        let cols: Vec<(f64, f64, f64)> = (0..n * n)
            .into_par_iter()
            .map(|i| {
                let (u, v) = (i / n, i % n);
                if u == v || space.is_zero(u, v) {
                    return (0.0, 1.0, 1.0);
                }
                let dfi = space.fi(u, v);
                let x = e.mul(dfi).exp();
                (
                    0.5 * dfi.lo + 0.5 * dfi.hi,
                    x.lo,
                    1.0 / (0.5 * x.lo + 0.5 * x.hi),
                )
            })
            .collect();
        let mut t = Table {
            d: Vec::with_capacity(n * n),
            c: Vec::with_capacity(n * n),
            decay: Vec::with_capacity(n * n),
        };
        for (d, c, decay) in cols {
            t.d.push(d);
            t.c.push(c);
            t.decay.push(decay);
        }
        t
    }
}

/// How the free entries of [`reduced_lp`] are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// As the paper: variables M_uw, rows (25) M_uw ≤ a·Y_w and (26) b·Y_w ≤ M_uw.
    Paper,
    /// The same LP with M_uw = b·Y_w + (a − b)·p_uw where I(w) ≠ W: (25) and (26) become
    /// 0 ≤ p_uw ≤ Y_w. By the triangle inequality a ≥ b, and on road nodes 390 of the
    /// 4 000 slabs at n = 400 (r = 10) have a/b − 1 < 10⁻⁶: near-equalities whose duals
    /// grow without bound and stall an interior point at a gap of 10⁻⁷ (spec/lp.md
    /// §4.5). In p the slab has width Y_w. Where a − b is at the rounding level of a and
    /// b (collinear points, or a < b by rounding) the slab is the equality M_uw = b·Y_w;
    /// the repair and the exact check decide privacy either way.
    Slab,
}

/// The bounds a and b of (25) and (26) for the free entries of column w (`outside`: the
/// inputs not in I(w), not empty).
fn slab(c: &[f64], decay: &[f64], n: usize, u: usize, w: usize, outside: &[usize]) -> (f64, f64) {
    let a = outside
        .iter()
        .map(|&v| c[u * n + v] * decay[v * n + w])
        .fold(f64::INFINITY, f64::min);
    let b = outside
        .iter()
        .map(|&x| decay[x * n + w] / c[x * n + u])
        .fold(0.0, f64::max);
    (a, b)
}

/// Build P_CONSTOPTMECH,red(ε') for `repl` and λ (module doc, (18)–(26)), in `form`.
pub fn reduced_lp(
    space: &Space,
    eps_lp: &Q,
    repl: &Replacement,
    lambda: f64,
    form: Form,
) -> ReducedLp {
    let n = space.n();
    let t = Table::new(space, eps_lp);
    let (d, c, decay) = (t.d, t.c, t.decay);
    let mut lp = SparseLp::default();
    let k = lp.var(1.0);
    let y: Vec<usize> = (0..n).map(|_| lp.var(0.0)).collect();
    let free: Vec<Vec<(usize, usize)>> = repl
        .sets
        .iter()
        .map(|s| s.iter().map(|&u| (u, lp.var(0.0))).collect())
        .collect();
    // entry(u, v): Some((index of the variable, its place in free[v])) if u ∈ I(v).
    let mut entry = vec![None; n * n];
    for (v, s) in free.iter().enumerate() {
        for (i, &(u, j)) in s.iter().enumerate() {
            entry[u * n + v] = Some((j, i));
        }
    }
    let outside: Vec<Vec<usize>> = (0..n)
        .map(|w| (0..n).filter(|&x| entry[x * n + w].is_none()).collect())
        .collect();
    let affine: Vec<Vec<(f64, f64)>> = free
        .iter()
        .enumerate()
        .map(|(w, set)| {
            set.iter()
                .map(|&(u, _)| match form {
                    Form::Slab if !outside[w].is_empty() => {
                        let (a, b) = slab(&c, &decay, n, u, w, &outside[w]);
                        // a − b at the rounding level of a and b is an exact equality
                        // (collinear points): M_uw = b·Y_w.
                        let g = a - b;
                        (b, if g > CANCELLED * a.max(b) { g } else { 0.0 })
                    }
                    _ => (0.0, 1.0),
                })
                .collect()
        })
        .collect();
    // scale·M_uv (u ∈ I(v)) in the LP's variables.
    let m_uv = |u: usize, v: usize, scale: f64, out: &mut Vec<(usize, f64)>| {
        let (j, i) = entry[u * n + v].expect("free entry");
        let (beta, gamma) = affine[v][i];
        if gamma != 0.0 {
            out.push((j, scale * gamma));
        }
        if beta != 0.0 {
            out.push((y[v], scale * beta));
        }
    };
    // (18) and (20).
    for w in 0..n {
        let mut loss = vec![(k, -1.0)];
        let mut mass = vec![];
        for v in 0..n {
            let dl = d[w * n + v] + lambda;
            if entry[w * n + v].is_some() {
                m_uv(w, v, dl, &mut loss);
                m_uv(w, v, 1.0, &mut mass);
            } else {
                let e = decay[w * n + v];
                loss.push((y[v], e * dl));
                mass.push((y[v], e));
            }
        }
        lp.row(merge(loss), Sense::Le, 0.0);
        lp.row(merge(mass), Sense::Ge, 1.0);
    }
    for (w, set) in free.iter().enumerate() {
        // (22), scaled by 1/c: M_uw/c − M_vw ≤ 0.
        for &(u, _) in set {
            for &(v, _) in set {
                if u != v {
                    let mut r = vec![];
                    m_uv(u, w, 1.0 / c[u * n + v], &mut r);
                    m_uv(v, w, -1.0, &mut r);
                    let r = merge(r);
                    // In the slab form a (22) row between collinear points is 0 ≤ 0.
                    if !r.is_empty() {
                        lp.row(r, Sense::Le, 0.0);
                    }
                }
            }
        }
        if outside[w].is_empty() {
            continue; // I(w) = W: the min in (25) and the max in (26) run over nothing.
        }
        match form {
            Form::Paper => {
                let ab: Vec<(f64, f64)> = set
                    .iter()
                    .map(|&(u, _)| slab(&c, &decay, n, u, w, &outside[w]))
                    .collect();
                // (25): M_uw ≤ a Y_w, a = min_{v∉I(w)} e^{ε'd(u,v)} e^{−ε'd(v,w)}; scaled by
                // 1/max(a, 1).
                for (&(_, ju), &(a, _)) in set.iter().zip(&ab) {
                    let s = a.max(1.0);
                    lp.row(vec![(ju, 1.0 / s), (y[w], -a / s)], Sense::Le, 0.0);
                }
                // (26): b Y_w ≤ M_vw, b = max_{u∉I(w)} e^{−ε'd(u,w)} / e^{ε'd(u,v)} ≤ 1.
                for (&(_, jv), &(_, b)) in set.iter().zip(&ab) {
                    lp.row(vec![(y[w], b), (jv, -1.0)], Sense::Le, 0.0);
                }
            }
            // p_uw ≤ Y_w (p_uw ≥ 0 is its bound).
            Form::Slab => {
                for &(_, ju) in set {
                    lp.row(vec![(ju, 1.0), (y[w], -1.0)], Sense::Le, 0.0);
                }
            }
        }
    }
    let counts = reduced_counts(n, repl);
    if form == Form::Paper {
        debug_assert_eq!(counts.variables, lp.n_vars());
        debug_assert_eq!(counts.rows, lp.rows.len() + repl.s1());
        debug_assert_eq!(counts.nonzeros, lp.nnz() + repl.s1());
    }
    ReducedLp {
        lp,
        y,
        free,
        affine,
        decay,
        d,
        counts,
    }
}

impl ReducedLp {
    /// The block of each variable for [`crate::lp::block_angular`]: output column w's
    /// weight Y_w and free entries M_uw form block w; k is the border.
    pub fn blocks(&self) -> Vec<Option<u32>> {
        let mut b = vec![None; self.lp.n_vars()];
        for (w, (&y, free)) in self.y.iter().zip(&self.free).enumerate() {
            b[y] = Some(w as u32);
            for &(_, j) in free {
                b[j] = Some(w as u32);
            }
        }
        b
    }
}

/// The full P_CONSTOPTMECH(ε') of §3.2 (every M_uv a variable, every privacy row (2), the
/// equalities (4)): used only to check that the reduced LP has the same optimum (IMO-T1).
pub fn full_lp(space: &Space, eps_lp: &Q, repl: &Replacement, lambda: f64) -> SparseLp {
    let n = space.n();
    let mut lp = SparseLp::default();
    let k = lp.var(1.0);
    let y: Vec<usize> = (0..n).map(|_| lp.var(0.0)).collect();
    let m: Vec<usize> = (0..n * n).map(|_| lp.var(0.0)).collect();
    let t = Table::new(space, eps_lp);
    for w in 0..n {
        let mut loss: Vec<(usize, f64)> = (0..n)
            .map(|u| (m[w * n + u], t.d[w * n + u] + lambda))
            .collect();
        loss.push((k, -1.0));
        lp.row(loss, Sense::Le, 0.0);
        lp.row(
            (0..n).map(|u| (m[w * n + u], 1.0)).collect(),
            Sense::Ge,
            1.0,
        );
    }
    for u in 0..n {
        for v in 0..n {
            if u == v {
                continue;
            }
            let c = t.c[u * n + v];
            for w in 0..n {
                lp.row(
                    vec![(m[u * n + w], 1.0 / c), (m[v * n + w], -1.0)],
                    Sense::Le,
                    0.0,
                );
            }
        }
    }
    for (v, set) in repl.sets.iter().enumerate() {
        for u in (0..n).filter(|u| !set.contains(u)) {
            let decay = t.decay[u * n + v];
            lp.row(vec![(m[u * n + v], 1.0), (y[v], -decay)], Sense::Eq, 0.0);
        }
    }
    lp
}

/// The unnormalized M (n×n floats) of a solution of the reduced LP.
pub fn expand(red: &ReducedLp, x: &[f64]) -> Vec<f64> {
    let n = red.y.len();
    let mut m: Vec<f64> = (0..n * n).map(|i| x[red.y[i % n]] * red.decay[i]).collect();
    for (v, set) in red.free.iter().enumerate() {
        for (&(u, j), &(beta, gamma)) in set.iter().zip(&red.affine[v]) {
            m[u * n + v] = (beta * x[red.y[v]] + gamma * x[j]).max(0.0);
        }
    }
    m
}

/// A difference or sum of floats that is at most this fraction of its terms is taken as
/// zero: rounding noise of an exact cancellation ([`Form::Slab`]).
const CANCELLED: f64 = 1e-12;

/// Sum the coefficients of repeated variables, dropping the sums that cancel (below
/// [`CANCELLED`] times their largest term; only in the [`Form::Slab`] rows, where
/// b_u/c − b_v multiplies Y_w).
fn merge(mut r: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    r.sort_by_key(|e| e.0);
    // (variable, sum, largest |term|, terms)
    let mut out: Vec<(usize, f64, f64, usize)> = Vec::with_capacity(r.len());
    for (j, a) in r {
        match out.last_mut() {
            Some(l) if l.0 == j => {
                l.1 += a;
                l.2 = l.2.max(a.abs());
                l.3 += 1;
            }
            _ => out.push((j, a, a.abs(), 1)),
        }
    }
    out.into_iter()
        .filter(|&(_, a, big, terms)| terms == 1 || a.abs() > CANCELLED * big)
        .map(|(j, a, _, _)| (j, a))
        .collect()
}

/// Worst-case loss max_w Σ_v H_wv d(w, v) of the row-normalized `m` with distances `d`
/// (float, for the λ sweep's choice; the written file's loss is computed exactly by the
/// audit).
pub fn float_max_loss(d: &[f64], m: &[f64]) -> f64 {
    let n = (m.len() as f64).sqrt() as usize;
    (0..n)
        .map(|w| {
            let row = &m[w * n..(w + 1) * n];
            let s: f64 = row.iter().sum();
            row.iter()
                .zip(&d[w * n..])
                .map(|(&x, &dd)| x * dd)
                .sum::<f64>()
                / s
        })
        .fold(0.0, f64::max)
}

/// Parameters of Algorithm 1 with a λ sweep.
pub struct Params<'a> {
    pub eps: &'a Q,
    pub replacement: &'a Replacement,
    /// Candidate λ > 0; the one whose normalized mechanism has the least loss is kept.
    pub lambdas: &'a [f64],
    pub max_prec: u64,
    /// `Auto` and `Block`: the block-angular interior point on the [`Form::Slab`] LP
    /// (`Auto` falls back to Clarabel on the paper's form if it fails); `Ipm`: Clarabel,
    /// `Simplex`: microlp, both on the paper's form (spec/lp.md §4.5).
    pub solver: Solver,
}

/// One λ of the sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Trial {
    pub lambda: f64,
    pub lp_objective: f64,
    /// The float worst-case loss of the normalized matrix.
    pub loss: f64,
    pub seconds: f64,
    /// The solver that found it: `block-angular`, `ipm` or `simplex`.
    pub solver: &'static str,
    /// Why the block-angular interior point gave way to Clarabel (`Solver::Auto`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// Peak memory of the λ sweep, in bytes (an estimate, for `--max-memory`): per λ (all
/// counted as in flight, whatever the number of cores) the three n×n float tables, the block-angular method's dense
/// S₀ (2n)², W (2n × (n+1)) and T, each held twice while faer factorizes (96 n² bytes), the
/// fill of Clarabel's LDLᵀ should it take over (≈ (3n)² entries), and 64 bytes per LP
/// non-zero (the rows, their CSR and CSC copies).
pub fn memory_estimate(n: usize, counts: &Counts, lambdas: usize) -> u64 {
    let (n, nnz) = (n as u64, counts.nonzeros as u64);
    // Every λ counted as in flight: the estimate, and whether a build is refused, must
    // not depend on the number of threads (spec/lp.md §4.7).
    let in_flight = lambdas.max(1) as u64;
    let per = n
        .saturating_mul(n)
        .saturating_mul(24 + 96 + 72)
        .saturating_add(nnz.saturating_mul(64));
    per.saturating_mul(in_flight)
}

/// `Solver::Auto` uses Clarabel where some I(w) has this many entries or more: the
/// block-angular method is built for small blocks (I_NN,r with r ≈ 10), and on
/// cities40 with r = n − 1 (blocks of 39 entries and 1 482 rows (22)) it did not
/// converge in 200 iterations.
pub const AUTO_BLOCK_MAX: usize = 32;
/// ... and for fewer inputs than this, where Clarabel is faster: one λ, r = 10, LP seconds
/// block-angular against Clarabel on Rome (spec/lp.md §4.5, session 16, one run each):
/// n = 100 0.37 / 0.17, 150 0.65 / 0.38, 200 0.96 / 0.86, 300 1.38 / 3.38 (MiniLM n = 300
/// and 400 have some |I(w)| ≥ 32 and stay with Clarabel).
pub const AUTO_MIN_N: usize = 300;

/// One λ's reduced LP solved with `solver`: the solution, the LP it solves, the solver's
/// name, and why the block-angular method gave way if it did (its `MDP_BLOCK_DEBUG` notes
/// on `progress`).
fn solve_reduced(
    space: &Space,
    eps_lp: &Q,
    repl: &Replacement,
    lambda: f64,
    solver: Solver,
    progress: &dyn Progress,
) -> Result<(Solution, ReducedLp, &'static str, Option<String>), BuildError> {
    let err = BuildError::from;
    let paper = || reduced_lp(space, eps_lp, repl, lambda, Form::Paper);
    // Clarabel on the paper's form, with why the block-angular method gave way (if it did).
    let clarabel = |fallback: Option<String>| {
        let red = paper();
        Ok((
            red.lp.solve_ipm_unrefined().map_err(err)?,
            red,
            "ipm",
            fallback,
        ))
    };
    match solver {
        Solver::Ipm => clarabel(None),
        Solver::Simplex => {
            let red = paper();
            Ok((red.lp.solve_simplex().map_err(err)?, red, "simplex", None))
        }
        Solver::Auto
            if space.n() < AUTO_MIN_N || repl.sets.iter().any(|s| s.len() >= AUTO_BLOCK_MAX) =>
        {
            clarabel(None)
        }
        Solver::Block | Solver::Auto => {
            let red = reduced_lp(space, eps_lp, repl, lambda, Form::Slab);
            match block_angular::solve(&red.lp, &red.blocks(), progress) {
                Ok(sol) => Ok((sol, red, "block-angular", None)),
                Err(e) if solver == Solver::Auto => {
                    drop(red);
                    clarabel(Some(e.to_string()))
                }
                Err(e) => Err(err(e)),
            }
        }
    }
}

/// The certified ConstOPTMech and how it was found.
pub struct Built {
    pub matrix: Matrix,
    pub counts: Counts,
    pub trials: Vec<Trial>,
    pub best: usize,
    /// Uniform mix of the exact repair.
    pub t: f64,
}

/// The λ sweep's values: at least one, each finite and > 0.
pub fn check_lambdas(lambdas: &[f64]) -> Result<(), BuildError> {
    if lambdas.is_empty() || lambdas.iter().any(|&l| !(l > 0.0 && l.is_finite())) {
        return Err(invalid("lambda", "every λ must be a finite number > 0"));
    }
    Ok(())
}

/// Algorithm 1 with a λ sweep: solve P_CONSTOPTMECH,red(ε/2) for each λ, normalize, keep
/// the least loss, repair and prove it ε·d private exactly. `progress` gets the
/// block-angular method's `MDP_BLOCK_DEBUG` notes.
pub fn constopt(space: &Space, p: &Params, progress: &dyn Progress) -> Result<Built, BuildError> {
    let n = space.n();
    if p.replacement.sets.len() != n {
        return Err(invalid(
            "replacement",
            format!("{} sets for {n} inputs", p.replacement.sets.len()),
        ));
    }
    check_lambdas(p.lambdas)?;
    let eps_lp = p.eps / Q::from(2u32);
    // The λ of the sweep are independent LPs: solved in parallel (one core each).
    use rayon::prelude::*;
    let solved: Vec<(Trial, Vec<f64>, Counts)> = p
        .lambdas
        .par_iter()
        .map(|&lambda| {
            let t0 = std::time::Instant::now();
            let (sol, red, solver, fallback) =
                solve_reduced(space, &eps_lp, p.replacement, lambda, p.solver, progress)?;
            let m = expand(&red, &sol.x);
            let loss = float_max_loss(&red.d, &m);
            let trial = Trial {
                lambda,
                lp_objective: sol.objective,
                loss,
                seconds: t0.elapsed().as_secs_f64(),
                solver,
                fallback,
            };
            Ok((trial, m, red.counts))
        })
        .collect::<Result<_, BuildError>>()?;
    // The least loss; the first λ on ties.
    let best = (0..solved.len())
        .min_by(|&a, &b| solved[a].0.loss.total_cmp(&solved[b].0.loss))
        .expect("at least one λ");
    let counts = solved[best].2;
    let (trials, mut ms): (Vec<Trial>, Vec<Vec<f64>>) =
        solved.into_iter().map(|(t, m, _)| (t, m)).unzip();
    let m = ms.swap_remove(best);
    let zero = zero_pairs(space);
    let rep = repair::repair_matrix(space, &m, n, &zero, p.eps, None, p.max_prec)
        .ok_or(BuildError::Repair)?;
    Ok(Built {
        matrix: rep.matrix,
        counts,
        trials,
        best,
        t: rep.t,
    })
}

/// ConstOPTMech's replacement function I as the settings give it (Imola et al. §3.2).
#[derive(Clone, Debug)]
pub enum ReplacementSpec {
    /// I_NN,r: each input's r nearest inputs, 1 ≤ r < n.
    NearestNeighbours { r: usize },
    /// I(v) given per input.
    Sets(Vec<Vec<usize>>),
}

/// ConstOPTMech's replacement function, checked against the space.
pub fn replacement(
    space: &Space,
    spec: &ReplacementSpec,
) -> Result<Replacement, crate::produce::ProduceError> {
    let n = space.n();
    match spec {
        ReplacementSpec::Sets(sets) => Replacement::from_sets(n, sets.clone())
            .map_err(|e| crate::produce::invalid("replacement", e.to_string())),
        ReplacementSpec::NearestNeighbours { r } => {
            check_r(*r, n)?;
            Ok(Replacement::nearest_neighbours(space, *r))
        }
    }
}

/// I_NN,r's r: 1 ≤ r < n.
pub fn check_r(r: usize, n: usize) -> Result<(), crate::produce::ProduceError> {
    if r < 1 || r >= n {
        return Err(crate::produce::invalid(
            "r",
            format!("must be in 1..{} (n = {n})", n.saturating_sub(1)),
        ));
    }
    Ok(())
}

/// ConstOPTMech as a family of [`produce`](mod@crate::produce): the reduced LP at ε/2 with a
/// replacement function, the λ sweep keeping the least loss (Imola et al. §3.2,
/// Algorithm 1), written with a k-center `packing` bound (Theorem 3, eq. 7).
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # use mdp::lp::Solver;
/// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
/// let family = Family::Constopt(ConstOptMech {
///     replacement: ReplacementSpec::NearestNeighbours { r: 2 },
///     lambdas: vec![0.1, 1.0],
///     solver: Solver::Auto,
/// });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug)]
pub struct ConstOptMech {
    pub replacement: ReplacementSpec,
    pub lambdas: Vec<f64>,
    /// `Auto`: the block-angular interior point, Clarabel if it fails (spec/lp.md §4.5).
    pub solver: Solver,
}

impl crate::produce::MechanismFamily for ConstOptMech {
    fn name(&self) -> &'static str {
        "constopt"
    }

    fn paper_name(&self) -> String {
        match (&self.replacement, self.lambdas.as_slice()) {
            (ReplacementSpec::NearestNeighbours { r }, [lambda]) => {
                format!("ConstOPTMech(r={r},λ={lambda})")
            }
            (ReplacementSpec::NearestNeighbours { r }, _) => format!("ConstOPTMech(r={r})"),
            (ReplacementSpec::Sets(_), _) => "ConstOPTMech".into(),
        }
    }

    /// I_NN,r's r against the space. The replacement itself (given sets, or the r nearest
    /// inputs: an n² sort) and the λ sweep's memory from its exact LP sizes
    /// ([`memory_estimate`]) are checked in `build`, where the replacement is formed once,
    /// before any LP.
    fn check(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        match self.replacement {
            ReplacementSpec::NearestNeighbours { r } => check_r(r, req.space.n()),
            ReplacementSpec::Sets(_) => Ok(()),
        }
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        progress: &dyn Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let (space, n) = (req.space, req.space.n());
        let repl = replacement(space, &self.replacement)?;
        let need = memory_estimate(n, &reduced_counts(n, &repl), self.lambdas.len());
        if need > req.max_memory {
            return Err(crate::produce::invalid(
                "max-memory",
                format!(
                    "ConstOPTMech over {n} inputs needs about {} for {} λ (estimate), over the budget of {}; use fewer points or λ, or raise the budget",
                    crate::produce::mib(need),
                    self.lambdas.len(),
                    crate::produce::mib(req.max_memory)
                ),
            ));
        }
        let params = Params {
            eps: &req.eps,
            replacement: &repl,
            lambdas: &self.lambdas,
            max_prec: crate::produce::MAX_PREC,
            solver: self.solver,
        };
        let built = constopt(space, &params, progress)?;
        for t in &built.trials {
            if let Some(why) = &t.fallback {
                progress.note(&format!(
                    "constopt: λ = {}: {why}; solved by Clarabel",
                    t.lambda
                ));
            }
            progress.note(&format!(
                "constopt: λ = {:<8} LP objective {:.9}, loss {:.9}, {:.2} s ({})",
                t.lambda, t.lp_objective, t.loss, t.seconds, t.solver
            ));
        }
        let (certificate, lower_bound) =
            crate::produce::packing_certificate(space, &req.eps).unzip();
        let r = match self.replacement {
            ReplacementSpec::NearestNeighbours { r } => Some(r),
            ReplacementSpec::Sets(_) => None,
        };
        Ok(crate::produce::Assembled {
            meta: serde_json::json!({"constopt": {
                "r": r,
                "lambda": built.trials[built.best].lambda,
                "trials": built.trials,
                "lp": built.counts,
                "theorem1_bounds": theorem1_bounds(n, &repl),
                "uniform_mix": built.t,
            }}),
            lp_size: Some((built.counts.nonzeros, built.counts.rows)),
            certificate,
            lower_bound,
            ..crate::produce::Assembled::matrix(built.matrix)
        })
    }
}
