//! Proposition 3.2's chained inequalities as lazy master rows (Qiu 2024 §3.3): every
//! feasible M has M\[i\]\[k\] ≤ e^{ε·d_G(i,j)}·M\[j\]\[k\] along a path of η-neighbours
//! i = p₀, p₁, …, p_L = j, the product of the path's rows M\[p_t\]\[k\] ≤ c·M\[p_{t+1}\]\[k\].
//! Between two master records whose path runs through free records, the master alone does
//! not know it: its values may break it, and the subproblem between them then needs slack
//! and the loop a penalty cut. Added lazily (only the rows the master's point violates), a
//! chain row removes that slack before a cut is needed.
//!
//! **Validity and the certificate.** The constant C is the product of the path's c_up
//! (≥ e^{ε·d}), rounded up at every step, so the row is implied by the whole LP and the
//! master stays a relaxation. Its multiplier γ (on M_i − C·M_j ≤ 0) is passed to the path's
//! rows as γ·P_t on row (p_t, p_{t+1}), P_t = Π_{s<t} c_up(p_s, p_{s+1}): the sum telescopes
//! to γ·(M_i − P_L·M_j), the chain row up to P_L ≤ C, so the whole-LP `lp_dual` of
//! `spec/benders.md` §3 keeps its proof (any Γ ≥ 0 is verified exactly; rounding only
//! lowers the proven bound).

use super::partition::Decomposition;
use crate::exact::float::next_up;
use crate::lp::model::PrivacyLp;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// A chained inequality M\[i\]\[k\] ≤ c·M\[j\]\[k\] between two master records.
#[derive(Clone, Debug)]
pub struct Chain {
    /// Master indices of the ends.
    pub i: usize,
    pub j: usize,
    /// The product of the path's c_up, rounded up.
    pub c: f64,
    /// The path's records (global), from i to j.
    pub path: Vec<usize>,
}

/// For every ordered pair of master records that are not LP neighbours, the least-product
/// path of η-neighbours (rows with c_up within the solver's cap only) that passes through
/// at least one free record, kept when its constant is within the float solver's cap (the
/// bound the LP's own rows are held to: a larger C binds only where M\[j\]\[k\] is below
/// 1/C of M\[i\]\[k\]).
pub fn chains(lp: &PrivacyLp, dec: &Decomposition) -> Vec<Chain> {
    let n = lp.n;
    let usable = |u: usize, v: usize| {
        let c = lp.c_up[u * n + v];
        c.is_finite() && c <= lp.cap
    };
    let mut adj: Vec<Vec<(usize, f64)>> = vec![vec![]; n];
    for &(u, v) in &lp.pairs {
        if usable(u, v) {
            adj[u].push((v, lp.c_up[u * n + v].ln().max(0.0)));
        }
    }
    let direct: HashSet<(usize, usize)> = dec.master_pairs.iter().copied().collect();
    let mut index = vec![usize::MAX; n];
    for (j, &m) in dec.master.iter().enumerate() {
        index[m] = j;
    }
    let limit = lp.cap.ln();
    let mut out = vec![];
    for (mi, &src) in dec.master.iter().enumerate() {
        // Dijkstra on ln c_up, cut off at ln cap (with slack for the rounding).
        let mut dist = vec![f64::INFINITY; n];
        let mut prev = vec![usize::MAX; n];
        let mut heap = BinaryHeap::new();
        dist[src] = 0.0;
        heap.push((Reverse(Ord64(0.0)), src));
        while let Some((Reverse(Ord64(d)), u)) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            for &(v, w) in &adj[u] {
                let nd = d + w;
                if nd < dist[v] && nd <= limit + 1e-9 {
                    dist[v] = nd;
                    prev[v] = u;
                    heap.push((Reverse(Ord64(nd)), v));
                }
            }
        }
        for (mj, &dst) in dec.master.iter().enumerate() {
            if mj == mi || !dist[dst].is_finite() || direct.contains(&(src, dst)) {
                continue;
            }
            let mut path = vec![dst];
            while let Some(&last) = path.last() {
                if last == src {
                    break;
                }
                path.push(prev[last]);
            }
            path.reverse();
            if path[1..path.len() - 1].iter().all(|&u| index[u] != usize::MAX) {
                // Through master records only: the master's own rows imply it.
                continue;
            }
            let c = path
                .windows(2)
                .fold(1.0f64, |acc, w| next_up(acc * lp.c_up[w[0] * n + w[1]]));
            if c <= lp.cap {
                out.push(Chain {
                    i: mi,
                    j: mj,
                    c,
                    path,
                });
            }
        }
    }
    out
}

/// The chain rows (chain, output) the master values `y` (|master| × K) break by more than
/// `tol` (absolute, on M_i/C − M_j), not already in `have`.
pub fn violated(
    chains: &[Chain],
    k: usize,
    y: &[f64],
    tol: f64,
    have: &HashSet<(usize, usize)>,
) -> Vec<(usize, usize)> {
    let mut out = vec![];
    for (ci, ch) in chains.iter().enumerate() {
        for t in 0..k {
            if y[ch.i * k + t] / ch.c - y[ch.j * k + t] > tol && !have.contains(&(ci, t)) {
                out.push((ci, t));
            }
        }
    }
    out
}

/// The multiplier γ of chain row (`chain`, output `k`) spread on the path's LP rows
/// (global (u, v, k) and their γ), as the module doc says.
pub fn spread(lp: &PrivacyLp, chain: &Chain, k: usize, gamma: f64) -> Vec<(usize, usize, usize, f64)> {
    let n = lp.n;
    let mut p = gamma;
    chain
        .path
        .windows(2)
        .map(|w| {
            let row = (w[0], w[1], k, p);
            p *= lp.c_up[w[0] * n + w[1]];
            row
        })
        .collect()
}

/// f64 ordered by `total_cmp` (for the heap).
struct Ord64(f64);

impl PartialEq for Ord64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ord64 {}

impl PartialOrd for Ord64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ord64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
