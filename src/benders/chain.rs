//! Proposition 3.2's chained inequalities as lazy master rows (Qiu 2024 §3.3): every
//! feasible M has M\[i\]\[k\] ≤ e^{ε·d_G(i,j)}·M\[j\]\[k\] along a path of LP neighbours
//! i = p₀, p₁, …, p_L = j, the product of the path's rows M\[p_t\]\[k\] ≤ c·M\[p_{t+1}\]\[k\].
//! Between two master records whose path runs through free records, the master alone does
//! not know it: its values may break it, and the subproblem between them then needs slack
//! and the loop a penalty cut. Added lazily (only the rows the master's point violates), a
//! chain row removes that slack before a cut is needed.
//!
//! **Validity and the certificate.** The constant C is the product of the path's c_up
//! (≥ e^{ε·d}), rounded up at every step, so the row is implied by the whole LP and the
//! master stays a relaxation. Its multiplier γ (on M_i − C·M_j ≤ 0) is passed to the path's
//! rows as γ·P_t on row (p_t, p_{t+1}), P_0 = 1 and P_{t+1} = P_t·c_up rounded up (so
//! P_L = C). With the LP's exact constants e_t ≤ c_up the sum is
//! γ·M_i + Σ_t γ·(P_{t+1} − P_t·e_t)·M_{p_{t+1}} − γ·P_L·M_j: the chain row's terms, plus
//! non-negative coefficients on the interior (free) records, which can only raise the
//! verifier's Σ_u min_k [π c + T] bound. So the whole-LP `lp_dual` of `spec/benders.md` §3
//! keeps its proof with chain rows among the master's rows (and Γ is verified exactly).

use super::partition::Decomposition;
use crate::exact::float::next_up;
use crate::lp::model::PrivacyLp;
use crate::metric::Ord64;
use rayon::prelude::*;
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

/// Chains whose constant exceeds this cannot be broken by more than the separation
/// tolerance [`TOL`] (master values are ≤ 1, so M_i/C − M_j ≤ 1/C): they are not kept.
pub const TOL: f64 = 1e-9;

/// For every ordered pair of master records that are not master neighbours, the
/// least-product path of LP neighbours (rows with c_up within the solver's cap) whose
/// interior is all free records (a path through another master record is implied by the
/// chains of its pieces and the master's rows), kept when its constant is
/// ≤ min(cap, 1/[`TOL`]). One Dijkstra per master record on ln c_up (ties broken by
/// record index), in parallel; deterministic.
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
    let max_c = lp.cap.min(1.0 / TOL);
    let limit = max_c.ln();
    let per_source: Vec<Vec<Chain>> = dec
        .master
        .par_iter()
        .enumerate()
        .map(|(mi, &src)| {
            // Dijkstra on ln c_up, cut off at ln max_c (with slack for the rounding); it
            // does not go on from master records other than the source.
            let mut dist = vec![f64::INFINITY; n];
            let mut prev = vec![usize::MAX; n];
            let mut heap = BinaryHeap::new();
            dist[src] = 0.0;
            heap.push(Reverse((Ord64(0.0), src)));
            while let Some(Reverse((Ord64(d), u))) = heap.pop() {
                if d > dist[u] || (u != src && dec.is_master[u]) {
                    continue;
                }
                for &(v, w) in &adj[u] {
                    let nd = d + w;
                    if nd < dist[v] && nd <= limit + 1e-9 {
                        dist[v] = nd;
                        prev[v] = u;
                        heap.push(Reverse((Ord64(nd), v)));
                    }
                }
            }
            let mut out = vec![];
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
                if path.len() < 3 {
                    // An LP row between two master records is a master row already.
                    continue;
                }
                let c = path
                    .windows(2)
                    .fold(1.0f64, |acc, w| next_up(acc * lp.c_up[w[0] * n + w[1]]));
                if c <= max_c {
                    out.push(Chain {
                        i: mi,
                        j: mj,
                        c,
                        path,
                    });
                }
            }
            out
        })
        .collect();
    per_source.into_iter().flatten().collect()
}

/// The chain rows (chain, output) the master values `y` (|master| × K) break by more than
/// [`TOL`] (on M_i/C − M_j), not already in `have`: the `most` largest violations (ties by
/// index).
pub fn violated(
    chains: &[Chain],
    k: usize,
    y: &[f64],
    have: &HashSet<(usize, usize)>,
    most: usize,
) -> Vec<(usize, usize)> {
    let mut out = vec![];
    for (ci, ch) in chains.iter().enumerate() {
        for t in 0..k {
            let v = y[ch.i * k + t] / ch.c - y[ch.j * k + t];
            if v > TOL && !have.contains(&(ci, t)) {
                out.push((v, ci, t));
            }
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    out.into_iter()
        .take(most)
        .map(|(_, ci, t)| (ci, t))
        .collect()
}

/// The multiplier γ of chain row (`chain`, output `t`) spread on the path's LP rows
/// (global (u, v, t) and their γ): γ·P_s on row (p_s, p_{s+1}), with P_s the partial
/// products of c_up rounded up exactly as the chain's constant was (so P_L = C).
pub fn spread(
    lp: &PrivacyLp,
    chain: &Chain,
    t: usize,
    gamma: f64,
) -> Vec<(usize, usize, usize, f64)> {
    let n = lp.n;
    let mut p = 1.0f64;
    chain
        .path
        .windows(2)
        .map(|w| {
            let row = (w[0], w[1], t, gamma * p);
            p = next_up(p * lp.c_up[w[0] * n + w[1]]);
            row
        })
        .collect()
}
