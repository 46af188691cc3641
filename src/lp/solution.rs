//! What a float solve of a privacy LP returns, whichever solver found it: the primal (a
//! candidate mechanism, [`Primal`]) and the dual (the content of an `lp_dual` certificate
//! before its exact proof, [`Dual`]), on privacy rows [`Row`]. Nothing here is trusted:
//! the primal is repaired and audited exactly ([`super::repair`]), the dual proved by the
//! kernel ([`crate::certificate`]).

use super::model::{Objective, PrivacyLp};

/// A privacy row (u, v, k): M\[u\]\[k\] ≤ c·M\[v\]\[k\] (Imola et al. 2022, Definition 1, for
/// output k).
pub type Row = (u32, u32, u32);

/// A float primal of a privacy LP.
#[derive(Clone, Debug)]
pub struct Primal {
    /// M, n×K row-major.
    pub m: Vec<f64>,
    pub objective: f64,
    /// The privacy rows (u, v, k) the final LP held.
    pub rows: Vec<(u32, u32, u32)>,
    pub rounds: usize,
    pub seconds: f64,
}

/// A float dual of a privacy LP (the certificate's content before verification).
#[derive(Clone, Debug)]
pub struct Dual {
    /// β: weights of the loss rows (MaxLoss only).
    pub beta: Option<Vec<f64>>,
    /// γ ≥ 0 on privacy rows (u, v, k): nonzero entries only.
    pub gamma: Vec<(u32, u32, u32, f64)>,
    pub objective: f64,
    pub seconds: f64,
}

impl Dual {
    /// Drop multipliers that cannot lower the bound, to shorten the certificate; returns
    /// how many. In α_u = min_k T_(u,k), T_(u,k) = w_u c(u,k) + Σ_{(u,v,k)} γ −
    /// Σ_{(v,u,k)} c_up γ (w: β/Σβ, or the prior over its sum), dropping the γ of row
    /// (u, v, k) lowers T_(u,k) by γ and raises T_(v,k), so the rows of (u, k) may drop
    /// while their sum stays within T_(u,k) − α_u, the amount by which that term exceeds
    /// the minimum: α is unchanged. Computed in floats with half of each margin kept (the
    /// exact check decides the bound; any γ ≥ 0 is valid). At the optimum an input's
    /// unused outputs have such margins (their reduced costs), so most of their rows go.
    pub fn drop_above_min(&mut self, lp: &PrivacyLp) -> usize {
        let (n, k) = (lp.n, lp.k());
        let Some(w) = self.weights(lp) else {
            return 0;
        };
        let (t, alpha) = self.terms(lp, &w, None);
        let mut room: Vec<f64> = (0..n * k).map(|j| 0.5 * (t[j] - alpha[j / k])).collect();
        if room.iter().any(|r| !r.is_finite()) {
            return 0;
        }
        self.drop_smallest_first(|(u, _, kk, g)| {
            let j = u as usize * k + kk as usize;
            let fits = g <= room[j];
            if fits {
                room[j] -= g;
            }
            Some(fits)
        })
    }

    /// The verifier's weights w in floats: β/Σβ (max loss) or the prior over its sum;
    /// `None` when there are none (max loss without β) or they do not sum to a positive
    /// finite number.
    pub fn weights(&self, lp: &PrivacyLp) -> Option<Vec<f64>> {
        let w: Vec<f64> = match (&lp.objective, &self.beta) {
            (Objective::MaxLoss, Some(b)) => b.iter().map(|x| x.max(0.0)).collect(),
            (Objective::Expected { .. }, _) => (0..lp.n).map(|u| lp.prior_f64(u)).collect(),
            (Objective::MaxLoss, None) => return None,
        };
        let total: f64 = w.iter().sum();
        (total > 0.0 && total.is_finite()).then(|| w.iter().map(|x| x / total).collect())
    }

    /// The `lp_dual` verifier's terms in floats (spec/lp.md §5), for the weights `w`:
    /// T_(u,j) = w_u c(u, k_j) + Σ_{(u,v,j)} γ − Σ_{(v,u,j)} c_up(v,u) γ, n × ks row-major
    /// over the outputs k_j = `keep`\[j\] (every output when `None`; γ's output indices are
    /// the positions j), and their row minima α_u.
    pub fn terms(&self, lp: &PrivacyLp, w: &[f64], keep: Option<&[usize]>) -> (Vec<f64>, Vec<f64>) {
        let (n, kk) = (lp.n, lp.k());
        let ks = keep.map_or(kk, <[usize]>::len);
        let col = |j: usize| keep.map_or(j, |keep| keep[j]);
        let mut t = vec![0.0; n * ks];
        for u in 0..n {
            for j in 0..ks {
                t[u * ks + j] = w[u] * lp.cost_dn[u * kk + col(j)];
            }
        }
        for &(u, v, j, g) in &self.gamma {
            let (u, v, j) = (u as usize, v as usize, j as usize);
            t[u * ks + j] += g;
            t[v * ks + j] -= lp.c_up[u * n + v] * g;
        }
        let alpha = t
            .chunks(ks.max(1))
            .map(|r| r.iter().cloned().fold(f64::INFINITY, f64::min))
            .collect();
        (t, alpha)
    }

    /// Drop the smallest multipliers γ while their sum stays within `budget`, to shorten
    /// the certificate; returns how many were dropped and their sum. Any γ ≥ 0 is a valid
    /// certificate ([`crate::certificate`]), so this is always sound. It costs little: in
    /// α_u = min_k [w_u c(u,k) + Σ_{(u,v,k)} γ − Σ_{(v,u,k)} c_up γ], dropping the γ of
    /// row (u, v, k) lowers α_u by at most γ and cannot lower α_v, so the bound Σ_u α_u
    /// falls by at most the dropped sum (spec/benders.md §3).
    pub fn sparsify(&mut self, budget: f64) -> (usize, f64) {
        if budget.is_nan() || budget <= 0.0 {
            return (0, 0.0);
        }
        let mut sum = 0.0;
        let count = self.drop_smallest_first(|(_, _, _, g)| {
            (sum + g <= budget).then(|| {
                sum += g;
                true
            })
        });
        (count, sum)
    }

    /// Visit the multipliers smallest first; `decide` says drop (`Some(true)`), keep
    /// (`Some(false)`) or stop (`None`). Returns how many were dropped.
    fn drop_smallest_first(
        &mut self,
        mut decide: impl FnMut((u32, u32, u32, f64)) -> Option<bool>,
    ) -> usize {
        let mut order: Vec<usize> = (0..self.gamma.len()).collect();
        order.sort_unstable_by(|&a, &b| self.gamma[a].3.total_cmp(&self.gamma[b].3));
        let mut drop = vec![false; self.gamma.len()];
        let mut count = 0;
        for i in order {
            match decide(self.gamma[i]) {
                Some(d) => {
                    drop[i] = d;
                    count += usize::from(d);
                }
                None => break,
            }
        }
        let mut i = 0;
        self.gamma.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
        count
    }
}
