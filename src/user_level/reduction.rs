//! BoundedEMDReduction (Algorithm 3): sample each user's items with replacement to a fixed
//! size s, then run any bounded d_EM-DP mechanism; Lemma 5.2 (the sampling is a smooth
//! projection of d_EM) and Theorem 5.3 (the discrete (ε, τ, δ + β) guarantee)
//! (Imola et al. 2024, §5; `spec/user-level.md`, "Reduction").
//!
//! Distances are in normalised units (d ≤ 1, [`super::Units`]): Lemma 5.2's Bernstein
//! step needs Z = d(Y, Y') ∈ [0, 1]. Every bound is a rational upper end of an enclosure.

use super::{invalid, positive, probability, UserLevelError};
use crate::exact::{functions, Interval, Q};
use rand::Rng;

const PREC: u64 = 128;

/// s items drawn uniformly with replacement from `items` (non-empty).
pub fn sample_with_replacement<R: Rng + ?Sized>(
    items: &[usize],
    s: usize,
    rng: &mut R,
) -> Vec<usize> {
    (0..s)
        .map(|_| items[rng.gen_range(0..items.len())])
        .collect()
}

fn ln_inv(beta: &Q) -> Interval {
    functions::ln(&Interval::point(Q::from(1u32) / beta), PREC)
        .expect("1/β > 0")
        .round_outward(PREC)
}

/// Lemma 5.2: with probability ≥ 1 − β, d_EM(Ŷ, Ŷ') ≤ D + √(2·D·ln(1/β)/s) +
/// 2·ln(1/β)/(3s) for D = d_EM(P, P') (the upper end returned).
pub fn projection_bound(emd: &Q, s: u64, beta: &Q) -> Result<Q, UserLevelError> {
    check(s, beta)?;
    if *emd < 0u32 || *emd > 1u32 {
        return Err(invalid("emd", "must be in [0, 1] (normalised units)"));
    }
    let l = ln_inv(beta);
    let s = Q::from(s);
    let root = functions::sqrt(&l.scale(&(Q::from(2u32) * emd / &s)), PREC).expect("≥ 0");
    let tail = l.scale(&(Q::from(2u32) / (Q::from(3u32) * s)));
    Ok(root.add(&tail).add_q(emd).round_outward(PREC).hi)
}

fn check(s: u64, beta: &Q) -> Result<(), UserLevelError> {
    if s == 0 {
        return Err(invalid("samples", "must be ≥ 1"));
    }
    probability(beta, "beta")
}

/// The discrete guarantee of Theorem 5.3 (Definitions 5.1/5.2): (ε, τ, δ + β).
#[derive(Clone, Debug, PartialEq)]
pub struct Discrete {
    pub epsilon: Q,
    pub tau: Q,
    pub delta: Q,
}

/// Theorem 5.3: if the inner mechanism is (α, δ)-bounded d_EM-DP for size s, the
/// reduction is (ε, τ, δ + β)-discrete d_EM-DP with ε = α·B, B the smaller of Lemma
/// 5.2's two forms at D = τ: τ + √(2τ·ln(1/β)/s) + 2·ln(1/β)/(3s) and
/// 2τ + 7·ln(1/β)/(6s) (the second is the first after AM–GM).
pub fn theorem_5_3(
    alpha: &Q,
    delta: &Q,
    s: u64,
    tau: &Q,
    beta: &Q,
) -> Result<Discrete, UserLevelError> {
    positive(alpha, "alpha")?;
    if *delta < 0u32 || *delta >= 1u32 {
        return Err(invalid("delta", "must be in [0, 1)"));
    }
    positive(tau, "tau")?;
    if *tau > 1u32 {
        return Err(invalid("tau", "must be ≤ 1 (normalised units)"));
    }
    let tight = projection_bound(tau, s, beta)?;
    let l = ln_inv(beta);
    let loose = l
        .scale(&(Q::from(7u32) / (Q::from(6u32) * Q::from(s))))
        .add_q(&(Q::from(2u32) * tau))
        .hi;
    let b = tight.min(loose);
    Ok(Discrete {
        epsilon: alpha * b,
        tau: tau.clone(),
        delta: delta + beta,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_rational;

    #[test]
    fn am_gm_form_is_never_smaller() {
        for (d, s, b) in [
            ("0.01", 100u64, "0.001"),
            ("0.3", 10, "0.1"),
            ("1", 1, "0.5"),
        ] {
            let (d, b) = (parse_rational(d).unwrap(), parse_rational(b).unwrap());
            let tight = projection_bound(&d, s, &b).unwrap();
            let l = ln_inv(&b).hi;
            let loose = Q::from(2u32) * &d + l * Q::from(7u32) / Q::from(6 * s);
            assert!(tight <= loose);
        }
    }
}
