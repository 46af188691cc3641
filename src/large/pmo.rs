//! PMO on a whole road network (issue 56, `spec/lp.md` §4.9): Qiu 2024's PMO LP (eq. 3)
//! over a graph metric without its n×n table, solved localized (§4.6), written as a
//! container (float64 matrix beside an `mdp/1` header) with its `lp_dual` certificate, and
//! proven by the kernel before it is written: the structured edge audit for privacy
//! (`spec/soundness.md` §7.1) and the exact `lp_dual` check for the lower bound (§5).
//!
//! What changes against `mdp build pmo` on the JSON form, and why it is still sound:
//! * **the metric** is a [`Roads`](crate::metric::Roads) space: the LP's privacy rows are
//!   the edges of weight ≤ η (`lp::model::road_pairs`, whose feasible set is that of every
//!   pair within η), the costs come from K rows of distance enclosures from the outputs;
//! * **the repair** mixes the completed float primal with the uniform mechanism in `f64`
//!   (`mix`), by the amount the edges' rows need, enclosed in interval arithmetic; it is
//!   not trusted: the container's structured audit decides, and a failure mixes 16× more;
//! * **the certificate** is the same `lp_dual` of the whole LP, checked by the kernel
//!   with the distances from the outputs (O(n·K), no table).

use super::{metric_value, npy_path, LargeError, LargeMechanism};
use crate::exact::float::FI;
use crate::exact::Q;
use crate::io::container::{Container, Geometry};
use crate::io::{self};
use crate::lp::model::PrivacyLp;
use crate::mechanism::Outputs;
use crate::progress::Progress;
use crate::structured::report::audit_container;
use crate::{AuditOptions, Verdict};
use serde_json::{json, Value};
use std::path::Path;

/// The smallest mixing ratio r = t/(1 − t) of the mix: it covers the float rounding of
/// the mixed entries (each within 2⁻⁵² relative) on rows that the LP left tight. Its loss
/// is at most r·(largest cost), 10⁻¹¹ of it, far below a certified gap of 10⁻⁶.
pub const MIN_MIX: f64 = 1e-11;
/// Attempts of the mix before the build gives up (never observed past the first).
pub const MAX_TRIES: usize = 4;

/// What a city PMO build reports beside the container.
#[derive(Clone, Debug)]
pub struct CityStats {
    pub seconds_lp: f64,
    pub seconds_proof: f64,
    pub seconds_audit: f64,
    /// The mix t of the written matrix with the uniform mechanism.
    pub t: f64,
    /// The certified lower bound and the written matrix's expected loss (upper end).
    pub lower_bound: Option<f64>,
    pub expected_loss: Option<f64>,
    pub rows: usize,
}

/// Build PMO on `geometry` (a graph) with `lp` already assembled on its
/// [`Roads`](crate::metric::Roads) space, prove it, and return the container to write at
/// `header`. `aim`: the certified relative gap to stop at (`--gap`).
#[allow(clippy::too_many_arguments)]
pub fn build(
    geometry: Geometry,
    labels: Option<Vec<String>>,
    lp: &PrivacyLp,
    within: Option<&Q>,
    prior: Option<&[Q]>,
    aim: Option<f64>,
    max_memory: u64,
    header: &Path,
    meta: Value,
    progress: &dyn Progress,
) -> Result<(LargeMechanism, CityStats), LargeError> {
    let t0 = std::time::Instant::now();
    use crate::lp::{block_ipm, solver};
    // The localized LP; where it does not apply (neighbourhoods over half the variables: a
    // small or a low-ε instance), the structured interior point on every edge's rows.
    let (primal, dual) = match solver::solve_localized(lp, aim, max_memory, progress) {
        Some(x) => x,
        None if lp.rows_total() <= block_ipm::MAX_ROWS => {
            let (p, d) = solver::solve_float(lp, solver::Solver::Block, true, aim, max_memory, progress)
                .map_err(|e| super::invalid("solver", e.to_string()))?;
            (p, d.expect("the dual was asked for"))
        }
        None => {
            return Err(super::invalid(
                "solver",
                format!(
                    "the localized LP did not apply or did not reach its aim (see the notes above), and the whole LP's {} privacy rows are past the structured solver's {}",
                    lp.rows_total(),
                    block_ipm::MAX_ROWS
                ),
            ))
        }
    };
    let seconds_lp = t0.elapsed().as_secs_f64();
    let (n, k) = (lp.n, lp.k());
    let npy = npy_path(header);
    let name = npy
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| super::invalid("output", "not a file path"))?;
    let eps = lp.eps.clone();
    let (h, need) = normalized_need(lp, &primal.m);
    let mut r = (2.0 * need).max(MIN_MIX);
    let t1 = std::time::Instant::now();
    let pb = crate::lp::pipeline::problem(lp, &eps, within, None, crate::produce::MAX_PREC);
    let mut matrix = mix(&h, n, k, r);
    let upper = expected_loss_f64(lp, &matrix);
    let proof = crate::lp::pipeline::certify_dual(
        lp,
        primal.objective,
        Some(upper),
        dual,
        &pb,
        None,
        aim.unwrap_or(crate::lp::pipeline::TARGET_GAP),
        progress,
    )
    .map_err(|e| super::invalid("certificate", e.to_string()))?;
    let seconds_proof = t1.elapsed().as_secs_f64();
    lp.space.roads().inspect(|r| r.forget_rows());
    let mut doc = json!({
        "format": "mdp/1",
        "epsilon": io::number_value(&eps),
        "metric": metric_value(&geometry, labels.as_deref()),
        "outputs": {"of_inputs": lp.outputs},
        "loss": {"prior": match prior {
            Some(p) => p.iter().map(io::number_value).collect::<Vec<_>>(),
            None => vec![json!(1); n],
        }},
        "matrix": {"npy": name},
        "meta": meta,
    });
    if let Some(eta) = within {
        doc["neighbors"] = json!({"within": io::number_value(eta)});
    }
    if let Some(c) = &proof.certificate {
        doc["certificate"] = json!({"lower_bound": io::lp_dual::to_value(c)});
    }
    let opts = AuditOptions {
        epsilon: Some(eps.clone()),
        scope: match within {
            Some(eta) => crate::audit::ScopePolicy::WithinAtLeast(eta.clone()),
            None => crate::audit::ScopePolicy::AllPairs,
        },
        ..AuditOptions::default()
    };
    let t2 = std::time::Instant::now();
    for attempt in 0..MAX_TRIES {
        let dense = crate::dense::Dense::new(n, k, matrix, "matrix")
            .map_err(|e| super::invalid("matrix", e.to_string()))?;
        let container = Container {
            epsilon: eps.clone(),
            geometry: geometry.clone(),
            matrix: dense,
            outputs: Outputs::OfInputs(lp.outputs.clone()),
            within: within.cloned(),
            labels: labels.clone(),
            meta: doc.get("meta").cloned(),
            warnings: Vec::new(),
            npy: npy.clone(),
            prior: Some(prior.map_or_else(|| vec![Q::from(1u32); n], <[Q]>::to_vec)),
            lp_dual: proof.certificate.clone(),
        };
        let report = audit_container(&container, &opts, progress)
            .map_err(|e| super::invalid("matrix", e.to_string()))?;
        let private = report
            .checks
            .iter()
            .any(|c| c.name == "pure_privacy" && c.verdict == Verdict::Pass);
        if report.verdict == Verdict::Pass {
            let stats = CityStats {
                seconds_lp,
                seconds_proof,
                seconds_audit: t2.elapsed().as_secs_f64(),
                t: r / (1.0 + r),
                lower_bound: proof.lower_bound,
                expected_loss: report.expected_loss.map(|l| l[1]),
                rows: primal.rows.len(),
            };
            return Ok((
                LargeMechanism {
                    container,
                    report,
                    header: doc,
                },
                stats,
            ));
        }
        if private || attempt + 1 == MAX_TRIES {
            return Err(LargeError::NotCertified(Box::new(report)));
        }
        progress.note(&format!(
            "pmo: the mix r = {r:.1e} left an edge's row unproven; mixing 16× more"
        ));
        r *= 16.0;
        matrix = mix(&h, n, k, r);
    }
    unreachable!("the loop returns on its last attempt")
}

/// The float primal `m` clamped at 0 and row-normalized (H), and the least mixing ratio
/// r for which H + r/K satisfies every privacy row of `lp` with its c_dn, enclosed
/// upwards: r ≥ K·(H_u − c H_v)/(c − 1) over the rows (u, v, k) (the exact repair's
/// step 3, `lp::repair`, on the LP's pairs only).
fn normalized_need(lp: &PrivacyLp, m: &[f64]) -> (Vec<f64>, f64) {
    use rayon::prelude::*;
    let (n, k) = (lp.n, lp.k());
    let mut h: Vec<f64> = m.iter().map(|&x| x.max(0.0)).collect();
    h.par_chunks_mut(k).for_each(|row| {
        let s: f64 = row.iter().sum();
        for x in row.iter_mut() {
            *x = if s > 0.0 { *x / s } else { 1.0 / k as f64 };
        }
    });
    let kf = k as f64;
    let need = lp
        .pairs
        .par_iter()
        .map(|&(u, v)| {
            let c = lp.c_dn[u * n + v];
            let denom = FI::point(c).sub(FI::point(1.0)).lo;
            let mut worst: f64 = 0.0;
            for j in 0..k {
                let viol = FI::point(h[u * k + j])
                    .sub(FI::point(c).mul(FI::point(h[v * k + j])))
                    .hi;
                if viol > 0.0 {
                    worst = worst.max(if denom > 0.0 {
                        FI::point(viol).mul_f64(kf).div(FI::point(denom)).hi
                    } else {
                        f64::INFINITY
                    });
                }
            }
            worst
        })
        .reduce(|| 0.0, f64::max);
    (h, need)
}

/// (H + r/K)/(1 + r), row-major: the mix with the uniform mechanism at t = r/(1 + r).
fn mix(h: &[f64], n: usize, k: usize, r: f64) -> Vec<f64> {
    debug_assert_eq!(h.len(), n * k);
    let add = r / k as f64;
    h.iter().map(|&x| (x + add) / (1.0 + r)).collect()
}

/// The expected loss of `m` with the LP's rounded-down costs and its normalized prior (an
/// estimate for the certificate's gap note; the audit encloses the written matrix's own).
fn expected_loss_f64(lp: &PrivacyLp, m: &[f64]) -> f64 {
    let k = lp.k();
    (0..lp.n)
        .map(|u| {
            let row: f64 = (0..k).map(|j| m[u * k + j] * lp.cost_dn[u * k + j]).sum();
            lp.prior_f64(u) * row
        })
        .sum()
}
