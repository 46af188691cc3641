//! User-level metric differential privacy via the earth mover's distance (Imola, Roy
//! Chowdhury, Chaudhuri, CCS 2024; `spec/user-level.md`). One module per paper object:
//!
//! * [`emd`]: d_EM between two datasets over a finite metric space (Definition 2.4),
//!   exact for rational distances, enclosed for irrational ones; the assignment form of
//!   Lemma 2.1 for equal sizes;
//! * [`priv_emd_linear`]: linear queries with a Lipschitz column map (Theorem 4.1) and
//!   their K-norm release (Algorithm 1, Lemma 4.2);
//! * [`exact_noise`]: the K-norm noise sampled exactly and rounded to a grid (float-safe);
//! * [`clones`]: the numerical accountant: the clones reduction's hockey-stick divergence
//!   with directed rounding (FMT21 Lemma 3.3, numerically);
//! * [`shuffle`]: the accountant of item-wise release with amplification by shuffling
//!   (Algorithm 2, Lemma B.1, Theorems 4.3/4.4, equations 6–7), with directed rounding;
//! * [`reduction`]: sampling with replacement to a fixed size and the bounded→unbounded
//!   guarantee (Algorithm 3, Lemma 5.2, Theorem 5.3);
//! * [`freq`]: frequency estimation on a clustered metric (§6.2, Algorithm 4): the
//!   randomizer as an exact matrix, its exact inverse and the baselines of Table 2;
//! * [`evaluation`]: the paper's comparisons measured (`mdp experiment user-level`);
//! * [`users`]: reading users (JSON lines, one list of items per line), streaming.
//!
//! The paper's metric is normalised, d ≤ 1; [`Units`] converts a space's distances (with
//! a rational upper bound of the diameter) to that scale and the guarantees back.

pub mod clones;
pub mod emd;
pub mod evaluation;
pub mod exact_noise;
pub mod experiments;
pub mod freq;
pub mod priv_emd_linear;
pub mod reduction;
pub mod release;
pub mod run;
pub mod shuffle;
pub mod users;

use crate::exact::Q;
use crate::metric::Space;
use thiserror::Error;

/// A user-level parameter or computation that cannot proceed: the field and the reason.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum UserLevelError {
    /// A parameter out of its range (`α ≤ 0`, `δ ∉ (0, 1)`, a query of the wrong shape …).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// An exact computation went past its stated budget.
    #[error("{what}: over the budget of {budget} exact operations")]
    Budget { what: String, budget: u64 },
}

/// [`UserLevelError::Invalid`] from its parts.
pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> UserLevelError {
    UserLevelError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// A count of exact operations a computation may still spend (hostile-input rule: every
/// exact computation a file can trigger counts against a stated budget).
#[derive(Clone, Debug)]
pub struct Budget {
    limit: u64,
    left: u64,
}

impl Budget {
    /// The default: 5·10⁷ exact operations (a few seconds).
    pub const DEFAULT: u64 = 50_000_000;

    pub fn new(limit: u64) -> Budget {
        Budget { limit, left: limit }
    }

    /// Spend `n` operations of `what`; an error once the budget is exhausted.
    pub fn spend(&mut self, n: u64, what: &str) -> Result<(), UserLevelError> {
        if n > self.left {
            self.left = 0;
            return Err(UserLevelError::Budget {
                what: what.to_string(),
                budget: self.limit,
            });
        }
        self.left -= n;
        Ok(())
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(Budget::DEFAULT)
    }
}

/// The paper's normalisation d ≤ 1 on a space of diameter D, through a rational
/// `diameter ≥ D` (`spec/user-level.md`, "Units"): an ε·d-private randomizer is
/// (ε·diameter)·(d/diameter)-private, and a guarantee α·d_EM/diameter in normalised units
/// is (α/diameter)·d_EM per unit of the space. Both conversions are exact.
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    pub diameter: Q,
}

impl Units {
    /// The units of a space: its diameter's upper enclosure end over all input pairs,
    /// rounded up onto a 2⁻⁶⁴-relative grid (k²/2 enclosures, counted against `budget`).
    pub fn for_space(space: &Space, budget: &mut Budget) -> Result<Units, UserLevelError> {
        let n = space.n();
        let mut d = Q::from(0u32);
        for i in 0..n {
            budget.spend((n - i) as u64, "diameter")?;
            for j in i + 1..n {
                let h = space.enclosure(i, j, 64).hi;
                if h > d {
                    d = h;
                }
            }
        }
        if d == 0u32 {
            return Err(invalid("space", "diameter 0: no distances to normalise"));
        }
        let e = d.floor_log2_abs();
        Ok(Units {
            diameter: d.round_to_pow2_grid(e - 64, crate::exact::Round::Up),
        })
    }

    /// α₀ in normalised units for an item-level ε per unit of the space.
    pub fn alpha0(&self, epsilon_per_unit: &Q) -> Q {
        epsilon_per_unit * &self.diameter
    }

    /// α per unit of the space for a normalised α.
    pub fn per_unit(&self, alpha_normalised: &Q) -> Q {
        alpha_normalised / &self.diameter
    }
}

/// `x > 0` or an error naming `field`.
pub(crate) fn positive(x: &Q, field: &str) -> Result<(), UserLevelError> {
    if *x > 0u32 {
        Ok(())
    } else {
        Err(invalid(field, "must be > 0"))
    }
}

/// `δ ∈ (0, 1)` or an error naming `field`.
pub(crate) fn probability(x: &Q, field: &str) -> Result<(), UserLevelError> {
    if *x > 0u32 && *x < 1u32 {
        Ok(())
    } else {
        Err(invalid(field, "must be in (0, 1)"))
    }
}

/// The error rate below which a guarantee is called weak: 1 %.
pub const WEAK_ERROR_RATE: f64 = 0.01;

/// The smallest error rate an (ε, δ)-DP guarantee leaves to a test that tells two datasets
/// apart with equal false-positive and false-negative rates: (1 − δ)/(1 + e^ε). Every test
/// has a + e^ε·b ≥ 1 − δ (hypothesis-testing view of DP, Kairouz, Oh, Viswanath 2015,
/// Theorem 2.1; Wasserman–Zhou 2010), so a = b ≥ (1 − δ)/(1 + e^ε). Computed in floating
/// point from upper ends of ε and δ; it only decides whether to warn.
pub fn equal_error_floor(epsilon_upper: f64, delta_upper: f64) -> f64 {
    ((1.0 - delta_upper) / (1.0 + epsilon_upper.exp())).max(0.0)
}

/// A warning when a user-level guarantee is weak: when, for two users at the largest
/// distance, whose loss is `epsilon_upper`, a test could tell them apart with both error
/// rates below [`WEAK_ERROR_RATE`] ([`equal_error_floor`] < 1 %, i.e. ε ≳ ln 99 ≈ 4.6 for
/// small δ). The sentence says what weak means; `None` when the guarantee is not weak.
pub fn weak_guarantee(epsilon_upper: f64, delta_upper: f64) -> Option<String> {
    let floor = equal_error_floor(epsilon_upper, delta_upper);
    (floor < WEAK_ERROR_RATE).then(|| {
        let delta = if delta_upper > 0.0 {
            format!(", δ ≤ {delta_upper:.1e}")
        } else {
            String::new()
        };
        let floor = if floor > 0.0 {
            format!("{floor:.1e}")
        } else {
            "0 (below the smallest double)".into()
        };
        format!(
            "warning: weak guarantee: for two users at the largest distance (ε ≤ {epsilon_upper:.4}{delta}) it allows a test that tells them apart with both error rates as low as {floor} (weak: below {:.0} %); it protects only users much closer than that",
            WEAK_ERROR_RATE * 100.0
        )
    })
}

/// The diameter of `space` in floating point, for warnings only (never for a guarantee):
/// the largest distance over all pairs when n ≤ 4 000, else 2·max_j d(0, j), which is at
/// least the diameter by the triangle inequality (O(n) on city-scale spaces).
pub fn diameter_for_warning(space: &Space) -> f64 {
    let n = space.n();
    if n <= 4000 {
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| space.approx(i, j))
            .fold(0.0, f64::max)
    } else {
        2.0 * (1..n).map(|j| space.approx(0, j)).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod weak_tests {
    use super::*;

    #[test]
    fn weak_means_a_test_with_errors_below_one_percent() {
        // ε = ln 99 is the boundary for δ = 0: floor = 1/100.
        let b = 99f64.ln();
        assert!(weak_guarantee(b - 1e-9, 0.0).is_none());
        assert!(weak_guarantee(b + 1e-9, 0.0)
            .unwrap()
            .contains("weak guarantee"));
        assert!(weak_guarantee(50.9, 1e-6).is_some());
        assert!(weak_guarantee(1.0, 1e-6).is_none());
        // A large δ alone makes the floor small as well.
        assert!(weak_guarantee(0.1, 0.99).is_some());
        assert_eq!(equal_error_floor(f64::INFINITY, 0.0), 0.0);
    }
}
