//! The localized PMO LP (spec/lp.md §4.6): under pure ε·d privacy an output's probability
//! can fall by at most e^{ε d} per privacy row, and at the optimum it does fall at that
//! rate away from the inputs that prefer the output. So on a `--within` LP over a space
//! much wider than 37/ε, output k only needs variables for
//! the inputs within a chained decay of [`DECAY`] (a factor e^{−37} ≈ 10⁻¹⁶) of its
//! *cell*, the inputs whose cheapest output it is ([`neighbourhoods`]). The structured
//! interior point solves that LP with one small block per output
//! ([`super::block_ipm::solve_local`]); its row duals bound the whole LP as they are
//! (the verifier takes an absent variable's bare cost), and its mechanism is completed
//! outside the neighbourhoods by the largest chained decay ([`complete`]), which satisfies
//! every privacy row of the pair set. The exact repair and the exact dual check then
//! decide, as for every float solution: nothing here is trusted.

use super::model::{Objective, PrivacyLp};
use crate::metric::Ord64;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The chained decay beyond which an output's probabilities are left out: e^{−30} ≈
/// 9.4·10⁻¹⁴ of the cell's, below [`SPILL`], so the completed entries need no larger
/// neighbourhood. It was 37 (10⁻¹⁶, under a row's float rounding) until session 38: on
/// 5 000 Rome road nodes (K = 100, ε = 10/km, η = 2 km, `--gap 1e-6`) 30 holds 9.8 % of
/// the variables instead of 12.8 % and the certified build took 106 s instead of 160 s
/// (one run each), the bound 2.4·10⁻⁷ (relative) lower, within the aim (spec/lp.md §4.9).
pub const DECAY: f64 = 30.0;

/// Localize only when the neighbourhoods hold at most this share of the n·K variables:
/// above it the whole LP's shared block layout is cheaper.
pub const MAX_SHARE: f64 = 0.5;

/// The privacy rows' graph: for each input u, the pairs (u, v) with ln c_dn(u, v) (the
/// row M\[u\]\[k\] ≤ c_dn M\[v\]\[k\] lets M\[v\]\[k\] fall to M\[u\]\[k\]/c_dn).
fn decay_graph(lp: &PrivacyLp) -> Vec<Vec<(u32, f64)>> {
    let n = lp.n;
    let mut adj = vec![vec![]; n];
    for &(u, v) in &lp.pairs {
        adj[u].push((v as u32, lp.c_dn[u * n + v].max(1.0).ln()));
    }
    adj
}

/// Dijkstra from the sources `dist` (finite entries) over `adj`, settling inputs up to
/// `limit`; `dist` holds the chained lengths found (∞ beyond the limit).
fn chain_lengths(adj: &[Vec<(u32, f64)>], dist: &mut [f64], limit: f64) {
    let mut heap: BinaryHeap<Reverse<(Ord64, u32)>> = dist
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_finite())
        .map(|(u, &d)| Reverse((Ord64(d), u as u32)))
        .collect();
    while let Some(Reverse((Ord64(d), u))) = heap.pop() {
        if d > dist[u as usize] {
            continue;
        }
        for &(v, w) in &adj[u as usize] {
            let nd = d + w;
            if nd <= limit && nd < dist[v as usize] {
                dist[v as usize] = nd;
                heap.push(Reverse((Ord64(nd), v)));
            }
        }
    }
}

/// Each output's cell: the inputs for which it is a cheapest output (the first seeds of
/// [`neighbourhoods`]); `None` for a max loss, which is not localized.
pub fn cells(lp: &PrivacyLp) -> Option<Vec<Vec<u32>>> {
    if lp.objective == Objective::MaxLoss {
        return None;
    }
    let kk = lp.k();
    let mut cells = vec![vec![]; kk];
    for u in 0..lp.n {
        let c = &lp.cost_dn[u * kk..(u + 1) * kk];
        let min = c.iter().cloned().fold(f64::INFINITY, f64::min);
        for (k, &v) in c.iter().enumerate() {
            if v <= min {
                cells[k].push(u as u32);
            }
        }
    }
    Some(cells)
}

/// Each output's neighbourhood: the inputs within a chained decay of [`DECAY`] of its
/// seeds (its cell, [`cells`], and the inputs that priced in on an earlier solve), sorted.
/// `None` when localizing does not pay (more than [`MAX_SHARE`] of the variables).
pub fn neighbourhoods(lp: &PrivacyLp, seeds: &[Vec<u32>]) -> Option<Vec<Vec<u32>>> {
    let (n, kk) = (lp.n, lp.k());
    let adj = decay_graph(lp);
    let keep: Vec<Vec<u32>> = seeds
        .par_iter()
        .map(|cell| {
            let mut dist = vec![f64::INFINITY; n];
            cell.iter().for_each(|&u| dist[u as usize] = 0.0);
            chain_lengths(&adj, &mut dist, DECAY);
            (0..n as u32)
                .filter(|&u| dist[u as usize].is_finite())
                .collect()
        })
        .collect();
    let held: usize = keep.iter().map(Vec::len).sum();
    (held as f64 <= MAX_SHARE * (n * kk) as f64).then_some(keep)
}

/// Complete the localized LP's mechanism `m` (n×K, zeros outside `keep`): every entry
/// becomes the largest chained decay max_v M\[v\]\[k\]/C(v → u) over the held entries, C the
/// product of c_dn along a path of privacy rows (so held entries stay unless a path
/// outside the neighbourhood is shorter). The result satisfies every privacy row of the
/// pair set in exact arithmetic on these floats (a row's two ends differ by at most one
/// edge of the paths); its rows sum to 1 plus the completed mass, which the repair
/// normalizes away. Returns the *spills*: the entries (u, k) outside the neighbourhoods
/// completed above [`SPILL`], where the neighbourhood was too small (normalizing them away
/// would cost the repair a mix of their order over c − 1 of the nearest pairs).
pub fn complete(lp: &PrivacyLp, m: &mut [f64], keep: &[Vec<u32>]) -> Vec<(u32, u32)> {
    let (n, kk) = (lp.n, lp.k());
    let adj = decay_graph(lp);
    let cols: Vec<Vec<f64>> = keep
        .par_iter()
        .enumerate()
        .map(|(k, ins)| {
            let mut dist = vec![f64::INFINITY; n];
            for &u in ins {
                let x = m[u as usize * kk + k];
                if x > 0.0 {
                    dist[u as usize] = -x.ln();
                }
            }
            // Below e^{−700} an entry is 0 in f64 anyway.
            chain_lengths(&adj, &mut dist, 700.0);
            dist.iter().map(|d| (-d).exp()).collect()
        })
        .collect();
    let mut spills = vec![];
    let mut held = vec![false; n];
    for (k, col) in cols.iter().enumerate() {
        keep[k].iter().for_each(|&u| held[u as usize] = true);
        for (u, &x) in col.iter().enumerate() {
            let e = &mut m[u * kk + k];
            *e = e.max(x);
            if !held[u] && x > SPILL {
                spills.push((u as u32, k as u32));
            }
        }
        keep[k].iter().for_each(|&u| held[u as usize] = false);
    }
    spills
}

/// The largest completed entry outside a neighbourhood that needs no larger one.
pub const SPILL: f64 = 1e-13;

/// The expected loss the exact repair will give the completed mechanism `m` (n×K), in
/// floats, and the mix r it will need ([`mix_estimate`]): the row-normalized loss moved
/// towards the uniform mechanism's by r/(1 + r).
pub fn repaired_loss_estimate(lp: &PrivacyLp, m: &[f64]) -> (f64, f64) {
    let kk = lp.k();
    let (mut loss, mut uniform) = (0.0, 0.0);
    for u in 0..lp.n {
        let (row, c) = (&m[u * kk..(u + 1) * kk], &lp.cost_dn[u * kk..(u + 1) * kk]);
        let s: f64 = row.iter().sum();
        let pi = lp.prior_f64(u);
        loss += pi * row.iter().zip(c).map(|(x, c)| x * c).sum::<f64>() / s;
        uniform += pi * c.iter().sum::<f64>() / kk as f64;
    }
    let r = mix_estimate(lp, m);
    (loss + r / (1.0 + r) * (uniform - loss).max(0.0), r)
}

/// The exact repair's uniform mix r = t/(1−t) for the float mechanism `m` (n×K), estimated
/// in floats (`lp::repair` step 3, which bounds it rigorously): the rows normalized to H,
/// the largest (H\[u\]\[k\] − c H\[v\]\[k\])·K/(c − 1) over the privacy rows with c > 1.
pub fn mix_estimate(lp: &PrivacyLp, m: &[f64]) -> f64 {
    let (n, kk) = (lp.n, lp.k());
    let sums: Vec<f64> = m.chunks(kk).map(|r| r.iter().sum()).collect();
    lp.pairs
        .par_iter()
        .map(|&(u, v)| {
            let c = lp.c_dn[u * n + v];
            if c <= 1.0 {
                return 0.0;
            }
            let (hu, hv) = (&m[u * kk..(u + 1) * kk], &m[v * kk..(v + 1) * kk]);
            hu.iter()
                .zip(hv)
                .map(|(a, b)| (a / sums[u] - c * b / sums[v]) * kk as f64 / (c - 1.0))
                .fold(0.0, f64::max)
        })
        .reduce(|| 0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::Q;
    use crate::mechanisms::optimal::{pmo_lp, PmoParams};
    use crate::metric::{MetricKind, Space};

    /// 60 points 1/4 apart on a line, ε = 20, η = 1, every sixth point an output: the
    /// outputs' neighbourhoods (chained decay 37, ≈ 1.85 on either side of a cell) hold
    /// about a third of the variables.
    fn line<'a>(space: &'a Space, eps: &Q, eta: &'a Q) -> PrivacyLp<'a> {
        let params = PmoParams {
            within: Some(eta),
            prior: None,
            cost: None,
            outputs: Some((0..60).step_by(6).collect()),
        };
        pmo_lp(space, eps, &params, 64).unwrap()
    }

    fn line_space() -> Space {
        let pts = (0..60i64).map(|i| vec![Q::from_signeds(i, 4)]).collect();
        Space::from_points(MetricKind::Euclidean, pts, None).unwrap()
    }

    #[test]
    fn neighbourhoods_hold_their_cells_and_stop_at_the_decay() {
        let (space, eps, eta) = (line_space(), Q::from(20u32), Q::from(1u32));
        let lp = line(&space, &eps, &eta);
        let seeds = cells(&lp).unwrap();
        // Every input is in the cell of a nearest output.
        let mut seen = [false; 60];
        seeds
            .iter()
            .flatten()
            .for_each(|&u| seen[u as usize] = true);
        assert!(seen.iter().all(|&s| s));
        let keep = neighbourhoods(&lp, &seeds).unwrap();
        let held: usize = keep.iter().map(Vec::len).sum();
        assert!(held < 60 * 10 / 2, "{held} variables held");
        for (k, (cell, ins)) in seeds.iter().zip(&keep).enumerate() {
            assert!(cell.iter().all(|u| ins.contains(u)), "output {k}");
            // Within DECAY/ε = 30/20 = 1.5 of the cell (6 steps of 1/4), and not beyond it.
            let (lo, hi) = (cell[0] as i64, *cell.last().unwrap() as i64);
            for u in 0..60i64 {
                let gap = (lo - u).max(u - hi).max(0);
                assert_eq!(
                    ins.contains(&(u as u32)),
                    gap <= 6,
                    "output {k}, input {u}, {gap} steps from its cell"
                );
            }
        }
        // A max loss is not localized.
        let opt = crate::mechanisms::optimal::optimal_lp(&space, &eps, 64);
        assert!(cells(&opt).is_none());
    }

    #[test]
    fn completion_satisfies_every_privacy_row() {
        let (space, eps, eta) = (line_space(), Q::from(20u32), Q::from(1u32));
        let lp = line(&space, &eps, &eta);
        let keep = neighbourhoods(&lp, &cells(&lp).unwrap()).unwrap();
        let (n, kk) = (lp.n, lp.k());
        // Held entries at pseudo-random values that need not satisfy the rows among them.
        let mut m = vec![0.0; n * kk];
        let mut state = 12345u64;
        for (k, ins) in keep.iter().enumerate() {
            for &u in ins {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                m[u as usize * kk + k] = ((state >> 11) as f64 / (1u64 << 53) as f64).max(1e-3);
            }
        }
        let before = m.clone();
        complete(&lp, &mut m, &keep);
        for &(u, v) in &lp.pairs {
            let c = lp.c_dn[u * n + v];
            for k in 0..kk {
                let (a, b) = (m[u * kk + k], m[v * kk + k]);
                assert!(
                    a <= c * b * (1.0 + 1e-12),
                    "row ({u}, {v}, {k}): {a} > {c}·{b}"
                );
            }
        }
        // Completion only raises entries.
        assert!(m.iter().zip(&before).all(|(a, b)| a >= b));
    }
}
