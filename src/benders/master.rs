//! The Benders master problem (Qiu 2024 §3.2, eq. (9)–(10)), corrected: the master
//! records' rows (row sums and every privacy row between two master records, including
//! same-subset ones), one θ_s ≥ 0 per subset with free records (its only bound: the
//! subproblem's value is ≥ 0 because costs are), and the cuts. The master records' cost is
//! counted here and only here.

use super::partition::{Decomposition, Subset};
use super::sub::Cut;
use crate::lp::model::PrivacyLp;
use crate::lp::simplex::SolveError;
use crate::lp::sparse::{Sense, SparseLp};

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
}

impl<'a> Master<'a> {
    pub fn new(lp: &'a PrivacyLp<'a>, dec: &'a Decomposition) -> Master<'a> {
        let mut index = vec![usize::MAX; lp.n];
        for (j, &m) in dec.master.iter().enumerate() {
            index[m] = j;
        }
        Master {
            lp,
            dec,
            index,
            cuts: vec![],
        }
    }

    /// The master records' own cost Σ π c y at the values `y` (|master| × K).
    pub fn cost(&self, y: &[f64]) -> f64 {
        let k = self.lp.k();
        self.dec
            .master
            .iter()
            .enumerate()
            .map(|(j, &m)| {
                let w = self.lp.prior_f64(m);
                (0..k)
                    .map(|t| w * self.lp.cost_dn[m * k + t] * y[j * k + t])
                    .sum::<f64>()
            })
            .sum()
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

    /// Solve the master with the cuts so far.
    pub fn solve(&self) -> Result<MasterSolution, SolveError> {
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
        for &(u, v) in &dec.master_pairs {
            let c = lp.c_dn[u * n + v];
            let (a, b) = (self.index[u], self.index[v]);
            for t in 0..k {
                sp.row(
                    vec![(a * k + t, 1.0 / c), (b * k + t, -1.0)],
                    Sense::Le,
                    0.0,
                );
            }
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
        let sol = sp.solve_ipm()?;
        let y = sol.x[..nm * k].to_vec();
        let gamma = dec
            .master_pairs
            .iter()
            .flat_map(|&(u, v)| std::iter::repeat_n(lp.c_dn[u * n + v], k))
            .zip(&sol.duals[priv0..cut0])
            .map(|(c, &z)| z.max(0.0) / c)
            .collect();
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
        })
    }
}
