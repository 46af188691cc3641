//! The loop's upper bounds and incumbent, per component of the η-graph (Qiu 2024
//! Proposition 3.1: no row of the PMO LP joins two components, so the LP is their direct
//! sum). Each component keeps the best upper bound and the rows of whichever iteration gave
//! them, so UB = Σ_c UB_c is at most the best single iteration's; a component whose own gap
//! is closed is not solved again (`spec/benders.md` §5).
//!
//! An iteration gives component c a candidate when every subproblem of c fits the master's
//! values (slack ≤ [`SLACK_TOL`]): UB_c = master cost of c + Σ values. When some need at
//! most [`MIX_SLACK`], the candidate is c's rows mixed with the uniform rows just enough
//! that every LP row of c holds in floats ([`uniform_mix`]). Float estimates like every loop
//! bound: the written matrix is repaired and audited exactly.

use super::partition::Decomposition;
use super::sub::SubOutput;
use super::{MIX_SLACK, SLACK_TOL};
use crate::lp::model::PrivacyLp;

/// Per-component bounds and the incumbent assembled from the components' best iterations.
pub(crate) struct Incumbent {
    k: usize,
    /// Component of each subset.
    subset_comp: Vec<usize>,
    /// Per component: its subsets, its master positions (indices into `dec.master`), its
    /// records and its LP pairs.
    subsets: Vec<Vec<usize>>,
    master: Vec<Vec<usize>>,
    records: Vec<Vec<usize>>,
    /// Position of each record in its component's `records` (components partition the
    /// records, so one table serves them all).
    pos: Vec<usize>,
    pairs: Vec<Vec<(usize, usize)>>,
    /// Absolute gap tolerance per component: 10⁻⁹ Σ_u π_u max_k c(u,k) over its records.
    abs_tol: Vec<f64>,
    /// Best upper bound per component (∞ before its first candidate).
    ub: Vec<f64>,
    /// n × K: each component's rows from its best candidate.
    pub m: Vec<f64>,
    /// |master| × K: the master values of the best candidates (the stabilization centre;
    /// first the uniform rows).
    pub core: Vec<f64>,
    /// Components whose own gap is closed: their subproblems are not solved again.
    closed: Vec<bool>,
}

impl Incumbent {
    /// `costs`: π_u·max_k c(u,k) per record (the absolute tolerances' scale).
    pub fn new(lp: &PrivacyLp, dec: &Decomposition, costs: &[f64]) -> Incumbent {
        let (n, k) = (lp.n, lp.k());
        let comp = crate::metric::components(n, &lp.pairs);
        let count = comp.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut subsets = vec![vec![]; count];
        let mut subset_comp = Vec::with_capacity(dec.subsets.len());
        for (i, s) in dec.subsets.iter().enumerate() {
            let c = comp[s.free[0]] as usize;
            subsets[c].push(i);
            subset_comp.push(c);
        }
        let mut master = vec![vec![]; count];
        for (j, &u) in dec.master.iter().enumerate() {
            master[comp[u] as usize].push(j);
        }
        let mut records = vec![vec![]; count];
        let mut abs_tol = vec![0.0; count];
        for u in 0..n {
            records[comp[u] as usize].push(u);
            abs_tol[comp[u] as usize] += 1e-9 * costs[u];
        }
        let mut pos = vec![0; n];
        for r in &records {
            for (i, &u) in r.iter().enumerate() {
                pos[u] = i;
            }
        }
        let mut pairs = vec![vec![]; count];
        for &(u, v) in &lp.pairs {
            pairs[comp[u] as usize].push((u, v));
        }
        Incumbent {
            k,
            subset_comp,
            subsets,
            master,
            records,
            pos,
            pairs,
            abs_tol,
            ub: vec![f64::INFINITY; count],
            m: vec![0.0; n * k],
            core: vec![1.0 / k as f64; dec.master.len() * k],
            closed: vec![false; count],
        }
    }

    /// Whether subset `s` is still solved (its component's gap is open).
    pub fn active(&self, s: usize) -> bool {
        !self.closed[self.subset_comp[s]]
    }

    /// Σ_c UB_c (∞ until every component has a candidate).
    pub fn total(&self) -> f64 {
        self.ub.iter().sum()
    }

    /// Offer the subproblems' outputs at master values `y` (`None` for subsets not solved);
    /// every component whose subsets were all solved and fit (or fit after the uniform
    /// mix) gets a candidate, kept if below its best. Returns this iteration's UB: the sum
    /// of its candidates and of the closed components' bests, when every open component
    /// had one.
    pub fn offer(
        &mut self,
        lp: &PrivacyLp,
        dec: &Decomposition,
        y: &[f64],
        outs: &[Option<SubOutput>],
    ) -> Option<f64> {
        let k = self.k;
        let mut this = Some(0.0);
        for c in 0..self.ub.len() {
            if self.closed[c] {
                this = this.map(|t| t + self.ub[c]);
                continue;
            }
            let solved: Option<Vec<&SubOutput>> =
                self.subsets[c].iter().map(|&s| outs[s].as_ref()).collect();
            let cand = solved.and_then(|solved| self.candidate(lp, dec, c, y, &solved));
            let Some((ub, rows, core)) = cand else {
                this = None;
                continue;
            };
            this = this.map(|t| t + ub);
            if ub < self.ub[c] {
                self.ub[c] = ub;
                for (i, &u) in self.records[c].iter().enumerate() {
                    self.m[u * k..(u + 1) * k].copy_from_slice(&rows[i * k..(i + 1) * k]);
                }
                for (i, &j) in self.master[c].iter().enumerate() {
                    self.core[j * k..(j + 1) * k].copy_from_slice(&core[i * k..(i + 1) * k]);
                }
            }
        }
        this
    }

    /// Component `c`'s candidate at master values `y` from its subproblems' outputs:
    /// (UB_c, its rows in the order of `records[c]`, its master values in the order of
    /// `master[c]`).
    fn candidate(
        &self,
        lp: &PrivacyLp,
        dec: &Decomposition,
        c: usize,
        y: &[f64],
        solved: &[&SubOutput],
    ) -> Option<(f64, Vec<f64>, Vec<f64>)> {
        let (k, pos) = (self.k, &self.pos);
        let slack = solved.iter().map(|o| o.slack).fold(0.0, f64::max);
        if slack > MIX_SLACK {
            return None;
        }
        let mut rows = vec![0.0; self.records[c].len() * k];
        let mut core = Vec::with_capacity(self.master[c].len() * k);
        let mut master_cost = 0.0;
        for &j in &self.master[c] {
            let u = dec.master[j];
            let yj = &y[j * k..(j + 1) * k];
            rows[pos[u] * k..(pos[u] + 1) * k].copy_from_slice(yj);
            core.extend_from_slice(yj);
            master_cost += record_cost(lp, u, yj);
        }
        for (&s, out) in self.subsets[c].iter().zip(solved) {
            for (i, &u) in dec.subsets[s].free.iter().enumerate() {
                rows[pos[u] * k..(pos[u] + 1) * k].copy_from_slice(&out.x[i * k..(i + 1) * k]);
            }
        }
        if slack <= SLACK_TOL {
            let ub = master_cost + solved.iter().map(|o| o.value).sum::<f64>();
            return Some((ub, rows, core));
        }
        let (t, cost_m, cost_u) = uniform_mix(lp, &self.pairs[c], &self.records[c], pos, &rows)?;
        let mixed = |x: &f64| (1.0 - t) * x.max(0.0) + t / k as f64;
        Some((
            (1.0 - t) * cost_m + t * cost_u,
            rows.iter().map(mixed).collect(),
            core.iter().map(mixed).collect(),
        ))
    }

    /// Close every open component whose own gap is within the loop's tolerance at the
    /// master's solution (values `y`, subproblem estimates `theta`): UB_c − LB_c ≤
    /// gap·UB_c + abs_tol_c, LB_c = master cost of c + Σ θ over its subsets (the master is
    /// block-diagonal by component, so LB_c bounds c's part of the LP). Returns how many
    /// components are closed.
    pub fn close(
        &mut self,
        lp: &PrivacyLp,
        dec: &Decomposition,
        y: &[f64],
        theta: &[f64],
        gap: f64,
    ) -> usize {
        let k = self.k;
        for c in 0..self.ub.len() {
            if self.closed[c] {
                continue;
            }
            let lb: f64 = self.master[c]
                .iter()
                .map(|&j| record_cost(lp, dec.master[j], &y[j * k..(j + 1) * k]))
                .sum::<f64>()
                + self.subsets[c].iter().map(|&s| theta[s]).sum::<f64>();
            if super::within_gap(self.ub[c], lb, gap, self.abs_tol[c]) {
                self.closed[c] = true;
            }
        }
        self.closed.iter().filter(|&&b| b).count()
    }

    /// Number of components.
    pub fn components(&self) -> usize {
        self.ub.len()
    }
}

/// Record u's weighted cost π_u Σ_k c(u,k)·row\[k\] (the master's objective on its values).
fn record_cost(lp: &PrivacyLp, u: usize, row: &[f64]) -> f64 {
    let k = row.len();
    let w = lp.prior_f64(u);
    (0..k).map(|t| w * lp.cost_dn[u * k + t] * row[t]).sum()
}

/// The least weight t of the uniform rows U that makes every LP row among `pairs` hold for
/// (1 − t)·M + t·U, M the rows of `records` (`pos` maps a record to its row): the exact
/// repair's rule (`spec/lp.md` §4 step 3), M\[u\]\[k\] − c·M\[v\]\[k\] ≤ r·(c − 1)/K,
/// t = r/(1 + r). Returns (t, cost of M, cost of U) over the records; `None` when a broken
/// row has c ≤ 1 (no mix repairs it) or t ≥ 1/2.
pub(crate) fn uniform_mix(
    lp: &PrivacyLp,
    pairs: &[(usize, usize)],
    records: &[usize],
    pos: &[usize],
    rows: &[f64],
) -> Option<(f64, f64, f64)> {
    let (n, k) = (lp.n, lp.k());
    let mut r: f64 = 0.0;
    for &(u, v) in pairs {
        let c = lp.c_dn[u * n + v];
        let (a, b) = (&rows[pos[u] * k..], &rows[pos[v] * k..]);
        for j in 0..k {
            let broken = a[j] - c * b[j];
            if broken > 0.0 {
                if c <= 1.0 {
                    return None;
                }
                r = r.max(broken * k as f64 / (c - 1.0));
            }
        }
    }
    let t = r / (1.0 + r);
    if t.is_nan() || t >= 0.5 {
        return None;
    }
    let (mut cost_m, mut cost_u) = (0.0, 0.0);
    for (i, &u) in records.iter().enumerate() {
        let w = lp.prior_f64(u);
        for j in 0..k {
            cost_m += w * lp.cost_dn[u * k + j] * rows[i * k + j].max(0.0);
            cost_u += w * lp.cost_dn[u * k + j] / k as f64;
        }
    }
    Some((t, cost_m, cost_u))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::optimal::{self, PmoParams};
    use crate::metric::{MetricKind, Space};

    /// The mix makes every row hold (up to rounding), is the least that does (a slightly
    /// smaller one leaves a row broken), and its costs are the matrices'.
    #[test]
    fn uniform_mix_is_the_least_that_fits() {
        let q = |a: i64| crate::exact::Q::from(a);
        let pts = (0..4).map(|i| vec![q(i), q(0)]).collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eta = q(1);
        let p = PmoParams {
            within: Some(&eta),
            prior: None,
            cost: None,
            outputs: None,
        };
        let lp = optimal::pmo_lp(&space, &q(1), &p, 4096).unwrap();
        let (n, k) = (lp.n, lp.k());
        let all: Vec<usize> = (0..n).collect();
        // Nearly uniform rows with the diagonal raised: ratio 3 > e breaks the rows.
        let m: Vec<f64> = (0..n * k)
            .map(|i| if i / k == i % k { 0.5 } else { 0.5 / 3.0 })
            .collect();
        let broken = |m: &[f64], slack: f64| {
            lp.pairs.iter().any(|&(u, v)| {
                (0..k).any(|j| m[u * k + j] > lp.c_dn[u * n + v] * m[v * k + j] + slack)
            })
        };
        assert!(broken(&m, 0.0));
        let (t, cost_m, cost_u) = uniform_mix(&lp, &lp.pairs, &all, &all, &m).expect("a mix");
        assert!(t > 0.0 && t < 0.5, "t = {t}");
        let at = |t: f64| -> Vec<f64> { m.iter().map(|&x| (1.0 - t) * x + t / k as f64).collect() };
        assert!(!broken(&at(t), 1e-15));
        assert!(broken(&at(0.99 * t), 0.0));
        let cost = |m: &[f64]| -> f64 {
            (0..n * k)
                .map(|i| lp.prior_f64(i / k) * lp.cost_dn[i] * m[i])
                .sum()
        };
        assert!((cost_m - cost(&m)).abs() <= 1e-12);
        assert!((cost_u - cost(&vec![1.0 / k as f64; n * k])).abs() <= 1e-12);
        // A broken row between records at distance 0 (c = 1) has no mix.
        let dup =
            Space::from_points(MetricKind::Euclidean, vec![vec![q(0)], vec![q(0)]], None).unwrap();
        let lp = optimal::pmo_lp(&dup, &q(1), &p, 4096).unwrap();
        assert!(lp.pairs.iter().any(|&(u, v)| lp.c_dn[u * lp.n + v] <= 1.0));
        let two = [0, 1];
        assert!(uniform_mix(&lp, &lp.pairs, &two, &two, &[1.0, 0.0, 0.0, 1.0]).is_none());
    }
}
