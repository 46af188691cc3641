//! The user-level paper's comparisons, measured (it has no experiments, only the error
//! orders of its Table 2): the accountant's α₀ against composition and FMT versus N,
//! linear queries (PrivEMDLinear against user-level DP K-norm) and frequency estimation
//! (FreqEstLocal against Hadamard response and Laplace), error versus n and α, local and
//! central. `mdp experiment user-level` writes them as CSV + SVG.
//!
//! These are utility simulations: the baselines' noise and the simulated reports are drawn
//! in floating point from a seeded generator (the privacy of a release is the business of
//! `mdp release`, which samples the audited rationals). α is in normalised units (d ≤ 1,
//! [`super::Units`]) and the baselines' ε is set equal to α, the paper's convention (then
//! both protect a whole-user change equally, and d_EM-DP protects closer pairs more).

use super::freq::{clustered_emd, laplace_baseline, Clustered, ClusteredRr};
use super::priv_emd_linear::{unit_ball, LinearQuery, Norm, PrivEmdLinear, Scope};
use super::release::freq_budget;
use super::shuffle::{self, Model};
use super::{Budget, UserLevelError};
use crate::exact::{f64_nearest, f64_up, Q};
use crate::metric::Space;
use rand::{Rng, RngCore};
use rand_distr::{Distribution, Gamma};
use serde::Serialize;

/// One row of the accountant comparison.
#[derive(Serialize, Clone, Debug)]
pub struct AccountRow {
    pub model: String,
    pub users: u64,
    pub items: u64,
    pub n_items: u64,
    pub alpha: f64,
    pub delta: f64,
    /// Largest α₀ by Theorem 4.4's inverse (0 when no α₀ qualifies).
    pub alpha0_shuffle: f64,
    /// α₀ = α/m (basic composition).
    pub alpha0_composition: f64,
    /// Largest α₀ whose FMT-with-group-privacy ε (m·F_N(1)) is ≤ α.
    pub alpha0_fmt: f64,
    pub seconds: f64,
}

/// The largest dyadic α₀ ≤ `cap` (grid 2⁻³⁰) with `ok(α₀)`, for an increasing constraint.
fn largest(cap: f64, ok: impl Fn(&Q) -> bool) -> f64 {
    let (mut lo, mut hi) = (0.0f64, cap);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let q = crate::exact::q_from_f64(mid);
        if ok(&q) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Central (n users × m items) and local (m items) rows for each N, at target (α, δ).
pub fn accountant(
    users: &[u64],
    items: &[u64],
    alphas: &[f64],
    delta: f64,
) -> Result<Vec<AccountRow>, UserLevelError> {
    let d = crate::exact::q_from_f64(delta);
    let mut rows = Vec::new();
    let mut models: Vec<Model> = Vec::new();
    for &m in items {
        models.push(Model::Local { m });
        for &n in users {
            models.push(Model::Central { n, m });
        }
    }
    for model in models {
        for &alpha in alphas {
            let a = crate::exact::q_from_f64(alpha);
            let t = std::time::Instant::now();
            let ours = shuffle::max_alpha0(model, &a, &d, shuffle::Accountant::Closed)
                .map(|i| f64_nearest(&i.alpha0))
                .unwrap_or(0.0);
            let seconds = t.elapsed().as_secs_f64();
            let m = model.m();
            // FMT with group privacy at the same item δ rule: m·e^{ε}·δ_item ≤ δ.
            let item_delta =
                crate::exact::q_from_f64(delta / (m as f64 * alpha.exp()) * (1.0 - 1e-9));
            let fmt = largest(45.0, |a0| {
                shuffle::fmt_group(model, a0, &item_delta, shuffle::Accountant::Closed)
                    .is_ok_and(|g| g.alpha <= a && g.delta <= d)
            });
            let (n, label) = match model {
                Model::Local { .. } => (1, "local"),
                Model::Central { n, .. } => (n, "central"),
            };
            rows.push(AccountRow {
                model: label.into(),
                users: n,
                items: m,
                n_items: model.n_items()?,
                alpha,
                delta,
                alpha0_shuffle: ours,
                alpha0_composition: alpha / m as f64,
                alpha0_fmt: fmt,
                seconds,
            });
        }
    }
    Ok(rows)
}

/// One row of the linear-query comparison: mean ‖q̂ − q‖₂ over trials.
#[derive(Serialize, Clone, Debug)]
pub struct LinearRow {
    pub model: String,
    pub method: String,
    pub users: u64,
    pub alpha: f64,
    pub error: f64,
    pub trials: usize,
}

/// Users: each picks a home site and `m` items among the home's `near` nearest sites.
pub fn neighbourhood_users<R: Rng + ?Sized>(
    space: &Space,
    n: usize,
    m: usize,
    near: usize,
    rng: &mut R,
) -> Vec<Vec<usize>> {
    (0..n)
        .map(|_| {
            let home = rng.gen_range(0..space.n());
            let hood = space.nearest_neighbours(home, near.min(space.n() - 1));
            (0..m)
                .map(|_| {
                    if hood.is_empty() {
                        home
                    } else {
                        hood[rng.gen_range(0..hood.len())]
                    }
                })
                .collect()
        })
        .collect()
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The average-location query (l2) under PrivEMDLinear and under user-level DP K-norm
/// with sensitivity Δ = max ‖f(x) − f(x′)‖₂ (local: each user's release averaged by the
/// server; central: one release). α in normalised units (per diameter `diameter`).
#[allow(clippy::too_many_arguments)]
pub fn linear(
    space: &Space,
    query: &LinearQuery,
    diameter: &Q,
    users: &[Vec<usize>],
    ns: &[usize],
    alphas: &[f64],
    trials: usize,
    rng: &mut dyn RngCore,
) -> Result<Vec<LinearRow>, UserLevelError> {
    let d = query.dim();
    let cols: Vec<Vec<f64>> = query
        .columns
        .iter()
        .map(|c| c.iter().map(f64_nearest).collect())
        .collect();
    let mut sens = 0.0f64;
    for a in &cols {
        for b in &cols {
            sens = sens.max(dist2(a, b));
        }
    }
    let mean = |us: &[Vec<usize>]| -> Vec<f64> {
        let mut s = vec![0.0; d];
        let mut cnt = 0.0;
        for u in us {
            for &x in u {
                for (a, b) in s.iter_mut().zip(&cols[x]) {
                    *a += b;
                }
                cnt += 1.0;
            }
        }
        s.into_iter().map(|v| v / cnt).collect()
    };
    let knorm = |scale: f64, rng: &mut dyn RngCore| -> Vec<f64> {
        let r: f64 = Gamma::new(d as f64 + 1.0, scale)
            .expect("scale > 0")
            .sample(rng);
        unit_ball(Norm::L2, d, rng)
            .into_iter()
            .map(|u| r * u)
            .collect()
    };
    let l = super::priv_emd_linear::lipschitz(space, query, &mut Budget::default())?;
    let mut rows = Vec::new();
    for &n in ns {
        let us = &users[..n.min(users.len())];
        let truth = mean(us);
        let per_user: Vec<Vec<f64>> = us.iter().map(|u| mean(std::slice::from_ref(u))).collect();
        for &alpha in alphas {
            let a_unit = crate::exact::q_from_f64(alpha) / diameter;
            let local =
                PrivEmdLinear::with_lipschitz(query.clone(), l.clone(), &a_unit, Scope::Local)?;
            let central = PrivEmdLinear::with_lipschitz(
                query.clone(),
                l.clone(),
                &a_unit,
                Scope::Central { n: us.len() as u64 },
            )?;
            let mut err = [0.0f64; 4];
            for _ in 0..trials {
                // local: the server averages the users' noisy releases.
                let mut ours = vec![0.0; d];
                let mut base = vec![0.0; d];
                for q in &per_user {
                    for (i, z) in local.noise(rng).into_iter().enumerate() {
                        ours[i] += (q[i] + z) / us.len() as f64;
                    }
                    for (i, z) in knorm(sens / alpha, rng).into_iter().enumerate() {
                        base[i] += (q[i] + z) / us.len() as f64;
                    }
                }
                err[0] += dist2(&ours, &truth);
                err[1] += dist2(&base, &truth);
                err[2] += dist2(&central.noise(rng), &vec![0.0; d]);
                err[3] += dist2(&knorm(sens / (alpha * us.len() as f64), rng), &vec![0.0; d]);
            }
            let names = [
                ("local", "PrivEMDLinear"),
                ("local", "user-level K-norm"),
                ("central", "PrivEMDLinear"),
                ("central", "user-level K-norm"),
            ];
            for (i, (model, method)) in names.iter().enumerate() {
                rows.push(LinearRow {
                    model: model.to_string(),
                    method: method.to_string(),
                    users: us.len() as u64,
                    alpha,
                    error: err[i] / trials as f64,
                    trials,
                });
            }
        }
    }
    Ok(rows)
}

/// One row of the frequency comparison: mean d_EM(p̂, p) (transport norm) over trials.
#[derive(Serialize, Clone, Debug)]
pub struct FreqRow {
    pub model: String,
    pub method: String,
    pub users: u64,
    pub items: u64,
    pub alpha: f64,
    pub alpha0: f64,
    pub error: f64,
    pub predicted: f64,
    pub trials: usize,
}

/// Users of `m` items on a clustered space: a home cluster drawn from the cluster masses
/// of `prior`; each item from the home cluster with probability `stay`, else from `prior`.
pub fn clustered_users<R: Rng + ?Sized>(
    space: &Clustered,
    prior: &[f64],
    n: usize,
    m: usize,
    stay: f64,
    rng: &mut R,
) -> Vec<Vec<usize>> {
    let s = space.size;
    let draw = |w: &[f64], rng: &mut R| -> usize {
        let t: f64 = rng.gen::<f64>() * w.iter().sum::<f64>();
        let mut acc = 0.0;
        for (i, x) in w.iter().enumerate() {
            acc += x;
            if t < acc {
                return i;
            }
        }
        w.len() - 1
    };
    let cluster_mass: Vec<f64> = prior.chunks(s).map(|c| c.iter().sum()).collect();
    (0..n)
        .map(|_| {
            let home = draw(&cluster_mass, rng);
            (0..m)
                .map(|_| {
                    if rng.gen::<f64>() < stay {
                        home * s + draw(&prior[home * s..(home + 1) * s], rng)
                    } else {
                        draw(prior, rng)
                    }
                })
                .collect()
        })
        .collect()
}

/// Hadamard response (Acharya, Sun, Zhang 2019) with per-item ε₀ over k items: K = the
/// smallest power of two > k; item x answers inside C_x = {j : H[x+1]\[j\] = +1} with
/// probability e^{ε₀}/(e^{ε₀}+1), uniformly; the estimate is
/// p̂_x = 2(e^{ε₀}+1)/(e^{ε₀}−1)·(P̂(Y ∈ C_x) − ½), by a fast Walsh–Hadamard transform.
pub fn hadamard_response<R: Rng + ?Sized>(
    items: &[usize],
    k: usize,
    eps0: f64,
    rng: &mut R,
) -> Vec<f64> {
    let kk = (k + 1).next_power_of_two();
    let p_in = eps0.exp() / (eps0.exp() + 1.0);
    let sign = |row: usize, j: usize| ((row & j).count_ones() % 2) == 0;
    let mut counts = vec![0.0f64; kk];
    for &x in items {
        let inside = rng.gen::<f64>() < p_in;
        loop {
            let j = rng.gen_range(0..kk);
            if sign(x + 1, j) == inside {
                counts[j] += 1.0;
                break;
            }
        }
    }
    // Walsh–Hadamard transform: w[r] = Σ_j counts[j]·H[r][j].
    let mut h = 1;
    while h < kk {
        for i in (0..kk).step_by(2 * h) {
            for j in i..i + h {
                let (a, b) = (counts[j], counts[j + h]);
                counts[j] = a + b;
                counts[j + h] = a - b;
            }
        }
        h *= 2;
    }
    let n = items.len() as f64;
    let c = 2.0 * (eps0.exp() + 1.0) / (eps0.exp() - 1.0);
    (0..k)
        .map(|x| c * ((n + counts[x + 1]) / (2.0 * n) - 0.5))
        .collect()
}

/// The per-item ε₀ with advanced composition over m items giving (ε, δ):
/// m·ε₀·tanh(ε₀/2) + ε₀·√(2m·ln(1/δ)) ≤ ε (Kairouz et al. 2015), by bisection.
pub fn advanced_composition_eps0(eps: f64, m: u64, delta: f64) -> f64 {
    let m = m as f64;
    let f = |e0: f64| m * e0 * (e0 / 2.0).tanh() + e0 * (2.0 * m * (1.0 / delta).ln()).sqrt();
    let (mut lo, mut hi) = (0.0, eps);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) <= eps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// FreqEstLocal (local α₀ by Theorem 4.4 or composition, whichever is larger; central α₀
/// by the shuffle inverse) against Hadamard response (user-level local, ε₀ by advanced
/// composition) and Laplace (user-level central, Lemma 6.7), at ε = α (equal protection
/// of a whole-user change) and at ε = α·r (equal protection of a user whose items all
/// move inside their clusters, d_EM ≤ r).
#[allow(clippy::too_many_arguments)]
pub fn frequency(
    space: &Clustered,
    prior: &[f64],
    ns: &[usize],
    m: usize,
    alphas: &[f64],
    delta: f64,
    trials: usize,
    rng: &mut dyn RngCore,
) -> Result<Vec<FreqRow>, UserLevelError> {
    let k = space.k();
    let r = f64_nearest(&space.r);
    let dq = crate::exact::q_from_f64(delta);
    let mut rows = Vec::new();
    for &n in ns {
        for &alpha in alphas {
            let aq = crate::exact::q_from_f64(alpha);
            // The larger of Theorem 4.4's inverse and composition's α/m, as the release
            // takes it.
            let a0 = |model: Model| {
                f64_nearest(&freq_budget(model, &aq, &dq, shuffle::Accountant::Closed).alpha0)
            };
            let a0_local = a0(Model::Local { m: m as u64 });
            let a0_central = a0(Model::Central {
                n: n as u64,
                m: m as u64,
            });
            let eps0_hr = advanced_composition_eps0(alpha, m as u64, delta);
            let eps0_hr_r = advanced_composition_eps0(alpha * r, m as u64, delta);
            let mut err = [0.0f64; 6];
            let mut pred = [0.0f64; 2];
            for _ in 0..trials {
                let users = clustered_users(space, prior, n, m, 0.9, rng);
                let all: Vec<usize> = users.iter().flatten().copied().collect();
                let mut p = vec![0.0; k];
                for &x in &all {
                    p[x] += 1.0 / all.len() as f64;
                }
                for (i, a0) in [a0_local, a0_central].into_iter().enumerate() {
                    let rr = ClusteredRr::new(space.clone(), &crate::exact::q_from_f64(a0))?;
                    let w: Vec<f64> = [&rr.a, &rr.b, &rr.c]
                        .iter()
                        .map(|v| f64_up(&(*v / &rr.z)))
                        .collect();
                    let mut counts = vec![0u64; k];
                    let s = space.size;
                    let (p_same, p_other) = (w[1] * (s - 1) as f64, w[2] * (k - s) as f64);
                    for &x in &all {
                        let u: f64 = rng.gen();
                        let y = if u < p_same {
                            let c = x / s * s;
                            let o = rng.gen_range(0..s - 1);
                            c + if c + o >= x { o + 1 } else { o }
                        } else if u < p_same + p_other {
                            let o = rng.gen_range(0..k - s);
                            let c = x / s * s;
                            if o >= c {
                                o + s
                            } else {
                                o
                            }
                        } else {
                            x
                        };
                        counts[y] += 1;
                    }
                    let est: Vec<f64> = rr.estimate(&counts)?.iter().map(f64_nearest).collect();
                    err[i] += clustered_emd(space, &est, &p);
                    pred[i] = rr.error_bound(all.len() as u64);
                }
                let hr = hadamard_response(&all, k, eps0_hr, rng);
                err[2] += clustered_emd(space, &hr, &p);
                let lap = laplace_baseline(&p, alpha, n as u64, rng);
                err[3] += clustered_emd(space, &lap, &p);
                let hr = hadamard_response(&all, k, eps0_hr_r, rng);
                err[4] += clustered_emd(space, &hr, &p);
                let lap = laplace_baseline(&p, alpha * r, n as u64, rng);
                err[5] += clustered_emd(space, &lap, &p);
            }
            let names = [
                ("local", "FreqEstLocal", a0_local),
                ("central", "FreqEstLocal (shuffled)", a0_central),
                ("local", "Hadamard response (eps = alpha)", eps0_hr),
                ("central", "Laplace (eps = alpha)", alpha),
                ("local", "Hadamard response (eps = alpha*r)", eps0_hr_r),
                ("central", "Laplace (eps = alpha*r)", alpha * r),
            ];
            for (i, (model, method, a0)) in names.iter().enumerate() {
                rows.push(FreqRow {
                    model: model.to_string(),
                    method: method.to_string(),
                    users: n as u64,
                    items: m as u64,
                    alpha,
                    alpha0: *a0,
                    error: err[i] / trials as f64,
                    predicted: if i < 2 { pred[i] } else { f64::NAN },
                    trials,
                });
            }
        }
    }
    Ok(rows)
}
