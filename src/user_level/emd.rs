//! The earth mover's distance between two datasets over a finite metric space
//! (Imola et al. 2024, Definition 2.4; `spec/user-level.md`, "EMD").
//!
//! d_EM(X, X') = min over couplings π of p_X and p_X' of E_π d(x, x'), p_X the normalised
//! histogram. Datasets are histograms (counts per site), of any sizes.
//!
//! * **Transport** ([`emd`]): with |X| = a and |X'| = b the supplies a'·count and demands
//!   b'·count are integers (total a·b), so successive shortest paths on the transport
//!   network give an integral optimum; every cost and comparison is an exact rational.
//! * **Irrational metrics** (haversine, euclidean): d_EM is the minimum of a linear cost
//!   over a polytope that does not depend on d, so it is monotone in d: rational tables
//!   d_lo ≤ d ≤ d_hi give d_EM(d_lo) ≤ d_EM(d) ≤ d_EM(d_hi), the enclosure returned.
//! * **Lemma 2.1** ([`assignment`]): for |X| = |X'| = m some permutation σ attains
//!   d_EM = (1/m)·Σ d(x_i, x'_σ(i)); the Hungarian method finds it (tested to agree with
//!   the transport form).
//!
//! Both count their exact operations against a [`Budget`].

use super::{invalid, Budget, UserLevelError};
use crate::exact::{Interval, Q};
use crate::metric::{ExactDistance, Space};

/// Precision (bits) of the distance enclosures of irrational metrics.
const PREC: u64 = 64;

/// A dataset as a histogram over the sites of a space: `counts[x]` copies of site x.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Vec<u64>,
}

impl Histogram {
    /// The histogram of a list of items (site indices < `sites`).
    pub fn from_items(items: &[usize], sites: usize) -> Result<Histogram, UserLevelError> {
        let mut counts = vec![0u64; sites];
        for (i, &x) in items.iter().enumerate() {
            *counts
                .get_mut(x)
                .ok_or_else(|| invalid(format!("items[{i}]"), "outside the space"))? += 1;
        }
        Ok(Histogram { counts })
    }

    /// |X|.
    pub fn size(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The sites with a positive count.
    pub fn support(&self) -> Vec<usize> {
        (0..self.counts.len())
            .filter(|&x| self.counts[x] > 0)
            .collect()
    }
}

/// The cost tables of a space restricted to rows `rows` and columns `cols`: one exact
/// table when every distance is rational, else a lower and an upper rational table.
fn cost_tables(space: &Space, rows: &[usize], cols: &[usize]) -> (Vec<Q>, Option<Vec<Q>>) {
    let mut lo = Vec::with_capacity(rows.len() * cols.len());
    let mut hi: Option<Vec<Q>> = None;
    for (r, &i) in rows.iter().enumerate() {
        for (c, &j) in cols.iter().enumerate() {
            match space.exact(i, j) {
                ExactDistance::Rational(q) => {
                    if let Some(h) = hi.as_mut() {
                        h.push(q.clone());
                    }
                    lo.push(q);
                }
                _ => {
                    let e = space.enclosure(i, j, PREC);
                    let h = hi.get_or_insert_with(|| lo.clone());
                    debug_assert_eq!(h.len(), r * cols.len() + c);
                    h.push(e.hi);
                    lo.push(e.lo);
                }
            }
        }
    }
    (lo, hi)
}

/// d_EM(X, X') as an enclosure: a point for rational metrics, [d_EM(d_lo), d_EM(d_hi)]
/// otherwise (module doc). Errors: a histogram of the wrong length, an empty dataset, the
/// budget exhausted.
pub fn emd(
    space: &Space,
    a: &Histogram,
    b: &Histogram,
    budget: &mut Budget,
) -> Result<Interval, UserLevelError> {
    for (h, name) in [(a, "A"), (b, "B")] {
        if h.counts.len() != space.n() {
            return Err(invalid(name, "histogram length differs from the space"));
        }
        if h.size() == 0 {
            return Err(invalid(name, "empty dataset"));
        }
    }
    let (sa, sb) = (a.support(), b.support());
    budget.spend((sa.len() * sb.len()) as u64, "emd distance table")?;
    let (lo, hi) = cost_tables(space, &sa, &sb);
    let supply: Vec<u64> = sa.iter().map(|&x| a.counts[x]).collect();
    let demand: Vec<u64> = sb.iter().map(|&x| b.counts[x]).collect();
    let lo_v = transport(&supply, &demand, &lo, budget)?;
    match hi {
        None => Ok(Interval::point(lo_v)),
        Some(h) => {
            let hi_v = transport(&supply, &demand, &h, budget)?;
            Ok(Interval::new(lo_v, hi_v))
        }
    }
}

/// min Σ c_ij·f_ij / (A·B) over flows with row sums B·supply_i and column sums
/// A·demand_j (A = Σ supply, B = Σ demand): the EMD of the two normalised histograms for
/// the cost table `cost` (row-major, supply × demand, entries ≥ 0).
///
/// Successive shortest paths: augment along a cheapest residual path (Bellman–Ford on
/// the bipartite residual graph: forward edges cost c_ij, backward edges −c_ij where flow
/// is positive; no negative cycle exists at any step, as each flow is optimal for its
/// value). Each augmentation exhausts a supply, a demand or a backward edge.
pub fn transport(
    supply: &[u64],
    demand: &[u64],
    cost: &[Q],
    budget: &mut Budget,
) -> Result<Q, UserLevelError> {
    let (na, nb) = (supply.len(), demand.len());
    if cost.len() != na * nb {
        return Err(invalid("cost", "table size differs from supply × demand"));
    }
    let total_a: u128 = supply.iter().map(|&s| s as u128).sum();
    let total_b: u128 = demand.iter().map(|&s| s as u128).sum();
    if total_a == 0 || total_b == 0 {
        return Err(invalid("A", "empty dataset"));
    }
    // Integral supplies and demands with the same total a·b (< 2^128 for a, b < 2^64).
    let too_big = || invalid("A", "datasets too large (|A|·|B| ≥ 2^128)");
    total_a.checked_mul(total_b).ok_or_else(too_big)?;
    let mut left_a: Vec<u128> = supply.iter().map(|&s| s as u128 * total_b).collect();
    let mut left_b: Vec<u128> = demand.iter().map(|&s| s as u128 * total_a).collect();
    let mut flow = vec![0u128; na * nb];
    // Nodes: sources 0..na, sinks na..na+nb.
    let v = na + nb;
    loop {
        if left_a.iter().all(|&s| s == 0) {
            break;
        }
        // Bellman–Ford from every source with supply left.
        let mut dist: Vec<Option<Q>> = vec![None; v];
        let mut pred = vec![usize::MAX; v];
        for i in 0..na {
            if left_a[i] > 0 {
                dist[i] = Some(Q::from(0u32));
            }
        }
        for _round in 0..v {
            budget.spend((na * nb) as u64, "emd transport")?;
            let mut changed = false;
            for i in 0..na {
                let Some(di) = dist[i].clone() else { continue };
                for j in 0..nb {
                    let cand = &di + &cost[i * nb + j];
                    let t = na + j;
                    if dist[t].as_ref().is_none_or(|d| cand < *d) {
                        dist[t] = Some(cand);
                        pred[t] = i;
                        changed = true;
                    }
                }
            }
            for j in 0..nb {
                let Some(dj) = dist[na + j].clone() else {
                    continue;
                };
                for i in 0..na {
                    if flow[i * nb + j] > 0 {
                        let cand = &dj - &cost[i * nb + j];
                        if dist[i].as_ref().is_none_or(|d| cand < *d) {
                            dist[i] = Some(cand);
                            pred[i] = na + j;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // The cheapest sink with demand left.
        let mut best: Option<usize> = None;
        for j in 0..nb {
            if left_b[j] > 0 {
                if let Some(d) = &dist[na + j] {
                    if best.is_none_or(|b| *d < *dist[na + b].as_ref().unwrap()) {
                        best = Some(j);
                    }
                }
            }
        }
        let j = best.expect("balanced transport: a sink with demand is reachable");
        // Walk back along `pred` to a root (a source with supply left): the bottleneck.
        let mut amount = left_b[j];
        let mut node = na + j;
        let mut path = Vec::new();
        while pred[node] != usize::MAX && path.len() <= v {
            let p = pred[node];
            if node >= na {
                path.push((p, node - na, true)); // forward edge source p → sink
            } else {
                let (i, jj) = (node, p - na); // backward edge sink p → source node
                amount = amount.min(flow[i * nb + jj]);
                path.push((i, jj, false));
            }
            node = p;
        }
        let src = node;
        amount = amount.min(left_a[src]);
        debug_assert!(amount > 0);
        for (i, jj, fwd) in path {
            if fwd {
                flow[i * nb + jj] += amount;
            } else {
                flow[i * nb + jj] -= amount;
            }
        }
        left_a[src] -= amount;
        left_b[j] -= amount;
    }
    let mut total = Q::from(0u32);
    for (f, c) in flow.iter().zip(cost) {
        if *f > 0 {
            total += q_u128(*f) * c;
        }
    }
    Ok(total / (q_u128(total_a) * q_u128(total_b)))
}

/// A u128 as a rational, exactly.
fn q_u128(x: u128) -> Q {
    (Q::from((x >> 64) as u64) << 64u64) + Q::from(x as u64)
}

/// Lemma 2.1: for equal sizes m, the minimum over permutations σ of
/// (1/m)·Σ d(x_i, x'_σ(i)) (Hungarian method with exact potentials, O(m³)), and σ.
/// Rational metrics only (the permutation form is what the lemma states; irrational
/// metrics go through [`emd`]).
pub fn assignment(
    space: &Space,
    x: &[usize],
    y: &[usize],
    budget: &mut Budget,
) -> Result<(Q, Vec<usize>), UserLevelError> {
    let m = x.len();
    if m == 0 || y.len() != m {
        return Err(invalid(
            "B",
            "the assignment form needs two datasets of equal size ≥ 1",
        ));
    }
    for (name, items) in [("A", x), ("B", y)] {
        if let Some(i) = items.iter().position(|&s| s >= space.n()) {
            return Err(invalid(format!("{name}[{i}]"), "outside the space"));
        }
    }
    budget.spend((m * m) as u64, "assignment table")?;
    let mut c = Vec::with_capacity(m * m);
    for &i in x {
        for &j in y {
            match space.exact(i, j) {
                ExactDistance::Rational(q) => c.push(q),
                _ => {
                    return Err(invalid(
                        "space",
                        "the assignment form needs rational distances",
                    ))
                }
            }
        }
    }
    // Hungarian method (shortest augmenting paths with potentials u, v), 1-based columns.
    let inf: Option<Q> = None;
    let mut u = vec![Q::from(0u32); m + 1];
    let mut v = vec![Q::from(0u32); m + 1];
    let mut p = vec![0usize; m + 1]; // p[j] = row assigned to column j
    let mut way = vec![0usize; m + 1];
    for i in 1..=m {
        budget.spend((m * m) as u64, "assignment")?;
        p[0] = i;
        let mut j0 = 0usize;
        let mut minv: Vec<Option<Q>> = vec![inf.clone(); m + 1];
        let mut used = vec![false; m + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta: Option<Q> = None;
            let mut j1 = 0usize;
            for j in 1..=m {
                if used[j] {
                    continue;
                }
                let cur = &c[(i0 - 1) * m + (j - 1)] - &u[i0] - &v[j];
                if minv[j].as_ref().is_none_or(|mv| cur < *mv) {
                    minv[j] = Some(cur);
                    way[j] = j0;
                }
                let mj = minv[j].as_ref().unwrap();
                if delta.as_ref().is_none_or(|d| mj < d) {
                    delta = Some(mj.clone());
                    j1 = j;
                }
            }
            let delta = delta.expect("an unused column remains");
            for j in 0..=m {
                if used[j] {
                    u[p[j]] += &delta;
                    v[j] -= &delta;
                } else if let Some(mv) = minv[j].as_mut() {
                    *mv -= &delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut sigma = vec![0usize; m];
    for j in 1..=m {
        sigma[p[j] - 1] = j - 1;
    }
    let total: Q = (0..m).map(|i| c[i * m + sigma[i]].clone()).sum();
    Ok((total / Q::from(m as u64), sigma))
}
