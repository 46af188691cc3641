//! The Benders master problem (Qiu 2024 §3.2, eq. (9)–(10)), corrected: the master
//! records' rows (row sums and every privacy row between two master records, including
//! same-subset ones), one θ_s ≥ 0 per subset with free records (its only bound: the
//! subproblem's value is ≥ 0 because costs are), the cuts, and the chain rows of
//! Proposition 3.2 added when the master's point breaks them ([`super::chain`]). The master
//! records' cost is counted here and only here.
//!
//! **Layer copies** (partial Benders decomposition, Crainic, Rahmaniani, Gendreau & Rei
//! 2021; `spec/benders.md` §5): with [`Master::new`]'s `copies`, every free record with a
//! row to a master record (the *layer*) also has a copy x̃ in the master: its row sum, its
//! rows to master records and to other layer records, and per subset the row
//! θ_s ≥ Σ_{layer a of s} π_a c(a,k)·x̃_a,k (the free records' costs are ≥ 0). Any feasible
//! mechanism gives a feasible master point (x̃ = its rows), so the master's optimum is still
//! a lower bound; its duals still give a whole-LP dual, the copy rows' multipliers added to
//! the same rows' (spec/benders.md §3). The copies carry the subproblems' constraints that
//! the cuts would otherwise find one at a time.

use super::chain::{self, Chain};
use super::lazy;
use super::partition::{Decomposition, Subset};
use super::sub::Cut;
use crate::lp::model::PrivacyLp;
use crate::lp::sparse::{Sense, SparseLp};
use crate::lp::LpError;
use std::collections::HashSet;

/// Most master solves per iteration while chain rows are being added.
const CHAIN_ROUNDS: usize = 10;

/// Most chain rows added per master solve, per master record.
const CHAIN_ROWS_PER_MASTER_RECORD: usize = 50;

/// A cut θ_s ≥ a + g·y of subset `subset`.
pub struct StoredCut {
    pub subset: usize,
    pub cut: Cut,
}

/// The master problem and its cuts.
pub struct Master<'a> {
    lp: &'a PrivacyLp<'a>,
    dec: &'a Decomposition,
    /// Global record → its index among the master's records: the master records
    /// (`dec.master` order), then the layer copies (`copies` order); usize::MAX if none.
    index: Vec<usize>,
    /// The layer records with a copy (ascending) and each one's subset (index into
    /// `dec.subsets`).
    copies: Vec<(usize, usize)>,
    /// The privacy rows' pairs (u, v) as global records: `dec.master_pairs`, then the
    /// pairs between a copy and a master record or another copy.
    pub pairs_global: Vec<(usize, usize)>,
    pub cuts: Vec<StoredCut>,
    /// Proposition 3.2's chains between master records ([`chain::chains`]; empty when off)
    /// and the (chain, output) rows added so far.
    pub chains: Vec<Chain>,
    pub chain_rows: Vec<(usize, usize)>,
    chain_set: HashSet<(usize, usize)>,
    /// `pairs_global` as lazy pairs (indices among the master's records and c_dn), the
    /// rows in the LP as (pair index, output) in the order they joined, and which are
    /// present (pair index · K + output).
    pairs: Vec<Option<(usize, usize, f64)>>,
    rows: Vec<(usize, usize)>,
    present: Vec<bool>,
}

/// A float optimum of the master and its duals.
pub struct MasterSolution {
    /// |master| × K.
    pub y: Vec<f64>,
    /// Per subset.
    pub theta: Vec<f64>,
    pub objective: f64,
    /// γ = z/c_dn of each privacy row of the master, in [`Master::pairs_global`] × K
    /// order.
    pub gamma: Vec<f64>,
    /// The dual of each cut (λ ≥ 0), in `cuts` order as of this solve.
    pub cut_duals: Vec<f64>,
    /// γ = z/C of each chain row, in `chain_rows` order as of this solve.
    pub chain_gamma: Vec<f64>,
    /// The master records' values, then the copies' (records × K): what the lazy rows
    /// are separated on.
    records: Vec<f64>,
}

impl<'a> Master<'a> {
    /// The master of `dec`; with `chains`, Proposition 3.2's chains between its records
    /// are found (and later added lazily by [`Self::add_violated_chains`]); with
    /// `copies`, the layer's copies (module doc). Its privacy rows start from each
    /// record's rows to its `neighbours` nearest records (every output); the others join
    /// when a solve breaks them ([`Self::solve_with_chains`], as `ipm`'s lazy rows;
    /// spec/benders.md §5).
    pub fn new(
        lp: &'a PrivacyLp<'a>,
        dec: &'a Decomposition,
        chains: bool,
        copies: bool,
        neighbours: usize,
    ) -> Master<'a> {
        let mut index = vec![usize::MAX; lp.n];
        for (j, &m) in dec.master.iter().enumerate() {
            index[m] = j;
        }
        let mut layer = vec![];
        if copies {
            for (s, sub) in dec.subsets.iter().enumerate() {
                for &(u, v) in &sub.pairs {
                    if dec.is_master[u] != dec.is_master[v] {
                        layer.push((if dec.is_master[u] { v } else { u }, s));
                    }
                }
            }
            layer.sort_unstable();
            layer.dedup();
        }
        for (c, &(a, _)) in layer.iter().enumerate() {
            index[a] = dec.master.len() + c;
        }
        let mut pairs_global = dec.master_pairs.clone();
        for sub in &dec.subsets {
            pairs_global.extend(
                sub.pairs
                    .iter()
                    .filter(|&&(u, v)| index[u] != usize::MAX && index[v] != usize::MAX),
            );
        }
        let k = lp.k();
        let pairs: Vec<Option<(usize, usize, f64)>> = pairs_global
            .iter()
            .map(|&(u, v)| Some((index[u], index[v], lp.c_dn[u * lp.n + v])))
            .collect();
        let mut present = vec![false; pairs_global.len() * k];
        let mut rows = vec![];
        for p in lazy::nearest(&pairs, dec.master.len() + layer.len(), neighbours) {
            present[p * k..(p + 1) * k].fill(true);
            rows.extend((0..k).map(|t| (p, t)));
        }
        Master {
            lp,
            dec,
            index,
            copies: layer,
            pairs_global,
            cuts: vec![],
            chains: if chains {
                chain::chains(lp, dec)
            } else {
                vec![]
            },
            chain_rows: vec![],
            chain_set: HashSet::new(),
            pairs,
            rows,
            present,
        }
    }

    /// Master privacy rows in the LP so far.
    pub fn rows_present(&self) -> usize {
        self.rows.len()
    }

    /// Add the chain rows the master values `y` break (by more than [`chain::TOL`]), at
    /// most `CHAIN_ROWS_PER_MASTER_RECORD` per master record, the largest violations
    /// first; returns how many.
    pub fn add_violated_chains(&mut self, y: &[f64]) -> usize {
        let most = CHAIN_ROWS_PER_MASTER_RECORD * self.dec.master.len();
        let found = chain::violated(&self.chains, self.lp.k(), y, &self.chain_set, most);
        for &r in &found {
            self.chain_set.insert(r);
            self.chain_rows.push(r);
        }
        found.len()
    }

    /// The master values of subset `s`'s fixed records (n_fixed × K), as its subproblem
    /// reads them.
    pub fn fixed_values(&self, s: &Subset, y: &[f64]) -> Vec<f64> {
        let k = self.lp.k();
        s.fixed
            .iter()
            .flat_map(|&b| {
                y[self.index[b] * k..(self.index[b] + 1) * k]
                    .iter()
                    .copied()
            })
            .collect()
    }

    /// Solve the master, adding the privacy rows its optimum breaks and the chain rows it
    /// breaks (chains in at most `CHAIN_ROUNDS` solves) and solving again until none is
    /// left: the optimum of the whole master; also returns the chain rows added. Privacy
    /// rows only join, so the loop ends.
    pub fn solve_with_chains(&mut self) -> Result<(MasterSolution, usize), LpError> {
        let mut added = 0;
        let mut chain_rounds = 1;
        loop {
            let sol = self.solve()?;
            let rows = lazy::separate(&self.pairs, self.lp.k(), &sol.records, &mut self.present);
            self.rows.extend(&rows);
            let chains = if chain_rounds < CHAIN_ROUNDS {
                chain_rounds += 1;
                self.add_violated_chains(&sol.y)
            } else {
                0
            };
            added += chains;
            if rows.is_empty() && chains == 0 {
                return Ok((sol, added));
            }
        }
    }

    /// Solve the master with the cuts and chain rows so far.
    pub fn solve(&self) -> Result<MasterSolution, LpError> {
        let (lp, dec) = (self.lp, self.dec);
        let (n, k) = (lp.n, lp.k());
        let nm = dec.master.len();
        let nr = nm + self.copies.len();
        let mut sp = SparseLp::default();
        // The master records' values (their cost), then the copies' (no cost here).
        for &m in &dec.master {
            let w = lp.prior_f64(m);
            for j in 0..k {
                sp.var(w * lp.cost_dn[m * k + j]);
            }
        }
        for _ in 0..self.copies.len() * k {
            sp.var(0.0);
        }
        let theta0 = sp.n_vars();
        for _ in &dec.subsets {
            sp.var(1.0);
        }
        for j in 0..nr {
            sp.row((0..k).map(|t| (j * k + t, 1.0)).collect(), Sense::Eq, 1.0);
        }
        // θ_s ≥ the layer copies' cost.
        for s in 0..dec.subsets.len() {
            let mut coefs = vec![(theta0 + s, 1.0)];
            for (c, &(a, _)) in self.copies.iter().enumerate().filter(|(_, e)| e.1 == s) {
                let w = lp.prior_f64(a);
                coefs.extend((0..k).map(|t| ((nm + c) * k + t, -w * lp.cost_dn[a * k + t])));
            }
            if coefs.len() > 1 {
                sp.row(coefs, Sense::Ge, 0.0);
            }
        }
        let priv0 = sp.rows.len();
        for &(p, t) in &self.rows {
            let (u, v) = self.pairs_global[p];
            let c = lp.c_dn[u * n + v];
            let (a, b) = (self.index[u], self.index[v]);
            sp.row(
                vec![(a * k + t, 1.0 / c), (b * k + t, -1.0)],
                Sense::Le,
                0.0,
            );
        }
        let chain0 = sp.rows.len();
        for &(ci, t) in &self.chain_rows {
            let ch = &self.chains[ci];
            sp.row(
                vec![(ch.i * k + t, 1.0 / ch.c), (ch.j * k + t, -1.0)],
                Sense::Le,
                0.0,
            );
        }
        let cut0 = sp.rows.len();
        for c in &self.cuts {
            let s = &dec.subsets[c.subset];
            // θ_s − g·y ≥ a.
            let mut coefs: Vec<(usize, f64)> = s
                .fixed
                .iter()
                .enumerate()
                .flat_map(|(b, &m)| {
                    let j = self.index[m];
                    (0..k).map(move |t| (j * k + t, b * k + t))
                })
                .filter_map(|(var, at)| {
                    let g = c.cut.coef[at];
                    (g != 0.0).then_some((var, -g))
                })
                .collect();
            coefs.push((theta0 + c.subset, 1.0));
            sp.row(coefs, Sense::Ge, c.cut.constant);
        }
        let sol = sp.solve_ipm_unrefined()?;
        let y = sol.x[..nm * k].to_vec();
        // Rows not in the LP keep γ = 0 (any γ ≥ 0 is a valid dual; at the loop's end
        // none is broken, so this is an optimal dual of the whole master).
        let mut gamma = vec![0.0; self.pairs_global.len() * k];
        for (&(p, t), &z) in self.rows.iter().zip(&sol.duals[priv0..chain0]) {
            let (u, v) = self.pairs_global[p];
            gamma[p * k + t] = z.max(0.0) / lp.c_dn[u * n + v];
        }
        Ok(MasterSolution {
            theta: sol.x[theta0..theta0 + dec.subsets.len()].to_vec(),
            y,
            records: sol.x[..nr * k].to_vec(),
            // Computed from the point (as the subproblems' values; see `sub::solve_subproblem`).
            objective: sp
                .cost
                .iter()
                .zip(&sol.x)
                .map(|(c, x)| c * x.max(0.0))
                .sum(),
            gamma,
            cut_duals: sol.duals[cut0..].iter().map(|z| z.max(0.0)).collect(),
            chain_gamma: self
                .chain_rows
                .iter()
                .zip(&sol.duals[chain0..cut0])
                .map(|(&(ci, _), &z)| z.max(0.0) / self.chains[ci].c)
                .collect(),
        })
    }
}
