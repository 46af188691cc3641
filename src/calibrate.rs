//! Calibration to a target (ε,δ) tight epsilon (Imola et al. §5: mechanisms are compared
//! at equal ε_tight, eq. (10), with δ = 0.001). A mechanism family has one privacy
//! parameter p (its claimed ε, or Madlib's noise ε); [`calibrate`] finds p whose matrix has
//! ε_tight(δ) within a relative tolerance of the target, by geometric bracketing and
//! bisection on log p. ε_tight is computed by the auditor's rigorous routine
//! ([`eps_tight`]); the search assumes it grows with p (true of every family here in
//! practice, not proved for the LP mechanisms), and reports the value it reached.

use crate::exact::Q;
use crate::mechanism::Matrix;
use crate::metric::Space;
use crate::privacy::{self, Prepared};

/// The rigorous enclosure [lo, hi] of the (ε,δ) tight epsilon of `matrix` (all pairs).
pub fn eps_tight(
    space: &Space,
    matrix: &Matrix,
    delta: &Q,
    max_prec: u64,
) -> Result<[f64; 2], String> {
    let prep = Prepared::new(space, matrix, None, max_prec)
        .map_err(|(u, k)| format!("matrix[{u}][{k}]: not a valid entry"))?;
    let ratios = privacy::float_ratios(&prep);
    let (enc, _) = privacy::tight_eps_delta(&prep, &ratios, delta)
        .map_err(|(u, v)| format!("ε_tight undecided for the pair ({u}, {v})"))?;
    let (lo, hi) = enc.to_f64();
    Ok([lo, hi])
}

/// Why calibration stopped.
#[derive(Debug)]
pub enum CalibrationError {
    /// No parameter in [p_min, p_max] reaches the target ε_tight (the nearest value
    /// reached): a bad `target`.
    Unreachable {
        target: f64,
        reached: f64,
        param: f64,
    },
    /// Building or measuring a mechanism failed.
    Failed(String),
}

impl std::fmt::Display for CalibrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CalibrationError::Unreachable {
                target,
                reached,
                param,
            } => write!(
                f,
                "ε_tight = {target} is not reached (nearest {reached:.6} at parameter {param:.6})"
            ),
            CalibrationError::Failed(s) => f.write_str(s),
        }
    }
}

impl From<String> for CalibrationError {
    fn from(s: String) -> Self {
        CalibrationError::Failed(s)
    }
}

/// The calibrated parameter and the ε_tight it gives.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Calibrated {
    pub param: f64,
    pub eps_tight: f64,
    pub evaluations: usize,
}

/// Find p ∈ [p_min, p_max] with target·(1 − rel_tol) ≤ measure(p) ≤ target, starting at
/// p0: never above the target (issue 33: `calibrate exponential --target 1` returned
/// ε_tight 1.000286). `measure(p)` is an upper bound on the ε_tight of the mechanism built
/// with parameter p (the enclosure's upper end), so the result's tight ε is proved ≤ the
/// target; the gap to the target is `target − eps_tight`.
pub fn calibrate(
    target: f64,
    rel_tol: f64,
    p0: f64,
    p_min: f64,
    p_max: f64,
    mut measure: impl FnMut(f64) -> Result<f64, String>,
) -> Result<Calibrated, CalibrationError> {
    let mut evals = 0;
    let mut f = |p: f64| {
        evals += 1;
        measure(p).map_err(CalibrationError::Failed)
    };
    let close = |v: f64| v <= target && target - v <= rel_tol * target;
    let (mut lo, mut hi);
    let mut p = p0.clamp(p_min, p_max);
    let mut v = f(p)?;
    if close(v) {
        return Ok(Calibrated {
            param: p,
            eps_tight: v,
            evaluations: 1,
        });
    }
    if v < target {
        lo = (p, v);
        loop {
            if p >= p_max {
                return Err(CalibrationError::Unreachable {
                    target,
                    reached: v,
                    param: p,
                });
            }
            p = (p * 2.0).min(p_max);
            v = f(p)?;
            if v >= target {
                hi = (p, v);
                break;
            }
            lo = (p, v);
        }
    } else {
        hi = (p, v);
        loop {
            if p <= p_min {
                return Err(CalibrationError::Unreachable {
                    target,
                    reached: v,
                    param: p,
                });
            }
            p = (p / 2.0).max(p_min);
            v = f(p)?;
            if v <= target {
                lo = (p, v);
                break;
            }
            hi = (p, v);
        }
    }
    for _ in 0..60 {
        if close(lo.1) {
            break;
        }
        let mid = (lo.0 * hi.0).sqrt();
        let vm = f(mid)?;
        if vm < target {
            lo = (mid, vm);
        } else {
            hi = (mid, vm);
        }
    }
    let best = if close(lo.1) || (target - lo.1).abs() <= (hi.1 - target).abs() {
        lo
    } else {
        hi
    };
    // A jump in ε_tight(p) (a Monte Carlo estimate, or TEM's L(w) changing) can leave the
    // target between two values: that is unreachable, not a result.
    if !close(best.1) {
        return Err(CalibrationError::Unreachable {
            target,
            reached: best.1,
            param: best.0,
        });
    }
    Ok(Calibrated {
        param: best.0,
        eps_tight: best.1,
        evaluations: evals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuous_increasing_is_found_at_or_below_the_target() {
        for target in [0.3, 1.0, 2.0, 7.5] {
            let c = calibrate(target, 1e-3, 2.0, 2e-3, 2e3, |p| Ok(0.6 * p + 0.01)).unwrap();
            assert!(c.eps_tight <= target, "{c:?}");
            assert!(target - c.eps_tight <= 1e-3 * target, "{c:?}");
        }
    }

    /// ε_tight jumps from 1 to 3 at p = 5: a target of 2 is unreachable, and the error
    /// names the nearest value found instead of returning it as a result.
    #[test]
    fn a_jump_over_the_target_is_unreachable() {
        let step = |p: f64| Ok(if p < 5.0 { 1.0 } else { 3.0 });
        match calibrate(2.0, 1e-3, 2.0, 2e-3, 2e3, step) {
            Err(CalibrationError::Unreachable { reached, param, .. }) => {
                assert!(reached == 1.0 || reached == 3.0);
                assert!((param - 5.0).abs() < 1e-6 * 5.0, "{param}");
            }
            other => panic!("{other:?}"),
        }
    }
}
