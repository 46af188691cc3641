//! The Benders master problem (Qiu 2024 §3.2, eq. (9)–(10)), corrected: the master
//! records' rows (row sums and every privacy row between two master records, including
//! same-subset ones), one θ_s ≥ 0 per subset with free records (its only bound: the
//! subproblem's value is ≥ 0 because costs are), the cuts, and the chain rows of
//! Proposition 3.2 added when the master's point breaks them ([`super::chain`]). The master
//! records' cost is counted here and only here.

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
    /// Global record → its index among the master records (usize::MAX if none).
    index: Vec<usize>,
    pub cuts: Vec<StoredCut>,
    /// Proposition 3.2's chains between master records ([`chain::chains`]; empty when off)
    /// and the (chain, output) rows added so far.
    pub chains: Vec<Chain>,
    pub chain_rows: Vec<(usize, usize)>,
    chain_set: HashSet<(usize, usize)>,
    /// `dec.master_pairs` as lazy pairs (master indices and c_dn), the rows in the LP as
    /// (pair index, output) in the order they joined, and which are present (pair
    /// index · K + output).
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
    /// γ = z/c_dn of each master privacy row, in `master_pairs` × K order.
    pub gamma: Vec<f64>,
    /// The dual of each cut (λ ≥ 0), in `cuts` order as of this solve.
    pub cut_duals: Vec<f64>,
    /// γ = z/C of each chain row, in `chain_rows` order as of this solve.
    pub chain_gamma: Vec<f64>,
}

impl<'a> Master<'a> {
    /// The master of `dec`; with `chains`, Proposition 3.2's chains between its records
    /// are found (and later added lazily by [`Self::add_violated_chains`]). Its privacy
    /// rows start from each master record's rows to its `neighbours` nearest master
    /// records (every output); the others join when a solve breaks them
    /// ([`Self::solve_with_chains`], as `ipm`'s lazy rows; spec/benders.md §5).
    pub fn new(
        lp: &'a PrivacyLp<'a>,
        dec: &'a Decomposition,
        chains: bool,
        neighbours: usize,
    ) -> Master<'a> {
        let mut index = vec![usize::MAX; lp.n];
        for (j, &m) in dec.master.iter().enumerate() {
            index[m] = j;
        }
        let k = lp.k();
        let pairs = lazy_pairs(lp, dec, &index);
        let mut present = vec![false; dec.master_pairs.len() * k];
        let mut rows = vec![];
        for p in lazy::nearest(&pairs, dec.master.len(), neighbours) {
            present[p * k..(p + 1) * k].fill(true);
            rows.extend((0..k).map(|t| (p, t)));
        }
        Master {
            lp,
            dec,
            index,
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
            let rows = lazy::separate(&self.pairs, self.lp.k(), &sol.y, &mut self.present);
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
        let mut sp = SparseLp::default();
        for &m in &dec.master {
            let w = lp.prior_f64(m);
            for j in 0..k {
                sp.var(w * lp.cost_dn[m * k + j]);
            }
        }
        let theta0 = sp.n_vars();
        for _ in &dec.subsets {
            sp.var(1.0);
        }
        for j in 0..nm {
            sp.row((0..k).map(|t| (j * k + t, 1.0)).collect(), Sense::Eq, 1.0);
        }
        let priv0 = sp.rows.len();
        for &(p, t) in &self.rows {
            let (u, v) = dec.master_pairs[p];
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
        let mut gamma = vec![0.0; dec.master_pairs.len() * k];
        for (&(p, t), &z) in self.rows.iter().zip(&sol.duals[priv0..chain0]) {
            let (u, v) = dec.master_pairs[p];
            gamma[p * k + t] = z.max(0.0) / lp.c_dn[u * n + v];
        }
        Ok(MasterSolution {
            theta: sol.x[theta0..theta0 + dec.subsets.len()].to_vec(),
            y,
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

/// `dec.master_pairs` as [`lazy`] pairs: (master index of u, of v, c_dn(u, v)).
fn lazy_pairs(
    lp: &PrivacyLp,
    dec: &Decomposition,
    index: &[usize],
) -> Vec<Option<(usize, usize, f64)>> {
    dec.master_pairs
        .iter()
        .map(|&(u, v)| Some((index[u], index[v], lp.c_dn[u * lp.n + v])))
        .collect()
}
