//! The privacy LPs of the papers, assembled with **directed rounding**.
//!
//! One model covers the three LP mechanisms:
//!
//! * OPTMech (Imola et al. 2022, §2, the LP after eq. (5)): minimize the worst-case loss
//!   L subject to Σ_k M\[u\]\[k\] = 1, Σ_k c(u,k) M\[u\]\[k\] ≤ L and the privacy rows
//!   M\[u\]\[k\] ≤ e^{ε d(u,v)} M\[v\]\[k\] for every ordered pair (u, v) and output k;
//! * PMO (Bordenabe et al. 2014; Qiu 2024 §2.2, eq. (3)): minimize Σ_u π_u Σ_k c(u,k)
//!   M\[u\]\[k\] over N secrets × K outputs with privacy only for pairs with d(u,v) ≤ η;
//! * SpannerMech (Imola et al. Appendix A): OPTMech's rows restricted to the edges of a
//!   (2k−1)-spanner, at ε/stretch (Theorem 4).
//!
//! Every coefficient is a **dyadic rational stored exactly as an `f64`**: the float solver
//! sees exactly the rational LP described here, and the exact checker reads the same
//! numbers. Irrational constants are rounded in the direction that keeps each use sound
//! (`spec/lp.md` §2):
//!
//! * the mechanism's rows use `c_dn ≤ e^{ε d}` (a feasible point is truly private), capped at
//!   [`C_CAP`] (lower caps from [`CAPS`] if the float solver fails) (a smaller constant only tightens the row);
//! * the relaxation behind a lower bound uses `c_up ≥ e^{ε d}` and costs rounded down;
//!   rows with `c_up` above the cap are left out (dropping rows only weakens the relaxation).
//!
//! Rows implied exactly by two others (d(u,z) + d(z,v) = d(u,v), decided in exact
//! rationals) are pruned: both directions of the argument survive pruning (spec §3).

use super::sparse::{Sense, SparseLp};
use crate::exact::{f64_down, Q};
use crate::metric::{ExactDistance, Space};
use crate::privacy::exp_eps_d;
use rayon::prelude::*;
use std::cmp::Ordering;

/// The largest privacy constant first given to the interior point (2^40): its rows are
/// scaled, (1/c)·M_u − M_v ≤ 0, so a large c costs it no accuracy, and a cap this high
/// leaves the optimum and the relaxation nearly untouched (measured: 40 Rome records at
/// ε = 0.5/km, certified relative gap 9·10⁻⁶ with 2^19 → 7·10⁻⁹, 28 s → 3 s; spec/lp.md §2).
pub const C_CAP: f64 = 1_099_511_627_776.0;
/// The largest constant given to microlp's simplex (2^19): keeps every row's coefficients
/// within six orders of magnitude, as microlp asks.
pub const SIMPLEX_CAP: f64 = 524_288.0;
/// Caps tried, in order, when the float solver fails numerically (spec/lp.md §2).
pub const CAPS: [f64; 4] = [C_CAP, SIMPLEX_CAP, 65_536.0, 4_096.0];

/// Bytes per working privacy row of the float solvers, measured with `/usr/bin/time` on
/// whole OPTMech LPs (planar n = 30: 1.47 KB, n = 50: 1.26 KB per row, Clarabel's KKT
/// system and factor included): the largest, rounded up.
const BYTES_PER_ROW: u64 = 1_500;

/// An estimate, before anything is built, of the memory a privacy LP over `n` inputs and
/// `k` outputs needs: its working rows (the whole LP up to [`super::ipm::FULL_ROWS`], or the first lazy rounds: at least
/// 3 rows per (u, k)) at `BYTES_PER_ROW`, plus the n×n constant tables. Builders refuse
/// past `--max-memory` instead of being killed by the allocator.
pub fn memory_estimate(n: u64, k: u64) -> u64 {
    let total = rows_upper(n, k);
    let working =
        total.min((super::ipm::FULL_ROWS as u64).max(n.saturating_mul(k).saturating_mul(3)));
    working
        .saturating_mul(BYTES_PER_ROW)
        .saturating_add(n.saturating_mul(n).saturating_mul(64))
        .saturating_add(32 << 20)
}

/// The privacy rows of an LP over `n` inputs and `k` outputs with every ordered pair,
/// n(n−1)·k (saturating): an upper bound before scope and pruning.
pub fn rows_upper(n: u64, k: u64) -> u64 {
    n.saturating_mul(n.saturating_sub(1)).saturating_mul(k)
}

/// What the LP minimizes.
#[derive(Clone, Debug, PartialEq)]
pub enum Objective {
    /// The worst-case loss max_u Σ_k c(u,k) M\[u\]\[k\] (OPTMech, SpannerMech).
    MaxLoss,
    /// The expected loss Σ_u π_u Σ_k c(u,k) M\[u\]\[k\]; `prior` is normalized to sum 1.
    Expected { prior: Vec<Q> },
}

/// A privacy LP: the data every producer, the MPS writer and the dual verifier share.
#[derive(Clone)]
pub struct PrivacyLp<'a> {
    pub space: &'a Space,
    /// The ε of the privacy rows (ε/stretch for SpannerMech).
    pub eps: Q,
    /// Number of inputs (rows of M).
    pub n: usize,
    /// Output k is input `outputs\[k\]` (all inputs for OPTMech; Qiu's O ⊆ R for PMO).
    pub outputs: Vec<usize>,
    pub objective: Objective,
    /// Costs rounded down, n×K (exact dyadics).
    pub cost_dn: Vec<f64>,
    /// e^{ε d(u,v)} rounded down and capped at `cap` (primal), indexed u·n + v.
    pub c_dn: PairCoef,
    /// The cap on the float solver's constants ([`CAPS`]); the relaxation leaves out rows
    /// with c_up above it.
    pub cap: f64,
    /// e^{ε d(u,v)} rounded up (relaxation), indexed u·n + v; +∞ when it overflows.
    pub c_up: PairCoef,
    /// The ordered pairs (u, v), u ≠ v, whose rows M\[u\]\[k\] ≤ c M\[v\]\[k\] the LP has, after
    /// scope and pruning.
    pub pairs: Vec<(usize, usize)>,
    /// Pairs at distance exactly 0 (their rows must be equal); (u, v) with u < v.
    pub zero_pairs: Vec<(usize, usize)>,
}

/// A constant per ordered pair (u, v), indexed u·n + v: an n×n table, or, on a graph
/// without its table ([`Space::roads`]), the LP's pairs alone (issue 56: at 43 160 road
/// nodes an n×n table of f64 is 15 GB, the edges' 2·10⁵).
#[derive(Clone, Debug)]
pub enum PairCoef {
    Dense(Vec<f64>),
    Sparse(std::collections::HashMap<usize, f64>),
}

impl std::ops::Index<usize> for PairCoef {
    type Output = f64;
    fn index(&self, i: usize) -> &f64 {
        match self {
            PairCoef::Dense(v) => &v[i],
            PairCoef::Sparse(m) => m
                .get(&i)
                .expect("a constant of a pair the LP holds (sparse PairCoef)"),
        }
    }
}

impl PairCoef {
    fn map_in_place(&mut self, f: impl Fn(f64) -> f64) {
        match self {
            PairCoef::Dense(v) => v.iter_mut().for_each(|c| *c = f(*c)),
            PairCoef::Sparse(m) => m.values_mut().for_each(|c| *c = f(*c)),
        }
    }
}

/// The pairs u < v of inputs at distance exactly 0 (privacy forces equal rows).
pub fn zero_pairs(space: &Space) -> Vec<(usize, usize)> {
    if space.roads().is_some() {
        return Vec::new(); // weights are > 0
    }
    let n = space.n();
    let mut out = vec![];
    for u in 0..n {
        for v in u + 1..n {
            if space.is_zero(u, v) {
                out.push((u, v));
            }
        }
    }
    out
}

/// How [`PrivacyLp::to_sparse`] writes a privacy row M\[u\]\[k\] ≤ c_dn(u,v) M\[v\]\[k\].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowForm {
    /// M_u − c_dn M_v ≤ 0: the model's exact dyadic coefficients (MPS export).
    Plain,
    /// (1/c_dn) M_u − M_v ≤ 0: the interior point's form, so its dual is c_dn·γ and an
    /// error in z within the tolerance is not amplified by c in the certificate
    /// (spec/lp.md §5).
    Scaled,
}

/// How the pairs of a privacy LP are chosen.
pub enum PairSet<'b> {
    /// Every ordered pair of distinct inputs.
    All,
    /// Pairs with d(u, v) ≤ η, decided exactly.
    Within(&'b Q),
    /// The given undirected edges, both directions (SpannerMech).
    Edges(&'b [(usize, usize)]),
}

impl<'a> PrivacyLp<'a> {
    /// Assemble the LP. `cost`: n×K exact costs, or `None` for c(u,k) = d(u, outputs\[k\]).
    /// `max_prec` bounds the exact scope / pruning decisions; an undecidable one keeps the
    /// row (always sound).
    pub fn new(
        space: &'a Space,
        eps: Q,
        outputs: Vec<usize>,
        objective: Objective,
        cost: Option<&[Q]>,
        pairs: PairSet,
        max_prec: u64,
    ) -> PrivacyLp<'a> {
        let n = space.n();
        let k = outputs.len();
        // A graph without its table: the rows from the outputs are kept (K · n enclosures)
        // for the costs; every other query is a pair of an edge.
        if cost.is_none() {
            space.keep_rows(&outputs);
        }
        let cost_dn: Vec<f64> = (0..n)
            .into_par_iter()
            .flat_map_iter(|u| {
                let outputs = &outputs;
                (0..k).map(move |j| match cost {
                    Some(c) => f64_down(&c[u * k + j]),
                    None => {
                        if space.is_zero(u, outputs[j]) {
                            0.0
                        } else {
                            space.fi(u, outputs[j]).lo.max(0.0)
                        }
                    }
                })
            })
            .collect();
        let (pairs, c_dn, c_up, zero_pairs) = match space.roads() {
            // A graph without its table: the edges' rows, their constants alone.
            Some(roads) => {
                let pairs = road_pairs(roads, &pairs);
                let cs: Vec<(usize, (f64, f64))> = pairs
                    .par_iter()
                    .map(|&(u, v)| {
                        let c = exp_eps_d(space, &eps, u, v);
                        (u * n + v, (c.lo.clamp(1.0, C_CAP), c.hi))
                    })
                    .collect();
                let c_dn = PairCoef::Sparse(cs.iter().map(|&(i, (lo, _))| (i, lo)).collect());
                let c_up = PairCoef::Sparse(cs.iter().map(|&(i, (_, hi))| (i, hi)).collect());
                (pairs, c_dn, c_up, Vec::new())
            }
            None => {
                let cs: Vec<(f64, f64)> = (0..n * n)
                    .into_par_iter()
                    .map(|i| {
                        let (u, v) = (i / n, i % n);
                        if u == v {
                            return (1.0, 1.0);
                        }
                        let c = exp_eps_d(space, &eps, u, v);
                        (c.lo.clamp(1.0, C_CAP), c.hi)
                    })
                    .collect();
                let (c_dn, c_up): (Vec<f64>, Vec<f64>) = cs.into_iter().unzip();
                let candidate: Vec<(usize, usize)> = match pairs {
                    PairSet::All => (0..n)
                        .flat_map(|u| (0..n).filter(move |&v| v != u).map(move |v| (u, v)))
                        .collect(),
                    PairSet::Within(eta) => (0..n)
                        .into_par_iter()
                        .flat_map_iter(|u| {
                            (0..n)
                                .filter(move |&v| {
                                    v != u
                                        && space.cmp_distance(u, v, eta, max_prec)
                                            != Some(Ordering::Greater)
                                })
                                .map(move |v| (u, v))
                        })
                        .collect(),
                    PairSet::Edges(edges) => both_directions(edges.iter().copied()),
                };
                (
                    prune_implied(space, &candidate),
                    PairCoef::Dense(c_dn),
                    PairCoef::Dense(c_up),
                    zero_pairs(space),
                )
            }
        };
        PrivacyLp {
            space,
            eps,
            n,
            outputs,
            objective,
            cost_dn,
            c_dn,
            cap: C_CAP,
            c_up,
            pairs,
            zero_pairs,
        }
    }

    /// Lower the cap (only tightens the mechanism's rows; spec/lp.md §2).
    pub fn lower_cap(&mut self, cap: f64) {
        self.cap = self.cap.min(cap);
        let cap = self.cap;
        self.c_dn.map_in_place(|c| c.min(cap));
    }

    /// A copy with a lower cap.
    pub fn clone_with_cap(&self, cap: f64) -> PrivacyLp<'a> {
        let mut c = self.clone();
        c.lower_cap(cap);
        c
    }

    /// Number of outputs K.
    /// The LP with the privacy rows `rows` (u, v, k) as a [`SparseLp`], variables
    /// [L (max loss only), M row-major]: Σ_k M\[u\]\[k\] = 1 (`sum_u`), Σ_k c_dn(u,k)
    /// M\[u\]\[k\] − L ≤ 0 (`loss_u`, max loss only), then one row `p_u_v_k` per privacy row
    /// in `form`; objective L or Σ_u π_u Σ_k c_dn(u,k) M\[u\]\[k\].
    pub fn to_sparse(&self, rows: &[(u32, u32, u32)], form: RowForm) -> SparseLp {
        let (n, kk) = (self.n, self.k());
        let max_loss = self.objective == Objective::MaxLoss;
        let off = usize::from(max_loss);
        let mv = |u: usize, k: usize| off + u * kk + k;
        let mut lp = SparseLp::default();
        if max_loss {
            lp.var(1.0);
            lp.var_names.push("L".into());
        }
        for u in 0..n {
            let w = self.prior_f64(u);
            for k in 0..kk {
                lp.var(if max_loss {
                    0.0
                } else {
                    w * self.cost_dn[u * kk + k]
                });
                lp.var_names.push(format!("M_{u}_{k}"));
            }
        }
        for u in 0..n {
            lp.row((0..kk).map(|k| (mv(u, k), 1.0)).collect(), Sense::Eq, 1.0);
            lp.row_names.push(format!("sum_{u}"));
        }
        if max_loss {
            for u in 0..n {
                let mut coefs = vec![(0, -1.0)];
                coefs.extend(
                    (0..kk)
                        .filter(|&k| self.cost_dn[u * kk + k] != 0.0)
                        .map(|k| (mv(u, k), self.cost_dn[u * kk + k])),
                );
                lp.row(coefs, Sense::Le, 0.0);
                lp.row_names.push(format!("loss_{u}"));
            }
        }
        for &(u, v, k) in rows {
            let (u, v, k) = (u as usize, v as usize, k as usize);
            let c = self.c_dn[u * n + v];
            let (a, b) = match form {
                RowForm::Plain => (1.0, -c),
                RowForm::Scaled => (1.0 / c, -1.0),
            };
            lp.row(vec![(mv(u, k), a), (mv(v, k), b)], Sense::Le, 0.0);
            lp.row_names.push(format!("p_{u}_{v}_{k}"));
        }
        lp
    }

    pub fn k(&self) -> usize {
        self.outputs.len()
    }

    /// The privacy rows: one per pair and output (what the every-row phase holds, and
    /// [`crate::lp::block_ipm::MAX_ROWS`] bounds).
    pub fn rows_total(&self) -> u64 {
        self.pairs.len() as u64 * self.k() as u64
    }

    /// Objective weight of input u in the primal (1 for max loss; π_u for expected loss).
    pub fn prior_f64(&self, u: usize) -> f64 {
        match &self.objective {
            Objective::MaxLoss => 1.0,
            Objective::Expected { prior } => crate::exact::f64_nearest(&prior[u]),
        }
    }

    /// The LP's objective at a mechanism `m` (n×K) in `f64`: the max or the prior-weighted
    /// loss with the rounded-down costs, entries rounded to nearest. A report's estimate of
    /// what the written matrix costs, not a bound (the auditor's enclosure is that).
    pub fn objective_f64(&self, m: &crate::mechanism::Matrix) -> f64 {
        let kk = self.k();
        let loss = |u: usize| -> f64 {
            m.row(u)
                .iter()
                .zip(&self.cost_dn[u * kk..(u + 1) * kk])
                .map(|(p, c)| crate::exact::f64_nearest(p) * c)
                .sum()
        };
        match self.objective {
            Objective::MaxLoss => (0..self.n).map(loss).fold(0.0, f64::max),
            Objective::Expected { .. } => (0..self.n).map(|u| self.prior_f64(u) * loss(u)).sum(),
        }
    }
}

/// The LP's ordered pairs on a graph without its table: both directions of every edge
/// (of weight ≤ η within η), sorted. The LP over them has the feasible set of the LP over
/// every pair in scope (the chaining argument of `structured::edges`: a pair with
/// d(u, v) ≤ η has a shortest path of edges each ≤ d(u, v); an edge (a, b) of weight
/// w ≤ η is itself a pair with d(a, b) ≤ w, and its row uses d(a, b)). Weights are
/// rational: w ≤ η is decided exactly.
fn road_pairs(roads: &crate::metric::Roads, set: &PairSet) -> Vec<(usize, usize)> {
    let eta = match set {
        PairSet::All => None,
        PairSet::Within(eta) => Some(*eta),
        PairSet::Edges(edges) => return both_directions(edges.iter().copied()),
    };
    both_directions(
        roads
            .edges()
            .iter()
            .filter(|(_, _, w)| eta.is_none_or(|e| w <= e))
            .map(|&(a, b, _)| (a as usize, b as usize)),
    )
}

/// Both directions of each undirected edge, sorted, without repeats.
fn both_directions(edges: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut p: Vec<(usize, usize)> = edges.flat_map(|(a, b)| [(a, b), (b, a)]).collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// Rational distance, if the metric gives one.
fn rational(space: &Space, u: usize, v: usize) -> Option<Q> {
    match space.exact(u, v) {
        ExactDistance::Rational(q) => Some(q),
        _ => None,
    }
}

/// Drop (u, v) when some z ≠ u, v with (u, z) and (z, v) in the set has
/// d(u,z) + d(z,v) = d(u,v) exactly (all three distances rational and positive): then
/// M\[u\]\[k\] ≤ c(u,z) M\[z\]\[k\] ≤ c(u,z) c(z,v) M\[v\]\[k\] ≤ e^{ε d(u,v)} M\[v\]\[k\] for any
/// c ≤ e^{εd}, and a relaxation may always lose rows. A float filter picks the
/// candidates; equality is decided exactly.
pub fn prune_implied(space: &Space, pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let n = space.n();
    let mut present = vec![false; n * n];
    for &(u, v) in pairs {
        present[u * n + v] = true;
    }
    let approx: Vec<f64> = (0..n * n)
        .into_par_iter()
        .map(|i| space.approx(i / n, i % n))
        .collect();
    pairs
        .par_iter()
        .copied()
        .filter(|&(u, v)| {
            let duv = approx[u * n + v];
            if duv <= 0.0 {
                return true;
            }
            for z in 0..n {
                if z == u || z == v || !present[u * n + z] || !present[z * n + v] {
                    continue;
                }
                let (a, b) = (approx[u * n + z], approx[z * n + v]);
                if a <= 0.0 || b <= 0.0 || (a + b - duv).abs() > 1e-9 * duv {
                    continue;
                }
                if let (Some(x), Some(y), Some(w)) = (
                    rational(space, u, z),
                    rational(space, z, v),
                    rational(space, u, v),
                ) {
                    // Both parts strictly shorter (exactly): the induction on d needs it;
                    // a duplicate z (d = 0) would let two pairs prune each other.
                    if x > 0u32 && y > 0u32 && x + y == w {
                        return false;
                    }
                }
            }
            true
        })
        .collect()
}
