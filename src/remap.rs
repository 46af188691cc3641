//! Bayesian remapping (issue 54 part 4; Chatzikokolakis, ElSalamouny, Palamidessi,
//! *Efficient utility improvement for location privacy*, PoPETs 2017): each release y is
//! post-processed into the input x̂(y) that minimizes the posterior expected loss
//! Σ_x π_x H\[x\]\[y\] d(x, x̂), the Bayes-optimal guess of [`crate::measure`]. The remapped
//! mechanism H′\[x\]\[g\] = Σ_{y : x̂(y) = g} H\[x\]\[y\] is computed exactly.
//!
//! * **Privacy.** H′ = H·R with R a deterministic map, so H′ is ε·d private wherever H is
//!   (post-processing, Imola et al. 2022 §2); the file is written only after its own exact
//!   audit passes at the original ε and scope ([`Certified`]).
//! * **Utility.** Its expected loss under π (distance to the release) is the adversary's
//!   error of H, and never more than H's own when the outputs are inputs (y itself is one of
//!   the candidate guesses). Outputs that are points or opaque labels are refused: a guess
//!   among the inputs could then be worse than the release.

use crate::certified::{Certified, CertifyError};
use crate::exact::float::FI;
use crate::exact::{sum_tree, Q};
use crate::io::{self, MechanismFile};
use crate::measure::{measures, Measures};
use crate::mechanism::Outputs;
use crate::progress::Progress;
use serde_json::json;

/// Why a mechanism was not remapped.
#[derive(Debug, thiserror::Error)]
pub enum RemapError {
    /// The outputs are not inputs (points or opaque labels), or the prior is invalid.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The remapped matrix did not pass its audit (never expected: post-processing).
    #[error("the remapped mechanism does not pass its audit")]
    NotPrivate(Box<crate::audit::Report>),
    /// Any other failure of the certification.
    #[error("{0}")]
    Certify(String),
}

/// The remapped mechanism and what remapping did.
pub struct Remapped {
    pub certified: Certified,
    /// For each output column of the original, the input it is remapped to.
    pub map: Vec<usize>,
    /// How many output columns go to another input than their own.
    pub remapped: usize,
    /// The original's expected loss under the prior, and the remapped one's (its distance
    /// to the release), enclosed.
    pub expected_loss_before: Option<FI>,
    pub expected_loss_after: FI,
    /// The original's measures (its `adversary_error` is the remapped expected loss).
    pub before: Measures,
}

/// Remap `file` (rows divided by their exact sums) under `prior` (normalized,
/// [`crate::measure::prior_of`]).
pub fn remap(
    file: &MechanismFile,
    prior: &[Q],
    progress: &dyn Progress,
) -> Result<Remapped, RemapError> {
    let n = file.space.n();
    let sites: Vec<usize> = match &file.outputs {
        Outputs::Inputs => (0..n).collect(),
        Outputs::OfInputs(v) => v.clone(),
        _ => {
            return Err(RemapError::Invalid {
                field: "outputs".into(),
                message: "remapping needs outputs that are inputs (points or labels could be better guesses than any input)".into(),
            })
        }
    };
    if file.cost.is_some() {
        return Err(RemapError::Invalid {
            field: "loss.cost".into(),
            message: "remapping minimizes the expected distance to the release; this file states another loss".into(),
        });
    }
    let before = measures(file, prior, None).map_err(|e| match e {
        crate::measure::MeasureError::Invalid { field, message } => {
            RemapError::Invalid { field, message }
        }
    })?;
    // A column no input reaches keeps its own input (it is never released).
    let h = crate::privatize::normalized(&file.matrix);
    let map: Vec<usize> = before
        .guesses
        .iter()
        .enumerate()
        .map(|(y, &g)| {
            if (0..n).any(|x| *h.get(x, y) > 0u32) {
                g
            } else {
                sites[y]
            }
        })
        .collect();
    let rows: Vec<serde_json::Value> = (0..n)
        .map(|x| {
            let mut row: Vec<Vec<Q>> = vec![Vec::new(); n];
            for (y, &g) in map.iter().enumerate() {
                if *h.get(x, y) > 0u32 {
                    row[g].push(h.get(x, y).clone());
                }
            }
            serde_json::Value::Array(
                row.into_iter()
                    .map(|parts| io::number_value(&sum_tree(parts)))
                    .collect(),
            )
        })
        .collect();
    let mut doc = json!({
        "format": "mdp/1",
        "epsilon": io::number_value(&file.epsilon),
        "metric": io::space_to_value(&file.space),
        "matrix": rows,
        "loss": {"prior": prior.iter().map(io::number_value).collect::<Vec<_>>()},
        "meta": crate::produce::producer_meta(
            json!({"mechanism": "remap", "of": file.meta.clone().unwrap_or(json!(null))}),
            &json!({"remap": {"reference": "Chatzikokolakis, ElSalamouny, Palamidessi, PoPETs 2017"}}),
        ),
    });
    if let Some(eta) = &file.within {
        doc["neighbors"] = json!({"within": io::number_value(eta)});
    }
    if let Some(l) = &file.labels {
        io::set_labels(&mut doc, l);
    }
    let certified = Certified::certify(&doc, progress).map_err(|e| match e {
        CertifyError::NotPrivate(r) => RemapError::NotPrivate(r),
        e => RemapError::Certify(e.to_string()),
    })?;
    let after =
        measures(certified.file(), prior, None).map_err(|e| RemapError::Certify(e.to_string()))?;
    Ok(Remapped {
        remapped: map.iter().zip(&sites).filter(|(g, s)| g != s).count(),
        map,
        expected_loss_before: before.expected_loss,
        expected_loss_after: after.expected_loss.expect("outputs are inputs: distances"),
        before,
        certified,
    })
}

/// What remapping did, as JSON (`mdp remap --json`, Python's `remap`): the expected loss
/// before and after and the adversary's error as `[lo, hi]`, and the input each output goes
/// to (by label when the inputs have labels).
pub fn summary_json(r: &Remapped, file: &MechanismFile) -> serde_json::Value {
    let enc = |x: FI| json!([x.lo, x.hi]);
    let label = |g: usize| file.labels.as_ref().map_or(json!(g), |l| json!(l[g]));
    json!({
        "expected_loss_before": r.expected_loss_before.map(enc),
        "expected_loss_after": enc(r.expected_loss_after),
        "adversary_error": enc(r.before.adversary_error),
        "map": r.map.iter().map(|&g| label(g)).collect::<Vec<_>>(),
        "unit": crate::audit::unit_of(&file.space),
    })
}
