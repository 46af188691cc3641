//! Frequency estimation on a clustered metric (Imola et al. 2024, §6.2, Algorithm 4
//! FreqEstLocal; `spec/user-level.md`, "Frequency estimation").
//!
//! The space \[C\]×\[s\] (k = C·s items): d(x, x') = 0, r inside a cluster, 1 across. The
//! item randomizer is k-RR generalised to d: Pr[y | x] = a/Z (y = x), b/Z (same cluster),
//! c/Z (other cluster), with a = 1, b ≥ e^{−α₀r} and c ≥ e^{−α₀} rationals (upper ends
//! of enclosures), c ≤ b ≤ 1, Z = a + (s−1)·b + (k−s)·c the same for every row. Every
//! ratio of a column is ≤ e^{α₀·d} (a/b ≤ e^{α₀r}, a/c and b/c ≤ e^{α₀}), so the exact
//! matrix is α₀·d-private and `mdp-audit` certifies it; rounding b and c up costs utility
//! only.
//!
//! The estimator p̂ = ŷ·Q⁻¹ is unbiased (E ŷ = p·Q). Q has eigenvalues λ₁ = (a−b)/Z
//! (within-cluster zero-sum vectors), λ₂ = (a + (s−1)b − s·c)/Z (cluster-constant
//! zero-sum vectors) and 1; Q⁻¹ has the same three-valued structure ([`ClusteredRr::inverse`]).

use super::{invalid, positive, UserLevelError};
use crate::exact::{functions, Interval, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;
use rand::Rng;

/// The clustered metric: `clusters` clusters of `size` items, distance `r` ∈ (0, 1)
/// inside a cluster and 1 across. Item x is in cluster x / size.
#[derive(Clone, Debug, PartialEq)]
pub struct Clustered {
    pub clusters: usize,
    pub size: usize,
    pub r: Q,
}

/// Largest k = C·s accepted: the explicit space and the certified matrix hold k²
/// rationals and the audit checks k³ triples (512: 2.6·10⁵ entries, 1.3·10⁸ triples).
pub const MAX_ITEMS: usize = 512;

impl Clustered {
    pub fn new(clusters: usize, size: usize, r: Q) -> Result<Clustered, UserLevelError> {
        if clusters == 0 {
            return Err(invalid("clusters", "must be ≥ 1"));
        }
        if size == 0 {
            return Err(invalid("size", "must be ≥ 1"));
        }
        if clusters
            .checked_mul(size)
            .is_none_or(|k| !(2..=MAX_ITEMS).contains(&k))
        {
            return Err(invalid(
                "size",
                format!("clusters × size must be in [2, {MAX_ITEMS}]"),
            ));
        }
        positive(&r, "r")?;
        if r >= 1u32 {
            return Err(invalid("r", "must be < 1"));
        }
        Ok(Clustered { clusters, size, r })
    }

    /// k = C·s.
    pub fn k(&self) -> usize {
        self.clusters * self.size
    }

    pub fn cluster(&self, x: usize) -> usize {
        x / self.size
    }

    /// d(x, y).
    pub fn distance(&self, x: usize, y: usize) -> Q {
        if x == y {
            Q::from(0u32)
        } else if self.cluster(x) == self.cluster(y) {
            self.r.clone()
        } else {
            Q::from(1u32)
        }
    }

    /// The space as an explicit table.
    pub fn space(&self) -> Space {
        let k = self.k();
        let rows = (0..k)
            .map(|x| (0..k).map(|y| self.distance(x, y)).collect())
            .collect();
        Space::from_table(rows).expect("the clustered metric is a valid table")
    }

    /// Site labels `c<cluster>-<item>`.
    pub fn labels(&self) -> Vec<String> {
        (0..self.k())
            .map(|x| format!("c{}-{}", self.cluster(x), x % self.size))
            .collect()
    }
}

/// The Euclidean projection of an estimate onto the probability simplex (Duchi, Shalev-
/// Shwartz, Singer, Chandra 2008, Fig. 1): w = max(v − θ, 0) with θ chosen so that Σw = 1.
/// Post-processing of a private estimate, so it costs no privacy (`spec/user-level.md` §6).
/// An empty or non-finite input gives the input back unchanged.
pub fn project_to_simplex(v: &[f64]) -> Vec<f64> {
    if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
        return v.to_vec();
    }
    let mut u = v.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let (mut sum, mut theta) = (0.0, 0.0);
    for (j, x) in u.iter().enumerate() {
        sum += x;
        let t = (sum - 1.0) / (j + 1) as f64;
        if x - t > 0.0 {
            theta = t;
        }
    }
    v.iter().map(|x| (x - theta).max(0.0)).collect()
}

/// An upper rational of e^{−x} on a 2⁻⁶⁴-relative grid.
pub(crate) fn exp_neg_up(x: &Q) -> Q {
    let e = functions::exp(&Interval::point(-x), 80).hi;
    let p = e.floor_log2_abs() - 64;
    e.round_to_pow2_grid(p, crate::exact::Round::Up)
}

/// The generalised k-RR randomizer of Algorithm 4 on a [`Clustered`] space.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusteredRr {
    pub space: Clustered,
    pub alpha0: Q,
    pub a: Q,
    pub b: Q,
    pub c: Q,
    pub z: Q,
}

impl ClusteredRr {
    pub fn new(space: Clustered, alpha0: &Q) -> Result<ClusteredRr, UserLevelError> {
        positive(alpha0, "alpha0")?;
        if *alpha0 > 1000u32 {
            return Err(invalid("alpha0", "must be ≤ 1000"));
        }
        let a = Q::from(1u32);
        let b = exp_neg_up(&(alpha0 * &space.r)).min(a.clone());
        let c = exp_neg_up(alpha0).min(b.clone());
        let (k, s) = (space.k() as u64, space.size as u64);
        let z = &a + Q::from(s - 1) * &b + Q::from(k - s) * &c;
        Ok(ClusteredRr {
            space,
            alpha0: alpha0.clone(),
            a,
            b,
            c,
            z,
        })
    }

    /// Pr[y | x] exactly.
    pub fn prob(&self, x: usize, y: usize) -> Q {
        let w = if x == y {
            &self.a
        } else if self.space.cluster(x) == self.space.cluster(y) {
            &self.b
        } else {
            &self.c
        };
        w / &self.z
    }

    /// The k×k channel matrix (rows: inputs x, columns: outputs y).
    pub fn matrix(&self) -> Matrix {
        let k = self.space.k();
        let data = (0..k)
            .flat_map(|x| (0..k).map(move |y| (x, y)))
            .map(|(x, y)| self.prob(x, y))
            .collect();
        Matrix::new(k, k, data)
    }

    /// (λ₁, λ₂): the eigenvalues of Q on within-cluster and on cluster-constant zero-sum
    /// vectors (the third is 1).
    pub fn eigenvalues(&self) -> (Q, Q) {
        let s = Q::from(self.space.size as u64);
        let l1 = (&self.a - &self.b) / &self.z;
        let l2 = (&self.a + (&s - Q::from(1u32)) * &self.b - s * &self.c) / &self.z;
        (l1, l2)
    }

    /// The entries (a', b', c') of Q⁻¹ (diagonal, same cluster, other cluster):
    /// Q⁻¹ = I/λ₁ + (1/λ₂ − 1/λ₁)·(I_C ⊗ J_s)/s + (1 − 1/λ₂)·J_k/k. `None` when Q is
    /// singular (λ₁ = 0 or λ₂ = 0: α₀·r or α₀ too small for rounding to separate b, c).
    pub fn inverse(&self) -> Option<(Q, Q, Q)> {
        let (l1, l2) = self.eigenvalues();
        if l1 == 0u32 || l2 == 0u32 {
            return None;
        }
        let (s, k) = (
            Q::from(self.space.size as u64),
            Q::from(self.space.k() as u64),
        );
        let one = Q::from(1u32);
        let i1 = &one / l1;
        let i2 = &one / l2;
        let cp = (&one - &i2) / &k;
        let bp = (&i2 - &i1) / &s + &cp;
        let ap = &i1 + &bp;
        Some((ap, bp, cp))
    }

    /// FreqEstLocal's estimate p̂ = ŷ·Q⁻¹ from the counts of the reports, exact (O(k)).
    pub fn estimate(&self, counts: &[u64]) -> Result<Vec<Q>, UserLevelError> {
        let k = self.space.k();
        if counts.len() != k {
            return Err(invalid(
                "reports",
                "counts of a different length than the space",
            ));
        }
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return Err(invalid("reports", "no reports"));
        }
        let (ap, bp, cp) = self
            .inverse()
            .ok_or_else(|| invalid("alpha0", "the channel matrix is singular"))?;
        let n = Q::from(total);
        let s = self.space.size;
        let cluster_mass: Vec<u64> = counts.chunks(s).map(|c| c.iter().sum()).collect();
        Ok((0..k)
            .map(|x| {
                // Σ_y ŷ_y Q⁻¹[y][x] = c'·1 + (b'−c')·ŷ(cluster of x) + (a'−b')·ŷ_x
                let cm = Q::from(cluster_mass[self.space.cluster(x)]) / &n;
                let own = Q::from(counts[x]) / &n;
                &cp + (&bp - &cp) * cm + (&ap - &bp) * own
            })
            .collect())
    }

    /// The bound (9) of Theorem 6.6 on E d_EM(p̂, p) for N = n·m reports (evaluated in
    /// floating point: a prediction to compare against, not a guarantee).
    pub fn error_bound(&self, reports: u64) -> f64 {
        let (l1, l2) = self.eigenvalues();
        let (l1, l2) = (
            crate::exact::f64_nearest(&l1),
            crate::exact::f64_nearest(&l2),
        );
        let (k, s, c) = (
            self.space.k() as f64,
            self.space.size as f64,
            self.space.clusters as f64,
        );
        let r = crate::exact::f64_nearest(&self.space.r);
        let n = reports as f64;
        let within =
            ((1.0 - 1.0 / s) / (l1 * l1) + (1.0 / s - 1.0 / k) / (l2 * l2) + 1.0 / k).sqrt();
        let across = ((1.0 - 1.0 / c) / (l2 * l2) + 1.0 / c).sqrt();
        r * (k / n).sqrt() * within + 0.5 * (c / n).sqrt() * across
    }
}

/// The central Laplace baseline of Lemma 6.7: each coordinate of p plus Lap(2/(ε·n))
/// (ε-user-level DP for n users of m items: the count vector has l1 sensitivity 2m).
pub fn laplace_baseline<R: Rng + ?Sized>(
    p: &[f64],
    epsilon: f64,
    users: u64,
    rng: &mut R,
) -> Vec<f64> {
    let b = 2.0 / (epsilon * users as f64);
    p.iter()
        .map(|x| {
            // u uniform in (−½, ½) (−½ itself redrawn: ln 0).
            let u: f64 = loop {
                let u = rng.gen_range(-0.5..0.5);
                if u > -0.5 {
                    break u;
                }
            };
            x - b * u.signum() * (1.0 - 2.0 * u.abs()).ln()
        })
        .collect()
}

/// d_EM(p, p') on the clustered metric, by the transport plan of Theorem 6.5's proof (D.2):
/// inside each cluster the matched part of the surplus moves at cost r, and the cluster
/// totals move across at cost 1. Its cost is (r/2)·‖v‖₁ + ((1−r)/2)·‖vB‖₁ for v = p − p'
/// (B sums clusters), which is d_EM exactly for probability vectors (`spec/user-level.md`;
/// tested against the exact transport) and defines the error of signed estimates.
pub fn clustered_emd(space: &Clustered, p: &[f64], q: &[f64]) -> f64 {
    let s = space.size;
    let r = crate::exact::f64_nearest(&space.r);
    let mut within = 0.0;
    let mut across = 0.0;
    for (pc, qc) in p.chunks(s).zip(q.chunks(s)) {
        let (pos, neg): (f64, f64) = pc.iter().zip(qc).fold((0.0, 0.0), |(a, b), (x, y)| {
            let d = x - y;
            if d > 0.0 {
                (a + d, b)
            } else {
                (a, b - d)
            }
        });
        within += pos.min(neg);
        across += (pos - neg).abs();
    }
    r * within + 0.5 * across
}
